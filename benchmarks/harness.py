"""The one benchmark harness: the report's lines, timed builds and plain runs, fresh projects.

run.py, scale.py, galleries.py and notebooks.py measure with it (none of them imports another's
measurements back): every build is ``python -m site_builder build -q`` in a subprocess.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The builder runs as an installed copy does, with its bytecode cached (pip compiles a package
# when it installs it): under PYTHONDONTWRITEBYTECODE=1, which some machines set, every build
# would compile the builder's own modules again (about 65 ms, 6% of benchmark (i)). The plain
# runs are the same either way: a script is compiled on every run, NumPy comes compiled.
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(REPO)}


@dataclass(frozen=True)
class Measure:
    """One line of the report."""

    label: str
    value: float
    unit: str  # "x" for a ratio, "s" for seconds
    target: float

    def line(self) -> str:
        verdict = "ok" if self.value <= self.target else "MISSED"
        shown = f"{self.value:.3f}" if self.unit == "x" else f"{self.value:.3f} s"
        goal = f"<= {self.target:g}" + ("" if self.unit == "x" else " s")
        return f"{self.label:<58} {shown:>10}   target {goal:<9} {verdict}"


def timed(command: list[str], cwd: Path) -> float:
    """Wall-clock seconds of one command; fails loudly when it fails."""
    t0 = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=ENV, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(command)}\n"
                         f"{done.stderr[-2000:]}")
    return elapsed


def build(project: Path, *args: str) -> float:
    return timed([sys.executable, "-m", "site_builder", "build", "-q", *args], project)


def project_with(workdir: Path, name: str, files: dict[str, str], settings: str = "") -> Path:
    """A fresh project folder holding ``demos/<file>`` for each of ``files`` (and ``settings``,
    the body of its ``[tool.site_builder]`` table)."""
    project = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=workdir))
    (project / "demos").mkdir()
    if settings:
        (project / "pyproject.toml").write_text(f"[tool.site_builder]\n{settings}", encoding="utf-8")
    for filename, text in files.items():
        (project / "demos" / filename).write_text(text, encoding="utf-8")
    return project


def medians(runs: int, *measures: Callable[[], float]) -> list[float]:
    """Run the measures interleaved ``runs`` times; the median of each."""
    samples: list[list[float]] = [[] for _ in measures]
    for _ in range(runs):
        for i, measure in enumerate(measures):
            samples[i].append(measure())
    return [statistics.median(s) for s in samples]
