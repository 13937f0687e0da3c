"""Disk helpers every stage shares: safe joins, link-free reads and copies, atomic folder swaps.

Shared bottom layer: imports nothing of site_builder but ``errors``.  Records and demo
files are data: they are read only through :func:`open_regular`, which follows no link.
Every write the builder makes goes through a function of this module, each of which calls
:func:`note_write` first (the tests make the Nth write fail there), and every failed write
reaches the user through :func:`writing` as one line: what, where, what to do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import hashlib
import logging
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from site_builder.errors import SiteBuilderError, UsageError, WriteError, one_line

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
        note_write(target)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        dst = os.open(target, flags, 0o644)
        try:
            _copy_fd(src.fileno(), dst)
        except BaseException:
            os.close(dst)
            _unlink_quietly(target)  # never a half-copied file
            raise
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
    """Write ``data`` to ``path`` without following a link there (a planted link is refused);
    a failed write leaves no partial file."""
    note_write(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        _unlink_quietly(path)
        raise


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with a file holding ``data``: readers (and a killed build) see the old
    bytes or the new ones; a failed write leaves the old file and no temporary one."""
    temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}")  # the pid: see remove_leftovers
    write_new(temporary, data)
    try:
        note_write(path)
        os.replace(temporary, path)
    except BaseException:
        _unlink_quietly(temporary)
        raise


def create_new(path: Path) -> BinaryIO:
    """A new file ``path`` opened for writing (it must not exist yet)."""
    note_write(path)
    return open(path, "xb")


def make_dirs(path: Path) -> None:
    """Create the folder ``path`` and its parents where missing."""
    if not path.is_dir():
        note_write(path)
        path.mkdir(parents=True, exist_ok=True)


def make_temp_dir(parent: Path, prefix: str) -> Path:
    """A new, empty, private folder ``parent/PREFIX<random>`` (name it with the pid: see remove_leftovers)."""
    note_write(parent / prefix)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def link_or_copy(source: Path, target: Path) -> None:
    """Make the new file ``target`` a hard link to ``source`` (both the builder's own), else a copy."""
    note_write(target)
    try:
        os.link(source, target)
    except OSError:
        try:
            shutil.copyfile(source, target)
        except BaseException:
            _unlink_quietly(target)
            raise


def rename(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target`` (one of the builder's own files or folders)."""
    note_write(target)
    os.rename(source, target)


def open_for_update(path: Path) -> int:
    """A descriptor of ``path`` (created when missing, never through a link) for reading and writing."""
    note_write(path)
    return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC, 0o644)


def note_write(path: Path) -> None:
    """Called before each write the builder makes, with the path about to be written.

    It does nothing: it is the one place where the tests make a write fail (disk full,
    read-only, ...) to check that every write site ends cleanly.
    """


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# errno -> (the state of the folder, what to do); the folder is filled into the first part.
_WRITE_FAILURES = {
    errno.ENOSPC: ("no space left on the device holding {where}", "free space and build again"),
    errno.EDQUOT: ("disk quota exceeded on the device holding {where}",
                   "free space (or have the quota raised) and build again"),
    errno.EROFS: ("{where} is on a read-only file system", "make it writable (or choose another folder) and build again"),
    errno.EACCES: ("permission denied in {where}", "give this user write access to it and build again"),
    errno.EPERM: ("operation not permitted in {where}", "give this user write access to it and build again"),
    errno.EIO: ("input/output error on the device holding {where}", "check the disk, then build again"),
}


def write_failure(exc: OSError, what: str, where: str) -> WriteError:
    """The one-line error of a failed write: the folder's state, ``what`` was being written, what to do.

    ``where`` is the folder as the user knows it (relative to the project), e.g. ``_freeze/``.
    """
    state, advice = _WRITE_FAILURES.get(exc.errno or 0, (f"{{where}}: {exc.strerror or exc}", "fix it and build again"))
    return WriteError(f"{state.format(where=where)} while {what}; {advice}")


def shown_folder(folder: Path, root: Path) -> str:
    """``folder`` as the user knows it in a message: relative to the project, with a trailing slash."""
    return relative_to_root(folder, root).rstrip("/") + "/"


@contextmanager
def writing(what: str, folder: Path, root: Path) -> Iterator[None]:
    """Turn an OSError raised by the body into a :class:`WriteError` naming ``what`` was being
    written into ``folder`` (shown relative to the project ``root``)."""
    try:
        yield
    except OSError as exc:
        raise write_failure(exc, what, shown_folder(folder, root)) from None


_LEFTOVER = re.compile(r"\.tmp-(\d+)(?:-[^/]*)?$")  # NAME.tmp-PID, .NAME.tmp-PID-XXXX[.builder]


def remove_leftovers(folder: Path, prefix: str = "") -> list[str]:
    """Remove the temporary files and folders (``PREFIX*.tmp-PID...``) that builds which died
    (pid gone) left directly in ``folder``; return their names.  Call it holding the project's lock."""
    removed: list[str] = []
    try:
        items = list(os.scandir(folder))
    except OSError:
        return removed
    for item in items:
        found = _LEFTOVER.search(item.name) if item.name.startswith(prefix) else None
        if found is None or _alive(int(found.group(1))):
            continue
        try:
            if item.is_dir(follow_symlinks=False):
                shutil.rmtree(item.path)
            else:
                os.unlink(item.path)
            removed.append(item.name)
        except OSError as exc:
            log.debug("leftover %s not removed: %s", item.name, exc)
    return removed


def _alive(pid: int) -> bool:
    """True for this process, or another that still runs (or that we may not signal)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


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
    note_write(target)
    if not target.exists():
        staging.rename(target)
        return
    if target.is_dir() and _exchange(staging, target):
        old = staging  # holds the previous folder now
    else:
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(old)
        try:
            staging.rename(target)  # a kill before this line is undone by recover(target)
        except BaseException:
            old.rename(target)  # a failure is undone at once
            raise
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
    rename(folder, target)
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
        make_dirs(records)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):  # the disk, not the setting
            raise write_failure(exc, "creating the records folder", f"{records.name}/") from None
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


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` as a message shows it: relative to the project root when inside it, else its bare
    name; a name's control characters and undecodable bytes escaped (errors.one_line)."""
    try:
        return one_line(path.resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        return one_line(path.name or path.as_posix())  # "/" has no name
