"""Disk helpers every stage shares: safe joins, atomic folder swaps, paths for messages.

Shared bottom layer: imports nothing of site_builder but ``errors``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import shutil
from pathlib import Path

from site_builder.errors import SiteBuilderError

log = logging.getLogger(__name__)

_RENAME_EXCHANGE = 2  # from <linux/fs.h>


class UnsafePathError(SiteBuilderError):
    """A site file whose path would land outside the site folder."""


def safe_join(root: Path, rel: str) -> Path:
    """``root / rel``, refusing absolute paths, '..' parts and anything that escapes ``root``."""
    parts = rel.split("/")
    if rel.startswith("/") or "\\" in rel or any(part in ("", ".", "..") for part in parts):
        raise UnsafePathError(f"refusing to write outside the site folder: {rel!r}")
    return root.joinpath(*parts)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two existing paths (Linux renameat2); False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd = -100
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0


def recover(output: Path) -> None:
    """Restore the last good site if a build was killed between the two renames of the fallback swap."""
    if output.exists():
        return
    for old in sorted(output.parent.glob(f".{output.name}.old-*")):
        old.rename(output)
        log.warning("restored the last good site from an interrupted build")
        return


def replace_dir(staging: Path, target: Path) -> None:
    """Put folder ``staging`` in place of ``target`` with renames: readers see the old or the new one."""
    if not target.exists():
        staging.rename(target)
    elif target.is_dir() and _exchange(staging, target):
        shutil.rmtree(staging)  # holds the previous folder now
    else:
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(old)
        staging.rename(target)  # a kill before this line is undone by recover(target)
        shutil.rmtree(old, ignore_errors=True)


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to the project root when inside it, else its bare name."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name
