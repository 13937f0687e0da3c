"""A ``.qmd`` document -> prose and code cells, numbered by the file's own lines.

The text is parsed once by the one Markdown parser (source.syntax.markdown); a fenced block
```` ```{python} ```` at the top level, or inside a ``:::`` div (whose fences then leave the
page, its content staying in order), is a code cell: its leading ``#|`` lines are read as YAML
(Quarto's cell options, lists too), after the document's defaults. ```` ```{.python} ```` and
other fences are listings of the prose (```` ```{{python}} ```` too: Quarto shows it, never runs it); ```` ```{mermaid} ```` and ```` ```{dot} ```` diagrams too,
with a warning. A cell of any other language cannot run here: ParseError naming the line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from site_builder.errors import ParseError
from site_builder.source import cell_options
from site_builder.source.parsed import Cell
from site_builder.source.syntax.markdown import front_matter, parse
from site_builder.source.syntax.yaml_guard import load_plain_yaml

if TYPE_CHECKING:
    from markdown_it.token import Token

PYTHON = ("python", "python3", "ipython", "ipython3", "py")
DIAGRAMS = ("mermaid", "dot")
MAX_DIV_DEPTH = 8  # divs holding cells, opened inside one another


@dataclass
class Split:
    """What the splitter found: the front matter, the code cells' lines, the lines left out."""

    front: dict[str, object] = field(default_factory=dict)
    body_start: int = 0  # 0-based line after the front matter
    cells: list[tuple[int, int, str]] = field(default_factory=list)  # (fence line, end line, content), 0-based
    dropped: set[int] = field(default_factory=set)  # fence lines of divs opened around cells
    warnings: list[str] = field(default_factory=list)


def fence_language(info: str) -> str:
    """The language of a fence's ``{python}``-style info (lower case), "" for a listing's
    (```` ```python ````, ```` ```{.python} ````, Quarto's verbatim ```` ```{{python}} ````) or a raw
    block's (```` ```{=html} ````)."""
    text = info.strip()
    if not text.startswith("{") or text.startswith("{{") or "}" not in text:
        return ""
    words = text[1:text.index("}")].replace(",", " ").split()
    return words[0].lower() if words and words[0][0] not in ".#=" else ""


def split_document(source: str, where: str) -> Split:
    """The front matter and cells of the document ``source`` (see the module docstring)."""
    tokens = parse(source)
    found = Split()
    if tokens and tokens[0].type == "front_matter" and tokens[0].map:
        found.front = front_matter(tokens[0]) or {}
        found.body_start = tokens[0].map[1]
        tokens = tokens[1:]
    _scan(tokens, 0, source.split("\n"), found, where, 0)
    return found


def _scan(tokens: list[Token], offset: int, lines: list[str], found: Split, where: str, depth: int) -> None:
    for token in tokens:
        if token.map is None:
            continue
        start, end = token.map[0] + offset, token.map[1] + offset
        if token.type == "fence":
            language = fence_language(token.info)
            if language in PYTHON and token.level == 0:
                found.cells.append((start, end, token.content))
            elif language in DIAGRAMS:
                found.warnings.append(f"{where}:{start + 1}: a {{{language}}} diagram is shown as its source "
                                      "(diagrams are drawn by Quarto itself)")
            elif language and language not in PYTHON:
                raise ParseError(f"{where}:{start + 1}: a {{{language}}} cell: only Python cells can run here "
                                 "(the document's other cells would need their own engine)")
            elif language:
                found.warnings.append(f"{where}:{start + 1}: a Python cell inside a list or quote is shown, "
                                      "not run (Quarto runs top-level cells)")
        elif token.type == "colon_fence" and depth < MAX_DIV_DEPTH and "{python" in token.content.lower():
            inner = parse(token.content)
            if any(t.type == "fence" and fence_language(t.info) for t in inner) or any(
                    t.type == "colon_fence" for t in inner):
                before = len(found.cells)
                _scan(inner, start + 1, lines, found, where, depth + 1)
                if len(found.cells) > before:  # the div's fences leave the page, its content stays
                    found.dropped.add(start)
                    closing = end - 1
                    if closing > start and lines[closing].strip().startswith(":::"):
                        found.dropped.add(closing)


def cell_options_of(content_lines: list[str]) -> tuple[tuple[tuple[str, str], ...], int]:
    """A cell's leading ``#|`` lines read as YAML (lists as JSON text), and how many lines they take;
    as cell_options.split_options reads them when they are no YAML mapping."""
    taken = 0
    while taken < len(content_lines) and content_lines[taken].lstrip().startswith("#|"):
        taken += 1
    if not taken:
        return (), 0
    text = "\n".join(line.lstrip()[2:].removeprefix(" ") for line in content_lines[:taken])
    data = load_plain_yaml(text)
    if not isinstance(data, dict):
        return cell_options.split_options(content_lines)
    return tuple((str(k), _option_text(v)) for k, v in data.items()), taken


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else str(value)


def document_cells(source: str, found: Split, defaults: tuple[tuple[str, str], ...]) -> list[Cell]:
    """The document's cells: prose runs between the code cells, the code cells named ``block-N``."""
    lines = source.split("\n")
    cells: list[Cell] = []
    prose_from = found.body_start

    def prose(upto: int) -> None:
        text = [("" if n in found.dropped else lines[n]) for n in range(prose_from, upto)]
        first = next((i for i, line in enumerate(text) if line.strip()), None)
        if first is not None:  # its first line with words, so that the lines keep the file's numbers
            cells.append(Cell("markdown", "", "\n".join(text[first:]).rstrip(), prose_from + first + 1, None))

    for ordinal, (start, end, content) in enumerate(found.cells, 1):
        prose(start)
        body = content.removesuffix("\n").split("\n")
        options, taken = cell_options_of(body)
        text = "\n".join(body[taken:]).rstrip("\n")
        own = {key for key, _ in options}  # the document's defaults the cell does not override, then its own
        cells.append(Cell("code", f"block-{ordinal}", text, start + 2 + taken, start + 1,
                          options=(*((k, v) for k, v in defaults if k not in own), *options)))
        prose_from = end
    prose(len(lines))
    return cells

