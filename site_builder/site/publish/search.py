"""Full-text search: index the staged site folder with Pagefind before it is swapped in.

The index lands in ``pagefind/`` inside the site, so it is published atomically with the
pages it describes.  Without the Pagefind binary the site is still built (with a warning);
the search box then says search is unavailable.

Most of an index is content-addressed (``fragment/en_1a2b3c4.pf_fragment``: one per page;
``index/``, ``filter/`` chunks; the ``.pf_meta`` file that lists them), and Pagefind leaves
such a file alone when it already exists.  A rebuild seeds the staged ``pagefind/`` with the
published ones (see rebuild_plan.py), so Pagefind writes only what changed: creating a thousand
files costs it more than indexing a thousand pages.  The seeds the new index does not list
are removed, read from ``pagefind-entry.json`` and the ``.pf_meta`` files it names.
"""

from __future__ import annotations

import errno
import gzip
import json
import logging
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from site_builder.fs import note_write, walk_names

log = logging.getLogger(__name__)

SEARCH_DIR = "pagefind"
SHARD_PREFIX = "shard-"  # pagefind/shard-N/: a part of a large site's index (see search_shards.py)
INDEX_TIMEOUT = 120.0  # seconds; Pagefind indexes thousands of pages per second
# Line numbers are the script's, not words of the entry.
EXCLUDE_SELECTORS = ".linenos"
# Pagefind's content-addressed files: named by a hash of what they hold, never rewritten in place.
CONTENT_ADDRESSED = re.compile(r"(?:[a-z]+\.)?[A-Za-z0-9-]+_[0-9a-f]{7,}\.pf_[a-z]+")
META_MAGIC = b"pagefind_dcd"  # the start of a decompressed .pf_meta (CBOR follows)
MAX_META_DEPTH = 16  # Pagefind's meta data nests 3 deep
FULL_DISK_BYTES = 1 << 20  # less room than this after an incomplete index: the disk was full
_OS_ERROR = re.compile(r"\(os error (\d+)\)")


class IndexLayoutError(Exception):
    """The index is not laid out as this module reads it (another Pagefind format)."""


class IndexStopped(Exception):
    """Indexing was stopped before it finished (``stop`` said so): nothing of it is kept."""


def seedable(rel: str) -> bool:
    """True for a file of the published index (``pagefind/...``) that may seed the next one."""
    return rel.startswith(f"{SEARCH_DIR}/") and CONTENT_ADDRESSED.fullmatch(rel.rpartition("/")[2]) is not None


def pagefind_binary() -> Path | None:
    """The Pagefind executable the pagefind[bin] package ships, None when it is missing."""
    try:
        import pagefind_bin  # the binary ships in the PyPI package "pagefind[bin]"

        return pagefind_bin.get_executable()
    except (ImportError, FileNotFoundError):
        return None


def index_site(site_dir: Path, seeded: frozenset[str] = frozenset(), index_dir: Path | None = None,
               stop: Callable[[], bool] | None = None) -> str | None:
    """Write the Pagefind index of the pages in ``site_dir`` into ``index_dir`` (default
    ``site_dir/pagefind``); a one-line warning when it could not.

    ``seeded``: the files (``pagefind/...``) already placed there from the published index;
    those the new index does not list are removed.  Should the new index not be laid out as
    expected, it is made again from nothing.  Raises OSError when Pagefind could not write
    its files (disk full, read-only...): that is no missing feature but a failed build.
    ``stop``: polled while Pagefind runs; when it says so, Pagefind is ended and IndexStopped raised.
    """
    binary = pagefind_binary()
    if binary is None:
        return "search index not built: the Pagefind binary is not installed (pip install 'pagefind[bin]')"
    index_dir = index_dir or site_dir / SEARCH_DIR
    warning = _run_pagefind(binary, site_dir, index_dir, stop)
    if warning or not seeded:
        return warning
    try:
        _prune(index_dir, {rel.removeprefix(f"{SEARCH_DIR}/") for rel in seeded})
        return None
    except (IndexLayoutError, OSError) as exc:
        log.debug("search index made again from nothing: %s", exc)
        for rel in _own_names(index_dir):  # the other parts' folders stay
            os.unlink(index_dir / rel)
        return _run_pagefind(binary, site_dir, index_dir, stop)


def _run_pagefind(binary: Path, site_dir: Path, index_dir: Path, stop: Callable[[], bool] | None) -> str | None:
    note_write(index_dir)  # Pagefind writes there
    command = [
        str(binary),
        "--site", str(site_dir),
        "--output-path", str(index_dir),
        "--exclude-selectors", EXCLUDE_SELECTORS,
        "--keep-index-url",  # result links then work on hosts that do not serve folder indexes
        "--silent",
    ]
    try:
        returncode, stderr = _run(command, stop)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"search index not built: Pagefind did not run ({type(exc).__name__})"
    if returncode != 0:
        os_error = _OS_ERROR.search(stderr)  # Rust's io::Error: "No space left on device (os error 28)"
        if os_error:
            code = int(os_error.group(1))
            raise OSError(code, os.strerror(code))
        # Pagefind's messages name files by their staged (absolute) path: keep the last line only.
        last = (stderr.strip().splitlines() or ["no message"])[-1].replace(str(site_dir), "<site>")
        return f"search index not built: Pagefind failed ({last})"
    _check_written(index_dir)
    log.debug("search index written to %s/", SEARCH_DIR)
    return None


def _run(command: list[str], stop: Callable[[], bool] | None) -> tuple[int, str]:
    """Run ``command``; its exit status and standard error.  ``stop``: see index_site."""
    deadline = time.monotonic() + INDEX_TIMEOUT
    with subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True) as child:
        try:
            while True:
                if stop is not None and stop():
                    raise IndexStopped("stopped")
                try:  # reads standard error meanwhile: a full pipe never stalls Pagefind
                    _, stderr = child.communicate(timeout=0.05 if stop else max(0.0, deadline - time.monotonic()))
                    return child.returncode, stderr
                except subprocess.TimeoutExpired:
                    if time.monotonic() > deadline:
                        raise subprocess.TimeoutExpired(command, INDEX_TIMEOUT) from None
        finally:
            if child.poll() is None:  # stopped, timed out or interrupted: never left running
                child.kill()
                child.wait()


def _check_written(index_dir: Path) -> None:
    """Raise OSError (ENOSPC) when Pagefind's files came out empty on a full disk: Pagefind 1.x
    ignores its failed writes and exits 0, which would publish a search that cannot load."""
    try:
        complete = bool(json.loads((index_dir / "pagefind-entry.json").read_bytes()))
        complete = complete and (index_dir / "pagefind.js").stat().st_size > 0
    except (OSError, ValueError):
        complete = False
    if complete:
        return
    try:
        room = os.statvfs(index_dir).f_bavail * os.statvfs(index_dir).f_frsize
    except OSError:
        room = 0
    if room < FULL_DISK_BYTES:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(index_dir))
    raise OSError(errno.EIO, "Pagefind wrote an incomplete index", str(index_dir))


def _prune(index_dir: Path, seeded: set[str]) -> None:
    """Remove the seeds the index in ``index_dir`` does not list; IndexLayoutError when a file
    Pagefind wrote is not listed either, or a listed one is missing (the layout is not understood)."""
    present = _own_names(index_dir)
    listed = index_files(index_dir)
    unexplained = sorted(present - listed - seeded)
    missing = sorted(listed - present)
    if unexplained or missing:
        raise IndexLayoutError(f"not listed: {unexplained[:3]}, missing: {missing[:3]}")
    for rel in sorted(present - listed):
        os.unlink(index_dir / rel)


def index_files(index_dir: Path) -> set[str]:
    """Every file of the Pagefind index in ``index_dir`` (paths relative to it), as its
    ``pagefind-entry.json`` and ``.pf_meta`` files list them, the fixed-name files included."""
    entry = _json(index_dir / "pagefind-entry.json")
    languages = entry.get("languages") if isinstance(entry, dict) else None
    if not isinstance(languages, dict) or not languages:
        raise IndexLayoutError("pagefind-entry.json lists no language")
    hashes: set[str] = set()
    listed = set()
    for language in languages.values():
        meta_hash = language.get("hash") if isinstance(language, dict) else None
        if not isinstance(meta_hash, str) or not CONTENT_ADDRESSED.fullmatch(f"pagefind.{meta_hash}.pf_meta"):
            raise IndexLayoutError(f"pagefind-entry.json names no meta file: {language!r}")
        listed.add(f"pagefind.{meta_hash}.pf_meta")
        hashes.update(_strings(_meta(index_dir / f"pagefind.{meta_hash}.pf_meta")))
    for rel in _own_names(index_dir):
        name = rel.rpartition("/")[2]
        if "/" not in rel and not CONTENT_ADDRESSED.fullmatch(name):
            listed.add(rel)  # pagefind.js, the UI, the WebAssembly: rewritten by every run
        elif "/" in rel and name.rpartition(".")[0] in hashes:
            listed.add(rel)
    return listed


def _own_names(index_dir: Path) -> set[str]:
    """The files of the index in ``index_dir`` (relative), not those of the parts inside it."""
    return {rel for rel in walk_names(index_dir) if not rel.startswith(SHARD_PREFIX)}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise IndexLayoutError(f"{path.name}: {exc}") from None


def _meta(path: Path) -> Any:
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise IndexLayoutError(f"{path.name}: {exc}") from None
    if not data.startswith(META_MAGIC):
        raise IndexLayoutError(f"{path.name}: not a Pagefind meta file")
    value, end = read_cbor(data, len(META_MAGIC))
    if end != len(data):
        raise IndexLayoutError(f"{path.name}: {len(data) - end} bytes after the meta data")
    return value


def _strings(value: Any) -> set[str]:
    """Every text string inside ``value`` (the chunks' and pages' hashes among them)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return set().union(*map(_strings, value)) if value else set()
    return set()


def read_cbor(data: bytes, at: int, depth: int = 0) -> tuple[Any, int]:
    """The CBOR item (RFC 8949: the definite-length kinds Pagefind writes) at ``data[at:]``, and its
    end; a map comes back as the list of its keys and values (only the strings matter here)."""
    if at >= len(data) or depth > MAX_META_DEPTH:
        raise IndexLayoutError("meta data cut short")
    major, info = data[at] >> 5, data[at] & 31
    at += 1
    if info < 24:
        arg = info
    elif info <= 27:
        size = 1 << (info - 24)
        if at + size > len(data):
            raise IndexLayoutError("meta data cut short")
        arg, at = int.from_bytes(data[at:at + size], "big"), at + size
    else:
        raise IndexLayoutError(f"CBOR item of kind {major}/{info} (indefinite or reserved)")
    if major in (0, 1):
        return (arg if major == 0 else -1 - arg), at
    if major in (2, 3):
        if at + arg > len(data):
            raise IndexLayoutError("meta data cut short")
        raw = data[at:at + arg]
        try:
            return (raw.decode("utf-8") if major == 3 else raw), at + arg
        except UnicodeDecodeError:
            raise IndexLayoutError("meta data holds a string that is not UTF-8") from None
    if major in (4, 5):
        if arg > len(data) - at:  # every item takes a byte at least: a forged count cannot run away
            raise IndexLayoutError("meta data cut short")
        items = []
        for _ in range(arg * (2 if major == 5 else 1)):
            item, at = read_cbor(data, at, depth + 1)
            items.append(item)
        return items, at
    if major == 7 and info in (20, 21, 22):
        return {20: False, 21: True, 22: None}[info], at
    if major == 7 and info in (25, 26, 27):
        return arg, at  # a float's bits: no file name
    if major == 6:
        return read_cbor(data, at, depth + 1)  # a tag: its content
    raise IndexLayoutError(f"CBOR item of kind {major}/{info}")
