"""Benchmark (g) of issue 12: a gallery built by us and by Sphinx-Gallery, in the same run
(through ``benchmarks/run.py --only g``).

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
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from harness import Measure, project_with
from scale import FIGURE_ENTRY, PLAIN_ENV, THIRD_FIGURE, Sample, build, measured, memory_line, plain_runs, sampled


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
          f"build -j 1 {one.wall:.1f} s / {one.cpu:.1f} s CPU ({memory_line(one)}); "
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
