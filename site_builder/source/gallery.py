"""Sphinx-Gallery conventions inside code cells: settings comments, ignored lines, string text blocks.

``# sphinx_gallery_KEY = VALUE`` comments and the lines between ``# sphinx_gallery_start_ignore``
and ``# sphinx_gallery_end_ignore`` run but are not shown (page and notebook; the ``.py``
download keeps them), as Sphinx-Gallery does. A bare triple-quoted string statement between
code is prose, the way scripts written before ``# %%`` separated their text.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from site_builder.source.parsed import Cell

# "# sphinx_gallery_KEY = VALUE", at any indentation (as Sphinx-Gallery reads them).
# The value ends possessively at its last non-blank (a lazy ".*?" before "\s*$" is quadratic in a blank run).
GALLERY_SETTING = re.compile(r"^[ \t]*#\s*sphinx_gallery_(?P<key>\w+)\s*=\s*(?P<value>(?:\S(?:\s*+\S)*+)?)\s*$")
IGNORE_START = re.compile(r"^[ \t]*#\s*sphinx_gallery_start_ignore\b")
IGNORE_END = re.compile(r"^[ \t]*#\s*sphinx_gallery_end_ignore\b")
_TRIPLE = re.compile(r"^[rRuU]?(\"\"\"|''')")


def hidden_lines(lines: list[str]) -> set[int]:
    """Indices of the lines a reader is not shown: gallery settings and ignored ranges (markers included)."""
    hidden: set[int] = set()
    ignoring = False
    for i, line in enumerate(lines):
        if IGNORE_START.match(line):
            ignoring = True
        if ignoring or GALLERY_SETTING.match(line):
            hidden.add(i)
        if IGNORE_END.match(line):
            ignoring = False
            hidden.add(i)
    return hidden


def shown_code(text: str) -> str:
    """``text`` without its hidden lines (for the notebook download), blank edges trimmed."""
    lines = text.split("\n")
    hidden = hidden_lines(lines)
    return "\n".join(line for i, line in enumerate(lines) if i not in hidden).strip("\n")


def ignore_warnings(cells: tuple[Cell, ...] | list[Cell], where: str) -> list[str]:
    """One message per code cell whose start/end ignore markers do not pair up."""
    messages = []
    for cell in cells:
        if cell.kind != "code":
            continue
        lines = cell.text.split("\n")
        starts = sum(1 for line in lines if IGNORE_START.match(line))
        ends = sum(1 for line in lines if IGNORE_END.match(line))
        if starts != ends:
            messages.append(f"{where}: block {cell.name} has {starts} sphinx_gallery_start_ignore and "
                            f"{ends} sphinx_gallery_end_ignore lines; what follows an unmatched start is hidden")
    return messages


def _string_blocks(text: str, keep_first: bool) -> list[tuple[int, int, str]]:
    """(first, last) 0-based line indices and text of the bare triple-quoted strings of ``text``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = text.split("\n")
    found = []
    for index, stmt in enumerate(tree.body):
        if keep_first and index == 0:
            continue  # the module docstring stays in the setup block
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str) and stmt.col_offset == 0
                and stmt.end_lineno is not None and stmt.end_col_offset is not None):
            continue
        after = lines[stmt.end_lineno - 1][stmt.end_col_offset:].strip()
        if _TRIPLE.match(lines[stmt.lineno - 1]) and (not after or after.startswith("#")):
            found.append((stmt.lineno - 1, stmt.end_lineno - 1, textwrap.dedent(stmt.value.value).strip("\n")))
    return found


def _code_piece(cell: Cell, lines: list[str], start: int, end: int, name: str, marker: int | None) -> Cell | None:
    """Lines ``start:end`` of ``cell`` as a code cell of their own (blank edges dropped), None if blank."""
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if start == end:
        return None
    return replace(cell, name=name, text="\n".join(lines[start:end]), first_line=cell.first_line + start,
                   marker_line=marker)


def split_string_blocks(cells: list[Cell]) -> list[Cell]:
    """Code cells split at their bare triple-quoted strings, which become prose; blocks renumbered."""
    out: list[Cell] = []
    for cell in cells:
        blocks = _string_blocks(cell.text, cell.name == "setup") if cell.kind == "code" else []
        if not blocks:
            out.append(cell)
            continue
        lines, start, marker, name = cell.text.split("\n"), 0, cell.marker_line, cell.name
        for first, last, prose in blocks:
            piece = _code_piece(cell, lines, start, first, name, marker)
            if piece is not None:
                out.append(piece)
                name = "block"  # the first piece keeps the cell's name; the others are renumbered below
            if prose.strip():
                out.append(replace(cell, kind="markdown", name="", text=prose, first_line=cell.first_line + first,
                                   marker_line=cell.first_line + first, description="", tags=(), options=()))
            start, marker = last + 1, cell.first_line + last
        piece = _code_piece(cell, lines, start, len(lines), name, marker)
        if piece is not None:
            out.append(piece)
    ordinal = 0
    renamed = []
    for cell in out:
        if cell.kind == "code" and cell.name != "setup":
            ordinal += 1
            cell = replace(cell, name=f"block-{ordinal}")
        renamed.append(cell)
    return renamed
