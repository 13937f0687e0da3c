"""Sanitise the CSS of a value's HTML (``<style>`` elements, ``style`` attributes) with tinycss2.

A value may keep its looks, never the page's: every rule is scoped to the value's own box
(``#scope``-prefixed selectors, ``html``/``body``/``:root`` meaning that box), its ids are
the value's renamed ids, and only an allow-list of properties passes, with values made of
known functions only: no ``url()`` but ``data:`` images, no ``@import``, no ``expression()``,
no fixed or sticky positioning, no custom fonts, no global names (``@property``,
``@keyframes``, ``@counter-style``).  The page's own CSS contains the box besides
(``contain: paint``, ``isolation``), so what passes cannot draw outside it.
"""

from __future__ import annotations

import re

import tinycss2
from tinycss2 import ast

from site_builder.site.safety.css_syntax import declaration_text, group_text, rule_text, trimmed

PROPERTIES = frozenset("""
    color background background-color background-image background-position background-size
    background-repeat background-clip background-origin
    border border-top border-right border-bottom border-left border-color border-style
    border-width border-radius border-top-left-radius border-top-right-radius
    border-bottom-left-radius border-bottom-right-radius border-collapse border-spacing
    border-top-color border-right-color border-bottom-color border-left-color
    border-top-style border-right-style border-bottom-style border-left-style
    border-top-width border-right-width border-bottom-width border-left-width
    border-block border-inline border-block-start border-block-end border-inline-start
    border-inline-end outline outline-color outline-style outline-width outline-offset
    margin margin-top margin-right margin-bottom margin-left margin-block margin-inline
    margin-block-start margin-block-end margin-inline-start margin-inline-end
    padding padding-top padding-right padding-bottom padding-left padding-block padding-inline
    padding-block-start padding-block-end padding-inline-start padding-inline-end
    width height min-width min-height max-width max-height inline-size block-size
    min-inline-size max-inline-size min-block-size max-block-size aspect-ratio box-sizing
    display visibility opacity overflow overflow-x overflow-y text-overflow float clear
    position top right bottom left inset z-index vertical-align
    flex flex-direction flex-wrap flex-flow flex-grow flex-shrink flex-basis order gap
    row-gap column-gap align-items align-self align-content justify-content justify-items
    justify-self place-items place-content place-self
    grid grid-template grid-template-columns grid-template-rows grid-template-areas
    grid-column grid-row grid-area grid-auto-flow grid-auto-columns grid-auto-rows
    grid-column-start grid-column-end grid-row-start grid-row-end
    font font-family font-size font-style font-weight font-variant font-variant-numeric
    font-stretch line-height letter-spacing word-spacing text-align text-align-last
    text-decoration text-decoration-line text-decoration-color text-decoration-style
    text-decoration-thickness text-underline-offset text-transform text-indent text-shadow
    white-space word-break overflow-wrap word-wrap hyphens tab-size
    list-style list-style-type list-style-position table-layout caption-side empty-cells
    box-shadow cursor content clip-path filter transform transform-origin
    transition transition-property transition-duration transition-timing-function
    transition-delay user-select color-scheme accent-color scrollbar-width
    anchor-name position-anchor position-area object-fit
""".split())
# Function names a value may use in a property (anything else, expression() or image-set()
# with its string URLs included, drops the declaration).
FUNCTIONS = frozenset("""
    var calc min max clamp rgb rgba hsl hsla hwb lab lch oklab oklch color color-mix light-dark
    linear-gradient radial-gradient conic-gradient repeating-linear-gradient
    repeating-radial-gradient repeating-conic-gradient inset circle ellipse polygon rect xywh
    translate translatex translatey translate3d rotate scale scalex scaley skew skewx skewy
    matrix perspective cubic-bezier steps repeat minmax fit-content anchor anchor-size
    blur brightness contrast drop-shadow grayscale hue-rotate invert saturate sepia
""".split())
# Only pictures carried by the value itself may be fetched (the page's CSP allows data: images).
DATA_IMAGE = re.compile(r"data:image/(png|gif|jpeg|webp|svg\+xml)[;,]", re.IGNORECASE)
POSITIONS = frozenset({"static", "relative", "absolute"})
MAX_Z_INDEX = 9999
# At-rules whose contents are rules again, kept when their condition is safe.
GROUPING = frozenset({"media", "supports", "container", "layer"})
PAGE_ELEMENTS = frozenset({"html", "body"})
# Properties whose dashed idents name anchors: renamed per value, as ids are.
ANCHOR_PROPERTIES = frozenset({"anchor-name", "position-anchor"})
MAX_DEPTH = 8  # of nested @media/@supports/@container


def safe_tokens(tokens: list[ast.Node], functions: frozenset[str] = FUNCTIONS) -> bool:
    """True when the component values use known functions only and fetch nothing but data images."""
    for token in tokens:
        if isinstance(token, ast.URLToken):
            if not DATA_IMAGE.match(token.value.strip()):
                return False
        elif isinstance(token, ast.FunctionBlock):
            if token.lower_name == "url":
                strings = [t for t in token.arguments if isinstance(t, ast.StringToken)]
                if len(strings) != 1 or not DATA_IMAGE.match(strings[0].value.strip()):
                    return False
            elif token.lower_name not in functions or not safe_tokens(token.arguments, functions):
                return False
        elif isinstance(token, (ast.ParenthesesBlock, ast.SquareBracketsBlock)):
            if not safe_tokens(token.content, functions):
                return False
        elif isinstance(token, (ast.CurlyBracketsBlock, ast.AtKeywordToken, ast.ParseError)):
            return False
        elif isinstance(token, ast.IdentToken) and token.lower_value.startswith(("expression", "-moz-binding")):
            return False
    return True


def _plain(tokens: list[ast.Node]) -> list[ast.Node]:
    return [t for t in tokens if not isinstance(t, (ast.WhitespaceToken, ast.Comment))]


def _value_allowed(name: str, tokens: list[ast.Node]) -> bool:
    if not safe_tokens(tokens):
        return False
    words = _plain(tokens)
    if name == "position":  # no fixed or sticky overlays, and no var() to smuggle them in
        return len(words) == 1 and isinstance(words[0], ast.IdentToken) and words[0].lower_value in POSITIONS
    if name == "z-index":
        if len(words) != 1:
            return False
        word = words[0]
        if isinstance(word, ast.IdentToken):
            return word.lower_value == "auto"
        return isinstance(word, ast.NumberToken) and word.is_integer and abs(word.int_value) <= MAX_Z_INDEX
    return True


def _renamed_anchors(tokens: list[ast.Node], prefix: str) -> list[ast.Node]:
    return [ast.IdentToken(t.source_line, t.source_column, f"--{prefix}-{t.value[2:]}")
            if isinstance(t, ast.IdentToken) and t.value.startswith("--") else t
            for t in tokens]


def declaration_allowed(node: ast.Declaration) -> bool:
    """True when the declaration's property is on the allow-list and its value is safe."""
    name = node.name if node.name.startswith("--") else node.lower_name
    return (name.startswith("--") or name in PROPERTIES) and _value_allowed(name, node.value)


def clean_declarations(tokens: list[ast.Node] | str, prefix: str, important: bool = False) -> list[str]:
    """The allowed declarations of a block (or of a ``style`` attribute), each as CSS text.

    ``important`` marks them all ``!important``: a ``style`` attribute, moved into the
    value's style sheet, must still win over the value's other rules, as it did inline.
    """
    kept = []
    for node in tinycss2.parse_blocks_contents(tokens, skip_comments=True, skip_whitespace=True):
        if not isinstance(node, ast.Declaration) or not declaration_allowed(node):
            continue  # nested rules and at-rules: dropped
        name = node.name if node.name.startswith("--") else node.lower_name
        value = trimmed(_renamed_anchors(node.value, prefix) if name in ANCHOR_PROPERTIES else node.value)
        if value:
            kept.append(declaration_text(name, value, important or node.important))
    return kept


# ---------------------------------------------------------------- selectors

_COMBINATORS = frozenset({">", "+", "~"})
_SELECTOR_FUNCTIONS = frozenset({
    "is", "where", "not", "has", "nth-child", "nth-last-child", "nth-of-type",
    "nth-last-of-type", "lang", "dir",
})


def split_tokens(tokens: list[ast.Node], separator: str) -> list[list[ast.Node]]:
    parts: list[list[ast.Node]] = [[]]
    for t in tokens:
        if isinstance(t, ast.LiteralToken) and t.value == separator:
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


def selector_tokens(tokens: list[ast.Node], prefix: str | None) -> list[ast.Node] | None:
    """The selector with its ids renamed ``prefix-id`` (kept as they are when ``prefix`` is None),
    or None when it holds something a value's selector must not."""
    out: list[ast.Node] = []
    for t in tokens:
        if isinstance(t, ast.HashToken):
            value = t.value if prefix is None else f"{prefix}-{t.value}"
            out.append(ast.HashToken(t.source_line, t.source_column, value, True))
        elif isinstance(t, ast.FunctionBlock):
            inner = selector_tokens(t.arguments, prefix) if t.lower_name in _SELECTOR_FUNCTIONS else None
            if inner is None:
                return None
            out.append(ast.FunctionBlock(t.source_line, t.source_column, t.name, inner))
        elif isinstance(t, ast.SquareBracketsBlock):
            if not all(isinstance(x, (ast.IdentToken, ast.StringToken, ast.LiteralToken, ast.WhitespaceToken))
                       for x in t.content):
                return None
            out.append(t)
        elif isinstance(t, (ast.IdentToken, ast.LiteralToken, ast.WhitespaceToken, ast.NumberToken,
                            ast.DimensionToken, ast.StringToken)):
            if isinstance(t, ast.LiteralToken) and t.value in ("&", "{", "}", ";"):
                return None  # nesting: the parent would be the page
            out.append(t)
        elif not isinstance(t, ast.Comment):
            return None
    return out


def _page_compound(compound: list[ast.Node]) -> bool:
    """A compound selector naming the page itself (``html``, ``body.x``, ``:root``)."""
    if not compound:
        return False
    first = compound[0]
    if isinstance(first, ast.IdentToken) and first.lower_value in PAGE_ELEMENTS:
        return True
    return (isinstance(first, ast.LiteralToken) and first.value == ":" and len(compound) > 1
            and isinstance(compound[1], ast.IdentToken) and compound[1].lower_value == "root")


def scope_selector(tokens: list[ast.Node], scope: str, prefix: str) -> list[ast.Node] | None:
    """One complex selector as the value's: under ``#scope``, the page's elements meaning the box."""
    tokens = trimmed(tokens)
    if not tokens:
        return None
    # Leading compounds naming the page (html body .x) are the value's box itself.
    while tokens and not isinstance(tokens[0], ast.WhitespaceToken):
        end = next((i for i, t in enumerate(tokens) if isinstance(t, ast.WhitespaceToken)
                    or (isinstance(t, ast.LiteralToken) and t.value in _COMBINATORS)), len(tokens))
        if not _page_compound(tokens[:end]):
            break
        tokens = trimmed(tokens[end:])
    box = ast.HashToken(1, 1, scope, True)
    if not tokens:
        return [box]
    first = tokens[0]
    if isinstance(first, ast.LiteralToken) and first.value in ("+", "~", "||"):
        return None  # a sibling of the box (or its column's cell) is the page's
    rest = selector_tokens(tokens, prefix)
    if not rest:
        return None
    return [box, ast.WhitespaceToken(1, 1, " "), *rest]


def _joined(selectors: list[list[ast.Node]]) -> list[ast.Node]:
    """Selectors as one prelude: ``a, b``."""
    out: list[ast.Node] = []
    for selector in selectors:
        if out:
            out += [ast.LiteralToken(1, 1, ","), ast.WhitespaceToken(1, 1, " ")]
        out += selector
    return out


def _rules(nodes: list[ast.Node], scope: str, prefix: str, depth: int = 0) -> list[str]:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, ast.QualifiedRule):
            selectors = [scope_selector(part, scope, prefix) for part in split_tokens(node.prelude, ",")]
            kept = [s for s in selectors if s]
            body = clean_declarations(node.content, prefix)
            if kept and body:
                out.append(rule_text(_joined(kept), body))
        elif isinstance(node, ast.AtRule) and node.lower_at_keyword in GROUPING and node.content is not None:
            if depth > MAX_DEPTH or not safe_tokens(node.prelude, FUNCTIONS | {"selector"}):
                continue
            inner = _rules(tinycss2.parse_blocks_contents(node.content, skip_comments=True,
                                                          skip_whitespace=True),
                           scope, prefix, depth + 1)
            if not inner:
                continue
            if node.lower_at_keyword == "layer":
                out.extend(inner)  # a cascade layer could only lower the value's rules: unwrapped
            else:
                out.append(group_text(node.lower_at_keyword, node.prelude, inner))
        # Anything else (@import, @font-face, @keyframes, @property, @page, @namespace...) is dropped.
    return out


def scope_stylesheet(css: str, scope: str, prefix: str) -> str:
    """The rules of ``css`` a value may keep, each scoped to the element ``#scope``.

    ``prefix`` is what the value's ids were renamed with (``id="x"`` became ``prefix-x``).
    """
    nodes = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
    return "\n".join(_rules(nodes, scope, prefix))
