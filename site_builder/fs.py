"""Disk helpers every stage shares: safe joins, link-free reads and copies, atomic folder swaps.

Shared bottom layer: imports nothing of site_builder but ``errors``.  Records and demo
files are data: they are read only through :func:`open_regular`, which follows no link.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import hashlib
import logging
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from site_builder.errors import SiteBuilderError, UsageError

log = logging.getLogger(__name__)

_RENAME_EXCHANGE = 2  # from <linux/fs.h>


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


def copy_regular(root: Path, rel: str, target: Path) -> None:
    """Copy the regular file ``root/rel`` to the new file ``target``: a reflink where the
    file system has one (no bytes copied, yet no shared inode), else a plain copy."""
    with open_regular(root, rel) as src:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        dst = os.open(target, flags, 0o644)
        try:
            _copy_fd(src.fileno(), dst)
        finally:
            os.close(dst)


_FICLONE = 0x40049409  # from <linux/fs.h>: share extents copy-on-write (btrfs, XFS)


def _copy_fd(src: int, dst: int) -> None:
    try:
        import fcntl

        fcntl.ioctl(dst, _FICLONE, src)
        return
    except (ImportError, OSError):
        pass
    size = os.fstat(src).st_size
    copied = 0
    if hasattr(os, "copy_file_range"):
        try:
            while copied < size:
                n = os.copy_file_range(src, dst, size - copied)
                if n == 0:
                    break
                copied += n
            else:
                return
        except OSError:
            pass  # e.g. across file systems on older kernels: copy the rest by hand
    os.lseek(src, copied, os.SEEK_SET)
    os.lseek(dst, copied, os.SEEK_SET)
    while chunk := os.read(src, 1 << 20):
        os.write(dst, chunk)


def write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` without following a link there (a planted link is refused)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


@functools.cache
def _renameat2() -> Any:
    """libc's renameat2, or None (looked up once: find_library runs ldconfig, ~1 ms a call)."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return None
    return getattr(ctypes.CDLL(libc_name, use_errno=True), "renameat2", None)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two existing paths (Linux renameat2); False where unsupported."""
    renameat2 = _renameat2()
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


def replace_dir(staging: Path, target: Path, keep_old: Path | None = None) -> None:
    """Put folder ``staging`` in place of ``target`` with renames: readers see the old or the new one.

    ``keep_old``: where the previous folder goes (a path that does not exist, on the same file
    system) instead of being removed; where it cannot go there, it is removed.
    """
    if not target.exists():
        staging.rename(target)
        return
    if target.is_dir() and _exchange(staging, target):
        old = staging  # holds the previous folder now
    else:
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(old)
        staging.rename(target)  # a kill before this line is undone by recover(target)
    if keep_old is not None:
        try:
            os.rename(old, keep_old)
            return
        except OSError:
            pass
    shutil.rmtree(old, ignore_errors=True)


def adopt_dir(folder: Path, target: Path) -> str | None:
    """Move ``folder`` to ``target``, first removing whatever is there without following a link;
    return what was removed ("symbolic link", "file", "folder"), or None."""
    found = None
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(st.st_mode):
            found = "folder"
            shutil.rmtree(target)  # removes links inside it, never what they point to
        else:
            found = "symbolic link" if stat.S_ISLNK(st.st_mode) else "file"
            target.unlink()
    os.rename(folder, target)
    return found


def remove_stale(parent: Path, prefix: str) -> None:
    """Remove the scratch folders ``parent/PREFIX<pid>-*`` of builds that died (pid gone);
    those of a live build, in this process or another, are left alone."""
    for stale in parent.glob(f"{prefix}*"):
        pid = stale.name.removeprefix(prefix).partition("-")[0]
        if pid.isdigit():
            if int(pid) == os.getpid():
                continue
            try:
                os.kill(int(pid), 0)
                continue  # alive
            except ProcessLookupError:
                pass
            except OSError:
                continue  # alive, or not ours to judge
        # else: named before scratch folders carried a pid; the caller holds the project's lock
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)


SITE_MARK = ".site_builder"  # the file a site the builder wrote carries at its top


def make_records_dir(records: Path) -> None:
    """Create the records folder (if needed); a UsageError when it is a file or cannot be made."""
    try:
        records.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the records folder {records.name}: {exc.strerror}") from None


def check_replaceable(folder: Path, mark: str, what: str, shown: str | None = None) -> None:
    """Refuse (UsageError, exit 2) to replace ``folder`` unless it is absent, empty, or carries
    the builder's ``mark``: never delete a folder the builder did not make."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        if not any(folder.iterdir()):
            return
        try:
            open_regular(folder, mark).close()
            return
        except (UnsafeFileError, UnsafePathError):
            pass
        if mark == SITE_MARK and (folder / ".nojekyll").is_file() and (folder / "static" / "site.css").is_file():
            return  # a site written before sites carried the mark
    raise UsageError(
        f"{shown or folder.name} exists and is not {what} made by site_builder: refusing to replace it "
        "(move it away, or choose another folder)"
    )


def walk_files(folder: Path, prefix: str = "") -> Iterator[tuple[str, Path]]:
    """(POSIX path relative to ``folder``, path) of every file below it, symbolic links
    included (listed, never followed); nothing for a folder that cannot be read."""
    try:
        items = list(os.scandir(folder))
    except OSError:
        return
    for item in items:
        rel = f"{prefix}{item.name}"
        if item.is_dir(follow_symlinks=False):
            yield from walk_files(Path(item.path), rel + "/")
        else:
            yield rel, Path(item.path)


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to the project root when inside it, else its bare name."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name
