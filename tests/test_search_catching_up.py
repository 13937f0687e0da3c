"""serve's rebuilds publish the pages before their search index: in a real browser the page says
search is catching up, then (without a reload) finds the entry's new text and not its old one."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.commands.build.options import folders_of
from site_builder.commands.build.search_later import catch_up_search
from site_builder.config import load_config
from site_builder.site.publish.preview_http import PreviewServer, SiteState

DEMO = '''\
    """{name}: a demo."""

    # %% B-say
    print("[B-say] {word}")
'''


@pytest.fixture
def preview(tmp_path: Path) -> Iterator[tuple[Path, SiteState, str]]:
    """A built project of two entries and serve's HTTP server over its site: (project, state, URL)."""
    project = tmp_path / "project"
    write_demo(project, "alpha", DEMO.format(name="alpha", word="plumtree"))
    write_demo(project, "beta", DEMO.format(name="beta", word="quince"))
    assert build(load_config(project), BuildOptions()).ok
    state = SiteState("Site", project / "build")
    server = PreviewServer(("127.0.0.1", 0), state, "demos")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield project, state, server.url
    finally:
        state.stop()
        server.shutdown()
        server.server_close()


def _search(page: Any, word: str) -> list[str]:
    """The result links' addresses for ``word``, once the search status says the search is done."""
    page.evaluate("() => { document.getElementById('search-status').textContent = ''; }")
    page.locator("input#search-input").fill(word)
    page.locator("input#search-input").press("Enter")
    page.wait_for_function("() => /result/.test(document.getElementById('search-status').textContent)")
    return page.locator("ol#search-results li a").evaluate_all("links => links.map(a => a.href)")


def test_the_page_says_search_is_catching_up_then_finds_the_new_text(
        preview: tuple[Path, SiteState, str], open_watched_page: Any) -> None:
    project, state, url = preview
    page, watch = open_watched_page(url)
    page.goto(url + "alpha/index.html")
    assert any("alpha/" in link for link in _search(page, "plumtree"))
    assert page.locator("#search-catching-up").count() == 0, "the index is the pages': no notice"

    write_demo(project, "alpha", DEMO.format(name="alpha", word="walnutgrove"))
    report = build(load_config(project), BuildOptions(defer_search=True))
    assert report.ok and report.search_pending
    state.publish(report.site_dir, None, "Site", search_pending=True)
    page.wait_for_url(url + "alpha/index.html")  # reloaded by the new version
    page.locator("pre.output", has_text="[B-say] walnutgrove").wait_for()
    notice = page.locator("#search-catching-up")
    notice.wait_for()
    assert "catching up" in notice.inner_text()
    page.evaluate("() => { window.notReloaded = true; }")
    assert not _search(page, "walnutgrove"), "the previous index does not know the new text yet"

    assert catch_up_search(folders_of(load_config(project)), stop=lambda: False) is None
    state.search_ready()
    notice.wait_for(state="detached")
    assert page.evaluate("() => window.notReloaded === true"), "the page reloaded: the reader's search is lost"
    assert any("alpha/" in link for link in _search(page, "walnutgrove"))
    assert not _search(page, "plumtree"), "the old text is still found"
    watch.assert_clean()
