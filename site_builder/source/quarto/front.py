"""A Quarto document's YAML front matter: what its page shows above the prose, and its cells' defaults.

``title``, ``subtitle``, ``author`` (a string, a list, or objects with ``name``), ``date``
(a date, ``today``, ``now`` or ``last-modified``: the file's modification day, as Quarto has
it), ``description``, ``abstract``, ``bibliography``; ``execute:`` (``echo``, ``eval``,
``output``, ``warning``, ``error``, ``include``) and ``code-fold``/``code-summary``/``tbl-colwidths`` (at the top
or under ``format: html:``) are every cell's options unless a cell's ``#|`` line says otherwise.
``engine: knitr`` or a ``jupyter:`` kernel of another language cannot run here: an error.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from site_builder.errors import ParseError

# The execute options a document may set for all its cells (Quarto's "execute:" mapping).
EXECUTE_KEYS = ("echo", "eval", "output", "warning", "error", "include")
# Format options that are cell options too (Quarto reads them at the top or under format: html:).
FORMAT_KEYS = ("code-fold", "code-summary", "tbl-colwidths")
_PYTHON_KERNELS = ("python", "python3", "ipython", "ipython3", "py", "xpython")


@dataclass(frozen=True)
class FrontMatter:
    """What a ``.qmd``'s front matter says, as the page and the cells read it."""

    title: str = ""
    subtitle: str = ""
    authors: tuple[str, ...] = ()
    date: str = ""  # as the page shows it ("March 5, 2024"), "" when none
    description: str = ""
    abstract: str = ""  # Markdown
    bibliography: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    defaults: tuple[tuple[str, str], ...] = ()  # every cell's options, before its own "#|" lines
    warnings: tuple[str, ...] = ()


def read_front(data: dict[str, Any], where: str, modified: Callable[[], dt.date | None]) -> FrontMatter:
    """The FrontMatter of the mapping ``data``; ``modified``: the file's last modification day
    (``date: last-modified``). ParseError when the document cannot run here."""
    engine = data.get("engine")
    if isinstance(engine, str) and engine.strip().lower() not in ("jupyter", "markdown"):
        raise ParseError(f"{where}:1: 'engine: {engine}' runs its cells with another program; only "
                         "Python cells (the jupyter engine) can be built")
    kernel = data.get("jupyter")
    name = kernel.get("kernelspec", {}).get("name") if isinstance(kernel, dict) and isinstance(
        kernel.get("kernelspec"), dict) else kernel
    if isinstance(name, str) and name.strip().lower().split("-")[0] not in _PYTHON_KERNELS:
        raise ParseError(f"{where}:1: 'jupyter: {name}' is a kernel of another language; only Python "
                         "documents can be built")
    problems: list[str] = []
    defaults: list[tuple[str, str]] = []
    html = data.get("format", {}).get("html") if isinstance(data.get("format"), dict) else None
    for source in (data, html if isinstance(html, dict) else {}):
        defaults += [(k, _option(source[k])) for k in FORMAT_KEYS if k in source and _option(source[k])]
    execute = data.get("execute")
    if isinstance(execute, dict):
        for key, value in execute.items():
            if key in EXECUTE_KEYS:
                defaults.append((key, _option(value)))
            elif key not in ("freeze", "cache", "enabled", "daemon", "ipynb"):
                problems.append(f"{where}:1: 'execute: {key}' is not read here "
                                f"(known: {', '.join(EXECUTE_KEYS)})")
    return FrontMatter(
        title=_text(data.get("title")), subtitle=_text(data.get("subtitle")),
        authors=_authors(data.get("author", data.get("authors"))),
        date=_date(data.get("date"), modified), description=_text(data.get("description")),
        abstract=data["abstract"].strip() if isinstance(data.get("abstract"), str) else "",
        bibliography=_names(data.get("bibliography")), aliases=_names(data.get("aliases")),
        defaults=tuple(defaults), warnings=tuple(problems),
    )


def _option(value: object) -> str:
    """A YAML value as a ``#|`` option's text (``echo: fenced`` shows the code: true; a list as JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value, default=str)
    text = str(value).strip() if isinstance(value, (str, int, float)) else ""
    return "true" if text.lower() in ("fenced", "asis") else text


def _text(value: object) -> str:
    return " ".join(str(value).split()) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else ""


def _names(value: object) -> tuple[str, ...]:
    values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(dict.fromkeys(_text(v) for v in values if _text(v)))


def _authors(value: object) -> tuple[str, ...]:
    """Authors as names: ``author: A``, ``[A, B]``, ``[{name: A}, {name: {given: B, family: C}}]``."""
    found = []
    for item in value if isinstance(value, list) else [value]:
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(name, dict):
            name = name.get("literal") or " ".join(_text(name.get(k)) for k in ("given", "family") if name.get(k))
        if _text(name):
            found.append(_text(name))
    return tuple(found)


def _date(value: object, modified: Callable[[], dt.date | None]) -> str:
    """A date as the page shows it (Quarto's default, "March 5, 2024"); other text as written."""
    if isinstance(value, str) and value.strip().lower() in ("today", "now", "last-modified"):
        value = dt.date.today() if value.strip().lower() != "last-modified" else modified()
    elif isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return _text(value)
    if isinstance(value, dt.date):
        return f"{value:%B} {value.day}, {value.year}"
    return _text(value)
