"""Parse and resolve: Markdown text -> tokens whose roles, directives, targets and math know
their handler, number, label and id, before anything is rendered.

The same pass runs twice per page, with a fresh context each time: once before any page is
rendered (``labels.label_definitions``: what every page defines, so a ``{ref}`` resolves across the site),
then when the page renders, so both number everything alike. A directive's Markdown body is
parsed here, ``MAX_DIRECTIVE_DEPTH`` directives deep at most (deeper ones show their text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from site_builder.site.prose.label_ids import PageIds, is_id_label
from site_builder.site.prose.markdown.context import Definition, Label, PageContext
from site_builder.site.prose.markdown.raw_html import define_anchors
from site_builder.site.prose.markdown.registry import DirectiveCall, RoleCall, default_registry
from site_builder.site.prose.markdown.quarto import quarto_labels
from site_builder.site.prose.markdown.xrefs import resolve_links
from site_builder.source.syntax.citations import CITATION_TOKEN
from site_builder.source.syntax.markdown import MAX_DIRECTIVE_DEPTH, DirectiveSyntax, directive_of, inline_text, parse

from markdown_it.token import Token


@dataclass(frozen=True)
class Where:
    """Where a text is: its first line in the entry's source (0: unknown), the line of its
    page's text it starts at (a directive's body: below the directive), its ids' prefix, its depth."""

    first_line: int = 0
    offset: int = 0
    id_prefix: str = ""
    depth: int = 0

    def line(self, token_line: int) -> int:
        """The source line of the text's 0-based line ``token_line`` (0 when unknown)."""
        return self.first_line + self.offset + token_line if self.first_line else 0

    def deeper(self, offset: int) -> Where:
        """A directive's body, starting at line ``offset`` of the page's text."""
        return Where(self.first_line, offset, self.id_prefix, self.depth + 1)


def parse_resolved(text: str, page: PageContext, where: Where = Where()) -> tuple[list[Token], dict[str, object]]:
    """The tokens of ``text``, resolved against ``page``, and the parse's env (references, footnotes)."""
    env: dict[str, object] = {}
    tokens = parse(text, page.typography, env)
    resolve(tokens, page, where)
    return tokens, env


def resolve(tokens: list[Token], page: PageContext, where: Where) -> None:
    """Resolve ``tokens`` in place, in page order (see the module docstring)."""
    quarto_labels(tokens, page.table_widths)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.map:
            page.at = where.offset + token.map[0]
        line = where.line(token.map[0]) if token.map else 0
        if token.type in ("fence", "colon_fence"):
            syntax = directive_of(token)
            if syntax is not None:
                _directive(tokens, i, syntax, page, where, line)
        elif token.type == "myst_target":
            _target(tokens, i, page)
        elif token.type == "math_block_label":
            number = page.number("equation")
            token.meta["number"] = number
            token.meta["anchor"] = page.define(token.info, f"({number})", str(number))
        elif token.type == "heading_open":
            text = inline_text(tokens[i + 1].children)
            if token.meta.get("label"):  # Quarto's "## Title {#sec-x}"
                token.attrSet("id", page.define(token.meta["label"], text) or page.heading_id(text, where.id_prefix))
            elif not token.attrGet("id"):
                token.attrSet("id", page.heading_id(text, where.id_prefix))
            if page.notebook:
                page.jupyter_heading(text, str(token.attrGet("id")))
        elif token.type == "table_open" and token.meta.get("label"):  # Quarto's ": Caption {#tbl-x}"
            number = page.number("table")
            anchor = page.define(token.meta["label"], f"Table {number}", str(number))
            if anchor:
                token.attrSet("id", anchor)
            (tokens[i + 2].children or []).insert(0, Token("text", "", 0, content=f"Table {number}: "))
        elif token.type == "html_block" and page.notebook:
            define_anchors(token.content, page)
        elif token.type == "inline":
            _roles(token.children or [], page, line)
        i += 1


def _directive(tokens: list[Token], index: int, syntax: DirectiveSyntax, page: PageContext, where: Where,
               line: int) -> None:
    registry = default_registry()
    call = DirectiveCall(syntax.name, syntax.argument, syntax.options, syntax.body, line,
                         line + syntax.body_line if line else 0)
    body_offset = page.at + syntax.body_line
    gathered = _gathered(tokens, index, call)
    handler, known = registry.directive(call.name)
    if not known:
        page.warn(line, f"unknown directive {{{call.name}}}: its content is shown as text")
    tokens[index].meta["call"], tokens[index].meta["handler"] = call, handler
    call.data.update(tokens[index].meta.get("data", {}))  # what the syntax that made it says (Quarto's)
    handler.resolve(call, page)
    if call.label and "anchor" not in call.data:  # its id now, before its content's labels
        call.data["anchor"] = page.define(call.label, call.argument or call.label)
    if gathered is not None:
        call.children = gathered  # resolved in this pass already, as tokens of this text
        resolve(gathered, page, where)
    elif handler.content:
        if where.depth >= MAX_DIRECTIVE_DEPTH:
            page.warn(line, f"directives nested more than {MAX_DIRECTIVE_DEPTH} deep: "
                            f"the body of {{{call.name}}} is shown as text")
            call.data["too_deep"] = True
            return
        children, env = parse_resolved(call.body, page, where.deeper(body_offset))
        call.children = children
        call.data["env"] = env


def _gathered(tokens: list[Token], index: int, call: DirectiveCall) -> list[Token] | None:
    """The tokens between a ``{solution-start}`` (or exercise's) and its ``-end`` in the same text,
    taken out of ``tokens``: the pair reads as one directive. None for other directives."""
    if not call.name.endswith("-start"):
        return None
    base = call.name.removesuffix("-start")
    for end in range(index + 1, len(tokens)):
        syntax = directive_of(tokens[end]) if tokens[end].level == tokens[index].level else None
        if syntax is not None and syntax.name == f"{base}-end":
            inside = tokens[index + 1:end]
            del tokens[index + 1:end + 1]
            call.name = base
            return inside
    return None


def _target(tokens: list[Token], index: int, page: PageContext) -> None:
    """``(label)=``: the label names the element after it (its id), a heading by its text."""
    token, name = tokens[index], tokens[index].content.strip()
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    heading = after is not None and after.type == "heading_open"
    anchor = page.define(name, inline_text(tokens[index + 2].children) if heading else name)
    token.meta["anchor"] = anchor
    if not anchor:
        token.meta["attached"] = True  # a second definition, or no id: the target shows nothing
    elif after is not None and after.nesting == 1 and not after.attrGet("id") and after.type != "inline":
        after.attrSet("id", anchor)
        token.meta["attached"] = True


SHOWN_SHORTCODES = ("pagebreak", "video", "kbd")  # a .qmd's includes are expanded before (source.quarto.shortcodes)


def _left_out(name: str, content: str) -> str:
    """Why a shortcode is left out of the page."""
    why = {"meta": "the front matter has no text, number or true/false under that key",
           "var": "_variables.yml (in the demos folder) has no text, number or true/false under that key",
           "env": "a page never shows the building machine's environment"}.get(
        name, f"it is not supported here (known: {', '.join(SHOWN_SHORTCODES)}, include, meta, var)")
    return f"the shortcode {{{{< {content} >}}}} is left out: {why}"


def _roles(children: list[Token], page: PageContext, line: int) -> None:
    """Links to labels and pages, then roles (and Pandoc's citations, read as roles), in order."""
    registry = default_registry()
    resolve_links(children, page, line)
    below = 0  # lines of the paragraph above the role (its line breaks so far)
    for child in children:
        below += child.type in ("softbreak", "hardbreak")
        if child.type == "html_inline" and page.notebook:
            define_anchors(child.content, page)
        if child.type == "shortcode" and child.meta.get("name") not in SHOWN_SHORTCODES:
            page.warn(line + below if line else 0, _left_out(child.meta.get("name", ""), child.content))
        if child.type == "code_inline":  # Quarto's `{python} expr` warns with its line
            child.meta["line"] = line + below if line else 0
        if child.type not in ("myst_role", CITATION_TOKEN):
            continue
        call = RoleCall(child.meta.get("name", ""), child.content, line + below if line else 0)
        handler, known = registry.role(call.name)
        if not known:
            page.warn(call.line, f"unknown role {{{call.name}}}: its text is shown")
        child.meta["call"], child.meta["handler"] = call, handler
        handler.resolve(call, page)


def _markdown_definitions(texts: list[str], typography: bool = False) -> list[Definition]:
    """The labels Markdown ``texts`` (one page's) define, in page order, numbered as rendering numbers them."""
    page = PageContext(typography=typography)
    for source, text in enumerate(texts):
        page.source = source
        if text.strip():
            parse_resolved(text, page)
    return page.definitions


def labels_of(entry: str, texts: list[str], typography: bool = False) -> dict[str, Label]:
    """The labels Markdown texts (one page's) define, the first of each name that can be an id,
    with their ids (labels.page_labels adds the page's blocks and says what is wrong)."""
    ids, found = PageIds(), {}
    for d in _markdown_definitions(texts, typography):
        if d.kind == "label" and d.name not in found and is_id_label(d.name):
            found[d.name] = Label(entry, ids.allocate(d.name)[0], d.text, "", d.number)
    return found
