"""The project's own folders that every command shares: the builder's cache in the records folder."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from site_builder.fs import make_dirs, write_new, writing

CACHE_DIR = ".cache"  # inside the records folder


@dataclass(frozen=True)
class Folders:
    """Where a project's files are, absolute: made once from the settings by ``commands/``
    (``commands.folders_of``) and handed down, so no stage below needs the settings for them."""

    root: Path  # the project folder: messages show paths relative to it
    demos: Path
    records: Path
    output: Path

    @cached_property
    def texts(self) -> dict[str, str]:
        """Each folder's path as text ending in "/", by its field's name ("root", "output"...), made
        once: naming tens of thousands of files inside them through pathlib costs more than their stat calls."""
        return {name: f"{getattr(self, name)}/" for name in ("root", "demos", "records", "output")}

    @property
    def cache(self) -> Path:
        """The builder's own cache folder (see cache_dir)."""
        return cache_dir(self.records)


def cache_dir(records: Path) -> Path:
    """The builder's own cache folder, inside the records folder and git-ignored."""
    return records / CACHE_DIR


def ensure_cache_dir(records: Path, root: Path) -> Path:
    """The cache folder, created with the ``.gitignore`` that keeps it out of commits
    (a failure names the folder relative to the project folder ``root``)."""
    folder = cache_dir(records)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        with writing("creating the builder's cache folder", folder, root):
            make_dirs(folder)
            write_new(ignore, b"# the site builder's cache: never commit it\n*\n")
    return folder
