"""The attention page read and looked at in a real browser (Playwright driving Debian's Chromium),
served under a sub-path: its blocks, outputs and figure, Copy buttons, permalinks, accessibility,
screenshots, legible links, and a long output folded (on a small site of its own: the
repository's demos print only a few lines per block).

The built site and its server are conftest's ``built_site`` and ``site_url``, shared with
test_browser_navigation.py; every test fails on any console error, failed request or request
that leaves the site. In CI (CI=true) missing tools fail these tests; on a developer machine they skip.
"""

from __future__ import annotations

import contextlib
import re
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import (
    ATTENTION_CELLS,
    BACKGROUND_LUMINANCE_JS,
    DESKTOP,
    full_page_screenshot,
    OpenPage,
    PageWatch,
    axe_violations,
    block_source,
    describe_violations,
    load_images,
    read_only_pages,
    serious_look_with_images,
    serious_violations,
    serve_site,
)
from tests.conftest import REPO, build_site, shared_folder, write_demo
from tests.scheme_looks import SchemeLooks

ATTENTION_SOURCE = REPO / "demos" / "attention.py"
LONG_LINES = 120


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


@pytest.fixture(scope="module")
def attention_read_only(browser: Any, site_url: str) -> Iterator[Callable[[int], tuple[Any, PageWatch]]]:
    """``attention_read_only(width)``: the attention page loaded once per width (800 px high, light, as
    ``open_page``'s) for the module's tests that only read it (browser_support's ``read_only_pages``)."""
    with contextlib.ExitStack() as stack:
        loads = {width: stack.enter_context(read_only_pages(browser, site_url, clipboard=True, color_scheme="light",
                                                            viewport={"width": width, "height": 800}))
                 for width in (1280, 390)}
        yield lambda width: loads[width]("attention/index.html")


def test_figure_still_opens_full_size_on_click(attention_read_only: Callable[[int], tuple[Any, PageWatch]]) -> None:
    page, watch = attention_read_only(1280)
    figure = page.locator('section#B-preview img[src$="attention.png"]')
    # The image is a link to its own file (opening it directly would make Chromium ask the
    # host root for /favicon.ico, outside the served sub-path).
    link = figure.evaluate("img => { const a = img.closest('a'); return a && [a.href, img.src]; }")
    assert link and link[0] == link[1], "the figure is not a link to the full-size image"
    response = page.request.get(link[0])
    assert response.ok and response.headers["content-type"] == "image/png"
    watch.assert_clean()


@pytest.mark.parametrize("width", [1280, 390])
def test_copy_button_covers_no_line_of_code(attention_read_only: Callable[[int], tuple[Any, PageWatch]], width: int) -> None:
    page, watch = attention_read_only(width)
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


def test_long_output_shows_every_line_without_script_and_on_paper(open_watched_page: Callable[..., tuple[Any, PageWatch]],
                                                                  open_page: OpenPage, long_url: str) -> None:
    without_script, without_script_watch = open_watched_page(long_url, java_script_enabled=False)
    on_paper, on_paper_watch = open_page(base=long_url)  # the folding test's context: scripts run, then print
    without_script.goto(long_url + "chatty/index.html")
    on_paper.goto(long_url + "chatty/index.html")
    on_paper.emulate_media(media="print")
    for page in (without_script, on_paper):
        output = page.locator("section#B-loud pre.output")
        assert not output.locator("button.fold-toggle").is_visible()
        assert all(f"step {i:03d}" in output.inner_text() for i in range(1, LONG_LINES + 1))
    without_script_watch.assert_clean()
    on_paper_watch.assert_clean()


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
