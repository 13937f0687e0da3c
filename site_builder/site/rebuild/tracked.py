"""The files a published site's state tracks: each named by a key ("out:", "rec:" or "src:" + its
POSIX path in the published folder, the records folder or the project), kept by its signature
(see state.SiteState.files); whether they are as saved, found with as few calls per file as can be:
a site of 10,000 entries tracks about 50,000 of them.
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Collection, Iterable
from pathlib import Path

from site_builder.fs import racy, walk_names
from site_builder.project.folders import Folders
from site_builder.site.rebuild.state import Signature, SiteState, sha_of

# The kinds of tracked files whose signature holds the ctime too: a record's files and the files a
# demo read. A published file's leaves it out: each build links the files it reuses into the new
# site, and a link changes an inode's ctime.
_CTIME_KINDS = ("rec:", "src:")


def _signature(path: Path | str, kind: str) -> Signature | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if kind in _CTIME_KINDS:
        return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def is_intact(path: Path | str, saved: Signature) -> bool:
    """True when the file at ``path`` still has the ``saved`` signature (and content, when racy).
    The saved signature is data: one of another shape is never intact."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if len(saved) == 3:  # most files: a published one, not racy
        return saved == [st.st_size, st.st_mtime_ns, st.st_ino]
    if len(saved) == 4 and type(saved[3]) is int:  # a record's or a read file's, not racy
        return saved == [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
    if len(saved) not in (4, 5) or not isinstance(saved[-1], str):
        return False
    stat = saved[:-1]  # written just before the save: the content decides too
    if stat != [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns][:len(stat)]:
        return False
    try:
        with open(path, "rb") as f:
            return sha_of(f.read()) == saved[-1]
    except OSError:
        return False


def tracked_path(folders: Folders, key: str, output: Path | None = None) -> str:
    """The file a tracked key names (``output``: where the published files are, when not
    ``folders.output``), as a plain string: pathlib would cost more than the stat calls for a
    site of thousands of files (the folders' texts are made once: Folders.texts)."""
    kind = key[:4]
    if output is not None and kind == "out:":
        return f"{output}/{key[4:]}"
    return folders.texts[_FOLDER_OF[kind]] + key[4:]


_FOLDER_OF = {"out:": "output", "rec:": "records", "src:": "root"}  # the Folders.texts a tracked kind is in


def tracked_file(folders: Folders, key: str, output: Path | None = None) -> Path:
    """The file a tracked key names, as a Path (see tracked_path)."""
    return Path(tracked_path(folders, key, output))


def track_files(folders: Folders, keys: list[str], output: Path | None = None,
           known: dict[str, Signature] | None = None) -> dict[str, Signature]:
    """Signatures of the files named by ``keys``; racy ones with their content hash too.

    ``output``: where the published files are now (a staged folder keeps them when renamed).
    ``known``: signatures checked during this build, of files not written since.
    """
    now = time.time_ns()
    files: dict[str, Signature] = {}
    for key in keys:
        if known and key in known:
            files[key] = known[key]
            continue
        path = tracked_path(folders, key, output)
        signature = _signature(path, key[:4])
        if signature is None:
            continue
        if racy(max(signature[1], signature[3]) if len(signature) > 3 else signature[1], now):
            try:
                with open(path, "rb") as f:
                    signature.append(sha_of(f.read()))
            except OSError:
                continue
        files[key] = signature
    return files


def unchanged_files(folders: Folders, state: SiteState) -> bool:
    """True when every tracked file is as saved and the published folder holds no other file."""
    published = 0  # a walk names each file once: no set of tens of thousands of names is needed
    for rel in walk_names(folders.output):
        if f"out:{rel}" not in state.files:
            return False
        published += 1
    if published != sum(1 for key in state.files if key.startswith("out:")):
        return False
    return _all_intact((tracked_path(folders, key), saved) for key, saved in state.files.items())


def _all_intact(files: Iterable[tuple[str, Signature]]) -> bool:
    """True when every (path, saved signature) of ``files`` is intact (see is_intact), whose two
    plain cases are inlined here: the 40,000-50,000 files a rebuild of a 10,000-entry site checks
    cost 15-30 ms more through a call each."""
    lstat = os.lstat
    for path, saved in files:
        with_ctime = len(saved) == 4 and type(saved[3]) is int  # a record's file, a file a demo read
        if len(saved) != 3 and not with_ctime:  # racy: the content decides too
            if not is_intact(path, saved):
                return False
            continue
        try:
            st = lstat(path)
        except OSError:
            return False
        if (st.st_size != saved[0] or st.st_mtime_ns != saved[1] or st.st_ino != saved[2]
                or (with_ctime and st.st_ctime_ns != saved[3])):
            return False
    return True


def files_below(state: SiteState, prefix: str) -> list[str]:
    """The tracked keys below the folder ``prefix`` (``out:NAME/``, ``rec:SECTION/NAME/``), in
    order: two bisections of the keys sorted once, not a scan of every file."""
    keys = state.sorted_files()
    start = bisect.bisect_left(keys, prefix)
    # the keys starting with "kind:folder/" are those from it up to "kind:folder0" ("0" follows "/")
    return keys[start:bisect.bisect_left(keys, f"{prefix[:-1]}0", start)]


def files_outside(state: SiteState, prefix: str, folders: Collection[str]) -> list[str]:
    """The tracked keys starting with ``prefix`` (``out:``) below none of ``folders`` (paths after
    the prefix, without the last "/"), in order: a folder's keys are skipped with one bisection,
    not looked at one by one."""
    keys = state.sorted_files()
    found: list[str] = []
    start = len(prefix)
    i, end = bisect.bisect_left(keys, prefix), bisect.bisect_left(keys, f"{prefix[:-1]}{chr(ord(prefix[-1]) + 1)}")
    while i < end:
        key = keys[i]
        slash = key.find("/", start)
        while slash != -1 and key[start:slash] not in folders:
            slash = key.find("/", slash + 1)
        if slash == -1:
            found.append(key)
            i += 1
        else:  # below the folder key[:slash]: its keys end before key[:slash] + "0" (see files_below)
            i = bisect.bisect_left(keys, f"{key[:slash]}0", i)
    return found


def intact_folder(folders: Folders, state: SiteState, prefix: str) -> list[str] | None:
    """The tracked files below ``prefix`` (see files_below) when all are as saved, else None."""
    keys = files_below(state, prefix)
    files, folder = state.files, folders.texts[_FOLDER_OF[prefix[:4]]]  # tracked_path, for one kind
    return keys if _all_intact((folder + key[4:], files[key]) for key in keys) else None
