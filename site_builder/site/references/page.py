"""One page's citations, cross-references and terms, as its prose renders.

Every prose syntax ends here: a role or directive of reST or MyST, Pandoc's ``[@key]`` in
rendered Markdown (pandoc), a mention of another entry's term (terms.TermLinker).  What
cannot be resolved is a warning naming the entry, the line and what it names, and reads as
text on the page, never as its syntax.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from markupsafe import Markup

from site_builder.site.prose.myst_scan import PageProse
from site_builder.site.references.citations import Citation, PageCitations, ReferenceView, is_cite_role, role_citation
from site_builder.site.references.macros import macro
from site_builder.site.references.pandoc import pandoc_citations
from site_builder.site.references.scan import cited_in_order
from site_builder.site.references.site import EntryFacts, SiteReferences
from site_builder.site.references.terms import Term, TermLinker
from site_builder.source.entries import Entry

log = logging.getLogger(__name__)
LABEL_ROLES = frozenset({"ref", "std:ref", "numref", "std:numref", "eq", "prf:ref"})
TERM_ROLES = frozenset({"term", "std:term"})
_EXPLICIT_TITLE = re.compile(r"^(.+?)\s*<([^<>]*)>$", re.DOTALL)


def explicit_title(text: str) -> tuple[str, str]:
    """(explicit title or "", target) of a role's text: ``Figure <fig-x>`` -> ("Figure", "fig-x")."""
    match = _EXPLICIT_TITLE.match(text)
    return (match.group(1), match.group(2).strip()) if match else ("", text.strip())


@dataclass
class PageReferences:
    """See the module docstring; ``prose`` is the page's prose context (labels, its root)."""

    site: SiteReferences
    entry: Entry
    prose: PageProse
    text: str = ""  # the prose text rendering now (where() finds lines in it)
    citations: PageCitations = field(init=False)
    linker: TermLinker | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.citations = PageCitations(self.site.bibliography, self.entry.name, self.site.allocate_anchor())
        if self.site.link_terms:
            self.linker = TermLinker(self.site.terms.entry_terms(), self.entry.name, self._term_link)

    # ---------------------------------------------------------- where, for warnings

    def begin(self, text: str) -> None:
        """The prose text ``text`` renders now: its warnings name its lines, its citations number in its order."""
        self.text = text
        if self.site.bibliography.works and self.site.bibliography.style.numeric:
            self.citations.expect(cited_in_order(text))

    def where(self, raw: str, line: int = 0) -> str:
        """Where ``raw`` (a construct of the current text; ``line``: its line in the text, 1-based,
        when known) is in the entry's source file: "demos/x.py:12"."""
        source, rel = self.entry.source, self.entry.rel_path
        start = source.find(self.text) if self.text else -1
        if start >= 0 and line:
            return f"{rel}:{source.count(chr(10), 0, start) + line}"
        found = source.find(raw, max(start, 0)) if raw else -1
        if found < 0 and raw:
            found = source.find(raw)
        return f"{rel}:{source.count(chr(10), 0, found) + 1}" if found >= 0 else rel

    def _warn(self, message: str) -> None:
        log.warning("%s", message)

    # ---------------------------------------------------------- citations

    def known_work(self, key: str) -> bool:
        return key in self.site.bibliography.works

    def cite(self, citation: Citation, where: str) -> Markup:
        """A citation's HTML (citations.PageCitations), its warnings said."""
        said = len(self.citations.warnings)
        html = self.citations.cite(citation, where)
        for warning in self.citations.warnings[said:]:
            self._warn(warning)
        return html

    def references(self) -> list[ReferenceView]:
        """The page's References list."""
        return self.citations.references()

    # ---------------------------------------------------------- cross-references and terms

    def xref(self, label: str, where: str, shown: str = "") -> Markup:
        """A link to the label ``label`` (its text, or ``shown``), or unresolved text and a warning."""
        found = self.prose.find(label)
        if found is None:
            self._warn(f"{self.entry.name}: {where}: the cross-reference {label!r} names no label of the site "
                       "(it shows as text)")
            return macro("unresolved", shown or label, "cross-reference")
        text = shown or found.text
        if self.linker is not None and found.entry != self.entry.name:
            self.linker.linked.add(found.entry)  # link_terms links it no more on the page
        return macro("xref", text, self.prose.href(found), "internal" if found.entry == self.entry.name else "entry")

    def term(self, text: str, where: str, shown: str = "") -> Markup:
        """A ``{term}``'s link to its entry or glossary definition, or unresolved text and a warning."""
        term = self.site.terms.find(text)
        if term is None:
            self._warn(f"{self.entry.name}: {where}: the term {text!r} is no entry's name, title or alias "
                       "and in no glossary (it shows as text)")
            return macro("unresolved", shown or text, "term")
        return self._term_link(term, shown or text)

    def _term_link(self, term: Term, shown: str) -> Markup:
        if self.linker is not None and not term.anchor:
            self.linker.linked.add(term.entry)
        if term.entry == self.entry.name:
            href = f"#{term.anchor}" if term.anchor else "#main"
        else:
            href = f"{self.prose.root}{term.entry}/index.html" + (f"#{term.anchor}" if term.anchor else "")
        return macro("term", shown, href, term.title)

    def role(self, name: str, text: str, where: str) -> Markup | None:
        """The HTML of a citation, cross-reference or term role (MyST ``{cite:t}`k```, reST
        ``:cite:t:`k```), None for other roles, and for a Sphinx-Gallery example's label (left
        to the prose's own example links)."""
        name = name.lower()
        if is_cite_role(name):
            return self.cite(role_citation(name, text), where)
        title, target = explicit_title(text)
        if name in TERM_ROLES:
            return self.term(target, where, title)
        if name not in LABEL_ROLES:
            return None
        label = self.prose.find(target)
        if label is None and target.startswith("sphx_glr_"):
            return None
        if label is None and ("%s" in title or "{number}" in title):
            title = ""  # a numref's template names no number: the label reads instead
        if label is not None and name.endswith("numref") and title:
            number = label.text.split()[-1] if label.text.split() else ""
            title = title.replace("%s", number).replace("{number}", number)
        return self.xref(target, where, title)

    def entry_link(self, name: str) -> str:
        """The URL of entry ``name``'s page from this page."""
        return f"{self.prose.root}{name}/index.html"

    # ---------------------------------------------------------- passes over rendered prose

    def markdown_html(self, html: str) -> str:
        """Rendered Markdown with Pandoc's citations and Quarto's cross-references resolved."""
        return pandoc_citations(html, self)

    def mentions(self, html: str) -> str:
        """Rendered prose with the first mention of each other entry's term linked (link_terms)."""
        return self.linker(html) if self.linker is not None else html

    def referred_by(self) -> list[EntryFacts]:
        return self.site.referred_by(self.entry.name)
