"""The one way tests read a built page: its HTML, a block's cell, a cell's status, visible text,
and (``parts``) its ids, links, text and cells as the HTML parser reads them."""

from __future__ import annotations

import html as html_module
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
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


class _Parts(HTMLParser):
    """One pass over a page: its elements with an id, its links, its text, and each cell's code and output."""

    def __init__(self, inside: str | None) -> None:
        super().__init__()
        self.parts = PageParts()
        self._inside, self._depth = inside, 0 if inside else 1  # text is kept at depth > 0
        self._link: tuple[str, list[str]] | None = None
        self._section: str | None = None
        self._target: dict[str, str] | None = None
        self._target_depth = self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        self._depth += tag == self._inside
        if found.get("id") is not None:
            self.parts.ids.append(Element(tag, found["id"] or "", found.get("class") or ""))
        self.parts.urls += [value for key, value in attrs if key in ("href", "src") and value is not None]
        if tag == "a":
            self._link = (found.get("href") or "", [])
        if tag == "img":
            self.parts.images.append((found.get("src") or "", found.get("alt") or ""))
        self._cell_start(tag, found, classes)

    def _cell_start(self, tag: str, found: dict[str, str | None], classes: list[str]) -> None:
        if tag == "section" and found.get("id") and "cell" in classes:
            self._section = found["id"]
            self.parts.cells.append(self._section or "")
        if self._section is None:
            return
        if self._target is not None:
            self._target_depth += 1
            if self._skip or "linenos" in classes or "linenodiv" in classes:
                self._skip += 1  # line numbers are not the code
        elif tag == "pre" and "output" in classes:
            self._target, self._target_depth = self.parts.output, 1
        elif "highlight" in classes:
            self._target, self._target_depth = self.parts.code, 1

    def handle_endtag(self, tag: str) -> None:
        self._depth -= tag == self._inside
        if tag == "a" and self._link is not None:
            self.parts.links.append((self._link[0], "".join(self._link[1]).strip()))
            self._link = None
        if self._target is not None:
            self._target_depth -= 1
            self._skip -= bool(self._skip)
            if self._target_depth == 0:
                self._target = None
        elif tag == "section":
            self._section = None

    def handle_data(self, data: str) -> None:
        if self._depth > 0:
            self.parts.text.append(data)
        if self._link is not None:
            self._link[1].append(data)
        if self._target is not None and self._section and not self._skip:
            self._target[self._section] = self._target.get(self._section, "") + data


@dataclass(frozen=True)
class Element:
    """An element with an id attribute: its tag, its id ("" when empty) and its class attribute."""

    tag: str
    id: str
    classes: str


@dataclass
class PageParts:
    """What ``parts`` reads from a page: every element with an id, in order; every link's (href,
    text); every href and src; every image's (src, alt); its text pieces; the cells' ids in order, and per cell the text of
    its code (without line numbers) and of its printed output."""

    ids: list[Element] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)
    code: dict[str, str] = field(default_factory=dict)
    output: dict[str, str] = field(default_factory=dict)


def parts(page_html: str, inside: str | None = None) -> PageParts:
    """Read ``page_html`` with the standard HTML parser (entities decoded); ``inside`` (a tag
    name, "article" say) keeps only the text inside that element."""
    reader = _Parts(inside)
    reader.feed(page_html)
    reader.close()
    return reader.parts


def visible(page_html: str, inside: str | None = None) -> str:
    """The text a reader sees, as the HTML parser reads it (no comments, no attribute values),
    joined as written; ``inside`` as for ``parts``."""
    return "".join(parts(page_html, inside).text)


def article_text(page_html: str) -> str:
    """The text a reader sees in a page's <article> (no attribute values, no hidden ids), each run of
    white space one space."""
    return " ".join(" ".join(parts(page_html, inside="article").text).split())
