"""What the site's connections take of one page, known from its entry and parse alone.

Its labels (with their ids and what is wrong with them), what its prose refers to (scan),
its heading and summary: ``site_references`` reads these from every page of the site on every
build that changed something.  The rebuild state keeps them per entry under a key of what
they are made from (``facts_key``), so a page whose script and settings did not change is
not read again; a saved row is data like any other state and is read defensively.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from site_builder.site.prose.labels import page_labels
from site_builder.site.prose.markdown.context import Label
from site_builder.site.rebuild.state import sha_of
from site_builder.site.references.scan import PageScan, scan_prose
from site_builder.site.references.terms import GlossaryTerm
from site_builder.site.sitefiles import EntryBuild, SiteInfo

FACTS_FORMAT = "1"  # bump when PageFacts or its JSON changes


@dataclass(frozen=True)
class PageFacts:
    """One page's labels, references, heading and summary (see the module docstring)."""

    labels: dict[str, Label]  # the labels it defines, each name's first (page_labels)
    html_ids: dict[str, str]  # its raw HTML's anchors -> their ids
    problems: tuple[str, ...]  # what is wrong with them, said on the page
    scan: PageScan
    heading: str  # entry_heading
    summary: str  # entry_summary


def facts_key(parse_key: str, name: str, info: SiteInfo) -> str:
    """What an entry's PageFacts depend on besides its parse (``parse_key``: the builder's
    code, the prose setting, the script): its name and the settings that reach them."""
    return sha_of(FACTS_FORMAT, parse_key, name, repr(info.typography), info.entry_heading)


def page_facts(build: EntryBuild, info: SiteInfo, heading: str, summary: str) -> PageFacts:
    """The PageFacts of ``build``'s page (``heading`` and ``summary``: as site_references makes them)."""
    own, html_ids, problems = page_labels(build, info.typography)
    return PageFacts(own, html_ids, tuple(problems), scan_prose(page_prose(build)), heading, summary)


def page_prose(build: EntryBuild) -> list[str]:
    """The prose texts of an entry's page, as render shows them: its introduction, its prose
    cells, its blocks' descriptions."""
    script = build.script
    intro = (script.intro if script.title else script.purpose)
    return [intro, *(c.text if c.kind == "markdown" else c.description for c in script.cells)]


def facts_data(facts: PageFacts) -> str:
    """``facts`` as one line of JSON (no line breaks or tabs: JSON escapes them)."""
    scan = facts.scan
    data = {
        "labels": [[name, label.entry, label.anchor, label.text, label.where, label.number]
                   for name, label in facts.labels.items()],
        "html_ids": list(facts.html_ids.items()), "problems": list(facts.problems),
        "scan": {"cites": sorted(scan.cites), "bare": sorted(scan.bare), "labels": sorted(scan.labels),
                 "docs": sorted(scan.docs), "links": sorted(scan.links), "terms": sorted(scan.terms),
                 "glossary": [[list(g.terms), g.definition, g.line] for g in scan.glossary],
                 "bibliography": scan.bibliography, "prose": scan.prose},
        "heading": facts.heading, "summary": facts.summary,
    }
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def facts_from_data(text: str) -> PageFacts | None:
    """The PageFacts ``facts_data`` wrote, or None for anything else (made again then)."""
    try:
        data = json.loads(text)
        scan = data["scan"]
        facts = PageFacts(
            labels={_text(n): Label(*map(_text, rest)) for n, *rest in data["labels"] if len(rest) == 5},
            html_ids={_text(n): _text(i) for n, i in data["html_ids"]},
            problems=tuple(map(_text, data["problems"])),
            scan=PageScan(*(set(map(_text, scan[k])) for k in ("cites", "bare", "labels", "docs", "links", "terms")),
                          glossary=[GlossaryTerm(tuple(map(_text, t)), _text(d), _number(n)) for t, d, n in scan["glossary"]],
                          bibliography=scan["bibliography"] is True, prose=_text(scan["prose"])),
            heading=_text(data["heading"]), summary=_text(data["summary"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if len(facts.labels) != len(data["labels"]):
        return None
    return facts


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a text")
    return value


def _number(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("not a number")
    return value
