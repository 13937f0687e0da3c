"""Parallel builds: the same site whatever -j is, --fail-fast stops at once, the timings page."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from conftest import run_cli, write_demo

from site_builder.source.parsed import Cell, Script
from site_builder.source.entries import Entry
from site_builder.run.execute import BlockResult, RunResult
from site_builder.site.pages.render import EntryBuild, SiteInfo, render_site

DEMO = '''
    """{name}: prints numbers and writes a file."""
    import random

    random.seed({seed})
    values = [random.random() for _ in range(5)]

    # %% B-print
    print("{name}", sum(values))

    # %% B-write
    with open("{name}.csv", "w") as f:
        f.write("v\\n" + "\\n".join(f"{{v:.6f}}" for v in values) + "\\n")
    print(len(values), "rows")
'''
# What legitimately differs between two runs: the times and when they ran.
TIMES = re.compile(rb"\d+(?:\.\d+)? (?:ms|s)\b|\d+ min \d+ s|\d{4}-\d\d-\d\d \d\d:\d\d UTC")


def site_files(site: Path) -> dict[str, bytes]:
    # pagefind/ is an index derived from the pages (it hashes their text, times included)
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and not p.relative_to(site).as_posix().startswith("pagefind/")}


def timing_rows(page: bytes) -> list[bytes]:
    """The timings page's rows, times masked, in a fixed order (their order follows the times)."""
    return sorted(TIMES.sub(b"T", row) for row in re.findall(rb"<tr[ >].*?</tr>", page))


def test_site_is_identical_whatever_the_number_of_jobs(tmp_path: Path) -> None:
    sites = {}
    for jobs in ("1", "2"):
        project = tmp_path / f"j{jobs}" / "project"  # one name: it is the site's title
        for i, name in enumerate(["ant", "bee", "cat", "dog"]):
            write_demo(project, name, DEMO.format(name=name, seed=i))
        result = run_cli("build", "-j", jobs, cwd=project)
        assert result.returncode == 0, result.stderr
        sites[jobs] = site_files(project / "build")
    one, two = sites["1"], sites["2"]
    assert one.keys() == two.keys()
    assert {"ant/ant.csv", "dog/index.html", "timings/index.html"} <= one.keys()
    for path in one:
        if path == "timings/index.html":
            assert timing_rows(one[path]) == timing_rows(two[path])
        else:
            assert TIMES.sub(b"T", one[path]) == TIMES.sub(b"T", two[path]), path


CLASHING = '''
    """{name}: writes a file named like its page."""
    import time

    # %% B-write
    time.sleep({sleep})
    open("index.html", "w").write("<h1>not the page</h1>")
    print("{name} done")
'''


def test_pages_rendered_as_demos_finish_are_the_pages_rendered_at_the_end(project: Path) -> None:
    # bee finishes first and its page renders while ant still runs: the pages, and the warnings
    # rendering says (in site order, once), are those of a build rendering all at the end (--frozen)
    write_demo(project, "ant", CLASHING.format(name="ant", sleep=1.0))
    write_demo(project, "bee", CLASHING.format(name="bee", sleep=0))
    warnings = ["ant: the file index.html the demo wrote is not published", "bee: the file index.html"]
    result = run_cli("build", "-j", "2", cwd=project)
    assert result.returncode == 0, result.stderr
    assert [result.stderr.count(w) for w in warnings] == [1, 1]
    assert result.stderr.index(warnings[0]) < result.stderr.index(warnings[1])
    early = site_files(project / "build")
    again = run_cli("build", cwd=project)  # nothing changed: the warnings are said again
    assert [again.stderr.count(w) for w in warnings] == [1, 1], again.stderr
    shutil.rmtree(project / "build")
    frozen = run_cli("build", "--frozen", cwd=project)
    assert frozen.returncode == 0, frozen.stderr
    assert site_files(project / "build") == early


def test_fail_fast_stops_running_and_waiting_demos_at_once(project: Path) -> None:
    # The failing demo is the largest, so it is scheduled first (longest expected first).
    write_demo(project, "broken", '"""broken: fails at once."""\n' + "# padding\n" * 200
               + "# %% B-fail\nraise RuntimeError('nope')\n")
    for name in ("slow1", "slow2", "slow3"):
        write_demo(project, name, f'"""{name}."""\nimport time\n# %% B-sleep\ntime.sleep(60)\n')
    result = run_cli("build", "-j", "2", "--fail-fast", cwd=project)
    assert result.returncode == 1  # the slow demos' rows below say they were stopped, not run out
    assert "error: broken: block B-fail raised RuntimeError" in result.stderr
    rows = {line.split()[0]: line.split()[1:] for line in result.stderr.splitlines()
            if re.match(r"slow\d ", line)}  # the summary table's rows
    assert set(rows) == {"slow1", "slow2", "slow3"}, result.stderr
    assert all(r[:2] == ["not", "run"] for r in rows.values()), result.stderr
    assert "B-sleep ok" not in result.stderr
    assert "site written" not in result.stderr


def make_build(name: str, blocks: tuple[tuple[str, float], ...], duration: float) -> EntryBuild:
    cells = tuple(Cell("code", b, f"pass  # {b}", 1 + 2 * i, 2 * i or None)
                  for i, (b, _) in enumerate(blocks))
    source = "\n".join(c.text for c in cells) + "\n"
    result = RunResult(name, tuple(BlockResult(b, "ok", t) for b, t in blocks), None, duration,
                       1_700_000_000.0, Path("/nonexistent"),
                       {"python": "3.11.7", "numpy": "1.26.4", "matplotlib": "3.8.2",
                        "platform": "Linux-6.1-x86_64", "blas": "openblas 0.3.27"})
    entry = Entry(name, Path(f"/x/{name}.py"), f"demos/{name}.py", source, source.encode())
    return EntryBuild(entry, Script(f"{name}: demo.", "", "", cells, ()), result)


def test_timings_page_lists_every_block_slowest_first() -> None:
    builds = [
        make_build("alpha", (("setup", 0.01), ("B-fit", 12.5), ("B-plot", 0.4)), 13.0),
        make_build("beta", (("setup", 0.002), ("B-load", 75.0)), 75.1),
    ]
    files = {f.path: f for f in render_site(builds, SiteInfo())}
    page = files["timings/index.html"].data.decode()
    assert [m for m in re.findall(r'href="\.\./(\w+)/index\.html"', page)][:2] == ["beta", "alpha"]
    blocks = re.findall(r'href="\.\./(\w+)/index\.html#([\w-]+)"', page)
    assert blocks == [("beta", "B-load"), ("alpha", "B-fit"), ("alpha", "B-plot"),
                      ("alpha", "setup"), ("beta", "setup")]
    assert "1 min 15 s" in page and "12.5 s" in page and "400 ms" in page
    assert "NumPy 1.26.4 and Matplotlib 3.8.2" in page
    index = files["index.html"].data.decode()
    assert 'href="timings/index.html"' in index
    entry = files["alpha/index.html"].data.decode()
    assert "2023-11-14 22:13 UTC, taking 13.0 s in all, with Python 3.11.7, NumPy 1.26.4 and " \
           "Matplotlib 3.8.2, on Linux-6.1-x86_64 (BLAS: openblas 0.3.27)" in entry
    assert "/nonexistent" not in page


def test_longest_expected_entries_start_first() -> None:
    from site_builder.commands.build.demos import longest_first

    def entry(name: str, size: int) -> Entry:
        source = "x" * size
        return Entry(name, Path(f"/x/{name}.py"), f"demos/{name}.py", source, source.encode())

    entries = [entry("small", 100), entry("big", 5000), entry("recorded", 100), entry("mid", 1000)]
    # no records: by size
    assert [e.name for e in longest_first(entries, {})] == ["big", "mid", "recorded", "small"]
    # "recorded" took 60 s for 100 bytes: the others are estimated at that rate (big: 3000 s)
    assert [e.name for e in longest_first(entries, {"recorded": 60.0})][:2] == ["big", "mid"]
    assert [e.name for e in longest_first(entries, {"recorded": 60.0, "big": 1.0})] == [
        "recorded", "mid", "small", "big"]  # recorded times win over size
