"""A notebook's title and summary, read from its Markdown cells as a reader sees the document.

The title is the ``title:`` of the first cell's front matter (as MyST reads it), else the
first level-1 heading of the opening prose (the Markdown cells before the first code cell),
whatever precedes it: raw blocks, ``(label)=`` targets, ``{index}`` and other directives,
HTML comments, navigation cells, images. Else the first heading of any level, else the file
name made readable ("01-Introducing_NumPy" -> "01 Introducing NumPy"); never the path. The summary is
the first paragraph after the title (else the first one). Both are plain text: a role shows its text, markup
is left out. Headings and paragraphs inside directives or lists are neither.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from site_builder.source.syntax.markdown import front_matter, inline_text, parse

if TYPE_CHECKING:
    from markdown_it.token import Token

    from site_builder.source.parsed import Cell


@dataclass(frozen=True)
class DocumentHead:
    """A notebook's title and summary, and where the title's heading is."""

    title: str
    summary: str
    # (index of the cell, its first line, the line after it): the heading the page's <h1>
    # replaces; None when the title is no heading of the prose
    title_at: tuple[int, int, int] | None = None


def readable_name(rel_path: str) -> str:
    """A file name as a title: the stem, its ``_`` and ``-`` read as spaces."""
    words = " ".join(re.sub(r"[_\s]+|(?<=\w)-(?=\w)|--+", " ", PurePosixPath(rel_path).stem).split())
    return words[:1].upper() + words[1:] if words else PurePosixPath(rel_path).name


def document_head(cells: Sequence[Cell], rel_path: str) -> DocumentHead:
    """The title and summary of a notebook whose cells are ``cells`` (see the module docstring)."""
    parsed = [(i, parse(c.text)) for i, c in enumerate(cells) if c.kind == "markdown"]
    first_code = next((i for i, c in enumerate(cells) if c.kind == "code"), len(cells))
    opening = [(i, tokens) for i, tokens in parsed if i < first_code]
    found = ((_front_title(opening[0][1]) if opening else None) or _heading(opening, "h1")
             or _heading(parsed, None))
    if found is None:
        return DocumentHead(readable_name(rel_path), _summary(parsed, None))
    title, where = found
    # no paragraph after the title: the document's first one
    return DocumentHead(title or readable_name(rel_path), _summary(parsed, where) or _summary(parsed, None), where)


def _heading(parsed: list[tuple[int, list[Token]]], tag: str | None
             ) -> tuple[str, tuple[int, int, int]] | None:
    """The text and place of the first top-level heading (of ``tag``, or any)."""
    for index, tokens in parsed:
        for k, token in enumerate(tokens):
            if token.type == "heading_open" and token.level == 0 and (tag is None or token.tag == tag):
                text = inline_text(tokens[k + 1].children)
                if text and token.map:
                    return text, (index, token.map[0], token.map[1])
    return None


def _front_title(tokens: list[Token]) -> tuple[str, None] | None:
    """A ``title:`` in the front matter the text opens with (MyST's page title)."""
    if not tokens or tokens[0].type != "front_matter":
        return None
    data = front_matter(tokens[0]) or {}
    title = data.get("title")
    return (" ".join(title.split()), None) if isinstance(title, str) and title.strip() else None


def _summary(parsed: list[tuple[int, list[Token]]], where: tuple[int, int, int] | None) -> str:
    """The first top-level paragraph with words, after the title's heading when there is one."""
    for index, tokens in parsed:
        if where is not None and index < where[0]:
            continue
        for k, token in enumerate(tokens):
            if where is not None and index == where[0] and token.map and token.map[0] < where[2]:
                continue
            if token.type != "paragraph_open" or token.level != 0:
                continue
            children = tokens[k + 1].children or []
            if all(c.type in ("image", "softbreak", "hardbreak", "html_inline") or
                   (c.type == "text" and not c.content.strip()) for c in children):
                continue  # a paragraph holding only an image (a logo, a badge) or raw HTML
            text = inline_text(children)
            if text:
                return text
    return ""


def without_title(text: str, first: int, end: int) -> str:
    """``text`` with its lines ``first`` to ``end`` blank (the title's heading, which the page's
    h1 shows; the other lines keep their numbers)."""
    lines = text.split("\n")
    return "\n".join(lines[:first] + [""] * (end - first) + lines[end:])
