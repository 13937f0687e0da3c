"""A block's id is its name, unless that name cannot be an id of its page (the page's own
``main``, ``search``..., a value's ``value-1``, an id made from another block's name, a name
with spaces): then ``block-NAME``, with a warning naming the entry and the block, and every
link to the block (On this page, the timings, the API index, search, Markdown) follows.

One shared build (module scope) of a house-style demo with such names."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from site_builder.apidocs.inventory import ApiTarget
from site_builder.site.pages.api_index import api_groups
from site_builder.site.prose.label_ids import PageIds, block_ids
from tests.conftest import run_cli, write_demo
from tests.page_reader import Element, page as page_of, parts

NAMED = '''
"""
named.py — blocks whose names cannot be ids.

Purpose
-------
Every block gets an id of its own; [a link to the first block](#main) reaches it.

Blocks
------
[main]             prints a long output
[search]           shows a value
[search-input]     prints
[theme-toggle]     prints
[value-1]          prints
[x]                prints a long output
[x-output-more]    prints
[B-fine]           prints
"""

# %% main
print("needle-in-main")
for i in range(300):
    print("line", i)

# %% search
class Shown:
    def _repr_html_(self):
        return '<div id="inner" style="color: red">a value</div>'

Shown()

# %% search-input
print("search input")

# %% theme-toggle
print("theme toggle")

# %% value-1
print("value one")

# %% x
for i in range(300):
    print("x line", i)

# %% x-output-more
print("x output more")

# %% Train the model
print("trained")

# %% B-fine
print("fine")
'''
RENAMED = {"main": "block-main", "search": "block-search", "search-input": "block-search-input",
           "theme-toggle": "block-theme-toggle", "value-1": "block-value-1", "x-output-more": "block-x-output-more",
           "Train the model": "block-Train-the-model"}
KEPT = ["setup", "x", "B-fine"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    project = tmp_path_factory.mktemp("block-ids")
    write_demo(project, "named", NAMED)
    result = run_cli("build", cwd=project, timeout=170)
    assert result.returncode == 0, result.stderr
    return project / "build", result.stderr


def parsed(site: Path) -> tuple[str, list[Element], list[str]]:
    """The named page's HTML, its elements with a (non-empty) id, and its links' hrefs within the page."""
    html = page_of(site, "named")
    read = parts(html)
    return html, [e for e in read.ids if e.id], [href for href, _ in read.links if href.startswith("#")]


def test_every_id_is_unique_and_the_page_keeps_its_own(built: tuple[Path, str]) -> None:
    html, elements, _ = parsed(built[0])
    counts = Counter(e.id for e in elements)
    assert [anchor for anchor, n in counts.items() if n > 1] == []
    tags = {e.id: e.tag for e in elements}
    assert tags["main"] == "main" and tags["search"] == "form" and tags["search-input"] == "input"
    assert tags["theme-toggle"] == "button" and tags["value-1"] == "div"  # the value's own box
    sections = [e.id for e in elements if e.tag == "section" and e.classes == "cell"]
    assert sections == ["setup", "block-main", "block-search", "block-search-input", "block-theme-toggle",
                        "block-value-1", "x", "block-x-output-more", "block-Train-the-model", "B-fine"]
    # the ids made from a block's id follow it: the long outputs' folds
    assert tags["block-main-output-more"] == "span" and tags["x-output-more"] == "span"
    assert all(" " not in anchor for anchor in counts)


def test_links_to_blocks_reach_them(built: tuple[Path, str]) -> None:
    html, elements, hrefs = parsed(built[0])
    ids = {e.id for e in elements}
    assert all(href[1:] in ids for href in hrefs), [h for h in hrefs if h[1:] not in ids]
    for name, anchor in RENAMED.items():  # "On this page" names the block, links to its id
        assert f'<a href="#{anchor}"><span class="toc-name">{name}</span>' in html, name
    for name in KEPT:
        assert f'<a href="#{name}"><span class="toc-name">{name}</span>' in html, name
    assert 'href="#block-main" rel="noopener noreferrer">a link to the first block</a>' in html
    meta = re.search(r'data-pagefind-meta="blocks:([^"]*)"', html).group(1).split(" ")
    assert meta == ["setup", "block-main=main", "block-search=search", "block-search-input=search-input",
                    "block-theme-toggle=theme-toggle", "block-value-1=value-1", "x",
                    "block-x-output-more=x-output-more", "block-Train-the-model=Train%20the%20model", "B-fine"]
    timings = (built[0] / "timings" / "index.html").read_text(encoding="utf-8")
    for name, anchor in RENAMED.items():
        assert f'<a href="../named/index.html#{anchor}">{name}</a>' in timings, name
    assert '<a href="../named/index.html#B-fine">B-fine</a>' in timings


def test_each_renamed_block_is_a_warning_naming_entry_block_and_line(built: tuple[Path, str]) -> None:
    _, stderr = built
    lines = [line for line in stderr.splitlines() if "cannot have its name as its id" in line]
    assert len(lines) == len(RENAMED), stderr
    for name, anchor in RENAMED.items():
        line = next(line for line in lines if f"block {name!r} " in line)
        assert line.startswith("named: ") and re.search(r"\(demos/named\.py:\d+\)", line), line
        assert line.endswith(f"its id is {anchor}"), line
    assert "id made for block x" in next(line for line in lines if "'x-output-more'" in line)
    assert "Traceback" not in stderr


def test_the_rule_keeps_good_names_and_never_collides() -> None:
    names = ["setup", "B-train", "main", "block-main", "my block", "my/block", "x", "x-animation-1", "value-12",
             "plotly-3", "fig-a", "a:b", ""]
    found = block_ids(names)
    ids = [anchor for anchor, _ in found.values()]
    assert len(set(ids)) == len(ids)
    assert {n: a for n, (a, why) in found.items() if why is None} == {
        "setup": "setup", "B-train": "B-train", "block-main": "block-main", "x": "x", "fig-a": "fig-a", "a:b": "a:b"}
    assert found["main"][0] == "block-main-2" and found["my block"][0] == "block-my-block"
    assert found["my/block"][0] == "block-my-block-2" and found["x-animation-1"][0] == "block-x-animation-1"
    assert block_ids(names) == found  # from the names alone: every page that links to a block agrees
    ids_of_page = PageIds(names)
    assert ids_of_page.allocate("main")[0] == "label-main"  # labels keep their own namespace
    assert ids_of_page.owner("block-main-2-output-more") == "block block-main-2"


def test_the_api_index_links_to_a_blocks_id() -> None:
    target = ApiTarget("numpy.mean", "py:function", "https://numpy.org/mean", "numpy")
    entries: list[dict[str, Any]] = [{"name": "named", "label": "Named", "thumbnail": None}]
    groups = api_groups({"named": {"numpy.mean": (target, ("main", "B-fine"))}}, entries,
                        {"named": {"main": "block-main", "B-fine": "B-fine"}})
    use = groups[0].uses[0].entries[0]
    assert use.blocks == ("main", "B-fine") and use.anchors == ("block-main", "B-fine")
