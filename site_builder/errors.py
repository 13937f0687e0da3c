"""The builder's own exceptions: each carries a one-line message meant for the user."""

from __future__ import annotations


class SiteBuilderError(Exception):
    """A problem the user must fix; ``str(error)`` is the complete one-line message."""

    exit_status = 1


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
