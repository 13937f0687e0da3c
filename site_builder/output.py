"""Write stage: put the rendered site in place atomically.

The new site is written into a temporary sibling of the output folder and swapped in
with one rename, so readers (and a killed build) only ever see the old site or the new
one.  A failed build's folder is kept beside the output for inspection.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from site_builder.errors import SiteBuilderError, UsageError
from site_builder.sitefiles import SiteFile

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


def _write_tree(root: Path, files: list[SiteFile]) -> None:
    seen: set[str] = set()
    for file in files:
        target = safe_join(root, file.path)
        key = file.path.lower()  # two paths differing in case clash on some hosts
        if key in seen:
            raise UnsafePathError(f"two files of the site claim the same path: {file.path}")
        seen.add(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        if file.source is not None:
            try:
                # record files are never modified in place, so sharing their inode is safe and free
                os.link(file.source, target)
            except OSError:
                shutil.copyfile(file.source, target)
        else:
            target.write_bytes(file.data or b"")


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


def _staging_dir(output: Path) -> Path:
    parent = output.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        # The pid in the name lets a later build remove the folder if this one is killed.
        return Path(tempfile.mkdtemp(prefix=f".{output.name}.tmp-{os.getpid()}-", dir=parent))
    except OSError as exc:
        raise UsageError(f"cannot write the output folder {output.name}: {exc.strerror}") from None


def _remove_stale_staging(output: Path) -> None:
    """Remove the staging folders of builds that were killed (their process is gone)."""
    for stale in output.parent.glob(f".{output.name}.tmp-*"):
        pid = stale.name.removeprefix(f".{output.name}.tmp-").partition("-")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(stale, ignore_errors=True)
        except OSError:
            pass  # alive, or not ours to judge


def failed_dir(output: Path) -> Path:
    """Where a failed build's pages are kept for inspection."""
    return output.with_name(output.name + ".failed")


def recover(output: Path) -> None:
    """Restore the last good site if a build was killed between the two renames of the fallback swap."""
    if output.exists():
        return
    for old in sorted(output.parent.glob(f".{output.name}.old-*")):
        old.rename(output)
        log.warning("restored the last good site from an interrupted build")
        return


def write_site(
    output: Path,
    files: list[SiteFile],
    *,
    publish: bool = True,
    finish: Callable[[Path], None] | None = None,
) -> Path:
    """Write ``files`` as the new site; swap it in when ``publish``, else keep it as ``NAME.failed``.

    ``finish`` post-processes the staged folder (the search index) before it is swapped in.
    Returns the folder where the files ended up.
    """
    recover(output)
    _remove_stale_staging(output)
    staging = _staging_dir(output)
    try:
        _write_tree(staging, files)
        if finish is not None:
            finish(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if not publish:
        target = failed_dir(output)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        return target
    shutil.rmtree(failed_dir(output), ignore_errors=True)
    replace_dir(staging, output)
    return output


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


def check_writable(output: Path) -> None:
    """Fail early (exit status 2) when the output folder cannot be created or replaced."""
    parent = output.parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise UsageError(f"cannot create the output folder {output.name}: {probe.name} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"output folder is not writable: {output.name} (in a folder we cannot write to)")
    if output.exists() and not output.is_dir():
        raise UsageError(f"output path exists and is not a folder: {output.name}")
