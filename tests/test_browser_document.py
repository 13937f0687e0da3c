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

from tests.browser_support import DESKTOP, axe_violations, describe_violations, serious_violations, serve_site
from tests.conftest import REPO, build_site, shared_folder
from tests.test_notebook_document import plotting_notebook

ARTIFACTS = REPO / "test-artifacts"

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
def test_a_notebook_page_reads_as_the_notebook(open_watched_page: Any, site_url: str, scheme: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP, color_scheme=scheme)
    page.goto(site_url + "03-01-plotting/index.html")
    order = page.evaluate(_READING_ORDER_JS)
    assert order[0] == "h1::Plotting – the “basics”", order
    # the navigation cell, then the opening prose: no framing between the title and them
    assert order[1].startswith("div:prose:< Previous | Contents >"), order
    assert order[3].startswith("div:prose:This notebook draws lines."), order
    kinds = [item.split(":")[1] for item in order]
    assert kinds.index("cell") < len(kinds) - 1 - kinds[::-1].index("prose")  # prose after a cell
    assert order[-1].startswith("p:how-to-run:Open 03-01-plotting.ipynb"), order
    body = page.locator("article.entry").inner_text()
    assert "block-" not in body and "block by block" not in body
    assert page.locator("article .cell-head h3").count() == 1  # the captioned figure's cell, by its name
    assert page.locator("article .cell-head h3").inner_text() == "fig-squares"
    # a figure without a caption: no caption; its file and size on hover, the link to the file
    first = page.locator("article figure.artifact-image").first
    assert first.locator("figcaption").count() == 0
    assert first.locator("a").get_attribute("title").endswith("kB)")
    headings = page.locator("nav.toc-side .toc-section").all_inner_texts()
    assert headings == ["A first line", "Captioned"]
    serious = serious_violations(axe_violations(page))
    assert not serious, describe_violations(serious)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"notebook-document-{scheme}.png"), full_page=True)
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
