"""Benchmark (k) of issue 27 (run by run.py --only k): what running notebooks in IPython costs.

A notebook's cells run through an IPython shell made in its own process (run/child/shell.py);
the fork server preloads IPython's modules when a notebook is among the entries. Measured
against the same cells as a percent script (which never loads IPython), medians of several
cold builds, interleaved:

(k) the demo process's CPU, notebook against script, per entry (10 trivial entries of each
    kind, each built cold): what IPython adds to a notebook        target <= 0.05 s
    and, reported beside it, the same without preloading (``preload = []``: each notebook's
    process imports IPython itself), and the whole build's CPU (builder, fork server and demos)
    for one trivial notebook against one trivial script: the per-build cost of preloading IPython.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from harness import Measure, project_with
from scale import Sample, build, sampled

CELLS = ("total = sum(range(10))", "print(total)")
SCRIPT = '"""trivial{i}: two cells."""\n\n' + "".join(f"# %%\n{code}\n\n" for code in CELLS)


def notebook(i: int) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# Trivial {i}"),
                                         *(nbformat.v4.new_code_cell(code) for code in CELLS)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb)


def _per_demo(sample: Sample) -> float:
    if sample.demos_run == 0:
        raise SystemExit("benchmark (k): the builds said nothing about their demos' CPU")
    return sample.demos_cpu / sample.demos_run


def bench_notebooks(workdir: Path, runs: int) -> list[Measure]:
    """(k): the CPU a trivial notebook costs over the same cells as a percent script."""
    ten_notebooks = {f"trivial{i}.ipynb": notebook(i) for i in range(10)}
    ten_scripts = {f"trivial{i}.py": SCRIPT.format(i=i) for i in range(10)}
    notebooks, scripts, unloaded, one_notebook, one_script = sampled(
        runs,
        lambda: build(project_with(workdir, "nb10", ten_notebooks)),
        lambda: build(project_with(workdir, "py10", ten_scripts)),
        lambda: build(project_with(workdir, "nb10-unloaded", ten_notebooks, "preload = []\n")),
        lambda: build(project_with(workdir, "nb1", {"trivial0.ipynb": notebook(0)})),
        lambda: build(project_with(workdir, "py1", {"trivial0.py": SCRIPT.format(i=0)})),
    )
    added = _per_demo(notebooks) - _per_demo(scripts)
    print(f"  (k) demo process CPU per entry: notebook {_per_demo(notebooks) * 1000:.0f} ms, "
          f"script {_per_demo(scripts) * 1000:.0f} ms, notebook without preloading "
          f"{_per_demo(unloaded) * 1000:.0f} ms; whole cold build of one entry: notebook "
          f"{one_notebook.cpu:.2f} s CPU ({one_notebook.wall:.2f} s wall), script {one_script.cpu:.2f} s CPU "
          f"({one_script.wall:.2f} s wall): {one_notebook.cpu - one_script.cpu:+.2f} s for the notebook",
          file=sys.stderr)
    return [Measure("(k) IPython's CPU in a trivial notebook's process (vs a script)", added, "s", 0.05)]
