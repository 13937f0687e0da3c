"""The state a build leaves for the next one to compare with (see ``plan.Rebuild.describe``).

Made while the new site is staged (its renames keep every file's size, mtime and inode), from
what the build knows: the files it wrote (not a walk of the staged tree: only the search index's
folder, which Pagefind writes, is listed), the signatures checked during this build of files
not written since, each entry's keys and result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from site_builder.fs import walk_names
from site_builder.run.preload import packages_stamp
from site_builder.run.records.store import store_dir
from site_builder.run.results import LazyResult, ResultRow, result_row
from site_builder.site.downloads.archives import NOTEBOOKS_ZIP, SCRIPTS_ZIP, archive_digest
from site_builder.site.publish.search import SEARCH_DIR
from site_builder.site.rebuild.lend import (
    bibliography_keys,
    headers_fingerprint,
    lookup_base,
    lookup_key,
    parse_key,
    record_sha,
    site_fingerprint,
)
from site_builder.site.rebuild.state import RebuildInputs, Signature, SiteState, repeated_sha, saved_scripts, sha_of
from site_builder.site.rebuild.tracked import files_below, track_files, tracked_path
from site_builder.source.entries import Entry
from site_builder.source.parsed import script_text
from site_builder.site.sitefiles import EntryBuild, SiteFile, SiteInfo


class Rebuild(Protocol):
    """What a build learnt of its entries that the state keeps (plan.Rebuild)."""

    inputs: RebuildInputs
    info: SiteInfo
    builds: list[EntryBuild]
    state: SiteState | None  # the saved state this build compared with
    versions: dict[str, str]
    notebook_keys: dict[str, str]
    page_keys: dict[str, str]
    site_key: str
    page_context: str
    records_checked: bool
    trusted: dict[str, str]
    digests: dict[str, str]
    site_rows: dict[str, str]


def describe_site(rebuild: Rebuild, index: Callable[[], Iterable[bytes]] | None, staged: Path,
                  entries: list[Entry], warnings: list[str], render_warnings: list[str],
                  files: list[SiteFile], written: list[str], indexed: Callable[[], None] | None = None) -> SiteState:
    """The state of the site staged in ``staged`` (complete; its renames keep sizes, mtimes, inodes).

    ``warnings`` are said again by an unchanged rebuild, an entry's ``render_warnings`` when its
    page is reused; ``index`` makes the site's connections to save (None: the saved ones hold);
    ``written``: the staged site's files as write_site put them there (before the search index);
    ``indexed``: waits for the search index being written meanwhile (its files are listed last).
    """
    inputs = rebuild.inputs
    packages: dict[str, list[str]] = {}
    stamp, code = packages_stamp(), inputs.code
    state = SiteState(site_key=rebuild.site_key, warnings=list(warnings), packages_stamp=stamp, scripts={},
                      site_rows=rebuild.site_rows, index=index, page_context=rebuild.page_context)
    assert state.scripts is not None
    keys: list[str] = []
    lookups_base = lookup_base(inputs.settings, code, stamp) if rebuild.records_checked else ""
    previous = rebuild.state.files if rebuild.state is not None else {}
    known: dict[str, Signature] = {}  # checked during this build, not written since
    for build in rebuild.builds:
        name = build.entry.name
        # what the next build takes of the result instead of reading its record (see saved_rows)
        kept = build.run.row if isinstance(build.run, LazyResult) else result_row(build.result)
        # a result shown only has no row: its record (if any) is not the result shown
        row = kept or ResultRow(0.0, 0, 0, "", (), tuple(build.result.reads))
        packages[name] = list(row.packages)
        state.entries[name] = {
            "row": [row.duration, row.blocks_run, row.blocks_total, row.glued] if kept else None,
            "record": rebuild.trusted.get(name) or record_sha(inputs.folders.records, name),
            "packages": packages[name],
            "page": rebuild.page_keys[name], "notebook": rebuild.notebook_keys[name],
            "requires": repr(build.script.requirements),  # what the next build's page keys compare
            "result": rebuild.digests[name],
            "warnings": [w for w in render_warnings if w.startswith(f"{name}: ")],
            "lookup": lookup_key(lookups_base, build.entry) if lookups_base else "",
            "reads": list(row.reads),
            "source": repeated_sha(build.entry.content),
            # what the next discovery compares before reading the file (see known_scripts)
            "script": [build.entry.rel_path, *build.entry.signature] if build.entry.signature else None,
        }
        state.scripts[name] = _script_data(rebuild, name, parse_key(inputs.prose[name], code, build.entry), build)
        reads = [f"src:{rel}" for rel in row.reads]
        if rebuild.trusted.get(name) == state.entries[name]["record"]:
            # the record its lookup trusted, whose files and reads trusted_records checked
            record_files = files_below(rebuild.state, f"rec:{name}/") if rebuild.state is not None else []
            known.update((k, previous[k]) for k in record_files + reads if k in previous)
            keys += record_files
        else:
            keys += [f"rec:{name}/{rel}" for rel in walk_names(store_dir(inputs.folders.records, name))]
        keys += reads
    output = tracked_path(inputs.folders, "out:")  # the published folder, once: tens of thousands of files
    for file in files:  # linked from the published site: the same inode, checked by plan()
        key = f"out:{file.path}"
        if (file.root is None and file.source is not None and key in previous
                and str(file.source) == output + file.path):
            known[key] = previous[key]
    index_files = f"{SEARCH_DIR}/"  # written (or kept, or removed) by Pagefind after write_site
    keys += [f"out:{rel}" for rel in written if not rel.startswith(index_files)]
    records = {e.name: state.entries[e.name]["record"] for e in entries}
    base = sha_of(code, inputs.templates, inputs.settings,
                  headers_fingerprint(inputs.folders.demos, entries), rebuild.info.api_docs.fingerprint(),
                  inputs.references)
    state.fingerprint = site_fingerprint(base, entries, records, packages, rebuild.versions)
    state.versions = dict(rebuild.versions)
    state.archives = {f.path: archive_digest(f.data) for f in files
                      if f.path in (SCRIPTS_ZIP, NOTEBOOKS_ZIP) and f.data is not None}
    if indexed is not None:
        indexed()
    keys += [f"out:{rel}" for rel in walk_names(staged / SEARCH_DIR, index_files)]
    keys += bibliography_keys(inputs, rebuild.info)
    state.files = track_files(inputs.folders, keys, staged, known)
    return state


def _script_data(rebuild: Rebuild, name: str, key: str, build: EntryBuild) -> tuple[str, str]:
    """The parse of ``build``'s script as the state keeps it (its key, its JSON): the saved
    one when its key holds (the script was taken from it, see parsed_scripts), else made."""
    saved = saved_scripts(rebuild.inputs.folders, rebuild.state).get(name) if rebuild.state is not None else None
    if saved is not None and saved[0] == key:
        return saved
    return key, script_text(build.script)
