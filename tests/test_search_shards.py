"""A large site's search index in parts (site/publish/search_shards.py), here with parts of a
few pages: the page's search finds the pages of every part, and a one-entry change makes
the index of that entry's part only."""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.commands.build.options import folders_of
from site_builder.commands.build.search_later import catch_up_search
from site_builder.config import load_config
from site_builder.site.publish import search_shards
from site_builder.site.publish.preview_http import PreviewServer, SiteState

DEMO = '''\
    """{name}: a demo that says {word}."""
    N = 3  # a comment

    # %% B-say
    print("[B-say] {word} orchard", N)
'''
WORDS = ["apricot", "bilberry", "cloudberry", "damson", "elderberry", "feijoa", "gooseberry",
         "huckleberry", "jabuticaba", "kumquat", "lingonberry", "mulberry"]
PART_PAGES = 3  # pages of a part, on average: the site's 15 pages make 8 parts


def _name(i: int) -> str:
    return f"e{i}" if i % 3 else f"grove/e{i}"  # some in a section


@pytest.fixture(scope="module")
def parted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project of twelve entries, built with its index in parts."""
    project = tmp_path_factory.mktemp("parted")
    for i, word in enumerate(WORDS):
        write_demo(project, _name(i), DEMO.format(name=f"e{i}", word=word))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_shards, "SHARD_PAGES", PART_PAGES)
        assert build(load_config(project), BuildOptions()).ok
    return project


def _parts(site: Path) -> list[str]:
    return json.loads((site / "pagefind" / "pagefind-entry.json").read_bytes())["shards"]


def test_the_index_comes_in_parts_that_hold_every_entry_once(parted: Path) -> None:
    site = parted / "build"
    parts = _parts(site)
    assert len(parts) >= 4
    counts = [json.loads((site / "pagefind" / rel / "pagefind-entry.json").read_bytes())["languages"]["en"]["page_count"]
              for rel in ["", *parts]]
    assert sum(counts) == len(WORDS), "each entry's page is in one part; the index and timings pages in none"
    assert not (site / "pagefind" / parts[0] / "pagefind.js").exists(), "a part is its index only"


def test_a_one_entry_edit_makes_the_index_of_its_part_only(parted: Path, monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(search_shards, "SHARD_PAGES", PART_PAGES)
    before = {p: p.read_bytes() for p in (parted / "build" / "pagefind").rglob("*") if p.is_file()}
    path = parted / "demos" / "e4.py"
    path.write_text(path.read_text(encoding="utf-8").replace("N = 3", "N = 4"), encoding="utf-8")
    with caplog.at_level(logging.DEBUG, logger="site_builder.site.publish"):
        assert build(load_config(parted), BuildOptions()).ok
    runs = [r.getMessage() for r in caplog.records if r.getMessage().startswith("search index written")]
    parts = [r.getMessage() for r in caplog.records if "parts made again" in r.getMessage()]
    assert len(runs) == 1, runs
    assert len(parts) == 1 and parts[0].startswith(f"search index: 1 of {len(_parts(parted / 'build')) + 1} parts"), parts
    after = {p: p.read_bytes() for p in (parted / "build" / "pagefind").rglob("*") if p.is_file()}
    changed = {part if (part := p.relative_to(parted / "build" / "pagefind").parts[0]).startswith("shard-") else "main"
               for p in set(before) ^ set(after)}
    assert len(changed) == 1, f"the files of one part changed: {changed}"


def test_serve_catching_up_makes_the_index_of_the_edited_parts_only(
        parted: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Two edits published before their index (serve), in two parts: the catch-up makes those two."""
    monkeypatch.setattr(search_shards, "SHARD_PAGES", PART_PAGES)
    config = load_config(parted)
    first = _part_of(parted, "e5")
    other = next(i for i in range(len(WORDS)) if _part_of(parted, _name(i)) != first)
    for name in ("e5", _name(other)):
        path = parted / "demos" / f"{name}.py"
        path.write_text(path.read_text(encoding="utf-8").replace("# a comment", "# a note"), encoding="utf-8")
        assert build(config, BuildOptions(defer_search=True)).search_pending
    with caplog.at_level(logging.DEBUG, logger="site_builder.site.publish"):
        assert catch_up_search(folders_of(config), stop=lambda: False) is None
    parts = [r.getMessage() for r in caplog.records if "parts made again" in r.getMessage()]
    assert len(parts) == 1 and parts[0].startswith("search index: 2 of "), parts
    assert build(config, BuildOptions()).unchanged


def test_a_link_planted_in_the_published_site_is_never_read(parted: Path, monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    """Which published pages a part holds is read from the pages (those of no entry: whether
    Pagefind indexes them); the published folder is data: a page replaced by a link to a pipe
    would block a build that follows it."""
    monkeypatch.setattr(search_shards, "SHARD_PAGES", PART_PAGES)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    (parted / "build" / "404.html").unlink()
    (parted / "build" / "404.html").symlink_to(pipe)
    path = parted / "demos" / "e1.py"
    path.write_text(path.read_text(encoding="utf-8").replace("# a comment", "# a remark"), encoding="utf-8")
    done: dict[str, bool] = {}
    builder = threading.Thread(target=lambda: done.update(ok=build(load_config(parted), BuildOptions()).ok), daemon=True)
    builder.start()
    builder.join(120)
    if builder.is_alive():
        with open(pipe, "wb"):  # let the reader go
            pass
        builder.join(30)
        pytest.fail("the build read the published page through the link planted there")
    assert done["ok"] and not (parted / "build" / "404.html").is_symlink()


def _part_of(project: Path, name: str) -> str:
    """The folder of the index part holding entry ``name``'s page."""
    site = project / "build" / "pagefind"
    for folder in [site, *(site / part for part in _parts(project / "build"))]:
        for fragment in (folder / "fragment").iterdir():
            if f"/{name}/index.html".encode() in gzip.decompress(fragment.read_bytes()):
                return folder.name
    raise AssertionError(name)


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same project, built with one index."""
    project = tmp_path_factory.mktemp("whole")
    for i, word in enumerate(WORDS):
        write_demo(project, _name(i), DEMO.format(name=f"e{i}", word=word))
    assert build(load_config(project), BuildOptions()).ok
    assert "shards" not in json.loads((project / "build" / "pagefind" / "pagefind-entry.json").read_bytes())
    return project


@contextlib.contextmanager
def _served(site: Path) -> Iterator[str]:
    state = SiteState("Site", site)
    server = PreviewServer(("127.0.0.1", 0), state, "demos")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        state.stop()
        server.shutdown()
        server.server_close()


def _search(page: Any, word: str) -> tuple[list[str], str]:
    """The result links (paths, best first) for ``word`` and the status line, once the search is done."""
    page.locator("input#search-input").fill(word)
    # Cleared once the box holds the word, not before: the previous word's last search (its
    # Enter's, 150 ms of debounce and more) may land until the fill's input event starts this
    # one's, and would then stand in the status as this word's results (site.js's run()
    # shows only the newest query's from then on).
    page.evaluate("() => { document.getElementById('search-status').textContent = ''; }")
    page.locator("input#search-input").press("Enter")
    page.wait_for_function("() => /result/.test(document.getElementById('search-status').textContent)")
    links = page.locator("ol#search-results > li > a").evaluate_all("links => links.map(a => a.pathname)")
    return links, page.locator("#search-status").inner_text()


def test_the_search_finds_in_the_parts_the_pages_one_index_finds_first(parted: Path, whole: Path,
                                                                  open_watched_page: Any) -> None:
    found: dict[str, list[tuple[list[str], str]]] = {}
    for project in (parted, whole):
        with _served(project / "build") as url:
            page, watch = open_watched_page(url)
            page.goto(url + "e1/index.html")
            started = time.perf_counter()
            assert _search(page, "orchard")[1] == f"Showing 10 of {len(WORDS)} results."
            print(f"{project.name}: first search {time.perf_counter() - started:.2f} s")
            for word in WORDS:
                found.setdefault(word, []).append(_search(page, word))
            watch.assert_clean()
    for i, word in enumerate(WORDS):
        (in_parts, status), (in_one, _) = found[word]
        assert in_one == [f"/{_name(i)}/index.html"]
        # A part that lacks the word answers with similar words (Pagefind's typo tolerance, which
        # one index uses only when no page holds the word): more results, ranked below.
        assert in_parts[:1] == in_one, (word, status)
