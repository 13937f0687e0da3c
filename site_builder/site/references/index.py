"""The site's connections kept between builds: each entry's part of them, and the whole index.

``site_references`` needs every page's title, summary, labels and scan (what its prose cites
and refers to) before any page renders, and merges them in site order (the first page
defining a label or term holds it).  The state keeps each entry's part (``SiteRow``) as JSON
text beside its parse, valid while that parse is (the same key: builder, prose setting,
script) under the same settings, and the merged ``SiteReferences`` with each page's key
(``index_data``) under a key of every row (``index_key``).  A rebuild makes the rows of the
entries whose parse changed, and when every row is as saved (an edit of code or a comment:
nothing another page shows changed) reads the saved index instead of every page's prose;
else it merges again.  The state is data: an index of another shape is none (merged again).
"""

from __future__ import annotations

import json
from itertools import repeat
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from site_builder.site.prose.labels import SiteLabels
from site_builder.site.prose.markdown.context import Label
from site_builder.site.rebuild.lend import parse_key
from site_builder.site.rebuild.state import RebuildInputs, SiteState, saved_scripts, sha_of
from site_builder.site.references.bibliography import Bibliography
from site_builder.site.references.scan import PageScan
from site_builder.site.references.site import (
    EntryFacts, SiteReferences, entry_heading, entry_summary, glossary_data, row_settings, share_references,
    site_references, site_row,
)
from site_builder.site.references.terms import GlossaryTerm, SiteTerms, Term
from site_builder.site.sitefiles import EntryBuild, SiteInfo

INDEX_FORMAT = "1"  # bump when a row's or the index's JSON changes


def row_prefix(info: SiteInfo) -> str:
    """How a row made under ``info``'s settings begins (row_settings)."""
    return _dumps([row_settings(info)])[:-1] + ","


def saved_site_rows(inputs: RebuildInputs, state: SiteState, builds: list[EntryBuild], info: SiteInfo, code: str
               ) -> dict[str, str]:
    """Entry -> its row as ``state`` saved it, for the entries whose saved parse holds (see
    parse_key; ``code``: the builder's code_fingerprint), made under ``info``'s settings."""
    scripts, rows, prefix = saved_scripts(inputs.folders, state), state.site_rows, row_prefix(info)
    found = {}
    for build in builds:
        name = build.entry.name
        row = rows.get(name, "")
        if row.startswith(prefix) and scripts[name][0] == parse_key(inputs.prose[name], code, build.entry):
            found[name] = row
    return found


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def index_key(code: str, info: SiteInfo, builds: list[EntryBuild], rows: Mapping[str, str]) -> str:
    """What the site's connections are made from: the builder (``code``), the settings, the
    bibliography, and each entry (in site order) with its row (``rows``: entry -> its text)."""
    bibliography = info.bibliography.fingerprint() if info.bibliography else ""
    parts = [INDEX_FORMAT, code, _dumps(row_settings(info)), bibliography]
    for build in builds:
        parts += (build.entry.name, build.entry.rel_path, rows[build.entry.name])
    return sha_of(*parts)


# ---------------------------------------------------------------- the merged index


def site_connections(ordered: list[EntryBuild], info: SiteInfo, code: str, saved_site_rows: dict[str, str],
                     saved_index: Callable[[], str]
                     ) -> tuple[SiteReferences, dict[str, str], Callable[[], Iterator[bytes]] | None, str]:
    """The site's connections (references.index): read back from ``saved_index`` when every
    entry's row is as saved (``saved_site_rows``: entry -> its saved row, of the entries whose parse
    holds), else merged again from each page's prose; with every entry's row, what makes
    the index to save once the pages are made (None: the saved one holds), and the key of what
    they are made from (index_key: the same key, the same connections)."""

    made = {b.entry.name: site_row(b, info, entry_heading(b, info), entry_summary(b.script, info.typography))
            for b in ordered if b.entry.name not in saved_site_rows}
    rows = {b.entry.name: saved_site_rows.get(b.entry.name) or made[b.entry.name].text for b in ordered}
    key = index_key(code, info, ordered, rows)
    site = SiteReferences(info.bibliography or Bibliography(), info.link_terms)
    text = saved_index() if saved_site_rows else ""
    if text and index_from_data(text, key, site):
        share_references(ordered, info, site)  # the render's, too
        return site, rows, None, key
    merged = site_references(ordered, info, made, saved_site_rows)
    return merged, rows, lambda: index_data(merged, key), key  # made when saved: not held while pages render


def _scan_data(scan: PageScan) -> list[Any] | None:
    sets = [sorted(s) for s in (scan.cites, scan.bare, scan.labels, scan.docs, scan.links, scan.terms)]
    if not any(sets) and not scan.glossary and not scan.bibliography and not scan.prose:
        return None
    return [*sets, glossary_data(scan), scan.bibliography, scan.prose]


def _label(label: Label) -> list[str]:
    return [label.entry, label.anchor, label.text, label.where, label.number]


def index_data(site: SiteReferences, key: str) -> Iterator[bytes]:
    """``site`` (with each page's key, and the site-wide pages' key) as the state keeps it, under
    ``key``: one JSON object, a member at a time (a large site's whole index as one structure
    would add to the build's peak memory while the state is saved)."""
    labels, names = site.labels, list(site.facts)
    members: list[tuple[str, Callable[[], Any]]] = [
        ("key", lambda: key), ("names", lambda: names), ("site_key", site.site_key),
        ("page_keys", lambda: [site.page_key(n) for n in names]),
        ("facts", lambda: [[f.title, f.summary] for f in site.facts.values()]),
        ("terms", lambda: [[k, t.text, t.entry, t.anchor, t.title, t.summary] for k, t in site.terms.terms.items()]),
        ("term_problems", lambda: site.terms.problems), ("problems", lambda: site.problems),
        ("aliased", lambda: site.aliased),
        ("scans", lambda: {n: found for n, scan in site.scans.items() if (found := _scan_data(scan)) is not None}),
        ("refers_to", lambda: {n: sorted(v) for n, v in site.refers_to.items() if v}),
        ("mentions", lambda: {n: sorted(v) for n, v in site.mentions.items() if v}),
        ("referrers", lambda: site.referrers), ("cited_by", lambda: site.cited_by),
        ("first", lambda: [[n, *_label(v)] for n, v in labels.first.items()]),
        ("pages", lambda: {n: [[k, *_label(v)] for k, v in own.items()] for n, own in labels.pages.items() if own}),
        ("label_problems", lambda: labels.problems),
        ("html_ids", lambda: {n: list(ids.items()) for n, ids in labels.html_ids.items() if ids}),
        ("docs", lambda: [[doc, entry, title] for doc, (entry, title) in labels.docs.items()]),
    ]
    for i, (name, value) in enumerate(members):
        yield f"{'{' if i == 0 else ','}{_dumps(name)}:{_dumps(value())}".encode("utf-8")
    yield b"}"


class _Malformed(Exception):
    """Not an index this builder wrote."""


def _text(value: Any) -> str:
    if type(value) is not str:
        raise _Malformed
    return value


def _texts(value: Any) -> list[str]:
    # checked by map, not a generator: a large site's index holds tens of thousands of lists (JSON's
    # texts are plain str, so isinstance is type(v) is str here)
    if type(value) is not list or not all(map(isinstance, value, repeat(str))):
        raise _Malformed
    return value


def _mapping(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise _Malformed
    return value


def _new_label(item: Any) -> tuple[str, Label]:
    name, *fields = _texts(item)
    if len(fields) != 5:
        raise _Malformed
    return name, Label(*fields)


def _new_scan(item: Any) -> PageScan:
    if type(item) is not list or len(item) != 9 or type(item[7]) is not bool:
        raise _Malformed
    glossary = []
    for entry in item[6]:
        terms, definition, line = entry
        if type(line) is not int:
            raise _Malformed
        glossary.append(GlossaryTerm(tuple(_texts(terms)), _text(definition), line))
    cites, bare, labels, docs, links, terms_ = (set(_texts(v)) for v in item[:6])
    return PageScan(cites, bare, labels, docs, links, terms_, glossary, item[7], _text(item[8]))


def index_from_data(text: str, key: str, site: SiteReferences) -> bool:
    """Fill ``site`` (its bibliography and link_terms set) from the index ``text`` when it was
    saved under ``key``; False (``site`` unusable) when not, or when it is not an index."""
    try:
        data = _mapping(json.loads(text))
        if data.get("key") != key:
            return False
        names, page_keys = _texts(data["names"]), _texts(data["page_keys"])
        facts, scans = data["facts"], _mapping(data["scans"])
        if type(facts) is not list or len(facts) != len(names) or len(page_keys) != len(names):
            raise _Malformed
        for name, (title, summary) in zip(names, map(_texts, facts)):
            site.facts[name] = EntryFacts(name, title, summary)
        # a page whose prose refers to nothing has no scan, references or labels here: their
        # readers take none for empty (scans.get, refers_to and mentions.get, labels.pages.get)
        site.scans = {name: _new_scan(scan) for name, scan in scans.items()}
        terms = SiteTerms(problems=list(_texts(data["term_problems"])))
        for item in data["terms"]:
            term_name, *fields = _texts(item)
            terms.terms[term_name] = Term(*fields)
        site.terms = terms
        refers_to, mentions = _mapping(data["refers_to"]), _mapping(data["mentions"])
        site.refers_to = {n: set(_texts(v)) for n, v in refers_to.items()}
        site.mentions = {n: set(_texts(v)) for n, v in mentions.items()}
        site.referrers = {k: _texts(v) for k, v in _mapping(data["referrers"]).items()}
        site.cited_by = {k: _texts(v) for k, v in _mapping(data["cited_by"]).items()}
        site.problems, site.aliased = list(_texts(data["problems"])), data["aliased"] is True
        site.labels = _labels(data)
        site.known_keys = dict(zip(names, page_keys))
        site.known_site_key = _text(data["site_key"])
    except (_Malformed, ValueError, TypeError, KeyError, RecursionError):
        return False
    return True


def _labels(data: dict[str, Any]) -> SiteLabels:
    labels = SiteLabels(first=dict(map(_new_label, data["first"])))
    pages, html_ids, problems = _mapping(data["pages"]), _mapping(data["html_ids"]), _mapping(data["label_problems"])
    for name, own in pages.items():
        labels.pages[name] = dict(map(_new_label, own))
    for name, ids in html_ids.items():
        labels.html_ids[name] = {_text(k): _text(v) for k, v in ids}
    for name, said in problems.items():
        labels.problems[name] = list(_texts(said))
    for item in data["docs"]:
        doc, entry, title = _texts(item)
        labels.docs[doc] = (entry, title)
    return labels
