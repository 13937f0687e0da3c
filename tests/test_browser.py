"""The built site in a real browser (Playwright driving Debian's Chromium), served under a sub-path.

One browser and one built site (conftest's ``built_site``) for the whole session; every test
opens its own context and fails on any console error, failed request or request that leaves
the site. In CI (CI=true) missing tools fail these tests; on a developer machine they skip.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.browser_support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PageWatch,
    axe_violations,
    block_source,
    describe_violations,
    in_ci,
    missing_browser_tools,
    serious_violations,
    serve_site,
)
from tests.conftest import REPO

ENTRIES = sorted(p.stem for p in (REPO / "demos").glob("*.py"))
ATTENTION_CELLS = ["setup", "B-corpus", "B-tokens", "B-model", "B-forward", "B-train", "B-display", "B-csv", "B-preview"]
ATTENTION_SOURCE = REPO / "demos" / "attention.py"
ARTIFACTS = REPO / "test-artifacts"
TIMEOUT_MS = 15_000  # generous: the 2 shared cores may be busy; a passing test never waits this long

# The page background a reader sees: body's, else html's, else the canvas white.
BACKGROUND_LUMINANCE_JS = """() => {
  for (const el of [document.body, document.documentElement]) {
    const m = getComputedStyle(el).backgroundColor.match(/[\\d.]+/g);
    if (m && (m.length < 4 || Number(m[3]) > 0)) {
      const [r, g, b] = m.slice(0, 3).map(Number);
      return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    }
  }
  return 1;
}"""


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session (fails in CI, skips locally, when it cannot run)."""
    reason = missing_browser_tools()
    if reason:
        if in_ci():
            pytest.fail(f"{reason}; in CI the browser tests must run, not skip (.ci/run installs them)", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def site_url(browser: Any, built_site: Path) -> Iterator[str]:
    """The session's built site served over HTTP on 127.0.0.1 under a sub-path; its base URL."""
    with serve_site(built_site) as url:
        yield url


OpenPage = Callable[..., tuple[Any, PageWatch]]


@pytest.fixture
def open_page(browser: Any, site_url: str) -> Iterator[OpenPage]:
    """Open a watched page in a fresh context: ``open_page(scheme="light", width=1280, height=800, base=site_url)``."""
    contexts: list[Any] = []

    def _open(scheme: str = "light", width: int = 1280, height: int = 800, base: str = site_url) -> tuple[Any, PageWatch]:
        context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
        if base.startswith("http"):
            parts = urlsplit(base)
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=f"{parts.scheme}://{parts.netloc}")
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        watch = PageWatch(base_url=base)
        watch.attach(page)
        return page, watch

    yield _open
    for context in contexts:
        context.close()


def visible_entry_names(page: Any) -> list[str]:
    """Names of the index entries a reader can see (not hidden by the filter)."""
    return page.locator("li.entry-item").evaluate_all(
        "items => items.filter(li => !li.hidden && li.getClientRects().length > 0).map(li => li.dataset.name)"
    )


def load_images(page: Any) -> None:
    """Scroll every image into view (they may be lazy) and wait until each has loaded."""
    images = page.locator("img")
    for i in range(images.count()):
        image = images.nth(i)
        image.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    page.evaluate("() => window.scrollTo(0, 0)")


def entry_name(url: str) -> str:
    """The entry an entry page's URL belongs to (``.../NAME/index.html`` or ``.../NAME/``)."""
    segments = [s for s in urlsplit(url).path.split("/") if s and s != "index.html"]
    return segments[-1]


def section_top(page: Any, name: str) -> float:
    """How far below the viewport's top edge the element with id ``name`` starts, in CSS px."""
    return page.evaluate("name => document.getElementById(name).getBoundingClientRect().top", name)


def test_attention_page_shows_all_cells_the_figure_and_the_outputs(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "attention/index.html")

    assert page.locator("section.cell").evaluate_all("cells => cells.map(c => c.id)") == ATTENTION_CELLS
    for name in ATTENTION_CELLS:
        # (the setup block's first part is its docstring, folded: the code after it shows)
        assert page.locator(f"section.cell#{name} .code > .highlight").first.is_visible(), \
            f"the code of {name} is not shown"
    fold = page.locator("section#setup details.docstring-fold")
    assert fold.locator("summary").inner_text() == "docstring, 70 lines: shown above"
    assert not fold.locator(".highlight").is_visible()
    fold.locator("summary").click()
    assert fold.locator(".highlight").is_visible()
    tokens_output = page.locator("section#B-tokens pre.output")
    assert tokens_output.is_visible()
    assert "[B-tokens] 16 sentences, 98 distinct tokens" in tokens_output.inner_text()
    assert page.locator("section#B-train pre.output").inner_text().strip(), "B-train's printed lines are not shown"

    figure = page.locator('section#B-preview img[src$="attention.png"]')
    assert figure.count() == 1, "attention.png is not shown in the cell of B-preview, the block that wrote it"
    figure.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=figure.element_handle())
    assert figure.get_attribute("alt"), "the figure has no alt text"
    box = figure.bounding_box()
    assert box and 0 < box["width"] <= 1280
    watch.assert_clean()


@pytest.mark.parametrize("block", ["B-tokens", "B-forward"])
def test_copy_button_puts_exactly_the_code_on_the_clipboard(open_page: OpenPage, site_url: str, block: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "attention/index.html")
    assert page.locator("section.cell button.copy").count() == len(ATTENTION_CELLS), "one copy button per code cell"

    page.locator(f"section#{block} button.copy").click()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    # Pygments ends the code with one newline; anything else (line numbers, prompts, the output) must not be there.
    assert copied.rstrip("\n") == block_source(ATTENTION_SOURCE, block)
    watch.assert_clean()


def test_copy_of_the_setup_block_includes_its_folded_docstring(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "attention/index.html")
    page.locator("section#setup button.copy").click()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    source = ATTENTION_SOURCE.read_text(encoding="utf-8")
    assert copied.rstrip("\n") == source[:source.index("\n# %% ")].rstrip("\n")
    watch.assert_clean()


def test_permalink_of_b_train_scrolls_to_it(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page(height=800)
    page.goto(site_url + "attention/index.html")
    page.locator("section#B-train").hover()  # the permalink may show on hover only
    page.locator('section#B-train a.permalink[href="#B-train"]').click()
    page.wait_for_url(re.compile(r"#B-train$"))
    page.wait_for_function("() => Math.abs(document.getElementById('B-train').getBoundingClientRect().top) < 120")
    assert -2 <= section_top(page, "B-train") < 120
    # The block's heading is really in sight, not under a sticky header.
    heading_is_on_top = """() => {
      const link = document.querySelector('#B-train a.permalink');
      const r = link.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return !!hit && document.getElementById('B-train').contains(hit);
    }"""
    assert page.evaluate(heading_is_on_top), "the B-train heading is covered after following its permalink"

    # A shared permalink opens the page at the block.
    shared, shared_watch = open_page(height=800)
    shared.goto(site_url + "attention/index.html#B-train")
    shared.wait_for_function("() => Math.abs(document.getElementById('B-train').getBoundingClientRect().top) < 120")
    watch.assert_clean()
    shared_watch.assert_clean()


def test_search_finds_attention_from_a_word_only_in_its_code(open_page: OpenPage, site_url: str, built_site: Path) -> None:
    word = "forward_backward"
    holders = [p.name for p in sorted((REPO / "demos").glob("*.py")) if word in p.read_text(encoding="utf-8")]
    assert holders == ["attention.py"], f"{word!r} must appear in attention.py only, found in {holders}"
    assert (built_site / "pagefind").is_dir(), "the site has no Pagefind index (pagefind/)"

    page, watch = open_page()
    page.goto(site_url + "index.html")
    page.locator("form#search input#search-input").fill(word)
    page.locator("input#search-input").press("Enter")
    hits = page.locator("ol#search-results li a")
    hits.first.wait_for()
    page.wait_for_function(
        "base => [...document.querySelectorAll('ol#search-results li a')].some(a => a.href.startsWith(base + 'attention/'))",
        arg=site_url,
    )
    assert page.locator("p#search-status").inner_text().strip(), "the search status says nothing"
    attention_hit = page.locator(f'ol#search-results li a[href*="attention/"]').first
    attention_hit.click()
    page.wait_for_url(re.compile(re.escape(site_url) + r"attention/(index\.html)?(#.*)?$"))
    assert "attention" in page.locator("h1").first.inner_text()
    watch.assert_clean()


def test_index_filter_narrows_the_list(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "index.html")
    assert visible_entry_names(page) == ENTRIES, "the index does not list every entry A-Z"
    grouped = page.evaluate(
        """() => {
          let letter = null;
          const wrong = [];
          for (const el of document.querySelectorAll('h2, li.entry-item')) {
            if (el.tagName === 'H2') letter = el.textContent.trim().toUpperCase();
            else if (!letter || !letter.startsWith(el.dataset.name[0].toUpperCase())) wrong.push(el.dataset.name + ' under ' + letter);
          }
          return wrong;
        }"""
    )
    assert grouped == [], "entries not under the heading of their initial letter"

    page.locator("input#filter[type=search]").press_sequentially("atten")
    page.wait_for_function("() => document.querySelectorAll('li.entry-item:not([hidden])').length === 1")
    assert visible_entry_names(page) == ["attention"]
    assert page.locator("#filter-status").inner_text().strip(), "the filter says nothing about what it shows"

    page.locator("input#filter").fill("")
    page.wait_for_function(f"() => document.querySelectorAll('li.entry-item:not([hidden])').length === {len(ENTRIES)}")
    assert visible_entry_names(page) == ENTRIES
    watch.assert_clean()


def _walk(page: Any, rel: str) -> list[str]:
    """Follow ``a[rel=REL]`` in ``nav.entry-nav`` from the current page until there is none; the entry names seen."""
    seen: list[str] = []
    for _ in range(len(ENTRIES) + 1):
        seen.append(entry_name(page.url))
        link = page.locator(f"nav.entry-nav a[rel={rel}]")
        if link.count() == 0:
            break
        link.click()
        page.wait_for_load_state()
    return seen


def test_previous_and_next_links_walk_all_entries(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + f"{ENTRIES[0]}/index.html")
    assert _walk(page, "next") == ENTRIES, "next links do not walk the entries in order, ending at the last"
    assert _walk(page, "prev") == ENTRIES[::-1], "previous links do not walk back to the first entry"
    back_to_index = page.evaluate(
        "base => [...document.links].some(a => a.href === base + 'index.html' || a.href === base)", site_url
    )
    assert back_to_index, "an entry page has no link back to the index"
    watch.assert_clean()


def test_theme_toggle_switches_between_light_and_dark(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page(scheme="light")
    page.goto(site_url + "attention/index.html")
    assert page.evaluate(BACKGROUND_LUMINANCE_JS) > 0.5, "with a light system setting the page is not light"

    toggle = page.locator("button#theme-toggle")
    toggle.click()
    page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    assert page.evaluate(BACKGROUND_LUMINANCE_JS) < 0.5, "data-theme=dark but the page is still light"
    toggle.click()
    page.wait_for_function("() => document.documentElement.dataset.theme === 'light'")
    assert page.evaluate(BACKGROUND_LUMINANCE_JS) > 0.5, "data-theme=light but the page is still dark"
    watch.assert_clean()


def test_theme_choice_is_kept_on_the_next_page(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page(scheme="light")
    page.goto(site_url + "attention/index.html")
    page.locator("button#theme-toggle").click()
    page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    page.goto(site_url + "index.html")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
    assert page.evaluate(BACKGROUND_LUMINANCE_JS) < 0.5
    watch.assert_clean()


@pytest.mark.parametrize("path", ["attention/index.html", "index.html"])
def test_no_sideways_scroll_on_a_360px_phone(open_page: OpenPage, site_url: str, path: str) -> None:
    page, watch = open_page(width=360, height=740)
    page.goto(site_url + path)
    load_images(page)
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], f"{path} scrolls sideways at 360 px: content {widths[0]} px wide in {widths[1]} px"
    watch.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", ["index.html", "attention/index.html"])
def test_no_serious_accessibility_violation(open_page: OpenPage, site_url: str, path: str, scheme: str) -> None:
    page, watch = open_page(scheme=scheme)
    page.goto(site_url + path)
    load_images(page)
    serious = serious_violations(axe_violations(page))
    assert not serious, f"axe-core on {path} ({scheme}): {len(serious)} serious or critical violations\n" + describe_violations(serious)
    watch.assert_clean()


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshot_of_the_attention_page(open_page: OpenPage, site_url: str, scheme: str, width: int, height: int) -> None:
    page, watch = open_page(scheme=scheme, width=width, height=height)
    page.goto(site_url + "attention/index.html")
    load_images(page)
    luminance = page.evaluate(BACKGROUND_LUMINANCE_JS)
    assert (luminance < 0.5) == (scheme == "dark"), f"the page does not follow the system's {scheme} setting"

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"attention-{scheme}-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    shot_width, shot_height = struct.unpack(">II", png[16:24])
    assert shot_width == width and shot_height > height, "not a full-page screenshot at the viewport's width"
    watch.assert_clean()


def test_missing_page_shows_the_sites_404_page(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    missing = site_url + "no-such-entry.html"
    watch.expected_failures.add(missing)
    response = page.goto(missing)
    assert response is not None and response.status == 404
    assert page.locator("h1").first.is_visible()
    link_number = page.evaluate(
        "base => [...document.links].findIndex(a => a.href === base + 'index.html' || a.href === base)", site_url
    )
    assert link_number >= 0, "the 404 page has no link to the index"
    page.locator("a[href]").nth(link_number).click()
    page.wait_for_url(re.compile(re.escape(site_url) + r"(index\.html)?$"))
    assert page.locator("li.entry-item").count() == len(ENTRIES)
    watch.assert_clean()


def test_site_works_from_disk(open_page: OpenPage, built_site: Path) -> None:
    base = built_site.resolve().as_uri() + "/"
    page, watch = open_page(base=base)
    page.goto(base + "index.html")

    # From disk Pagefind cannot run: the search box says so, visibly, instead of failing.
    status = page.locator("p#search-status")
    assert status.is_visible(), "from disk the search box does not say why search is unavailable"
    assert re.search(r"HTTP|served", status.inner_text(), re.IGNORECASE), status.inner_text()
    page.locator("input#filter").fill("atten")
    page.wait_for_function("() => document.querySelectorAll('li.entry-item:not([hidden])').length === 1")

    entry_links = page.locator("li.entry-item a").evaluate_all("links => links.map(a => a.href)")
    assert entry_links == [base + f"{name}/index.html" for name in ENTRIES]
    to_visit = list(entry_links)
    seen: set[str] = set()
    while to_visit:
        url = to_visit.pop(0)
        if url in seen:
            continue
        seen.add(url)
        page.goto(url)
        assert page.locator("h1").first.is_visible(), f"{url} shows no heading"
        assert page.evaluate("() => document.styleSheets.length") > 0, f"{url} has no stylesheet"
        if page.locator("form#search").count():
            assert re.search(r"HTTP|served", page.locator("p#search-status").inner_text(), re.IGNORECASE), f"{url}: search says nothing from disk"
        for href in page.locator("nav.entry-nav a[rel=prev], nav.entry-nav a[rel=next]").evaluate_all("links => links.map(a => a.href)"):
            assert href.startswith(base), f"{url} links outside the site: {href}"
            to_visit.append(href)
    assert seen == set(entry_links)

    page.goto(base + "attention/index.html")
    load_images(page)
    page.goto(base + "404.html")
    assert page.locator("h1").first.is_visible()
    assert (built_site / ".nojekyll").exists(), "the site has no .nojekyll"
    watch.assert_clean()
