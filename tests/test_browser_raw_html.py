"""In Chromium: a notebook's raw HTML renders inside its cell without touching the page (no
console error, nothing loaded from elsewhere, header and main intact, a div left open ends
with its cell), its links reach their targets; renamed blocks are found by "On this page"
and by search under their names. Screenshots go to test-artifacts/ for a person to look at."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser_support import (DESKTOP, axe_violations, describe_violations, full_page_screenshot,
                                   serious_violations, serve_site)
from tests.conftest import build_site, shared_folder, write_demo
from tests.scheme_looks import SchemeLooks
from tests.test_block_ids import NAMED
from tests.test_raw_html import PNG, raw_html_notebook

CURRENT_JS = """() => [...document.querySelectorAll('nav.toc-side a[aria-current]')].map(a => a.getAttribute('href'))"""


@pytest.fixture(scope="module")
def site_url(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:

    def make(project: Path) -> None:
        (project / "demos" / "figures").mkdir(parents=True)
        (project / "demos" / "figures" / "x.png").write_bytes(PNG)
        nbformat.write(raw_html_notebook(), project / "demos" / "nb.ipynb")
        write_demo(project, "named", NAMED)
        build_site(project, timeout=170)

    with serve_site(shared_folder(tmp_path_factory, "raw-html-browser", make) / "build") as url:
        yield url


def _cell_bounds_look(page: Any, scheme: str) -> dict[str, Any]:
    """What shows whether the notebook's raw HTML stayed in its cells (see the assertions)."""
    return {
        "header and main shown": page.locator("header.site-header").is_visible() and page.locator("main#main").is_visible(),
        "one main, a footer": page.locator("main#main").count() == 1 and page.locator("footer").count() >= 1,
        "footer outside main": page.evaluate("() => !document.querySelector('main').contains(document.querySelector('footer'))"),
        # the div one cell leaves open ends with that cell: the next cell's text is outside it
        "open div ends with its cell": page.evaluate("""() => {
            const opened = document.querySelector('.opened-here');
            const next = [...document.querySelectorAll('.prose')].find(p => p.innerText.includes('Closed in the next cell'));
            return opened.closest('.prose') !== next && !opened.contains(next) && next.closest('main') !== null;
        }"""),
        "the end in main": page.locator("p", has_text="The end. second twice").evaluate("el => el.closest('main') !== null"),
        "alert border": page.locator(".alert-info").evaluate("el => getComputedStyle(el).borderLeftStyle"),
        # a table floated by align=left stays in its cell: the code cell after it starts below it
        "table above the next cell": page.evaluate("""() => document.querySelector('table[align]').getBoundingClientRect().bottom
            <= document.querySelector('section.cell').getBoundingClientRect().top"""),
        "image loaded": page.locator('img[src="_images/figures/x.png"]').evaluate("img => img.naturalWidth >= 0 && img.complete"),
        "foreign things": page.evaluate("() => document.querySelectorAll('img[src^=\"http\"], iframe, script:not([src])').length"),
    }


def _jumped_look(page: Any, scheme: str) -> list[dict[str, Any]]:
    """The serious axe violations of the page scrolled to the jump's target, photographed for a reader."""
    serious = serious_violations(axe_violations(page))
    full_page_screenshot(page, f"raw-html-{scheme}.png")
    return serious


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_raw_html_stays_in_its_cell_and_loads_nothing(scheme_looks: SchemeLooks, site_url: str, scheme: str) -> None:
    def walk(page: Any, look: Any) -> None:
        page.goto(site_url + "nb/index.html")
        look(_cell_bounds_look)
        page.locator("a", has_text="Jump to the section").click()
        page.wait_for_url(re.compile(r"#prose-\d+-a-later-section$"))  # a later cell's heading, as JupyterLab links it
        page.wait_for_function("() => { const r = document.querySelector('h2[id$=\"a-later-section\"]').getBoundingClientRect();"
                               " return r.top >= 0 && r.bottom <= window.innerHeight; }")
        look(_jumped_look)

    # the looks in both schemes from one walk (the jump checked once)
    (bounds, serious), watch = scheme_looks.walked(site_url, scheme, walk, viewport=DESKTOP)
    assert bounds["header and main shown"] and bounds["one main, a footer"] and bounds["footer outside main"]
    assert bounds["open div ends with its cell"]
    assert bounds["the end in main"]
    assert bounds["alert border"] == "solid"
    assert bounds["table above the next cell"]
    assert bounds["image loaded"]
    assert bounds["foreign things"] == 0
    assert not serious, describe_violations(serious)
    watch.assert_clean()  # no console error (a blocked inline style would be one), nothing from elsewhere


def test_renamed_blocks_are_found_by_their_names(open_watched_page: Any, site_url: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP)
    page.goto(site_url + "named/index.html")
    side = page.locator("nav.toc-side")
    side.locator('a[href="#block-search"]').click()
    page.wait_for_url(re.compile(r"#block-search$"))
    page.wait_for_function("() => Math.abs(document.getElementById('block-search').getBoundingClientRect().top) < 40")
    page.wait_for_function(f"() => ({CURRENT_JS})().join() === '#block-search'")
    assert page.locator("section#block-search .cell-head h3").inner_text() == "search"
    # the page's own search box is still the one with id "search"
    page.locator("input#search-input").fill("needle-in-main")
    hit = page.locator("ol#search-results a", has_text="named › main")
    hit.wait_for()
    assert hit.get_attribute("href").endswith("named/index.html#block-main")
    hit.click()
    page.wait_for_url(re.compile(r"#block-main$"))
    watch.assert_clean()
