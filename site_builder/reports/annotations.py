"""GitHub Actions annotations: under ``GITHUB_ACTIONS=true`` each failure and warning is also
printed as a workflow command (``::error file=demos/x.py,line=12,title=...::message``), so it
shows on the pull request's diff, at the line.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TextIO

from site_builder.errors import one_line

if TYPE_CHECKING:  # every build asks enabled(); junit (and xml.etree) only when it writes reports
    from site_builder.reports.junit import Case


def enabled() -> bool:
    """True when running as a GitHub Actions step."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _data(text: str) -> str:
    """Escape a command's message (GitHub's toolkit rules; other control characters as one_line has them)."""
    return one_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    """Escape a command property's value: as a message, plus ``:`` and ``,``."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, file: str | None = None, line: int | None = None,
            title: str | None = None) -> str:
    """One workflow command line, ``kind`` "error", "warning" or "notice"."""
    properties = []
    if file:
        properties.append(f"file={_property(file)}")
    if line:
        properties.append(f"line={line}")
    if title:
        properties.append(f"title={_property(title)}")
    return f"::{kind}{' ' + ','.join(properties) if properties else ''}::{_data(message)}"


def print_cases(cases: list[Case], warnings: list[str], files: dict[str, str], out: TextIO) -> None:
    """Print an ``::error`` per failed case and a ``::warning`` per warning; ``files`` maps an
    entry name to its script, for the warnings that start with the entry's name."""
    for case in cases:
        if case.problem is None:
            continue
        title = None if case.error else (f"{case.name}: {case.problem.type}"
                                         + (f" in {case.problem.block}" if case.problem.block else ""))
        out.write(command("error", case.problem.message, case.file or None, case.problem.line, title) + "\n")
    for warning in warnings:
        name = warning.partition(": ")[0]
        out.write(command("warning", warning, files.get(name)) + "\n")
    out.flush()
