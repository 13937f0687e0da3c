""""On this page": the page's prose headings, each with the blocks under it (a notebook's
cells only when they have a label of their own: the page reads as the document).

A Sphinx-Gallery or Jupyter Book page is organised by its prose sections; listing only
``block-3``, ``block-4``... says nothing. The headings are read back from the rendered
(sanitised) prose, so reST and Markdown give the same list: a heading's id is its own or,
as docutils writes sections, the id of the ``<section>`` it opens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


@dataclass
class TocGroup:
    """A heading of the prose (none before the first one) and the code cells that follow it."""

    text: str  # "" for the blocks before the first heading
    anchor: str
    depth: int  # 0 for the page's top prose level, 1 below it...
    blocks: list[Any] = field(default_factory=list)  # the CellViews of its code cells


class _Headings(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[int, str, str]] = []  # (level, id, text)
        self.section_id = ""  # the id of a <section> just opened
        self.current: list[Any] | None = None  # [level, id, text parts] inside a heading

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        ids = dict(attrs).get("id") or ""
        if tag in _HEADINGS:
            self.current = [int(tag[1]), ids or self.section_id, []]
        self.section_id = ids if tag == "section" else ""

    def handle_endtag(self, tag: str) -> None:
        if tag in _HEADINGS and self.current is not None:
            level, anchor, parts = self.current
            text = " ".join("".join(parts).split())
            if anchor and text:
                self.found.append((level, anchor, text))
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.current is not None:
            self.current[2].append(data)


def headings(html: str) -> list[tuple[int, str, str]]:
    """The (level, id, text) of every heading with an id in ``html``."""
    parser = _Headings()
    parser.feed(html)
    return parser.found


def page_toc(cells: list[Any]) -> list[TocGroup]:
    """The cells' headings in order, code cells under the heading before them."""
    groups = [TocGroup("", "", 0)]
    for cell in cells:
        if cell.kind == "code":
            # not a cell left out (remove-cell, include: false), nor a notebook's unnamed cell
            if not cell.display.removed and cell.label:
                groups[-1].blocks.append(cell)
            continue
        for level, anchor, text in headings(str(cell.html)):
            groups.append(TocGroup(text, anchor, level))
    if len(groups) == 1:
        return groups
    top = min(g.depth for g in groups[1:])
    for group in groups[1:]:
        group.depth -= top
    return [g for i, g in enumerate(groups) if i > 0 or g.blocks]
