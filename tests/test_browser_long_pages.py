"""Reading a long entry in the browser (issue 14): On this page, search that lands on the block,
legible links, a Copy button that covers no code, long outputs folded.

Shares test_browser.py's browser, served site and watched pages; the folded output is shown on
a small site of its own (the repository's demos print only a few lines per block).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import axe_violations, describe_violations, serious_violations, serve_site
from tests.conftest import REPO, run_cli, write_demo
from tests.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    ATTENTION_CELLS,
    BACKGROUND_LUMINANCE_JS,
    OpenPage,
    browser,
    load_images,
    open_page,
    section_top,
    site_url,
)

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


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_underlines_leave_underscores_and_descenders_visible(open_page: OpenPage, site_url: str, scheme: str) -> None:
    page, watch = open_page(scheme=scheme)
    for path in ("index.html", "attention/index.html"):
        page.goto(site_url + path)
        styles = page.locator("main a, header a, footer a").evaluate_all(
            """links => links.map(a => { const s = getComputedStyle(a);
                 return [a.textContent.trim().slice(0, 30), s.textUnderlineOffset, s.textDecorationSkipInk, parseFloat(s.fontSize)]; })"""
        )
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
    project = tmp_path_factory.mktemp("long-output")
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
    done = run_cli("build", cwd=project)
    assert done.returncode == 0, done.stderr
    return project / "build"


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
def test_folded_output_is_accessible_and_photographed(open_page: OpenPage, long_url: str, scheme: str, width: int, height: int) -> None:
    page, watch = open_page(scheme=scheme, width=width, height=height, base=long_url)
    page.goto(long_url + "chatty/index.html")
    if width < 600:
        page.locator("nav.toc-top summary").click()  # the phone's list of blocks, open
    serious = serious_violations(axe_violations(page))
    assert not serious, f"axe-core on the folded output ({scheme}, {width} px)\n" + describe_violations(serious)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"long-output-{scheme}-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert struct.unpack(">II", shot.read_bytes()[16:24])[0] == width
    assert (page.evaluate(BACKGROUND_LUMINANCE_JS) < 0.5) == (scheme == "dark")
    watch.assert_clean()


def test_figure_still_opens_full_size_on_click(open_page: OpenPage, site_url: str) -> None:
    page, watch = open_page()
    page.goto(site_url + "attention/index.html")
    load_images(page)
    figure = page.locator('section#B-preview img[src$="attention.png"]')
    figure.scroll_into_view_if_needed()
    figure.click()
    page.wait_for_url(re.compile(r"attention/attention\.png$"))
    watch.assert_clean()
