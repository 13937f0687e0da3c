"""One build per project at a time: an exclusive lock on a file in the records' cache folder.

``build``, ``check`` and each ``serve`` rebuild hold it for their whole run, so a second
one waits (saying once for whom) or, told not to wait, stops with exit status 2.  The
lock is ``flock`` on an open file: the kernel drops it when its holder dies, however it
dies, so a killed build never leaves the project locked.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from site_builder.errors import UsageError
from site_builder.fs import make_records_dir, open_for_update, writing
from site_builder.project.folders import Folders, ensure_cache_dir

log = logging.getLogger(__name__)

LOCK_FILE = "build.lock"


def _holder(fd: int) -> str:
    """The pid the holder wrote into the lock file ("?" while it is still writing it)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return "?"
    return text if text.isdigit() else "?"


@contextmanager
def project_lock(folders: Folders, *, wait: bool = True) -> Iterator[None]:
    """Hold the project's build lock for the ``with`` body; wait for it, or raise UsageError."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): builds are not serialised there
        yield
        return
    make_records_dir(folders.records, folders.root)
    folder = ensure_cache_dir(folders.records, folders.root)
    # Every build writes in the records' cache folder (the state, the spare site): a lock that
    # cannot be made there is the first of the build's writes to fail, said as such.
    with writing("taking the build lock", folder, folders.root):
        fd = open_for_update(folder / LOCK_FILE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fd)
            if not wait:
                raise UsageError(f"another build of this project is running (pid {pid}); "
                                 "wait for it, or run again without --no-wait") from None
            log.warning("waiting for another build of this project (pid %s)", pid)
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:  # the pid only tells a waiting build whom it waits for
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError as exc:
            log.debug("build lock holds no pid: %s", exc)
        yield
    finally:
        os.close(fd)  # releases the lock
