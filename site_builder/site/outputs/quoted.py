"""What a page's prose quotes from the run: its expressions' values, and what glue() kept.

The prose (``prose/quoting.py``) looks a value up by its place and text; glued values
by entry ("" : the page's own) and name, each with the URL of its image when it has one that
the page publishes (another entry's: its text, Markdown or math).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
import re
from typing import Any

from site_builder.run.results import Display, GluedValue, QuotedValue

_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")


def quoted_by_place(values: Iterable[QuotedValue]) -> dict[tuple[int | None, str], QuotedValue]:
    """The prose's values by (place, text as written)."""
    return {(v.after, v.written): v for v in values if not v.export or v.line}


_IN_SUMMARY = re.compile(r"\{eval\}`(?P<role>[^`]+)`|(?<!`)`(?P<quarto>\{python\}\s[^`]+)`(?!`)")


def summary_with_values(summary: str, values: Iterable[QuotedValue]) -> str:
    """A one-line summary (plain text) with its inline expressions replaced by their values'
    text (one that raised, or was never reached, stays as written)."""
    found = {v.written: v for v in values if v.after is None}

    def value(match: re.Match[str]) -> str:
        got = found.get(match.group("role") or match.group("quarto"))
        return got.text if got is not None and got.evaluated and not got.error else match.group(0)

    return _IN_SUMMARY.sub(value, summary) if "eval}" in summary or "{python}" in summary else summary


def page_glue(own: Iterable[GluedValue], others: Mapping[str, Iterable[GluedValue]],
              publish: Callable[[str], str | None]) -> dict[str, dict[str, tuple[Display, str | None]]]:
    """Glued values by entry ("" : this page's, its images published with it) and name."""
    found: dict[str, dict[str, tuple[Display, str | None]]] = {
        entry: {g.name: (g.display, None) for g in values} for entry, values in others.items()}
    found[""] = {g.name: (g.display, _image(g.display, publish)) for g in own}
    return found


def _image(display: Display, publish: Callable[[str], Any]) -> str | None:
    for mime in _IMAGES:
        if mime in display.files:
            return publish(display.files[mime])
    return None
