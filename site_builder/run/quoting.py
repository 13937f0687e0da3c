"""The parent's side of the values prose quotes: the job's expressions, and what the child sent back.

``job_expressions`` places each expression of the prose (``source.expressions``) after the
block of the run it follows (a block left out of the run: the one before it);
``quoted_values`` and ``glued_values`` turn the child's ``quoted`` and ``glue`` events into the
result's ``QuotedValue`` and ``GluedValue``; ``strict_failure`` is the entry's failure when
``strict_expressions`` is set and one raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from site_builder.run.results import Display, GluedValue, QuotedValue
from site_builder.source.parsed import Cell, Script
from site_builder.source.expressions.places import Expression, find_expressions


def job_expressions(script: Script, cells: Sequence[Cell], notebook: bool) -> tuple[tuple[Expression, ...],
                                                                                     list[dict[str, Any]]]:
    """The script's expressions, and each as the child gets it (``after``: an index into ``cells``,
    the running cells; ``block``: the name of the block it follows, "" : none)."""
    expressions = find_expressions(script, notebook)
    running = {id(cell): i for i, cell in enumerate(cells)}
    run_after: dict[int, int] = {}  # code cell index -> the index of the last running cell at or before it
    last = -1
    for k, cell in enumerate(script.code_cells):
        last = running.get(id(cell), last)
        run_after[k] = last
    code = script.code_cells
    job = [{"i": i, "code": e.code, "spec": e.spec, "line": e.line,
            "after": None if e.after is None else run_after.get(e.after, -1),
            "block": (cells[-1].name if cells else "") if e.after is None else
            (code[e.after].name if 0 <= e.after < len(code) else "")}
           for i, e in enumerate(expressions)]
    return expressions, job


def quoted_values(expressions: Sequence[Expression], job: Sequence[dict[str, Any]],
                  events: Sequence[dict[str, Any]], scrub: Callable[[str], str]) -> tuple[QuotedValue, ...]:
    """Each expression with what the child's ``quoted`` events say it gave (not evaluated: none)."""
    found: dict[int, dict[str, Any]] = {}
    for event in events:
        for value in event.get("values", ()):
            if isinstance(value, dict) and isinstance(value.get("i"), int):
                found[value["i"]] = value
    values = []
    for i, e in enumerate(expressions):
        got = found.get(i)
        base = QuotedValue(e.written, e.code, e.spec, e.after, e.line, e.place, e.export, block=job[i]["block"])
        if got is None:
            values.append(replace(base, evaluated=False))
            continue
        kind = got.get("kind") if got.get("kind") in ("text", "markdown", "latex", "image") else "text"
        files = got.get("files") if kind == "image" and isinstance(got.get("files"), dict) else {}
        files = {str(mime): str(path) for mime, path in files.items() if str(mime).startswith("image/")}
        kind = "text" if kind == "image" and not files else kind
        values.append(replace(base, text=scrub(str(got.get("text", ""))), kind=kind, type=str(got.get("type", "")),
                              error=scrub(str(got.get("error", ""))), files=files))
    return tuple(values)


def glued_values(events: Sequence[dict[str, Any]], cells: Sequence[Cell],
                 display: Callable[[dict[str, Any]], Display]) -> tuple[GluedValue, ...]:
    """What the child's ``glue`` events kept, in order (a name glued again: its last value)."""
    kept: dict[str, GluedValue] = {}
    for event in events:
        i = event.get("i")
        if isinstance(event.get("name"), str) and isinstance(i, int) and 0 <= i < len(cells):
            kept.pop(event["name"], None)
            kept[event["name"]] = GluedValue(event["name"], cells[i].name, display(event))
    return tuple(kept.values())


def strict_failure(entry: str, rel_path: str, place: Callable[[int], str], values: Sequence[QuotedValue]) -> str | None:
    """The entry's failure under ``strict_expressions``: the first expression that raised
    (``place``: a line's ``file:line``, an included file's own; source.entries.Entry.place)."""
    for value in values:
        if value.error:
            where = place(value.line) if value.line else rel_path
            where += f" ({value.place})" if value.place else ""
            return f"{entry}: the expression {value.code!r} ({where}) raised {value.error}"
    return None
