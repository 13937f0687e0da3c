"""Read stage for notebooks: a file's text -> an nbformat 4 notebook the parser can trust.

An ``.ipynb`` is read as Jupyter reads it (nbformat 1-3 upgraded to 4); a Markdown notebook
with jupytext, after its YAML is checked for aliases (syntax.yaml_guard).  Either is then validated
against nbformat's schema (extra keys tolerated, as Jupyter opens such notebooks) and the
metadata the builder reads must have the types it reads.  Every problem is one ParseError
line naming the entry, the file, where in the notebook and what is wrong.
"""

from __future__ import annotations

import json
import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from site_builder.errors import ParseError
from site_builder.source.syntax.yaml_guard import check_markdown_yaml

# The front matter's "kernelspec:" key and a child line "  name: python3" right under it.
_KERNELSPEC_NAME = re.compile(r"^(?P<head>kernelspec:[ \t]*\n)(?P<indent>[ \t]+)name:[ \t]*(?P<name>\S[^\n]*)\n",
                              re.MULTILINE)
# The notebook-level metadata keys of nbformat's schema (a cell's metadata has others).
_NOTEBOOK_KEYS = ("kernelspec", "language_info", "orig_nbformat", "title", "authors")
_TYPE_NAMES = {"string": "a string", "array": "a list", "object": "a mapping", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "null": "null"}


def read_notebook(source: str, rel_path: str, entry: str) -> Any:
    """The nbformat 4 notebook (a NotebookNode) in ``source``; ParseError when it is not a valid one."""
    where = f"{entry}: {rel_path}"
    with _quiet_nbformat():
        if rel_path.lower().endswith(".ipynb"):
            notebook, checked = _read_ipynb(source, where)
        else:
            check_markdown_yaml(source, where)
            notebook, checked = _read_markdown(source, where), False
        problem = None if checked else schema_problem(notebook)
    if problem:
        raise ParseError(f"{where} is not a valid notebook: {problem}")
    return notebook


@contextmanager
def _quiet_nbformat() -> Iterator[None]:
    """nbformat logs schema complaints through traitlets' logger, and warns: the build's own
    check speaks instead, once, as an error."""
    quiet = logging.getLogger("traitlets")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        quiet.setLevel(level)


def _read_ipynb(source: str, where: str) -> tuple[Any, bool]:
    """The notebook in ``source``, and whether it was checked against the schema already: an
    nbformat 4 notebook is, before nbformat reads it (its reader only joins a source's lines and
    drops transient keys, which keeps a valid notebook valid); an upgraded one is not yet."""
    import nbformat

    if not source.strip():
        raise ParseError(f"{where} is empty: a notebook is a JSON object (nbformat 4)")
    try:
        data = json.loads(source)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{where} is not a notebook: not JSON ({exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno})") from None
    except RecursionError:
        raise ParseError(f"{where} is not a notebook: its JSON nests too deep") from None
    if not isinstance(data, dict):
        raise ParseError(f"{where} is not a notebook: its JSON is {_kind(data)}, not an object")
    major = data.get("nbformat")
    if type(major) is not int or not 1 <= major <= 4:
        raise ParseError(f"{where} is not a notebook: 'nbformat' is {_shown(major)}, not 1 to 4 "
                         "(the notebook format's major version)")
    problem = schema_problem(data) if major == 4 else None  # before nbformat's reader trips on it
    if problem:
        raise ParseError(f"{where} is not a valid notebook: {problem}")
    try:  # nbformat.reads, without its parse of the JSON and its validation: both are done here
        notebook = nbformat.versions[major].to_notebook_json(data, minor=data.get("nbformat_minor", 0))
        return nbformat.convert(notebook, 4), major == 4  # upgrades nbformat 1-3 as Jupyter does
    except Exception as exc:  # a malformed old notebook breaks nbformat's upgrade in many ways
        raise ParseError(f"{where} is an nbformat {major} notebook that cannot be upgraded to "
                         f"nbformat 4: {_first_line(exc)}") from None


def _read_markdown(source: str, where: str) -> Any:
    import jupytext

    try:
        try:
            return jupytext.reads(source, fmt=".md")
        except Exception as exc:
            named = _with_kernel_display_name(source) if "display_name" in str(exc) else None
            if named is None:
                raise
            return jupytext.reads(named, fmt=".md")
    except RecursionError:
        raise ParseError(f"{where} cannot be read as a notebook: it nests too deep") from None
    except Exception as exc:  # jupytext, PyYAML and nbformat raise many kinds: all mean "not a notebook"
        original = getattr(exc, "original", exc)  # nbformat's validation error wraps jsonschema's
        if hasattr(original, "validator") and hasattr(original, "absolute_path"):
            path = list(original.absolute_path)  # jupytext validates each cell, and the front matter
            whose = "" if path[:1] == ["metadata"] and path[1:2] and path[1] in _NOTEBOOK_KEYS else "a cell's "
            raise ParseError(f"{where} is not a valid notebook: {whose}{_describe(original)}") from None
        raise ParseError(f"{where} cannot be read as a notebook: {_first_line(exc)}") from None


def _with_kernel_display_name(source: str) -> str | None:
    """``source`` with a ``display_name`` added to its front matter's kernelspec (MyST-NB reads
    ``kernelspec: {name: python3}`` alone; nbformat's schema, hence jupytext, refuses it)."""
    front_end = source.find("\n---", 3)
    match = _KERNELSPEC_NAME.search(source, 0, front_end + 1) if source.startswith("---") and front_end > 0 else None
    if match is None:
        return None
    cut = match.end("head")
    return f"{source[:cut]}{match['indent']}display_name: {match['name']}\n{source[cut:]}"


def schema_problem(notebook: Any) -> str | None:
    """What makes ``notebook`` (nbformat 4) invalid, as a phrase naming where; None when it is valid."""
    from nbformat.validator import get_validator

    minor = notebook.get("nbformat_minor")
    minor = minor if type(minor) is int and minor >= 0 else None
    fast = get_validator(version=4, version_minor=minor, relax_add_props=True, name="fastjsonschema")
    try:
        fast.validate(notebook)  # compiled: a 100,000-cell notebook in a fraction of a second
    except Exception:
        slow = get_validator(version=4, version_minor=minor, relax_add_props=True, name="jsonschema")
        error = next(iter(slow.iter_errors(notebook)), None)
        if error is not None:
            return _describe(error)
    kernel = notebook["metadata"].get("kernelspec")
    language = kernel.get("language") if isinstance(kernel, dict) else None
    if language is not None and not isinstance(language, str):  # the schema leaves it open; we read it
        return f"metadata.kernelspec.language must be a string, not {_shown(language)}"
    return None


def _describe(error: Any) -> str:
    """A jsonschema error as "where: what is wrong", inside the cell type the cell says it is."""
    error = _innermost(error)
    path = list(error.absolute_path)
    if error.validator == "required":
        missing = re.match(r"'([^']*)'", error.message)
        what = f"'{missing.group(1) if missing else error.message}' is missing"
    elif error.validator == "type":
        expected = error.validator_value
        names = [_TYPE_NAMES.get(t, t) for t in (expected if isinstance(expected, list) else [expected])]
        what = f"must be {' or '.join(names)}, not {_shown(error.instance)}"
    elif error.validator == "enum":
        what = f"must be one of {', '.join(map(str, error.validator_value))}, not {_shown(error.instance)}"
    elif error.validator in ("oneOf", "anyOf"):
        accepted = dict.fromkeys(_expected(s) for s in error.validator_value)
        what = f"must be {' or '.join(accepted)}, not {_shown(error.instance)}"
    else:
        what = _first_line(error.message)
    where = _where(path)
    if error.validator == "required":
        return f"{where}: {what}" if where else what
    return f"{where or 'the notebook'} {what}" if what.startswith("must") else f"{where}: {what}" if where else what


def _innermost(error: Any) -> Any:
    """Into a oneOf's branches: the one for the type the cell (or output) names, its deepest error."""
    while error.context:
        branches: dict[Any, list[Any]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        fitting = [b for b in branches.values() if not any(_other_type(e) for e in b)]
        if len(fitting) != 1:  # it names no type (or is no mapping at all): say that
            missing = [e for e in error.context if e.validator == "required"
                       and re.match(r"'(cell_type|output_type)'", e.message)]
            return missing[0] if missing else error
        error = max(fitting[0], key=lambda e: len(e.absolute_path))
    return error


def _other_type(error: Any) -> bool:
    """True for the error of a branch made for another cell (or output) type than the value's."""
    return error.validator in ("enum", "const") and bool(error.path) and error.path[-1] in ("cell_type", "output_type")


def _expected(schema: Any) -> str:
    """What a sub-schema accepts, in words ("a string", "a list of strings")."""
    if isinstance(schema, dict) and "$ref" in schema:
        return "a mapping"  # the schema's oneOf references are cells and outputs
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "array" and isinstance(schema.get("items"), dict) and schema["items"].get("type") in _TYPE_NAMES:
        return f"a list of {_TYPE_NAMES[schema['items']['type']].removeprefix('a ')}s"
    return _TYPE_NAMES.get(kind, "a valid value") if isinstance(kind, str) else "a valid value"


def _where(path: list[Any]) -> str:
    """``['cells', 1, 'metadata', 'tags', 0]`` -> "cell 2: metadata.tags[0]"."""
    head = ""
    if len(path) >= 2 and path[0] == "cells" and isinstance(path[1], int):
        head, path = f"cell {path[1] + 1}", path[2:]
    dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return f"{head}: {dotted}" if head and dotted else head or dotted


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "true or false", type(None): "null"}.get(type(value), "a number")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _first_line(exc: BaseException | str) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
