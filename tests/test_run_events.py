"""The parent's handling of the run protocol, fed recorded events: no child process runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from site_builder.run.child.cells import run_cell
from site_builder.run.child.files import Paths
from site_builder.run.child.protocol import (
    CellRun, DoneEvent, EndEvent, ErrorPayload, Event, GlueEvent, InternalErrorEvent, Interruption, OsExitEvent,
    Outcome, OutEvent, QuotedEvent, RunnerEvent, StartEvent, safe_name,
)
from site_builder.run.events import RunEvents, read_event
from site_builder.run.results import BlockEvent
from site_builder.source.parsed import Cell

CELLS = (Cell("code", "setup", "import time", 1, None), Cell("code", "B-fit", "fit()", 3, 2),
         Cell("code", "B-plot", "plot()", 5, 4))


def _fed(tmp_path: Path, *events: RunnerEvent) -> tuple[RunEvents, list[BlockEvent]]:
    seen: list[BlockEvent] = []
    state = RunEvents("demo", CELLS, tmp_path, 10_000, lambda text: text.replace(str(tmp_path), "."), seen.append)
    for event in events:
        state.handle(json.dumps(event).encode("utf-8"))  # a StrEnum is written as its value
    return state, seen


def _text(block: object) -> str:
    return "".join(chunk.text for chunk in block.output)  # type: ignore[attr-defined]


def _start(i: int) -> StartEvent:
    return StartEvent(event=Event.START, i=i, block=CELLS[i].name, t=0.0)


def _out(i: int, text: str, stream: str = "stdout") -> OutEvent:
    return OutEvent(event=Event.OUT, i=i, stream=stream, text=text)


def _end(i: int, status: Outcome, error: ErrorPayload | None = None) -> EndEvent:
    return EndEvent(event=Event.END, i=i, block=CELLS[i].name, status=status, duration=0.25, error=error,
                    value=None, artifacts=[], names=[], names_cpu=0.0)


def _done() -> DoneEvent:
    return DoneEvent(event=Event.DONE, environment={"python": "3.11"}, reads=[], parameter_names={},
                     names_cpu=0.0, cpu=0.1)


def test_a_finished_run_gives_each_block_its_outcome_output_and_error(tmp_path: Path) -> None:
    error = ErrorPayload(type="ValueError", message=f"bad {tmp_path}/x", line=3, traceback="Traceback")
    state, seen = _fed(
        tmp_path,
        _start(0),
        _out(0, "loaded\n"),
        _end(0, Outcome.OK),
        _start(1),
        _out(1, "warning\n", "stderr"),
        _end(1, Outcome.RAISED, error=error),
        _done(),
    )
    assert state.done.is_set() and state.final is not None
    blocks = state.block_results(None, 1.0, "demos/demo.py", "")
    assert [b.status for b in blocks] == [Outcome.OK, Outcome.RAISED, Outcome.NOT_RUN]
    assert _text(blocks[0]) == "loaded\n" and _text(blocks[1]) == "warning\n"
    assert blocks[1].error is not None and blocks[1].error.message == "bad ./x"  # the machine's path scrubbed
    assert [(e.block, e.kind, e.status) for e in seen] == [
        ("setup", "start", None), ("setup", "end", "ok"), ("B-fit", "start", None), ("B-fit", "end", "error")]


def test_a_timeout_inside_a_block_names_how_long_it_ran_and_runs_nothing_after(tmp_path: Path) -> None:
    state, seen = _fed(
        tmp_path,
        _start(0),
        _end(0, Outcome.OK),
        _start(1),
        _out(1, "epoch 1\n"),
    )
    blocks = state.block_results(Interruption(Outcome.TIMED_OUT, seconds=2.5), 5.0, "demos/demo.py", "")
    assert [b.status for b in blocks] == [Outcome.OK, Outcome.TIMED_OUT, Outcome.NOT_RUN]
    assert blocks[1].error is not None and "stopped after running 2.5 s" in blocks[1].error.message
    assert _text(blocks[1]) == "epoch 1\n"
    assert (seen[-1].block, seen[-1].kind, seen[-1].status) == ("B-fit", "end", "timeout")


def test_a_demo_that_calls_os_exit_crashes_its_block_at_the_line(tmp_path: Path) -> None:
    state, _ = _fed(
        tmp_path,
        _start(0),
        OsExitEvent(event=Event.OS_EXIT, status=3, line=1),
    )
    blocks = state.block_results(Interruption(Outcome.CRASHED, returncode=3), 1.0, "demos/demo.py", "")
    assert blocks[0].status == Outcome.CRASHED and blocks[0].error is not None
    assert (blocks[0].error.message, blocks[0].error.line) == ("os._exit(3)", 1)


def test_a_signal_crash_names_the_signal_and_the_scripts_line_from_the_dump(tmp_path: Path) -> None:
    state, _ = _fed(tmp_path, _start(0))
    dump = 'Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n  File "demos/demo.py", line 1 in <module>\n'
    blocks = state.block_results(Interruption(Outcome.CRASHED, returncode=-11), 1.0, "demos/demo.py", dump)
    assert blocks[0].error is not None
    assert (blocks[0].error.message, blocks[0].error.line) == ("the process died with signal SIGSEGV", 1)


def test_the_runners_own_failure_and_a_malformed_line_are_reported_not_lost(tmp_path: Path) -> None:
    state, _ = _fed(tmp_path, InternalErrorEvent(event=Event.INTERNAL_ERROR, traceback="Traceback: boom"))
    assert state.done.is_set() and state.internal_error == "Traceback: boom"
    state.handle(b'{"event": "end", "i": 0}')  # no status: a builder bug, said once
    assert state.reader_error is not None and "KeyError" in state.reader_error


def test_a_block_name_is_safe_in_a_file_name_one_character_for_one() -> None:
    assert safe_name("B-fit/α 1") == "B-fit___1" and safe_name("B_2.x") == "B_2.x"


def test_quoted_and_glue_events_wait_for_the_end_of_the_run(tmp_path: Path) -> None:
    state, _ = _fed(tmp_path, QuotedEvent(event=Event.QUOTED, values=[]),
                    GlueEvent(event=Event.GLUE, i=0, name="x", data={"text/plain": "1"}))
    assert [e["event"] for e in state.quoting] == ["quoted", "glue"]


def test_each_line_reads_back_as_the_typed_event_the_child_sent() -> None:
    sent = _end(1, Outcome.EXPECTED_ERROR)
    read = read_event(json.dumps(sent).encode("utf-8"))
    assert read == sent and read is not None
    assert type(read["event"]) is Event and type(read["status"]) is Outcome  # type: ignore[typeddict-item]
    assert read_event(b'{"event": "from-a-newer-child", "i": 0}') is None  # a kind it does not know: skipped


def test_every_outcome_a_block_can_end_with_is_kept_and_told(tmp_path: Path) -> None:
    for outcome in (Outcome.OK, Outcome.RAISED, Outcome.EXPECTED_ERROR, Outcome.EXITED):
        state, seen = _fed(tmp_path, _start(0), _end(0, outcome), _done())
        blocks = state.block_results(None, 1.0, "demos/demo.py", "")
        assert blocks[0].status is outcome and seen[-1].status is outcome


def test_the_child_says_how_each_cell_ended_as_a_typed_outcome(tmp_path: Path) -> None:
    paths = Paths(str(tmp_path), str(tmp_path))

    def ran(text: str, raises: bool = False) -> CellRun:
        cell = {"name": "B", "text": text, "first_line": 1, "tags": [], "raises": raises}
        outcome, _ = run_cell(cell, {}, "demos/demo.py", paths, 0, lambda value: {"data": {"text/plain": repr(value)}})
        return outcome

    assert ran("x = 1\nx + 1") == CellRun(Outcome.OK, value={"data": {"text/plain": "2"}})
    raised = ran("1 / 0")
    assert (raised.outcome, raised.stop, raised.error and raised.error["type"]) == (
        Outcome.RAISED, True, "ZeroDivisionError")
    expected = ran("1 / 0", raises=True)  # tagged raises-exception: the script goes on
    assert (expected.outcome, expected.stop) == (Outcome.EXPECTED_ERROR, False)
    assert ran("raise SystemExit(2)").outcome == Outcome.EXITED
    finished = ran("import sys\nsys.exit()")
    assert (finished.outcome, finished.stop) == (Outcome.OK, True)  # a clean end: the page says where


def test_a_line_split_across_reads_of_the_pipe_is_taken_whole_once_its_end_comes(tmp_path: Path) -> None:
    import os

    state, seen = _fed(tmp_path)
    read_end, write_end = os.pipe()
    try:
        line = json.dumps(_start(0)).encode("utf-8") + b"\n"
        os.write(write_end, line[:7])
        assert state.pump(read_end, 1.0) == 7 and seen == []  # half a line: nothing taken yet
        os.write(write_end, line[7:] + json.dumps(_done()).encode("utf-8")[:5])
        assert state.pump(read_end, 1.0) > 0
        assert [(e.block, e.kind) for e in seen] == [("setup", "start")] and state.final is None
        os.write(write_end, json.dumps(_done()).encode("utf-8")[5:] + b"\n")
        os.close(write_end)
        write_end = -1
        state.drain(read_end)  # the rest of the line, then the pipe's end
        assert state.final is not None and state.done.is_set()
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def test_events_written_as_a_wait_ends_empty_are_read_once_the_runner_is_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A loaded machine: the builder's wait for events times out, the demo then writes its last
    # events and exits, and the builder sees the exit before it waits again. It must still read
    # what is in the pipe (it took a finished demo for a crash, "exit status 0", in about one
    # build in ten under two CPU hogs).
    import os
    import select

    state = RunEvents("demo", (), tmp_path, 1000, lambda text: text, None)
    read_end, write_end = os.pipe()
    real_select, waits = select.select, []

    def timed_out_as_the_demo_ended(*args: object) -> tuple[list[int], list[int], list[int]]:
        waits.append(args)
        if len(waits) == 1:  # the demo writes and exits while this wait is ending with nothing ready
            os.write(write_end, b'{"event": "done", "environment": {}}\n')
            os.close(write_end)
            return [], [], []
        return real_select(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(select, "select", timed_out_as_the_demo_ended)
    try:
        assert state.pump(read_end, 0.05) == 0  # nothing came in time
        assert state.final is None
        state.drain(read_end)  # the builder, having seen the exit, kills and drains
    finally:
        os.close(read_end)
    assert state.final == {"event": "done", "environment": {}}
    assert len(waits) >= 2
