"""Near-free rebuilds: what the published site was made from, and what of it a rebuild can reuse.

After each published build a state file in the records' cache folder (``_freeze/.cache/``,
git-ignored by its own ``.gitignore``, never published) keeps:

- the site's fingerprint: a hash of everything the site's bytes depend on (the builder's
  code and templates, Python and the rendering libraries' versions, the settings that reach
  pages, ``SOURCE_DATE_EPOCH``, every entry's source and run record, the versions of the
  packages each record lists);
- the files it tracks: every file of the published folder, of the run records and every file
  a demo read, by size, mtime and inode (and by content when written moments before the
  save, where an mtime could not tell two writes apart), so a file deleted or edited by hand
  is noticed;
- per entry, the key of what its page and its notebook depend on, so that a rebuild links
  the unchanged pages of the published site into the staged one instead of rendering them;
- the warnings the build printed, said again when nothing changed.

Nothing here imports Jinja2, Pygments, Markdown, nbformat or Pagefind: when nothing
changed, the build stops before any of them is imported.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from site_builder.config import Config
from site_builder.fs import make_dirs, relative_to_root, walk_files, write_atomic, write_new, writing
from site_builder.names import MAX_SECTION_DEPTH, stem_of
from site_builder.source.blocks import Script, script_data, script_from_data
from site_builder.source.entries import Entry, sections
from site_builder.run import records
from site_builder.run.preload import packages_stamp
from site_builder.run.records import RECORD_FILE, record_digest, store_dir
from site_builder.site.search import SEARCH_DIR, seedable
from site_builder.site.sitefiles import TEMPLATES_DIR, EntryBuild, SiteFile, SiteInfo, ordered_builds

log = logging.getLogger(__name__)

STATE_FORMAT = 3  # bump when the state file's layout or meaning changes; another format is a full build
# 2: published record files are copies (1 hard-linked them: a full build makes the copies)
# 3: per entry the key of its record's lookup, the files it read (trusted_records), its parse
CACHE_DIR = ".cache"  # inside the records folder
# Libraries whose version can change a page's bytes (and the search index).
RENDER_DISTRIBUTIONS = ("jinja2", "markupsafe", "pygments", "markdown", "nbformat", "pagefind", "pagefind_bin",
                        "pillow")  # Pillow makes the thumbnails
# A file modified this close before the state was saved could be modified again within the same
# mtime tick without its mtime changing (git's "racily clean" files): it is also kept by content.
RACY_NS = 100_000_000
COARSE_RACY_NS = 2_000_000_000  # on file systems that keep mtimes to the second

Signature = list[Any]  # [size, mtime_ns, inode] or [size, mtime_ns, inode, sha256]


@dataclass
class SiteState:
    """What the last published build was made from (see the module docstring)."""

    fingerprint: str = ""
    files: dict[str, Signature] = field(default_factory=dict)  # "out:", "rec:" or "src:" + POSIX path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> record, packages, page, notebook
    site_key: str = ""
    warnings: list[str] = field(default_factory=list)
    packages_stamp: str = ""  # packages_stamp() when ``versions`` were found
    versions: dict[str, str] = field(default_factory=dict)  # distribution -> version ("-": absent)


@dataclass(frozen=True)
class RenderPlan:
    """Which files of the published site the staged one can link instead of rendering them."""

    reused: list[SiteFile]  # linked from the published site
    render_entries: set[str]  # entries rendered again
    site_pages: bool  # render the site-wide files (index, timings, 404, static) again
    notebooks: dict[str, Path]  # entry -> its published notebook, when only its page changed
    warnings: list[str]  # the reused pages' warnings, said again


# ---------------------------------------------------------------- where the state lives


def cache_dir(config: Config) -> Path:
    """The builder's own cache folder, inside the records folder and git-ignored."""
    return config.records / CACHE_DIR


def _site_id(config: Config) -> str:
    """A name for the output folder among the cache's files (a project may build to several)."""
    output = relative_to_root(config.output, config.root)
    if output == config.output.name and config.output.resolve().parent != config.root.resolve():
        output = str(config.output.resolve())  # outside the project: only hashed, never written out
    return _sha(output)[:16]


def _state_path(config: Config) -> Path:
    return cache_dir(config) / f"site-{_site_id(config)}.json"


def spare_dir(config: Config) -> Path:
    """Where the site a build replaced is kept for the next build to stage into (see output.py)."""
    return ensure_cache_dir(config) / f"spare-{_site_id(config)}"


def load_state(config: Config) -> SiteState | None:
    """The saved state of the last published build to ``config.output``, or None."""
    try:
        data = json.loads(_state_path(config).read_bytes())
        if data.get("format") != STATE_FORMAT:
            return None
        return SiteState(data["fingerprint"], data["files"], data["entries"], data["site_key"], data["warnings"],
                         data["packages_stamp"], data["versions"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def ensure_cache_dir(config: Config) -> Path:
    """The cache folder, created with the ``.gitignore`` that keeps it out of commits."""
    folder = cache_dir(config)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        with writing("creating the builder's cache folder", folder, config.root):
            make_dirs(folder)
            write_new(ignore, b"# the site builder's cache: never commit it\n*\n")
    return folder


def _save(config: Config, state: SiteState) -> None:
    ensure_cache_dir(config)
    data = {"format": STATE_FORMAT, "fingerprint": state.fingerprint, "site_key": state.site_key,
            "warnings": state.warnings, "entries": state.entries, "files": state.files,
            "packages_stamp": state.packages_stamp, "versions": state.versions}
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8")
    with writing("saving the build state (what the next build may reuse)", cache_dir(config), config.root):
        write_atomic(_state_path(config), raw)  # a killed build leaves the old state or the new one


def forget(config: Config) -> None:
    """Drop the saved state (the published site is about to change in a way it does not describe)."""
    try:
        _state_path(config).unlink()
    except OSError:
        pass


# ---------------------------------------------------------------- fingerprints


def _sha(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))  # no two part lists hash alike
        digest.update(data)
    return digest.hexdigest()


_VERSIONS: dict[str, dict[str, str]] = {}  # packages_stamp() -> versions found: serve's rebuilds ask once


def _known_versions(saved: SiteState | None = None) -> dict[str, str]:
    """The versions found so far while the installed packages are as now (the saved state's too)."""
    stamp = packages_stamp()
    versions = _VERSIONS.setdefault(stamp, {})
    if saved is not None and saved.packages_stamp == stamp:
        for dist, version in saved.versions.items():
            versions.setdefault(dist, version)
    return versions


def _version(dist: str, cache: dict[str, str]) -> str:
    if dist not in cache:
        from importlib import metadata  # ~20 ms to import: not when the versions are known

        try:
            cache[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            cache[dist] = "-"
    return cache[dist]


def _files_signature(paths: list[tuple[str, Path]]) -> list[str]:
    # size and mtime: an edit, a checkout or a reinstall rewrites the file
    return [f"{name}:{st.st_size}:{st.st_mtime_ns}" for name, path in paths if (st := path.stat())]


def code_fingerprint(versions: dict[str, str]) -> str:
    """The builder's code, Python and the rendering libraries: what a notebook's bytes depend on."""
    package = Path(__file__).resolve().parent.parent
    code = [(p.relative_to(package).as_posix(), p) for p in sorted(package.rglob("*.py"))]
    dists = [f"{d}={_version(d, versions)}" for d in RENDER_DISTRIBUTIONS]
    behaviour = f"execution={records.EXECUTION_VERSION} record={records.RECORD_FORMAT}"
    return _sha(sys.version, behaviour, *dists, *_files_signature(code))


def templates_fingerprint() -> str:
    """Every file of the templates folder (markup, styles, scripts)."""
    files = [(p.relative_to(TEMPLATES_DIR).as_posix(), p) for p in sorted(TEMPLATES_DIR.rglob("*")) if p.is_file()]
    return _sha(*_files_signature(files))


def settings_fingerprint(config: Config) -> str:
    """The settings that reach pages or decide whether a record still holds."""
    overrides = sorted((name, repr(o)) for name, o in config.entries.items())
    wording = (config.entry_heading, config.entry_intro, repr(config.entry_url),
               config.search_placeholder, config.index_intro, config.prose)
    return _sha(config.title, repr(config.site_url), repr(config.timeout), repr(overrides), *wording,
                repr(config.output_fold_lines), repr(config.sections), repr(config.values),
                repr(config.figure_scale),
                os.environ.get("SOURCE_DATE_EPOCH", ""))



def _headers_fingerprint(config: Config, entries: list[Entry]) -> str:
    """The sections' header texts (README.txt, ...), which the index shows."""
    return _sha(repr(sections(config.demos, entries)))


def _record_sha(config: Config, name: str) -> str:
    try:
        return record_digest((store_dir(config, name) / RECORD_FILE).read_bytes())
    except OSError:
        return "-"


def _lookup_base(config: Config, code: str, stamp: str) -> str:
    """What every record lookup compares besides an entry's own files: the builder (``code``, its
    code_fingerprint: Python, the execution and record versions), the settings (timeouts), the
    installed packages (``stamp``, packages_stamp())."""
    return _sha(code, settings_fingerprint(config), stamp)


def _lookup_key(base: str, entry: Entry) -> str:
    return _sha(base, entry.rel_path, entry.source_bytes)


def _parse_key(config: Config, code: str, entry: Entry) -> str:
    """What a script's parse depends on: the builder's code, the prose setting, the script."""
    return _sha(code, config.prose_for(entry.name), entry.rel_path, entry.source_bytes)


def parsed_scripts(config: Config, entries: list[Entry], state: SiteState | None) -> dict[str, Script]:
    """The scripts the last published build parsed, for the entries whose parse would give the
    same (see _parse_key); their requirements looked up again (local modules may have moved)."""
    if state is None:
        return {}
    code = code_fingerprint(_known_versions(state))
    scripts: dict[str, Script] = {}
    for entry in entries:
        saved = state.entries.get(entry.name, {}).get("script")
        if not isinstance(saved, dict) or saved.get("key") != _parse_key(config, code, entry):
            continue
        try:
            scripts[entry.name] = script_from_data(saved["data"], entry.path.parent)
        except (KeyError, TypeError, ValueError, IndexError):
            continue  # not a script this builder saved: parse it
    return scripts


def _site_fingerprint(base: str, entries: list[Entry], records: dict[str, str],
                      packages: dict[str, list[str]], versions: dict[str, str]) -> str:
    parts = [base]
    for entry in entries:
        installed = [f"{d}={_version(d, versions)}" for d in packages.get(entry.name, [])]
        parts += [entry.name, _sha(entry.source_bytes), records[entry.name], *installed]
    return _sha(*parts)


# ---------------------------------------------------------------- tracked files


def _signature(path: Path | str) -> Signature | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _intact(path: Path | str, saved: Signature) -> bool:
    now = _signature(path)
    if now is None or now != saved[:3]:
        return False
    if len(saved) > 3:  # written just before the save: the content decides
        try:
            with open(path, "rb") as f:
                return _sha(f.read()) == saved[3]
        except OSError:
            return False
    return True


def _path(config: Config, key: str, output: Path | None = None) -> str:
    """The file a tracked key names, as a plain string: pathlib would cost more than the stat
    calls for a site of thousands of files."""
    kind, _, rel = key.partition(":")
    base = {"out": output or config.output, "rec": config.records, "src": config.root}[kind]
    return f"{base}/{rel}"


def _resolve(config: Config, key: str, output: Path | None = None) -> Path:
    return Path(_path(config, key, output))


def _track(config: Config, keys: list[str], output: Path | None = None,
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
        path = _path(config, key, output)
        signature = _signature(path)
        if signature is None:
            continue
        coarse = signature[1] % 1_000_000_000 == 0
        if signature[1] > now - (COARSE_RACY_NS if coarse else RACY_NS):
            try:
                with open(path, "rb") as f:
                    signature.append(_sha(f.read()))
            except OSError:
                continue
        files[key] = signature
    return files


def _unchanged_files(config: Config, state: SiteState) -> bool:
    """True when every tracked file is as saved and the published folder holds no other file."""
    published = {f"out:{rel}" for rel, _ in walk_files(config.output)}
    if published != {key for key in state.files if key.startswith("out:")}:
        return False
    return all(_intact(_path(config, key), saved) for key, saved in state.files.items())


def _by_folder(keys: Iterable[str]) -> dict[str, list[str]]:
    """Tracked keys by every folder they are in, down to an entry's (``out:NAME/``,
    ``rec:SECTION/NAME/``): one dictionary look-up per entry, not a scan of every file."""
    folders: dict[str, list[str]] = {}
    for key in keys:
        kind, _, rel = key.partition(":")
        parts = rel.split("/")[:-1][:MAX_SECTION_DEPTH + 1]
        for depth in range(1, len(parts) + 1):
            folders.setdefault(f"{kind}:{'/'.join(parts[:depth])}/", []).append(key)
    return folders


def _intact_folder(config: Config, state: SiteState, folders: dict[str, list[str]],
                   prefix: str) -> list[str] | None:
    """The tracked files below ``prefix`` (see _by_folder) when all are as saved, else None."""
    keys = folders.get(prefix, [])
    if not all(_intact(_path(config, k), state.files[k]) for k in keys):
        return None
    return keys


def trusted_records(config: Config, entries: list[Entry], state: SiteState | None) -> dict[str, str]:
    """Entry name -> record_digest of the record the last published build used, for each entry
    whose lookup would compare only what has not changed since (its script, its record's files,
    the files it read, and _lookup_base): RecordStore takes those records as they are."""
    if state is None:
        return {}
    base = _lookup_base(config, code_fingerprint(_known_versions(state)), packages_stamp())
    folders = _by_folder(k for k in state.files if k.startswith("rec:"))
    trusted: dict[str, str] = {}
    for entry in entries:
        saved = state.entries.get(entry.name, {})
        if not saved.get("lookup") or saved["lookup"] != _lookup_key(base, entry):
            continue
        if f"rec:{entry.name}/{RECORD_FILE}" not in state.files:
            continue
        if _intact_folder(config, state, folders, f"rec:{entry.name}/") is None:
            continue
        if all(_read_unchanged(config, state, rel) for rel in saved.get("reads", [])):
            trusted[entry.name] = saved["record"]
    return trusted


def _read_unchanged(config: Config, state: SiteState, rel: str) -> bool:
    """True when the project file ``rel`` a demo read is as saved (or still absent, as it was)."""
    key = f"src:{rel}"
    if key in state.files:
        return _intact(_path(config, key), state.files[key])
    return not os.path.lexists(_path(config, key))


# ---------------------------------------------------------------- the no-change path


def unchanged_site(config: Config, entries: list[Entry], state: SiteState | None) -> SiteState | None:
    """``state`` (the saved one, see load_state) when the published site is exactly what a build
    would write now, else None."""
    if state is None or not config.output.is_dir():
        return None
    if [e.name for e in entries] != sorted(state.entries):
        return None
    if any(state.entries[e.name].get("source") != _sha(e.source_bytes) for e in entries):
        return None  # an edited script: known before reading a thousand records
    records = {e.name: _record_sha(config, e.name) for e in entries}
    if any(records[name] != state.entries[name].get("record") for name in records):
        return None
    versions = _known_versions(state)
    base = _sha(code_fingerprint(versions), templates_fingerprint(), settings_fingerprint(config),
                _headers_fingerprint(config, entries))
    packages = {name: list(saved.get("packages", [])) for name, saved in state.entries.items()}
    if _site_fingerprint(base, entries, records, packages, versions) != state.fingerprint:
        return None
    if not _unchanged_files(config, state):
        return None
    if any(len(s) > 3 for s in state.files.values()):
        # racy files checked by content once are plain now: later checks only stat them
        state.files = _track(config, list(state.files))
        _save(config, state)
    return state


# ---------------------------------------------------------------- the changed path


def _page_keys(builds: list[EntryBuild], info: SiteInfo, notebook_base: str, page_base: str
               ) -> tuple[dict[str, str], dict[str, str], str]:
    """Per entry the key of its notebook and of its page; and the key of the site-wide files."""
    ordered = ordered_builds(builds, info)
    neighbours = [f"{b.entry.name}\0{b.script.summary}\0{b.script.title}" for b in ordered]
    notebooks: dict[str, str] = {}
    pages: dict[str, str] = {}
    # What the site-wide pages show of each entry: its index line (name, summary, outcome),
    # its timings and environment (the result), its sitemap line; not its code or prose.
    listed: list[str] = []
    for i, build in enumerate(ordered):
        name = build.entry.name
        result = _result_digest(build)
        notebooks[name] = _sha(notebook_base, name, repr(info.values), _sha(build.entry.source_bytes), result)
        prev = neighbours[i - 1] if i > 0 else ""
        next = neighbours[i + 1] if i + 1 < len(neighbours) else ""
        # the notebook's key covers what the script's text decides; its requirements also
        # depend on the local modules beside it
        pages[name] = _sha(page_base, repr(info), build.script.prose, repr(build.script.requirements),
                           notebooks[name], prev, next)
        listed += [neighbours[i], result, repr(build.script.thumbnail_number)]
    return notebooks, pages, _sha(page_base, repr(info), *listed)


def _result_digest(build: EntryBuild) -> str:
    """Every output, time and file of the run the page shows, the same whether just run or read back."""
    data = json.dumps(build.result, sort_keys=True, default=_plain, ensure_ascii=False)
    return _sha(data)


def _in_entry_folder(rel: str, names: set[str]) -> bool:
    """True when the site file ``rel`` is in the folder of an entry (``NAME/`` or ``SECTION/NAME/``)."""
    parts = rel.split("/")
    return any("/".join(parts[:i]) in names for i in range(1, len(parts)))


def _plain(value: Any) -> Any:
    """A dataclass as its fields (no deep copy: ``dataclasses.asdict`` costs 8 ms a result), else text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return str(value)


@dataclass
class Rebuild:
    """One build's view of the last published site: what it can reuse, then the new state."""

    config: Config
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
    trusted: dict[str, str] = field(default_factory=dict)  # the records the lookups trusted
    _folders: dict[str, list[str]] | None = None  # tracked files by "out:NAME/" / "rec:NAME/"

    def __post_init__(self) -> None:
        # ``state``: the saved state when the caller has loaded it already
        if not self.config.output.is_dir():
            self.state = None
        elif self.state is None:
            self.state = load_state(self.config)
        self.versions = _known_versions(self.state)
        code = code_fingerprint(self.versions)
        page_base = _sha(code, templates_fingerprint(), settings_fingerprint(self.config))
        self.notebook_keys, self.page_keys, self.site_key = _page_keys(self.builds, self.info, code, page_base)

    def _intact(self, prefix: str) -> list[str] | None:
        """The tracked files of one folder (``out:NAME/``) when all are as saved (None when one is not)."""
        assert self.state is not None
        if self._folders is None:  # grouped once: a lookup per entry, not a scan of every file
            self._folders = _by_folder(self.state.files)
        return _intact_folder(self.config, self.state, self._folders, prefix)

    def plan(self) -> RenderPlan:
        """Link what is unchanged and intact in the published site; render the rest."""
        names = {b.entry.name for b in self.builds}
        if self.state is None:
            return RenderPlan([], names, True, {}, [])
        reused: list[SiteFile] = []
        render: set[str] = set()
        notebooks: dict[str, Path] = {}
        warnings: list[str] = []
        for name in sorted(names):
            saved = self.state.entries.get(name, {})
            published = self._intact(f"out:{name}/")
            records_intact = self._intact(f"rec:{name}/") is not None
            notebook = f"out:{name}/{stem_of(name)}.ipynb"
            if saved.get("page") == self.page_keys[name] and published and records_intact:
                reused += [SiteFile(k[4:], source=_resolve(self.config, k)) for k in published]
                warnings += saved.get("warnings", [])
                continue
            render.add(name)
            if (saved.get("notebook") == self.notebook_keys[name] and published and records_intact
                    and notebook in published):
                notebooks[name] = _resolve(self.config, notebook)
        site_pages = True
        if self.state.site_key == self.site_key:
            shared = [k for k in self.state.files if k.startswith("out:")
                      and not _in_entry_folder(k[4:], names) and k[4:].split("/", 1)[0] != SEARCH_DIR]
            if shared and all(_intact(_path(self.config, k), self.state.files[k]) for k in shared):
                reused += [SiteFile(k[4:], source=_resolve(self.config, k)) for k in shared]
                site_pages = False
        return RenderPlan(reused, render, site_pages, notebooks, warnings)

    def search_index(self, files: list[SiteFile]) -> list[SiteFile] | None:
        """Link the rendered files equal to the published ones (in ``files``); then the published
        search index, when every page is the published page byte for byte (else None: re-index).
        """
        if self.state is None:
            return None
        pages_equal = True
        for i, file in enumerate(files):
            if file.data is None:
                continue
            key = f"out:{file.path}"
            path = _resolve(self.config, key)
            saved = self.state.files.get(key)
            if saved is not None and _intact(path, saved) and path.read_bytes() == file.data:
                files[i] = SiteFile(file.path, source=path)  # the next build then sees it unchanged
            elif file.path.endswith(".html"):
                pages_equal = False
        pages = {f.path for f in files if f.path.endswith(".html")}
        saved_pages = {k[4:] for k in self.state.files if k.startswith("out:") and k.endswith(".html")
                       and not k.startswith(f"out:{SEARCH_DIR}/")}
        index = self._intact(f"out:{SEARCH_DIR}/")
        if not pages_equal or pages != saved_pages or not index:
            return None
        return [SiteFile(k[4:], source=_resolve(self.config, k)) for k in index]

    def index_seeds(self) -> list[SiteFile]:
        """The published index's content-addressed files, to seed a new index (see search.py);
        none unless every file of the published index is as this builder wrote it."""
        index = self._intact(f"out:{SEARCH_DIR}/") if self.state is not None else None
        return [SiteFile(k[4:], source=_resolve(self.config, k)) for k in index or () if seedable(k[4:])]

    def describe(self, staged: Path, entries: list[Entry], warnings: list[str],
                 render_warnings: list[str], files: list[SiteFile]) -> SiteState:
        """The state of the site staged in ``staged`` (complete; its renames keep sizes, mtimes, inodes).

        ``warnings`` are said again by an unchanged rebuild, an entry's ``render_warnings``
        when its page is reused.  :meth:`save` it once the site is published.
        """
        packages: dict[str, list[str]] = {}
        stamp, code = packages_stamp(), code_fingerprint(self.versions)
        state = SiteState(site_key=self.site_key, warnings=list(warnings), packages_stamp=stamp)
        keys: list[str] = []
        lookup_base = _lookup_base(self.config, code, stamp) if self.records_checked else ""
        previous = self.state.files if self.state is not None else {}
        record_folders = _by_folder(k for k in previous if k.startswith("rec:")) if self.trusted else {}
        known: dict[str, Signature] = {}  # checked during this build, not written since
        for build in self.builds:
            name = build.entry.name
            listed = sorted(build.result.environment)  # packages (plus python/platform/blas: harmless)
            packages[name] = [d for d in listed if d not in ("python", "platform", "blas")]
            state.entries[name] = {
                "record": _record_sha(self.config, name), "packages": packages[name],
                "page": self.page_keys[name], "notebook": self.notebook_keys[name],
                "warnings": [w for w in render_warnings if w.startswith(f"{name}: ")],
                "lookup": _lookup_key(lookup_base, build.entry) if lookup_base else "",
                "reads": list(build.result.reads),
                "source": _sha(build.entry.source_bytes),
                "script": {"key": _parse_key(self.config, code, build.entry), "data": script_data(build.script)},
            }
            reads = [f"src:{rel}" for rel in build.result.reads]
            if self.trusted.get(name) == state.entries[name]["record"]:
                # the record its lookup trusted, whose files and reads trusted_records checked
                record_files = record_folders.get(f"rec:{name}/", [])
                known.update((k, previous[k]) for k in record_files + reads if k in previous)
                keys += record_files
            else:
                keys += [f"rec:{name}/{rel}" for rel, _ in walk_files(store_dir(self.config, name))]
            keys += reads
        for file in files:  # linked from the published site: the same inode, checked by plan()
            key = f"out:{file.path}"
            if (file.root is None and file.source is not None and key in previous
                    and str(file.source) == _path(self.config, key)):
                known[key] = previous[key]
        keys += [f"out:{rel}" for rel, _ in walk_files(staged)]
        state.files = _track(self.config, keys, staged, known)
        records = {e.name: state.entries[e.name]["record"] for e in entries}
        base = _sha(code, templates_fingerprint(), settings_fingerprint(self.config),
                    _headers_fingerprint(self.config, entries))
        state.fingerprint = _site_fingerprint(base, entries, records, packages, self.versions)
        state.versions = dict(self.versions)
        return state

    def save(self, state: SiteState) -> None:
        """Remember ``state`` (see :meth:`describe`) as the published site's."""
        _save(self.config, state)


@contextmanager
def captured_warnings() -> Iterator[list[str]]:
    """Collect the warnings the builder logs meanwhile (to say them again on an unchanged rebuild)."""
    messages: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    handler = _Keep(logging.WARNING)
    logger = logging.getLogger("site_builder")
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
