"""Cell options: Jupyter Book tags and Quarto ``#|`` options, read into what a cell shows and runs.

Every source format carries them: a notebook's cell metadata ``tags`` (and JupyterLab's
``jupyter.source_hidden`` / ``outputs_hidden``), a MyST ``:tags: [...]`` option, a percent
marker's ``tags=[...]``, and ``#| key: value`` lines at the top of a code cell (Quarto).
:func:`display_of` turns them into one :class:`CellDisplay`, which the run stage (whether the
cell runs) and the render stage (what the page shows) both read.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

# Jupyter Book's tags, and the two the builder had before (see run/runner.py).
KNOWN_TAGS = frozenset({
    "hide-input", "hide-output", "hide-cell", "remove-input", "remove-output", "remove-cell",
    "remove-stderr", "remove-stdout", "skip-execution", "raises-exception", "hide-value",
})
# Jupyter Book 0.x spelled them with underscores; they still appear in older books.
_TAG_ALIASES = {tag.replace("-", "_"): tag for tag in KNOWN_TAGS}
# Quarto's cell options the builder acts on.
KNOWN_OPTIONS = frozenset({
    "echo", "output", "eval", "include", "error", "code-fold", "code-summary", "fig-cap", "fig-alt", "label",
    "warning", "fig-width", "fig-height", "fig-subcap", "layout-ncol", "layout-nrow", "tbl-cap", "tbl-colwidths",
})
_FLAGS = ("echo", "output", "eval", "include", "error", "warning")
# "#| key: value" (Quarto's cell option comment), only in the cell's leading lines.
# The value ends possessively at its last non-blank (a lazy ".*?" before "\s*$" is quadratic in a blank run).
_OPTION_LINE = re.compile(r"^#\|\s*(?P<key>[A-Za-z][\w.-]*)\s*:\s*(?P<value>(?:\S(?:\s*+\S)*+)?)\s*$")
_FALSE = ("false", "no", "off")
_TRUE = ("true", "yes", "on")


@dataclass(frozen=True)
class CellDisplay:
    """What a code cell's options ask of the page and of the run."""

    code: Literal["show", "fold", "open", "remove"] = "show"  # open: folded control, shown at first
    output: Literal["show", "fold", "remove"] = "show"
    stdout: bool = True
    stderr: bool = True
    removed: bool = False  # remove-cell / include: false: nothing on the page (it still runs)
    runs: bool = True  # skip-execution / eval: false: shown, never run
    why_not_run: str = ""  # the option that stops it, for the page's note
    raises: bool = False  # raises-exception / error: true: an error is allowed, shown, and the run goes on
    summary: str = ""  # code-summary: the fold control's text ("" : the template's default)
    fig_cap: str = ""  # the caption of the cell's figures (numbered on the page)
    fig_alt: str = ""  # their alt text
    label: str = ""  # the anchor of its (first) figure, e.g. "fig-loss"
    fig_subcaps: tuple[str, ...] = ()  # fig-subcap: one caption per figure, "(a)", "(b)"... before each
    columns: int = 0  # layout-ncol: its figures side by side, so many a row (0: not set)
    rows: int = 0  # layout-nrow: its figures in so many rows (0: not set)
    table_caption: str = ""  # tbl-cap: the caption of its table output
    table_widths: tuple[float, ...] = ()  # tbl-colwidths: its tables' columns, in percent of the width
    figure_size: tuple[float | None, float | None] = (None, None)  # fig-width, fig-height (inches)


def canonical_tag(tag: str) -> str:
    """``tag`` as the builder knows it (underscore spellings folded), else unchanged."""
    return _TAG_ALIASES.get(tag, tag)


def split_options(lines: list[str]) -> tuple[tuple[tuple[str, str], ...], int]:
    """The ``#|`` options at the top of a cell's ``lines`` and how many lines they take."""
    found: list[tuple[str, str]] = []
    count = 0
    for line in lines:
        match = _OPTION_LINE.match(line.strip()) if line.lstrip().startswith("#|") else None
        if match is None:
            break
        found.append((match.group("key"), _unquote(match.group("value"))))
        count += 1
    return tuple(found), count


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def problems(tags: tuple[str, ...], options: tuple[tuple[str, str], ...]) -> list[str]:
    """One phrase per tag or option the builder does not know or cannot read (for a warning)."""
    found = [f"unknown cell tag {t!r}" for t in tags if canonical_tag(t) not in KNOWN_TAGS]
    for key, value in options:
        if key not in KNOWN_OPTIONS:
            found.append(f"unknown cell option '#| {key}'")
        elif key in _FLAGS and value.lower() not in (*_TRUE, *_FALSE):
            found.append(f"'#| {key}: {value}' should be true or false")
        elif key == "code-fold" and value.lower() not in (*_TRUE, *_FALSE, "show"):
            found.append(f"'#| code-fold: {value}' should be true, false or show")
        elif key in ("fig-width", "fig-height", "layout-ncol", "layout-nrow") and _number(value) is None:
            found.append(f"'#| {key}: {value}' should be a positive number")
        elif key == "tbl-colwidths" and value.lower() not in (*_TRUE, *_FALSE, "auto") and not column_widths(value):
            found.append(f"'#| {key}: {value}' should be a list of percentages ([25, 75]), true, false or auto")
    if found:
        found[-1] += (f" (known tags: {', '.join(sorted(KNOWN_TAGS))}; "
                      f"known #| options: {', '.join(sorted(KNOWN_OPTIONS))})")
    return found


def display_of(tags: tuple[str, ...], options: tuple[tuple[str, str], ...]) -> CellDisplay:
    """The CellDisplay of a cell with these tags and ``#|`` options (later options win)."""
    try:  # most cells of a site have the same few option sets: each page asks again for every cell
        return _cached_display(tuple(tags), tuple(options))
    except TypeError:  # an unhashable item (a list where a pair goes): not cached
        return _display(tags, options)


def _display(tags: tuple[str, ...], options: tuple[tuple[str, str], ...]) -> CellDisplay:
    known = {canonical_tag(t) for t in tags}
    opts = {key: value.lower() if key in (*_FLAGS, "code-fold") else value for key, value in options}
    code: Literal["show", "fold", "open", "remove"] = "show"
    output: Literal["show", "fold", "remove"] = "show"
    if known & {"hide-input", "hide-cell"} or opts.get("code-fold") in _TRUE:
        code = "fold"
    elif opts.get("code-fold") == "show":
        code = "open"
    if known & {"hide-output", "hide-cell"}:
        output = "fold"
    if "remove-input" in known or opts.get("echo") in _FALSE:
        code = "remove"
    if "remove-output" in known or opts.get("output") in _FALSE:
        output = "remove"
    removed = "remove-cell" in known or opts.get("include") in _FALSE
    why = ("tagged skip-execution" if "skip-execution" in known
           else "#| eval: false" if opts.get("eval") in _FALSE else "")
    return CellDisplay(
        code=code, output=output, stdout="remove-stdout" not in known,
        stderr="remove-stderr" not in known and opts.get("warning") not in _FALSE,
        removed=removed, runs=not why, why_not_run=why, raises="raises-exception" in known or opts.get("error") in _TRUE,
        summary=opts.get("code-summary", ""), fig_cap=opts.get("fig-cap", ""),
        fig_alt=opts.get("fig-alt", ""), label=opts.get("label", ""),
        fig_subcaps=_texts(opts.get("fig-subcap", "")),
        columns=_whole(opts.get("layout-ncol", "")), rows=_whole(opts.get("layout-nrow", "")),
        table_caption=opts.get("tbl-cap", ""), table_widths=column_widths(opts.get("tbl-colwidths", "")),
        figure_size=(_number(opts.get("fig-width", "")), _number(opts.get("fig-height", ""))),
    )


_cached_display = functools.lru_cache(maxsize=512)(_display)  # CellDisplay is frozen: safe to share


def _number(value: str) -> float | None:
    """A positive number's value (``7``, ``3.5``), None for anything else."""
    try:
        number = float(value)
    except ValueError:
        return None
    return number if 0 < number < 1e4 else None


def _texts(value: str) -> tuple[str, ...]:
    """A list option's items: a JSON/YAML flow list (``["A", "B"]``), else the one text."""
    if not value.startswith("["):
        return (value,) if value else ()
    import json

    try:
        items = json.loads(value)
    except ValueError:
        return (value,)
    return tuple(str(v) for v in items if v is not None) if isinstance(items, list) else (value,)


def column_widths(value: str) -> tuple[float, ...]:
    """Quarto's ``tbl-colwidths: [25, 75]`` as percentages of the table's width (scaled down when
    they add up to more than 100); () for ``true``, ``false``, ``auto`` (the browser's widths) or
    what is no list of positive numbers."""
    items = _texts(value) if value.startswith("[") else ()
    widths = tuple(n for n in (_number(str(v)) for v in items) if n is not None)
    if not widths or len(widths) != len(items):
        return ()
    total = sum(widths)
    return tuple(round(w * 100 / total, 2) for w in widths) if total > 100 else widths


def _whole(value: str) -> int:
    """A layout count (``2``), 0 for anything else."""
    number = _number(value)
    return int(number) if number and number == int(number) else 0
