"""A demo's exception as the page shows it: type, message, script line, and a traceback
keeping only the frames of the script, of the project's files and of those the demo wrote
in its working folder (``%%writefile`` then ``%run``; the parent shows them relative to it)."""

from __future__ import annotations

import os
import traceback
from typing import Any

from .files import Paths
from .protocol import ErrorPayload


def describe_error(exc: BaseException, rel_path: str, paths: Paths) -> ErrorPayload:
    """Type, first message line, innermost script line and script-only traceback of ``exc``."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == rel_path:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == rel_path:
        line = exc.lineno
    try:
        message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
        _keep_script_frames(te, rel_path, paths, set())
        text = "".join(te.format())
    except Exception as bad:  # a demo's exception whose __str__ itself fails
        message, text = f"<unprintable: {type(bad).__name__}>", ""
    lines = str(message or "").strip().splitlines()
    return ErrorPayload(type=type(exc).__name__, message=lines[0] if lines else "", line=line, traceback=text)


def _keep_script_frames(te: Any, rel_path: str, paths: Paths, seen: set[int]) -> None:
    # The runner's own frames (and library internals) are noise to a reader of the demo.
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    keep = [f for f in te.stack if f.filename == rel_path or (os.path.isabs(f.filename) and (
        paths.project_rel(f.filename) or paths.in_run_folder(f.filename)))]
    te.stack = traceback.StackSummary.from_list(keep)
    _keep_script_frames(te.__cause__, rel_path, paths, seen)
    _keep_script_frames(te.__context__, rel_path, paths, seen)
    for sub in getattr(te, "exceptions", None) or ():
        _keep_script_frames(sub, rel_path, paths, seen)
