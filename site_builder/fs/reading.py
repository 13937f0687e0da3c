"""Link-free reads: safe joins, opening and hashing regular files, listing a folder's files.

Records and demo files are data: they are read only through :func:`open_regular`, which
follows no link.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from site_builder.errors import SiteBuilderError


class UnsafePathError(SiteBuilderError):
    """A site file whose path would land outside the site folder."""


class UnsafeFileError(SiteBuilderError):
    """A file that must not be read or published; ``reason`` says why ("it is a symbolic link")."""

    def __init__(self, rel: str, reason: str) -> None:
        super().__init__(f"{rel}: {reason}")
        self.reason = reason


def _parts(rel: str) -> list[str]:
    parts = rel.split("/")
    if (not isinstance(rel, str) or rel.startswith("/") or "\\" in rel or "\0" in rel
            or any(part in ("", ".", "..") for part in parts)):
        raise UnsafePathError(f"refusing a path outside its folder: {rel!r}")
    return parts


def safe_join(root: Path, rel: str) -> Path:
    """``root / rel``, refusing absolute paths, '..' parts and anything that escapes ``root``."""
    return root.joinpath(*_parts(rel))


def open_regular(root: Path, rel: str) -> BinaryIO:
    """Open ``root/rel`` for reading, following no link below ``root``; it must be a regular file.

    Each folder is opened relative to the previous one with O_NOFOLLOW, so a link planted
    anywhere on the way (or swapped in meanwhile) cannot lead outside ``root``.  Raises
    UnsafeFileError (with the reason) or UnsafePathError.
    """
    parts = _parts(rel)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        dir_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise UnsafeFileError(rel, f"its folder cannot be opened ({exc.strerror})") from None
    fd = -1
    try:
        for part in parts[:-1]:
            fd = os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd, fd = fd, -1
        # O_NONBLOCK: opening a FIFO must not hang the build; it is refused just below.
        fd = os.open(parts[-1], os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        raise UnsafeFileError(rel, _why(root, parts, exc)) from None
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeFileError(rel, "it is not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _why(root: Path, parts: list[str], exc: OSError) -> str:
    """The user's words for a failed no-follow open: which part was a link, or what was missing."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        path = root
        for i, part in enumerate(parts):
            path = path / part
            if path.is_symlink():
                return "it is a symbolic link" if i == len(parts) - 1 else f"{part}/ is a symbolic link"
        return "it is not a regular file"
    if exc.errno == errno.ENOENT:
        return "it is missing"
    return f"it cannot be read ({exc.strerror})"


def sha256_regular(root: Path, rel: str) -> str:
    """Hex sha256 of the regular file ``root/rel`` (read as :func:`open_regular` does)."""
    digest = hashlib.sha256()
    with open_regular(root, rel) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# A file modified this close before its signature (size, mtime...) was taken could be modified
# again within the same mtime tick without its signature changing (git's "racily clean" files):
# its signature alone cannot vouch for its content.
RACY_NS = 100_000_000
COARSE_RACY_NS = 2_000_000_000  # on file systems that keep mtimes to the second


def racy(mtime_ns: int, now_ns: int) -> bool:
    """True when a file of mtime ``mtime_ns`` seen at ``now_ns`` (time.time_ns()) is racily clean
    (see RACY_NS): a signature taken then does not tell its content."""
    coarse = mtime_ns % 1_000_000_000 == 0
    return mtime_ns > now_ns - (COARSE_RACY_NS if coarse else RACY_NS)


def walk_names(folder: Path | str, prefix: str = "") -> Iterator[str]:
    """The POSIX path relative to ``folder`` of every file below it, symbolic links included
    (listed, never followed); nothing for a folder that cannot be read.  Plain strings: for
    a site of thousands of files, pathlib would cost more than the walk."""
    try:
        items = list(os.scandir(folder))
    except OSError:
        return
    for item in items:
        rel = f"{prefix}{item.name}"
        if item.is_dir(follow_symlinks=False):
            yield from walk_names(item.path, rel + "/")
        else:
            yield rel
