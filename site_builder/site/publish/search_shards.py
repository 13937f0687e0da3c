"""The search index of a large site in parts: a one-page change re-indexes one part only.

Pagefind has no incremental mode: it indexes every page it is given.  A site of more than
``SHARD_PAGES`` pages gets its index in parts ("shards") of at most that many pages each
(on average; the entries are spread by a hash of their name): the main index ``pagefind/`` holds
the marked pages of no entry and the first share of the entries, ``pagefind/shard-N/`` the others.
Each shard is Pagefind's run over its own pages (linked into a folder of their own), and the
page's search merges them into the main one (Pagefind's ``mergeIndex``): the same pages are
found, ranked by each part's own word statistics.  The main index's ``pagefind-entry.json``
lists the shards (``SHARDS_KEY``).  A smaller site keeps its one index, made as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from site_builder.fs import link_or_copy, make_dirs, make_temp_dir, racy, walk_names, write_new, writing
from site_builder.site.publish.search import SEARCH_DIR, SHARD_PREFIX, index_site, seedable
from site_builder.site.sitefiles import SiteFile

log = logging.getLogger(__name__)

SHARD_PAGES = 1000  # pages above which the index is made in parts, and the most a part holds on average
BODY_MARK = b"data-pagefind-body"  # a page holding it is indexed (that element only); the others are skipped
SHARDS_KEY = "shards"  # in the main index's pagefind-entry.json: the shards' folders, relative to it
# What the page's search reads of a merged index; the rest (Pagefind's script, UI, WebAssembly)
# is the main index's only.
_SHARD_FILES = ("pagefind-entry.json", "fragment/", "index/", "filter/")


@dataclass
class SearchPlan:
    """Which parts of the search index a build makes again, and what it keeps of the published one."""

    shards: dict[str, list[str]]  # folder of the site ("pagefind", "pagefind/shard-3") -> its pages
    stale: set[str]  # the folders to index again
    kept: list[SiteFile] = field(default_factory=list)  # the published index's files of the others
    seeds: list[SiteFile] = field(default_factory=list)  # the published content-addressed files of the stale

    def also_stale(self, parts: set[str] | None) -> SearchPlan:
        """The parts in ``parts`` (None: every part) made again too (seeded): the published index
        of those is older than the published pages."""
        stale = self.stale | (set(self.shards) if parts is None else parts & set(self.shards))
        older = [f for f in self.kept if any(in_shard(f.path, part) for part in stale)]
        kept = [f for f in self.kept if f not in older]
        return SearchPlan(self.shards, stale, kept, [f for f in older if seedable(f.path)] + self.seeds)


def shard_count(pages: int) -> int:
    """How many parts an index of ``pages`` pages is made in: 1 up to SHARD_PAGES, else the
    fewest (a power of two, so that the parts change only as the site doubles) of at most that many."""
    count = 1
    while pages > count * SHARD_PAGES:
        count *= 2
    return count


def shard_folder(number: int) -> str:
    """The site's folder of shard ``number`` (0: the main index)."""
    return SEARCH_DIR if number == 0 else f"{SEARCH_DIR}/{SHARD_PREFIX}{number}"


def shards_of(pages: Iterable[str], names: Collection[str], marked: Callable[[str], bool]) -> dict[str, list[str]]:
    """The site's pages (POSIX paths of its ``.html`` files) by the folder of the index part that
    holds them; only parts holding a page.  ``names``: the site's entries, whose pages share a
    part (spread by a hash of the name); the other pages are the main index's, with an entry at
    least, so that every part holds a page marked ``data-pagefind-body`` as every entry's page is.
    Pagefind skips the pages not so marked then, as it does in one index of them all: in parts,
    those of no entry (the index, the timings: they change with any entry) are left out
    (``marked(page)``: whether that page is marked)."""
    pages = sorted(pages)
    count = shard_count(len(pages))
    by_entry = {page: _entry_of(page, names) for page in pages} if count > 1 else {}
    if count > 1:
        pages = [page for page in pages if by_entry[page] is not None or marked(page)]
    numbers = {name: int.from_bytes(hashlib.sha1(name.encode("utf-8")).digest()[:4], "big") % count
               for name in sorted(set(by_entry.values()) - {None})}  # type: ignore[arg-type]
    if numbers and 0 not in numbers.values():
        numbers[min(numbers)] = 0
    shards: dict[str, list[str]] = {SEARCH_DIR: []}
    for page in pages:
        name = by_entry.get(page)
        shards.setdefault(shard_folder(numbers[name] if name is not None else 0), []).append(page)
    return shards


def published_pages(tracked: Iterable[str]) -> Iterator[str]:
    """The pages (``.html``) among a rebuild state's tracked files, the search index's own aside."""
    return (k[4:] for k in tracked if k.startswith("out:") and k.endswith(".html")
            and not k.startswith(f"out:{SEARCH_DIR}/"))


def _entry_of(page: str, names: Collection[str]) -> str | None:
    """The entry whose folder (``NAME/``, ``SECTION/NAME/``) holds ``page``, if any."""
    parts = page.split("/")
    for depth in range(1, len(parts)):
        name = "/".join(parts[:depth])
        if name in names:
            return name
    return None


def in_shard(rel: str, folder: str) -> bool:
    """True when the site's file ``rel`` belongs to the index part in ``folder``."""
    if folder != SEARCH_DIR:
        return rel.startswith(f"{folder}/")
    return rel.startswith(f"{SEARCH_DIR}/") and not rel.startswith(f"{SEARCH_DIR}/{SHARD_PREFIX}")


def files_by_shard(rels: Iterable[str]) -> dict[str, list[str]]:
    """The site's files ``rels`` (POSIX paths) by the index part's folder holding them (see
    in_shard), in their order; the files of no part are left out.  One pass for every part."""
    grouped: dict[str, list[str]] = {}
    shard_prefix = f"{SEARCH_DIR}/{SHARD_PREFIX}"
    for rel in rels:
        if rel.startswith(shard_prefix):
            folder, slash, _ = rel[len(SEARCH_DIR) + 1:].partition("/")
            if not slash:
                continue
            grouped.setdefault(f"{SEARCH_DIR}/{folder}", []).append(rel)
        elif rel.startswith(f"{SEARCH_DIR}/"):
            grouped.setdefault(SEARCH_DIR, []).append(rel)
    return grouped


def index_shards(site_dir: Path, plan: SearchPlan, index_root: Path | None = None,
                 stop: Callable[[], bool] | None = None) -> str | None:
    """Index ``plan``'s stale parts of the pages in ``site_dir`` into ``index_root`` (default
    ``site_dir``) + their folders; a one-line warning when it could not (see index_site)."""
    index_root = index_root or site_dir
    seeds = frozenset(f.path for f in plan.seeds)
    if list(plan.shards) == [SEARCH_DIR]:  # one index, made as it always was
        if not plan.stale:
            return None
        return index_site(site_dir, seeds, index_root / SEARCH_DIR, stop)
    made = 0
    for folder in sorted(plan.stale, key=lambda f: (f != SEARCH_DIR, f)):
        warning = _index_shard(site_dir, folder, plan.shards[folder], index_root, seeds, stop)
        if warning:  # no index rather than one that misses pages: search says it is unavailable
            shutil.rmtree(index_root / SEARCH_DIR, ignore_errors=True)
            return warning
        made += 1
    log.debug("search index: %d of %d parts made again (%s)", made, len(plan.shards), ", ".join(sorted(plan.stale)))
    _list_shards(index_root / SEARCH_DIR, sorted(f.removeprefix(f"{SEARCH_DIR}/") for f in plan.shards
                                                  if f != SEARCH_DIR))
    return None


class IndexInBackground:
    """index_shards run in a thread of its own, started at once (when a part is stale): Pagefind is
    a process of its own, so the builder goes on (describing the staged site) while it indexes.  ``output`` and
    ``root``: the output folder and the project's, as a failed write names them (fs.writing)."""

    def __init__(self, site_dir: Path, plan: SearchPlan, output: Path, root: Path) -> None:
        self._warning: str | None = None
        self._error: BaseException | None = None
        self._shown = (output, root)
        self._stopping = threading.Event()
        self._ended = 0  # time.time_ns() once index_shards returned: every file of the index is older
        self._started = time.time_ns()  # the builder describes the site from now on
        self._thread: threading.Thread | None = None
        if plan.stale:  # else nothing to index: no thread
            self._thread = threading.Thread(target=self._index, args=(site_dir, plan), name="search index",
                                            daemon=True)
            self._thread.start()

    def _index(self, site_dir: Path, plan: SearchPlan) -> None:
        try:
            self._warning = index_shards(site_dir, plan, stop=self._stopping.is_set)
        except BaseException as exc:  # raised where the builder waits for it
            self._error = exc
        finally:
            self._ended = time.time_ns()

    def close(self) -> None:
        """Stop Pagefind if it still runs (the build failed or was interrupted meanwhile) and wait
        for the thread: the staged folder is then the builder's alone."""
        if self._thread is not None:
            self._stopping.set()
            self._thread.join()

    def wait(self, warnings: list[str], signed: bool = False) -> None:
        """Wait for the index: its warning (a missing Pagefind only warns) logged and added to
        ``warnings``; what index_shards raised is raised here, once (a failed write as a WriteError).
        ``signed``: when describing the site took the racy window already (a large site), return
        once the index's files are not racily clean (fs.racy) either: the state then signs them by
        their stat alone (a racy one's digest has the next no-change build read it and save the
        whole state again: +0.3-0.6 s CPU at 10,000 entries). A small site is described at once,
        its own pages are racy still: waiting would only add a tenth of a second to its build."""
        # how long the site was described, not how long Pagefind ran: a thousand pages are
        # described in 30 ms, then the join waits; their index ending late buys no wait
        described = not racy(self._started, time.time_ns())
        if self._thread is not None:
            self._thread.join()
        error, self._error = self._error, None
        with writing("writing the search index (Pagefind)", *self._shown):
            if error is not None:
                raise error
        if self._warning:
            log.warning("%s", self._warning)
            warnings.append(self._warning)
        if signed and self._thread is not None and described:
            while racy(self._ended, time.time_ns()):
                time.sleep(0.01)  # at most a tenth of a second: the builder described the site meanwhile


def _index_shard(site_dir: Path, folder: str, pages: list[str], index_root: Path, seeds: frozenset[str],
                 stop: Callable[[], bool] | None) -> str | None:
    """Run Pagefind over ``pages`` only (linked into a folder beside ``index_root``) into ``folder``."""
    index_dir = index_root / folder
    make_dirs(index_dir)
    staging = make_temp_dir(index_root.parent, f"{index_root.name}-pages-")
    try:
        made: set[str] = set()
        for page in pages:
            parent = page.rpartition("/")[0]
            if parent not in made:
                make_dirs(staging / parent)
                made.add(parent)
            link_or_copy(site_dir / page, staging / page)
        own = frozenset(SEARCH_DIR + "/" + s.removeprefix(f"{folder}/") for s in seeds if in_shard(s, folder))
        warning = index_site(staging, own, index_dir, stop)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if warning or folder == SEARCH_DIR:
        return warning
    for rel in walk_names(index_dir):  # the main index's script and WebAssembly serve every part
        if not (rel.startswith(_SHARD_FILES) or ("/" not in rel and rel.endswith(".pf_meta"))):
            os.unlink(index_dir / rel)
    return None


def _list_shards(main: Path, shards: list[str]) -> None:
    """Name the ``shards`` in the main index's pagefind-entry.json (replaced, never written into:
    a kept file is the published site's own)."""
    entry_file = main / "pagefind-entry.json"
    entry = json.loads(entry_file.read_bytes())
    if entry.get(SHARDS_KEY) == shards:
        return
    entry[SHARDS_KEY] = shards
    os.unlink(entry_file)
    write_new(entry_file, json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
