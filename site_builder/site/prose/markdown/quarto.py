"""Quarto's labels in Markdown prose, read into the tokens MyST's constructs make.

``## Title {#sec-x}`` is a labelled heading, ``![Caption](img.png){#fig-x}`` alone in its
paragraph a ``{figure}`` (numbered "Figure N" with the page's other figures, its cells' too), ``$$ ... $$ {#eq-x}``
a labelled equation, and a table followed by ``: Caption {#tbl-x}`` a captioned table
numbered "Table N" (resolve numbers them), so Quarto's ``@sec-x``, ``@fig-x``, ``@eq-x``,
``@tbl-x`` and MyST's roles resolve to them, on the page and across the site.  Syntax only:
``quarto_labels`` rewrites a text's tokens before they are resolved.
"""

from __future__ import annotations

import re

from markdown_it.token import Token

from site_builder.source.cell_options import column_widths
from site_builder.source.syntax.markdown import inline_text, pandoc_attributes

_ATTRIBUTES = re.compile(r"\{#(?P<id>[\w.:-]+)(?:[ \t][^{}\n]*)?\}")  # matched whole, on "{#..." only


def _label_at_end(text: str) -> tuple[str, str] | None:
    """(the text before it, the id) of a Pandoc attribute block ``{#id ...}`` ending ``text``."""
    stripped = text.rstrip()
    start = stripped.rfind("{#")
    match = _ATTRIBUTES.fullmatch(stripped, start) if start >= 0 else None
    return (stripped[:start].rstrip(), match.group("id")) if match else None


def quarto_labels(tokens: list[Token], table_widths: tuple[float, ...] = ()) -> None:
    """Rewrite ``tokens`` (one text's, block level) in place (see the module docstring); a table
    without widths of its own takes ``table_widths`` (the document's ``tbl-colwidths``)."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open" and i + 1 < len(tokens):
            _heading(token, tokens[i + 1])
        elif token.type == "paragraph_open" and i + 2 < len(tokens) and tokens[i + 1].type == "inline":
            replaced = _equation(tokens[i + 1]) or _figure(tokens[i + 1])
            if replaced is not None:
                replaced.map = token.map
                tokens[i:i + 3] = [replaced]
        elif token.type == "table_close" and i + 3 < len(tokens) and tokens[i + 1].type == "paragraph_open":
            _table_caption(tokens, i)
        i += 1
    if table_widths:
        for i in reversed([i for i, t in enumerate(tokens) if t.type == "table_open"]):
            after = i + 1 + (tokens[i + 1].type == "caption_open") * 3  # past a caption: open, inline, close
            if tokens[after].type != "colgroup_open":
                tokens[after:after] = _columns(table_widths)


def _heading(heading: Token, inline: Token) -> None:
    """``## Title {#sec-x .unnumbered}`` (or ``{-}``): the label, the classes kept, the braces gone."""
    children = inline.children or []
    found = _attributes_at_end(children[-1].content) if children and children[-1].type == "text" else None
    if found is not None:
        children[-1].content, ident, classes = found
        if ident:
            heading.meta["label"] = ident
        if classes:
            heading.attrSet("class", " ".join(classes))


def _attributes_at_end(text: str) -> tuple[str, str, list[str]] | None:
    """(the text before it, id, classes) of a Pandoc attribute block ending ``text``, read by
    mdit-py-plugins' attribute parser; None when ``text`` ends with none."""
    stripped = text.rstrip()
    start = stripped.rfind("{") if stripped.endswith("}") else -1
    if start < 0:
        return None
    block = stripped[start:]
    if block == "{-}":
        return stripped[:start].rstrip(), "", ["unnumbered"]
    found = pandoc_attributes(block)
    if found is None:
        return None
    return stripped[:start].rstrip(), found.get("id", ""), found.get("class", "").split()


def _equation(inline: Token) -> Token | None:
    children = inline.children or []
    if len(children) != 2 or children[0].type != "math_inline_double" or children[1].type != "text":
        return None
    found = _label_at_end(children[1].content)
    if found is None or found[0]:
        return None
    return Token("math_block_label", "math", 0, content=children[0].content, info=found[1], block=True)


def _figure(inline: Token) -> Token | None:
    children = inline.children or []
    if len(children) != 1 or children[0].type != "image":
        return None
    image = children[0]
    label, src = str(image.attrGet("id") or ""), str(image.attrGet("src") or "")
    if not label.startswith("fig-") or not src or any(c in src for c in " \t\n"):
        return None
    caption, alt = image.content.replace("\n", " "), str(image.attrGet("fig-alt") or "") or inline_text(image.children)
    figure = Token("colon_fence", "div", 0, info=f"{{figure}} {src}", markup=":::", block=True,
                   content=f":name: {label}\n" + (f":alt: {alt}\n" if alt else "")
                   + "".join(f":width: {w}\n" for w in [str(image.attrGet("width") or "")] if w) + f"\n{caption}\n")
    figure.meta["data"] = {"quarto": True}  # "Figure N", as Quarto names it
    return figure


def _table_caption(tokens: list[Token], close: int) -> None:
    """A table followed by ``: Caption {#tbl-x tbl-colwidths="[25,75]"}``: the paragraph becomes the
    table's caption, the label the table's, its column widths a ``<colgroup>`` (``<col width>``: the
    Content-Security-Policy runs no ``style`` attribute)."""
    inline = tokens[close + 2]
    children = inline.children or []
    if not inline.content.startswith(": ") or not children or children[0].type != "text":
        return  # a caption is ": Caption", with attributes or none (Pandoc's table caption)
    found = _attributes_at_end(children[-1].content) if children[-1].type == "text" else None
    attributes = pandoc_attributes(children[-1].content[len(found[0]):].strip()) or {} if found else {}
    if found is not None:
        children[-1].content = found[0]
    children[0].content = children[0].content.removeprefix(":").lstrip()
    start = next(j for j in range(close, -1, -1) if tokens[j].type == "table_open" and tokens[j].level == tokens[close].level)
    if found is not None and found[1]:
        tokens[start].meta["label"] = found[1]
    caption = [Token("caption_open", "caption", 1, block=True), inline, Token("caption_close", "caption", -1, block=True)]
    del tokens[close + 1:close + 4]
    tokens[start + 1:start + 1] = caption + _columns(column_widths(attributes.get("tbl-colwidths", "")))


def _columns(widths: tuple[float, ...]) -> list[Token]:
    """A table's ``<colgroup>`` of ``widths`` (percent; ``<col width>``: the Content-Security-Policy
    runs no ``style`` attribute), none without widths."""
    if not widths:
        return []
    return [Token("colgroup_open", "colgroup", 1, block=True),
            *(Token("col", "col", 0, attrs={"width": f"{w:g}%"}, block=True) for w in widths),
            Token("colgroup_close", "colgroup", -1, block=True)]
