"""Discover stage: find the demos and turn each file into an :class:`Entry`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from site_builder.errors import EntryError, UsageError
from site_builder.fs import relative_to_root
from site_builder.names import check_entry_name

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Entry:
    """One dictionary entry: a demo script and the page it becomes."""

    name: str  # URL segment and folder name of the page, e.g. "attention"
    path: Path  # absolute path of the script; never rendered
    rel_path: str  # path relative to the project root, POSIX form, used in messages
    source: str  # the script's text (UTF-8, newlines as in the file)
    source_bytes: bytes  # the file's exact bytes, published as the download


def discover(demos_dir: Path, project_root: Path, problems: list[str] | None = None) -> list[Entry]:
    """Read every ``*.py`` directly in ``demos_dir`` into an Entry, sorted by name.

    A file that cannot be an entry raises EntryError, or, when ``problems`` is given, is
    skipped with its one-line message appended there (the build keeps going, then fails).
    """
    if not demos_dir.is_dir():
        raise UsageError(f"demos folder not found: {relative_to_root(demos_dir, project_root)}")
    entries: list[Entry] = []
    found: list[str] = []
    for path in sorted(demos_dir.glob("*.py")):
        if path.name.startswith(("_", ".")):
            continue  # private helper modules (e.g. _shared.py) are not entries
        rel = relative_to_root(path, project_root)
        why = check_entry_name(path.stem)
        if why:
            found.append(f"{rel}: {why}")
            continue
        if not path.is_file():
            found.append(f"{rel}: not a regular file")
            continue
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            found.append(f"{rel}: not UTF-8 (byte {exc.start})")
            continue
        if "\0" in text:  # Python refuses such a script; a page must never carry the byte
            line = text.count("\n", 0, text.index("\0")) + 1
            found.append(f"{rel}:{line}: a NUL byte (a Python script cannot contain one)")
            continue
        entries.append(Entry(path.stem, path.resolve(), rel, text, data))
    if found and problems is None:
        raise EntryError("; ".join(found))
    if problems is not None:
        problems.extend(found)
    return entries
