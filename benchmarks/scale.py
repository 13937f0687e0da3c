"""Benchmarks (g)-(j) of issue 12, at gallery scale (run through ``benchmarks/run.py --only g,h,i,j``).

Each build runs in a small wrapper around ``site_builder.cli.main`` that reports the peak
memory of the builder (``ru_maxrss``) and of its fork server (its debug line at close);
CPU is the user + system time of the build's whole process tree (``RUSAGE_CHILDREN``).
The plain runs get the environment the builder gives its demos (Agg backend, one BLAS
thread), so both sides compute the same thing.
"""

from __future__ import annotations

import importlib.util
import json
import re
import resource
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from run import ENV, Measure, project_with

PLAIN_ENV = {**ENV, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
             "MKL_NUM_THREADS": "1"}

FIGURE_ENTRY = '''\
"""{title}"""
import numpy as np
import matplotlib.pyplot as plt

rng = np.random.default_rng({i})
x = np.linspace(0, 10, 400)

# %% B-lines
fig, ax = plt.subplots()
ax.plot(x, np.sin(x * {k}) + rng.normal(0, 0.1, x.size))
ax.set_title("sine {i}")
print("mean", round(float(np.sin(x * {k}).mean()), 4))

# %% B-scatter
fig, ax = plt.subplots()
ax.scatter(rng.normal(size=300), rng.normal(size=300), s=8)
ax.set_title("scatter {i}")
{third}'''
THIRD_FIGURE = '''
# %% B-hist
fig, ax = plt.subplots()
ax.hist(rng.normal(size=2000), bins=40)
ax.set_title("histogram {i}")
'''
NUMPY_ENTRY = '''\
"""np{i:03d}: a small NumPy entry."""
import numpy as np

rng = np.random.default_rng({i})

# %% B-stats
a = rng.normal(size=(50, 50))
print("trace", round(float(np.trace(a @ a.T)), 3))
'''
TINY_ENTRY = '''\
"""tiny{i:04d}: a generated two-block entry."""
N = {i}

# %% B-sum
print(sum(range(N + 10)))
'''
SERVE_ENTRY = '''\
"""wave: a small NumPy + pyplot demo."""
import numpy as np
import matplotlib.pyplot as plt

x = np.linspace(0, 6, 200)

# %% B-plot
fig, ax = plt.subplots()
ax.plot(x, np.sin(x))
print("[B-plot] {text}")
'''
# Runs site_builder's command line, then says its own peak memory and its fork server's.
MEASURED = '''
import logging, resource, sys
from site_builder.cli import main

class Peak(logging.Handler):
    def emit(self, record):
        message = record.getMessage()
        if message.startswith("fork server") and "peak memory" in message:
            sys.stderr.write("@@server " + message.rsplit(" ", 2)[-2] + "\\n")

log = logging.getLogger("site_builder.run.demo_process")
log.setLevel(logging.DEBUG)
log.addHandler(Peak())
log.propagate = False
code = main(sys.argv[1:])
sys.stderr.write(f"@@builder {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n")
sys.exit(code)
'''


@dataclass
class Sample:
    """One measured command: seconds of wall and CPU time, peak memory in MB."""

    wall: float
    cpu: float
    builder_mb: float = 0.0
    server_mb: float = 0.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(command: list[str], cwd: Path, env: dict[str, str] = ENV) -> Sample:
    """Wall and CPU (the whole process tree) of one command; fails loudly when it fails."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sample = Sample(time.perf_counter() - t0, _children_cpu() - cpu0)
    if done.returncode != 0:
        raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(command)}\n"
                         f"{done.stderr[-2000:]}")
    if found := re.findall(r"@@builder (\d+)", done.stderr):
        sample.builder_mb = int(found[-1]) / 1024
    servers = [int(kb) for kb in re.findall(r"@@server (\d+)", done.stderr)]
    sample.server_mb = max(servers, default=0) / 1024
    return sample


def build(project: Path, *args: str) -> Sample:
    return measured([sys.executable, "-c", MEASURED, "build", "-q", *args], project)


def plain_runs(project: Path) -> Sample:
    """Every demo of ``project`` run with plain python, one after another, each in its own folder."""
    total = Sample(0.0, 0.0)
    for script in sorted((project / "demos").glob("*.py")):
        one = measured([sys.executable, str(script)], script.parent, PLAIN_ENV)
        total.wall += one.wall
        total.cpu += one.cpu
    return total


def median_sample(samples: list[Sample]) -> Sample:
    return Sample(*(statistics.median(getattr(s, f) for s in samples)
                    for f in ("wall", "cpu", "builder_mb", "server_mb")))


def sampled(runs: int, *measures: object) -> list[Sample]:
    """Like run.medians, for Samples: the measures interleaved ``runs`` times, medians of each field."""
    samples: list[list[Sample]] = [[] for _ in measures]
    for _ in range(runs):
        for i, measure in enumerate(measures):
            samples[i].append(measure())  # type: ignore[operator]
    return [median_sample(s) for s in samples]


def _memory(sample: Sample) -> str:
    return f"peak memory: builder {sample.builder_mb:.0f} MB, fork server {sample.server_mb:.0f} MB"


def gallery_files(count: int) -> dict[str, str]:
    return {f"g{i:03d}.py": FIGURE_ENTRY.format(
        i=i, k=1 + i % 5, title=f"g{i:03d}: a generated figure-gallery entry.",
        third=THIRD_FIGURE.format(i=i) if i % 2 else "") for i in range(count)}


def sphinx_gallery(workdir: Path, files: dict[str, str], parallel: int = 1) -> Sample | None:
    """The same scripts built by Sphinx-Gallery, or None when it is not installed.

    ``parallel`` > 1: its ``parallel`` setting (examples run in that many processes) with
    ``sphinx-build -j`` as many, Sphinx-Gallery's fastest way since 0.17."""
    if importlib.util.find_spec("sphinx_gallery") is None or importlib.util.find_spec("sphinx") is None:
        return None
    project = project_with(workdir, f"sphinx-{parallel}", {})
    examples = project / "examples"
    examples.mkdir()
    (examples / "README.txt").write_text("Gallery\n=======\n", encoding="utf-8")
    for name, text in files.items():
        body = text.split('"""', 2)[2]  # a reStructuredText title instead of the summary line
        title = name.removesuffix(".py")
        (examples / name).write_text(f'"""\n{title}\n{"=" * len(title)}\n\nA generated entry.\n"""{body}',
                                     encoding="utf-8")
    (project / "conf.py").write_text(
        "extensions = ['sphinx_gallery.gen_gallery']\n"
        "sphinx_gallery_conf = {'examples_dirs': 'examples', 'gallery_dirs': 'auto_examples',"
        f" 'filename_pattern': '.*', 'plot_gallery': 'True', 'parallel': {parallel}}}\n", encoding="utf-8")
    (project / "index.rst").write_text("Gallery\n=======\n\n.. toctree::\n\n   auto_examples/index\n",
                                       encoding="utf-8")
    jobs = ["-j", str(parallel)] if parallel > 1 else []
    return measured([sys.executable, "-m", "sphinx", "-b", "html", "-q", *jobs, ".", "_build"], project, PLAIN_ENV)


def bench_gallery(workdir: Path, runs: int, count: int = 60) -> list[Measure]:
    """(g): ``count`` figure entries, cold: -j 1 against plain runs; -j 2 against Sphinx-Gallery,
    one process and ``parallel = 2`` (with ``sphinx-build -j 2``), in the same run."""
    files = gallery_files(count)
    plain_project = project_with(workdir, "gallery-plain", files)
    has_sphinx = sphinx_gallery(workdir, dict(list(files.items())[:1])) is not None  # also warms its caches
    # figure_scale = 1: the pixels Sphinx-Gallery saves (the default, 2, saves four times as many)
    measures = [lambda: plain_runs(plain_project),
                lambda: build(project_with(workdir, "gallery-j1", files), "-j", "1"),
                lambda: build(project_with(workdir, "gallery-j2", files), "-j", "2"),
                lambda: build(project_with(workdir, "gallery-j2-1x", files, "figure_scale = 1\n"), "-j", "2")]
    if has_sphinx:
        measures += [lambda: sphinx_gallery(workdir, files), lambda: sphinx_gallery(workdir, files, parallel=2)]
    plain, one, two, two_1x, *sphinx = sampled(runs, *measures)
    print(f"  (g) {count} figure entries: plain python {plain.wall:.1f} s wall / {plain.cpu:.1f} s CPU; "
          f"build -j 1 {one.wall:.1f} s / {one.cpu:.1f} s CPU ({_memory(one)}); "
          f"-j 2 {two.wall:.1f} s / {two.cpu:.1f} s CPU; -j 2 at figure_scale 1 {two_1x.wall:.1f} s / "
          f"{two_1x.cpu:.1f} s CPU"
          + (f"; Sphinx-Gallery {sphinx[0].wall:.1f} s / {sphinx[0].cpu:.1f} s CPU, with parallel = 2 "
             f"{sphinx[1].wall:.1f} s / {sphinx[1].cpu:.1f} s CPU" if sphinx else
             "; Sphinx-Gallery not installed"), file=sys.stderr)
    results = [
        Measure(f"(g) {count} figure entries, cold -j 1 / plain runs: wall", one.wall / plain.wall, "x", 0.8),
        Measure(f"(g) {count} figure entries, cold -j 1 / plain runs: CPU", one.cpu / plain.cpu, "x", 0.75),
    ]
    if sphinx:
        serial, parallel = sphinx
        results += [
            Measure(f"(g) {count} figure entries, cold -j 2 / Sphinx-Gallery: wall", two.wall / serial.wall, "x", 0.5),
            Measure("(g) the same, figures at Sphinx-Gallery's pixels (figure_scale 1)",
                    two_1x.wall / serial.wall, "x", 0.5),
            Measure("(g) cold -j 2 / Sphinx-Gallery parallel = 2 (-j 2): wall", two.wall / parallel.wall, "x", 0.75),
            Measure("(g) cold -j 2 / Sphinx-Gallery parallel = 2 (-j 2): CPU", two.cpu / parallel.cpu, "x", 0.85),
        ]
    return results


def bench_numpy(workdir: Path, runs: int) -> list[Measure]:
    """(h): 100 small NumPy entries, cold: CPU against the plain runs."""
    files = {f"np{i:03d}.py": NUMPY_ENTRY.format(i=i) for i in range(100)}
    plain_project = project_with(workdir, "numpy-plain", files)
    plain, cold = sampled(runs, lambda: plain_runs(plain_project),
                          lambda: build(project_with(workdir, "numpy-cold", files)))
    print(f"  (h) 100 NumPy entries: plain python {plain.wall:.1f} s wall / {plain.cpu:.1f} s CPU; "
          f"cold build {cold.wall:.1f} s / {cold.cpu:.1f} s CPU ({_memory(cold)})", file=sys.stderr)
    return [Measure("(h) 100 NumPy entries, cold build / plain runs: CPU", cold.cpu / plain.cpu, "x", 0.3)]


def bench_thousand(workdir: Path, runs: int) -> list[Measure]:
    """(i): 1000 two-block entries, rebuilt after a comment changed in one of them."""
    files = {f"tiny{i:04d}.py": TINY_ENTRY.format(i=i) for i in range(1000)}
    project = project_with(workdir, "thousand", files)
    cold = build(project)
    demo = project / "demos" / "tiny0500.py"
    edits = iter(range(1_000_000))

    def edit_and_build() -> Sample:
        demo.write_text(TINY_ENTRY.format(i=500) + f"# edit {next(edits)}\n", encoding="utf-8")
        return build(project)

    (edited,) = sampled(runs, edit_and_build)
    print(f"  (i) 1000 entries: cold build {cold.wall:.1f} s; a comment edited in one: "
          f"{edited.wall:.2f} s wall / {edited.cpu:.2f} s CPU ({_memory(edited)})", file=sys.stderr)
    return [Measure("(i) 1000 entries, a comment edited in one: rebuild", edited.wall, "s", 1.0)]


def bench_serve(workdir: Path, runs: int) -> list[Measure]:
    """(j): serve, from saving a one-line change to the new page being served, less the demo's run."""
    project = project_with(workdir, "serve", {"wave.py": SERVE_ENTRY.format(text="edit 0")})
    proc = subprocess.Popen([sys.executable, "-m", "site_builder", "serve", "--port", "0", "-j", "1"],
                            cwd=project, env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        url = re.search(r"(http://\S+/) ", proc.stdout.readline()).group(1)  # type: ignore[union-attr]
        page = f"{url}wave/"
        _wait_for(page, "[B-plot] edit 0", 120)
        latencies: list[float] = []
        overheads: list[float] = []
        for n in range(1, runs + 2):  # the first edit warms the server's preloads: not counted
            time.sleep(0.5)  # a quiet moment, as between two saves
            t0 = time.perf_counter()
            (project / "demos" / "wave.py").write_text(SERVE_ENTRY.format(text=f"edit {n}"), encoding="utf-8")
            _wait_for(page, f"[B-plot] edit {n}", 60)
            latency = time.perf_counter() - t0
            record = json.loads((project / "_freeze" / "wave" / "_site_builder" / "record.json").read_text())
            if n > 1:
                latencies.append(latency)
                overheads.append(latency - float(record["duration"]))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(10)
    latency, overhead = statistics.median(latencies), statistics.median(overheads)
    print(f"  (j) serve: saved to served {latency:.2f} s, of which the demo ran {latency - overhead:.2f} s",
          file=sys.stderr)
    return [Measure("(j) serve: one-line change to new page, less the demo's run", overhead, "s", 0.3)]


def _wait_for(url: str, text: str, timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if text in response.read().decode("utf-8"):
                    return
        except OSError:
            pass
        time.sleep(0.01)
    raise SystemExit(f"serve benchmark: {text!r} never appeared at {url}")

