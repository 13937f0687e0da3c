"""Write stage: put the rendered site in place atomically.

The new site is written into a temporary sibling of the output folder and swapped in
with one rename, so readers (and a killed build) only ever see the old site or the new
one.  A failed build's folder is kept beside the output for inspection.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from site_builder.errors import UsageError
from site_builder.fs import (
    SITE_MARK,
    check_replaceable,
    copy_regular,
    link_or_copy,
    make_dirs,
    make_temp_dir,
    recover,
    remove_dead_temporaries,
    relative_to_root,
    rename,
    replace_dir,
    safe_join,
    write_failure,
    write_new,
)
from site_builder.site.sitefiles import SiteFile

log = logging.getLogger(__name__)


def site_mark() -> SiteFile:
    """The file that marks a folder as a site the builder wrote (it replaces only those)."""
    return SiteFile(SITE_MARK, b"This folder was written by site_builder; each build replaces it as a whole.\n")


def _write_tree(root: Path, files: list[SiteFile], recycled: bool = False) -> list[str]:
    """Write ``files`` into the folder ``root``: exactly those files when it held a spare tree
    (``recycled``: its folders are reused, everything else in it is removed); their paths."""
    seen: set[str] = set()
    written: list[str] = []
    inodes: dict[str, int] = {}  # the spare's files' inodes (readdir gives them: no stat)
    present = _tree(root, inodes) if recycled else {}  # what the spare holds: path -> is a real folder
    made: set[str] = {""}  # folders known to be real folders of ``root``: one check per folder
    if not any(file.path == SITE_MARK for file in files):
        files = [*files, site_mark()]
    for file in files:
        spare = file.path in present  # a path the spare holds is a plain relative path: no check
        target = safe_join(root, file.path) if not spare else None
        key = file.path.lower()  # two paths differing in case clash on some hosts
        if key in seen:  # render skips these with a warning already; never fail the build here
            log.warning("not published: %s (another file of the site has the same name but for case)", file.path)
            continue
        seen.add(key)
        written.append(file.path)
        folder = file.path.rpartition("/")[0]
        if folder not in made:
            _make_folders(root, folder, present, made)
        if spare:
            if _same_file(file, inodes.get(file.path)):
                del present[file.path]  # the spare holds that very file already (linked two builds ago)
                continue
            target = root / file.path
            # never write into what is there: a spare's file may be an inode the published site shares
            _remove(target, present.pop(file.path))
        assert target is not None
        if file.root is not None and file.source is not None:
            copy_regular(file.root, Path(file.source).relative_to(file.root).as_posix(), target)
        elif file.source is not None:  # a file of the published site: both folders are the builder's own
            link_or_copy(file.source, target)
        else:
            write_new(target, file.data or b"")
    for rel in sorted(set(present) - made, reverse=True):  # what the new site does not hold
        _remove(root / rel, present[rel])
    return written


def _tree(root: Path, inodes: dict[str, int]) -> dict[str, bool]:
    """Every path below ``root`` (POSIX, relative) -> whether it is a real folder; links are not
    followed.  ``inodes`` gets the inode of each file (not of links)."""
    found: dict[str, bool] = {}
    pending: list[tuple[str, str | Path]] = [("", root)]
    while pending:
        prefix, folder = pending.pop()
        for item in os.scandir(folder):
            rel = f"{prefix}{item.name}"
            found[rel] = item.is_dir(follow_symlinks=False)
            if found[rel]:
                pending.append((f"{rel}/", item.path))
            elif not item.is_symlink():
                inodes[rel] = item.inode()
    return found


def _same_file(file: SiteFile, inode: int | None) -> bool:
    """True when ``file`` is to be linked from the published site and the spare's file of
    its path (``inode``) is that file already: both are the builder's own, on one file system."""
    if inode is None or file.source is None or file.root is not None or file.rendered:
        return False  # a rendered file (publish/spool.py) is a new file: never the spare's
    if file.inode is not None:  # found intact by this build (rebuild.plan): no stat again
        return file.inode == inode
    try:
        return os.lstat(file.source).st_ino == inode
    except OSError:
        return False


def _make_folders(root: Path, folder: str, present: dict[str, bool], made: set[str]) -> None:
    """Make ``root/folder`` and its parents real folders, replacing anything else in their place."""
    parts = folder.split("/")
    for depth in range(1, len(parts) + 1):
        rel = "/".join(parts[:depth])
        if rel in made:
            continue
        if rel in present and not present[rel]:  # a file or a link where a folder goes: never follow it
            _remove(root / rel, False)
            del present[rel]
        if rel not in present:
            make_dirs(root / rel)
        made.add(rel)


def _remove(path: Path, is_folder: bool) -> None:
    if is_folder:
        shutil.rmtree(path)  # removes links inside it, never what they point to
    else:
        path.unlink()


def _staging_dir(output: Path, shown: str) -> Path:
    parent = output.parent
    staging = None
    try:
        make_dirs(parent)
        # The pid in the name lets a later build remove the folder if this one is killed.
        staging = make_temp_dir(parent, f".{output.name}.tmp-{os.getpid()}-")
        # mkdtemp made it private (0700): a web server running as another user must read the
        # site, so it gets what any folder made here gets (0755 under the usual umask).
        staging.chmod(0o777 & ~_umask())
        return staging
    except OSError as exc:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        raise write_failure(exc, "staging the site", shown) from None


def _umask() -> int:
    """The process's umask, read where Linux shows it (setting it to read it is not thread-safe)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def failed_dir(output: Path) -> Path:
    """Where a failed build's pages are kept for inspection."""
    return output.with_name(output.name + ".failed")


def write_site(
    output: Path,
    files: list[SiteFile],
    *,
    publish: bool = True,
    finish: Callable[[Path, list[str]], None] | None = None,
    spare: Path | None = None,
    shown: str | None = None,
) -> Path:
    """Write ``files`` as the new site; swap it in when ``publish``, else keep it as ``NAME.failed``.

    ``finish`` post-processes the staged folder (the search index) before it is swapped in; it
    is given the paths of the files written there.
    ``spare``: where the replaced site is kept, to be staged into by the next build (its
    folders are reused: creating a thousand folders costs more than a thousand files).
    ``shown``: the output folder as messages show it (fs.relative_to_root; else its name).
    Returns the folder where the files ended up.
    """
    recover(output)
    remove_dead_temporaries(output.parent, f".{output.name}.tmp-")
    shown = f"{shown or output.name}/"
    staging = _staging_dir(output, shown)
    recycled = spare is not None and _take_spare(spare, staging)
    try:
        try:
            written = _write_tree(staging, files, recycled)
        except OSError as exc:
            raise write_failure(exc, "writing the staged site", shown) from None
        if finish is not None:
            finish(staging, written)
        if not publish:
            target = failed_dir(output)
            remove_site(target, f"{shown[:-1]}.failed/")
            try:
                rename(staging, target)
            except OSError as exc:
                raise write_failure(exc, f"keeping the failed build's pages in {shown[:-1]}.failed/", shown) from None
            return target
        remove_site(failed_dir(output), f"{shown[:-1]}.failed/")
        check_replaceable(output, SITE_MARK, "a site", shown[:-1])  # checked before the build too: still ours?
        try:
            replace_dir(staging, output, keep_old=spare)
        except OSError as exc:  # the last good site is still in place
            raise write_failure(exc, "putting the new site in place", shown) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # gone already when the swap succeeded
        raise
    return output


def _take_spare(spare: Path, staging: Path) -> bool:
    """Move the spare tree (a real folder, else removed) in place of the empty ``staging`` folder."""
    try:
        if not os.path.isdir(spare) or os.path.islink(spare):
            if os.path.lexists(spare):
                os.unlink(spare)
            return False
        os.rename(spare, staging)  # onto an empty folder: replaces it (same file system only)
        return True
    except OSError as exc:
        log.debug("spare site not reused: %s", exc)
        shutil.rmtree(spare, ignore_errors=True)
        return False


def remove_site(folder: Path, shown: str) -> None:
    """Remove ``folder`` if it is a site the builder wrote; leave anything else alone.
    ``shown``: the folder as messages show it (fs.relative_to_root)."""
    try:
        check_replaceable(folder, SITE_MARK, "a site", shown)
    except UsageError:
        log.warning("%s was left alone: it is not a folder site_builder wrote", shown)
        return
    shutil.rmtree(folder, ignore_errors=True)


def check_writable(output: Path, root: Path) -> None:
    """Fail early (exit status 2) when the output folder cannot be created, or is a folder
    the builder did not write (it replaces only its own); messages name paths relative to ``root``."""
    shown = relative_to_root(output, root)
    parent = output.parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise UsageError(f"cannot create the output folder {shown}: "
                         f"{relative_to_root(probe, root)} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"output folder is not writable: {shown} (in a folder we cannot write to)")
    if output.exists() and not output.is_dir():
        raise UsageError(f"output path exists and is not a folder: {shown}")
    check_replaceable(output, SITE_MARK, "a site", shown)
    check_replaceable(failed_dir(output), SITE_MARK, "a site", shown + ".failed")
