"""MyST's directives that show text, code, math and figures; layout directives show their content.

Admonitions look like docutils' reST asides (one stylesheet rule for both), ``{math}`` and
``{figure}`` are numbered when labelled (figures and ``{table}`` always), code is highlighted, a
list-table is a table. ``{raw} html`` on a notebook's page is its HTML, sanitised (markdown.raw_html),
as Jupyter Book shows it. Directives with nothing to show outside Sphinx (``{raw}`` for
another format, ``{toctree}``, ``{index}``, ...) vanish; layout ones (tabs, dropdowns, cards, margins) show their content
with their argument as a title; one nobody registered does too, with a warning.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from markupsafe import Markup

from site_builder.site.prose.images import is_remote
from site_builder.site.prose.mathml import math_html
from site_builder.site.prose.markdown.raw_html import define_anchors, raw_html
from site_builder.site.prose.markdown.registry import Directive, DirectiveCall, Registry, number_equation, \
    number_figure, register_all, registers
from site_builder.site.highlight import highlighted
from site_builder.source.cell_options import column_widths

if TYPE_CHECKING:
    from markdown_it.token import Token

    from site_builder.site.prose.markdown.context import PageContext
    from site_builder.site.prose.markdown.registry import Output

ADMONITIONS = {
    "note": "Note", "tip": "Tip", "warning": "Warning", "seealso": "See also", "hint": "Hint",
    "important": "Important", "caution": "Caution", "danger": "Danger", "attention": "Attention",
    "error": "Error", "todo": "To do",
}
VERSIONS = {
    "versionadded": "New in version", "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version", "versionremoved": "Removed in version",
}
# Directives with nothing to show outside Sphinx (or that would read files): they vanish.
VANISHING = ("toctree", "contents", "include", "literalinclude",
             "index", "only", "meta", "jupyter-execute", "embed", "tags",
             "footbibliography", "autosummary", "currentmodule", "solution-end", "exercise-end", "highlight",
             "tabularcolumns", "rst-class", "redirect-from", "minigallery")
# Layout directives of Sphinx's extensions: their content, their argument as a title.
CONTAINERS = ("margin", "sidebar", "tab-set", "tab-item", "tabbed", "dropdown", "card", "grid", "grid-item",
              "grid-item-card", "topic", "epigraph", "pull-quote", "highlights", "compound", "container",
              "panels", "centered", "hlist", "glossary", "rubric", "cssclass", "admonition-title")
CODE = ("code-block", "code", "sourcecode", "code-cell")
_NOT_CLASS = re.compile(r"[^a-z0-9-]+")


def css_name(text: str) -> str:
    """``text`` as a CSS class name part ("prf:theorem" -> "prf-theorem")."""
    return _NOT_CLASS.sub("-", text.lower()).strip("-")


@registers(*ADMONITIONS)
class Admonition(Directive):
    """``{note}`` and its kin: an aside titled by its kind; text on the opening line is its first line."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        if call.argument:
            call.body = f"{call.argument}\n\n{call.body}"
            call.body_line = call.line

    def render(self, call: DirectiveCall, out: Output) -> str:
        return out.macro("admonition", call.name, ADMONITIONS[call.name], out.body(call), call.anchor)


@registers("admonition")
class TitledAdmonition(Directive):
    """``{admonition} Title``: an aside with its own title."""

    def render(self, call: DirectiveCall, out: Output) -> str:
        title = out.inline(call.argument, call.line) if call.argument else ""
        return out.macro("admonition", "admonition-" + css_name(call.argument), title, out.body(call), call.anchor)


@registers(*VERSIONS)
class Version(Directive):
    """``{versionadded} 1.2``: an aside "New in version 1.2", as reST prose shows it."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        version, _, rest = call.argument.partition(" ")
        call.data["title"] = f"{VERSIONS[call.name]} {version}".strip()
        if rest.strip():
            call.body = f"{rest.strip()}\n\n{call.body}"

    def render(self, call: DirectiveCall, out: Output) -> str:
        return out.macro("admonition", "version", call.data["title"], out.body(call), call.anchor)


@registers("math")
class MathBlock(Directive):
    """``{math}``: display math, numbered when labelled."""

    content = False

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        if call.label:
            number_equation(call, page)

    def render(self, call: DirectiveCall, out: Output) -> str:
        return out.macro("math_block", math_html(call.body.strip(), True), call.data.get("number", ""), call.anchor)


@registers(*CODE)
class CodeBlock(Directive):
    """``{code-block} python``: highlighted code, with its caption."""

    content = False

    def render(self, call: DirectiveCall, out: Output) -> str:
        language = call.argument.split()[0] if call.argument else ""
        return out.macro("code", Markup(highlighted(call.body, language, plain=True)), call.options.get("caption", ""), call.anchor)


@registers("figure", "image")
class Figure(Directive):
    """``{figure}``/``{image}`` of the entry's folder (a link for another origin's); figures numbered."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        if call.name == "figure":
            number_figure(call, page)
        else:
            call.body = ""  # an image has no caption

    def render(self, call: DirectiveCall, out: Output) -> str:
        src, alt, figure = call.argument.strip(), call.options.get("alt", ""), call.name == "figure"
        web = is_remote(src)
        local = None if web else out.page.image_url(src)
        if figure and not alt:
            alt = " ".join(call.body.strip().split("\n")[0].split()) if call.body.strip() else ""
        width = call.options.get("width", "")
        caption = out.body(call) if figure and call.body.strip() else ""
        sized = width.isdigit() or (width.endswith("%") and width[:-1].isdigit())  # 300, 50% (not CSS lengths)
        return out.macro("figure", local or "", src if web else "", alt, width if sized else "",
                         caption, call.data.get("number_text", ""), call.anchor, figure)


@registers("eval-rst")
class EvalRst(Directive):
    """``{eval-rst}``: reST, rendered as reST prose is."""

    content = False

    def render(self, call: DirectiveCall, out: Output) -> str:
        from site_builder.site.prose.rst import rst_html

        return rst_html(call.body, out.env.get("id_prefix", ""), out.page, call.body_line) or ""


@registers("list-table")
class ListTable(Directive):
    """``{list-table}``: a bullet list of rows, each a bullet list of cells, as a table."""

    def render(self, call: DirectiveCall, out: Output) -> str:
        rows = [[out.tokens(cell) for cell in _items(row)] for row in _items(call.children or [])]
        rows = [row for row in rows if row]
        count = call.options.get("header-rows", "0")
        header = int(count) if count.isdigit() else 0
        title = out.inline(call.argument, call.line) if call.argument else ""
        return out.macro("list_table", title, rows[:header], rows[header:], call.anchor)


@registers("table")
class Table(Directive):
    """``{table} Caption``: the Markdown table of its body, numbered ("Table N", as Jupyter Book
    numbers it) and captioned; ``:widths: 25 75`` its columns' shares."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        number = page.number("table")
        call.data["number_text"] = f"Table {number}"
        if call.label:
            call.data["anchor"] = page.define(call.label, f"Table {number}", str(number))

    def render(self, call: DirectiveCall, out: Output) -> str:
        children = call.children or []
        start = next((i for i, t in enumerate(children) if t.type == "table_open"), None)
        if start is None:
            out.warn(call.line, "{table} holds no Markdown table: its content is shown as it is")
            return out.body(call)
        level = children[start].level
        end = next(j for j in range(start + 1, len(children))
                   if children[j].type == "table_close" and children[j].level == level)
        widths = call.options.get("widths", "").replace(",", " ").split()
        return (out.tokens(children[:start])
                + out.macro("myst_table", out.tokens(children[start + 1:end]),
                            out.inline(call.argument, call.line) if call.argument.strip() else "",
                            call.data["number_text"], call.anchor, column_widths(f"[{', '.join(widths)}]"))
                + out.tokens(children[end + 1:]))


def _items(tokens: list[Token]) -> list[list[Token]]:
    """The contents of the items of the first bullet list in ``tokens`` (each a token list)."""
    start = next((i for i, t in enumerate(tokens) if t.type == "bullet_list_open"), None)
    if start is None:
        return []
    level, items, i = tokens[start].level, [], start + 1
    while i < len(tokens) and not (tokens[i].type == "bullet_list_close" and tokens[i].level == level):
        if tokens[i].type == "list_item_open" and tokens[i].level == level + 1:
            end = next(j for j in range(i + 1, len(tokens))
                       if tokens[j].type == "list_item_close" and tokens[j].level == level + 1)
            items.append(tokens[i + 1:end])
            i = end
        i += 1
    return items


@registers(*VANISHING)
class Vanishing(Directive):
    """Nothing to show outside Sphinx, or raw output for another format: nothing on the page."""

    content = False

    def render(self, call: DirectiveCall, out: Output) -> str:
        return ""


@registers("bibliography")
class BibliographyHere(Vanishing):
    """``{bibliography}``: the page's References list stands here, not at the page's end (as
    sphinxcontrib-bibtex places it); the page puts it in (site.pages.views.with_bibliography)."""

    def render(self, call: DirectiveCall, out: Output) -> str:
        return out.macro("bibliography_here")


@registers("raw")
class Raw(Vanishing):
    """``{raw} html``: on a notebook's page its HTML, as raw HTML in Markdown; other formats vanish."""

    @staticmethod
    def shown(call: DirectiveCall, page: PageContext) -> bool:
        return page.notebook and call.argument.strip().lower() == "html"

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        if self.shown(call, page):
            define_anchors(call.body, page)

    def render(self, call: DirectiveCall, out: Output) -> str:
        return raw_html(call.body, out.page, out.env) if self.shown(call, out.page) else ""


@registers(*CONTAINERS)
class Container(Directive):
    """Layout: the content, the argument as a title (Pandoc's divs: markdown.pandoc)."""

    def render(self, call: DirectiveCall, out: Output) -> str:
        title = out.inline(call.argument, call.line) if call.argument else ""
        return out.macro("container", f"myst-{css_name(call.name)}", title, out.body(call), call.anchor)


class Unknown(Container):
    """A directive nobody registered: shown as a container (the resolve pass warned)."""


def register(registry: Registry) -> None:
    register_all(registry, Admonition, TitledAdmonition, Version, MathBlock, CodeBlock, Figure, EvalRst,
                 ListTable, Table, Vanishing, BibliographyHere, Raw, Container)
    registry.unknown_directive = Unknown()

