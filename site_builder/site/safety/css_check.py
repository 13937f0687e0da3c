"""A value's finished style sheet, read back as a browser reads it, before it is published.

css.py builds the sheet from what it keeps; this check parses the text again (tinycss2,
which follows CSS Syntax as browsers do) and holds it to the same rules: every style rule
scoped to the value's box, every declaration on the allow-list, only the grouping rules
css.py writes, and the text exactly as css_syntax writes those rules (so no comment,
string or block opens or closes where no token of its own did).  A sheet that fails is not
published at all: the value is shown without its styles, and the page says so.
"""

from __future__ import annotations

import tinycss2
from tinycss2 import ast

from site_builder.site.safety.css import (
    ANCHOR_PROPERTIES,
    FUNCTIONS,
    GROUPING,
    MAX_DEPTH,
    declaration_allowed,
    safe_tokens,
    selector_tokens,
    split_tokens,
)
from site_builder.site.safety.css_syntax import declaration_text, group_text, rule_text, trimmed

_SIBLINGS = frozenset({"+", "~", "||", ","})


def _scoped(selector: list[ast.Node], scope: str) -> bool:
    """True when ``selector`` is ``#scope`` alone or ``#scope`` and then a descendant or child."""
    if not selector or not isinstance(selector[0], ast.HashToken) or selector[0].value != scope:
        return False
    if len(selector) == 1:
        return True
    rest = trimmed(selector[1:])
    if not isinstance(selector[1], ast.WhitespaceToken) or not rest:
        return False
    if isinstance(rest[0], ast.LiteralToken) and rest[0].value in _SIBLINGS:
        return False
    return selector_tokens(rest, None) is not None


def _declarations(content: list[ast.Node], prefix: str) -> list[str] | str:
    """The block's declarations as written, or why the block is not one a value may keep."""
    written = []
    for node in tinycss2.parse_blocks_contents(content, skip_comments=True, skip_whitespace=True):
        if not isinstance(node, ast.Declaration):
            return f"a {node.type} inside a style rule"
        if not declaration_allowed(node):
            return f"the declaration of {node.name!r} is not allowed"
        name = node.name if node.name.startswith("--") else node.lower_name
        if name in ANCHOR_PROPERTIES and any(
                isinstance(t, ast.IdentToken) and t.value.startswith("--") and not t.value.startswith(f"--{prefix}-")
                for t in node.value):
            return f"an anchor name of {name} is not the value's own"
        written.append(declaration_text(name, node.value, node.important))
    return written


def _rules(nodes: list[ast.Node], scope: str, prefix: str, depth: int) -> list[str] | str:
    written: list[str] = []
    for node in nodes:
        if isinstance(node, ast.QualifiedRule):
            prelude = trimmed(node.prelude)
            if not all(_scoped(trimmed(part), scope) for part in split_tokens(prelude, ",")):
                return f"the selector {tinycss2.serialize(prelude)[:80]!r} is not scoped to the value's box"
            body = _declarations(node.content, prefix)
            if isinstance(body, str):
                return body
            written.append(rule_text(prelude, body))
        elif (isinstance(node, ast.AtRule) and node.lower_at_keyword in GROUPING - {"layer"}
              and node.content is not None and depth <= MAX_DEPTH
              and safe_tokens(node.prelude, FUNCTIONS | {"selector"})):
            inner = _rules(tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True),
                           scope, prefix, depth + 1)
            if isinstance(inner, str):
                return inner
            written.append(group_text(node.lower_at_keyword, node.prelude, inner))
        else:
            return f"a {getattr(node, 'at_keyword', node.type)} rule"
    return written


def sheet_problem(css: str, scope: str, prefix: str) -> str | None:
    """Why ``css``, read back, is not a sheet of rules scoped to ``#scope`` (its ids and anchors
    renamed with ``prefix``) and written as css.py writes them; None when it is."""
    if not css:
        return None
    nodes = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
    written = _rules(nodes, scope, prefix, 0)
    if isinstance(written, str):
        return written
    if "\n".join(written) != css:
        return "it does not read back as it was written"
    return None
