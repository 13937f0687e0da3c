"""The run protocol: what the runner (the child) tells the builder (the parent), and how a block ends.

The child sends one JSON object a line on its events pipe, each with an ``"event"`` of
:class:`Event`; the parent (run/events.py) reads them into records.  A block's outcome is
an :class:`Outcome`, the ``status`` of its "end" event and of its record; a run stopped
inside a block is an :class:`Interruption`.  Both sides import this module, so it uses the
standard library only, and only modules a child has loaded anyway (``enum``, ``re``,
``typing``): the demo sees nothing ``python demos/x.py`` would not give it.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, NamedTuple, TypedDict


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


class StartEvent(TypedDict):
    event: str
    i: int
    block: str
    t: float


class OutEvent(TypedDict):
    event: str
    i: int
    stream: str
    text: str


class EndEvent(TypedDict, total=False):
    event: str
    i: int
    block: str
    status: str  # an Outcome
    duration: float
    error: dict[str, Any] | None  # type, message, line, traceback
    value: dict[str, Any] | None  # the last expression's display
    artifacts: list[dict[str, Any]]
    names: list[Any]
    names_cpu: float


def safe_name(block: str) -> str:
    """A block's name as it is safe in a file name (figures, displays, complete outputs)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", block)
