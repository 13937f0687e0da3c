"""A notebook's page in a real browser reads as the notebook: its title, its opening prose
right under it, then cells and prose in order, no invented block names, figures without
file-name captions (the name and size as a tooltip), "On this page" listing its headings;
axe clean in both themes. Screenshots go to test-artifacts/ for a person to look at."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser_support import (
    DESKTOP,
    axe_violations,
    describe_violations,
    full_page_screenshot,
    serious_violations,
    serve_site,
)
from tests.conftest import build_site, shared_folder
from tests.test_notebook_document import plotting_notebook
from tests.scheme_looks import SchemeLooks

# What the reader meets, in order, from the article's top: block elements and their first words.
_READING_ORDER_JS = """() => [...document.querySelectorAll('article.entry > *')]
  .filter(el => el.offsetParent !== null)
  .map(el => el.tagName.toLowerCase() + ':' + (el.className || '') + ':' + el.innerText.trim().slice(0, 30))"""


@pytest.fixture(scope="module")
def site_url(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:

    def make(project: Path) -> None:
        (project / "demos").mkdir()
        nbformat.write(plotting_notebook(), project / "demos" / "03.01-Plotting.ipynb")
        build_site(project)

    with serve_site(shared_folder(tmp_path_factory, "document-browser", make) / "build") as url:
        yield url


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_notebook_page_reads_as_the_notebook(scheme_looks: SchemeLooks, site_url: str, scheme: str) -> None:
    def look(page: Any, scheme: str) -> dict[str, Any]:
        first = page.locator("article figure.artifact-image").first
        return {
            "order": page.evaluate(_READING_ORDER_JS),
            "body": page.locator("article.entry").inner_text(),
            "cell names": page.locator("article .cell-head h3").all_inner_texts(),
            "first figure": (first.locator("figcaption").count(), first.locator("a").get_attribute("title")),
            "sections": page.locator("nav.toc-side .toc-section").all_inner_texts(),
            "serious": serious_violations(axe_violations(page)),
            "png": full_page_screenshot(page, f"notebook-document-{scheme}.png"),
        }

    seen, watch = scheme_looks.seen(site_url, site_url + "03-01-plotting/index.html", scheme, look, viewport=DESKTOP)
    order = seen["order"]
    assert order[0] == "h1::Plotting – the “basics”", order
    # the navigation cell, then the opening prose: no framing between the title and them
    assert order[1].startswith("div:prose:< Previous | Contents >"), order
    assert order[3].startswith("div:prose:This notebook draws lines."), order
    kinds = [item.split(":")[1] for item in order]
    assert kinds.index("cell") < len(kinds) - 1 - kinds[::-1].index("prose")  # prose after a cell
    assert order[-1].startswith("p:how-to-run:Open 03-01-plotting.ipynb"), order
    body = seen["body"]
    assert "block-" not in body and "block by block" not in body
    assert seen["cell names"] == ["fig-squares"]  # the captioned figure's cell, by its name
    # a figure without a caption: no caption; its file and size on hover, the link to the file
    captions, title = seen["first figure"]
    assert captions == 0
    assert title.endswith("kB)")
    assert seen["sections"] == ["A first line", "Captioned"]
    assert not seen["serious"], describe_violations(seen["serious"])
    assert seen["png"][:8] == b"\x89PNG\r\n\x1a\n"
    watch.assert_clean()


def test_lists_tables_and_tasks_look_as_in_jupyter(open_watched_page: Any, site_url: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP)
    page.goto(site_url + "03-01-plotting/index.html")
    nested = page.locator("article li li").first
    outer = page.locator("article li").first
    assert nested.bounding_box()["x"] > outer.bounding_box()["x"] + 10  # indented under its parent
    assert page.locator("article ol li ul li").inner_text() == "detail"
    cells = page.locator("article .prose table td")
    assert cells.nth(1).evaluate("el => getComputedStyle(el).textAlign").endswith("right")
    task = page.locator("article .task-list-item")
    assert task.evaluate("el => getComputedStyle(el).listStyleType") == "none"
    assert task.inner_text() == "☑ drawn"
    watch.assert_clean()
