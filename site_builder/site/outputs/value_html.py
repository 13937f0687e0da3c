"""A value's ``_repr_html_`` with its looks: sanitised HTML plus the scoped CSS it may keep.

The page's Content-Security-Policy (``style-src 'self'``) runs no ``<style>`` element and
no ``style`` attribute, so both move into the page's value style sheet: a first pass
(safety.html_tags) takes the ``<style>`` text out, turns each ``style``
attribute into a class with a rule of its own, and renames the value's ids (``id``,
``label for``, ``#`` links, radio ``name``) so that two values on one page cannot collide
with each other or with the page.  nh3 then cleans the HTML as it cleans every value's, with
the folding controls estimator diagrams use (checkbox + label) allowed; css.py cleans the CSS.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinycss2 import ast

from site_builder.site.safety.css import clean_declarations, scope_stylesheet
from site_builder.site.safety.css_check import sheet_problem
from site_builder.site.safety.css_syntax import rule_text
from site_builder.site.safety.html import clean_html
from site_builder.site.safety.html_tags import Attributes, TagRewriter, start_tag

MAX_CSS_CHARS = 400_000  # of one value's style sheets; more is dropped (the HTML stays)
_CONTROLS = frozenset({"checkbox", "radio"})
_RENAMED = frozenset({"id", "for", "name"})


@dataclass(frozen=True)
class StyledHtml:
    """A value's HTML, sanitised, and the CSS rules it keeps, scoped to ``#scope``."""

    html: str
    css: str
    dropped: str = ""  # why its CSS was left out, when it was (the sheet failed its check)


class _Restyler(TagRewriter):
    """Writes a value's HTML again with its styles taken out and its ids renamed (html_tags)."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.prefix = scope
        self.sheets: list[str] = []
        self.rules: list[str] = []

    def _rename(self, value: str) -> str:
        return f"{self.prefix}-{value}"

    def start(self, tag: str, attributes: Attributes) -> str:
        if tag == "input" and dict(attributes).get("type", "").lower() not in _CONTROLS:
            return ""  # only the controls diagrams fold with; a text box would be a dead form
        kept: Attributes = []
        classes = ""
        for name, value in attributes:
            if name in _RENAMED and value:
                value = self._rename(value)
            elif name == "href" and value.startswith("#") and len(value) > 1:
                value = "#" + self._rename(value[1:])
            elif name == "class":
                classes = f"{classes} {value}".strip()
                continue
            elif name == "style":
                body = clean_declarations(value, self.prefix, important=True)
                if body:
                    cls = f"{self.prefix}-style-{len(self.rules) + 1}"
                    selector = [ast.HashToken(1, 1, self.scope, True), ast.WhitespaceToken(1, 1, " "),
                                ast.LiteralToken(1, 1, "."), ast.IdentToken(1, 1, cls)]
                    self.rules.append(rule_text(selector, body))
                    classes = f"{classes} {cls}".strip()
                continue
            kept.append((name, value))
        if classes:
            kept.append(("class", classes))
        return start_tag(tag, kept)

    def raw_text(self, tag: str, text: str) -> None:
        if tag == "style":
            self.sheets.append(text)


def clean_value_html(html: str, scope: str) -> StyledHtml:
    """``html`` sanitised for a page, with the styles it may keep scoped to the element ``#scope``."""
    restyler = _Restyler(scope)
    rewritten = restyler.rewrite(html)
    sheet = "\n".join(restyler.sheets)
    css = scope_stylesheet(sheet, scope, restyler.prefix) if len(sheet) <= MAX_CSS_CHARS else ""
    rules = "\n".join(r for r in [css, *restyler.rules] if r)
    html = clean_html(rewritten, controls=True).strip()
    problem = sheet_problem(rules, scope, restyler.prefix)
    if problem:  # never expected: css.py writes only what passes; but what is published is what is checked
        return StyledHtml(html=html, css="", dropped=problem)
    return StyledHtml(html=html, css=rules)
