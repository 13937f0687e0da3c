"""What running a demo produces, as plain dataclasses: blocks' output, values, files, errors.

Made by ``execute`` (and read back from records by ``records``); the other stages import
them from here or through ``execute``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from site_builder.run.child.protocol import Outcome
from site_builder.run.name_refs import NameRef

Stream = Literal["stdout", "stderr", "display"]



@dataclass(frozen=True)
class Display:
    """A rich output: a block's value, or one ``display()`` call, with every MIME type it had.

    The record keeps it as ``{"data": {MIME: lines}, "files": {MIME: path}, "omitted": {MIME: bytes}}``:
    ``data`` holds the text types (text/plain, text/html, text/markdown, text/latex, ...) and the
    JSON types (application/json, application/vnd.plotly.v1+json: JSON text); ``files`` the binary
    types and image/svg+xml, as the path of a file of the block (an Artifact of kind "display");
    ``omitted`` the types left out because they were over ``display_limit``, with their size.
    Everything is untrusted: render sanitises HTML and shows SVG only as an image file.
    """

    data: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    omitted: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """Its text/plain form ("" when it has none)."""
        return self.data.get("text/plain", "")

    @property
    def html(self) -> str | None:
        """Its text/html form, unsanitised, or None."""
        return self.data.get("text/html")


@dataclass(frozen=True)
class OutputChunk:
    """A run of text one block wrote to one stream, in the order it was written; or, with
    stream "display", one ``display()`` output (``text`` is then its text/plain form)."""

    stream: Stream
    text: str
    display: Display | None = None


@dataclass(frozen=True)
class Artifact:
    """A file a block produced: an open Matplotlib figure the builder saved, or a file it wrote."""

    path: str  # POSIX path relative to the run's files folder (figures: under BUILDER_DIR)
    # image = picture the demo wrote itself; display = a file of a Display (shown with it);
    # animation = a figure's animation (MP4, WebP or PNG), after the figure: its poster frame
    kind: Literal["figure", "image", "file", "display", "animation"]
    size: int  # bytes
    alt: str = ""  # figures: text from the figure's titles and axis labels
    width: int | None = None  # display size in CSS pixels, when known (images, figures)
    height: int | None = None


@dataclass(frozen=True)
class BlockError:
    """Why a block did not finish normally."""

    type: str  # exception class name, "Timeout", "Crash", "SystemExit"
    message: str  # one line
    line: int | None  # line in the script where it happened, when known
    traceback: str  # formatted traceback, the script's own frames only ("" when none)


@dataclass(frozen=True)
class BlockResult:
    """What one block did when it ran."""

    name: str
    status: Outcome  # how the block ended (child/protocol.py)
    duration: float  # seconds, 0.0 when not run
    output: tuple[OutputChunk, ...] = ()
    omitted_lines: int = 0  # lines left out of ``output`` because the block printed too much
    omitted_bytes: int = 0
    full_output: str | None = None  # artifact path of the complete output when truncated
    omitted_at: int | None = None  # when truncated: index in ``output`` where the cut is
    error: BlockError | None = None
    artifacts: tuple[Artifact, ...] = ()
    value: Display | None = None  # the value of its last expression, when it has one worth showing
    names: tuple[NameRef, ...] = ()  # what its names denoted when it ran, in the order of the code


@dataclass(frozen=True)
class QuotedValue:
    """A value the prose quotes (an inline expression) or the entry exports, as its run gave it."""

    written: str  # as the prose has it (the page finds it by ``written`` and ``after``)
    code: str  # the Python expression
    spec: str  # its format spec ("" : none)
    after: int | None  # the code cell it was evaluated after (Script.code_cells); -1: before any; None: the run
    line: int  # 1-based line in the entry's source (0: not known)
    place: str = ""  # "cell 3" of a .ipynb, whose lines are the cell's
    export: str = ""  # the name it is exported under ("" : only quoted)
    text: str = ""  # the value as text (what the page shows)
    # markdown, latex: its _repr_markdown_/_repr_latex_; image: its text says nothing, its image
    # (a Matplotlib figure) is in ``files`` (MIME type -> a display file of ``block``), ``text`` says what it shows
    kind: Literal["text", "markdown", "latex", "image"] = "text"
    type: str = ""  # the value's type ("float", "numpy.float64")
    error: str = ""  # "NameError: name 'x' is not defined"; "" : it was evaluated
    block: str = ""  # the block it was evaluated after ("" : before any block)
    evaluated: bool = True  # False: the run never reached its place
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GluedValue:
    """A value MyST-NB's ``glue(name, value)`` kept: its MIME bundle, pasted where prose names it."""

    name: str
    block: str  # the block that glued it
    display: Display


@dataclass(frozen=True)
class Verdict:
    """What ``check`` found about a record: whether runs of the same code, inputs and environment
    agreed on every printed line, value and quoted expression (the evidence the page may cite)."""

    runs: int  # runs compared: check's own, and the record's when its environment is the same
    date: str  # the day of the check, UTC ("2026-12-02")
    fingerprint: str  # sha256 of the record's inputs and environment it applies to
    agreed: bool
    differed: tuple[str, ...] = ()  # the blocks (and "values quoted in the page") that differed


@dataclass(frozen=True)
class RunOptions:
    """Everything that can change how a demo runs (part of the cache key)."""

    timeout: float = 600.0  # seconds for the whole demo
    output_limit: int = 200_000  # bytes of output kept per block before head/tail cut
    project_root: Path = field(default_factory=Path.cwd)
    figure_scale: float = 2.0  # pixels per CSS pixel of the figures saved (Config.figure_scale)
    display_limit: int = 5_000_000  # bytes of one representation of a value or display output kept
    animation_frames: int = 300  # frames of a Matplotlib animation kept
    animation_size: int = 20_000_000  # bytes of an animation's file kept
    strict_expressions: bool = False  # an inline expression that raises fails the entry


@dataclass(frozen=True)
class RunResult:
    """Everything one run of a demo produced."""

    entry: str
    blocks: tuple[BlockResult, ...]  # one per code cell, in order
    failure: str | None  # one-line message naming entry, block and line; None when ok
    duration: float  # seconds, whole run
    started_at: float  # Unix time the run started
    files_dir: Path  # folder holding the artifacts (demo-written files at their paths)
    environment: dict[str, str] = field(default_factory=dict)  # python, platform, packages, blas
    reads: tuple[str, ...] = ()  # project-relative paths of files the demo read (data, modules)
    shown_only: bool = False  # the run_pattern setting leaves the entry out: never run
    quoted: tuple[QuotedValue, ...] = ()  # the prose's inline expressions and the exported names
    glued: tuple[GluedValue, ...] = ()  # what glue() kept, in the order it was glued
    verdict: Verdict | None = None  # what ``check`` found about this record (None: never checked)

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class BlockEvent:
    """A block of a running demo started or ended (for progress displays)."""

    entry: str
    block: str
    kind: Literal["start", "end"]
    status: Outcome | None = None  # "end" only
    duration: float | None = None  # "end" only: seconds the block ran


# Called from the event-reader thread of each running demo: implementations must lock.


@dataclass(frozen=True)
class ResultRow:
    """What the rebuild state keeps of a good result besides its record: what the build's summary,
    its new state and the page keys take of it (the pages themselves read the record)."""

    duration: float  # seconds, whole run
    blocks_run: int
    blocks_total: int
    glued: str  # glued_key of the result: "" when its glue() kept nothing
    packages: tuple[str, ...]  # the distributions its environment lists
    reads: tuple[str, ...]  # project-relative paths of files the demo read


def glued_key(result: RunResult) -> str:
    """What another page pasting from ``result``'s glued values depends on ("" when there are none)."""
    return repr(result.glued) if result.glued else ""


def result_row(result: RunResult) -> ResultRow | None:
    """``result``'s row (None for a failed or shown-only result, which the state never trusts)."""
    if result.failure is not None or result.shown_only:
        return None
    listed = sorted(result.environment)  # packages (plus python/platform/blas: harmless)
    return ResultRow(result.duration, sum(b.status != "not-run" for b in result.blocks), len(result.blocks),
                     glued_key(result), tuple(d for d in listed if d not in ("python", "platform", "blas")),
                     tuple(result.reads))


class LazyResult:
    """A good result whose record the build trusts, read only when something needs more of it than
    its ``row`` (a page showing it, the site-wide pages): a rebuild of a large site where one entry
    changed reads no other record."""

    failure = None  # rows are kept of good results only
    shown_only = False

    def __init__(self, entry: str, row: ResultRow, load: Callable[[], RunResult]) -> None:
        self.entry, self.row, self._load = entry, row, load
        self._result: RunResult | None = None
        self._lock = threading.Lock()  # pages may render from the pool's threads

    @property
    def duration(self) -> float:
        return self.row.duration

    def result(self) -> RunResult:
        """The result, read from its record the first time it is asked for."""
        with self._lock:
            if self._result is None:
                self._result = self._load()
            return self._result
