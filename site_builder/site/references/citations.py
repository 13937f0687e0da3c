"""Citations on one page: what each syntax asks for, how the page shows it, its References list.

Every prose syntax (sphinxcontrib-bibtex's roles in reST and MyST, Pandoc's ``[@key]``)
turns into a ``Citation`` of items and a mode; ``PageCitations.cite`` shows it with the
site's style, linking each work to its entry in the References list at the page's end
(numbered styles number the works in the order the page first cites them: ``note`` them as
the page's prose is resolved, in page order).  A key no bibliography defines reads as
"key?" (the caller warns).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from site_builder.site.references.bibliography import Bibliography, Work
from site_builder.site.prose.markdown.macros import macro
from site_builder.site.references.styles import as_html
from site_builder.site.safety.html import clean_html

# sphinxcontrib-bibtex's roles (MyST ``{cite:t}``, reST ``:cite:t:``) -> the mode they show.
ROLE_MODES = {
    "cite": "p", "cite:p": "p", "cite:ps": "ps", "cite:t": "t", "cite:ts": "ts", "cite:ct": "t",
    "cite:cts": "ts", "cite:cp": "p", "cite:cps": "ps", "cite:alp": "alp", "cite:alps": "alp",
    "cite:cal": "alp", "cite:alt": "alt", "cite:alts": "alt", "cite:author": "author",
    "cite:authors": "authors", "cite:cauthor": "author", "cite:year": "year", "cite:yearpar": "yearpar",
    "cite:label": "label", "cite:labelpar": "p", "cite:empty": "empty", "cite:num": "label",
    "footcite": "p", "footcite:p": "p", "footcite:t": "t", "footcite:ps": "ps", "footcite:ts": "ts",
    "parencite": "p", "textcite": "t", "citet": "t", "citep": "p",
}
_CAPITALISED = frozenset({"cite:ct", "cite:cts", "cite:cp", "cite:cps", "cite:cal", "cite:cauthor"})


@dataclass(frozen=True)
class CiteItem:
    """One work of a citation, with Pandoc's prefix and suffix ("see", "p. 33")."""

    key: str
    prefix: str = ""
    locator: str = ""  # what the style shows as the locator ("p. 33")
    suffix: str = ""  # other text after the key


@dataclass(frozen=True)
class Citation:
    """What one citation in prose asks for: its works and how to show them."""

    items: tuple[CiteItem, ...]
    mode: str = "p"  # p, t, ps, ts, alp, alt, author, authors, year, yearpar, label, empty
    capitalised: bool = False


def role_citation(role: str, content: str) -> Citation:
    """The citation of a sphinxcontrib-bibtex role: ``{cite:t}`a,b``` (keys comma-separated)."""
    keys = tuple(CiteItem(k.strip()) for k in content.split(",") if k.strip())
    return Citation(keys, ROLE_MODES.get(role.lower(), "p"), role.lower() in _CAPITALISED)


def is_cite_role(role: str) -> bool:
    """True for a role of sphinxcontrib-bibtex's (``cite``, ``cite:p``, ``footcite:t``...)."""
    return role.lower() in ROLE_MODES


def authors_of(item: dict[str, Any], full: bool = False) -> str:
    """A work's authors as a narrative citation names them: "Friedman", "Friedman and Savage",
    "Doe et al." (``full``: every name); the editors, else its title, when it has none."""
    people = [p for p in (item.get("author") or item.get("editor") or []) if isinstance(p, dict)]
    names = [" ".join(str(p[k]) for k in ("non-dropping-particle", "family") if p.get(k)) or str(p.get("literal", ""))
             for p in people]
    names = [n for n in names if n]
    if not names:
        return str(item.get("title-short") or item.get("title") or "")
    if len(names) == 1:
        return names[0]
    if len(names) == 2 or full:
        return ", ".join(names[:-1]) + (", and " if len(names) > 2 else " and ") + names[-1]
    return f"{names[0]} et al."


def year_of(item: dict[str, Any]) -> str:
    """A work's year as citations show it ("1956", "1931b"; "n.d." when it has none)."""
    parts = (item.get("issued") or {}).get("date-parts") or [[]]
    year = str(parts[0][0]) if parts and parts[0] else "n.d."
    return year + str(item.get("year-suffix", ""))


@dataclass(frozen=True)
class ReferenceView:
    """One entry of a References list."""

    key: str
    anchor: str
    label: str  # "[1]" in a numbered style, else ""
    html: Markup  # the formatted entry
    doi: str
    url: str


class PageCitations:
    """The citations of one page, in page order (see the module docstring)."""

    def __init__(self, bibliography: Bibliography, entry: str, allocate: Callable[[str], str]) -> None:
        self.bibliography = bibliography
        self.entry = entry
        self.allocate = allocate  # a key -> a new id on the page
        self.anchors: dict[str, str] = {}  # the page's cited works, in order, with their entry's id
        self._citeproc: Any = None

    def cite(self, citation: Citation) -> Markup:
        """The HTML of ``citation``."""
        style = self.bibliography.style
        known = [i for i in citation.items if i.key in self.bibliography.works]
        shown = dict(zip((i for i in known), self._shown(known)))
        parts = []
        for item in citation.items:
            work = self.bibliography.works.get(item.key)
            if work is not None and work.key not in self.anchors:
                self.anchors[work.key] = self.allocate(work.key)
            text = self._text(citation, item, work, shown.get(item)) if work else Markup(escape(item.key + "?"))
            if citation.capitalised and text:
                text = Markup(text[:1].upper() + text[1:]) if not text.startswith("<") else text
            parts.append({"text": text, "href": f"#{self.anchors[work.key]}" if work else "",
                          "prefix": item.prefix, "suffix": item.suffix, "key": item.key})
        layout = style.layout
        wrapped = citation.mode in ("p", "ps") or (citation.mode == "yearpar" and style.numeric)
        delimiter = layout.delimiter if citation.mode in ("p", "ps", "alp", "label") else ", "
        return macro("citation", parts, layout.prefix if wrapped else "", delimiter,
                     layout.suffix if wrapped else "", citation.mode)

    def note(self, keys: list[str]) -> None:
        """Keys the page cites, in its order (unknown ones are left out): a numbered style numbers
        the works so, the resolve pass noting them before the page's prose renders."""
        works = [self.bibliography.works[k] for k in keys if k in self.bibliography.works]
        new = list({w.key: w for w in works if w.key not in self.anchors}.values())
        if not new:
            return
        for work in new:
            self.anchors[work.key] = self.allocate(work.key)
        self.bibliography.style.register(self._bibliography(), [w.cid for w in new])

    def _bibliography(self) -> Any:
        if self._citeproc is None:
            self._citeproc = self.bibliography.style.bibliography(self.bibliography.source)
        return self._citeproc

    def _shown(self, items: list[CiteItem]) -> list[str]:
        """Each known item as the style shows it inside a citation (marked text)."""
        if not items:
            return []
        self._bibliography()
        works = [self.bibliography.works[i.key] for i in items]
        return self.bibliography.style.cite(self._citeproc, [w.cid for w in works], [i.locator for i in items])

    def _text(self, citation: Citation, item: CiteItem, work: Work, styled: str | None) -> Markup:
        style, mode = self.bibliography.style, citation.mode
        styled_html = Markup(as_html(styled or ""))
        if mode in ("p", "ps", "alp", "label"):
            if mode == "ps" and not style.numeric:
                return Markup(escape(f"{authors_of(work.item, True)}, {year_of(work.item)}"))
            return styled_html
        if mode == "empty":
            return Markup("")
        names = authors_of(work.item, full=mode in ("ts", "authors"))
        if mode in ("author", "authors"):
            return Markup(escape(names))
        year = year_of(work.item) + (f", {item.locator}" if item.locator else "")
        if mode == "year":
            return Markup(escape(year))
        layout = style.layout
        if style.numeric:
            return styled_html if mode == "yearpar" else Markup(escape(names + " ")) + styled_html
        if mode == "yearpar":
            return Markup(escape(f"{layout.prefix or '('}{year}{layout.suffix or ')'}"))
        if mode == "alt":
            return Markup(escape(f"{names} {year}"))
        return Markup(escape(f"{names} {layout.prefix or '('}{year}{layout.suffix or ')'}"))

    def references(self) -> list[ReferenceView]:
        """The References list of the page: every cited work, in the style's order."""
        if not self.anchors or self._citeproc is None:
            return []
        by_cid = {self.bibliography.works[k].cid: k for k in self.anchors}
        style = self.bibliography.style
        views = []
        for cid, marked in style.entries(self._citeproc):
            key = by_cid.get(cid)
            if key is None:
                continue
            views.append(entry_view(self.bibliography.works[key], marked, self.anchors[key],
                                    self._label(key) if style.numeric else ""))
        return views

    def _label(self, key: str) -> str:
        return str(list(self.anchors).index(key) + 1)


def entry_view(work: Work, marked: str, anchor: str, number: str = "") -> ReferenceView:
    """A References list's entry: the style's text, without a leading number the list shows itself."""
    text = re.sub(rf"^\s*[\[(]?{number}[\]).]?\s*", "", marked, count=1) if number else marked
    html = Markup(clean_html(as_html(text.strip())))
    return ReferenceView(work.key, anchor, f"[{number}]" if number else "", html,
                         str(work.item.get("DOI", "")), str(work.item.get("URL", "")))


def site_works(bibliography: Bibliography, keys: list[str]) -> list[ReferenceView]:
    """The works ``keys`` name as the works-cited page lists them: in the style's order (by
    author and year for a numbered style, whose numbers belong to each page), ids ``work-KEY``."""
    style = bibliography.style
    works = [bibliography.works[k] for k in keys if k in bibliography.works]
    if style.numeric:
        works.sort(key=lambda w: (authors_of(w.item).casefold(), year_of(w.item), str(w.item.get("title", ""))))
    citeproc = style.bibliography(bibliography.source)
    style.cite(citeproc, [w.cid for w in works], ["" for _ in works])
    by_cid = {w.cid: w for w in works}
    marked = dict(style.entries(citeproc))
    order = works if style.numeric else [by_cid[cid] for cid in marked if cid in by_cid]
    return [entry_view(w, marked.get(w.cid, ""), "work-" + re.sub(r"[^\w.:-]+", "-", w.key),
                       str(n + 1) if style.numeric else "") for n, w in enumerate(order)]
