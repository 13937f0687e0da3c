"""reST's citations, cross-references and terms: sphinxcontrib-bibtex's and Sphinx's roles and
the ``glossary`` directive, resolved through the page's references (site/references).

``:cite:`` (and ``:cite:p:``, ``:cite:t:``, ``:cite:ps:``...) cite the site's bibliography;
``:ref:``, ``:numref:`` and ``:eq:`` link the site's labels (a ``.. _label:`` target, a
figure's or equation's ``:name:``/``:label:``, a MyST label of another page); ``:term:``
an entry's term or a glossary's.  Without a page (a title, a section header) they read
as Sphinx-only roles always did (site/prose/rst.py).
"""

from __future__ import annotations

import logging
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.transforms import Transform

from site_builder.site.references.site import glossary_anchor
from site_builder.site.references.terms import glossary_terms

log = logging.getLogger(__name__)


def page_references(inliner: Any) -> Any:
    """The page's PageReferences, passed in the document's settings (see rst.rst_html)."""
    document = getattr(inliner, "document", None)
    return getattr(getattr(document, "settings", None), "site_builder_refs", None)


def reference_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any) -> nodes.Node | None:
    """The node of a citation, cross-reference or term role when the page can resolve it, else None
    (the role then reads as rst.py shows Sphinx roles: a gallery example's link, or text)."""
    refs = page_references(inliner)
    if refs is None:
        return None
    try:
        return _resolved(refs, name, rawtext, text, lineno)
    except Exception:  # noqa: BLE001 (docutils would end the process on an exception in a role)
        log.warning("%s: %s: %s could not be resolved (a bug of the builder; shown as text)",
                    refs.entry.name, refs.where(rawtext, lineno), rawtext, exc_info=True)
        return nodes.inline(rawtext, text)


def _resolved(refs: Any, name: str, rawtext: str, text: str, lineno: int) -> nodes.Node | None:
    html = refs.role(name, text, refs.where(rawtext, lineno))
    return None if html is None else nodes.raw("", str(html), format="html")


class Glossary(Directive):
    """``.. glossary::``: terms (several lines for one definition) each over its indented definition."""

    has_content = True
    option_spec = {"sorted": directives.flag}

    def run(self) -> list[nodes.Node]:
        items = glossary_terms("\n".join(self.content))
        if "sorted" in self.options:
            items.sort(key=lambda g: g.terms[0].casefold())
        listing = nodes.definition_list(classes=["glossary"])
        ends = {item.line: next((o.line for o in items if o.line > item.line), len(self.content)) for item in items}
        for item in items:
            entry = nodes.definition_list_item()
            for n, term in enumerate(item.terms):
                node = nodes.term(term, term)
                if n == 0:
                    node["ids"].append(glossary_anchor(term))
                entry += node
            definition = nodes.definition()
            start = item.line + len(item.terms)
            self.state.nested_parse(self.content[start:ends[item.line]], self.content_offset + start, definition)
            entry += definition
            listing += entry
        return [listing]


class LabelIds(Transform):
    """The element a label names (``.. _label:``, a figure's ``:name:``) also takes the label's
    id of the page (label_ids), so a cross-reference from any page lands on it."""

    default_priority = 861  # after docutils resolved targets to the elements they name

    def apply(self) -> None:
        refs = getattr(self.document.settings, "site_builder_refs", None)
        if refs is None:
            return
        own = refs.prose.own
        for node in list(self.document.findall(nodes.Element)):
            for name in node.get("names", []):
                label = own.get(name)
                if label is not None and label.anchor not in node["ids"] and not isinstance(node, nodes.target):
                    anchor = refs.prose.anchor(name)
                    if anchor:
                        node["ids"].insert(0, anchor)


def register() -> None:
    """Register the glossary directive (docutils keeps one registry per process)."""
    directives.register_directive("glossary", Glossary)
