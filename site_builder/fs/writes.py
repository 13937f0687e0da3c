"""The builder's writes: new and atomic files, copies, folders, and the one-line message of a failed write.

Each write calls :func:`note_write` first (the tests make the Nth write fail there); a failed
write reaches the user through :func:`writing` as one line: what, where, what to do.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from site_builder.errors import WriteError, one_line
from site_builder.fs.reading import open_regular


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


def write_new(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or its parts in order) to ``path`` without following a link there
    (a planted link is refused); a failed write leaves no partial file."""
    note_write(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, bytes):
                f.write(data)
            else:
                f.writelines(data)
    except BaseException:
        _unlink_quietly(path)
        raise


def write_atomic(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Replace ``path`` with a file holding ``data`` (see write_new): readers (and a killed build) see the old
    bytes or the new ones; a failed write leaves the old file and no temporary one."""
    temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}")  # the pid: see remove_dead_temporaries
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
    """A new, empty, private folder ``parent/PREFIX<random>`` (name it with the pid: see remove_dead_temporaries)."""
    note_write(parent / prefix)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def link_or_copy(source: Path | str, target: Path) -> None:
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


@contextmanager
def writing(what: str, folder: Path, root: Path) -> Iterator[None]:
    """Turn an OSError raised by the body into a :class:`WriteError` naming ``what`` was being
    written into ``folder`` (shown relative to the project ``root``)."""
    try:
        yield
    except OSError as exc:
        raise write_failure(exc, what, relative_to_root(folder, root, as_folder=True)) from None


def relative_to_root(path: Path, root: Path, *, as_folder: bool = False) -> str:
    """``path`` as a message shows it (the one way to): relative to the project root when inside
    it, else its bare name, never an absolute path of this machine; a name's control characters and
    undecodable bytes escaped (errors.one_line).  ``as_folder``: with a trailing slash."""
    try:
        shown = one_line(path.resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        shown = one_line(path.name or path.as_posix())  # "/" has no name
    return shown.rstrip("/") + "/" if as_folder else shown
