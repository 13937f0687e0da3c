"""HTML re-written tag by tag before nh3 cleans it: the pass that changes what an attribute means.

nh3 decides what may stay; some attributes must first be given their meaning on the page: a
value's ids renamed into its own namespace and its ``style`` moved to a scoped class
(outputs/value_html.py), an id in raw prose HTML given the label namespace and an image's
``src`` the prose-image rule (prose/markdown/raw_html.py).  ``TagRewriter`` reads HTML with
the standard library's parser and writes it again: text escaped, comments, declarations and
the content of ``<script>`` and ``<style>`` left out, every start tag through ``start``.
nh3 still cleans the result, so a tag this parser reads differently from a browser is only
left unrewritten, never let through.
"""

from __future__ import annotations

import html as html_lib
import re
from html.parser import HTMLParser

from markupsafe import Markup

# Elements without an end tag: an end tag written for one is dropped, as a browser ignores it.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})
RAW_TEXT = ("style", "script")  # their text is not markup: given to ``raw_text``, never written
# An attribute name nh3 may read as the parser did (no quote, "<", "=" or "/" inside).
_ATTRIBUTE_NAME = re.compile(r"[a-z_:][-a-z0-9_:.]*")

Attributes = list[tuple[str, str]]


def start_tag(tag: str, attributes: Attributes) -> Markup:
    """``<tag name="value" ...>``, every value escaped (the re-written form of a start tag)."""
    written = "".join(f' {name}="{html_lib.escape(value, quote=True)}"' for name, value in attributes
                      if _ATTRIBUTE_NAME.fullmatch(name))
    return Markup(f"<{tag}{written}>")


class TagRewriter(HTMLParser):
    """Writes HTML again, each start tag as ``start`` returns it (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._in: str | None = None  # "style" or "script" while inside one

    def start(self, tag: str, attributes: Attributes) -> str:
        """The markup written for the start tag ``tag`` ("" leaves the tag out, its content stays)."""
        return start_tag(tag, attributes)

    def end(self, tag: str) -> str:
        """The markup written for the end tag ``tag``."""
        return f"</{tag}>"

    def raw_text(self, tag: str, text: str) -> None:
        """The text of a ``<style>`` or ``<script>`` element (left out of the HTML)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in RAW_TEXT:
            self._in = tag
            return
        self.out.append(self.start(tag, [(name, value or "") for name, value in attrs]))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)  # "<div/>" opens a div, as a browser reads it
        if tag in RAW_TEXT:
            self._in = None

    def handle_endtag(self, tag: str) -> None:
        if tag in RAW_TEXT:
            self._in = None
        elif tag not in VOID:
            self.out.append(self.end(tag))

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.raw_text(self._in, data)
        else:
            self.out.append(html_lib.escape(data, quote=False))

    def rewrite(self, html: str) -> str:
        """``html`` written again (feed, close, join)."""
        self.feed(html)
        self.close()
        return "".join(self.out)
