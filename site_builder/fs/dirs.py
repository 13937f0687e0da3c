"""Folders: atomic swaps, what a dead build left behind, what the builder may replace.

Never delete a folder the builder did not make: :func:`check_replaceable` refuses one.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

from site_builder.errors import UsageError
from site_builder.fs.reading import UnsafeFileError, UnsafePathError, open_regular
from site_builder.fs.writes import make_dirs, note_write, relative_to_root, rename, write_failure

log = logging.getLogger(__name__)

_RENAME_EXCHANGE = 2  # from <linux/fs.h>


_LEFTOVER = re.compile(r"\.tmp-(\d+)(?:-[^/]*)?$")  # NAME.tmp-PID, .NAME.tmp-PID-XXXX[.builder]
_UNNUMBERED = re.compile(r"^\..+\.tmp-[^/]*$")  # .NAME.tmp-XXXX: staging folders named before they carried a pid


def remove_dead_temporaries(folder: Path, prefix: str = "") -> list[str]:
    """Remove the temporary files and folders (``PREFIX*.tmp-PID...``) that builds which died
    (pid gone) left directly in ``folder``, and its staging folders named without a pid (``.NAME.tmp-XXXX``,
    from older builds); return their names.  Call it holding the project's lock: no other build runs."""
    removed: list[str] = []
    try:
        items = list(os.scandir(folder))
    except OSError:
        return removed
    for item in items:
        if not item.name.startswith(prefix):
            continue
        found = _LEFTOVER.search(item.name)
        if found is not None:
            if _alive(int(found.group(1))):
                continue
        elif not (_UNNUMBERED.match(item.name) and item.is_dir(follow_symlinks=False)):
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
    """libc's renameat2, or None (looked up once)."""
    import ctypes  # here: only a build that swaps a published folder needs it

    # The process's own symbols, libc's among them, as the demos' child finds prctl: no
    # ctypes.util.find_library, which runs ldconfig (1.5-7 ms of wall a build, by the load).
    return getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)


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


SITE_MARK = ".site_builder"  # the file a site the builder wrote carries at its top


def make_records_dir(records: Path, root: Path) -> None:
    """Create the records folder (if needed); a UsageError when it is a file or cannot be made
    (naming it relative to the project folder ``root``)."""
    try:
        make_dirs(records)
    except OSError as exc:
        shown = relative_to_root(records, root)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):  # the disk, not the setting
            raise write_failure(exc, "creating the records folder", f"{shown}/") from None
        raise UsageError(f"cannot create the records folder {shown}: {exc.strerror}") from None


def check_replaceable(folder: Path, mark: str, what: str, shown: str) -> None:
    """Refuse (UsageError, exit 2) to replace ``folder`` unless it is absent, empty, or carries
    the builder's ``mark``: never delete a folder the builder did not make.  ``shown``: the folder
    as messages show it (relative_to_root)."""
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
        f"{shown} exists and is not {what} made by site_builder: refusing to replace it "
        "(move it away, or choose another folder)"
    )


def link_names(folder: Path, into: Path, skip: str = "") -> dict[Path, str]:
    """Link each name of ``folder`` into ``into`` (a run folder: a notebook reads the files beside
    it, as Jupyter runs it in its own folder), but ``skip`` and names ``into`` has already;
    what is written anew there stays there.  The links made, for :func:`remove_links`."""
    links: dict[Path, str] = {}
    folder = folder.resolve()
    for name in sorted(os.listdir(folder)):
        link = into / name
        if name == skip or os.path.lexists(link):
            continue
        try:
            os.symlink(folder / name, link)
        except OSError:  # the run goes on without it, as the demo's own files would
            continue
        links[link] = str(folder / name)
    return links


def remove_links(links: dict[Path, str]) -> None:
    """Remove the links :func:`link_names` made that are still as it made them (never a file
    that took a link's place)."""
    for link, target in links.items():
        try:
            if os.path.islink(link) and os.readlink(link) == target:
                os.unlink(link)
        except OSError:
            pass  # the run removed it, or its folder: nothing of ours is left there
