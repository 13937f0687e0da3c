"""Execute stage (parent side): run one demo in a fresh child process, block by block.

The child runs ``runner.py`` (standard library only); this module starts it, feeds it
the blocks, reads its per-block events, enforces the timeout and turns what happened
into a :class:`RunResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

from site_builder.blocks import Script
from site_builder.entries import Entry

Stream = Literal["stdout", "stderr"]
BlockStatus = Literal["ok", "error", "expected-error", "not-run", "timeout", "crashed", "exited"]

# Files the builder itself makes inside a run's folder (figures, complete outputs) live
# under this sub-folder, so they can never be mistaken for files the demo wrote.
BUILDER_DIR = "_site_builder"


@dataclass(frozen=True)
class OutputChunk:
    """A run of text one block wrote to one stream, in the order it was written."""

    stream: Stream
    text: str


@dataclass(frozen=True)
class Artifact:
    """A file a block produced: an open Matplotlib figure the builder saved, or a file it wrote."""

    path: str  # POSIX path relative to the run's files folder (figures: under BUILDER_DIR)
    kind: Literal["figure", "image", "file"]  # image = picture the demo wrote itself
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
    status: BlockStatus
    duration: float  # seconds, 0.0 when not run
    output: tuple[OutputChunk, ...] = ()
    omitted_lines: int = 0  # lines left out of ``output`` because the block printed too much
    omitted_bytes: int = 0
    full_output: str | None = None  # artifact path of the complete output when truncated
    error: BlockError | None = None
    artifacts: tuple[Artifact, ...] = ()


@dataclass(frozen=True)
class RunOptions:
    """Everything that can change how a demo runs (part of the cache key)."""

    timeout: float = 600.0  # seconds for the whole demo
    output_limit: int = 200_000  # bytes of output kept per block before head/tail cut
    project_root: Path = field(default_factory=Path.cwd)


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

    @property
    def ok(self) -> bool:
        return self.failure is None


# on_event(entry_name, block_name, event) with event "start" or "end"; used for progress.
EventCallback = Callable[[str, str, str], None]


def run_demo(
    entry: Entry,
    script: Script,
    files_dir: Path,
    options: RunOptions,
    on_event: EventCallback | None = None,
) -> RunResult:
    """Run ``script`` in a fresh child process with ``files_dir`` as working directory."""
    raise NotImplementedError
