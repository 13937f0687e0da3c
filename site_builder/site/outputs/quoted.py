"""What a page's prose quotes from the run: its expressions' values, and what glue() kept.

The prose (``prose/quoting.py``) looks a value up by its place and text; glued values
by entry ("" : the page's own) and name, each shown in its richest safe form as a block's
value is (``displays``): HTML sanitised, images published beside the page, another entry's too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from site_builder.run.execute import RunResult
from site_builder.run.results import Display, QuotedValue
from site_builder.site.outputs.displays import DisplayView, PageAssets, display_view
from site_builder.site.outputs.published import FilePublisher


def quoted_by_place(values: Iterable[QuotedValue]) -> dict[tuple[int | None, str], QuotedValue]:
    """The prose's values by (place, text as written)."""
    return {(v.after, v.written): v for v in values if not v.export or v.line}


V = TypeVar("V")

_IN_SUMMARY = re.compile(r"\{eval\}`(?P<role>[^`]+)`|(?<!`)`(?P<quarto>\{python\}\s[^`]+)`(?!`)")


def summary_with_values(summary: str, values: Iterable[QuotedValue]) -> str:
    """A one-line summary (plain text) with its inline expressions replaced by their values'
    text (one that raised, or was never reached, stays as written)."""
    found = {v.written: v for v in values if v.after is None}

    def value(match: re.Match[str]) -> str:
        got = found.get(match.group("role") or match.group("quarto"))
        return got.text if got is not None and got.evaluated and not got.error else match.group(0)

    return _IN_SUMMARY.sub(value, summary) if "eval}" in summary or "{python}" in summary else summary


@dataclass(frozen=True)
class Pasted:
    """A glued value as a page pastes it: its bundle, and its richest safe form on the page
    (``view()``, made when pasted: its files are published, its CSS kept, only then)."""

    display: Display
    view: Callable[[], DisplayView]


class LazyMapping(Mapping[str, V]):
    """``keys`` -> ``get(key)``, each value made only when asked for (a run's record is read only
    by a page that needs it): the glued values of the entries, the runs that glued some."""

    def __init__(self, keys: Iterable[str], get: Callable[[str], V]) -> None:
        self._keys, self._get = dict.fromkeys(keys), get  # in order, looked up in constant time

    def __getitem__(self, key: str) -> V:
        if key not in self._keys:
            raise KeyError(key)
        return self._get(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def run_values(result: RunResult, others: Mapping[str, RunResult], files: FilePublisher, assets: PageAssets
               ) -> tuple[Callable[[Display], DisplayView], Mapping[str, dict[str, Pasted]]]:
    """What a page's prose pastes of the runs: ``show`` (a Display of this page's run -> its view,
    as a block's value shows: HTML sanitised, images published beside the page) and the glued
    values by entry ("" : this page's; another's images are published with this page) and name."""

    @functools.cache
    def shower(entry: str) -> Callable[[Display], DisplayView]:
        run = others[entry] if entry else result
        publish, sizes = files.of(run.files_dir, entry), display_sizes(run)
        return lambda display: display_view(display, publish, sizes, assets)

    def pasted(entry: str, display: Display) -> Pasted:
        return Pasted(display, lambda: shower(entry)(display))

    def glued_of(entry: str) -> dict[str, Pasted]:
        return {g.name: pasted(entry, g.display) for g in (others[entry] if entry else result).glued}

    return shower(""), LazyMapping(sorted(["", *(e for e in others if e != result.entry)]), functools.cache(glued_of))


def display_sizes(result: RunResult) -> dict[str, tuple[int | None, int | None]]:
    """The shown size (width, height) of each image file the run's displays wrote, by path."""
    return {a.path: (a.width, a.height) for b in result.blocks for a in b.artifacts if a.kind == "display"}
