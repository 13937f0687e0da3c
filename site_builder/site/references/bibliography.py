"""The site's bibliography: every work of the files the project names, with its citation style.

Files come from ``[tool.site_builder] bibliography`` (paths in the project) and from a
notebook's front matter ``bibliography:`` (paths from its folder, inside the project); all
are read once per build, before anything is written, as regular files that are no links
(fs.open_regular). A ``.json`` file is CSL-JSON, anything else BibTeX. One key names one
work in the whole site: a second definition is a warning and the first one holds.
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from site_builder.config import csl_style_file
from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular
from site_builder.site.references.bibtex import Reading, read_bibtex, read_csl_json
from site_builder.site.references.styles import DEFAULT_STYLE, CitationStyle, StyleError, load_style, style_path
from site_builder.site.rebuild.state import sha_of

log = logging.getLogger(__name__)
MAX_BIBLIOGRAPHY_BYTES = 20_000_000


@dataclass(frozen=True)
class Work:
    """One work of the bibliography: its CSL-JSON item and where it is defined."""

    key: str
    item: dict[str, Any]  # CSL-JSON (its "id" is ``cid``)
    where: str  # "refs.bib:12"
    cid: str  # the id citeproc-py knows it by ("w1", ...: keys may differ only in case)


@dataclass
class Bibliography:
    """Every work of the site, the style that formats them, what went wrong reading them."""

    works: dict[str, Work] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    files: tuple[str, ...] = ()  # the files read, project-relative
    style_name: str = DEFAULT_STYLE
    style_digest: str = ""  # what the style's text was (a file's bytes, a name's package version)
    _style: CitationStyle | None = None
    _source: Any = None

    @property
    def style(self) -> CitationStyle:
        """The citation style (loaded on first use)."""
        if self._style is None:
            source, name = self._style_source
            self._style = load_style(source or str(csl_style_file(DEFAULT_STYLE)), name)
        return self._style

    _style_source: tuple[str, str] = ("", DEFAULT_STYLE)

    @property
    def source(self) -> Any:
        """citeproc-py's source of every work, made once."""
        if self._source is None:
            # links are the References list's own (http(s) and DOIs only): not the style's text
            self._source = self.style.source([{k: v for k, v in w.item.items() if k not in ("DOI", "URL")}
                                              for w in self.works.values()])
        return self._source

    def digest(self, keys: Iterable[str]) -> str:
        """What the pages citing ``keys`` show of the bibliography: those works and the style."""
        found = [self.works.get(k) for k in sorted(set(keys))]
        return sha_of(self.style_digest, *(json.dumps(w.item, sort_keys=True) if w else "-" for w in found))

    def fingerprint(self) -> str:
        """Everything of the bibliography a page may show (an unchanged site compares it)."""
        return sha_of(self.digest(self.works), *self.problems)


def bibliography_files(settings: tuple[str, ...], front_matter: Iterable[tuple[str, tuple[str, ...]]]) -> list[str]:
    """The project-relative files to read: the setting's, then each entry's front matter's
    (``front_matter``: (the entry's project-relative folder, its paths)); None of them leaves
    the project (such a path is kept, and refused with a warning when read)."""
    files = list(settings)
    for folder, paths in front_matter:
        for path in paths:
            files.append(posixpath.normpath(posixpath.join(folder, path)) if not path.startswith("/") else path)
    return list(dict.fromkeys(files))


def load_bibliography(root: Path, files: list[str], style_setting: str = "") -> Bibliography:
    """The works of ``files`` (project-relative) and the style ``style_setting`` names
    ("": the default); problems are kept, never raised.  Without files nothing is read (the
    style is loaded when a page cites, and finds nothing)."""
    bibliography = Bibliography(files=tuple(files))
    if not files:
        bibliography.style_name = style_setting or DEFAULT_STYLE
        return bibliography  # the default style, found when a page cites (its lookup imports the styles' package)
    readings: list[tuple[str, Reading]] = []
    for rel in files:
        text, problem = _read(root, rel)
        if problem:
            bibliography.problems.append(problem)
            continue
        reader = read_csl_json if rel.lower().endswith(".json") else read_bibtex
        readings.append((rel, reader(text, rel)))
    for rel, reading in readings:
        bibliography.problems.extend(reading.problems)
        for item in reading.items:
            key = item["id"]
            where = f"{rel}:{reading.lines.get(key, 1)}"
            first = bibliography.works.get(key)
            if first is not None:
                bibliography.problems.append(f"{where}: the key {key} is defined at {first.where} already: "
                                             "citations show that one")
                continue
            cid = f"w{len(bibliography.works) + 1}"
            bibliography.works[key] = Work(key, {**item, "id": cid}, where, cid)
    _set_style(bibliography, root, style_setting or DEFAULT_STYLE)
    if not bibliography.style_digest.startswith("!"):
        disambiguate(bibliography)
    return bibliography


def _read(root: Path, rel: str) -> tuple[str, str]:
    """The text of the project's file ``rel``, or a problem saying why it cannot be read."""
    try:
        with open_regular(root, rel) as f:
            data = f.read(MAX_BIBLIOGRAPHY_BYTES + 1)
    except (UnsafeFileError, UnsafePathError) as exc:
        reason = getattr(exc, "reason", "it is not a path inside the project")
        return "", f"{rel}:1: the bibliography cannot be read: {reason}"
    except OSError as exc:
        return "", f"{rel}:1: the bibliography cannot be read: {exc.strerror}"
    if len(data) > MAX_BIBLIOGRAPHY_BYTES:
        return "", f"{rel}:1: the bibliography is larger than {MAX_BIBLIOGRAPHY_BYTES // 1_000_000} MB: not read"
    return data.decode("utf-8", "replace").removeprefix("\ufeff"), ""


def _set_style(bibliography: Bibliography, root: Path, setting: str) -> None:
    """Read the style ``setting`` names; a style that cannot be read is a problem, and the
    default style formats instead."""
    bibliography.style_name = setting
    try:
        source = style_path(setting, root)
        if isinstance(source, Path) and setting.endswith(".csl"):
            text, problem = _read(root, setting)
            if problem:
                raise StyleError(problem.partition(": ")[2])
            bibliography.style_digest = sha_of(text)
            bibliography._style_source = (text, setting)
        else:
            bibliography.style_digest = sha_of(setting, str(source))
            bibliography._style_source = (str(source), setting)
        bibliography.style  # noqa: B018 (read now: a broken style is said once, here)
    except StyleError as exc:
        bibliography.problems.append(f"citation_style {setting}: {exc}; the default style ({DEFAULT_STYLE}) is used")
        bibliography.style_name = DEFAULT_STYLE
        bibliography._style = None
        bibliography._style_source = (str(style_path(DEFAULT_STYLE, root)), DEFAULT_STYLE)
        bibliography.style_digest = sha_of("!", DEFAULT_STYLE)


def disambiguate(bibliography: Bibliography) -> None:
    """Works of the same authors and year read "1931a", "1931b" (by title) in an author-year
    style, as CSL's year-suffix disambiguation does; citeproc-py does not."""
    if bibliography.style.numeric:
        return
    groups: dict[tuple[str, ...], list[Work]] = {}
    for work in bibliography.works.values():
        people = work.item.get("author") or work.item.get("editor") or []
        names = tuple(str(p.get("family") or p.get("literal") or "") for p in people if isinstance(p, dict))
        parts = (work.item.get("issued") or {}).get("date-parts") or [[]]
        year = str(parts[0][0]) if parts and parts[0] else ""
        if names and year:
            groups.setdefault((*names, year), []).append(work)
    for works in groups.values():
        if len(works) > 1:
            for n, work in enumerate(sorted(works, key=lambda w: str(w.item.get("title", "")).lower())):
                work.item["year-suffix"] = chr(ord("a") + n) if n < 26 else str(n + 1)
