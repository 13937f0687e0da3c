"""A gallery with sections, thumbnails and values in a real browser (see test_browser_reading.py).

Its own small site: top-level entries, two sections with header text, demos that make
figures (thumbnails) and one whose last expression is an HTML table (a value).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import (
    DESKTOP,
    axe_violations,
    describe_violations,
    full_page_screenshot,
    load_images,
    serious_violations,
    serve_site,
)
from tests.conftest import build_site, shared_folder, write_demo
from tests.scheme_looks import SchemeLooks


def figure_demo(summary: str, kind: str) -> str:
    return f'''
"""{summary}

Purpose
-------
A figure for the index.
"""
import matplotlib.pyplot as plt

# %% B-plot
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.{kind}([1, 2, 3, 4], [2, 4, 1, 3])
ax.set_title("{kind}")
'''


TABLE = '''
"""table.py — a value shown as a table.

Purpose
-------
A value with an HTML representation.
"""


class Frame:
    def _repr_html_(self):
        return "<table><thead><tr><th>x</th><th>y</th></tr></thead><tbody><tr><td>1</td><td>2.5</td></tr></tbody></table>"


# %% B-table
Frame()

# %% B-number
6 * 7
'''

PLAIN = '''
"""{name}.py — prints a line, no figure.

Purpose
-------
No figure: a placeholder on the index.
"""
# %% B-only
print("{name}")
'''


@pytest.fixture(scope="module")
def gallery_site(tmp_path_factory: pytest.TempPathFactory) -> Path:

    def make(project: Path) -> None:
        write_demo(project, "overview", PLAIN.format(name="overview"))
        write_demo(project, "lines/plot", figure_demo("plot.py — a line plot", "plot"))
        write_demo(project, "lines/step", figure_demo("step.py — a step plot", "step"))
        write_demo(project, "lines/table", TABLE)
        write_demo(project, "bars/bar", figure_demo("bar.py — a bar chart", "bar"))
        write_demo(project, "bars/notes", PLAIN.format(name="notes"))
        (project / "demos" / "lines" / "README.txt").write_text(
            ".. _lines:\n\nLines and steps\n===============\n\nLine plots of every kind.\n")
        (project / "demos" / "bars" / "README.md").write_text("# Bars\n\nBar charts, **stacked** or not.\n")
        build_site(project, timeout=170)

    return shared_folder(tmp_path_factory, "browser-gallery", make) / "build"


@pytest.fixture(scope="module")
def gallery_url(browser: Any, gallery_site: Path) -> Iterator[str]:
    with serve_site(gallery_site) as url:
        yield url


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_section_index_with_thumbnails(scheme_looks: SchemeLooks, gallery_url: str, scheme: str, width: int, height: int) -> None:
    def look(page: Any, scheme: str) -> dict[str, Any]:
        load_images(page)
        return {
            "headings": page.locator("main h2").all_inner_texts(),
            "thumbnails": page.locator("li.entry-item img.thumbnail").evaluate_all(
                "imgs => imgs.map(i => [i.closest('li').dataset.name, i.loading, i.getAttribute('width') !== null,"
                " i.getBoundingClientRect().width > 40])"),
            "placeholders": page.locator("li.entry-item .thumbnail-none").evaluate_all(
                "els => els.map(e => [e.closest('li').dataset.name, e.getBoundingClientRect().width > 40])"),
            "widths": page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"),
            "serious": serious_violations(axe_violations(page)),
            "png": full_page_screenshot(page, f"gallery-index-{scheme}-{width}.png"),
        }

    seen, watch = scheme_looks.seen(gallery_url, gallery_url + "index.html", scheme, look,
                                    viewport={"width": width, "height": height})
    assert seen["headings"] == ["Bars", "Lines and steps"]
    assert seen["thumbnails"] == [["bars/bar", "lazy", True, True], ["lines/plot", "lazy", True, True],
                                  ["lines/step", "lazy", True, True]]
    assert seen["placeholders"] == [["overview", True], ["bars/notes", True], ["lines/table", True]]
    widths = seen["widths"]
    assert widths[0] <= widths[1], f"the index scrolls sideways at {width} px"
    assert not seen["serious"], describe_violations(seen["serious"])
    assert struct.unpack(">II", seen["png"][16:24])[0] == width
    watch.assert_clean()


def test_filter_hides_empty_sections(open_watched_page: Any, gallery_url: str) -> None:
    page, watch = open_watched_page(gallery_url, viewport=DESKTOP)
    page.goto(gallery_url + "index.html")
    page.locator("input#filter").press_sequentially("step")
    page.wait_for_function("() => document.querySelectorAll('li.entry-item:not([hidden])').length === 1")
    visible = page.locator("section.letter-group").evaluate_all(
        "groups => groups.filter(g => !g.hidden).map(g => g.querySelector('h2')?.textContent || '')")
    assert visible == ["Lines and steps"]
    watch.assert_clean()


def _values_look(page: Any, scheme: str) -> tuple[list[str], str, list[dict[str, Any]]]:
    """The HTML value's cells, the plain value's text and the page's serious axe violations."""
    return (page.locator(".value-html table td").all_inner_texts(), page.locator("pre.value").inner_text(),
            serious_violations(axe_violations(page)))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_values_on_an_entry_page_are_accessible(scheme_looks: SchemeLooks, gallery_url: str, scheme: str) -> None:
    def walk(page: Any, look: Any) -> None:
        page.goto(gallery_url + "lines/table/index.html")
        look(_values_look)
        page.locator("a[rel=prev]").click()
        page.wait_for_url("**/lines/step/index.html")

    # the looks in both schemes from one walk (the click checked once)
    [(cells, number, serious)], watch = scheme_looks.walked(gallery_url, scheme, walk, viewport=DESKTOP)
    assert cells == ["1", "2.5"]
    assert number == "42"
    assert not serious, describe_violations(serious)
    watch.assert_clean()
