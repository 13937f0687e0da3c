"""Discover stage: find the demos and turn each file into an :class:`Entry`."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from site_builder.errors import EntryError, UsageError

log = logging.getLogger(__name__)

# A clean URL segment that is also a portable file name: lower-case letters, digits,
# '-' and '_', starting with a letter or digit.  Upper case is refused rather than
# folded so that two entries can never collide on a case-insensitive host.
ENTRY_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# Names the site itself uses at its top level; an entry of that name would shadow them.
RESERVED_NAMES = frozenset({"static", "pagefind", "404", "index", "timings", "search"})


@dataclass(frozen=True)
class Entry:
    """One dictionary entry: a demo script and the page it becomes."""

    name: str  # URL segment and folder name of the page, e.g. "attention"
    path: Path  # absolute path of the script; never rendered
    rel_path: str  # path relative to the project root, POSIX form, used in messages
    source: str  # the script's text (UTF-8, newlines as in the file)
    source_bytes: bytes  # the file's exact bytes, published as the download


def check_entry_name(name: str) -> str | None:
    """Return why ``name`` cannot be an entry name, or None when it can."""
    if name in RESERVED_NAMES:
        return f"'{name}' is reserved for the site's own pages"
    if not ENTRY_NAME.match(name):
        return (
            f"'{name}' is not a clean URL segment "
            "(use lower-case letters, digits, '-' and '_', starting with a letter or digit)"
        )
    return None


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to the project root when inside it, else its bare name."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


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
        entries.append(Entry(path.stem, path.resolve(), rel, text, data))
    if found and problems is None:
        raise EntryError("; ".join(found))
    if problems is not None:
        problems.extend(found)
    return entries
