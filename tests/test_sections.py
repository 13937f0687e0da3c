"""Sections: sub-folders of the demos folder, with their own header text, URLs and records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from site_builder.errors import EntryError
from site_builder.source.entries import discover, site_order
from tests.conftest import copy_of, run_cli, shared_folder, write_demo


def demo(summary: str, word: str) -> str:
    return f'''
"""{summary}

Purpose
-------
Show a section.
"""
# %% B-only
print("{word}")
'''


README_RST = """
.. _basics_examples:

Basic plots
===========

Plots everyone starts with: *lines* and ``bars``.

.. note::
    Hidden helper text.
"""


def gallery(project: Path) -> None:
    """Flat entries, two sections (one with a nested section), and two entries named ``plot``."""
    write_demo(project, "intro", demo("intro.py — the flat entry", "zebu"))
    write_demo(project, "basics/plot", demo("plot.py — a basic plot", "quokka"))
    write_demo(project, "basics/bars", demo("bars.py — bars", "okapi"))
    write_demo(project, "basics/more/deep", demo("deep.py — a nested section", "axolotl"))
    write_demo(project, "advanced/plot", demo("plot.py — an advanced plot", "narwhal"))
    write_demo(project, "_helpers/shared", "VALUE = 1\n")  # helpers: never entries
    (project / "demos" / "basics" / "README.txt").write_text(README_RST, encoding="utf-8")
    (project / "demos" / "advanced" / "README.md").write_text("# Advanced *topics*\n\nFor **later**.\n")


def test_discovery_names_entries_by_section(tmp_path: Path) -> None:
    gallery(tmp_path)
    entries = discover(tmp_path / "demos", tmp_path)
    assert [e.name for e in entries] == ["advanced/plot", "basics/bars", "basics/more/deep", "basics/plot", "intro"]
    plot = entries[0]
    assert (plot.section, plot.stem, plot.rel_path) == ("advanced", "plot", "demos/advanced/plot.py")
    ordered = [e.name for e in site_order(entries)]
    assert ordered == ["intro", "advanced/plot", "basics/bars", "basics/plot", "basics/more/deep"]
    ordered = [e.name for e in site_order(entries, ["basics"])]
    assert ordered == ["intro", "basics/bars", "basics/plot", "basics/more/deep", "advanced/plot"]


def test_bad_section_folders_are_refused_with_their_path(tmp_path: Path) -> None:
    write_demo(tmp_path, "Basics/plot", demo("x", "y"))
    with pytest.raises(EntryError, match=r"demos/Basics/: a section folder's name follows the entry-name rule"):
        discover(tmp_path / "demos", tmp_path)


def test_an_entry_named_like_a_section_is_refused(tmp_path: Path) -> None:
    write_demo(tmp_path, "basics", demo("x", "y"))
    write_demo(tmp_path, "basics/plot", demo("x", "y"))
    with pytest.raises(EntryError, match=r"demos/basics\.py: its name is taken by the section folder demos/basics/"):
        discover(tmp_path / "demos", tmp_path)


def test_folders_without_demos_are_no_sections(tmp_path: Path) -> None:
    write_demo(tmp_path, "intro", demo("x", "y"))
    (tmp_path / "demos" / "data").mkdir()
    (tmp_path / "demos" / "data" / "table.csv").write_text("a,b\n1,2\n")
    assert [e.name for e in discover(tmp_path / "demos", tmp_path)] == ["intro"]


def build_project(project: Path) -> None:
    """This module's shared project, built in ``project``."""
    gallery(project)
    (project / "pyproject.toml").write_text(
        '[tool.site_builder]\nsite_url = "https://example.org/g/"\n'
        '[tool.site_builder.entries."advanced/plot"]\ntimeout = 30\n'
    )
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "names no entry" not in result.stderr  # the section-qualified override matched


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_folder(tmp_path_factory, "sections", build_project)


def test_pages_records_and_downloads_live_under_the_section(built: Path) -> None:
    site = built / "build"
    for name in ("intro", "basics/plot", "advanced/plot", "basics/more/deep"):
        stem = name.rpartition("/")[2]
        assert (site / name / "index.html").is_file()
        assert (site / name / f"{stem}.py").is_file() and (site / name / f"{stem}.ipynb").is_file()
        assert (built / "_freeze" / name / "_site_builder" / "record.json").is_file()
    assert "narwhal" in (site / "advanced/plot/index.html").read_text()
    assert "quokka" in (site / "basics/plot/index.html").read_text()
    page = (site / "basics/plot/index.html").read_text()
    assert 'href="../../static/site.css"' in page and 'href="plot.py" download' in page
    assert not list((built / "_freeze").rglob(".*.tmp-*"))


def test_index_groups_entries_by_section_with_header_text(built: Path) -> None:
    index = (built / "build" / "index.html").read_text()
    # top-level entries first, then the sections alphabetically, a nested one after its parent
    order = [index.index(f'href="{n}/index.html"') for n in
             ("intro", "advanced/plot", "basics/bars", "basics/plot", "basics/more/deep")]
    assert order == sorted(order)
    assert '<h2 id="section-basics">Basic plots</h2>' in index
    # the reST header rendered with docutils: inline markup, a note as an aside, no label or underline
    assert "Plots everyone starts with: <em>lines</em> and" in index
    assert "Hidden helper text" in index and "admonition" in index
    # the label above the header's title is a target (an id), never text
    assert ".. _basics_examples" not in index and ">basics_examples" not in index
    assert "=====" not in index and ".. note" not in index
    assert '<h2 id="section-advanced">Advanced <em>topics</em></h2>' in index
    assert "<strong>later</strong>" in index
    assert '<h2 id="section-basics-more">basics/more</h2>' in index
    assert '<nav class="sections" aria-label="Sections">' in index


def test_previous_and_next_follow_the_index_across_sections(built: Path) -> None:
    page = (built / "build" / "advanced/plot/index.html").read_text()
    assert re.search(r'rel="prev" href="\.\./\.\./intro/index\.html"', page)
    assert re.search(r'rel="next" href="\.\./\.\./basics/bars/index\.html"', page)


def test_search_sitemap_and_timings_see_every_section_page(built: Path) -> None:
    site = built / "build"
    entry = json.loads((site / "pagefind" / "pagefind-entry.json").read_text())
    assert entry["languages"]["en"]["page_count"] == 5
    sitemap = (site / "sitemap.xml").read_text()
    assert "https://example.org/g/basics/more/deep/index.html" in sitemap
    timings = (site / "timings" / "index.html").read_text()
    assert 'href="../advanced/plot/index.html"' in timings


def test_a_rebuild_reuses_everything_and_sees_a_header_change(built: Path, tmp_path: Path) -> None:
    built = copy_of(built, tmp_path)
    assert run_cli("build", cwd=built).returncode == 0  # a copy's first build: it takes the folder as its own
    again = run_cli("build", cwd=built)
    assert again.returncode == 0 and "site unchanged" in again.stderr, again.stderr
    readme = built / "demos" / "advanced" / "README.md"
    readme.write_text("# Advanced topics\n\nRewritten header.\n")
    changed = run_cli("build", cwd=built)
    assert changed.returncode == 0 and "site unchanged" not in changed.stderr, changed.stderr
    assert "Rewritten header." in (built / "build" / "index.html").read_text()


def test_sections_setting_orders_the_index(tmp_path: Path) -> None:
    gallery(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.site_builder]\nsections = ["basics", "nowhere"]\n')
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "sections names 'nowhere', which is no section" in result.stderr
    index = (tmp_path / "build" / "index.html").read_text()
    assert index.index('href="basics/plot/index.html"') < index.index('href="advanced/plot/index.html"')


def test_shard_check_and_force_take_section_qualified_names(tmp_path: Path) -> None:
    gallery(tmp_path)
    listed = run_cli("build", "--shard", "1/2", "--list", cwd=tmp_path)
    other = run_cli("build", "--shard", "2/2", "--list", cwd=tmp_path)
    assert listed.returncode == 0 and other.returncode == 0, listed.stderr + other.stderr
    names = sorted(listed.stdout.split() + other.stdout.split())
    assert names == ["advanced/plot", "basics/bars", "basics/more/deep", "basics/plot", "intro"]
    for k in ("1/2", "2/2"):
        assert run_cli("build", "--shard", k, cwd=tmp_path).returncode == 0
    frozen = run_cli("build", "--frozen", cwd=tmp_path)
    assert frozen.returncode == 0, frozen.stderr
    checked = run_cli("check", "basics/plot", "--runs", "1", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    unknown = run_cli("check", "plot", cwd=tmp_path)
    assert unknown.returncode == 2 and "no entry named plot" in unknown.stderr
    forced = run_cli("build", "--force", "advanced/plot", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr


def test_new_creates_an_entry_in_a_section(tmp_path: Path) -> None:
    result = run_cli("new", "basics/k-means", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    path = tmp_path / "demos" / "basics" / "k-means.py"
    assert path.is_file() and path.read_text().startswith('"""\nk-means.py')
    taken = run_cli("new", "basics", cwd=tmp_path)
    assert taken.returncode == 2 and "is a section folder" in taken.stderr
    bad = run_cli("new", "Basics/x", cwd=tmp_path)
    assert bad.returncode == 2 and "not a clean URL segment" in bad.stderr
    built = run_cli("build", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "build" / "basics" / "k-means" / "index.html").is_file()


def test_a_flat_folder_keeps_its_urls_records_and_letters(tmp_path: Path) -> None:
    write_demo(tmp_path, "alpha", demo("alpha.py — a", "x"))
    write_demo(tmp_path, "beta", demo("beta.py — b", "y"))
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    index = (tmp_path / "build" / "index.html").read_text()
    assert '<nav class="letters" aria-label="Entries by letter">' in index and 'id="letter-a"' in index
    assert (tmp_path / "build" / "alpha" / "index.html").is_file()
    assert (tmp_path / "_freeze" / "alpha" / "_site_builder" / "record.json").is_file()
    page = (tmp_path / "build" / "alpha" / "index.html").read_text()
    assert 'rel="next" href="../beta/index.html"' in page
