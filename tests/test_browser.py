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
    DESKTOP,
    full_page_screenshot,
    PageWatch,
    axe_violations,
    block_source,
    describe_violations,
    load_images,
    serious_look_with_images,
    serious_violations,
    serve_site,
)
from tests.conftest import REPO, build_site, shared_folder, write_demo
from tests.scheme_looks import SchemeLooks

ENTRIES = sorted(p.stem for p in (REPO / "demos").glob("*.py"))
ATTENTION_CELLS = ["setup", "B-corpus", "B-tokens", "B-model", "B-forward", "B-train", "B-display", "B-csv", "B-preview"]
ATTENTION_SOURCE = REPO / "demos" / "attention.py"

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
def site_url(browser: Any, built_site: Path) -> Iterator[str]:
    """The session's built site served over HTTP on 127.0.0.1 under a sub-path; its base URL."""
    with serve_site(built_site) as url:
        yield url


OpenPage = Callable[..., tuple[Any, PageWatch]]


@pytest.fixture
def open_page(open_watched_page: OpenPage, site_url: str) -> OpenPage:
    """Open a watched page, clipboard allowed: ``open_page(scheme="light", width=1280, height=800, base=site_url,
    own_context=False)`` (see conftest's ``open_watched_page``)."""

    def _open(scheme: str = "light", width: int = 1280, height: int = 800, base: str = site_url,
              own_context: bool = False) -> tuple[Any, PageWatch]:
        return open_watched_page(base, own_context, clipboard=True, viewport={"width": width, "height": height},
                                 color_scheme=scheme)

    return _open


def visible_entry_names(page: Any) -> list[str]:
    """Names of the index entries a reader can see (not hidden by the filter)."""
    return page.locator("li.entry-item").evaluate_all(
        "items => items.filter(li => !li.hidden && li.getClientRects().length > 0).map(li => li.dataset.name)"
    )


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
    page, watch = open_page(scheme="light", own_context=True)  # the toggle stores the reader's choice
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
    page, watch = open_page(scheme="light", own_context=True)  # the toggle stores the reader's choice
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
def test_no_serious_accessibility_violation(scheme_looks: SchemeLooks, site_url: str, path: str, scheme: str) -> None:
    serious, watch = scheme_looks.seen(site_url, site_url + path, scheme, serious_look_with_images, clipboard=True,
                                       viewport=DESKTOP)
    assert not serious, f"axe-core on {path} ({scheme}): {len(serious)} serious or critical violations\n" + describe_violations(serious)
    watch.assert_clean()


def test_the_accessibility_check_sees_contrast_in_code_and_text_and_every_other_rule_in_code(
        open_page: OpenPage, site_url: str) -> None:
    # axe_violations samples the code for contrast: what it leaves out must not hide a problem.
    page, watch = open_page(scheme="light")
    page.goto(site_url + "attention/index.html")
    page.evaluate("""() => {
      const token = [...document.querySelectorAll('.highlight pre span')]
        .find(span => !span.childElementCount && span.textContent.trim().length > 3 && !span.closest('details:not([open])'));
      token.className = 'probe-token';  // a token class of its own: it is sampled
      token.style.color = '#c8c8c8';  // 1.7:1 on white (axe leaves 1:1 undecided: hidden on purpose?)
      const text = document.createElement('p');
      text.textContent = 'Pale words outside the code';
      text.style.color = '#c8c8c8';
      document.querySelector('main').prepend(text);
      const image = document.createElement('img');  // no alt
      image.src = document.querySelector('img').src;
      token.after(image);
    }""")
    found = {v["id"]: [n["html"] for n in v["nodes"]] for v in axe_violations(page)}
    assert any("probe-token" in html for html in found.get("color-contrast", [])), found.keys()
    assert any("Pale words" in html for html in found.get("color-contrast", [])), found.keys()
    assert found.get("image-alt"), found.keys()


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshot_of_the_attention_page(scheme_looks: SchemeLooks, site_url: str, scheme: str, width: int, height: int) -> None:
    def photograph(page: Any, scheme: str) -> tuple[float, bytes]:
        load_images(page)
        return page.evaluate(BACKGROUND_LUMINANCE_JS), full_page_screenshot(page, f"attention-{scheme}-{width}.png")

    (luminance, png), watch = scheme_looks.seen(site_url, site_url + "attention/index.html", scheme, photograph,
                                                clipboard=True, viewport={"width": width, "height": height})
    assert (luminance < 0.5) == (scheme == "dark"), f"the page does not follow the system's {scheme} setting"
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


# ---------------------------------------------------------------- reading a long entry (issue 14):
# On this page, search that lands on the block, legible links, a Copy button that covers no
# code, long outputs folded (shown on a small site of its own: the repository's demos print
# only a few lines per block).

# Which blocks the visible "On this page" list marks as current (aria-current).
CURRENT_JS = """() => [...document.querySelectorAll('nav.toc a[aria-current]')]
  .filter(a => a.getClientRects().length).map(a => a.getAttribute('href'))"""
VISIBLE_TOC_LINKS_JS = """() => [...document.querySelectorAll('nav[aria-label="On this page"] a')]
  .filter(a => a.getClientRects().length).map(a => a.getAttribute('href'))"""
LONG_LINES = 120


def scroll_to_block(page: Any, name: str) -> None:
    """Scroll so that block ``name`` starts near the top of the window."""
    page.evaluate("name => window.scrollTo(0, document.getElementById(name).getBoundingClientRect().top + window.scrollY - 10)", name)


def test_on_this_page_lists_the_blocks_beside_the_text(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page(width=1280, height=800)
    page.goto(site_url + "attention/index.html")
    side = page.locator("nav.toc-side")
    assert side.is_visible() and not page.locator("nav.toc-top").is_visible()
    assert page.evaluate(VISIBLE_TOC_LINKS_JS) == [f"#{name}" for name in ATTENTION_CELLS]
    # Each block's description is shown under its name, as on the block itself.
    for name in ("B-corpus", "B-train"):
        description = page.locator(f"section#{name} p.description").inner_text().strip()
        assert side.locator(f'a[href="#{name}"] .toc-description').inner_text().strip() == description
    # Beside the text, not over it: left of the list is right of every block.
    side_box = side.bounding_box()
    cells_right = page.evaluate("() => Math.max(...[...document.querySelectorAll('section.cell')].map(c => c.getBoundingClientRect().right))")
    assert side_box and side_box["x"] >= cells_right and side_box["x"] + side_box["width"] <= 1280
    # Sticky: still in sight half-way down the page, and its links are plain anchors.
    scroll_to_block(page, "B-train")
    box = side.bounding_box()
    assert box and 0 <= box["y"] < 800, "the list of blocks scrolled away with the text"
    side.locator('a[href="#B-display"]').click()
    page.wait_for_url(re.compile(r"#B-display$"))
    page.wait_for_function("() => Math.abs(document.getElementById('B-display').getBoundingClientRect().top) < 40")
    watch.assert_clean()


def test_in_view_highlight_follows_the_scroll(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page(width=1280, height=800)
    page.goto(site_url + "attention/index.html")
    assert page.evaluate(CURRENT_JS) == [], "a block is marked current while the reader is at the title"
    for name in ("B-tokens", "B-train", "B-display", "B-corpus"):  # down, then back up
        scroll_to_block(page, name)
        page.wait_for_function(f"() => ({CURRENT_JS})().join() === '#{name}'")
    watch.assert_clean()


def test_phone_gets_a_compact_disclosure_at_the_top(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page(width=390, height=844)
    page.goto(site_url + "attention/index.html")
    top = page.locator("nav.toc-top")
    assert top.is_visible() and not page.locator("nav.toc-side").is_visible()
    summary = top.locator("summary")
    box, h1 = summary.bounding_box(), page.locator("h1").bounding_box()
    assert box and h1 and box["y"] < h1["y"] and box["height"] < 60, "the disclosure is not a compact bar above the title"
    assert "9 blocks" in summary.inner_text()
    assert not top.locator('a[href="#B-train"]').is_visible(), "the list is open before the reader asks for it"
    summary.click()
    assert page.evaluate(VISIBLE_TOC_LINKS_JS) == [f"#{name}" for name in ATTENTION_CELLS]
    top.locator('a[href="#B-train"]').click()
    page.wait_for_url(re.compile(r"#B-train$"))
    page.wait_for_function("() => Math.abs(document.getElementById('B-train').getBoundingClientRect().top) < 40")
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], f"the open list makes the page scroll sideways: {widths}"
    watch.assert_clean()


def test_block_list_without_script_and_on_paper(browser: Any, site_url: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(site_url + "attention/index.html")
        assert page.evaluate(VISIBLE_TOC_LINKS_JS) == [f"#{name}" for name in ATTENTION_CELLS]
        page.locator('nav.toc-side a[href="#B-train"]').click()
        page.wait_for_url(re.compile(r"#B-train$"))
        page.emulate_media(media="print")
        assert page.evaluate(VISIBLE_TOC_LINKS_JS) == [], "the list of blocks is printed"
    finally:
        context.close()


def test_search_hit_in_a_blocks_output_links_to_the_block(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "attention/index.html")
    output = page.locator("section#B-train pre.output").inner_text()
    word = re.search(r"initial loss = (\S+),", output).group(1)  # e.g. 4.5846: only printed, never written
    assert all(word not in p.read_text(encoding="utf-8") for p in (REPO / "demos").glob("*.py"))
    assert page.locator("body").inner_text().count(word) == 1, f"{word} shows elsewhere on the page too"

    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "search-input", "'/' does not focus the search box"
    page.keyboard.type(word)
    hit = page.locator("ol#search-results a", has_text="attention › B-train")
    hit.wait_for()
    assert hit.get_attribute("href").endswith("attention/index.html#B-train")
    assert page.locator('ol#search-results a[href$="attention/index.html"]').count() == 0, \
        "a match only in B-train also shows as a hit on the top of the page"
    hit.click()
    page.wait_for_url(re.compile(r"attention/index\.html#B-train$"))
    page.wait_for_function("() => Math.abs(document.getElementById('B-train').getBoundingClientRect().top) < 40")
    watch.assert_clean()


def test_search_hit_in_the_purpose_stays_a_page_hit(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "index.html")
    page.locator("input#search-input").fill("associative")  # in attention's Purpose
    page_hit = page.locator('ol#search-results > li > a[href$="attention/index.html"]')
    page_hit.wait_for()
    assert page_hit.inner_text().strip() == "attention"
    assert page.locator("ol#search-results > li > .result-excerpt mark").first.inner_text().lower().startswith("associative")
    watch.assert_clean()


def test_slash_focuses_search_unless_typing_and_escape_clears(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "index.html")
    page.locator("input#filter").click()
    page.keyboard.type("a/b")
    assert page.locator("input#filter").input_value() == "a/b", "'/' was taken from a field the reader types in"
    assert page.evaluate("() => document.activeElement.id") == "filter"
    page.locator("input#filter").fill("")
    page.locator("h1").click()
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "search-input"
    assert page.locator("input#search-input").input_value() == "", "the '/' itself was typed into the search box"
    page.keyboard.type("softmax")
    page.locator("ol#search-results li").first.wait_for()
    page.keyboard.press("Escape")
    assert page.locator("input#search-input").input_value() == ""
    page.wait_for_function("() => !document.querySelector('ol#search-results li')")
    watch.assert_clean()


def _underlines_look(page: Any, scheme: str) -> list[tuple[str, str, str, float]]:
    """Each link's text (its start), underline offset, skip-ink and font size."""
    return page.locator("main a, header a, footer a").evaluate_all(
        """links => links.map(a => { const s = getComputedStyle(a);
             return [a.textContent.trim().slice(0, 30), s.textUnderlineOffset, s.textDecorationSkipInk, parseFloat(s.fontSize)]; })""")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_underlines_leave_underscores_and_descenders_visible(scheme_looks: SchemeLooks, site_url: str, scheme: str) -> None:
    paths = ("index.html", "attention/index.html")

    def walk(page: Any, look: Any) -> None:
        for path in paths:
            page.goto(site_url + path)
            look(_underlines_look)

    seen, watch = scheme_looks.walked(site_url, scheme, walk, clipboard=True, viewport=DESKTOP)
    for path, styles in zip(paths, seen, strict=True):
        assert styles, f"no links on {path}"
        for text, offset, skip_ink, size in styles:
            assert skip_ink in ("auto", "all"), f"{path}: link {text!r} draws its underline through descenders"
            assert offset.endswith("px") and float(offset[:-2]) >= 0.25 * size, \
                f"{path}: link {text!r} has its underline at {offset} (font {size}px): it covers underscores"
    watch.assert_clean()


@pytest.mark.parametrize("width", [1280, 390])
def test_copy_button_covers_no_line_of_code(open_page: OpenPage, site_url: str, width: int) -> None:
    page, watch = open_page(width=width, height=800)
    page.goto(site_url + "attention/index.html")
    overlaps = page.evaluate(
        """() => {
          const hits = [];
          for (const cell of document.querySelectorAll('section.cell')) {
            const button = cell.querySelector('button.copy');
            if (!button) { hits.push(cell.id + ': no Copy button'); continue; }
            const b = button.getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(cell.querySelector('.highlight pre'));
            for (const r of range.getClientRects()) {
              if (r.width && r.height && r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom) {
                hits.push(cell.id + ': ' + JSON.stringify([r.left, r.top, r.right, r.bottom]));
              }
            }
            // Nor does it hide the code's box at all (the box scrolls; its end may hold code).
            const code = cell.querySelector('.highlight').getBoundingClientRect();
            if (code.left < b.right && b.left < code.right && code.top < b.bottom && b.top < code.bottom) hits.push(cell.id + ': over the code box');
          }
          return hits;
        }"""
    )
    assert overlaps == [], f"the Copy button covers code at {width} px: {overlaps[:5]}"
    watch.assert_clean()


# ---------------------------------------------------------------- a long output, folded


@pytest.fixture(scope="module")
def long_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-entry site whose block prints LONG_LINES lines (and one short block)."""

    def make(project: Path) -> None:
        write_demo(project, "chatty", f'''
            """chatty.py — a demo that prints a lot.

            Blocks
            ------
            [B-loud]   prints {LONG_LINES} lines
            [B-quiet]  prints one line
            """

            # %% B-loud
            for i in range(1, {LONG_LINES + 1}):
                print(f"[B-loud] step {{i:03d}} done")

            # %% B-quiet
            print("[B-quiet] one line")
        ''')
        build_site(project)

    return shared_folder(tmp_path_factory, "long-output", make) / "build"


@pytest.fixture(scope="module")
def long_url(browser: Any, long_site: Path) -> Iterator[str]:
    with serve_site(long_site) as url:
        yield url


def test_long_output_is_folded_and_unfolds_on_click(open_page: OpenPage, long_url: str) -> None:
    page, watch = open_page(base=long_url)
    page.goto(long_url + "chatty/index.html")
    output = page.locator("section#B-loud pre.output")
    toggle = output.locator("button.fold-toggle")
    assert toggle.inner_text() == f"Show all {LONG_LINES} lines" and toggle.get_attribute("aria-expanded") == "false"
    shown = output.inner_text()
    assert "step 001" in shown and "step 030" in shown and "step 031" not in shown
    assert "step 110" not in shown and "step 111" in shown and f"step {LONG_LINES}" in shown
    folded_height = output.bounding_box()["height"]

    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    shown = output.inner_text()
    assert all(f"step {i:03d}" in shown for i in range(1, LONG_LINES + 1))
    assert output.bounding_box()["height"] > 2 * folded_height
    toggle.click()
    assert "step 031" not in output.inner_text()
    # A short output is never folded.
    assert page.locator("section#B-quiet button.fold-toggle").count() == 0
    watch.assert_clean()


def test_long_output_shows_every_line_without_script_and_on_paper(browser: Any, long_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(long_url + "chatty/index.html")
        output = page.locator("section#B-loud pre.output")
        assert not output.locator("button.fold-toggle").is_visible()
        assert all(f"step {i:03d}" in output.inner_text() for i in range(1, LONG_LINES + 1))
    finally:
        context.close()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(long_url + "chatty/index.html")
        page.emulate_media(media="print")
        output = page.locator("section#B-loud pre.output")
        assert not output.locator("button.fold-toggle").is_visible()
        assert all(f"step {i:03d}" in output.inner_text() for i in range(1, LONG_LINES + 1))
    finally:
        context.close()


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_folded_output_is_accessible_and_photographed(scheme_looks: SchemeLooks, long_url: str, scheme: str, width: int, height: int) -> None:
    def open_phone_list(page: Any) -> None:
        if width < 600:
            page.locator("nav.toc-top summary").click()  # the phone's list of blocks, open

    def look(page: Any, scheme: str) -> tuple[list[dict[str, Any]], bytes, float]:
        serious = serious_violations(axe_violations(page))
        return serious, full_page_screenshot(page, f"long-output-{scheme}-{width}.png"), page.evaluate(BACKGROUND_LUMINANCE_JS)

    (serious, png, luminance), watch = scheme_looks.seen(long_url, long_url + "chatty/index.html", scheme, look,
                                                         prepare=open_phone_list, clipboard=True,
                                                         viewport={"width": width, "height": height})
    assert not serious, f"axe-core on the folded output ({scheme}, {width} px)\n" + describe_violations(serious)
    assert struct.unpack(">II", png[16:24])[0] == width
    assert (luminance < 0.5) == (scheme == "dark")
    watch.assert_clean()


def test_figure_still_opens_full_size_on_click(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "attention/index.html")
    figure = page.locator('section#B-preview img[src$="attention.png"]')
    # The image is a link to its own file (opening it directly would make Chromium ask the
    # host root for /favicon.ico, outside the served sub-path).
    link = figure.evaluate("img => { const a = img.closest('a'); return a && [a.href, img.src]; }")
    assert link and link[0] == link[1], "the figure is not a link to the full-size image"
    response = page.request.get(link[0])
    assert response.ok and response.headers["content-type"] == "image/png"
    watch.assert_clean()
