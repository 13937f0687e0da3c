"""CSS text from tinycss2 nodes that a browser reads back as the same tokens.

Written side by side, two tokens can run together into others: ``/`` then ``*`` open a
comment, ``a`` then ``b`` make one ident, ``1`` then ``%`` a percentage.  CSS Syntax's
serialisation ("serialize tokens", its table of adjacent tokens) puts an empty comment
between such pairs; tinycss2's own ``serialize`` misses some of them (``-`` ``-``, a number
before ``%``, ``/`` before its ``*=`` token) and writes strings and URLs as they were typed
(an unclosed ``"abc`` at the end of the input stays unclosed).  Here every pair of the table
is separated, strings and URLs are written from their values, and rules are written in one
layout that ``css_check`` can read back and compare.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tinycss2 import ast
from tinycss2.serializer import serialize_identifier, serialize_name, serialize_string_value, serialize_url

_NUMBERS = {"ident", "function", "url", "bad-url", "number", "percentage", "dimension", "-->"}
# CSS Syntax's table: a token of the row, then one of these, need a comment between them.
# Keys and values are token kinds, or a delimiter's first character; "(" is a (-block.
_SEPARATED: dict[str, frozenset[str]] = {
    "ident": frozenset(_NUMBERS | {"-", "("}),
    "at-keyword": frozenset(_NUMBERS | {"-"}),
    "hash": frozenset(_NUMBERS | {"-"}),
    "dimension": frozenset(_NUMBERS | {"-"}),
    "#": frozenset(_NUMBERS | {"-"}),
    "-": frozenset(_NUMBERS | {"-"}),
    "number": frozenset(_NUMBERS | {"%"}),
    "@": frozenset({"ident", "function", "url", "bad-url", "-", "-->"}),
    ".": frozenset({"number", "percentage", "dimension"}),
    "+": frozenset({"number", "percentage", "dimension"}),
    "/": frozenset({"*"}),
    # Beyond the table: pairs tinycss2 reads as one token ("*=", "||") and "<!" of "<!--".
    "$": frozenset({"="}), "*": frozenset({"="}), "^": frozenset({"="}), "~": frozenset({"="}),
    "|": frozenset({"=", "|"}), "<": frozenset({"!"}),
    "unicode-range": frozenset(_NUMBERS | {"-", "?", "("}),
    # Two whitespace tokens (a comment between them was skipped) would read back as one.
    "whitespace": frozenset({"whitespace"}),
}
_EXPONENT = re.compile(r"[eE][+-]?\d")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")


def _kind(node: ast.Node, first: bool) -> str:
    """The kind the table knows ``node`` by; a literal of several characters by the
    character that touches its neighbour (its last when ``first``, else its first)."""
    if isinstance(node, ast.LiteralToken):
        if node.value in ("-->", "<!--"):
            return node.value
        return node.value[-1] if first else node.value[0]
    if isinstance(node, ast.ParenthesesBlock):
        return "("
    if isinstance(node, ast.ParseError):
        return node.kind
    return node.type


def _needs_comment(before: ast.Node, after: ast.Node) -> bool:
    if isinstance(before, ast.IdentToken) and before.value == "--" and _kind(after, False) == ">":
        return True  # "--" then ">" would read as "-->"
    return _kind(after, False) in _SEPARATED.get(_kind(before, True), ())


def _number(node: ast.NumberToken | ast.PercentageToken | ast.DimensionToken) -> str:
    text = node.representation
    if _NUMBER.fullmatch(text):
        return text
    return str(node.int_value) if node.is_integer else repr(float(node.value))


def _write_one(node: ast.Node, out: list[str]) -> None:
    if isinstance(node, ast.StringToken):
        out.append(f'"{serialize_string_value(node.value)}"')
    elif isinstance(node, ast.URLToken):
        out.append(f"url({serialize_url(node.value)})")
    elif isinstance(node, ast.NumberToken):
        out.append(_number(node))
    elif isinstance(node, ast.PercentageToken):
        out.append(_number(node) + "%")
    elif isinstance(node, ast.DimensionToken):
        unit = node.unit
        # A unit like "e3" would read as an exponent ("1e3" is a thousand): escape its "e".
        written = f"\\{ord(unit[0]):x} {serialize_name(unit[1:])}" if _EXPONENT.match(unit) \
            else serialize_identifier(unit)
        out.append(_number(node) + written)
    elif isinstance(node, ast.FunctionBlock):
        out.append(serialize_identifier(node.name) + "(")
        _write(node.arguments, out)
        out.append(")")
    elif isinstance(node, (ast.ParenthesesBlock, ast.SquareBracketsBlock, ast.CurlyBracketsBlock)):
        closing = {"(": ")", "[": "]", "{": "}"}[node.type[0]]
        out.append(node.type[0])
        _write(node.content, out)
        out.append(closing)
    elif isinstance(node, (ast.IdentToken, ast.AtKeywordToken, ast.HashToken, ast.WhitespaceToken,
                           ast.LiteralToken, ast.UnicodeRangeToken)):
        out.append(node.serialize())
    else:
        raise ValueError(f"no CSS text for a {type(node).__name__}")


def _write(nodes: Iterable[ast.Node], out: list[str]) -> None:
    previous: ast.Node | None = None
    for node in nodes:
        if isinstance(node, ast.Comment):
            continue
        if previous is not None:
            if isinstance(previous, ast.LiteralToken) and previous.value == "\\":
                # A lone backslash must be followed by a newline, or it escapes what follows.
                if not (isinstance(node, ast.WhitespaceToken) and node.value.startswith("\n")):
                    out.append("\n")
            elif _needs_comment(previous, node):
                out.append("/**/")
        _write_one(node, out)
        previous = node
    if isinstance(previous, ast.LiteralToken) and previous.value == "\\":
        out.append("\n")


def serialize(nodes: Iterable[ast.Node]) -> str:
    """``nodes`` (component values) as CSS text that tokenizes back into the same tokens."""
    out: list[str] = []
    _write(nodes, out)
    return "".join(out)


def trimmed(nodes: list[ast.Node]) -> list[ast.Node]:
    """``nodes`` without comments and without whitespace at either end."""
    nodes = [n for n in nodes if not isinstance(n, ast.Comment)]
    start, end = 0, len(nodes)
    while start < end and isinstance(nodes[start], ast.WhitespaceToken):
        start += 1
    while end > start and isinstance(nodes[end - 1], ast.WhitespaceToken):
        end -= 1
    return nodes[start:end]


def declaration_text(name: str, value: list[ast.Node], important: bool) -> str:
    """One declaration, ``name: value`` (``!important`` when flagged), without its ``;``."""
    flag = " !important" if important else ""
    return f"{serialize_identifier(name)}: {serialize(trimmed(value))}{flag}"


def rule_text(prelude: list[ast.Node], declarations: list[str]) -> str:
    """A style rule: its selectors, then its declarations (from ``declaration_text``)."""
    return f"{serialize(trimmed(prelude))} {{ {'; '.join(declarations)} }}"


def group_text(keyword: str, prelude: list[ast.Node], rules: list[str]) -> str:
    """A conditional group rule (``@media``, ``@supports``...) holding ``rules``."""
    return f"@{serialize_identifier(keyword)} {serialize(trimmed(prelude))} {{\n" + "\n".join(rules) + "\n}"
