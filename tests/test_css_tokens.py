"""A value's CSS cannot leave its box, whatever its tokens (property-based, with Hypothesis).

Generated style sheets and ``style`` attributes, made of the pieces that once let a value
open a comment in the page's value style sheet (``/`` ``*``, strings holding ``*/``, braces,
escapes, ``<!--``...), go through the sanitiser; the sheet it publishes is read back with
tinycss2 and checked here on its own terms: no comment but the empty separators, every rule
under the value's box, every declaration on the allow-list.
"""

from __future__ import annotations

import html as html_lib
import re

import pytest
import tinycss2
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tinycss2 import ast

from site_builder.site.safety.css import PROPERTIES
from site_builder.site.safety.css_check import sheet_problem
from site_builder.site.safety.css_syntax import serialize
from site_builder.site.outputs.value_html import clean_value_html

SCOPE = "value-7"
PIECES = [
    "/", "*", "/*", "*/", "//**/*", "/**/", "'*/'", '"*/ } main { display: none }"', "'a\\'*/'", '"\\"*/"',
    "{", "}", ";", ":", ",", "(", ")", "[", "]", " ", "\n", "\t", "\\", "\\\n", "\\2a ", "\\/", "\\*",
    "a", "p", "div", ".x", "#main", "html", "body", ":root", "&", ">", "+", "~", "||", "*=", "|", "=",
    "-", "--", "--a", "--x-y", "-->", "<!--", "<", "!", "@", "@media", "@import", "@supports", "@layer",
    "@font-face", "@keyframes", "1", "2e3", "1\\65 3", ".5", "%", "px", "e3", "10px", "u+1?", "!important",
    "url(x)", "url(data:image/png;base64,AA)", "url('*/')", "url(", "javascript:", "var(--a)", "calc(",
    "color", "content", "anchor-name", "position-anchor", "position", "fixed", "absolute", "z-index",
    "display", "none", "inset", "0", "red", "expression(", "'", '"',
]
piece = st.sampled_from(PIECES)
text = st.lists(piece | st.text(alphabet="/*'\"{};:\\-<>!@#.%()[] ae1\n", max_size=3), max_size=24).map("".join)
declarations = st.lists(st.tuples(st.sampled_from(["color", "content", "anchor-name", "--a", "position", "width"]),
                                  text), max_size=4).map(lambda ds: "; ".join(f"{n}: {v}" for n, v in ds))
rule = st.tuples(text, declarations).map(lambda r: f"{r[0]} {{ {r[1]} }}")
sheet = st.lists(rule | text, max_size=5).map("\n".join)

ATTACKS = [
    ("a //**/* { color: red } .x { content: \"*/ body::after { position: fixed; inset: 0; z-index: 2147483647;"
     " content: 'expired' } .site-header { display: none }\" }", ""),
    ("", "anchor-name: --a //**/*; content: '*/ } main { display: none }'"),
    (".x { --a\\{\\}\\/\\*: red } .y { content: '*/ body { display: none }' }", ""),
    ("a /**/*= b { color: red } .z { content: '*/ main { display: none }' }", ""),
]


def _comments_and_errors(nodes: list[ast.Node]) -> list[str]:
    """Every comment that is not the empty separator, and every parse error, at any depth."""
    found = []
    for node in nodes:
        if isinstance(node, ast.Comment) and node.value:
            found.append(f"comment /*{node.value}*/")
        elif isinstance(node, ast.ParseError):
            found.append(f"parse error {node.kind}")
        for inner in (getattr(node, "content", None), getattr(node, "arguments", None),
                      getattr(node, "prelude", None), getattr(node, "value", None)):
            if isinstance(inner, list):
                found += _comments_and_errors(inner)
    return found


def _selector_is_boxed(selector: list[ast.Node]) -> bool:
    words = [t for t in selector if not isinstance(t, ast.Comment)]
    while words and isinstance(words[-1], ast.WhitespaceToken):
        words.pop()
    while words and isinstance(words[0], ast.WhitespaceToken):
        words.pop(0)
    if not words or not isinstance(words[0], ast.HashToken) or words[0].value != SCOPE:
        return False
    if len(words) == 1:
        return True
    following = [t for t in words[1:] if not isinstance(t, ast.WhitespaceToken)]
    return (isinstance(words[1], ast.WhitespaceToken)
            and not (isinstance(following[0], ast.LiteralToken) and following[0].value in ("+", "~", "||")))


def _value_is_safe(name: str, value: list[ast.Node]) -> bool:
    for token in value:
        if isinstance(token, ast.URLToken) and not token.value.startswith("data:image/"):
            return False
        if isinstance(token, ast.CurlyBracketsBlock):
            return False
        if isinstance(token, (ast.FunctionBlock, ast.ParenthesesBlock, ast.SquareBracketsBlock)):
            inner = token.arguments if isinstance(token, ast.FunctionBlock) else token.content
            if isinstance(token, ast.FunctionBlock) and token.lower_name == "url":
                strings = [t for t in inner if not isinstance(t, ast.WhitespaceToken)]
                if not (len(strings) == 1 and isinstance(strings[0], ast.StringToken)
                        and strings[0].value.startswith("data:image/")):
                    return False
            elif isinstance(token, ast.FunctionBlock) and token.lower_name in ("expression", "image-set", "element"):
                return False
            if not _value_is_safe(name, inner):
                return False
    words = [t for t in value if isinstance(t, ast.IdentToken)]
    return not (name == "position" and any(w.lower_value in ("fixed", "sticky") for w in words))


def problems_in(css: str) -> list[str]:
    """What in ``css``, read as a browser reads it, escapes the value's box (empty when nothing)."""
    nodes = tinycss2.parse_stylesheet(css, skip_comments=False, skip_whitespace=True)
    found = _comments_and_errors(nodes)
    queue = list(nodes)
    while queue:
        node = queue.pop()
        if isinstance(node, ast.Comment) and not node.value:
            continue
        if isinstance(node, ast.AtRule) and node.lower_at_keyword in ("media", "supports", "container") \
                and node.content is not None:
            queue += tinycss2.parse_blocks_contents(node.content, skip_whitespace=True)
            continue
        if not isinstance(node, ast.QualifiedRule):
            found.append(f"a {node.type} at the top of the sheet")
            continue
        selectors = [[]]
        for token in node.prelude:
            if isinstance(token, ast.LiteralToken) and token.value == ",":
                selectors.append([])
            else:
                selectors[-1].append(token)
        found += [f"unscoped selector {serialize(s)!r}" for s in selectors if not _selector_is_boxed(s)]
        for item in tinycss2.parse_blocks_contents(node.content, skip_whitespace=True):
            if isinstance(item, ast.Comment) and not item.value:
                continue
            if not isinstance(item, ast.Declaration):
                found.append(f"a {item.type} inside a rule")
            elif not (item.name.startswith("--") or item.lower_name in PROPERTIES):
                found.append(f"the property {item.name!r}")
            elif not _value_is_safe(item.lower_name, item.value):
                found.append(f"the value of {item.name}: {serialize(item.value)!r}")
    return found


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sheet, declarations)
@example(*ATTACKS[0])
@example(*ATTACKS[1])
@example(*ATTACKS[2])
@example(*ATTACKS[3])
def test_no_token_sequence_leaves_the_box(style_sheet: str, style: str) -> None:
    html = f'<style>{style_sheet}</style><p style="{html_lib.escape(style)}">x</p>'
    styled = clean_value_html(html, SCOPE)
    assert problems_in(styled.css) == [], styled.css
    assert not styled.dropped, (styled.dropped, styled.css)  # what css.py writes always passes its check


@settings(max_examples=400, deadline=None)
@given(text)
@example(" /**/ ")  # two whitespace tokens, once written as one
def test_serialised_tokens_read_back_as_the_same_tokens(css: str) -> None:
    tokens = tinycss2.parse_component_value_list(css, skip_comments=True)
    if _comments_and_errors(tokens):
        return  # the sanitiser keeps no parse error
    again = tinycss2.parse_component_value_list(serialize(tokens), skip_comments=True)
    assert _shape(again) == _shape(tokens)


def _shape(tokens: list[ast.Node]) -> list[object]:
    shape: list[object] = []
    for t in tokens:
        if isinstance(t, ast.FunctionBlock):
            shape.append(("function", t.name, _shape(t.arguments)))
        elif isinstance(t, (ast.ParenthesesBlock, ast.SquareBracketsBlock, ast.CurlyBracketsBlock)):
            shape.append((t.type, _shape(t.content)))
        elif isinstance(t, ast.ParseError):
            shape.append(("error", t.kind))
        else:
            value = getattr(t, "representation", None) if isinstance(t, (ast.NumberToken, ast.PercentageToken,
                                                                         ast.DimensionToken)) else None
            shape.append((t.type, getattr(t, "value", None), value, getattr(t, "unit", None)))
    return shape


def test_the_reported_attacks_are_boxed() -> None:
    sheet_attack, style_attack = ATTACKS[0][0], ATTACKS[1][1]
    styled = clean_value_html(f"<style>{sheet_attack}</style><p style=\"{style_attack}\">x</p>", SCOPE)
    assert problems_in(styled.css) == []
    # The string still holds its "*/": as a string, closing nothing.
    assert re.search(r'content: "\*/ body::after', styled.css)
    assert "a //**/*" in styled.css or "a /" not in styled.css


@pytest.mark.parametrize("css", [
    "body { display: none }",
    "#value-7 a /* { color: red }\n#value-7 .x { content: \"*/ main { display: none }\" }",
    "#value-7 ~ p { color: red }",
    "#value-7, main { color: red }",
    "#value-7.x, #value-70 p { color: red }",
    "#value-7 p { position: fixed }",
    "#value-7 p { color: red; & main { display: none } }",
    "@import url(x.css);",
    "@layer x { #value-7 p { color: red } }",
    "#value-7 p { anchor-name: --page-anchor }",
    "#value-7 p { color: red } /* a comment */",
    "#value-7 p { color: red }\n",
    "#value-7 p { color: red",
])
def test_the_check_refuses_a_sheet_that_is_not_the_values(css: str) -> None:
    assert sheet_problem(css, SCOPE, SCOPE)


def test_the_check_accepts_what_the_sanitiser_writes() -> None:
    css = clean_value_html("<style>@media (min-width: 1px) { html p, .a > #b { color: red; --x: 'y' } }</style>"
                           '<p style="anchor-name: --m; width: calc(1px + 2em)">x</p>', SCOPE).css
    assert css == ("@media (min-width: 1px) {\n#value-7 p, #value-7 .a > #value-7-b { color: red; --x: \"y\" }\n}\n"
                   "#value-7 .value-7-style-1 { anchor-name: --value-7-m !important; width: calc(1px + 2em) !important }")
    assert sheet_problem(css, SCOPE, SCOPE) is None
