"""What of the published site a build that changed something can reuse, and the new state.

``Rebuild`` keys each entry's page and notebook by what they depend on; its ``plan`` links
the unchanged, intact files of the published site into the staged one instead of rendering
them, ``search_index`` keeps the published index when no page changed, and ``describe``
makes the state (``rebuild_state``) the next build compares with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator

from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular
from site_builder.source.entries import Entry
from site_builder.site.rebuild.describe import describe_site
from site_builder.site.rebuild.keys import page_keys
from site_builder.site.rebuild.lend import content_digest, known_versions, parse_key
from site_builder.site.rebuild.state import (
    RebuildInputs,
    SiteState,
    load_state,
    save_state,
    saved_index,
    saved_scripts,
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
    VALUES_FOLDER, EntryBuild, SiteFile, SiteInfo, notebook_path, ordered_builds, value_paths,
)


@dataclass(frozen=True)
class RenderPlan:
    """Which files of the published site the staged one can link instead of rendering them."""

    reused: list[SiteFile]  # linked from the published site
    render_entries: set[str]  # entries rendered again
    site_pages: bool  # render the site-wide files (index, timings, 404, static) again
    notebooks: dict[str, Path]  # entry -> its published notebook, when only its page changed
    warnings: list[str]  # the reused pages' warnings, said again


# ---------------------------------------------------------------- the changed path


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
    page_context: str = ""  # what every page's key shares (see keys.page_keys)
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
        connections, self.site_rows, self._index, connections_key = site_connections(
            ordered, self.info, code, saved, lambda: saved_index(self.inputs.folders))
        keys = page_keys(ordered, self.info, code, page_base, self.digests, self.inputs.folders.root, connections,
                         connections_key, self.state.page_context if self.state is not None else "",
                         self._kept_keys(code))
        self.notebook_keys, self.page_keys, self.site_key, self.page_context = (
            keys.notebooks, keys.pages, keys.site, keys.context)

    def _kept_keys(self, code: str) -> Callable[[EntryBuild, str], tuple[str, str] | None]:
        """The saved (notebook, page) keys of a build whose own inputs are as the last build saved
        them (its parse by its key, its result by its digest, its requirements), else None."""
        if self.state is None:
            return lambda build, result: None
        entries, scripts, prose = self.state.entries, saved_scripts(self.inputs.folders, self.state), self.inputs.prose

        def kept(build: EntryBuild, result: str) -> tuple[str, str] | None:
            name = build.entry.name
            saved = entries.get(name, {})
            notebook, page = saved.get("notebook"), saved.get("page")
            if (type(notebook) is str and type(page) is str and saved.get("result") == result
                    and saved.get("requires") == repr(build.script.requirements)
                    and scripts.get(name, ("",))[0] == parse_key(prose[name], code, build.entry)):
                return notebook, page
            return None

        return kept

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
            entry = build.entry
            if entry.format == "py" and saved.get(name, {}).get("source") == content_digest(entry):
                # an entry discovery did not read is not read for its size: its signature's holds
                scripts[f"{name}.py"] = entry.signature[0] if entry.known_digest else len(entry.content)
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
            # found intact just now (their inode: the spare's file of that inode is that file, not stat again)
            published = [SiteFile(rel, source=tracked_path(self.inputs.folders, f"out:{rel}"),
                                  inode=self.state.files[f"out:{rel}"][2])
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

    def describe(self, staged: Path, entries: list[Entry], warnings: list[str], render_warnings: list[str],
                 files: list[SiteFile], written: list[str], indexed: Callable[[], None] | None = None) -> SiteState:
        """The state of the site staged in ``staged`` (see describe.describe_site); :meth:`save` it
        once the site is published."""
        return describe_site(self, self._index, staged, entries, warnings, render_warnings, files, written, indexed)

    def save(self, state: SiteState) -> None:
        """Remember ``state`` (see :meth:`describe`) as the published site's."""
        save_state(self.inputs.folders, state)


