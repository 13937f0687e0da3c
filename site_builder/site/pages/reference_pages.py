"""The site-wide pages of its connections: every work cited (with the entries citing it), and
the glossary (every term: glossary definitions and the entries' names, titles and aliases)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from site_builder.site.references.citations import ReferenceView, site_works
from site_builder.site.references.site import GLOSSARY_PAGE, WORKS_PAGE, EntryFacts, SiteReferences
from site_builder.site.references.terms import term_key
from site_builder.site.sitefiles import SiteFile


@dataclass(frozen=True)
class CitedWork:
    """A work of the works-cited page, with the entries that cite it."""

    reference: ReferenceView
    entries: tuple[EntryFacts, ...]


@dataclass(frozen=True)
class TermView:
    """One term of the glossary page: where it leads and what it says."""

    text: str
    href: str  # from the glossary page
    summary: str
    entry: str  # the entry defining it (its page)
    aliases: tuple[str, ...] = ()
    glossary: bool = False  # a glossary definition (else an entry's own term)


def glossary_terms_view(site: SiteReferences) -> list[TermView]:
    """Every term of the site, A-Z: a glossary's definitions, and each entry with its other names."""
    views: dict[tuple[str, str], TermView] = {}
    aliases: dict[tuple[str, str], list[str]] = {}
    for term in site.terms.terms.values():
        key = (term.entry, term.anchor)
        if key not in views:
            href = f"../{term.entry}/index.html" + (f"#{term.anchor}" if term.anchor else "")
            head = term.title if term.anchor else (site.facts[term.entry].title if term.entry in site.facts else term.text)
            views[key] = TermView(head, href, term.summary, term.entry, glossary=bool(term.anchor))
            aliases[key] = []
        if term_key(term.text) != term_key(views[key].text):
            aliases[key].append(term.text)
    found = [TermView(v.text, v.href, v.summary, v.entry, tuple(aliases[k]), v.glossary) for k, v in views.items()]
    return sorted(found, key=lambda v: term_key(v.text))


def reference_files(site: SiteReferences, page: Callable[..., bytes], url: Callable[[str], str | None]) -> list[SiteFile]:
    """The works-cited page (when anything is cited) and the glossary page (when a glossary
    or an alias names a term); ``page`` renders a template, ``url`` makes a canonical URL."""
    files = []
    if site.cited_by:
        works = [CitedWork(r, tuple(site.facts.get(n, EntryFacts(n, n)) for n in site.cited_by[r.key]))
                 for r in site_works(site.bibliography, list(site.cited_by))]
        files.append(SiteFile(WORKS_PAGE, page("works.html", root="../", canonical=url(WORKS_PAGE), works=works)))
    terms = glossary_terms_view(site)
    if site.aliased or any(t.glossary for t in terms):
        files.append(SiteFile(GLOSSARY_PAGE, page("glossary.html", root="../", canonical=url(GLOSSARY_PAGE),
                                                  terms=terms)))
    return files
