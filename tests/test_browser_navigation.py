"""Finding one's way around the built site in a real browser (Playwright driving Debian's Chromium),
served under a sub-path: the index's filter, previous and next links, the 404 page, the site
opened from disk, search (landing on a block) and its keyboard, the theme toggle, and the
"On this page" list of blocks (issue 14).

The built site and its server are conftest's ``built_site`` and ``site_url``, shared with
test_browser_reading.py; every test fails on any console error, failed request or request that
leaves the site. In CI (CI=true) missing tools fail these tests; on a developer machine they skip.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.browser_support import ATTENTION_CELLS, BACKGROUND_LUMINANCE_JS, OpenPage, load_images
from tests.conftest import REPO

ENTRIES = sorted(p.stem for p in (REPO / "demos").glob("*.py"))


def visible_entry_names(page: Any) -> list[str]:
    """Names of the index entries a reader can see (not hidden by the filter)."""
    return page.locator("li.entry-item").evaluate_all(
        "items => items.filter(li => !li.hidden && li.getClientRects().length > 0).map(li => li.dataset.name)"
    )


def entry_name(url: str) -> str:
    """The entry an entry page's URL belongs to (``.../NAME/index.html`` or ``.../NAME/``)."""
    segments = [s for s in urlsplit(url).path.split("/") if s and s != "index.html"]
    return segments[-1]


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


# ---------------------------------------------------------------- On this page (issue 14)

# Which blocks the visible "On this page" list marks as current (aria-current).
CURRENT_JS = """() => [...document.querySelectorAll('nav.toc a[aria-current]')]
  .filter(a => a.getClientRects().length).map(a => a.getAttribute('href'))"""
VISIBLE_TOC_LINKS_JS = """() => [...document.querySelectorAll('nav[aria-label="On this page"] a')]
  .filter(a => a.getClientRects().length).map(a => a.getAttribute('href'))"""


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
