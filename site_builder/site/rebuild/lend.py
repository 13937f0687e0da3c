"""Near-free rebuilds: what the published site can lend a build before anything runs.

The fingerprints of what the site's bytes and the record lookups depend on; from the saved
state (``rebuild_state``): the scripts whose parse would give the same (``parsed_scripts``),
the records a lookup may take as they are (``trusted_records``), and whether the published
site is exactly what a build would write now (``unchanged_site``).  What of the site a build
that changed something reuses is ``rebuild_plan``.

Nothing here imports Jinja2, Pygments, Markdown, nbformat or Pagefind: when nothing
changed, the build stops before any of them is imported.
"""

from __future__ import annotations

import functools
import os
import sys
import zlib
from collections.abc import Callable
from operator import itemgetter
from pathlib import Path

from site_builder.fs import walk_names
from site_builder.project.folders import Folders
from site_builder.source.parsed import Script, saved_script
from site_builder.source.entries import Entry, sections
from site_builder.run.records import record_json as record_file
from site_builder.run.records import store as records
from site_builder.run.preload import installed_version, packages_stamp
from site_builder.run.records.record_json import RECORD_FILE, record_digest
from site_builder.run.records.store import store_dir
from site_builder.run.results import ResultRow
from site_builder.site.rebuild.state import RebuildInputs, SiteState, repeated_sha, save_state, saved_scripts, sha_of
from site_builder.site.rebuild.tracked import intact_folder, is_intact, track_files, tracked_path, unchanged_files
from site_builder.site.sitefiles import PACKAGE_DIR, TEMPLATES_DIR, SiteInfo

# Libraries whose version can change a page's bytes (and the search index).
RENDER_DISTRIBUTIONS = ("jinja2", "markupsafe", "pygments", "markdown-it-py", "mdit-py-plugins", "nbformat",
                        "pagefind", "pagefind_bin", "pillow")  # Pillow makes the thumbnails


# ---------------------------------------------------------------- fingerprints


_VERSIONS: dict[str, dict[str, str]] = {}  # packages_stamp() -> versions found: serve's rebuilds ask once


def known_versions(saved: SiteState | None = None) -> dict[str, str]:
    """The versions found so far while the installed packages are as now (the saved state's too)."""
    stamp = packages_stamp()
    versions = _VERSIONS.setdefault(stamp, {})
    if saved is not None and saved.packages_stamp == stamp:
        for dist, version in saved.versions.items():
            versions.setdefault(dist, version)
    return versions


def _version(dist: str, cache: dict[str, str]) -> str:
    if dist not in cache:
        cache[dist] = installed_version(dist) or "-"
    return cache[dist]


def _files_signature(paths: list[tuple[str, Path | str]]) -> list[str]:
    # size and mtime: an edit, a checkout or a reinstall rewrites the file
    return [f"{name}:{st.st_size}:{st.st_mtime_ns}" for name, path in paths if (st := os.stat(path))]


def code_fingerprint(versions: dict[str, str]) -> str:
    """The builder's code, Python and the rendering libraries: what a notebook's bytes depend on."""
    # Plain strings, in pathlib's order (by path parts): a build asks three or four times, and
    # pathlib's glob cost more than the rest of the fingerprint.
    names = sorted((rel for rel in walk_names(PACKAGE_DIR) if rel.endswith(".py")), key=lambda rel: rel.split("/"))
    code: list[tuple[str, Path | str]] = [(rel, os.path.join(PACKAGE_DIR, rel)) for rel in names]
    dists = [f"{d}={_version(d, versions)}" for d in RENDER_DISTRIBUTIONS]
    # zlib: PNGs and the archives' deflated members (taken again from the published ones)
    behaviour = f"execution={records.EXECUTION_VERSION} record={record_file.RECORD_FORMAT} zlib={zlib.ZLIB_RUNTIME_VERSION}"
    return sha_of(sys.version, behaviour, *dists, *_files_signature(code))


def templates_fingerprint() -> str:
    """Every file of the templates folder (markup, styles, scripts)."""
    files = [(p.relative_to(TEMPLATES_DIR).as_posix(), p) for p in sorted(TEMPLATES_DIR.rglob("*")) if p.is_file()]
    return sha_of(*_files_signature(files))


def bibliography_keys(inputs: RebuildInputs, info: SiteInfo) -> list[str]:
    """The tracked keys of the bibliography files the build read and of its CSL style file: a
    changed one means the site changed (each page's key says which pages show it)."""
    files = list(info.bibliography.files) if info.bibliography else []
    files += [inputs.citation_style] if inputs.citation_style.endswith(".csl") else []
    return [f"src:{rel}" for rel in dict.fromkeys(files) if os.path.isfile(inputs.folders.root / rel)]


def headers_fingerprint(demos: Path, entries: list[Entry]) -> str:
    """The sections' header texts (README.txt, ...) of the demos folder, which the index shows."""
    return sha_of(repr(sections(demos, entries)))


def record_sha(records: Path, name: str) -> str:
    """The record_digest of entry ``name``'s record.json in the records folder ("-" when it has none)."""
    try:
        return record_digest((store_dir(records, name) / RECORD_FILE).read_bytes())
    except OSError:
        return "-"


def lookup_base(settings: str, code: str, stamp: str) -> str:
    """What every record lookup compares besides an entry's own files: the builder (``code``, its
    code_fingerprint: Python, the execution and record versions), the settings (``settings``,
    RebuildInputs.settings: timeouts...), the installed packages (``stamp``, packages_stamp())."""
    return sha_of(code, settings, stamp)


def lookup_key(base: str, entry: Entry) -> str:
    """What a record lookup of ``entry`` compares: ``base`` (lookup_base) and its script (by the
    digest of its content, which the build takes anyway: the script is not hashed twice)."""
    return repeated_sha(base, entry.rel_path, content_digest(entry))


def parse_key(prose: str, code: str, entry: Entry) -> str:
    """What a script's parse depends on: the builder's code, the entry's ``prose`` setting, the script
    (by the digest of its content: an entry discovery did not read is not read for its key)."""
    return repeated_sha(code, prose, entry.rel_path, content_digest(entry))


def parsed_scripts(inputs: RebuildInputs, entries: list[Entry], state: SiteState | None,
                   parse: Callable[[Entry, str], Script]) -> dict[str, Script]:
    """The scripts the last published build parsed, for the entries whose parse would give the
    same (see parse_key; ``inputs.prose``: an entry's prose setting by its name); their
    requirements looked up again (local modules may have moved). Each is a saved_script: its
    cells decoded only if asked for (else ``parse(entry, its prose setting)``: parsed again, should
    they not be)."""
    if state is None:
        return {}
    code = inputs.code
    saved = saved_scripts(inputs.folders, state)
    scripts: dict[str, Script] = {}
    for entry in entries:
        key, text = saved.get(entry.name, ("", ""))
        if not key or key != parse_key(inputs.prose[entry.name], code, entry):
            continue
        try:
            scripts[entry.name] = saved_script(text, entry.folder, functools.partial(parse, entry, inputs.prose[entry.name]))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError):
            continue  # not a script this builder saved: parse it
    return scripts


def content_digest(entry: Entry) -> str:
    """The digest of ``entry.content`` (the state's "source"), the saved one for an entry
    discovery did not read (see known_scripts)."""
    return entry.known_digest or repeated_sha(entry.content)


def known_scripts(state: SiteState | None) -> dict[str, tuple[str, tuple[int, ...], str]]:
    """Entry name -> (its file's path from the project root, its signature, its content's digest)
    as the last build saved them (see discover's ``known``); the state is data: an entry whose
    fields have other shapes is left out (its file is read)."""
    found: dict[str, tuple[str, tuple[int, ...], str]] = {}
    for name, saved in (state.entries if state is not None else {}).items():
        script, digest = saved.get("script"), saved.get("source")
        if (isinstance(script, list) and len(script) == 5 and isinstance(script[0], str) and isinstance(digest, str)
                and digest and type(script[1]) is type(script[2]) is type(script[3]) is type(script[4]) is int):
            found[name] = (script[0], tuple(script[1:]), digest)
    return found


def site_fingerprint(base: str, entries: list[Entry], records: dict[str, str],
                      packages: dict[str, list[str]], versions: dict[str, str]) -> str:
    """Everything the site's bytes depend on: ``base`` and each entry's source, record and packages."""
    parts = [base]
    for entry in entries:
        installed = [f"{d}={_version(d, versions)}" for d in packages.get(entry.name, [])]
        parts += [entry.name, content_digest(entry), records[entry.name], *installed]
    return sha_of(*parts)


def trusted_records(inputs: RebuildInputs, entries: list[Entry], state: SiteState | None) -> dict[str, str]:
    """Entry name -> record_digest of the record the last published build used, for each entry
    whose lookup would compare only what has not changed since (its script, its record's files,
    the files it read, and lookup_base): RecordStore takes those records as they are.

    Each file of such a record's folder has the full signature the state saved (size, mtime,
    ctime, inode; its content too when it was racy): a record rewritten since, even with its
    size and mtime put back, has another ctime. So its bytes are the ones the digest was taken
    of, and they are not read again here (see RecordStore.signed)."""
    if state is None:
        return {}
    base = lookup_base(inputs.settings, inputs.code, packages_stamp())
    trusted: dict[str, str] = {}
    for entry in entries:
        saved = state.entries.get(entry.name, {})
        if not saved.get("lookup") or saved["lookup"] != lookup_key(base, entry):
            continue
        if f"rec:{entry.name}/{RECORD_FILE}" not in state.files:
            continue
        if intact_folder(inputs.folders, state, f"rec:{entry.name}/") is None:
            continue
        if all(_read_unchanged(inputs.folders, state, rel) for rel in saved.get("reads", [])):
            trusted[entry.name] = saved["record"]
    return trusted


def checked_records(state: SiteState | None, trusted: dict[str, str]) -> dict[str, str]:
    """Entry name -> record_digest of each record the last published build took a result from (it
    checked those bytes' shape, or wrote them): the same bytes are parsed without that check again,
    though their lookup still compares every input (see RecordStore.checked). Only when a record is
    ``trusted`` (trusted_records): its lookup key vouches that the builder's code, whose schema that
    check is, is the last build's. A record of an entry shown only (no row) is left out: never read;
    so is a trusted one, whose own digest already spares it the check."""
    if state is None or not trusted:
        return {}
    return {name: saved["record"] for name, saved in state.entries.items()
            if name not in trusted and saved.get("row") is not None and isinstance(saved.get("record"), str)
            and saved["record"]}


def saved_rows(state: SiteState | None, trusted: dict[str, str]) -> dict[str, ResultRow]:
    """What ``state`` kept of the results of the ``trusted`` records (see trusted_records),
    for those it kept a well-formed row of (see Rebuild.describe)."""
    rows: dict[str, ResultRow] = {}
    for name, digest in trusted.items():
        saved = (state.entries if state is not None else {}).get(name, {})
        row, packages, reads = saved.get("row"), saved.get("packages"), saved.get("reads")
        if saved.get("record") != digest or not (isinstance(row, list) and len(row) == 4):
            continue
        duration, run, total, glued = row
        # packages and reads, where present, are lists of texts (state._well_formed)
        if (type(duration) in (int, float) and type(run) is int and type(total) is int and isinstance(glued, str)
                and isinstance(packages, list) and isinstance(reads, list)):
            rows[name] = ResultRow(float(duration), run, total, glued, tuple(packages), tuple(reads))
    return rows


def _read_unchanged(folders: Folders, state: SiteState, rel: str) -> bool:
    """True when the project file ``rel`` a demo read is as saved (or still absent, as it was)."""
    key = f"src:{rel}"
    if key in state.files:
        return is_intact(tracked_path(folders, key), state.files[key])
    return not os.path.lexists(tracked_path(folders, key))


# ---------------------------------------------------------------- the no-change path


def unchanged_site(inputs: RebuildInputs, entries: list[Entry], state: SiteState | None,
                   api_docs: str = "") -> SiteState | None:
    """``state`` (the saved one, see load_state) when the published site is exactly what a build
    would write now, else None.  ``api_docs``: the loaded inventories' fingerprint."""
    folders = inputs.folders
    if state is None or not folders.output.is_dir():
        return None
    if [e.name for e in entries] != sorted(state.entries):
        return None
    if any(state.entries[e.name].get("source") != content_digest(e) for e in entries):
        return None  # an edited script: known before reading a thousand records
    # The records as saved: the fingerprint first (a changed builder or setting fails here,
    # before any file is looked at), then the files, then the records no file signature vouches for.
    records = {name: saved.get("record") for name, saved in state.entries.items()}
    if not all(isinstance(digest, str) for digest in records.values()):
        return None
    versions = known_versions(state)
    base = sha_of(inputs.code, inputs.templates, inputs.settings,
                headers_fingerprint(folders.demos, entries), api_docs, inputs.references)
    packages = {name: list(saved.get("packages", [])) for name, saved in state.entries.items()}
    if site_fingerprint(base, entries, records, packages, versions) != state.fingerprint:
        return None
    if not unchanged_files(folders, state):  # every tracked record.json among them: as saved
        return None
    if any(f"rec:{name}/{RECORD_FILE}" not in state.files and record_sha(folders.records, name) != digest
           for name, digest in records.items()):
        return None
    # scripts read now whose signature the state lacks (racy when it was saved): the next
    # discovery need not read them (their digests matched above, read after their signature)
    signed = {e.name: [e.rel_path, *e.signature] for e in entries
              if e.signature and not e.known_digest and state.entries[e.name].get("script") != [e.rel_path, *e.signature]}
    # a racy signature ends with the content's digest (each passed is_intact: none is empty)
    racy_files = str in map(type, map(itemgetter(-1), state.files.values()))
    if racy_files or signed:
        if racy_files:  # racy files checked by content once are plain now: later checks only stat them
            # (only those signed again: the others' signatures were just found to hold)
            racy_keys = [key for key, saved in state.files.items() if type(saved[-1]) is str]
            state.files.update(track_files(folders, racy_keys))
        for name, script in signed.items():
            state.entries[name]["script"] = script
        save_state(folders, state)
    return state
