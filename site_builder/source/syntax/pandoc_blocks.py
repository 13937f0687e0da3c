"""Pandoc's constructs markdown-it has no rule for: grid tables, display math whose closing
``$$`` carries an attribute block over several lines (``$$\\n a \\n$$ {#eq-x}``), and raw
inline code (```` `<b>x</b>`{=html} ````: HTML, rendered as a notebook's raw HTML is; another
format's vanishes); and ``pandoc_attributes``, the one reader of Pandoc's ``{#id .class key=value}``.

A grid table (``+---+---+`` lines, ``+===+`` under the header, ``:`` marking alignment) is read
by docutils' grid-table parser (reST's grid tables are Pandoc's), its cells' text parsed as
Markdown blocks (a cell of one paragraph shows as text, as Pandoc's ``Plain``); one it cannot
read stays a paragraph. Labelled display math becomes the ``math_block_label`` token dollarmath
makes of ``$$ ... $$ (label)``, so that the site stage numbers it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.rules_inline import StateInline

_RAW_FORMAT = re.compile(r"\{=([A-Za-z][\w-]*)\}")
_SEPARATOR = re.compile(r"^\+(?:[-=:]+\+)+$")
_MATH_CLOSE = re.compile(r"^(?P<tex>.*?)\$\$[ \t]*(?P<attributes>\{#[^{}\n]*\})[ \t]*$")
MAX_GRID_LINES = 2000  # a grid table's lines read at most (the parser is quadratic in the worst case)


_STRAIGHT = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def pandoc_attributes(block: str) -> dict[str, str] | None:
    """A Pandoc attribute block ``{#id .class key=value}`` as mdit-py-plugins reads it, a bare value
    holding any character Pandoc allows (``width=50%``), typographic quotes straightened; None
    when ``block`` is none."""
    from mdit_py_plugins.attrs.parse import ParseError, parse

    text = block.strip().translate(_STRAIGHT)
    for attempt in range(2):
        try:
            end, found = parse(text)
            return {str(k): str(v) for k, v in found.items()} if end == len(text) - 1 else None
        except ParseError:
            if attempt or not text.endswith("}"):
                return None
            # bare values quoted: the parser's bare values are narrower than Pandoc's (width=50%)
            words = _ATTRIBUTE_WORD.findall(text[1:-1])
            text = "{" + " ".join(f'{w.partition("=")[0]}="{w.partition("=")[2]}"'
                                  if "=" in w and w.partition("=")[2][:1] not in "\"'" else w
                                  for w in words) + "}"
    return None


_ATTRIBUTE_WORD = re.compile(r"""[^\s=]+=(?:"[^"]*"|'[^']*'|\S+)|\S+""")


def pandoc_blocks_plugin(md: MarkdownIt) -> None:
    """Pandoc's grid tables and labelled multi-line display math (see the module docstring)."""
    md.block.ruler.before("table", "pandoc_grid_table", _grid_table)
    md.block.ruler.before("math_block", "pandoc_math_block", _math_block, {"alt": ["paragraph"]})
    md.inline.ruler.after("backticks", "pandoc_raw_inline", _raw_inline)


def _raw_inline(state: StateInline, silent: bool) -> bool:
    """``{=format}`` right after inline code: the code is raw text of that format."""
    src, pos = state.src, state.pos
    if not src.startswith("{=", pos) or not state.tokens or state.tokens[-1].type != "code_inline":
        return False
    match = _RAW_FORMAT.match(src, pos)
    if match is None:
        return False
    if not silent:
        code = state.tokens.pop()
        if match.group(1).lower() == "html":
            state.push("html_inline", "", 0).content = code.content
    state.pos = match.end()
    return True


def _line(state: StateBlock, line: int) -> str:
    return state.src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]]


def _math_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    first = _line(state, start)
    if not first.startswith("$$") or "$$" in first[2:]:
        return False  # one line ("$$ x $$ {#eq-x}"): the inline rule reads it
    body = [first[2:]]
    for line in range(start + 1, min(end, start + 500)):
        text = _line(state, line)
        if not text.strip():
            return False  # display math holds no blank line (Pandoc's rule)
        match = _MATH_CLOSE.match(text)
        if match is None:
            if "$$" in text:
                return False  # closed without a label: dollarmath's
            body.append(text)
            continue
        found = pandoc_attributes(match.group("attributes")) or {}
        if not found.get("id"):
            return False
        if not silent:
            token = state.push("math_block_label", "math", 0)
            token.block, token.markup, token.info = True, "$$", found["id"]
            token.content = "\n".join([*body, match.group("tex")]).strip() + "\n"
            token.map = [start, line + 1]
        state.line = line + 1
        return True
    return False


def _grid_table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    if state.sCount[start] - state.blkIndent >= 4 or not _SEPARATOR.match(_line(state, start).rstrip()):
        return False
    line = start
    while line < end and line - start < MAX_GRID_LINES and _line(state, line).rstrip()[:1] in ("+", "|"):
        line += 1
    lines = [_line(state, n).rstrip() for n in range(start, line)]
    if len(lines) < 3 or not _SEPARATOR.match(lines[-1]):
        return False
    parsed = _parsed(lines)
    if parsed is None:
        return False
    if not silent:
        _push_table(state, *parsed, _alignments(lines), [start, line])
    state.line = line
    return True


def _parsed(lines: list[str]) -> tuple[list[Any], list[Any]] | None:
    """(header rows, body rows) of docutils' grid-table parser; None for no grid table."""
    from docutils.parsers.rst.tableparser import GridTableParser, TableMarkupError
    from docutils.statemachine import StringList

    # Pandoc's alignment colons are no part of reST's grid: read as the rule they stand in
    plain = [re.sub(r"(?<=[-=]):|:(?=[-=])", lambda m: "=" if "=" in line else "-", line)
             if _SEPARATOR.match(line) else line for line in lines]
    try:
        _, head, body = GridTableParser().parse(StringList(plain))
    except (TableMarkupError, IndexError, ValueError, AssertionError):  # docutils asserts on some malformed grids
        return None
    return head, body


def _alignments(lines: list[str]) -> list[str]:
    """Each column's alignment from Pandoc's colons (the header's separator, else the first line)."""
    rule = next((line for line in lines[1:] if line.startswith("+=")), lines[0])
    found = []
    for part in rule.strip("+").split("+"):
        left, right = part.startswith(":"), part.endswith(":")
        found.append("center" if left and right else "right" if right else "left" if left else "")
    return found


def _push_table(state: StateBlock, head: list[Any], body: list[Any], align: list[str], where: list[int]) -> None:
    table = state.push("table_open", "table", 1)
    table.map = where
    for section, rows, cell_tag in (("thead", head, "th"), ("tbody", body, "td")):
        if not rows:
            continue
        state.push(f"{section}_open", section, 1)
        for row in rows:
            state.push("tr_open", "tr", 1)
            column = 0
            for cell in row:
                if cell is None:
                    continue
                more_rows, more_columns, _, text = cell
                opened = state.push(f"{cell_tag}_open", cell_tag, 1)
                if more_columns:
                    opened.attrSet("colspan", str(more_columns + 1))
                if more_rows:
                    opened.attrSet("rowspan", str(more_rows + 1))
                if column < len(align) and align[column]:
                    opened.attrSet("style", f"text-align:{align[column]}")
                _push_cell(state, "\n".join(text).strip("\n"))
                state.push(f"{cell_tag}_close", cell_tag, -1)
                column += more_columns + 1
            state.push("tr_close", "tr", -1)
        state.push(f"{section}_close", section, -1)
    state.push("table_close", "table", -1)


def _push_cell(state: StateBlock, text: str) -> None:
    """A cell's text as Markdown blocks; one paragraph shows bare, as Pandoc shows its Plain."""
    import textwrap

    before = len(state.tokens)
    state.md.block.parse(textwrap.dedent(text), state.md, state.env, state.tokens)
    added = state.tokens[before:]
    for token in added:
        token.map = None  # lines of the cell, not of the text
    if [t.type for t in added] == ["paragraph_open", "inline", "paragraph_close"]:
        added[0].hidden = added[2].hidden = True
