"""Progress of a build on stderr: a live view on a terminal, plain lines elsewhere, a summary.

On a terminal the running entries (current block, elapsed time) and the overall count are
redrawn in place by a background thread; in CI, pipes and tests each finished block is one
plain, flushed line.  Demos report their blocks from reader threads, so everything locks.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import TextIO

from site_builder.errors import one_line
from site_builder.run.execute import BlockEvent, RunResult
from site_builder.run.results import LazyResult
from site_builder.site.formatting import format_duration
from site_builder.site.pages.timings import entry_status

REDRAW_INTERVAL = 0.1  # seconds: at most ~10 redraws a second


@dataclass(frozen=True)
class EntrySummary:
    """One row of the end-of-build summary."""

    name: str
    status: str  # "ok", "failed", "not run"
    duration: float  # seconds the run took (the recorded time when cached)
    blocks_run: int
    blocks_total: int
    cached: bool


def summarize(result: RunResult | LazyResult, cached: bool) -> EntrySummary:
    """The summary row of one entry's result."""
    if isinstance(result, LazyResult):  # a good result, its record not read
        row = result.row
        return EntrySummary(result.entry, "ok", row.duration, row.blocks_run, row.blocks_total, cached)
    return EntrySummary(
        name=result.entry,
        status=entry_status(result),
        duration=result.duration,
        blocks_run=sum(b.status != "not-run" for b in result.blocks),
        blocks_total=len(result.blocks),
        cached=cached,
    )


def summary_table(rows: list[EntrySummary], wall_time: float) -> str:
    """The end-of-build table: per entry its status, time, blocks and whether it was cached."""
    header = ("entry", "status", "time", "blocks", "cache")
    body = [
        (r.name, r.status, format_duration(r.duration) if r.status != "not run" else "-",
         f"{r.blocks_run}/{r.blocks_total}", "hit" if r.cached else "-")
        for r in rows
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    right = {2, 3}  # numbers line up on the right

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    parts = [f"{n} {status}" for status, n in counts.items()]
    cached = sum(r.cached for r in rows)
    total = f"{len(rows)} {'entry' if len(rows) == 1 else 'entries'}"
    footer = f"{total}: {', '.join(parts) or 'nothing to run'}; {cached} from the cache; " \
             f"{format_duration(wall_time)} in all"
    return "\n".join([line(header), *(line(b) for b in body), footer])


class Progress:
    """Receives a build's events; this base class shows nothing (``-q``, library use)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.total = 0
        self.finished = 0

    def start(self, total: int) -> None:
        """The build is about to run ``total`` entries."""
        self.total = total

    def entry_started(self, name: str) -> None:
        """A demo's child process is about to start."""

    def block_event(self, event: BlockEvent) -> None:
        """A block started or ended (called from reader threads)."""

    def entry_finished(self, summary: EntrySummary, failure: str | None) -> None:
        """An entry has its result: run, taken from the cache, or not run."""
        with self.lock:
            self.finished += 1

    def close(self) -> None:
        """Execution is over: stop redrawing."""

    def summary(self, rows: list[EntrySummary], wall_time: float) -> None:
        """Print the end-of-build table."""

    def _print(self, text: str) -> None:
        """Write ``text``, the builder's lines, each made safe (what they quote may hold anything)."""
        assert self.stream is not None
        self.stream.write("".join(one_line(line) + "\n" for line in text.split("\n")))
        self.stream.flush()


class PlainProgress(Progress):
    """One line per finished block and per finished entry, then the summary (CI, pipes)."""

    def block_event(self, event: BlockEvent) -> None:
        if event.kind != "end":
            return
        with self.lock:
            self._print(f"{event.entry}: {event.block} {event.status} "
                        f"{format_duration(event.duration or 0.0)}")

    def entry_finished(self, summary: EntrySummary, failure: str | None) -> None:
        with self.lock:
            self.finished += 1
            self._print(f"[{self.finished}/{self.total}] {_entry_line(summary)}")

    def summary(self, rows: list[EntrySummary], wall_time: float) -> None:
        if rows:
            with self.lock:
                self._print(summary_table(rows, wall_time))


class LiveProgress(PlainProgress):
    """A terminal: finished entries scroll up; running ones are redrawn in place below them."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self.running: dict[str, tuple[float, str, float]] = {}  # name -> (t0, block, block t0)
        self.drawn_lines = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._redraw_loop, name="progress", daemon=True)

    def start(self, total: int) -> None:
        super().start(total)
        if total:
            self.thread.start()

    def entry_started(self, name: str) -> None:
        now = time.perf_counter()
        with self.lock:
            self.running[name] = (now, "", now)

    def block_event(self, event: BlockEvent) -> None:
        if event.kind != "start":
            return
        with self.lock:
            t0, _block, _ = self.running.get(event.entry, (time.perf_counter(), "", 0.0))
            self.running[event.entry] = (t0, event.block, time.perf_counter())

    def entry_finished(self, summary: EntrySummary, failure: str | None) -> None:
        with self.lock:
            self.finished += 1
            self.running.pop(summary.name, None)
            self._clear()
            self._print(f"[{self.finished}/{self.total}] {_entry_line(summary)}")
            self.draw()

    def close(self) -> None:
        if self.thread.is_alive():
            self.stop.set()
            self.thread.join()
        with self.lock:
            self._clear()

    def _redraw_loop(self) -> None:
        while not self.stop.wait(REDRAW_INTERVAL):
            with self.lock:
                self._clear()
                self.draw()

    def draw(self) -> None:
        """Redraw the live lines now (the redraw thread calls it about ten times a second)."""
        now = time.perf_counter()
        width = max(len(name) for name in self.running) if self.running else 0
        lines = [
            f"  {name.ljust(width)}  {format_duration(now - t0):>9}  {block or '(starting)'}"
            f"{f' ({format_duration(now - block_t0)})' if block else ''}"
            for name, (t0, block, block_t0) in sorted(self.running.items())
        ]
        lines.append(f"{self.finished}/{self.total} entries")
        assert self.stream is not None
        self.stream.write("".join(f"\x1b[2K{one_line(line)}\n" for line in lines))
        self.stream.flush()
        self.drawn_lines = len(lines)

    def _clear(self) -> None:
        if self.drawn_lines:
            assert self.stream is not None
            # Up to the first drawn line, then erase everything below the cursor.
            self.stream.write(f"\x1b[{self.drawn_lines}F\x1b[J")
            self.stream.flush()
            self.drawn_lines = 0


def _entry_line(summary: EntrySummary) -> str:
    blocks = f"{summary.blocks_total} block{'' if summary.blocks_total == 1 else 's'}"
    if summary.status == "not run":
        return f"{summary.name}: not run"
    if summary.cached:
        return f"{summary.name}: {summary.status} (from the cache; ran in " \
               f"{format_duration(summary.duration)}, {blocks})"
    return f"{summary.name}: {summary.status} in {format_duration(summary.duration)} ({blocks})"


def make_progress(stream: TextIO, quiet: bool) -> Progress:
    """The display that fits ``stream``: nothing with ``quiet``, live on a terminal, else plain."""
    if quiet:
        return Progress(stream)
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty() and os.environ.get("TERM") != "dumb":
        return LiveProgress(stream)
    return PlainProgress(stream)
