"""HTML re-written tag by tag before nh3 cleans it: the pass that changes what an attribute means.

nh3 decides what may stay; some attributes must first be given their meaning on the page: a
value's ids renamed into its own namespace and its ``style`` moved to a scoped class
(outputs/value_html.py), an id in raw prose HTML given the label namespace and an image's
``src`` the prose-image rule (prose/markdown/raw_html.py).  ``TagRewriter`` reads HTML the
way a browser's tokenizer does and writes it again: text as it was (a ``<`` that opens no tag
escaped), comments, declarations and the content of ``<script>`` and ``<style>`` left out,
every start tag through ``start``, a tag the input leaves unfinished dropped.  nh3 still
cleans the result, so a tag read differently from a browser is only left unrewritten, never
let through.

The reader is linear in its input whatever it holds (the standard library's HTMLParser
rescans the rest of the input at every unfinished ``<``: quadratic on ``<a <a <a ...``), and
elements nest ``MAX_DEPTH`` deep at most (deeper start tags are dropped, their text stays:
nh3's HTML5 parser takes quadratic time on deeply nested blocks), as a value's HTML and a
notebook's are data (README: bounded work on any input).
"""

from __future__ import annotations

import html as html_lib
import re

from markupsafe import Markup

# Elements without an end tag: an end tag written for one is dropped, as a browser ignores it.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})
MAX_DEPTH = 256  # elements open at once; deeper start tags are dropped
# Elements a sibling of the same name closes (<li>a<li>b): the depth counts them once.
_CLOSED_BY_SIBLING = frozenset({"p", "li", "dt", "dd", "tr", "td", "th", "option", "thead", "tbody", "tfoot"})
RAW_TEXT = ("style", "script")  # their text is not markup: given to ``raw_text``, never written
# Elements whose content a browser reads as text up to their end tag (shown as text here).
_TEXT_ONLY = frozenset({"textarea", "title", "xmp", "iframe", "noembed", "noframes"})
# An attribute name nh3 may read as the parser did (no quote, "<", "=" or "/" inside).
_ATTRIBUTE_NAME = re.compile(r"[a-z_:][-a-z0-9_:.]*")
# The tokenizer's steps: each a run of one character class, so no match ever backtracks.
_SPACE = re.compile(r"[\t\n\f\r /]*")
_TAG_NAME = re.compile(r"[^\t\n\f\r />]*")
_NAME = re.compile(r"[^\t\n\f\r />][^\t\n\f\r /=>]*")
_BLANK = re.compile(r"[\t\n\f\r ]*")
_UNQUOTED = re.compile(r"[^\t\n\f\r >]*")
_COMMENT_END = re.compile(r"--!?>")

Attributes = list[tuple[str, str]]


def start_tag(tag: str, attributes: Attributes) -> Markup:
    """``<tag name="value" ...>``, every value escaped (the re-written form of a start tag)."""
    written = "".join(f' {name}="{html_lib.escape(value, quote=True)}"' for name, value in attributes
                      if _ATTRIBUTE_NAME.fullmatch(name))
    return Markup(f"<{tag}{written}>")


class TagRewriter:
    """Writes HTML again, each start tag as ``start`` returns it (see the module docstring).

    ``open`` holds the elements open at the end of what was read: texts written again piece
    by piece (a Markdown text's HTML tokens) share one list, so their depth adds up."""

    open: list[str] | None = None

    def start(self, tag: str, attributes: Attributes) -> str:
        """The markup written for the start tag ``tag`` ("" leaves the tag out, its content stays)."""
        return start_tag(tag, attributes)

    def end(self, tag: str) -> str:
        """The markup written for the end tag ``tag``."""
        return f"</{tag}>"

    def raw_text(self, tag: str, text: str) -> None:
        """The text of a ``<style>`` or ``<script>`` element (left out of the HTML)."""

    def rewrite(self, html: str) -> str:
        """``html`` written again."""
        out: list[str] = []
        pos, size = 0, len(html)
        while pos < size:
            lt = html.find("<", pos)
            if lt < 0:
                out.append(html[pos:])
                break
            out.append(html[pos:lt])
            pos = self._markup(html, lt, out)
        return "".join(out)

    def _markup(self, html: str, lt: int, out: list[str]) -> int:
        """Read the markup at ``html[lt] == "<"`` into ``out``; where reading goes on (len: the end)."""
        after = html[lt + 1:lt + 2]
        if after.isascii() and after.isalpha():
            return self._start_tag(html, lt, out)
        if after == "/" and html[lt + 2:lt + 3].isascii() and html[lt + 2:lt + 3].isalpha():
            close = html.find(">", lt)
            if close < 0:
                return len(html)  # an unfinished tag: dropped
            tag = _TAG_NAME.match(html, lt + 2).group().lower()  # type: ignore[union-attr]
            if tag not in VOID:
                self._close(tag)
                out.append(self.end(tag))
            return close + 1
        if html.startswith("<!--", lt):
            for abrupt in (">", "->"):  # "<!-->" and "<!--->" end at once, as a browser reads them
                if html.startswith(abrupt, lt + 4):
                    return lt + 4 + len(abrupt)
            close = _COMMENT_END.search(html, lt + 4)
            return len(html) if close is None else close.end()
        if after in ("!", "?", "/"):  # a declaration, instruction or odd end tag: a comment to ">"
            close = html.find(">", lt)
            return len(html) if close < 0 else close + 1
        out.append("&lt;")  # a "<" that opens nothing is text
        return lt + 1

    def _start_tag(self, html: str, lt: int, out: list[str]) -> int:
        name = _TAG_NAME.match(html, lt + 1)
        assert name is not None
        tag, pos, size = name.group().lower(), name.end(), len(html)
        attributes: dict[str, str] = {}
        while True:
            pos = _SPACE.match(html, pos).end()  # type: ignore[union-attr]
            if pos >= size:
                return size  # an unfinished tag: dropped
            if html[pos] == ">":
                break
            found = _NAME.match(html, pos)
            assert found is not None
            key, pos = found.group().lower(), found.end()
            value = ""
            eq = _BLANK.match(html, pos).end()  # type: ignore[union-attr]
            if html.startswith("=", eq):
                pos = _BLANK.match(html, eq + 1).end()  # type: ignore[union-attr]
                quote = html[pos:pos + 1]
                if quote in ('"', "'"):
                    close = html.find(quote, pos + 1)
                    if close < 0:
                        return size
                    value, pos = html[pos + 1:close], close + 1
                else:
                    unquoted = _UNQUOTED.match(html, pos)
                    assert unquoted is not None
                    value, pos = unquoted.group(), unquoted.end()
            attributes.setdefault(key, html_lib.unescape(value))  # the first of a name counts
        pos += 1
        if tag in RAW_TEXT or tag in _TEXT_ONLY:
            return self._text_element(html, tag, pos, out, list(attributes.items()))
        if self._opens(tag):
            out.append(self.start(tag, list(attributes.items())))
        return pos

    def _opens(self, tag: str) -> bool:
        """Count ``tag`` as open; False when it would nest deeper than ``MAX_DEPTH``."""
        if self.open is None:
            self.open = []
        if tag in VOID:
            return True
        if tag in _CLOSED_BY_SIBLING and self.open and self.open[-1] == tag:
            return True  # closes its sibling and takes its place
        if len(self.open) >= MAX_DEPTH:
            return False
        self.open.append(tag)
        return True

    def _close(self, tag: str) -> None:
        """An end tag closes the innermost open element of its name and those inside it."""
        if self.open and tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag):]

    def _text_element(self, html: str, tag: str, pos: int, out: list[str], attributes: Attributes) -> int:
        """An element whose content is text up to its end tag: ``raw_text``'s, or shown as text."""
        end = re.compile(rf"</{tag}[\t\n\f\r />]", re.IGNORECASE).search(html, pos)
        stop = end.start() if end else len(html)
        if tag in RAW_TEXT:
            self.raw_text(tag, html[pos:stop])
        else:
            out.append(self.start(tag, attributes))
            out.append(html_lib.escape(html[pos:stop], quote=False))
            out.append(self.end(tag))
        if end is None:
            return len(html)
        close = html.find(">", end.end() - 1)
        return len(html) if close < 0 else close + 1
