"""What the parse stage makes of an entry, whatever its format: its cells and the Script.

The dataclasses every stage reads, and what every parser shares: compiling a code cell at
its line, the modules it imports, the requirements they make, the cells' option warnings,
and a Script as plain data for the next build.  Imports nothing but ``errors`` and ``cell_options``.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from site_builder.errors import ParseError
from site_builder.source import cell_options


@dataclass(frozen=True)
class Cell:
    """One cell of a demo: a named code block or a Markdown prose cell."""

    kind: Literal["code", "markdown"]  # "markdown": a prose cell, in the Script's prose language
    name: str  # "setup", "B-train", ...; prose cells: "" (they have no anchor of their own)
    text: str  # code: the block's source lines (no marker line, trailing blank lines dropped);
    #            prose: the text with the leading "# " comment prefix removed
    first_line: int  # 1-based line number in the script of the first line of ``text``
    marker_line: int | None  # 1-based line of the "# %%" marker; None for setup
    description: str = ""  # from the docstring's Blocks section, "" when none
    tags: tuple[str, ...] = ()  # Jupytext cell metadata tags, e.g. ("raises-exception",)
    options: tuple[tuple[str, str], ...] = ()  # Quarto "#| key: value" lines (left out of ``text``)
    # options its notebook metadata gives (MyST's :name: and :caption:, MyST-NB's figure name
    # and caption, as "label" and "fig-cap"); ``options`` override them, downloads keep the metadata
    metadata_options: tuple[tuple[str, str], ...] = ()
    # a .ipynb Markdown cell's images, as "attachment:NAME" shows them: (name, MIME type, data:
    # base64, or the text of an SVG), the image types a page shows only
    attachments: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Script:
    """Everything the parse stage learns from one demo's source."""

    summary: str  # first line of the module docstring ("" when no docstring)
    purpose: str  # the docstring's Purpose section, Markdown ("" when none)
    docstring: str  # the whole module docstring
    cells: tuple[Cell, ...]  # in script order; cells[0] is the setup block unless it was
    #                          empty (the script starts with a marker after blank lines only)
    requirements: tuple[str, ...]  # third-party top-level imports, display names ("NumPy", ...)
    warnings: tuple[str, ...] = field(default=())  # one-line messages (Blocks list mismatches)
    prose: Literal["markdown", "rst"] = "markdown"  # the language of the prose (see prose_language)
    title: str = ""  # the docstring's reST title (source text), "" when it has none
    intro: str = ""  # the docstring after a reST title (reST source), "" when it has no title
    docstring_lines: tuple[int, int] | None = None  # first and last script line of the docstring
    gallery_settings: dict[str, str] = field(default_factory=dict)  # sphinx_gallery_KEY -> VALUE
    thumbnail_number: int | None = None  # sphinx_gallery_thumbnail_number (1-based, -1: last)
    imports: tuple[str, ...] = ()  # top-level modules imported outside functions, the stdlib's too
    run_source: str = ""  # a notebook's text its cells' line numbers count in ("" : the entry's source)
    # a notebook's title heading: (cell index, first line, line after it), the page's <h1> shows it
    title_at: tuple[int, int, int] | None = None
    aliases: tuple[str, ...] = ()  # other names of the entry's term (an Aliases section, front matter aliases:)
    bibliography: tuple[str, ...] = ()  # a notebook's front matter bibliography: files, from its folder
    exports: tuple[str, ...] = ()  # names whose values the entry exports (an Export section, front matter export:)
    # a Quarto document's front matter: shown under its title
    subtitle: str = ""
    authors: tuple[str, ...] = ()
    date: str = ""  # as the page shows it ("March 5, 2024")
    abstract: str = ""  # Markdown
    table_widths: tuple[float, ...] = ()  # its tbl-colwidths: every prose table's columns (percent) without its own

    @property
    def code_cells(self) -> tuple[Cell, ...]:
        """The code cells only, in script order."""
        return tuple(c for c in self.cells if c.kind == "code")


_DISPLAY_NAMES = {
    "numpy": "NumPy",
    "matplotlib": "Matplotlib",
    "scipy": "SciPy",
    "pandas": "pandas",
    "sklearn": "scikit-learn",
    "torch": "PyTorch",
}


def syntax_error(entry: str, block: str, rel_path: str, error: SyntaxError | ValueError) -> ParseError:
    # Worded like a block that raised at run time: one format for every failure.
    prefix = f"{entry}: block {block}"
    if isinstance(error, SyntaxError):
        detail = "".join(traceback.format_exception_only(type(error), error))
        return ParseError(
            f"{prefix} raised {type(error).__name__} at {rel_path}:{error.lineno}: {error.msg}",
            block=block, line=error.lineno, error_type=type(error).__name__, detail=detail,
        )
    return ParseError(f"{prefix} cannot be compiled ({rel_path}): {error}", block=block)


def compile_cell(cell: Cell, rel_path: str, entry: str) -> ast.Module:
    """Compile a code cell at its line in the script and return its tree (its line numbers
    counted in the cell); ParseError (worded as a run's, at the script's line) when it cannot."""
    # The cell alone, its lines moved after parsing: padding it with the lines before it made
    # parsing a notebook quadratic in its cells.  dont_inherit keeps this module's own
    # __future__ imports out of the demo's code.
    offset = cell.first_line - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings are the run's business
        try:
            tree = compile(cell.text + "\n", rel_path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as error:  # counted in the cell: moved to the script's lines
            error.lineno = error.lineno + offset if error.lineno else error.lineno
            error.end_lineno = error.end_lineno + offset if error.end_lineno else error.end_lineno
            raise syntax_error(entry, cell.name, rel_path, error) from None
        except (ValueError, RecursionError, MemoryError) as error:  # a NUL byte; nesting the parser refuses
            raise syntax_error(entry, cell.name, rel_path, ValueError(str(error) or type(error).__name__)) from None
        try:
            compile(tree, rel_path, "exec", dont_inherit=True)  # what only the compiler finds
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            try:  # again at the script's lines, for a message that names the right one
                compile(ast.increment_lineno(tree, offset), rel_path, "exec", dont_inherit=True)
            except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
                raise syntax_error(entry, cell.name, rel_path, error if isinstance(error, SyntaxError)
                                    else ValueError(str(error) or type(error).__name__)) from None
    return tree


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def module_imports(tree: ast.Module) -> tuple[str, ...]:
    """The top-level modules imported outside functions and classes, in script order, once each."""
    found: list[tuple[int, int, str]] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            found += [(node.lineno, node.col_offset, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.col_offset, node.module.split(".")[0]))
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # An import is a statement, and statements sit only in these lists (a module's, an
            # if's, a loop's, a try's and its handlers', a with's, a match's cases'), never in
            # an expression: the expressions, most of a tree's nodes, are not walked.
            for field in _STATEMENT_LISTS:
                stack += getattr(node, field, ())
    return tuple(dict.fromkeys(module for _, _, module in sorted(found)))


def requirements_of(imports: tuple[str, ...], local_dir: Path | str | None) -> tuple[str, ...]:
    """Display names of the third-party modules among ``imports`` (those of ``local_dir`` aside)."""
    names: list[str] = []
    for module in imports:
        if module in sys.stdlib_module_names:
            continue
        # os.path, not pathlib: a rebuild asks for every saved script's (a Path each cost more than the stat)
        if local_dir is not None and (
            os.path.isfile(os.path.join(local_dir, f"{module}.py")) or os.path.isdir(os.path.join(local_dir, module))
        ):
            continue
        names.append(module)
    return tuple(_DISPLAY_NAMES.get(m, m) for m in names)


def option_warnings(cells: list[Cell], rel_path: str, entry: str) -> list[str]:
    """A warning per code cell with a tag or ``#|`` option the builder does not know."""
    messages = []
    for cell in cells:
        if cell.kind == "code":
            for problem in cell_options.problems(cell.tags, cell.options):
                line = cell.marker_line or cell.first_line
                messages.append(f"{entry}: block {cell.name} ({rel_path}:{line}): {problem}")
    return messages


def _defaults(cls: type) -> dict[str, Any]:
    """The default of each field of dataclass ``cls`` that has one."""
    return {f.name: f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
            for f in fields(cls) if f.default is not MISSING or f.default_factory is not MISSING}


_SCRIPT_DEFAULTS, _CELL_DEFAULTS = _defaults(Script), _defaults(Cell)


def script_data(script: Script) -> dict[str, Any]:
    """``script`` as plain JSON data, for :func:`script_from_data` in a later build: the fields
    that have their default are left out (a rebuild of a large site decodes every saved parse,
    and most of a parse's fields are empty: half the text, a fifth of the decoding)."""
    # field by field: asdict's deep copies cost 20 ms for a thousand scripts
    data = {name: value for f in fields(script)
            if (value := getattr(script, name := f.name)) != _SCRIPT_DEFAULTS.get(name, MISSING)}
    data["cells"] = [{name: value for f in fields(cell)
                      if (value := getattr(cell, name := f.name)) != _CELL_DEFAULTS.get(name, MISSING)}
                     for cell in script.cells]
    return data


def _pairs(items: list[Any]) -> tuple[tuple[str, str], ...]:
    return tuple((str(k), str(v)) for k, v in items)


def _cell_from_data(data: dict[str, Any]) -> Cell:
    cell = dict(data)  # a field left out has its default
    if "tags" in cell:
        cell["tags"] = tuple(cell["tags"])
    for name in ("options", "metadata_options"):
        if name in cell:
            cell[name] = _pairs(cell[name])
    if "attachments" in cell:
        cell["attachments"] = tuple((str(n), str(m), str(d)) for n, m, d in cell["attachments"])
    return Cell(**cell)


def script_from_data(data: dict[str, Any], local_dir: Path | str | None) -> Script:
    """The Script :func:`script_data` gave (KeyError, TypeError or ValueError when it is not one);
    its requirements looked up again, as local modules may have come or gone."""
    values = _field_values(data)
    values["requirements"] = requirements_of(values.get("imports", ()), local_dir)  # never the saved ones
    return Script(**values)


def _field_values(data: dict[str, Any]) -> dict[str, Any]:
    """The fields ``data`` holds (script_data's, without requirements), as a Script holds them."""
    values = dict(data)  # a field left out has its default
    values["cells"] = tuple(map(_cell_from_data, data["cells"]))
    for name in ("warnings", "aliases", "bibliography", "exports", "authors", "imports"):
        if name in values:
            values[name] = tuple(str(text) for text in values[name])
    if "docstring_lines" in values:
        lines = values["docstring_lines"]
        values["docstring_lines"] = (int(lines[0]), int(lines[1])) if lines else None
    if "title_at" in values:
        title_at = values["title_at"]
        values["title_at"] = tuple(int(n) for n in title_at) if title_at else None
    if "gallery_settings" in values:
        values["gallery_settings"] = dict(values["gallery_settings"])
    if "table_widths" in values:
        values["table_widths"] = tuple(float(w) for w in values["table_widths"])
    return values


# What a rebuild reads of every entry's script, changed or not (the pages' keys: summary, title,
# thumbnail number, requirements from the imports; the site's order and connections: title,
# aliases; the build's warnings, the bibliography, the prose language): a saved parse keeps
# them apart from the rest (its "body": the cells...), which is decoded only when asked for.
HEAD_FIELDS = frozenset({"summary", "title", "aliases", "bibliography", "thumbnail_number", "prose", "warnings",
                         "imports"})
_DECODER = json.JSONDecoder()


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def script_text(script: Script) -> str:
    """``script`` as the text :func:`saved_script` reads: its head fields (HEAD_FIELDS) as one
    JSON object, then the others as another (see :func:`script_data`; no requirements: they are
    looked up again)."""
    body = script_data(script)
    del body["requirements"]
    head = {name: body.pop(name) for name in HEAD_FIELDS if name in body}
    return _dumps(head) + _dumps(body)


def saved_script(text: str, local_dir: Path | str | None, parse: Callable[[], Script]) -> Script:
    """The Script :func:`script_text` gave (KeyError, TypeError or ValueError when the head is not
    one), its body decoded when a field of it is first asked for (``parse``: the script parsed
    again, should the body not be one); a parse written as one object (:func:`script_data`) whole."""
    head, end = _DECODER.raw_decode(text)
    if end == len(text):
        return script_from_data(head, local_dir)
    if not (isinstance(head, dict) and head.keys() <= HEAD_FIELDS):
        raise ValueError("not a saved script's head")
    values = {name: _HEAD_VALUE[name](value) for name, value in head.items()}
    values["requirements"] = requirements_of(values.get("imports", ()), local_dir)
    values["_saved"] = (text[end:], local_dir, parse)
    script = SavedScript.__new__(SavedScript)
    _set_in_order(script, _HEAD_ORDER, values, _HEAD_DEFAULTS)
    return script


def _set_in_order(script: SavedScript, names: tuple[str, ...], values: dict[str, Any], defaults: dict[str, Any]) -> None:
    """Set ``names`` of ``script`` to ``values`` (else ``defaults``), always in the same order, as
    dataclasses' frozen __init__ does: every SavedScript's attributes then share one table of
    names (a dictionary of its own each would add 0.5 KB an entry, 5 MB at 10,000 entries)."""
    for name in names:
        object.__setattr__(script, name, values[name] if name in values else defaults[name])


def _texts(items: list[Any]) -> tuple[str, ...]:
    return tuple(map(str, items))


_HEAD_VALUE: dict[str, Callable[[Any], Any]] = {
    "summary": str, "title": str, "prose": lambda prose: "rst" if prose == "rst" else "markdown",
    "thumbnail_number": lambda number: None if number is None else int(number),
    "aliases": _texts, "bibliography": _texts, "warnings": _texts, "imports": _texts,
}


class _InBody:
    """A field of a SavedScript that its saved parse's body holds: the body is decoded (and every
    such field set) the first time one is asked for."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, script: SavedScript | None, owner: type | None = None) -> Any:
        if script is None:
            return self
        script.decode()
        return getattr(script, self.name)  # set now: this class attribute no longer answers


class SavedScript(Script):
    """A Script read back from the last build's saved parse (:func:`saved_script`): the fields
    every rebuild reads at once, its cells and the rest when first asked for (most entries of a
    rebuild that changed one are planned, not rendered: their cells are never asked for)."""

    _saved: tuple[str, Path | str | None, Callable[[], Script]] | None = None  # the body, until decoded

    def decode(self) -> None:
        """Set the fields the body holds (once; no-op after)."""
        saved = self._saved  # one lookup: pages render in threads too
        if saved is None:
            return
        body, _, parse = saved
        try:
            data = json.loads(body)
            if not (isinstance(data, dict) and _BODY_REQUIRED <= data.keys() <= _BODY_DEFAULTS.keys() | _BODY_REQUIRED):
                raise ValueError("not a saved script's body")
            values = {"gallery_settings": {}, **_field_values(data)}  # a dictionary of its own
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError):
            whole = parse()  # the state is data: the same script (its key held), parsed again
            values = {name: getattr(whole, name) for name in _BODY_ORDER[:-1]}
        _set_in_order(self, _BODY_ORDER, {**values, "_saved": None}, _BODY_DEFAULTS)

    def __eq__(self, other: object) -> bool:
        # equal to the Script it stands for (a dataclass compares only objects of its own class)
        if not isinstance(other, Script):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(Script))

    __hash__ = Script.__hash__


# the head's fields in the order set (their defaults: summary has none, a head may leave it out)
_HEAD_ORDER = (*sorted(HEAD_FIELDS), "requirements", "_saved")
_HEAD_DEFAULTS = {**{name: _SCRIPT_DEFAULTS.get(name, "") for name in HEAD_FIELDS}}
# the body's fields: those with a default (a body leaves them out), those without (it always holds)
_BODY_DEFAULTS = {name: value for name, value in _SCRIPT_DEFAULTS.items() if name not in HEAD_FIELDS}
_BODY_REQUIRED = {f.name for f in fields(Script)} - HEAD_FIELDS - _BODY_DEFAULTS.keys() - {"requirements"}
_BODY_ORDER = (*sorted(_BODY_DEFAULTS.keys() | _BODY_REQUIRED), "_saved")
for _name in _BODY_ORDER[:-1]:
    setattr(SavedScript, _name, _InBody(_name))
# One SavedScript with every field set, in the order they are set, before any other: CPython adds
# a name to a class's shared table only while the class has made few instances (a rebuild makes
# ten thousand before it decodes a body), and a name that is not in it gives the instance a
# dictionary of its own (_set_in_order).
_set_in_order(SavedScript.__new__(SavedScript), (*_HEAD_ORDER, *_BODY_ORDER), {}, dict.fromkeys(_HEAD_ORDER + _BODY_ORDER))
