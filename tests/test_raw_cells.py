"""Issue 27: a notebook's raw cell of HTML shows as MyST-NB shows it (its HTML, sanitised, its
headings in "On this page" and its ids linkable); other raw cells stay off the page; the
notebook download keeps the raw cell as it was."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tests.conftest import build_site

RAW_HTML = ('<h2 id="raw-section">A raw section</h2>\n\n<p>RAW-HTML-PARAGRAPH <script>alert(1)</script></p>\n\n'
            '<div id="raw-part">part ``` fenced</div>')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("raw-cells")
    (project / "demos").mkdir()
    cells = [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# Raw cells\n\nGo to [](#raw-section) or [the part](#raw-part)."},
        {"cell_type": "raw", "id": "r", "metadata": {"raw_mimetype": "text/html"}, "source": RAW_HTML},
        {"cell_type": "raw", "id": "r2", "metadata": {"format": "text/latex"}, "source": "LATEX-ONLY"},
        {"cell_type": "raw", "id": "r3", "metadata": {}, "source": "PLAIN-RAW"},
        {"cell_type": "code", "id": "c", "metadata": {}, "source": "print('ran')", "outputs": [], "execution_count": None},
    ]
    (project / "demos" / "raw.ipynb").write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}}))
    return build_site(project)


def test_a_raw_html_cell_shows_its_html_sanitised_with_linkable_ids(site: Path) -> None:
    page = (site / "raw" / "index.html").read_text(encoding="utf-8")
    assert '<h2 id="label-raw-section">A raw section</h2>' in page and "RAW-HTML-PARAGRAPH" in page
    assert "alert(1)" not in page and "<script" not in page.split("<main", 1)[1]
    assert "part ``` fenced</div>" in page  # backticks in the HTML: its text, not the end of the cell
    assert 'href="#label-raw-section"' in page and 'href="#label-raw-part"' in page
    assert 'class="toc-section">A raw section<' in page  # in "On this page"
    assert "LATEX-ONLY" not in page and "PLAIN-RAW" not in page


def test_the_download_keeps_the_raw_cell(site: Path) -> None:
    notebook = nbformat.read(site / "raw" / "raw.ipynb", as_version=4)
    nbformat.validate(notebook)
    raw = [c for c in notebook.cells if c.cell_type == "raw"]
    assert len(raw) == 1 and raw[0].source == RAW_HTML and raw[0].metadata["format"] == "text/html"
