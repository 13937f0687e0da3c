"""Child side: what the parameters of the demo's own functions held, call by call (Python 3.12+).

``sys.monitoring`` (PEP 669) reports each start of a Python function to a tool's callback;
the callback switches itself off for good at any code that is not the demo script's (each
library function costs one call, once), and reads the parameters of the demo's functions
from their frame, up to ``MAX_CALLS`` calls each.  So a parameter's value is known exactly
for every call the run made, at no cost to the rest of the run.  Before Python 3.12, or
when both free tool ids are taken (by the demo's own tools), nothing is watched and
parameters stay plain, as they were.

Standard library only (loaded by the runner, see ``child/__init__``); nothing of the demo's
objects runs: values are only kept and compared by identity and type.
"""

from __future__ import annotations

import sys
from typing import Any

MAX_CALLS = 200  # calls watched per function; one called more often is not linked (never half-known)
# Tool ids CPython leaves unassigned (0 debugger, 1 coverage, 2 profiler, 5 optimizer).
TOOL_IDS = (4, 3)
TOOL_NAME = "site_builder"
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


class ParamValues:
    """One function's calls: each parameter's first value, and whether every call agreed."""

    __slots__ = ("names", "first", "same_object", "same_type", "calls")

    def __init__(self, code: Any) -> None:
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & _CO_VARARGS) + bool(code.co_flags & _CO_VARKEYWORDS)
        self.names: tuple[str, ...] = tuple(code.co_varnames[:count])
        self.first: dict[str, Any] = {}  # kept alive until the run ends: one value per parameter
        self.same_object: dict[str, bool] = {}
        self.same_type: dict[str, bool] = {}
        self.calls = 0

    def add(self, local: Any) -> None:
        for name in self.names:
            value = local[name]
            if name not in self.first:
                self.first[name] = value
                self.same_object[name] = self.same_type[name] = True
                continue
            first = self.first[name]
            if value is not first:
                self.same_object[name] = False
                if type(value) is not type(first):
                    self.same_type[name] = False


class CallRecorder:
    """Watches the calls of the functions a script (compiled as ``filename``) defines."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.functions: dict[Any, ParamValues | None] = {}  # code -> its calls; None: too many or unreadable
        self.tool: int | None = None

    def start(self) -> bool:
        """Start watching; False when this Python cannot (before 3.12, or no free tool id)."""
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None:
            return False
        for tool in TOOL_IDS:
            try:
                monitoring.use_tool_id(tool, TOOL_NAME)
            except ValueError:  # the demo's environment uses it
                continue
            self.tool = tool
            monitoring.register_callback(tool, monitoring.events.PY_START, self._on_start)
            monitoring.set_events(tool, monitoring.events.PY_START)
            return True
        return False

    def stop(self) -> None:
        """Stop watching and give the tool id back."""
        if self.tool is None:
            return
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        try:
            monitoring.set_events(self.tool, 0)
            monitoring.register_callback(self.tool, monitoring.events.PY_START, None)
            monitoring.free_tool_id(self.tool)
        except Exception:  # the demo freed or took over the id itself: it is not ours to undo
            pass
        finally:
            self.tool = None

    def _on_start(self, code: Any, offset: int) -> Any:
        disable = sys.monitoring.DISABLE  # type: ignore[attr-defined]
        try:
            if code.co_filename != self.filename or code.co_name == "<module>":
                return disable  # never called again for this code
            values = self.functions.get(code, ...)
            if values is ...:
                values = self.functions[code] = ParamValues(code)
            if values is None:
                return disable
            values.calls += 1
            if values.calls > MAX_CALLS:
                self.functions[code] = None
                return disable
            values.add(sys._getframe(1).f_locals)
        except Exception:  # an odd frame must never reach the demo: that function is just not known
            self.functions[code] = None
            return disable
        return None

    def calls_of(self, name: str, first_line: int) -> ParamValues | None:
        """The calls of the one function named ``name`` whose code starts at ``first_line``
        (its first decorator's line); None when it never ran, ran too often, or is ambiguous."""
        found = [v for code, v in self.functions.items()
                 if code.co_name == name and code.co_firstlineno == first_line]
        return found[0] if len(found) == 1 else None
