"""One page's citations and terms, kept in its prose context (``PageContext.extensions``).

The page's one ``PageContext`` (site/prose/markdown/context.py) holds the site's labels, the
page's numbering, ids and warnings; ``attach_references`` adds what this room needs of the
page: the works it cites (its References list, numbered in page order) and the mentions
``link_terms`` links (a pass over each text's HTML).  Roles and directives of every prose
format (MyST, reST, Pandoc's ``[@key]``) reach it through ``references_of(page)``; what they
cannot resolve is a warning on the page, with its line, and reads as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from markupsafe import Markup

from site_builder.site.prose.markdown.macros import macro
from site_builder.site.references.citations import Citation, PageCitations, ReferenceView, site_works
from site_builder.site.references.site import EntryFacts, SiteReferences
from site_builder.site.references.terms import Term, TermLinker

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.context import PageContext
    from site_builder.source.entries import Entry

REFERENCES = "references"  # its key in PageContext.extensions


@dataclass
class PageReferences:
    """What one page cites and links by term (see the module docstring)."""

    site: SiteReferences
    entry: str
    root: str  # from the page to the site's root
    citations: PageCitations
    linker: TermLinker | None = None
    warned: set[str] = field(default_factory=set)  # unknown keys said already (once per page)

    def known_work(self, key: str) -> bool:
        return key in self.site.bibliography.works

    def note(self, keys: list[str]) -> None:
        """Keys the prose cites, in page order (see PageCitations.note)."""
        self.citations.note(keys)

    def cite(self, citation: Citation, page: PageContext, line: int) -> Markup:
        """``citation``'s HTML; a key no bibliography defines warns once per page (``line``: its line)."""
        for item in citation.items:
            if not self.known_work(item.key) and item.key not in self.warned:
                self.warned.add(item.key)
                page.warn(line, f"the citation key {item.key!r} is in no bibliography (it shows as unresolved)")
        return self.citations.cite(citation)

    def term(self, text: str, shown: str, page: PageContext, line: int) -> Markup:
        """A ``{term}``'s link to its entry or glossary definition, or unresolved text and a warning."""
        term = self.site.terms.find(text)
        if term is None:
            page.warn(line, f"the term {text!r} is no entry's name, title or alias and in no glossary "
                            "(it shows as text)")
            return macro("unresolved", shown or text, "term")
        return self.term_link(term, shown or text)

    def term_link(self, term: Term, shown: str) -> Markup:
        """A link to ``term``'s entry page or glossary definition, showing ``shown``."""
        if self.linker is not None and not term.anchor:
            self.linker.linked.add(term.entry)
        if term.entry == self.entry:
            href = f"#{term.anchor}" if term.anchor else "#main"
        else:
            href = f"{self.root}{term.entry}/index.html" + (f"#{term.anchor}" if term.anchor else "")
        return macro("term", shown, href)

    def entry_of(self, href: str) -> str | None:
        """The entry of the site a link of this page leads to (``../x/index.html#y``), or None."""
        if not href.startswith(self.root) or "://" in href:
            return None
        path = href[len(self.root):].split("#", 1)[0].removesuffix("index.html").rstrip("/")
        return path if path in self.site.facts else None

    def references(self) -> list[ReferenceView]:
        """The page's References list."""
        return self.citations.references()

    def placed_list(self) -> list[ReferenceView]:
        """What a ``{bibliography}`` shows: the page's References, or on a page citing nothing (a
        book's references page, as sphinxcontrib-bibtex lists it) every work the site cites."""
        return self.citations.references() or site_works(self.site.bibliography, list(self.site.cited_by))

    def referred_by(self) -> list[EntryFacts]:
        return self.site.referred_by(self.entry)


def attach_references(page: PageContext, site: SiteReferences, entry: Entry) -> PageReferences:
    """Give ``entry``'s page context its citations and terms (link_terms: its mentions' pass)."""
    refs = PageReferences(site, entry.name, page.root,
                          PageCitations(site.bibliography, entry.name, site.allocate_anchor()))
    if site.link_terms:
        refs.linker = TermLinker(site.terms.entry_terms(), entry.name, refs.term_link, refs.entry_of)
        page.html_passes.append(refs.linker)
    page.extensions[REFERENCES] = refs
    return refs


def references_of(page: PageContext) -> PageReferences | None:
    """The page's citations and terms; None for a text rendered without a page (a label pass, a value)."""
    found = page.extensions.get(REFERENCES)
    return found if isinstance(found, PageReferences) else None
