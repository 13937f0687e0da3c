"""The rebuild state file: what the published site was made from, and the files it tracks.

After each published build a state file in the records' cache folder (``_freeze/.cache/``,
git-ignored by its own ``.gitignore``, never published) keeps:

- the site's fingerprint: a hash of everything the site's bytes depend on (the builder's
  code and templates, Python and the rendering libraries' versions, the settings that reach
  pages, ``SOURCE_DATE_EPOCH``, every entry's source and run record, the versions of the
  packages each record lists; see ``rebuild``);
- the files it tracks: every file of the published folder, of the run records and every file
  a demo read, by size, mtime and inode, the last two kinds by ctime too (and by content when
  written moments before the save, where an mtime could not tell two writes apart), so a file
  deleted or edited by hand is noticed, and a record rewritten with its mtime put back too;
- per entry, the key of what its page and its notebook depend on, so that a rebuild links
  the unchanged pages of the published site into the staged one instead of rendering them
  (see ``rebuild_plan``);
- the warnings the build printed, said again when nothing changed.

Each entry's parse is kept beside it (``site-ID.scripts``, a line per entry: the parse's key,
the entry's name, the parse as JSON and the entry's part of the site's connections made from
that parse, see references.index), read only when something changed and kept as text
until an entry's parse is used: a site of 10,000 entries holds its parses in a third of the memory.
A parse is two JSON objects, what a rebuild plans every page with, then the cells and the rest,
decoded only when asked for (parsed.script_text, saved_script).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from site_builder.fs import relative_to_root, write_atomic, writing
from site_builder.project.folders import Folders, ensure_cache_dir
from site_builder.site.rebuild.state_text import json_parts, script_lines

STATE_FORMAT = 8  # bump when the state file's layout or meaning changes; another format is a full build
# 2: published record files are copies (1 hard-linked them: a full build makes the copies)
# 3: per entry the key of its record's lookup, the files it read (trusted_records), its parse
# 4: the parses in a file of their own (site-ID.scripts), read when something changed
# 5: (withdrawn) the pages' labels and references beside the parses; 6: as 4, never read as 5
# 7: per entry a row of its result (duration, blocks run and in all, its glued values' key)
# 8: the signature of a record's file and of a file a demo read holds its ctime (trusted_records);
#    an entry's lookup key takes its script by the digest of its content
# A file modified this close before the state was saved (fs.racy) is also kept by content.

# [size, mtime_ns, inode] (a published file), [size, mtime_ns, inode, ctime_ns] (a record's file, a
# file a demo read: see tracked._CTIME_KINDS); racy ones with their content's sha256 last
Signature = list[Any]


@dataclass
class SiteState:
    """What the last published build was made from (see the module docstring)."""

    fingerprint: str = ""
    files: dict[str, Signature] = field(default_factory=dict)  # "out:", "rec:" or "src:" + POSIX path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> record, packages, page, notebook
    site_key: str = ""
    page_context: str = ""  # what every page's key shared (rebuild.keys): its entries' keys hold under it
    warnings: list[str] = field(default_factory=list)
    packages_stamp: str = ""  # packages_stamp() when ``versions`` were found
    versions: dict[str, str] = field(default_factory=dict)  # distribution -> version ("-": absent)
    # entry -> (the key of its parse, the parse as JSON text): see saved_scripts; None until read
    scripts: dict[str, tuple[str, str]] | None = None
    site_rows: dict[str, str] = field(default_factory=dict)  # entry -> its row (references.index): see saved_scripts
    index: Callable[[], Iterable[bytes]] | None = None  # makes the site's connections (references.index) to save
    # the "Download all" archives published, by site path -> sha256 (see archives.PublishedArchive)
    archives: dict[str, str] = field(default_factory=dict)
    _sorted: tuple[dict[str, Signature], list[str]] | None = field(default=None, repr=False, compare=False)

    def sorted_files(self) -> list[str]:
        """The tracked keys, sorted (once for the ``files`` mapping it holds: see files_below)."""
        if self._sorted is None or self._sorted[0] is not self.files or len(self._sorted[1]) != len(self.files):
            self._sorted = (self.files, sorted(self.files))  # a loaded state's are in order: a linear sort
        return self._sorted[1]


@dataclass(frozen=True)
class RebuildInputs:
    """What a rebuild compares besides files, and where the files are: made once from the
    settings by ``commands/`` (``build.options.rebuild_inputs``)."""

    folders: Folders
    settings: str  # fingerprint of the settings that reach pages or decide whether a record still holds
    references: str  # fingerprint of the citation settings, which reach only the pages citing
    citation_style: str  # a CSL style's name or a .csl file of the project (tracked)
    prose: Mapping[str, str]  # each entry's prose language setting, by its name
    code: str  # the builder's code_fingerprint and templates_fingerprint (lend.py), taken once a build
    templates: str


# ---------------------------------------------------------------- where the state lives


def _site_id(folders: Folders) -> str:
    """A name for the output folder among the cache's files (a project may build to several)."""
    output = relative_to_root(folders.output, folders.root)
    if output == folders.output.name and folders.output.resolve().parent != folders.root.resolve():
        output = str(folders.output.resolve())  # outside the project: only hashed, never written out
    return sha_of(output)[:16]


def _state_path(folders: Folders) -> Path:
    return folders.cache / f"site-{_site_id(folders)}.json"


def spare_dir(folders: Folders) -> Path:
    """Where the site a build replaced is kept for the next build to stage into (see output.py)."""
    return ensure_cache_dir(folders.records, folders.root) / f"spare-{_site_id(folders)}"


def _scripts_path(folders: Folders) -> Path:
    return folders.cache / f"site-{_site_id(folders)}.scripts"


def _index_path(folders: Folders) -> Path:
    return folders.cache / f"site-{_site_id(folders)}.index"


def saved_index(folders: Folders) -> str:
    """The site's connections as the last build saved them (references.index), "" when unreadable."""
    try:  # the file is data: see index_from_data
        return _index_path(folders).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


_TRACKED_KINDS = ("out:", "rec:", "src:")
_ENTRY_LISTS = ("packages", "reads", "warnings")  # an entry's fields the builder iterates: lists of texts


def _well_formed(data: dict[str, Any]) -> bool:
    """Whether a saved state has the shapes the builder reads (a damaged file is no state: every
    page is made again, rather than the build failing on it)."""
    files, entries = data.get("files"), data.get("entries")
    if not (isinstance(files, dict) and isinstance(entries, dict) and isinstance(data.get("fingerprint"), str)
            and isinstance(data.get("warnings"), list) and all(isinstance(w, str) for w in data["warnings"])):
        return False
    # sets of types: tens of thousands of files and entries on a no-change rebuild
    if set(map(type, files.values())) - {list} or {key[:4] for key in files} - set(_TRACKED_KINDS):
        return False
    if set(map(type, entries.values())) - {dict}:
        return False
    lists = [saved.get(name, []) for saved in entries.values() for name in _ENTRY_LISTS]
    return not set(map(type, lists)) - {list} and not {type(item) for items in lists for item in items} - {str}


def load_state(folders: Folders) -> SiteState | None:
    """The saved state of the last published build to ``folders.output``, or None."""
    try:
        data = json.loads(_state_path(folders).read_bytes())
        if data.get("format") != STATE_FORMAT or not _well_formed(data):
            return None
        archives = data.get("archives", {})  # none in a state saved before it was kept
        if not isinstance(archives, dict) or set(map(type, archives.values())) - {str}:
            archives = {}
        context = data.get("page_context")  # none in a state saved before it was kept
        return SiteState(data["fingerprint"], data["files"], data["entries"], data["site_key"],
                         context if isinstance(context, str) else "", data["warnings"],
                         data["packages_stamp"], data["versions"], archives=archives)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):  # nested past the decoder
        return None


def save_state(folders: Folders, state: SiteState) -> None:
    """Write ``state`` as the saved state of the site built to ``folders.output``."""
    ensure_cache_dir(folders.records, folders.root)
    data = {"format": STATE_FORMAT, "fingerprint": state.fingerprint, "site_key": state.site_key,
            "warnings": state.warnings, "entries": state.entries, "files": state.files,
            "packages_stamp": state.packages_stamp, "versions": state.versions, "archives": state.archives,
            "page_context": state.page_context}
    scripts = state.scripts
    with writing("saving the build state (what the next build may reuse)", folders.cache, folders.root):
        if scripts is not None:  # None: a loaded state whose parses were never read: the file holds
            write_atomic(_scripts_path(folders), script_lines(scripts, state.site_rows))
        if state.index is not None:  # under a key of what it was made from: a stale one is not read
            write_atomic(_index_path(folders), state.index())
        # a killed build leaves the old state or the new one
        write_atomic(_state_path(folders), json_parts(data, ("entries", "files")))


def saved_scripts(folders: Folders, state: SiteState) -> dict[str, tuple[str, str]]:
    """Entry -> (the key of its parse, the parse as JSON text) as the last build saved them
    (read once; nothing when unreadable: every entry is parsed again)."""
    if state.scripts is None:
        state.scripts = {}
        try:
            text = _scripts_path(folders).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return state.scripts
        for line in text.split("\n"):
            key, _, rest = line.partition("\t")
            name, _, parse = rest.partition("\t")
            parse, _, row = parse.partition("\t")
            try:
                name = json.loads(name)
            except (ValueError, RecursionError):
                continue
            if isinstance(name, str) and parse:
                state.scripts[name] = (key, parse)
                if row:
                    state.site_rows[name] = row
    return state.scripts


def forget(folders: Folders) -> None:
    """Drop the saved state (the published site is about to change in a way it does not describe)."""
    try:
        _state_path(folders).unlink()
    except OSError:
        pass


def sha_of(*parts: str | bytes) -> str:
    """Hex sha256 of a list of parts (texts or bytes), each prefixed by its length."""
    # fed part by part, not joined first: a site's fingerprint has tens of thousands of parts (40% less CPU)
    digest = hashlib.sha256()
    update = digest.update
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        update(len(data).to_bytes(8, "little"))  # no two part lists hash alike
        update(data)
    return digest.hexdigest()


# The same parts hashed again within a build (or serve's next one): an entry's script, its
# lookup and parse keys are asked for by the no-change check, the plan and the new state.
repeated_sha = functools.lru_cache(maxsize=1 << 16)(sha_of)
