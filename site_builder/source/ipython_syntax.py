"""IPython syntax in a notebook's code cells (``%magic``, ``%%magic``, ``!shell``), rewritten to Python.

Done here, in the parent, when the cell is parsed: the child runs plain Python, as it runs a
script. ``%matplotlib`` needs nothing (the builder saves every open figure after each cell,
as the inline backend shows them) and becomes ``None``; ``%time``, ``%timeit``, ``%%time`` and
``%%timeit`` run through IPython's own magics when IPython is installed (the child then
imports it), else their statement runs once, untimed; ``%%writefile`` (``%%file``) writes its
file into the run folder through IPython; every other magic, ``!command`` and
``x = !command`` is skipped (``None``), with a note on the page.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# A cheap test before IPython is imported (seconds on a busy machine): a line that opens with
# % or ! (IPython only reads them at the start of a line, or after "x =").
_LOOKS_LIKE_IPYTHON = re.compile(r"^[ \t]*+(?:[%!]|[\w., ]+=[ \t]*[%!])", re.MULTILINE)  # *+: linear
# The line and cell magics the builder honours.
TIMING_MAGICS = frozenset({"time", "timeit"})
# Cell magics that write the cell to a file in the current folder (the demo's run folder).
FILE_MAGICS = frozenset({"writefile", "file"})
# The magics the builder honours by doing nothing (its figure capture is the inline backend).
SILENT_MAGICS = frozenset({"matplotlib"})
# How the rewritten code reaches IPython's magics in the child (a shell made on first use).
_SHELL = '__import__("IPython.core.interactiveshell").core.interactiveshell.InteractiveShell.instance()'
_PLAIN_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?P<mark>%%|%|!)(?P<name>\w*)[ \t]*(?P<rest>.*)$")


@dataclass(frozen=True)
class Rewritten:
    """A cell's code as the child runs it, and what the page should say about it."""

    text: str
    notes: tuple[tuple[int, str], ...]  # (0-based line in the cell, the note)


def rewrite(source: str) -> Rewritten | None:
    """The cell ``source`` with its IPython syntax rewritten, or None when it has none."""
    if not _LOOKS_LIKE_IPYTHON.search(source):
        return None
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return _without_ipython(source)
    transformed = TransformerManager().transform_cell(source)
    if transformed.rstrip("\n") == source.rstrip("\n"):
        return None
    try:
        tree = ast.parse(transformed)
    except SyntaxError:
        return None  # not valid once rewritten either: compiling the cell reports it
    lines = transformed.split("\n")
    original = source.split("\n")
    edits: list[tuple[int, int, int, int, str]] = []
    notes: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        call = _shell_call(node)
        if call is None:
            continue
        method, name = call
        row = node.lineno - 1
        shown = original[row].strip() if row < len(original) else name
        assert node.end_lineno is not None and node.end_col_offset is not None
        span = (row, node.col_offset, node.end_lineno - 1, node.end_col_offset)
        if method in ("run_line_magic", "run_cell_magic") and name in SILENT_MAGICS:
            edits.append((*span, "None"))
        elif method == "run_cell_magic" and name in TIMING_MAGICS and len(node.args) == 3:
            # run_cell_magic would run the cell in the shell's namespace, not the notebook's
            line, cell = (ast.unparse(a) for a in node.args[1:])
            edits.append((*span, f"{_SHELL}.find_cell_magic({name!r})({line}, {cell}, globals())"))
        elif method == "run_cell_magic" and name in FILE_MAGICS and len(node.args) == 3:
            line, cell = (ast.unparse(a) for a in node.args[1:])
            edits.append((*span, f"{_SHELL}.find_cell_magic({name!r})({line}, {cell})"))
        elif method == "run_line_magic" and name in TIMING_MAGICS:
            shell = node.func.value  # type: ignore[attr-defined]
            edits.append((shell.lineno - 1, shell.col_offset, shell.end_lineno - 1, shell.end_col_offset, _SHELL))
        else:
            edits.append((*span, "None"))
            notes.append((row, f"`{shown}` is IPython syntax the builder does not run: skipped"))
    for first, col, last, end_col, text in sorted(edits, reverse=True):
        lines[first:last + 1] = [lines[first][:col] + text + lines[last][end_col:]]
    return Rewritten("\n".join(lines).rstrip("\n"), tuple(sorted(notes)))


def _shell_call(node: ast.AST) -> tuple[str, str] | None:
    """(method, magic or command) of a ``get_ipython().METHOD('NAME', ...)`` call, else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    shell = node.func.value
    if not (isinstance(shell, ast.Call) and isinstance(shell.func, ast.Name) and shell.func.id == "get_ipython"):
        return None
    first = node.args[0] if node.args else None
    name = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
    return node.func.attr, name


def _without_ipython(source: str) -> Rewritten:
    """IPython is not installed: honour what plain Python can, skip the rest (line by line)."""
    lines = source.split("\n")
    notes: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        match = _PLAIN_MAGIC.match(line)
        if match is None or (match["mark"] == "%%" and i > 0):
            continue
        indent, mark, name, rest = match["indent"], match["mark"], match["name"], match["rest"]
        if mark == "%" and name in SILENT_MAGICS:
            lines[i] = f"{indent}pass"
        elif mark == "%%" and name in TIMING_MAGICS:
            lines[i] = f"{indent}pass"
            notes.append((i, f"`{line.strip()}`: the cell ran once, untimed (IPython is not installed)"))
        elif mark == "%" and name in TIMING_MAGICS and rest:
            lines[i] = f"{indent}{rest}"
            notes.append((i, f"`{line.strip()}`: ran once, untimed (IPython is not installed)"))
        else:
            lines[i] = f"{indent}pass"
            notes.append((i, f"`{line.strip()}` is IPython syntax the builder does not run: skipped"))
    return Rewritten("\n".join(lines), tuple(notes))
