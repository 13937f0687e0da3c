"""The run protocol: what the runner (the child) tells the builder (the parent), and how a block ends.

The child sends one JSON object a line on its events pipe, each with an ``"event"`` of
:class:`Event`; the parent (run/events.py) reads them into records.  A block's outcome is
an :class:`Outcome`, the ``status`` of its "end" event and of its record; a run stopped
inside a block is an :class:`Interruption` (the parent killed it when its time ran out, or
its process died).  Each event's fields are a TypedDict below.  Both sides import this module, so it uses the
standard library only, and only modules a child has loaded anyway (``enum``, ``re``,
``typing``): the demo sees nothing ``python demos/x.py`` would not give it.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Literal, NamedTuple, TypedDict


class Event(StrEnum):
    """The kinds of event, as the ``"event"`` field of each line names them."""

    START = "start"  # a block begins: i, block, t (the child's monotonic clock)
    OUT = "out"  # what the block printed: i, stream ("stdout"/"stderr"), text
    DISPLAY = "display"  # a rich display of the block: i, data, files, omitted
    GLUE = "glue"  # MyST-NB's glue(name, value): i, name, and a display's fields
    QUOTED = "quoted"  # the values of the prose's inline expressions: values
    END = "end"  # a block ended: i, block, status (an Outcome), duration, error, value, artifacts, names
    DONE = "done"  # the script ended: environment, reads, parameter_names, cpu
    OS_EXIT = "os-exit"  # the demo called os._exit: status, line
    INTERNAL_ERROR = "internal-error"  # the runner itself failed: traceback


class Outcome(StrEnum):
    """How a block ended: the ``status`` of its "end" event and of its record."""

    OK = "ok"
    RAISED = "error"  # an exception the block did not catch
    EXPECTED_ERROR = "expected-error"  # it raised, as its raises-exception tag says it should
    EXITED = "exited"  # sys.exit() or SystemExit
    TIMED_OUT = "timeout"  # the demo's time limit ran out in it: the parent killed the process
    CRASHED = "crashed"  # the process died in it (a signal, os._exit, an exit status)
    NOT_RUN = "not-run"  # the run stopped before it, or its options say not to run it


class Interruption(NamedTuple):
    """Why the parent stopped a run that had not said "done": its time ran out, or its process died."""

    outcome: Outcome  # TIMED_OUT or CRASHED
    seconds: float = 0.0  # TIMED_OUT: how long the block had run
    returncode: int | None = None  # CRASHED: the runner's exit status (negative: a signal)


# ---------------------------------------------------------------- the events, one TypedDict each
# The child makes each with its class (a plain dict at run time: nothing costs or changes for
# the demo); the parent reads a line back into the class its "event" names (run/events.py).


class ErrorPayload(TypedDict):
    """A block's exception as the page shows it (child/errors.py describe_error)."""

    type: str
    message: str
    line: int | None
    traceback: str


class DisplayPayload(TypedDict, total=False):
    """A rich output: its text and JSON types, the files of its binary types, those left out."""

    data: dict[str, Any]
    files: dict[str, str]
    omitted: dict[str, int]


class StartEvent(TypedDict):
    event: Literal[Event.START]
    i: int
    block: str
    t: float  # the child's monotonic clock when the block began


class OutEvent(TypedDict):
    event: Literal[Event.OUT]
    i: int
    stream: str  # "stdout" or "stderr"
    text: str


class DisplayEvent(DisplayPayload):
    event: Literal[Event.DISPLAY]
    i: int


class GlueEvent(DisplayPayload):
    event: Literal[Event.GLUE]
    i: int
    name: str


class QuotedEvent(TypedDict):
    event: Literal[Event.QUOTED]
    values: list[dict[str, Any]]  # one per inline expression evaluated at this place


class EndEvent(TypedDict):
    event: Literal[Event.END]
    i: int
    block: str
    status: Outcome
    duration: float
    error: ErrorPayload | None
    value: DisplayPayload | None  # the last expression's display
    artifacts: list[dict[str, Any]]
    names: list[Any]
    names_cpu: float


class DoneEvent(TypedDict):
    event: Literal[Event.DONE]
    environment: dict[str, str]
    reads: list[str]
    parameter_names: dict[str, Any]
    names_cpu: float
    cpu: float


class OsExitEvent(TypedDict):
    event: Literal[Event.OS_EXIT]
    status: int
    line: int | None


class InternalErrorEvent(TypedDict):
    event: Literal[Event.INTERNAL_ERROR]
    traceback: str


RunnerEvent = (StartEvent | OutEvent | DisplayEvent | GlueEvent | QuotedEvent | EndEvent | DoneEvent
               | OsExitEvent | InternalErrorEvent)


class CellRun(NamedTuple):
    """How running one cell went, in the child (child/cells.py, child/shell.py)."""

    outcome: Outcome
    error: ErrorPayload | None = None
    stop: bool = False  # the script ends here (an error, sys.exit)
    value: DisplayPayload | None = None  # its last expression's display


def safe_name(block: str) -> str:
    """A block's name as it is safe in a file name (figures, displays, complete outputs)."""
    return _UNSAFE_IN_NAME.sub("_", block)


_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]")  # compiled once, in the fork server, not in every child
