"""Discover stage: find the demos and turn each file into an :class:`Entry`.

An entry is a Python script (``*.py``, plain or Jupytext percent), a notebook (``*.ipynb``),
a Jupytext Markdown notebook (``*.md`` whose front matter has ``jupytext:`` or
``kernelspec:``) or a Quarto document (``*.qmd``); any other Markdown file is a *page* (prose
only, nothing run) when the ``pages`` setting asks for them, else no entry. Sub-folders of the demos folder are
*sections* (the Sphinx-Gallery convention): the entry ``demos/basics/plot.py`` is named
``basics/plot`` and its page is ``basics/plot/``. Folders whose name starts with ``_`` or
``.`` hold helpers, never entries. A file's entry name is its URL segment (names.url_segment).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from site_builder.errors import EntryError, UsageError, one_line
from site_builder.fs import racy, relative_to_root
from site_builder.patterns import PathPattern
from site_builder.names import HOME_DOCUMENT, MAX_SECTION_DEPTH, check_entry_name, section_of, stem_of, url_segment
from site_builder.source.quarto.shortcodes import expand_includes, place_of, read_variables, remap_frames, \
    uses_variables

log = logging.getLogger(__name__)

# A section's header text, first found wins (Sphinx-Gallery reads README.txt / GALLERY_HEADER.rst).
SECTION_HEADERS = ("GALLERY_HEADER.rst", "README.rst", "README.txt", "README.md")
# The suffixes an entry's file may have.
ENTRY_SUFFIXES = (".py", ".ipynb", ".md", ".qmd")
# Those whose build depends on the file's bytes alone, and discovery needs no text of: a file with
# the signature it had when the last build read it is not read again (see discover's ``known``).
_SIGNED_SUFFIXES = (".py", ".ipynb")
# A Jupytext Markdown notebook: YAML front matter naming jupytext or a kernelspec.
_NOTEBOOK_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?:(?!---[ \t]*\r?$).*\r?\n)*?(?:jupytext|kernelspec):",
                                    re.MULTILINE)


@dataclass(frozen=True)
class Entry:
    """One entry: a demo script and the page it becomes."""

    name: str  # section-qualified name, the page's folder: "attention", "basics/plot"
    path: Path  # absolute path of the script; never rendered
    rel_path: str  # path relative to the project root, POSIX form, used in messages
    source: str  # the script's text (UTF-8, newlines as in the file; a .qmd's with its includes)
    source_bytes: bytes  # the file's exact bytes, published as the download
    demos_path: str = ""  # the path in the demos folder, '/'-separated ("basics/plot.py")
    # a .qmd's includes: each line of ``source``'s file and line (() : the file's own lines)
    origins: tuple[tuple[str, int], ...] = field(default=(), repr=False)
    variables: str = field(default="", repr=False)  # a .qmd's project variables (_variables.yml) when it uses one
    # (size, mtime_ns, ctime_ns, inode) of the file as discovery found it before reading it, as
    # git's index keeps them; () when they cannot vouch for its bytes (a link, a file modified
    # within an mtime tick of then: fs.racy) or were not asked for
    signature: tuple[int, ...] = field(default=(), compare=False, repr=False)
    # the digest of ``content`` the last build saved, for an entry discovery did not read (its file
    # had the signature it had then): its text is read only when first asked for (see __getattr__)
    known_digest: str = field(default="", compare=False, repr=False)

    @classmethod
    def _unread(cls, name: str, path: str, rel_path: str, demos_path: str, signature: tuple[int, ...],
                digest: str) -> Entry:
        """An entry whose text (and ``path``, made from the string ``path``) are made when first
        asked for (see known_digest)."""
        entry = cls.__new__(cls)
        # its fields set as dataclasses' frozen __init__ does, in one call (10,000 entries on a no-change rebuild)
        entry.__dict__.update(name=name, _path=path, rel_path=rel_path, demos_path=demos_path, signature=signature,
                              known_digest=digest)
        return entry

    def _read(self, data: bytes, text: str) -> Entry:
        """This entry, which discovery did not read, with its file's ``data`` and ``text``: its
        ``path`` still made when first asked for."""
        entry = Entry._unread(self.name, self.__dict__["_path"], self.rel_path, self.demos_path, self.signature, "")
        if "path" in self.__dict__:
            object.__setattr__(entry, "path", self.path)
        object.__setattr__(entry, "source_bytes", data)
        object.__setattr__(entry, "source", text)
        return entry

    def __getattr__(self, name: str) -> Any:
        # reached only for the path and text of an entry discovery did not read (see known_digest)
        if name == "path" and "_path" in self.__dict__:
            object.__setattr__(self, "path", Path(self.__dict__["_path"]))
            return self.path
        if name not in ("source", "source_bytes") or not self.known_digest:
            raise AttributeError(name)
        data, text = _script_text(str(self.path), self.rel_path)
        object.__setattr__(self, "source_bytes", data)
        object.__setattr__(self, "source", text)
        return data if name == "source_bytes" else text

    @property
    def folder(self) -> str:
        """The folder holding the script (``path``'s parent as text: no Path made for an entry discovery did not read)."""
        return os.path.dirname(self.__dict__.get("_path") or self.path)

    def place(self, line: int) -> str:
        """Where line ``line`` of ``source`` is, for messages: ``file:line`` (an included file's)."""
        return place_of(line, self.rel_path, self.origins)

    def frames(self, traceback: str) -> str:
        """``traceback`` with its frames in ``source`` naming their file and line (an included file's)."""
        return remap_frames(traceback, self.rel_path, self.origins)

    @functools.cached_property  # asked twice per entry by a no-change rebuild (content)
    def format(self) -> str:
        """The source format: "py", "ipynb", "md" or "qmd" (from the file's suffix)."""
        return _suffix_of(self.rel_path.rpartition("/")[2])[1:] or "py"

    @property
    def is_page(self) -> bool:
        """True for a Markdown page that is no notebook: prose only, nothing runs, nothing to download."""
        return self.format == "md" and not is_notebook_markdown(self.source)

    @property
    def content(self) -> bytes:
        """What its builds depend on: the file's bytes, and a .qmd's text with its includes and variables."""
        if self.format != "qmd":
            return self.source_bytes
        variables = b"\0" + self.variables.encode("utf-8") if self.variables else b""
        return self.source_bytes + b"\0" + self.source.encode("utf-8") + variables

    @property
    def section(self) -> str:
        """The section ("" at the top of the demos folder), e.g. "basics"."""
        return section_of(self.name)

    @property
    def stem(self) -> str:
        """The bare name: the last part of the entry name (the page folder's name)."""
        return stem_of(self.name)


@dataclass(frozen=True)
class Section:
    """A sub-folder of the demos folder holding entries, with its optional header text."""

    name: str  # path in the demos folder, e.g. "basics" or "basics/advanced"
    header: str = ""  # the header file's text ("" when none)
    header_kind: str = ""  # "rst", "md" or "txt" (reST, as Sphinx-Gallery reads README.txt)


def is_notebook_markdown(text: str) -> bool:
    """True when the Markdown ``text`` opens with a Jupytext notebook's front matter."""
    return bool(_NOTEBOOK_FRONT_MATTER.match(text))


def discover(demos_dir: Path, project_root: Path, problems: list[str] | None = None,
             ignore: PathPattern | None = None, pages: bool = False,
             known: Mapping[str, tuple[str, tuple[int, ...], str]] | None = None) -> list[Entry]:
    """Read every entry file of ``demos_dir`` and its section folders into an Entry, sorted by name.

    A file that cannot be an entry raises EntryError, or, when ``problems`` is given, is
    skipped with its one-line message appended there (the build keeps going, then fails).
    Files whose demos-folder path matches ``ignore`` (the ignore_pattern setting) are no entries;
    Markdown files that are no notebooks are pages when ``pages`` (the setting), else no entries.
    ``known``: entry name -> (its file's path from the project root, signature, content digest) as
    the last build saw them; each script (.py, .ipynb) is then given its signature, and one that
    still has it is not read (read when its text is first asked for).  Scripts are trusted project code: only
    an edit must not be missed, and an edit changes the signature (ctime included).
    """
    if not demos_dir.is_dir():
        raise UsageError(f"demos folder not found: {relative_to_root(demos_dir, project_root)}")
    entries: list[Entry] = []
    found: list[str] = []
    located = _Locator(demos_dir, project_root)
    owners: dict[str, str] = {}  # entry name -> the file that has it
    variables_text = functools.cache(lambda: read_variables(demos_dir))  # one read for every .qmd using it
    now = time.time_ns()  # before any file is looked at: a file modified since is racy
    for item, name, demos_path, suffix in _candidates(demos_dir, project_root, found):
        if ignore is not None and ignore.search(demos_path):
            continue
        resolved, rel = located(item.path, demos_path, item.is_symlink())
        if not item.is_file():
            found.append(f"{rel}: not a regular file")
            continue
        signature: tuple[int, ...] = ()
        if known is not None and suffix in _SIGNED_SUFFIXES and not item.is_symlink():
            st = item.stat(follow_symlinks=False)
            if not racy(max(st.st_mtime_ns, st.st_ctime_ns), now):  # ctime: mtime may be set back
                signature = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
            saved = known.get(name)
            if signature and saved is not None and saved[0] == rel and saved[1] == signature and name not in owners:
                owners[name] = rel
                entries.append(Entry._unread(name, resolved, rel, demos_path, signature, saved[2]))
                continue
        try:
            data, text = _script_text(item.path, rel)
        except EntryError as exc:
            found.append(str(exc))
            continue
        if suffix == ".md" and not pages and not is_notebook_markdown(text):
            continue  # prose (notes): not a notebook, and the project wants no pages
        origins: tuple[tuple[str, int], ...] = ()
        variables = ""
        if suffix == ".qmd":
            try:  # Quarto's {{< include >}}: the page and the run read the text they make
                text, origins = expand_includes(text, rel, project_root)
                variables = variables_text() if uses_variables(text) else ""
            except EntryError as exc:
                found.append(f"{name}: {exc}")
                continue
        if name in owners:
            found.append(f"{owners[name]} and {rel} would both be the page {name}/ "
                         "(file names that differ only in case, punctuation or suffix): rename one")
            entries = [e for e in entries if e.name != name]
            continue
        owners[name] = rel
        entries.append(Entry(name, Path(resolved), rel, text, data, demos_path, origins, variables, signature))
    sections = {e.name.rpartition("/")[0] for e in entries}  # Entry.section, without two calls an entry
    for entry in list(entries):
        if entry.name in sections:  # both would be the page folder NAME/
            found.append(f"{entry.rel_path}: its name is taken by the section folder "
                         f"{relative_to_root(entry.path.with_suffix(''), project_root)}/ (rename one)")
            entries.remove(entry)
    if found and problems is None:
        raise EntryError("; ".join(found))
    if problems is not None:
        problems.extend(found)
    return sorted(entries, key=lambda e: e.name)


def _script_text(path: str, rel: str) -> tuple[bytes, str]:
    """The bytes and text of the entry file at ``path`` (``rel`` in messages); EntryError when
    they cannot be a script's."""
    with open(path, "rb") as f:  # not Path.read_bytes: a Path per file costs more than the read
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EntryError(f"{rel}: not UTF-8 (byte {exc.start})") from None
    if "\0" in text:  # Python refuses such a script; a page must never carry the byte
        line = text.count("\n", 0, text.index("\0")) + 1
        raise EntryError(f"{rel}:{line}: a NUL byte (a Python script cannot contain one)")
    return data, text


class _Locator:
    """A demo's absolute path and its path from the project root, as ``Path.resolve`` and
    ``relative_to_root`` give them, with the folders resolved once (not once per demo)."""

    def __init__(self, demos_dir: Path, root: Path) -> None:
        self.demos_dir, self.root = demos_dir, root
        self.demos_abs = demos_dir.resolve()
        try:
            self.demos_rel: str | None = self.demos_abs.relative_to(root.resolve()).as_posix()
        except ValueError:
            self.demos_rel = None  # outside the project: demos are named by their file name

    def __call__(self, path: str, sub: str, is_link: bool) -> tuple[str, str]:
        """``path`` is ``sub`` (its path in the demos folder); ``is_link``: it is a symbolic link.
        The absolute path as a string: a Path costs more than a no-change check's look at the file."""
        if is_link:  # the link's target decides, as resolve() has it
            return str(Path(path).resolve()), relative_to_root(Path(path), self.root)
        # section folders are never links
        rel = f"{self.demos_rel}/{sub}" if self.demos_rel is not None else os.path.basename(path)
        return os.path.join(self.demos_abs, sub), one_line(rel)  # a file name may hold anything but "/"


def _candidates(folder: Path | str, root: Path, found: list[str],
                section: str = "") -> Iterable[tuple[os.DirEntry[str], str, str, str]]:
    """(the folder's item, qualified name, path in the demos folder, suffix) of every would-be entry
    below ``folder``; bad names go to ``found``.  Read with scandir: a project of thousands
    of entries would pay more for pathlib's parsing than for the reads."""
    depth = section.count("/") + 1 if section else 0
    prefix = f"{section}/" if section else ""  # section folders are named by their folder names
    with os.scandir(folder) as listing:
        items = sorted(listing, key=lambda item: item.name)
    for item in items:
        name = item.name
        if name.startswith(("_", ".")):
            continue  # private helpers (e.g. _shared.py, _data/) are not entries
        suffix = _suffix_of(name)
        if suffix in ENTRY_SUFFIXES and not item.is_dir():
            if name in SECTION_HEADERS:
                continue
            file_stem = name[:-len(suffix)]
            stem = url_segment(file_stem)
            why = check_entry_name(stem) if stem else (
                f"'{file_stem}' has no letter or digit to name its page by")
            if stem == HOME_DOCUMENT and suffix != ".py":
                why = None  # the home page's document (a script named index stays refused)
            if why:
                found.append(f"{relative_to_root(Path(item.path), root)}: {why} (the page's name, from the file name)")
                continue
            yield item, f"{prefix}{stem}", f"{prefix}{name}", suffix
        elif item.is_dir(follow_symlinks=False) and _holds_entries(Path(item.path)):
            path = Path(item.path)
            rel = relative_to_root(path, root)
            why = check_entry_name(name)
            if why:
                found.append(f"{rel}/: a section folder's name follows the entry-name rule: {why}")
            elif depth >= MAX_SECTION_DEPTH:
                found.append(f"{rel}/: sections nest {MAX_SECTION_DEPTH} deep at most")
            else:
                yield from _candidates(item.path, root, found, f"{prefix}{name}")


def _suffix_of(name: str) -> str:
    """A file name's suffix in lower case (``PurePosixPath(name).suffix``, "" when none) without a
    path parse: discovery and ``Entry.format`` ask it for every file of a large project."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def _holds_entries(folder: Path) -> bool:
    """True when ``folder`` (or a folder in it) holds a file that could be an entry: helpers
    (``_part.qmd`` a document includes, ``_data/``) make no section of the folder holding them."""
    return any(p.suffix.lower() in ENTRY_SUFFIXES and p.name not in SECTION_HEADERS
               and not any(part.startswith(("_", ".")) for part in p.relative_to(folder).parts)
               for p in folder.rglob("*"))


def sections(demos_dir: Path, entries: Iterable[Entry]) -> list[Section]:
    """The sections holding ``entries`` (sorted by name), each with its header text, if any."""
    found: list[Section] = []
    for name in sorted({e.section for e in entries} - {""}):
        folder = demos_dir.joinpath(*name.split("/"))
        header, kind = "", ""
        for file_name in SECTION_HEADERS:
            path = folder / file_name
            if path.is_file() and not path.is_symlink():
                header = path.read_bytes().decode("utf-8", errors="replace")
                kind = path.suffix.lstrip(".")
                break
        found.append(Section(name, header, kind))
    return found


def site_order(entries: Iterable[Entry], order: Sequence[str] = ()) -> list[Entry]:
    """Entries in the site's order (index, previous/next): top-level entries first, then each
    section, those named in ``order`` (the ``sections`` setting) first as listed, the rest by
    name; by name within a section, its page (``index.qmd``, ``.md``, ``.ipynb``) first."""
    rank = {name: i for i, name in enumerate(order)}

    def key(entry: Entry) -> tuple[int, int, str, bool, str]:
        section = entry.section
        if not section:
            return (0, 0, "", False, entry.name)
        top = section.split("/")[0]  # a sub-section follows its parent
        listed = rank.get(section, rank.get(top))
        first = entry.stem != HOME_DOCUMENT or entry.format == "py"  # the section's page (index.qmd) first
        return (1, listed, section, first, entry.name) if listed is not None else (2, 0, section, first, entry.name)

    return sorted(entries, key=key)
