"""The site's connections, known before any page renders: works cited, terms, who refers to whom.

``SiteReferences.build`` reads every page's prose (scan) once per build: the rebuild keys each
page by what it shows of the others (``page_key``), "Referred to by" lists the entries that
refer to an entry (a cross-reference, a ``{doc}`` or link, a ``{term}``, or with
``link_terms`` a mention of its term), and the works-cited and glossary pages list what the
whole site cites and defines.  ``page`` gives one page its PageReferences as it renders.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from site_builder.names import stem_of
from site_builder.site.prose.html import plain
from site_builder.site.prose.labels import PageLabels, SiteLabels, page_labels, site_labels
from site_builder.site.references.bibliography import Bibliography
from site_builder.site.references.scan import _ROLE_NAME, PageScan, scan_prose
from site_builder.site.references.terms import SiteTerms, Term, glossary_anchor, mention_pattern, term_key
from site_builder.site.rebuild.state import sha_of
from site_builder.site.sitefiles import EntryBuild, SiteInfo
from site_builder.source.parsed import Script

WORKS_PAGE = "references/index.html"
GLOSSARY_PAGE = "glossary/index.html"
_NOT_ID = re.compile(r"[^\w.:-]+")
_SOURCE_SUFFIXES = (".md", ".ipynb", ".py", ".qmd", ".rst")
# a role's markup in a definition shown as plain text: {cite:t}`k`, :term:`x` -> its text
_ROLE_MARKUP = re.compile(rf"(?:\{{[\w:+.-]+\}}|:{_ROLE_NAME}:)?`(?P<text>[^`]*)`_{{0,2}}")


@dataclass(frozen=True)
class EntryFacts:
    """What other pages show of an entry: its title and summary."""

    name: str
    title: str
    summary: str = ""


@dataclass
class SiteReferences:
    """See the module docstring."""

    bibliography: Bibliography = field(default_factory=Bibliography)
    link_terms: bool = False
    terms: SiteTerms = field(default_factory=SiteTerms)
    facts: dict[str, EntryFacts] = field(default_factory=dict)  # entry -> its title and summary
    scans: dict[str, PageScan] = field(default_factory=dict)
    refers_to: dict[str, set[str]] = field(default_factory=dict)  # entry -> the entries it refers to
    referrers: dict[str, list[str]] = field(default_factory=dict)  # entry -> the entries referring to it, in order
    cited_by: dict[str, list[str]] = field(default_factory=dict)  # work key -> the entries citing it, in order
    mentions: dict[str, set[str]] = field(default_factory=dict)  # entry -> the entry terms its prose mentions
    labels: SiteLabels = field(default_factory=SiteLabels)
    problems: list[str] = field(default_factory=list)
    aliased: bool = False  # some entry names other names of its term (an Aliases section, aliases:)
    known_keys: dict[str, str] = field(default_factory=dict)  # entry -> its page_key (made, or read with the index)
    known_site_key: str = ""  # site_key (made, or read with the index)

    @classmethod
    def build(cls, builds: list[EntryBuild], bibliography: Bibliography, link_terms: bool,
              labels: SiteLabels, facts: dict[str, EntryFacts], scans: dict[str, PageScan]) -> SiteReferences:
        """The connections of the site of ``builds`` (in site order; ``scans``: each page's scan_prose)."""
        site = cls(bibliography, link_terms, labels=labels, facts=facts, scans=scans,
                   aliased=any(b.script.aliases for b in builds))
        for build in builds:
            name = build.entry.name
            fact = facts.get(name, EntryFacts(name, name))
            where = build.entry.rel_path
            stem = stem_of(name)
            for text in dict.fromkeys([stem, stem.replace("_", " "), fact.title if fact.title != name else "",
                                       *build.script.aliases]):
                if text:
                    site.terms.add(Term(text, name, "", fact.title, fact.summary), where)
        for build in builds:  # glossary terms after every entry's own
            name = build.entry.name
            for definition in site.scans[name].glossary:
                summary = _ROLE_MARKUP.sub(r"\g<text>", " ".join(definition.definition.split()))[:200]
                for text in definition.terms:
                    site.terms.add(Term(text, name, glossary_anchor(definition.terms[0]), definition.terms[0],
                                        summary), build.entry.rel_path)
        site.problems += site.terms.problems
        site._connect(builds)
        return site

    def _connect(self, builds: list[EntryBuild]) -> None:
        pattern = mention_pattern(self.terms.entry_terms()) if self.link_terms else None
        entry_terms = self.terms.entry_terms()
        for build in builds:
            name, scan = build.entry.name, self.scans[build.entry.name]
            targets: set[str] = set()
            for label in scan.labels:
                found = self.labels.pages.get(name, {}).get(label) or self.labels.first.get(label)
                if found is not None:
                    targets.add(found.entry)
            for target in scan.docs | scan.links:
                found_entry = self.entry_of_link(name, build.entry.rel_path, target)
                if found_entry:
                    targets.add(found_entry)
            for text in scan.terms:
                term = self.terms.find(text)
                if term is not None:
                    targets.add(term.entry)
            mentioned = {term_key(m.group(0)) for m in pattern.finditer(scan.prose)} if pattern else set()
            self.mentions[name] = {k for k in mentioned if k in entry_terms and entry_terms[k].entry != name}
            targets |= {entry_terms[k].entry for k in self.mentions[name]}
            targets.discard(name)
            self.refers_to[name] = targets
            for target in sorted(targets):
                self.referrers.setdefault(target, []).append(name)
            for key in self.cited_keys(name):
                self.cited_by.setdefault(key, []).append(name)

    def cited_keys(self, name: str) -> list[str]:
        """The works entry ``name`` cites (bare ``@key`` only when a work has that key), sorted."""
        scan = self.scans.get(name)
        if scan is None:
            return []
        works = self.bibliography.works
        return sorted(k for k in scan.cites | scan.bare if k in works)

    def entry_of_link(self, name: str, rel_path: str, target: str) -> str | None:
        """The entry a ``{doc}`` target or a link of entry ``name``'s prose leads to, or None."""
        target = target.split("#", 1)[0].split("?", 1)[0]
        if not target or "://" in target or target.startswith(("mailto:", "/")) and not target.endswith(_SOURCE_SUFFIXES):
            return None
        names = self.facts
        if target.endswith(("index.html", "/")) or "." not in posixpath.basename(target):
            page = posixpath.normpath(posixpath.join(name, target.removesuffix("index.html")))
            if page in names and page != name:
                return page
        path = target
        for suffix in _SOURCE_SUFFIXES:
            path = path.removesuffix(suffix)
        doc = posixpath.normpath(posixpath.join(posixpath.dirname(rel_path), path)) if not path.startswith("/") \
            else path.lstrip("/")
        found = self.labels.docs.get(doc) or next(
            (v for k, v in self.labels.docs.items() if k.endswith("/" + doc.lstrip("./"))), None)
        if found is None:  # a Sphinx-Gallery path ("plot_x", "../auto_examples/plot_x"): its last part
            stem = posixpath.basename(path)
            matches = [n for n in names if stem_of(n) == stem]
            return matches[0] if len(matches) == 1 else None
        return found[0]

    # ---------------------------------------------------------- what pages depend on

    def page_key(self, name: str) -> str:
        """What entry ``name``'s page shows of the bibliography and the other pages (see the
        module docstring): its key changes exactly when one of those does."""
        if name not in self.known_keys:  # kept: the state's index saves them (references.index)
            self.known_keys[name] = self._page_key(name)
        return self.known_keys[name]

    def _page_key(self, name: str) -> str:
        scan = self.scans.get(name)
        if scan is None:
            return ""
        parts: list[str] = [repr(self.link_terms)]
        cited = self.cited_keys(name)
        if cited or scan.cites:
            parts += ["cites", self.bibliography.digest(cited), *sorted(scan.cites - set(cited))]
        if scan.bibliography:  # a {bibliography} citing nothing shows every work the site cites
            parts += ["site works", self.bibliography.digest(sorted(self.cited_by))]
        for label in sorted(scan.labels):
            found = self.labels.pages.get(name, {}).get(label) or self.labels.first.get(label)
            parts.append(f"{label}={found!r}")
        for target in sorted(scan.docs | scan.links):
            found_entry = self.entry_of_link(name, "", target)
            parts.append(f"{target}={found_entry}:{self._title(found_entry)}")
        for text in sorted(scan.terms):
            parts.append(f"{text}={self.terms.find(text)!r}")
        mentioned = sorted(self.mentions.get(name, ()))
        entry_terms = self.terms.entry_terms()
        for key in mentioned:
            parts.append(f"mention {key}={entry_terms[key]!r}")
        for other in self.referrers.get(name, ()):
            parts.append(f"referrer {other}:{self._title(other)}")
        for definition in scan.glossary:
            parts.append(f"glossary {definition.terms!r}")
        return sha_of(*parts)

    def _title(self, name: str | None) -> str:
        fact = self.facts.get(name or "")
        return fact.title if fact else ""

    def site_key(self) -> str:
        """What the works-cited and glossary pages show."""
        if not self.known_site_key:
            self.known_site_key = self._site_key()
        return self.known_site_key

    def _site_key(self) -> str:
        works = self.bibliography.works
        cited = sorted(self.cited_by)
        return sha_of(self.bibliography.digest(cited), json.dumps(self.cited_by, sort_keys=True),
                      repr(self.aliased), *(repr(t) for t in self.terms.terms.values()),
                      *(f"{n}:{self._title(n)}" for k in cited for n in self.cited_by[k]),
                      repr(sorted(k for k in works if k in self.cited_by)))

    def referred_by(self, name: str) -> list[EntryFacts]:
        """The entries that refer to entry ``name``, in site order."""
        return [self.facts.get(n, EntryFacts(n, n)) for n in self.referrers.get(name, ())]

    def allocate_anchor(self) -> Callable[[str], str]:
        """A new maker of the works' ids on one page (bib-KEY, unique on it)."""
        taken: set[str] = set()

        def allocate(key: str) -> str:
            base = "bib-" + (_NOT_ID.sub("-", key).strip("-") or "work")
            anchor, n = base, 1
            while anchor in taken:
                n += 1
                anchor = f"{base}-{n}"
            taken.add(anchor)
            return anchor

        return allocate


# ---------------------------------------------------------------- each entry's part (see references.index)


@dataclass(frozen=True)
class SiteRow:
    """What other pages and the site's lookups take of one entry: its heading (entry_heading),
    its summary (entry_summary), its labels (page_labels) and its prose's scan (scan_prose)."""

    heading: str
    summary: str
    labels: PageLabels
    scan: PageScan
    text: str  # the row as the state keeps it


def page_prose(build: EntryBuild) -> list[str]:
    """The prose texts of an entry's page, as render shows them: its introduction, its prose
    cells, its blocks' descriptions."""
    script = build.script
    intro = (script.intro if script.title else script.purpose)
    return [intro, *(c.text if c.kind == "markdown" else c.description for c in script.cells)]


def row_settings(info: SiteInfo) -> list[Any]:
    """The settings a row is made under: another value makes it stale."""
    return [bool(info.typography), info.entry_heading, bool(info.link_terms)]


def site_row(build: EntryBuild, info: SiteInfo, heading: str, summary: str, text: str = "") -> SiteRow:
    """``build``'s row (``heading``, ``summary``: its entry_heading and entry_summary; ``text``:
    the row as saved, when its parse is)."""
    labels = page_labels(build, info.typography)
    scan = scan_prose(page_prose(build))
    if not info.link_terms:
        scan.prose = ""  # read only to link mentions of terms
    if text:
        return SiteRow(heading, summary, labels, scan, text)
    own, html_ids, problems = labels
    data = [row_settings(info), heading, summary, bool(build.script.title), list(build.script.aliases),
            [[n, v.entry, v.anchor, v.text, v.where, v.number] for n, v in own.items()],
            list(html_ids.items()), problems,
            *(sorted(s) for s in (scan.cites, scan.bare, scan.labels, scan.docs, scan.links, scan.terms)),
            glossary_data(scan), scan.bibliography, scan.prose]
    return SiteRow(heading, summary, labels, scan, json.dumps(data, separators=(",", ":")))


def glossary_data(scan: PageScan) -> list[Any]:
    """A page's glossary definitions as the state keeps them."""
    return [[list(g.terms), g.definition, g.line] for g in scan.glossary]


# ---------------------------------------------------------------- made once per build


def entry_heading(build: EntryBuild, info: SiteInfo) -> str:
    """An entry page's title as text: the docstring's (reST markup resolved, Markdown's
    typography applied), else the entry_heading setting."""
    script, name = build.script, build.entry.name
    if script.title:
        return plain(script.title, script.prose, info.typography) or name
    return info.entry_heading.replace("{name}", name)


def entry_summary(script: Script, typography: bool = False) -> str:
    """An entry's one-line summary as text (reST markup resolved, Markdown's typography applied)."""
    return plain(script.summary, script.prose, typography) if script.title else script.summary


_last: list[tuple[SiteInfo, list[EntryBuild], SiteReferences]] = []


def site_references(builds: list[EntryBuild], info: SiteInfo, made: Mapping[str, SiteRow] | None = None,
                    saved: Mapping[str, str] | None = None) -> SiteReferences:
    """The connections of the site of ``builds`` (in site order), with its labels; made once
    for the same builds and settings (the rebuild's keys and the render share it, see
    share_references). ``made``: rows made already (see references.index); ``saved``: the
    rows' texts the state kept, for entries whose parse they were made from."""
    if _last and _last[0][0] is info and len(_last[0][1]) == len(builds) and all(
            a.entry is b.entry and a.script is b.script for a, b in zip(_last[0][1], builds)):
        return _last[0][2]
    rows: dict[str, SiteRow] = {}
    for b in builds:
        name = b.entry.name
        rows[name] = (made or {}).get(name) or site_row(b, info, entry_heading(b, info), entry_summary(
            b.script, info.typography), (saved or {}).get(name, ""))
    labels = site_labels((b.entry, rows[b.entry.name].heading, rows[b.entry.name].labels) for b in builds)
    facts = {b.entry.name: EntryFacts(b.entry.name, rows[b.entry.name].heading if b.script.title else b.entry.name,
                                      rows[b.entry.name].summary) for b in builds}
    site = SiteReferences.build(builds, info.bibliography or Bibliography(), info.link_terms, labels, facts,
                                {name: row.scan for name, row in rows.items()})
    share_references(builds, info, site)
    return site


def share_references(builds: list[EntryBuild], info: SiteInfo, site: SiteReferences) -> None:
    """Make ``site`` what site_references gives for ``builds`` and ``info`` in this build (an index read back)."""
    _last[:] = [(info, list(builds), site)]
