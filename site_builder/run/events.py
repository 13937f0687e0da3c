"""The parent's side of the run protocol: the runner's events (child/protocol.py) -> block results.

:class:`RunEvents` reads the JSON lines of a runner's events pipe as they come, tells the
progress callback when a block starts and ends, and makes each block's BlockResult once the
run is over, the block a timeout or a crash interrupted included.  It needs no process: the
tests feed it recorded lines.
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import signal
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from site_builder.run.capture import BlockOutput
from site_builder.run.child.files import BUILDER_DIR
from site_builder.run.child.protocol import (
    DisplayPayload, DoneEvent, EndEvent, ErrorPayload, Event, GlueEvent, Interruption, OsExitEvent, Outcome,
    QuotedEvent, RunnerEvent, safe_name,
)
from site_builder.run.name_refs import name_refs
from site_builder.run.results import Artifact, BlockError, BlockEvent, BlockResult, Display

log = logging.getLogger(__name__)

EventCallback = Callable[[BlockEvent], None]


class RunEvents:
    """What ``run_demo`` learned from the runner: feed it the runner's lines (``pump`` them from its
    pipe as they come, ``drain`` it once the runner is killed, or ``handle`` one line), then ask
    ``block_results``."""

    def __init__(self, entry: str, cells: tuple[Any, ...], builder_dir: Path, limit: int,
                 scrub: Callable[[str], str], on_event: EventCallback | None) -> None:
        self.entry, self.cells, self.builder_dir = entry, cells, builder_dir
        self.limit, self.scrub, self.on_event = limit, scrub, on_event
        self.outputs: dict[int, BlockOutput] = {}
        self.ends: dict[int, EndEvent] = {}
        self.current: int | None = None
        self.current_t0 = 0.0
        self.final: DoneEvent | None = None
        self.os_exit: OsExitEvent | None = None
        self.internal_error: str | None = None
        self.reader_error: str | None = None
        self.write_error: OSError | None = None  # writing a long output's file failed (disk full...)
        self.done = threading.Event()  # the runner said it is done (or failed)
        self._partial = bytearray()  # the start of a line whose end is still to come
        self.quoting: list[QuotedEvent | GlueEvent] = []  # (run.quoting)

    def pump(self, fd: int, timeout: float) -> int:
        """Wait up to ``timeout`` s for the runner's events on ``fd`` and take every whole line read:
        the number of bytes read, 0 when none came in time, -1 once the pipe is at its end."""
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return 0
        data = os.read(fd, 1 << 20)
        if not data:
            return -1
        buf = self._partial
        buf += data
        start = 0
        while (nl := buf.find(b"\n", start)) >= 0:
            self.handle(bytes(buf[start:nl]))
            start = nl + 1
        del buf[:start]
        return len(data)

    def drain(self, fd: int) -> None:
        """Once the runner is killed: take what it left in the pipe, until the pipe's end or until it
        stays idle a tenth of a second (an escaped grandchild may hold it open), for at most 5 s (one
        may keep writing).  Every wait begins after the kill: what the runner wrote is there."""
        deadline = time.perf_counter() + 5.0  # a starved builder on a busy machine still drains the runner
        while self.pump(fd, 0.1) > 0 and time.perf_counter() < deadline:
            pass

    def handle(self, line: bytes) -> None:
        """Take one JSON line of the runner's events pipe."""
        try:
            event = read_event(line)
            if event is None:
                pass
            elif event["event"] == Event.OUT:
                if self.write_error is None:
                    self._output(event["i"]).add(event["stream"], event["text"])
            elif event["event"] == Event.DISPLAY:
                if self.write_error is None:
                    self._output(event["i"]).add_display(self.display(event))
            elif event["event"] == Event.START:
                self.current, self.current_t0 = event["i"], started_at(event)
                self._notify(BlockEvent(self.entry, self.cells[event["i"]].name, "start"))
            elif event["event"] == Event.END:
                self.ends[event["i"]] = event
                self.current = None
                self._notify(BlockEvent(self.entry, self.cells[event["i"]].name, "end",
                                        event["status"], float(event["duration"])))
            elif event["event"] in (Event.QUOTED, Event.GLUE):
                self.quoting.append(event)
            elif event["event"] == Event.DONE:
                self.final = event
                self.done.set()
            elif event["event"] == Event.OS_EXIT:  # the demo called os._exit: where, for the crash message
                self.os_exit = event
            elif event["event"] == Event.INTERNAL_ERROR:
                self.internal_error = event.get("traceback", "")
                self.done.set()
        except OSError as exc:  # run_demo raises it once the demo is over
            self.write_error = exc
        except Exception as exc:  # a builder bug: report it rather than lose events silently
            log.exception("%s: bad runner event", self.entry)
            self.reader_error = f"{type(exc).__name__}: {exc}"

    def _output(self, i: int) -> BlockOutput:
        if i not in self.outputs:
            name = f"output-{safe_name(self.cells[i].name)}.txt"
            self.outputs[i] = BlockOutput(self.limit, self.builder_dir / name, self.scrub)
        return self.outputs[i]

    def _notify(self, event: BlockEvent) -> None:
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                log.exception("%s: progress callback failed", self.entry)

    def block_results(self, interruption: Interruption | None, killed_at: float,
                      rel_path: str, runner_stderr: str) -> tuple[BlockResult, ...]:
        """One BlockResult per cell, the interrupted one (timeout/crash) included."""
        interrupted = self.current
        if interruption and interrupted is None:
            interrupted = next((i for i in range(len(self.cells)) if i not in self.ends), None)
        results = []
        # The names of the functions' parameters, known once the script ended (runner's "done").
        parameters = self.final.get("parameter_names") if self.final is not None else None
        parameters = parameters if isinstance(parameters, dict) else {}
        for i, cell in enumerate(self.cells):
            out = self.outputs[i].result(
                f"{BUILDER_DIR}/output-{safe_name(cell.name)}.txt"
            ) if i in self.outputs else {}
            if i in self.ends:
                ev = self.ends[i]
                results.append(BlockResult(
                    name=cell.name, status=ev["status"], duration=float(ev["duration"]),
                    error=self._error(ev.get("error")), value=self._value(ev.get("value")),
                    names=name_refs(_list(ev.get("names")) + _list(parameters.get(str(i)))),
                    artifacts=tuple(Artifact(**a) for a in ev.get("artifacts", ())), **out,
                ))
            elif interruption and i == interrupted:
                if interruption.outcome == Outcome.TIMED_OUT:
                    # The cell already says "Timed out": the message says how long it ran.
                    message = f"stopped after running {interruption.seconds:.1f} s: the demo reached its time limit"
                    error = BlockError("Timeout", message, None, "")
                    status = Outcome.TIMED_OUT
                else:
                    error = crash_error(interruption.returncode, rel_path, runner_stderr, self.os_exit)
                    status = Outcome.CRASHED
                start = self.current_t0 if self.current == i else killed_at
                results.append(BlockResult(cell.name, status, killed_at - start if start else 0.0,
                                           error=error, **out))  # type: ignore[arg-type]
                self._notify(BlockEvent(self.entry, cell.name, "end", status, results[-1].duration))
            else:
                results.append(BlockResult(cell.name, Outcome.NOT_RUN, 0.0, **out))
        return tuple(results)

    def _value(self, raw: DisplayPayload | None) -> Display | None:
        return self.display(raw) if raw else None

    def display(self, raw: DisplayPayload) -> Display:
        """A Display from the runner's event, text scrubbed of the machine's paths."""
        return Display(data={str(k): self.scrub(str(v)) for k, v in raw.get("data", {}).items()},
                       files={str(k): str(v) for k, v in raw.get("files", {}).items()},
                       omitted={str(k): int(v) for k, v in raw.get("omitted", {}).items()})

    def _error(self, raw: ErrorPayload | None) -> BlockError | None:
        if raw is None:
            return None
        return BlockError(raw["type"], self.scrub(raw["message"]), raw["line"],
                          self.scrub(raw["traceback"]))


def _list(raw: Any) -> list[Any]:
    return raw if isinstance(raw, list) else []


def crash_error(returncode: int | None, rel_path: str, runner_stderr: str,
                 os_exit: OsExitEvent | None = None) -> BlockError:
    """Describe a runner that died mid-block, with the faulthandler dump's script line."""
    if os_exit is not None:  # the demo called os._exit(status): no dump, but the runner saw where
        line = os_exit.get("line")
        traceback = f'  File "{rel_path}", line {line}\n' if line else ""
        return BlockError("Crash", f"os._exit({os_exit.get('status')!r})", line, traceback)
    if returncode is not None and returncode < 0:
        try:
            why = f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            why = f"signal {-returncode}"
        message = f"the process died with {why}"
    else:
        message = f"exit status {returncode}"
    line = None
    frames: list[str] = []
    _, found, current = runner_stderr.partition("Current thread")
    if found:
        for m in re.finditer(r'^[ \t]*File "([^"]+)", line (\d+) in (.*)$', current, re.M):  # [ \t]: linear
            if m.group(1) == rel_path:
                frames.append(m.group(0).strip())
                if line is None:
                    line = int(m.group(2))  # most recent call first: the innermost
    traceback = "".join(f"  {f}\n" for f in reversed(frames))
    return BlockError("Crash", message, line, traceback)


def read_event(line: bytes) -> RunnerEvent | None:
    """One line of the runner's events pipe as its typed event (child/protocol.py): its
    ``event`` an Event, an "end" event's ``status`` an Outcome; None for a kind of event this
    builder does not know; ValueError when the line is no JSON object."""
    event = json.loads(line)
    if not isinstance(event, dict):
        raise ValueError(f"not an event: {line[:80]!r}")
    if event.get("event") not in Event.__members__.values():
        return None
    event["event"] = Event(event["event"])
    if event["event"] == Event.END:
        event["status"] = Outcome(event["status"])
    return cast(RunnerEvent, event)


def started_at(event: Mapping[str, Any]) -> float:
    """When a block began, on this process's perf_counter clock: the child's monotonic time
    stamp taken back by its age (the event may be read long after it was sent)."""
    now = time.perf_counter()
    sent = event.get("t")
    if isinstance(sent, (int, float)) and not isinstance(sent, bool):
        return now - min(max(time.monotonic() - float(sent), 0.0), 3600.0)
    return now
