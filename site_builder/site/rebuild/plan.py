"""What of the published site a build that changed something can reuse, and the new state.

``Rebuild`` keys each entry's page and notebook by what they depend on; its ``plan`` links
the unchanged, intact files of the published site into the staged one instead of rendering
them, ``search_index`` keeps the published index when no page changed, and ``describe``
makes the state (``rebuild_state``) the next build compares with.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular
from site_builder.json_text import fields
from site_builder.source.expressions.places import pastes_from_other_entries
from site_builder.source.entries import Entry
from site_builder.site.rebuild.describe import describe_site
from site_builder.site.rebuild.lend import known_versions
from site_builder.site.rebuild.state import (
    RebuildInputs,
    SiteState,
    load_state,
    repeated_sha,
    save_state,
    saved_index,
    sha_of,
)
from site_builder.site.rebuild.tracked import (
    files_below,
    files_outside,
    intact_folder,
    is_intact,
    tracked_file,
    tracked_path,
)
from site_builder.site.downloads.archives import NOTEBOOKS_ZIP, SCRIPTS_ZIP, PublishedArchive
from site_builder.site.publish.search import SEARCH_DIR, seedable
from site_builder.site.publish.search_shards import (
    BODY_MARK, SearchPlan, files_by_shard, published_pages, shards_of,
)
from site_builder.site.sitefiles import (
    HOME, VALUES_FOLDER, EntryBuild, SiteFile, SiteInfo, is_section_home, notebook_path, ordered_builds, value_paths,
)

if TYPE_CHECKING:
    from site_builder.site.references.site import SiteReferences

# reST's :ref: and :doc: (gallery examples by title) and Jupyter Book's {tableofcontents} (every page's)
_REFERS_TO_ENTRIES = re.compile(r":(?:std:)?(?:ref|doc):`|\{tableofcontents\}")


@dataclass(frozen=True)
class RenderPlan:
    """Which files of the published site the staged one can link instead of rendering them."""

    reused: list[SiteFile]  # linked from the published site
    render_entries: set[str]  # entries rendered again
    site_pages: bool  # render the site-wide files (index, timings, 404, static) again
    notebooks: dict[str, Path]  # entry -> its published notebook, when only its page changed
    warnings: list[str]  # the reused pages' warnings, said again


# ---------------------------------------------------------------- the changed path


def _page_keys(ordered: list[EntryBuild], info: SiteInfo, notebook_base: str, page_base: str,
               digests: dict[str, str], root: Path, connections: SiteReferences
               ) -> tuple[dict[str, str], dict[str, str], str]:
    """Per entry the key of its notebook and of its page; and the key of the site-wide files.
    ``ordered``: the builds in site order; ``digests``: the result digests known (of records
    unchanged), completed here for every entry; ``root``: the project folder, which the results'
    folders are named relative to; ``connections``: what each page shows of the others and of
    the bibliography (labels, titles, works, terms)."""
    neighbours = [f"{b.entry.name}\0{b.script.summary}\0{b.script.title}" for b in ordered]
    notebooks: dict[str, str] = {}
    pages: dict[str, str] = {}
    # What the site-wide pages show of each entry: its index line (name, summary, outcome),
    # its timings and environment (the result), its sitemap line; not its code or prose.
    listed: list[str] = []
    site_entries = sha_of(*neighbours)
    glued = sha_of(*(b.glued_key for b in ordered))  # what {glue}`other.ipynb::name` pastes
    shown = sha_of(repr(info))  # the site-wide settings every page shows: one repr, not one per page
    values = repr(info.values)
    for i, build in enumerate(ordered):
        name = build.entry.name
        result = digests[name] = digests.get(name) or _result_digest(build, root)
        notebooks[name] = sha_of(notebook_base, name, values, repeated_sha(build.entry.content), result)
        prev = neighbours[i - 1] if i > 0 else ""
        next = neighbours[i + 1] if i + 1 < len(neighbours) else ""
        # the notebook's key covers what the script's text decides; its requirements also
        # depend on the local modules beside it
        # prose that may refer to other entries (:ref:, :doc:) links them (by title) when in the site
        others = site_entries if _REFERS_TO_ENTRIES.search(build.entry.source) else ""
        pasted = glued if pastes_from_other_entries(build.script) else ""
        pages[name] = sha_of(page_base, shown, build.script.prose, repr(build.script.requirements),
                           notebooks[name], prev, next, others, connections.page_key(name), pasted)
        listed += [neighbours[i], result, repr(build.script.thumbnail_number)]
    # the home page (index.qmd at the top) and the sections' pages are site-wide pages showing their entry's
    homes = [pages[b.entry.name] for b in ordered if is_section_home(b.entry.name, b.entry.format)]
    return notebooks, pages, sha_of(page_base, shown, *listed, connections.site_key(), pages.get(HOME, ""), *homes)


def _result_digest(build: EntryBuild, root: Path) -> str:
    """Every output, time and file of the run the page shows, the same whether just run or read back,
    and wherever the project lies: its files' folder as a path inside ``root`` (a project moved or
    checked out elsewhere keeps its pages), the absolute path only for a folder outside it."""
    result, folder, inside = build.result, str(build.result.files_dir), f"{root}/"
    if folder.startswith(inside):
        result = dataclasses.replace(result, files_dir=Path(folder[len(inside):]))
    data = json.dumps(result, sort_keys=True, default=_plain, ensure_ascii=False)
    return sha_of(data)


def _content(file: SiteFile) -> bytes:
    """The bytes of ``file``, a file on disk read without following a link (b"" when it cannot be
    read so: a published page is data)."""
    if file.data is not None:
        return file.data
    source = Path(file.source or "")
    try:
        with open_regular(source.parent, source.name) as handle:
            return handle.read()
    except (UnsafeFileError, UnsafePathError, OSError):
        return b""


def _plain(value: Any) -> Any:
    """A dataclass as its fields (no deep copy: ``dataclasses.asdict`` costs 8 ms a result), else text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return fields(value)
    return str(value)


@dataclass
class Rebuild:
    """One build's view of the last published site: what it can reuse, then the new state."""

    inputs: RebuildInputs
    info: SiteInfo
    builds: list[EntryBuild]
    state: SiteState | None = None
    versions: dict[str, str] = field(default_factory=dict)
    notebook_keys: dict[str, str] = field(default_factory=dict)
    page_keys: dict[str, str] = field(default_factory=dict)
    site_key: str = ""
    # The builds' results passed every check of a record lookup (a --frozen build checks less:
    # its records must not be trusted by the next build, see trusted_records).
    records_checked: bool = True
    # the records the lookups trusted, found with the bytes trusted (see RecordStore.confirmed_records)
    trusted: dict[str, str] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # entry -> the digest of its result
    site_rows: dict[str, str] = field(default_factory=dict)  # entry -> its row of the site's connections
    _index: Callable[[], Iterator[bytes]] | None = None  # the site's connections to save (None: the saved ones hold)

    def __post_init__(self) -> None:
        # ``state``: the saved state when the caller has loaded it already
        if not self.inputs.folders.output.is_dir():
            self.state = None
        elif self.state is None:
            self.state = load_state(self.inputs.folders)
        self.versions = known_versions(self.state)
        code = self.inputs.code
        page_base = sha_of(code, self.inputs.templates, self.inputs.settings)
        self.digests = self._saved_digests()
        ordered = ordered_builds(self.builds, self.info)
        # (imports the prose's parsers)
        from site_builder.site.references.index import saved_site_rows, site_connections

        saved = saved_site_rows(self.inputs, self.state, self.builds, self.info, code) if self.state is not None else {}
        connections, self.site_rows, self._index = site_connections(
            ordered, self.info, code, saved, lambda: saved_index(self.inputs.folders))
        self.notebook_keys, self.page_keys, self.site_key = _page_keys(
            ordered, self.info, code, page_base, self.digests, self.inputs.folders.root, connections)

    def _saved_digests(self) -> dict[str, str]:
        """The result digests of the last build for the entries whose record it trusted and
        this build trusts too (the same record bytes give the same result: no need to hash it again)."""
        if self.state is None:
            return {}
        found = {}
        for name, record in self.trusted.items():
            saved = self.state.entries.get(name, {})
            if saved.get("record") == record and isinstance(saved.get("result"), str):
                found[name] = saved["result"]
        return found

    def _intact(self, prefix: str) -> list[str] | None:
        """The tracked files of one folder (``out:NAME/``) when all are as saved (None when one is not)."""
        assert self.state is not None
        return intact_folder(self.inputs.folders, self.state, prefix)

    def plan(self) -> RenderPlan:
        """Link what is unchanged and intact in the published site; render the rest."""
        names = {b.entry.name for b in self.builds}
        if self.state is None:
            return RenderPlan([], names, True, {}, [])
        reused: list[SiteFile] = []
        render: set[str] = set()
        notebooks: dict[str, Path] = {}
        warnings: list[str] = []
        output = tracked_path(self.inputs.folders, "out:")  # a published file is output + its name
        files = self.state.files
        any_values = bool(files_below(self.state, f"out:{VALUES_FOLDER}/"))  # most sites have none
        for name in sorted(names):
            saved = self.state.entries.get(name, {})
            published = self._intact(f"out:{name}/")
            # a record its lookup trusted: trusted_records found its folder intact in this build
            records_intact = name in self.trusted or self._intact(f"rec:{name}/") is not None
            values = [k for path in value_paths(name) if (k := f"out:{path}") in files] if any_values else []
            if (saved.get("page") == self.page_keys[name] and published and records_intact
                    and all(is_intact(tracked_path(self.inputs.folders, k), files[k]) for k in values)):
                reused += [SiteFile(k[4:], source=output + k[4:], inode=files[k][2]) for k in published + values]
                warnings += saved.get("warnings", [])
                continue
            render.add(name)
            notebook = f"out:{notebook_path(name)}"
            if (saved.get("notebook") == self.notebook_keys[name] and published and records_intact
                    and notebook in published):
                notebooks[name] = tracked_file(self.inputs.folders, notebook)
        site_pages = True
        if self.state.site_key == self.site_key:
            # not made with an entry's page (the files of its folder, its values), nor the index's
            shared = files_outside(self.state, "out:", names | {SEARCH_DIR})
            if any(k.startswith(f"out:{VALUES_FOLDER}/") for k in shared):
                of_entries = {f"out:{k}" for name in names for k in value_paths(name)}
                shared = [k for k in shared if k not in of_entries]
            if shared and all(is_intact(tracked_path(self.inputs.folders, k), self.state.files[k]) for k in shared):
                reused += [SiteFile(k[4:], source=tracked_path(self.inputs.folders, k), inode=self.state.files[k][2])
                           for k in shared]
                site_pages = False
        return RenderPlan(reused, render, site_pages, notebooks, warnings)

    def published_archives(self, files: list[SiteFile]) -> dict[str, PublishedArchive]:
        """The published archives linked among ``files`` (with the site-wide pages), with the digest
        the state saved of each and the members whose source is unchanged since: a script of the
        same digest, a notebook linked from the published site (checked intact by plan)."""
        by_path = {f.path: f for f in files}
        found = {k: f for k in (SCRIPTS_ZIP, NOTEBOOKS_ZIP) if (f := by_path.get(k)) and f.source is not None}
        if self.state is None or not found:
            return {}
        output, saved = tracked_path(self.inputs.folders, "out:"), self.state.entries
        scripts, notebooks = {}, {}
        for build in self.builds:
            name = build.entry.name
            if build.entry.format == "py" and saved.get(name, {}).get("source") == repeated_sha(build.entry.content):
                scripts[f"{name}.py"] = len(build.entry.content)
            notebook, signature = by_path.get(notebook_path(name)), self.state.files.get(f"out:{notebook_path(name)}")
            if (notebook is not None and signature and notebook.root is None and not notebook.rendered
                    and str(notebook.source) == f"{output}{notebook.path}"):
                notebooks[f"{name}.ipynb"] = signature[0]
        unchanged = {SCRIPTS_ZIP: scripts, NOTEBOOKS_ZIP: notebooks}
        return {k: PublishedArchive(f.source or "", self.state.archives.get(k, ""), unchanged[k]) for k, f in found.items()}

    def search_index(self, files: list[SiteFile]) -> SearchPlan:
        """Link the rendered files equal to the published ones (in ``files``); then the parts of
        the published search index whose pages are the published pages byte for byte (and the
        same pages); the others are made again, seeded (see search_shards.py)."""
        changed: set[str] = set()
        for i, file in enumerate(files):
            if file.data is None and not file.rendered:
                continue
            key = f"out:{file.path}"
            saved = self.state.files.get(key) if self.state is not None else None
            # a string, not a Path: a full re-render links most of the site's files again (tens of
            # thousands at 10,000 entries), and a Path keeps its parts (about 6 MB more at the peak)
            path = tracked_path(self.inputs.folders, key) if saved is not None else None
            if path is not None and is_intact(path, saved) and Path(path).read_bytes() == _content(file):
                files[i] = SiteFile(file.path, source=path, inode=saved[2])  # the next build then sees it unchanged
            elif file.path.endswith(".html"):
                changed.add(file.path)
        pages = {f.path: f for f in files if f.path.endswith(".html")}
        marks: dict[str, bool] = {}  # the pages of no entry shards_of asked about: whether each is marked

        def marked(page: str) -> bool:
            marks[page] = BODY_MARK in _content(pages[page])
            return marks[page]

        names = {b.entry.name for b in self.builds}
        shards = shards_of(pages, names, marked)
        if self.state is None:
            return SearchPlan(shards, set(shards))

        def marked_before(page: str) -> bool:
            return BODY_MARK in _content(SiteFile(page, source=tracked_path(self.inputs.folders, f"out:{page}")))

        if (names == self.state.entries.keys() and pages.keys() == set(published_pages(self.state.files))
                and all(marked_before(page) == mark for page, mark in marks.items())):
            saved_shards = shards  # the same pages of the same entries, marked alike: the same parts
        else:
            saved_shards = shards_of(published_pages(self.state.files), self.state.entries.keys(), marked_before)
        index = self._intact(f"out:{SEARCH_DIR}/") or []
        plan = SearchPlan(shards, set())
        published_by_shard = files_by_shard(k[4:] for k in index)
        for folder, pages in shards.items():
            published = [SiteFile(rel, source=tracked_path(self.inputs.folders, f"out:{rel}"))
                         for rel in published_by_shard.get(folder, ())]
            if (published and pages == saved_shards.get(folder) and changed.isdisjoint(pages)
                    and shards.keys() == saved_shards.keys()):  # the main index lists the others
                plan.kept += published
            else:
                plan.stale.add(folder)
                plan.seeds += [f for f in published if seedable(f.path)]
        return plan

    def index_seeds(self, everything: bool = False) -> list[SiteFile]:
        """The published index's content-addressed files, to seed a new index (see search.py);
        none unless every file of the published index is as this builder wrote it.
        ``everything``: all its files (the published index kept as is while a new one is made)."""
        index = self._intact(f"out:{SEARCH_DIR}/") if self.state is not None else None
        return [SiteFile(k[4:], source=tracked_path(self.inputs.folders, k)) for k in index or ()
                if everything or seedable(k[4:])]

    def describe(self, staged: Path, entries: list[Entry], warnings: list[str],
                 render_warnings: list[str], files: list[SiteFile], written: list[str]) -> SiteState:
        """The state of the site staged in ``staged`` (see describe.describe_site); :meth:`save` it
        once the site is published."""
        return describe_site(self, self._index, staged, entries, warnings, render_warnings, files, written)

    def save(self, state: SiteState) -> None:
        """Remember ``state`` (see :meth:`describe`) as the published site's."""
        save_state(self.inputs.folders, state)


