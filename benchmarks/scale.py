"""Benchmarks (g)-(j) of issue 12, at gallery scale (run through ``benchmarks/run.py --only g,h,i,j``).

Each build runs in a small wrapper around ``site_builder.cli.main`` that reports the peak
memory of the builder (``ru_maxrss``) and of its fork server (its debug line at close), and
the CPU each demo spent resolving the names of its code (execute's debug line, summed);
CPU is the user + system time of the build's whole process tree (``RUSAGE_CHILDREN``).
The plain runs get the environment the builder gives its demos (Agg backend, one BLAS
thread), so both sides compute the same thing.

(g) compares with Sphinx-Gallery when ``sphinx`` and ``sphinx_gallery`` import in the
interpreter that runs the benchmark (its ``parallel`` setting also needs ``joblib``). Installing
Sphinx upgrades docutils: keep it out of the builder's own environment with a virtual one::

    python -m venv BENCHVENV
    BENCHVENV/bin/pip install -e . sphinx sphinx-gallery joblib numpy matplotlib pillow
    BENCHVENV/bin/python benchmarks/run.py --only g

``--gallery-dir DIR`` makes (g) build a real folder of Sphinx-Gallery scripts (never
committed), such as ``galleries/examples/lines_bars_and_markers`` of Matplotlib's source,
instead of the generated entries: both tools get a copy of it as a section of their
examples folder, in the same run, paired, medians. What Matplotlib's ``doc/conf.py`` gives
Sphinx-Gallery that matters here is mirrored for both tools: every script runs
(``filename_pattern = '^((?!sgskip).)*$'``, our ``run_pattern`` the same), no values are
shown (``capture_repr = ()``, our ``values = false``), ``thumbnail_size = (320, 224)`` and
``remove_config_comments`` (ours always). Its ``doc/matplotlibrc`` (figure size 5.5 x 4.5,
80 dpi) is not: Sphinx-Gallery's ``reset_modules = ('matplotlib', ...)`` calls
``plt.rcdefaults()`` before every example, so the gallery's figures are drawn with
Matplotlib's defaults, as they are here. Neither is ``image_srcset = ["2x"]``: Sphinx-Gallery
then saves every figure a second time at twice the pixels; without it it saves at the
figure's dpi, our ``figure_scale = 1`` pixel for pixel, so the targets compare our default
2x with Sphinx-Gallery's quarter of the pixels, and the figure_scale 1 run gives the
comparison at equal pixels. The scripts' data come with Matplotlib
(``cbook.get_sample_data``); ``timeline.py`` tries a URL with a 1 s timeout and falls back
to its own data, the same for both tools.
"""

from __future__ import annotations

import importlib.util
import json
import re
import resource
import shutil
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


def _memory(sample: Sample) -> str:
    return f"peak memory: builder {sample.builder_mb:.0f} MB, fork server {sample.server_mb:.0f} MB"


def gallery_files(count: int) -> dict[str, str]:
    return {f"g{i:03d}.py": FIGURE_ENTRY.format(
        i=i, k=1 + i % 5, title=f"g{i:03d}: a generated figure-gallery entry.",
        third=THIRD_FIGURE.format(i=i) if i % 2 else "") for i in range(count)}


# What Matplotlib's doc/conf.py gives its gallery that changes what the tools do (see the
# module's docstring), for each tool.
REAL_OURS = 'run_pattern = "^((?!sgskip).)*$"\nvalues = false\n'
REAL_SPHINX = ("'filename_pattern': '^((?!sgskip).)*$', 'capture_repr': (), 'thumbnail_size': (320, 224), "
               "'remove_config_comments': True")


@dataclass(frozen=True)
class Gallery:
    """What (g) builds: generated entries (``files``), or a copy of a real folder of
    Sphinx-Gallery scripts (``folder``, a section of the demos folder for both tools)."""

    label: str  # "60 figure entries", "lines_bars_and_markers (41 scripts)"
    files: dict[str, str]
    folder: Path | None = None
    settings: str = ""  # lines of our [tool.site_builder]
    sphinx_conf: str = "'filename_pattern': '.*'"  # items of sphinx_gallery_conf

    def project(self, workdir: Path, name: str, settings: str = "") -> Path:
        """A fresh project of ours holding the gallery (``settings``: more lines of [tool.site_builder])."""
        project = project_with(workdir, name, self.files, self.settings + settings)
        if self.folder is not None:
            self.fill(project / "demos")
        return project

    def fill(self, examples: Path) -> None:
        """The real folder as a section of ``examples``, under a top-level header, as both tools read it."""
        assert self.folder is not None
        (examples / "README.txt").write_text("Gallery\n=======\n", encoding="utf-8")
        shutil.copytree(self.folder, examples / self.folder.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))


def generated_gallery(count: int) -> Gallery:
    return Gallery(f"{count} figure entries", gallery_files(count))


def real_gallery(folder: Path) -> Gallery:
    """``folder`` of Sphinx-Gallery scripts, built the way Matplotlib's documentation builds its gallery."""
    scripts = [p for p in folder.rglob("*.py") if not p.name.startswith("_")]
    if not scripts:
        raise SystemExit(f"--gallery-dir {folder}: no Python script in it")
    return Gallery(f"{folder.name} ({len(scripts)} scripts)", {}, folder, REAL_OURS, REAL_SPHINX)


def sphinx_gallery(workdir: Path, gallery: Gallery, parallel: int = 1) -> Sample | None:
    """The same scripts built by Sphinx-Gallery, or None when it is not installed.

    ``parallel`` > 1: its ``parallel`` setting (examples run in that many processes) with
    ``sphinx-build -j`` as many, Sphinx-Gallery's fastest way since 0.17."""
    if importlib.util.find_spec("sphinx_gallery") is None or importlib.util.find_spec("sphinx") is None:
        return None
    project = project_with(workdir, f"sphinx-{parallel}", {})
    examples = project / "examples"
    examples.mkdir()
    if gallery.folder is not None:
        gallery.fill(examples)
    else:
        (examples / "README.txt").write_text("Gallery\n=======\n", encoding="utf-8")
    for name, text in gallery.files.items():
        body = text.split('"""', 2)[2]  # a reStructuredText title instead of the summary line
        title = name.removesuffix(".py")
        (examples / name).write_text(f'"""\n{title}\n{"=" * len(title)}\n\nA generated entry.\n"""{body}',
                                     encoding="utf-8")
    (project / "conf.py").write_text(
        "extensions = ['sphinx_gallery.gen_gallery']\n"
        "sphinx_gallery_conf = {'examples_dirs': 'examples', 'gallery_dirs': 'auto_examples',"
        f" {gallery.sphinx_conf}, 'plot_gallery': 'True', 'parallel': {parallel}}}\n", encoding="utf-8")
    (project / "index.rst").write_text("Gallery\n=======\n\n.. toctree::\n\n   auto_examples/index\n",
                                       encoding="utf-8")
    jobs = ["-j", str(parallel)] if parallel > 1 else []
    return measured([sys.executable, "-m", "sphinx", "-b", "html", "-q", *jobs, ".", "_build"], project, PLAIN_ENV)


def bench_gallery(workdir: Path, runs: int, count: int = 60, folder: Path | None = None) -> list[Measure]:
    """(g): ``count`` generated figure entries, or the real gallery ``folder``, cold: -j 1 against
    plain runs; -j 2 against Sphinx-Gallery, one process and ``parallel = 2`` (with
    ``sphinx-build -j 2``), in the same run; what resolving names cost the -j 2 build, and
    that a no-change rebuild of it resolves nothing."""
    gallery = real_gallery(folder) if folder is not None else generated_gallery(count)
    label = f"(g) {gallery.label}"
    plain_project = gallery.project(workdir, "gallery-plain")
    # also warms its caches
    has_sphinx = sphinx_gallery(workdir, generated_gallery(1)) is not None
    built: list[Path] = []  # the last cold -j 2 project, rebuilt unchanged at the end

    def cold_j2() -> Sample:
        built[:] = [gallery.project(workdir, "gallery-j2")]
        return build(built[0], "-j", "2")

    # figure_scale = 1: the pixels Sphinx-Gallery saves (the default, 2, saves four times as many)
    measures = [lambda: plain_runs(plain_project),
                lambda: build(gallery.project(workdir, "gallery-j1"), "-j", "1"),
                cold_j2,
                lambda: build(gallery.project(workdir, "gallery-j2-1x", "figure_scale = 1\n"), "-j", "2")]
    if has_sphinx:
        measures += [lambda: sphinx_gallery(workdir, gallery), lambda: sphinx_gallery(workdir, gallery, parallel=2)]
    plain, one, two, two_1x, *sphinx = sampled(runs, *measures)
    again = build(built[0], "-j", "2")
    print(f"  {label}: plain python {plain.wall:.1f} s wall / {plain.cpu:.1f} s CPU; "
          f"build -j 1 {one.wall:.1f} s / {one.cpu:.1f} s CPU ({_memory(one)}); "
          f"-j 2 {two.wall:.1f} s / {two.cpu:.1f} s CPU; -j 2 at figure_scale 1 {two_1x.wall:.1f} s / "
          f"{two_1x.cpu:.1f} s CPU"
          + (f"; Sphinx-Gallery {sphinx[0].wall:.1f} s / {sphinx[0].cpu:.1f} s CPU, with parallel = 2 "
             f"{sphinx[1].wall:.1f} s / {sphinx[1].cpu:.1f} s CPU (-j 2 at figure_scale 1 / parallel = 2: "
             f"{two_1x.wall / sphinx[1].wall:.3f} wall, {two_1x.cpu / sphinx[1].cpu:.3f} CPU)" if sphinx else
             "; Sphinx-Gallery not installed"), file=sys.stderr)
    share = two.names_cpu / two.demos_cpu if two.demos_cpu else float("inf")
    print(f"  {label}: name resolution (cold -j 2): {two.names_cpu:.2f} s of {two.demos_cpu:.1f} s of the "
          f"demos' CPU ({share:.1%}; {two.demos_run} demos; the whole build {two.cpu:.1f} s CPU); "
          f"no-change rebuild {again.wall:.2f} s / {again.cpu:.2f} s CPU: "
          + ("site unchanged, " if again.unchanged else "the site was written again (!), ")
          + f"{again.demos_run} demos ran, {again.names_cpu:.3f} s resolving names", file=sys.stderr)
    results = [
        Measure(f"{label}, cold -j 1 / plain runs: wall", one.wall / plain.wall, "x", 0.8),
        Measure(f"{label}, cold -j 1 / plain runs: CPU", one.cpu / plain.cpu, "x", 0.75),
        Measure(f"{label}, name resolution / the demos' CPU (cold -j 2)", share, "x", 0.05),
        Measure(f"{label}, no-change rebuild: CPU resolving names", again.names_cpu, "s", 0.0),
    ]
    if sphinx:
        serial, parallel = sphinx
        results += [
            Measure(f"{label}, cold -j 2 / Sphinx-Gallery: wall", two.wall / serial.wall, "x", 0.5),
            Measure(f"{label}, the same at figure_scale 1", two_1x.wall / serial.wall, "x", 0.5),
            Measure(f"{label}, cold -j 2 / Sphinx-Gallery parallel = 2 (-j 2): wall", two.wall / parallel.wall,
                    "x", 0.75),
            Measure(f"{label}, cold -j 2 / Sphinx-Gallery parallel = 2 (-j 2): CPU", two.cpu / parallel.cpu,
                    "x", 0.85),
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

