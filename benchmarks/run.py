"""Benchmarks of issues 4 and 12 (not part of the test suite): the builder's own cost, measured.

    python benchmarks/run.py            # 5 runs of each measurement, medians
    python benchmarks/run.py --quick    # 2 runs, smaller CPU-bound entries
    python benchmarks/run.py --only a,b # some of the measurements ((g) lives in galleries.py, (h)-(j) in scale.py,
                                        # (k) in notebooks.py)

Every build is ``python -m site_builder build -q`` run as a subprocess in a fresh
temporary project; the baselines (plain ``python demos/<entry>.py``) are measured in the
same run, interleaved with the builds, so both see the same machine load.

(a) cold build of the attention entry / plain run of it         target <= 1.03
(b) no-change rebuild of the attention entry                    target <= 0.3 s
(c) 100 generated two-block entries: cold build, no-change rebuild  targets <= 3 s, <= 0.5 s
(d) 4 equal CPU-bound entries: build with -j 2 / with -j 1      target <= 0.6
(e) the 100 entries of (c), a comment edited in one: rebuild    target <= 1 s
    (one page rendered, the other 99 linked from the published site, records reused)
(f) render 100 eight-block pages in one process, second time    target <= 1 s
    (watch mode: highlighted cells are kept; was the timed test_hundred_pages_render_fast)
(g) 60 generated figure entries (NumPy + pyplot, 2-3 figures each), cold build -j 1 against
    the same scripts run one after another with plain python (no figure saved):
    wall <= 0.8x, CPU <= 0.75x; -j 2 wall against Sphinx-Gallery's, when it is installed,
    <= 0.5x (pip install sphinx sphinx-gallery: optional, for this benchmark only); and against
    Sphinx-Gallery with parallel = 2 (sphinx-build -j 2), same run: wall <= 0.75x, CPU <= 0.85x;
    what resolving the code's names costs the cold -j 2 build: <= 5% of the demos' CPU, and
    nothing on its no-change rebuild. --gallery-dir DIR builds a real folder of Sphinx-Gallery
    scripts instead (see galleries.py for the settings and the virtual environment Sphinx needs)
(h) 100 small NumPy entries, cold build: CPU against the plain runs <= 0.3x
(i) 1000 two-block entries, a comment edited in one: rebuild     target <= 1 s
(j) serve: from saving a one-line change in a small NumPy + pyplot demo to the new page
    being served, less the demo's own run time                  target <= 0.3 s
(k) a trivial notebook (cells run in IPython) against the same cells as a percent script: the
    demo process's CPU per entry, notebook minus script             target <= 0.05 s
(l) N generated entries (--entries, default 2000; the issue's figure is at 10000): no-change
    rebuild <= 1 s, one entry edited (it runs again) <= 2 s, builder peak memory <= 300 MB
    (see large_site.py)
(m) serve on (l)'s project: from saving an edit of one entry to the reloaded page, beyond that
    entry's run <= 1 s; the search index catches up afterwards (see large_serve.py)
Builds (g)-(i) print the peak memory of the builder and of the fork server beside the times.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ENV, REPO, Measure, build, medians, project_with, timed

TINY_ENTRY = '''\
"""tiny{i:03d}: a generated two-block entry."""
N = {i}

# %% B-sum
print(sum(range(N + 10)))
'''

CPU_ENTRY = '''\
"""cpu{i}: a CPU-bound entry (pure Python, one core)."""
ROUNDS = {rounds}

# %% B-work
total = 0
for k in range(ROUNDS):
    total = (total * 31 + k * k) % 1_000_003
print(total)
'''


def bench_attention(workdir: Path, runs: int) -> list[Measure]:
    """(a) and (b): the attention entry, cold and unchanged, against a plain run."""
    source = (REPO / "demos" / "attention.py").read_text(encoding="utf-8")

    def plain() -> float:
        folder = project_with(workdir, "plain", {"attention.py": source})
        return timed([sys.executable, "demos/attention.py"], folder)

    def cold() -> float:
        return build(project_with(workdir, "cold", {"attention.py": source}))

    warm_project = project_with(workdir, "warm", {"attention.py": source})
    build(warm_project)
    plain_s, cold_s, warm_s = medians(runs, plain, cold, lambda: build(warm_project))
    print(f"  attention: plain {plain_s:.2f} s, cold build {cold_s:.2f} s, "
          f"no-change rebuild {warm_s:.3f} s", file=sys.stderr)
    return [
        Measure("(a) cold build of attention / plain python attention.py", cold_s / plain_s, "x", 1.03),
        Measure("(b) no-change rebuild of attention", warm_s, "s", 0.3),
    ]


def bench_many(workdir: Path, runs: int) -> list[Measure]:
    """(c): 100 tiny two-block entries, cold and unchanged."""
    files = {f"tiny{i:03d}.py": TINY_ENTRY.format(i=i) for i in range(100)}
    warm_project = project_with(workdir, "many-warm", files)
    build(warm_project)
    cold_s, warm_s = medians(runs, lambda: build(project_with(workdir, "many-cold", files)),
                             lambda: build(warm_project))
    return [
        Measure("(c) 100 two-block entries: cold build", cold_s, "s", 3.0),
        Measure("(c) 100 two-block entries: no-change rebuild", warm_s, "s", 0.5),
    ]


def bench_one_changed(workdir: Path, runs: int) -> list[Measure]:
    """(e): the 100 entries of (c), rebuilt after a comment changed in one of them."""
    files = {f"tiny{i:03d}.py": TINY_ENTRY.format(i=i) for i in range(100)}
    project = project_with(workdir, "many-edit", files)
    build(project)
    demo = project / "demos" / "tiny050.py"
    edits = iter(range(1_000_000))

    def edit_and_build() -> float:
        demo.write_text(TINY_ENTRY.format(i=50) + f"# edit {next(edits)}\n", encoding="utf-8")
        return build(project)

    (edited_s,) = medians(runs, edit_and_build)
    return [Measure("(e) 100 entries, a comment edited in one: rebuild", edited_s, "s", 1.0)]


RENDER_100 = '''
import sys, tempfile, time
from pathlib import Path
from site_builder.source.parsed import Cell, Script
from site_builder.source.entries import Entry
from site_builder.run.execute import BlockResult, OutputChunk, RunResult
from site_builder.site.pages.render import EntryBuild, SiteInfo, render_site
folder = Path(tempfile.mkdtemp())
builds = []
for e in range(100):
    cells = tuple(Cell("code", "setup" if i == 0 else f"B-{i}", f"x{e} = [{i} * k for k in range(3)]\\n" * 3,
                       1 + 4 * i, None if i == 0 else 4 * i, "does things") for i in range(8))
    source = "".join(c.text for c in cells)
    script = Script(f"e{e:03d}: a page", "", f"e{e:03d}: a page", cells, ())
    blocks = tuple(BlockResult(c.name, "ok", 0.1, output=(OutputChunk("stdout", "line\\n" * 20),)) for c in cells)
    entry = Entry(f"e{e:03d}", folder / f"e{e:03d}.py", f"demos/e{e:03d}.py", source, source.encode())
    builds.append(EntryBuild(entry, script, RunResult(entry.name, blocks, None, 1.0, 0.0, folder)))
render_site(builds, SiteInfo())
t0 = time.perf_counter()
render_site(builds, SiteInfo())
print(time.perf_counter() - t0)
'''


def bench_render(runs: int) -> list[Measure]:
    """(f): 100 eight-block pages rendered a second time in one process (serve's rebuilds)."""

    def once() -> float:
        done = subprocess.run([sys.executable, "-c", RENDER_100], env=ENV, capture_output=True, text=True,
                              check=True)
        return float(done.stdout.strip())

    (render_s,) = medians(runs, once)
    return [Measure("(f) 100 eight-block pages, warm render in one process", render_s, "s", 1.0)]


def bench_parallel(workdir: Path, runs: int, rounds: int) -> list[Measure]:
    """(d): 4 equal CPU-bound entries, -j 2 against -j 1 (cold each time)."""
    files = {f"cpu{i}.py": CPU_ENTRY.format(i=i, rounds=rounds) for i in range(4)}
    one, two = medians(runs, lambda: build(project_with(workdir, "j1", files), "-j", "1"),
                       lambda: build(project_with(workdir, "j2", files), "-j", "2"))
    print(f"  4 CPU-bound entries: -j 1 {one:.2f} s, -j 2 {two:.2f} s", file=sys.stderr)
    return [Measure("(d) 4 equal CPU-bound entries: -j 2 / -j 1", two / one, "x", 0.6)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, help="runs per measurement (default 5; --quick: 2)")
    parser.add_argument("--quick", action="store_true", help="fewer runs, smaller CPU-bound entries")
    parser.add_argument("--only", default="a,b,c,d,e,f,g,h,i,j,k", help="comma-separated subset of a,...,m")
    parser.add_argument("--entries", type=int, default=2000, help="entries of (l) and (m) (default 2000)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary projects")
    parser.add_argument("--gallery", type=int, default=60, help="entries of (g) (default 60; a few to try the code path)")
    parser.add_argument("--gallery-dir", type=Path, metavar="DIR",
                        help="(g) builds this folder of Sphinx-Gallery scripts instead of generated entries")
    args = parser.parse_args()
    if args.gallery_dir is not None and not args.gallery_dir.is_dir():
        parser.error(f"--gallery-dir {args.gallery_dir}: not a folder")
    runs = args.runs or (2 if args.quick else 5)
    only = set(args.only.split(","))
    workdir = Path(tempfile.mkdtemp(prefix="site_builder-bench-"))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"site_builder benchmarks: median of {runs} runs; {os.cpu_count()} CPUs, "
          f"load average {load:.2f} at the start", file=sys.stderr)
    results: list[Measure] = []
    try:
        if only & {"a", "b"}:
            results += [m for m in bench_attention(workdir, runs) if m.label[1] in only]
        if "c" in only:
            results += bench_many(workdir, runs)
        if "d" in only:
            results += bench_parallel(workdir, runs, 2_000_000 if args.quick else 6_000_000)
        if "e" in only:
            results += bench_one_changed(workdir, runs)
        if "f" in only:
            results += bench_render(runs)
        if only & set("ghij"):
            import galleries  # (g): against Sphinx-Gallery (issue 12)
            import scale  # (h)-(j): gallery scale (issue 12)

            gallery = functools.partial(galleries.bench_gallery, count=args.gallery,
                                        folder=args.gallery_dir.resolve() if args.gallery_dir else None)
            for letter, bench in (("g", gallery), ("h", scale.bench_numpy),
                                  ("i", scale.bench_thousand), ("j", scale.bench_serve)):
                if letter in only:
                    results += bench(workdir, runs)
        if "k" in only:
            import notebooks  # (k): IPython's cost (issue 27)

            results += notebooks.bench_notebooks(workdir, runs)
        if "l" in only:
            import large_site  # (l): a site of thousands of entries (issue 32)

            results += large_site.bench_large(workdir, runs, args.entries)
        if "m" in only:
            import large_serve  # (m): serve on a site of thousands of entries (issue 32)

            results += large_serve.bench_large_serve(workdir, runs, args.entries)
    finally:
        if args.keep:
            print(f"projects kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    for measure in results:
        print(measure.line())
    return 0 if all(m.value <= m.target for m in results) else 1


if __name__ == "__main__":
    sys.exit(main())
