"""Benchmarks (g)-(j) of issue 12, at gallery scale (run through ``benchmarks/run.py --only g,h,i,j``).

Each build runs in a small wrapper around ``site_builder.cli.main`` that reports the peak
memory of the builder (``ru_maxrss``) and of its fork server (its debug line at close), and
the CPU each demo spent resolving the names of its code (execute's debug line, summed);
CPU is the user + system time of the build's whole process tree (``RUSAGE_CHILDREN``).
The plain runs get the environment the builder gives its demos (Agg backend, one BLAS
thread), so both sides compute the same thing.

(g), Sphinx-Gallery against us on a generated or a real gallery, is in ``galleries.py``.
"""

from __future__ import annotations

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

from harness import ENV, Measure, project_with

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
# Runs site_builder's command line, then says its own peak memory, its fork server's, what
# each demo spent resolving names (execute's debug line) and whether the site was unchanged.
MEASURED = '''
import logging, re, resource, sys
from site_builder.cli import main

class Said(logging.Handler):
    def emit(self, record):
        message = record.getMessage()
        if message.startswith("fork server") and "peak memory" in message:
            sys.stderr.write("@@server " + message.rsplit(" ", 2)[-2] + "\\n")
        elif found := re.search(r"name resolution ([\\d.]+) s of the demo process's ([\\d.]+) s CPU$", message):
            sys.stderr.write(f"@@names {found[1]} {found[2]}\\n")
        elif message.startswith("site unchanged"):
            sys.stderr.write("@@unchanged\\n")
        elif record.levelno >= logging.WARNING:
            sys.stderr.write(message + "\\n")

log = logging.getLogger("site_builder")
log.setLevel(logging.DEBUG)
log.addHandler(Said())
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
    names_cpu: float = 0.0  # CPU seconds the demos spent resolving names (summed over the demos that ran)
    demos_cpu: float = 0.0  # CPU seconds of the demos' processes (the same demos)
    demos_run: int = 0  # demos that said what resolving cost them: the demos that ran
    unchanged: bool = False  # the build said "site unchanged"


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
    resolved = [(float(a), float(b)) for a, b in re.findall(r"@@names ([\d.]+) ([\d.]+)", done.stderr)]
    sample.names_cpu, sample.demos_cpu = sum(a for a, _ in resolved), sum(b for _, b in resolved)
    sample.demos_run, sample.unchanged = len(resolved), "@@unchanged" in done.stderr
    return sample


def build(project: Path, *args: str) -> Sample:
    return measured([sys.executable, "-c", MEASURED, "build", "-q", *args], project)


def plain_runs(project: Path) -> Sample:
    """Every demo of ``project`` (its sections' too) run with plain python, one after another,
    each in its own folder."""
    total = Sample(0.0, 0.0)
    for script in sorted(p for p in (project / "demos").rglob("*.py") if not p.name.startswith("_")):
        one = measured([sys.executable, str(script)], script.parent, PLAIN_ENV)
        total.wall += one.wall
        total.cpu += one.cpu
    return total


def median_sample(samples: list[Sample]) -> Sample:
    return Sample(*(statistics.median(getattr(s, f) for s in samples)
                    for f in ("wall", "cpu", "builder_mb", "server_mb", "names_cpu", "demos_cpu")),
                  demos_run=min(s.demos_run for s in samples), unchanged=all(s.unchanged for s in samples))


def sampled(runs: int, *measures: object) -> list[Sample]:
    """Like run.medians, for Samples: the measures interleaved ``runs`` times, medians of each field."""
    samples: list[list[Sample]] = [[] for _ in measures]
    for _ in range(runs):
        for i, measure in enumerate(measures):
            samples[i].append(measure())  # type: ignore[operator]
    return [median_sample(s) for s in samples]


def memory_line(sample: Sample) -> str:
    """The builder's and its fork server's peak memory, for a report line."""
    return f"peak memory: builder {sample.builder_mb:.0f} MB, fork server {sample.server_mb:.0f} MB"


def bench_numpy(workdir: Path, runs: int) -> list[Measure]:
    """(h): 100 small NumPy entries, cold: CPU against the plain runs."""
    files = {f"np{i:03d}.py": NUMPY_ENTRY.format(i=i) for i in range(100)}
    plain_project = project_with(workdir, "numpy-plain", files)
    plain, cold = sampled(runs, lambda: plain_runs(plain_project),
                          lambda: build(project_with(workdir, "numpy-cold", files)))
    print(f"  (h) 100 NumPy entries: plain python {plain.wall:.1f} s wall / {plain.cpu:.1f} s CPU; "
          f"cold build {cold.wall:.1f} s / {cold.cpu:.1f} s CPU ({memory_line(cold)})", file=sys.stderr)
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
          f"{edited.wall:.2f} s wall / {edited.cpu:.2f} s CPU ({memory_line(edited)})", file=sys.stderr)
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

