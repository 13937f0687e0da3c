"""Parse and resolve: Markdown text -> tokens whose roles, directives, targets and math know
their handler, number, label and id, before anything is rendered.

The same pass runs twice per page, with a fresh context each time: once before any page is
rendered (``labels_of``: what every page defines, so a ``{ref}`` resolves across the site),
then when the page renders, so both number everything alike. A directive's Markdown body is
parsed here, ``MAX_DIRECTIVE_DEPTH`` directives deep at most (deeper ones show their text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from site_builder.site.prose.markdown.context import Label, PageContext
from site_builder.site.prose.markdown.registry import DirectiveCall, RoleCall, default_registry
from site_builder.source.markdown_syntax import MAX_DIRECTIVE_DEPTH, DirectiveSyntax, directive_of, inline_text, parse

if TYPE_CHECKING:
    from markdown_it.token import Token


@dataclass(frozen=True)
class Where:
    """Where a text is: its first line in the entry's source (0: unknown), its ids' prefix, its depth."""

    first_line: int = 0
    id_prefix: str = ""
    depth: int = 0

    def line(self, token_line: int) -> int:
        """The source line of the text's 0-based line ``token_line`` (0 when unknown)."""
        return self.first_line + token_line if self.first_line else 0

    def deeper(self, first_line: int) -> Where:
        return Where(first_line, self.id_prefix, self.depth + 1)


def parse_resolved(text: str, page: PageContext, where: Where = Where()) -> tuple[list[Token], dict[str, object]]:
    """The tokens of ``text``, resolved against ``page``, and the parse's env (references, footnotes)."""
    env: dict[str, object] = {}
    tokens = parse(text, page.typography, env)
    resolve(tokens, page, where)
    return tokens, env


def resolve(tokens: list[Token], page: PageContext, where: Where) -> None:
    """Resolve ``tokens`` in place, in page order (see the module docstring)."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
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
            page.define(token.info, f"({number})", "equation", str(number))
        elif token.type == "heading_open" and not token.attrGet("id"):
            token.attrSet("id", page.unique_id(inline_text(tokens[i + 1].children), where.id_prefix))
        elif token.type == "inline":
            _roles(token.children or [], page, line)
        i += 1


def _directive(tokens: list[Token], index: int, syntax: DirectiveSyntax, page: PageContext, where: Where,
               line: int) -> None:
    registry = default_registry()
    call = DirectiveCall(syntax.name, syntax.argument, syntax.options, syntax.body, line,
                         line + syntax.body_line if line else 0)
    gathered = _gathered(tokens, index, call)
    handler, known = registry.directive(call.name)
    if not known:
        page.warn(line, f"unknown directive {{{call.name}}}: its content is shown as text")
    tokens[index].meta["call"], tokens[index].meta["handler"] = call, handler
    handler.resolve(call, page)
    if gathered is not None:
        call.children = gathered  # resolved in this pass already, as tokens of this text
        resolve(gathered, page, where)
    elif handler.content:
        if where.depth >= MAX_DIRECTIVE_DEPTH:
            page.warn(line, f"directives nested more than {MAX_DIRECTIVE_DEPTH} deep: "
                            f"the body of {{{call.name}}} is shown as text")
            call.data["too_deep"] = True
            return
        children, env = parse_resolved(call.body, page, where.deeper(call.body_line))
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
    if after is not None and after.type == "heading_open" and not after.attrGet("id"):
        after.attrSet("id", name)
        token.meta["attached"] = True
        page.define(name, inline_text(tokens[index + 2].children), "section")
        return
    if after is not None and after.nesting == 1 and not after.attrGet("id") and after.type != "inline":
        after.attrSet("id", name)
        token.meta["attached"] = True
    page.define(name, name)


def _roles(children: list[Token], page: PageContext, line: int) -> None:
    registry = default_registry()
    for child in children:
        if child.type != "myst_role":
            continue
        call = RoleCall(child.meta.get("name", ""), child.content, line)
        handler, known = registry.role(call.name)
        if not known:
            page.warn(line, f"unknown role {{{call.name}}}: its text is shown")
        child.meta["call"], child.meta["handler"] = call, handler
        handler.resolve(call, page)


def labels_of(entry: str, texts: list[str], typography: bool = False) -> dict[str, Label]:
    """The labels one page's Markdown texts define, numbered as rendering numbers them."""
    page = PageContext(entry=entry, typography=typography)
    for text in texts:
        parse_resolved(text, page)
    return page.defined
