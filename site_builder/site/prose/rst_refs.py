"""reST's citations, cross-references, terms and numbered figures and equations.

- Roles: ``:cite:p:`` (every sphinxcontrib-bibtex role), ``:ref:``, ``:numref:``, ``:eq:`` and
  ``:term:`` are the prose registry's roles of the same name (a handler marked ``rst``), so
  they resolve and show as MyST's do, through the page's one context; a ``:ref:`` to a
  Sphinx-Gallery example no label names is left to rst.py's example links.
- ``LabelsNumbered``: figures are numbered through the page ("Fig. 2" before the caption, as
  MyST's), equations with a ``:label:`` too ("(1)"), and every explicit label (``.. _x:``, a
  ``:name:``, an equation's ``:label:``) is defined on the page with what a reference shows and
  takes its id of the label namespace (label_ids), so links from any page land on it.
- rst.py's ``rst_definitions`` uses the same numbering and labels for a page's reST text
  before any page renders (labels.label_definitions), so a ``:numref:`` on another page says "Fig. 2".
- ``.. glossary::`` (its terms are site terms) and ``.. math::`` with Sphinx's ``:label:``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.parsers.rst.directives.body import MathBlock
from docutils.transforms import Transform

from site_builder.site.prose.markdown.macros import macro
from site_builder.site.prose.mathml import math_html

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.context import PageContext

log = logging.getLogger(__name__)
LABEL_ROLES = frozenset({"ref", "std:ref", "numref", "std:numref", "eq", "prf:ref", "any"})


def _page(document: Any) -> PageContext | None:
    return getattr(getattr(document, "settings", None), "site_builder_page", None)


def _line(document: Any, lineno: int | None, rawtext: str = "") -> int:
    """The entry's line of ``rawtext`` in the paragraph starting at the text's line ``lineno`` (0: not known)."""
    first = getattr(document.settings, "site_builder_first_line", 0)
    if not first or not lineno:
        return 0
    lines = str(getattr(document.settings, "site_builder_text", "")).split("\n")
    start = rawtext.split("\n")[0]
    below = next((n for n, text in enumerate(lines[lineno - 1:]) if start and start in text), 0)
    return first + lineno - 1 + below


def reference_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any) -> nodes.Node | None:
    """The node of a citation, cross-reference or term role when the page resolves such roles, else
    None (the role then reads as rst.py shows Sphinx roles: a gallery example's link, or text)."""
    from site_builder.site.prose.markdown.registry import default_registry
    from site_builder.site.prose.markdown.renderer import role_html
    from site_builder.source.syntax.markdown import explicit_title

    document = getattr(inliner, "document", None)
    page = _page(document)
    handler, known = default_registry().role(name)
    if page is None or not known or not getattr(handler, "rst", False):
        return None
    target = explicit_title(text)[1]
    if name in LABEL_ROLES and page.find(target) is None and (target.startswith("sphx_glr_") or (
            page.links is not None and page.links.example(target, "ref")[0] is not None)):
        return None  # a Sphinx-Gallery example's label: its page when in the site, else its name (rst.py)
    try:
        return nodes.raw(rawtext, role_html(name, text, page, _line(document, lineno, rawtext), rawtext), format="html")
    except Exception:  # noqa: BLE001 (docutils would end the process on an exception in a role)
        log.warning("%s: %s could not be resolved (a bug of the builder; shown as text)", page.entry, rawtext,
                    exc_info=True)
        return nodes.inline(rawtext, text)


class LabelsNumbered(Transform):
    """Figures and labelled equations numbered, explicit labels defined (see the module docstring)."""

    default_priority = 861  # after docutils resolved targets to the elements they name

    def apply(self) -> None:
        page = _page(self.document)
        if page is None:
            return
        explicit = {name for name, is_explicit in self.document.nametypes.items() if is_explicit}
        done: set[str] = set()  # a figure's image holds its :name: (docutils): defined by the figure
        for node in list(self.document.findall(nodes.Element)):
            if isinstance(node, nodes.target):
                continue
            names = [n for n in node.get("names", []) if n in explicit and n not in done]
            page.at = node.line - 1 if node.line else page.at
            if isinstance(node, nodes.figure):
                for child in (c for c in node.children if isinstance(c, nodes.Element)):
                    for name in (n for n in child.get("names", []) if n in explicit and n not in names):
                        names.append(name)  # and the id docutils gave it, for one element per id
                        moved = self.document.nameids.get(name)
                        if moved in child["ids"]:
                            child["ids"].remove(moved)
                            node["ids"].append(moved)
                done.update(names)
                self._figure(node, names, page)
            elif isinstance(node, nodes.math_block) and (node.get("label") or names):
                self._equation(node, names, page)
            else:
                for name in names:
                    title = node.next_node(nodes.title) if isinstance(node, nodes.section) else None
                    _anchored(node, page.define(name, title.astext() if title is not None else name))

    @staticmethod
    def _figure(node: nodes.figure, names: list[str], page: PageContext) -> None:
        number = page.number("figure")
        caption = node.next_node(nodes.caption)
        if caption is None:
            caption = nodes.caption()
            node += caption
        caption.insert(0, nodes.inline("", f"Fig. {number} ", classes=["caption-number"]))
        for name in names:
            _anchored(node, page.define(name, f"Fig. {number}", str(number)))

    @staticmethod
    def _equation(node: nodes.math_block, names: list[str], page: PageContext) -> None:
        number = page.number("equation")
        anchors = [page.define(name, f"({number})", str(number)) for name in dict.fromkeys([node.get("label"), *names])
                   if name]
        html = macro("math_block", math_html(node.astext().strip(), True), str(number), next(filter(None, anchors), ""))
        node.replace_self(nodes.raw("", str(html), format="html"))


def _anchored(node: nodes.Element, anchor: str) -> None:
    """The element takes the label's id first (its other ids follow as docutils writes them)."""
    if anchor:
        if anchor in node["ids"]:
            node["ids"].remove(anchor)
        node["ids"].insert(0, anchor)


class LabelledMath(MathBlock):
    """``.. math::`` with Sphinx's ``:label:`` (numbered, see LabelsNumbered) and ``:nowrap:``."""

    option_spec = {**MathBlock.option_spec, "label": directives.unchanged, "nowrap": directives.flag}

    def run(self) -> list[nodes.Node]:
        label = (self.options.pop("label", "") or "").strip()
        self.options.pop("nowrap", None)
        found = super().run()
        if label and found and isinstance(found[0], nodes.math_block):
            found[0]["label"] = label
        return found


class Glossary(Directive):
    """``.. glossary::``: terms (several lines for one definition) each over its indented definition."""

    has_content = True
    option_spec = {"sorted": directives.flag}

    def run(self) -> list[nodes.Node]:
        from site_builder.site.references.terms import glossary_anchor, glossary_terms

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


def register() -> None:
    """Register the glossary and math directives (docutils keeps one registry per process)."""
    directives.register_directive("glossary", Glossary)
    directives.register_directive("math", LabelledMath)
