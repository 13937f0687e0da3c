"""Where a demo's prose quotes the run: each inline expression with its place and line.

An expression is evaluated after the code cell before it: a prose cell's after the last code
cell above it (before the first code cell: before anything ran), a block's description (the
docstring's Blocks section) after the block before that block, the docstring's opening prose
after the whole run. Code cells, comments included, are never read for expressions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from site_builder.source.parsed import Script
from site_builder.source.expressions.spec import split_spec

# Directives whose body is code or data, not prose: an {eval} written there is shown, not run.
_LITERAL = frozenset({"code", "code-block", "sourcecode", "code-cell", "literalinclude", "math", "raw",
                      "eval-rst", "glue:math", "mermaid", "csv-table", "list-table", "jupyter-execute",
                      "ipython", "highlight"})
# `{python} expr`; in more backticks (``{python} x``) it is escaped, as Quarto reads it
_QUARTO = re.compile(r"^\{python\}\s+(?P<code>\S.*)$", re.DOTALL)
_RST_ROLE = re.compile(r":eval:`(?P<code>[^`]+)`")
_OTHER_ENTRY_GLUE = re.compile(r"\{glue(?::\w*)?\}`[^`\n]*::|```\{glue(?::\w*)?\}[^\n]*::")
_MAX_DEPTH = 8  # directives inside directives read for expressions


@dataclass(frozen=True)
class Expression:
    """One value the prose quotes (or the entry exports), evaluated in the demo's namespace."""

    written: str  # as the prose has it: "loss[-1]:.3f" (a role's text), "{python} loss[-1]" (Quarto's)
    code: str  # the Python expression
    spec: str  # the format spec after it ("" : none)
    after: int | None  # index in Script.code_cells of the cell it follows; -1: before any; None: after the run
    line: int  # 1-based line in the entry's source (0: not known)
    place: str = ""  # a part of a file whose lines are not the file's ("cell 3" of a .ipynb)
    export: str = ""  # the name an Export section or ``export:`` gives it ("" : only quoted)

    @property
    def key(self) -> tuple[int | None, str]:
        """What the page looks the value up by: the same text at the same place is one value."""
        return (self.after, self.written)


def quoted(written: str, after: int | None, line: int, place: str = "") -> Expression:
    """The expression of a role's text (a Quarto ``{python} expr`` takes no spec)."""
    quarto = _QUARTO.match(written)
    if quarto:
        return Expression(written, quarto.group("code").strip(), "", after, line, place)
    code, spec = split_spec(written)
    return Expression(written, code, spec, after, line, place)


def find_expressions(script: Script, notebook: bool = False) -> tuple[Expression, ...]:
    """Every inline expression of ``script``'s prose in page order, then its exported names."""
    found: list[Expression] = []
    for text, language, after, line, place in prose_places(script, notebook):
        for written, offset in written_expressions(text, language):
            found.append(quoted(written, after, line + offset if line else 0, place))
    found += [Expression(name, name, "", None, 0, "", name) for name in script.exports]
    return tuple(found)


def prose_places(script: Script, notebook: bool = False) -> Iterator[tuple[str, str, int | None, int, str]]:
    """Each prose text of ``script`` as (text, language, after, first line, place)."""
    # the summary line is Markdown in the house style (plain text once a reST title gives the page one)
    for text, language in ((script.summary if not script.title else "", "markdown"), (script.purpose, "markdown"),
                           (script.intro, script.prose)):
        if text.strip():
            yield text, language, None, docstring_line(script, text), ""
    code = -1
    for index, cell in enumerate(script.cells):
        if cell.kind == "markdown":
            place = f"cell {index + 1}" if notebook and not cell.first_line else ""
            yield cell.text, script.prose, code, cell.first_line if not place else 1, place
            continue
        if cell.description.strip():
            yield cell.description, "markdown", code, docstring_line(script, cell.description), ""
        code += 1


def pastes_from_other_entries(script: Script) -> bool:
    """True when the prose pastes a value another entry glued (``{glue}`other.ipynb::name```):
    its page waits for every run."""
    return any(_OTHER_ENTRY_GLUE.search(text) for text, *_ in prose_places(script))


def cell_place(script: Script, cell_index: int) -> int:
    """The place of the prose in ``script.cells[cell_index]`` (a prose cell) or of that code cell's
    description: the index of the code cell before it, -1 when none."""
    return sum(1 for cell in script.cells[:cell_index] if cell.kind == "code") - 1


def docstring_line(script: Script, text: str) -> int:
    """The entry's line where ``text``, a part of the docstring, starts (0: not known)."""
    at = script.docstring.find(text) if script.docstring_lines else -1
    if at < 0 or script.docstring_lines is None:
        return 0
    return script.docstring_lines[0] + script.docstring.count("\n", 0, at)


def written_expressions(text: str, language: str) -> Iterator[tuple[str, int]]:
    """The expressions written in one prose text, as written, with their 0-based line in it."""
    if language == "rst":
        for match in _RST_ROLE.finditer(text):
            yield match.group("code"), text.count("\n", 0, match.start())
        return
    if "eval" in text or "{python}" in text:  # most prose quotes nothing: no parse
        yield from _markdown_expressions(text, 0, 0)


def _markdown_expressions(text: str, first: int, depth: int) -> Iterator[tuple[str, int]]:
    from site_builder.source.syntax.markdown import directive_of, parse

    for token in parse(text):
        line = first + (token.map[0] if token.map else 0)
        for child in token.children or ():
            line += child.type in ("softbreak", "hardbreak")  # the paragraph's lines so far
            if child.type == "myst_role" and child.meta.get("name", "").lower() == "eval":
                yield child.content, line
            elif child.type == "code_inline" and child.markup == "`" and _QUARTO.match(child.content):
                yield child.content, line
        directive = directive_of(token)
        if directive is not None and directive.name in ("eval", "eval:figure") and directive.argument:
            yield directive.argument.strip(), line  # MyST-NB's block form, and its figure
        if directive is not None and directive.name not in _LITERAL and depth < _MAX_DEPTH:
            yield from _markdown_expressions(directive.body, line + directive.body_line, depth + 1)
