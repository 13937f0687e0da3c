"""The one way tests read a built page: its HTML, a block's cell, a cell's status, visible text."""

from __future__ import annotations

import html as html_module
import re
from pathlib import Path


def page(where: Path, name: str) -> str:
    """The HTML of entry ``name``'s page in ``where``: a site folder, or a project folder (one
    holding demos/), whose build/ is read."""
    site = where / "build" if (where / "demos").is_dir() else where
    return (site / name / "index.html").read_text(encoding="utf-8")


def cell(page_html: str, block: str) -> str:
    """The <section> of block ``block`` on a page (AssertionError when there is none)."""
    found = re.search(rf'<section id="{re.escape(block)}"[ >].*?</section>', page_html, re.S)
    assert found, f"no cell {block}"
    return found.group(0)


def status(page_html: str, block: str) -> str:
    """The data-status of block ``block``'s cell ("ok", "timeout", "not-run", ...)."""
    found = re.search(r'data-status="([^"]+)"', cell(page_html, block))
    assert found, f"cell {block} has no status"
    return found.group(1)


def printed(page_html: str) -> str:
    """What the <pre class="output"> boxes of ``page_html`` hold (HTML)."""
    return "".join(re.findall(r'<pre class="output[^"]*"[^>]*>(.*?)</pre>', page_html, re.S))


def markup_text(fragment: str) -> str:
    """``fragment`` without its tags, entities left as written."""
    return re.sub(r"<[^>]+>", "", fragment)


def text(fragment: str) -> str:
    """The visible text of an HTML fragment: no tags, entities decoded."""
    return html_module.unescape(markup_text(fragment))
