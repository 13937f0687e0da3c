"""The search index made after the pages are published (``serve``): a page is shown as soon as
it is written, the search catches up afterwards.

A build asked to defer the search (``BuildOptions.defer_search``) publishes its pages with the
published index as it was, and saves a state whose fingerprint says the index is pending: no
later build takes that site as unchanged, and the next one indexes its pages again.
:func:`catch_up_search` then indexes the published pages beside the site, swaps the new
``pagefind/`` folder in with one rename and saves the state with its true fingerprint: the
site is then byte for byte what a build from scratch writes.
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
    link_or_copy,
    make_dirs,
    make_temp_dir,
    relative_to_root,
    replace_dir,
    walk_names,
)
from site_builder.project.folders import Folders
from site_builder.project.lock import project_lock
from site_builder.site.publish.search import SEARCH_DIR, IndexStopped, seedable
from site_builder.site.publish.search_shards import BODY_MARK, SearchPlan, in_shard, index_shards, published_pages, \
    shards_of
from site_builder.site.sitefiles import SiteFile
from site_builder.site.rebuild.state import SiteState, load_state, save_state
from site_builder.site.rebuild.tracked import is_intact, track_files, tracked_path

log = logging.getLogger(__name__)

PENDING = "search-pending:"  # before the fingerprint of a site whose search index is older than its pages


def mark_pending(state: SiteState, parts: set[str]) -> None:
    """Say in ``state`` that the search index's ``parts`` (their folders: search_shards.py) are not
    yet those of its pages."""
    state.fingerprint = f"{PENDING}{','.join(sorted(parts))};{state.fingerprint}"


def search_pending(state: SiteState | None) -> bool:
    """True when ``state``'s site was published before its search index was made."""
    return state is not None and state.fingerprint.startswith(PENDING)


def pending_parts(state: SiteState) -> set[str] | None:
    """The parts of the pending search index of ``state``'s site to make again (None: all of them)."""
    return _pending(state.fingerprint)[0]


def _pending(fingerprint: str) -> tuple[set[str] | None, str]:
    """A fingerprint mark_pending wrote, read back: the parts it names (None: all of them; a mark
    written before parts were named names none) and the site's true fingerprint."""
    rest = fingerprint.removeprefix(PENDING)
    parts, separator, true = rest.partition(";")
    if not separator:
        return None, rest
    return (set(parts.split(",")) if parts else None), true


def catch_up_search(folders: Folders, stop: Callable[[], bool]) -> str | None:
    """Index the published site whose index a deferring build left behind; a one-line message
    when that could not be done ("" when ``stop`` stopped it, or another build holds the lock:
    then the next build indexes), None when the index is the pages' (or was already)."""
    try:
        with project_lock(folders, wait=False):
            state = load_state(folders)
            if not search_pending(state):
                return None
            assert state is not None
            return _catch_up(folders, state, stop)
    except UsageError as exc:  # another build runs, or the output folder is not ours any longer
        log.debug("search index not caught up: %s", exc)
        return ""
    except IndexStopped:
        return ""
    except OSError as exc:
        return f"search index not caught up: {exc.strerror or exc}"


def _catch_up(folders: Folders, state: SiteState, stop: Callable[[], bool]) -> str | None:
    output = folders.output
    check_replaceable(output, SITE_MARK, "a site", relative_to_root(output, folders.root))
    published = output / SEARCH_DIR
    if os.path.islink(published) or not published.is_dir():
        return f"search index not caught up: {SEARCH_DIR}/ of the site is not the folder the build wrote"
    prefix = f"out:{SEARCH_DIR}/"
    staging = make_temp_dir(output.parent, f".{output.name}.tmp-{os.getpid()}-")
    try:
        # Pagefind reads the published pages as this builder wrote them (the very files: linked
        # into a folder of ours), never a link or a file put in the site since.
        pages = staging / "site"
        made: set[Path] = set()
        for n, (key, saved) in enumerate(state.files.items()):
            if n % 512 == 0 and stop():  # thousands of links: a save meanwhile need not wait for them
                raise IndexStopped("stopped")
            if key.startswith("out:") and key.endswith(".html") and not key.startswith(prefix):
                page = pages / key[4:]
                if page.parent not in made:
                    make_dirs(page.parent)
                    made.add(page.parent)
                link_or_copy(tracked_path(folders, key), page)
                # Checked once linked, on our own link: a page swapped for a link or another
                # file between a check and the link would otherwise reach the index.
                if not is_intact(page, saved):
                    return f"search index not caught up: {key[4:]} changed since it was published"
        index_dir = staging / SEARCH_DIR
        make_dirs(index_dir)
        shards = shards_of(published_pages(state.files), state.entries.keys(),
                           lambda p: BODY_MARK in (pages / p).read_bytes())  # our links, made above
        stale = set(shards) if (parts := pending_parts(state)) is None else parts & set(shards)
        plan = SearchPlan(shards, stale or set(shards))
        # The published index's files: all of a part whose pages did not change, else its
        # content-addressed ones (seeds), as this builder wrote them.
        for key, saved in state.files.items():
            rel = key[4:]
            kept = key.startswith(prefix) and not any(in_shard(rel, part) for part in plan.stale)
            if (kept or key.startswith(prefix) and seedable(rel)) and os.path.isfile(tracked_path(folders, key)):
                make_dirs((staging / rel).parent)
                link_or_copy(tracked_path(folders, key), staging / rel)
                if not is_intact(staging / rel, saved):  # on our own link, as the pages above
                    os.unlink(staging / rel)
                    if kept:
                        return f"search index not caught up: {rel} changed since it was published"
                elif not kept:
                    plan.seeds.append(SiteFile(rel))
        warning = index_shards(pages, plan, staging, stop)
        if warning:
            return warning
        replace_dir(index_dir, published)  # one rename (an exchange where the system has one)
        files = {k: v for k, v in state.files.items() if not k.startswith(prefix)}
        files.update(track_files(folders, [f"{prefix}{rel}" for rel in walk_names(published)]))
        state.files = files
        state.fingerprint = _pending(state.fingerprint)[1]
        save_state(folders, state)
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)

