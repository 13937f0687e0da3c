"""Housekeeping under the project's lock, after a build: what deleted entries left.

(What killed builds left is removed before a build: project/leftovers.py.)
- :func:`prune`, after a published build: the records of entries that are gone and the
  cached thumbnails no published figure uses.  Folders of the records folder that hold no
  record (another tool's cache, anything a person put there) are left alone.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular
from site_builder.names import MAX_SECTION_DEPTH
from site_builder.run.child.files import BUILDER_DIR
from site_builder.run.records.record_json import RECORD_FILE
from site_builder.project.folders import cache_dir
from site_builder.site.sitefiles import SiteFile
from site_builder.site.outputs.thumbnails import THUMBNAIL_DIR, THUMBNAIL_VERSION



@dataclass
class Pruned:
    """What :func:`prune` removed."""

    records: list[str] = field(default_factory=list)  # entry names
    thumbnails: int = 0

    def line(self) -> str:
        """One line for the build's output, or "" when nothing was pruned."""
        parts = []
        if self.records:
            shown = ", ".join(self.records[:5]) + (f" and {len(self.records) - 5} more" if len(self.records) > 5 else "")
            parts.append(f"the run records of {len(self.records)} deleted entr{'y' if len(self.records) == 1 else 'ies'}"
                         f" ({shown})")
        if self.thumbnails:
            parts.append(f"{self.thumbnails} cached thumbnail{'s' if self.thumbnails != 1 else ''} no figure uses")
        return f"pruned {' and '.join(parts)}" if parts else ""


def _section_folders(records: Path) -> list[Path]:
    """The records folder and its section folders (those holding records, not records themselves)."""
    found = [records]
    pending = [(records, 0)]
    while pending:
        folder, depth = pending.pop()
        if depth >= MAX_SECTION_DEPTH:
            continue
        try:
            items = list(os.scandir(folder))
        except OSError:
            continue
        for item in items:
            if (item.name[0] in "._" or not item.is_dir(follow_symlinks=False)
                    or os.path.lexists(os.path.join(item.path, BUILDER_DIR))):
                continue
            found.append(Path(item.path))
            pending.append((Path(item.path), depth + 1))
    return found


def prune(records: Path, names: set[str] | None, site_files: list[SiteFile]) -> Pruned:
    """Remove the records of entries not in ``names`` (None: keep every record) from the records
    folder ``records``, and the cached thumbnails the published ``site_files`` do not hold; call it
    after publishing, holding the lock."""
    pruned = Pruned()
    if names is not None:
        pruned.records = _prune_records(records, names)
    pruned.thumbnails = _prune_thumbnails(cache_dir(records) / "thumbnails", site_files)
    return pruned


def _prune_records(records: Path, names: set[str]) -> list[str]:
    """Remove the record folders of entries not in ``names``; return those entries' names."""
    removed = []
    parents = {"/".join(parts[:i]) for name in names for parts in [name.split("/")] for i in range(1, len(parts))}
    for folder in sorted(_section_folders(records), reverse=True):  # a section after its sub-sections
        try:
            items = list(os.scandir(folder))
        except OSError:
            continue
        # the section's name, as its entries' names begin (pathlib per item would cost more than the scan)
        section = "" if folder == records else f"{folder.relative_to(records).as_posix()}/"
        for item in items:
            if item.name[0] in "._" or not item.is_dir(follow_symlinks=False):
                continue
            name = section + item.name
            if name in names or name in parents or not _holds_record(Path(item.path)):
                continue  # an entry's, a section's (once an entry of that name), or not ours
            shutil.rmtree(item.path, ignore_errors=True)
            removed.append(name)
        if removed and folder != records:
            try:
                folder.rmdir()  # a section the pruning emptied (the builder made it); else it is not empty
            except OSError:
                pass
    return sorted(removed)


def _holds_record(folder: Path) -> bool:
    """True when ``folder`` holds a record the builder wrote (a regular file reached through no link)."""
    try:
        open_regular(folder, RECORD_FILE).close()
        return True
    except (UnsafeFileError, UnsafePathError):
        return False


def _prune_thumbnails(cache: Path, site_files: list[SiteFile]) -> int:
    """Remove the cached thumbnails (``SHA-VERSION.png``) of figures the site no longer shows."""
    used = {f.path.rpartition("/")[2].removesuffix(".png") for f in site_files if f.path.startswith(f"{THUMBNAIL_DIR}/")}
    removed = 0
    try:
        items = list(os.scandir(cache))
    except OSError:
        return 0
    for item in items:
        if not item.name.endswith(".png") or not item.is_file(follow_symlinks=False):
            continue  # temporaries are remove_leftovers' business
        if item.name[:32] not in used or not item.name.endswith(f"-{THUMBNAIL_VERSION}.png"):
            try:
                os.unlink(item.path)
                removed += 1
            except OSError:
                pass
    return removed

