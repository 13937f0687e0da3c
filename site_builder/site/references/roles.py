"""Citations, terms and glossaries in Markdown prose: a plugin of the prose registry
(site/prose/markdown/registry.py), whose roles reST's ``:cite:``, ``:term:`` use too.

- sphinxcontrib-bibtex's roles: ``{cite}``, ``{cite:p}``, ``{cite:t}``, ``{cite:ps}``,
  ``{cite:ts}``, ``{cite:author}``, ``{cite:year}``, ``{footcite}``... (citations.ROLE_MODES);
- Pandoc's ``[@key]``, ``[see @a; @b, p. 33]``, ``[-@key]``, ``@key`` (source.syntax.citations):
  a bracket may mix works and Quarto cross-references (``@fig-x``, ``@eq-x``...), each shown as
  what it is; a bare ``@word`` is a citation only when a bibliography defines it, a
  cross-reference only with a Quarto prefix, else the text as written (``@property``);
- ``{term}``: an entry's term or a glossary's; ``{glossary}``: definitions, their terms site terms.

Each role notes the works it cites when resolved (in page order: a numbered style numbers
them so) and shows them when rendered; without a page (a text rendered on its own) citations
read as their keys and terms as their text.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from site_builder.site.prose.label_ids import QUARTO_PREFIXES
from site_builder.site.prose.markdown.registry import Directive, DirectiveCall, Registry, Role, RoleCall
from site_builder.site.prose.markdown.registry import register_all, registers
from site_builder.site.prose.markdown.xrefs import label_link
from site_builder.site.references.citations import ROLE_MODES, Citation, CiteItem, role_citation
from site_builder.site.references.page import references_of
from site_builder.site.references.styles import is_locator
from site_builder.site.references.terms import glossary_anchor, glossary_terms
from site_builder.source.syntax.citations import CITATION_ROLE, CitePart, parse_citation

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.context import PageContext
    from site_builder.site.prose.markdown.registry import Output


@registers(*ROLE_MODES)
class CiteRole(Role):
    """A sphinxcontrib-bibtex role: ``{cite:t}`a,b```.  MyST's plain ``{cite}`` of one work is
    narrative, "Friedman (1956)", as Jupyter Book 2 (mystmd) shows it; of several, and reST's
    ``:cite:`` always, parenthetical, as sphinxcontrib-bibtex shows them."""

    rst = True

    def resolve(self, call: RoleCall, page: PageContext) -> None:
        refs = references_of(page)
        if refs is not None:
            refs.note([item.key for item in role_citation(call.name, call.content).items])

    def render(self, call: RoleCall, out: Output) -> str:
        citation = role_citation(call.name, call.content)
        if call.name == "cite" and not call.data.get("rst") and len(citation.items) == 1:
            citation = replace(citation, mode="t")
        refs = references_of(out.page)
        if refs is None:
            return out.macro("element", "span", "[" + ", ".join(i.key for i in citation.items) + "]")
        return refs.cite(citation, out.page, call.line)


@registers(CITATION_ROLE)
class PandocCitation(Role):
    """Pandoc's ``[@key]`` and ``@key`` (see the module docstring)."""

    def resolve(self, call: RoleCall, page: PageContext) -> None:
        refs = references_of(page)
        if refs is not None:
            refs.note([part.key for part in parse_citation(call.content)[1] if refs.known_work(part.key)])

    def render(self, call: RoleCall, out: Output) -> str:
        refs = references_of(out.page)  # (None: a text without a page: its cross-references still resolve)
        bracketed, parts = parse_citation(call.content)
        if not parts or out.env.get("in_link"):  # (a link's text holds no other link)
            return str(escape(call.content))

        def work(key: str) -> bool:
            return refs is not None and refs.known_work(key)

        if not bracketed:
            part = parts[0]
            if refs is not None and work(part.key):
                return refs.cite(Citation((_item(part),), "t"), out.page, call.line)
            if part.key.startswith(QUARTO_PREFIXES):
                shown = label_link(out, f"@{part.key}", part.key, line=call.line)
                return shown + (str(escape(f" [{part.suffix}]")) if part.suffix else "")
            return str(escape(call.content))  # an @word no bibliography defines: text
        shown: list[Markup] = []  # in the bracket's order: citations of works, then a cross-reference, ...
        items: list[CiteItem] = []
        suppress = False

        def cite_items() -> None:  # the works so far, as one citation ("[-@a]": (1956))
            if items and refs is None:
                shown.append(escape("[" + "; ".join(i.key for i in items) + "]"))
            elif items and refs is not None:
                mode = "yearpar" if suppress and len(items) == 1 else "p"
                shown.append(refs.cite(Citation(tuple(items), mode), out.page, call.line))
            items.clear()

        for part in parts:
            if not work(part.key) and (part.key.startswith(QUARTO_PREFIXES) or out.page.find(part.key)):
                cite_items()
                xref = Markup(label_link(out, call.content, part.key, line=call.line))
                suffix = part.suffix if part.suffix.startswith(",") else f" {part.suffix}"
                shown.append(escape(f"{part.prefix} " if part.prefix else "") + xref + escape(suffix.rstrip()))
            else:
                items.append(_item(part))
                suppress = part.suppress_author
        cite_items()
        return str(Markup("; ").join(shown))


def _item(part: CitePart) -> CiteItem:
    """A Pandoc citation's part as a work of a citation: "p. 33" its locator, other text its suffix."""
    bare = part.suffix.removeprefix(",").strip()
    locator = bare if bare and is_locator(bare) else ""
    return CiteItem(part.key, part.prefix, locator, "" if locator else part.suffix)


@registers("term", "std:term")
class TermRole(Role):
    """``{term}`softmax```, ``{term}`the softmax <softmax>```."""

    rst = True

    def render(self, call: RoleCall, out: Output) -> str:
        refs = references_of(out.page)
        if refs is None:
            return out.macro("element", "span", call.title or call.target)
        return refs.term(call.target, call.title, out.page, call.line)


@registers("glossary")
class Glossary(Directive):
    """``{glossary}``: term lines (several for one definition), each over its indented definition."""

    content = False  # each definition is Markdown of its own

    def render(self, call: DirectiveCall, out: Output) -> str:
        found = glossary_terms(call.body)
        if "sorted" in call.options:
            found.sort(key=lambda g: g.terms[0].casefold())
        items = [{"terms": g.terms, "anchor": glossary_anchor(g.terms[0]),
                  "html": out.markdown(g.definition, call.body_line + g.line + len(g.terms) if call.body_line else 0)}
                 for g in found]
        return out.macro("glossary", items)


def register(registry: Registry) -> None:
    register_all(registry, CiteRole, PandocCitation, TermRole, Glossary)
