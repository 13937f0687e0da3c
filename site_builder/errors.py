"""The builder's own exceptions, each carrying a one-line message meant for the user, and
:func:`one_line`, which makes any text safe to show as (part of) such a line."""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import sys
from collections.abc import Iterator
from typing import Any, TextIO

# What a terminal, a CI log or a page would not show as it is: C0 controls but tab (a newline
# ends the line, ESC starts a terminal command, NUL ends C strings), DEL, C1 controls, the
# Unicode line and paragraph separators, bidirectional overrides (text shown in another order
# than it reads), and lone surrogates (a file name's undecodable bytes, which UTF-8 cannot carry).
_UNSHOWABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}
# Workflow commands the GitHub Actions runner reads from a job's output: "::name ...::data" at
# the start of a line (after spaces) and the older "##[name ...]data" anywhere in it.
_COMMAND_START = re.compile(r"^(\s*):")
_OLD_COMMAND = "##["


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the undecodable byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """``text`` as one line a terminal, a CI log or a page shows as it is, and that no CI runner
    reads as a command: characters that would act (newline, ESC, NUL, C1, bidi overrides...) or
    that UTF-8 cannot carry are written as escapes (``\\n``, ``\\x1b``, ``\\xff`` for an
    undecodable byte of a file name), and a workflow command's ``::`` or ``##[`` is broken
    (``\\x3a:``, ``#\\x23[``).  Ordinary text comes back unchanged."""
    if _UNSHOWABLE.search(text):
        text = _UNSHOWABLE.sub(_escape, text)
    if _OLD_COMMAND in text:
        text = text.replace(_OLD_COMMAND, "#\\x23[")
    if text.lstrip().startswith("::"):
        text = _COMMAND_START.sub(r"\1\\x3a", text, count=1)
    return text


def print_line(text: str, stream: TextIO) -> None:
    """Print the message ``text`` on ``stream`` as one line (see :func:`one_line`)."""
    stream.write(one_line(text) + "\n")
    stream.flush()


class OneLineFormatter(logging.Formatter):
    """The logging format of the command line: each message one line (:func:`one_line`), and
    each line of a traceback (``exc_info``, debug only) made safe the same way."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return one_line(super().formatMessage(record))

    def formatException(self, ei: object) -> str:
        return "\n".join(one_line(line) for line in super().formatException(ei).split("\n"))  # type: ignore[arg-type]


class SiteBuilderError(Exception):
    """A problem the user must fix; ``str(error)`` is the complete one-line message."""

    exit_status = 1

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(one_line(str(message)), *args)


class UsageError(SiteBuilderError):
    """Bad command line, configuration, or missing/unwritable folders (exit status 2)."""

    exit_status = 2


class EntryError(SiteBuilderError):
    """A demo file that cannot become an entry (bad name, clash, unreadable)."""


class ParseError(SiteBuilderError):
    """A demo whose blocks cannot be parsed; names the entry, block and line."""

    def __init__(self, message: str, *, block: str | None = None, line: int | None = None,
                 error_type: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.block = block  # the block the problem is in, when known
        self.line = line  # 1-based line in the script, when known
        self.error_type = error_type  # e.g. "SyntaxError", "IndentationError"; "" when none
        self.detail = detail  # Python's own report (e.g. the caret under a syntax error)


class WriteError(SiteBuilderError):
    """A write the builder makes failed (disk full, read-only, no permission, I/O error): the
    message says what was being written, where, and what to do (exit status 1)."""


class WarningCount(logging.Handler):
    """A logging handler that counts the warnings (and errors) logged."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextlib.contextmanager
def counting_warnings(logger: logging.Logger) -> Iterator[WarningCount]:
    """Count what ``logger`` (and the loggers below it) warn while the block runs (``build --strict``)."""
    counter = WarningCount()
    logger.addHandler(counter)
    try:
        yield counter
    finally:
        logger.removeHandler(counter)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the running demos are killed and nothing is written."""


class PendingInterrupt:
    """The Ctrl-C or SIGTERM the builder received, raised where it lands and again by ``check``:
    Python ignores an exception raised in a weakref callback or ``__del__`` (an import's module
    lock has one), so a signal landing there would be lost and the build would run on."""

    def __init__(self) -> None:
        self.kind: type[KeyboardInterrupt] | None = None
        self.passed_on: Any = sys.unraisablehook  # the hook ``ignored`` hands the rest to

    def on_signal(self, signum: int, frame: object) -> None:
        """The SIGINT and SIGTERM handler: note the signal, then raise it here."""
        self.kind = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
        raise self.kind()

    def clear(self) -> None:
        """Forget a signal noted before (a command starts)."""
        self.kind = None

    def ignored(self, unraisable: Any) -> None:
        """``sys.unraisablehook`` while a command runs: the signal raised where Python ignores
        it is noted and raised again by ``check``, so its "Exception ignored" traceback would
        only be noise after the one-line message; anything else is reported as Python does."""
        if unraisable.exc_type is None or not issubclass(unraisable.exc_type, KeyboardInterrupt):
            self.passed_on(unraisable)

    def check(self) -> None:
        """Raise the signal noted again, in case it was lost where it landed (the build's waits
        and the step before writing call this)."""
        if self.kind is not None:
            raise self.kind()


INTERRUPT = PendingInterrupt()
