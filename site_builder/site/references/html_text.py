"""Rewrite the text of rendered HTML, element by element, with Python's HTML tokenizer.

Pandoc's citations and the mentions of terms are found in prose after it is rendered, the
same whichever parser rendered it; only text nodes are looked at (never markup, attributes
or the text of code, links and math), and the replacement is HTML a template made.  The
result goes through the sanitiser with the rest of the prose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from html.parser import HTMLParser

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                  "track", "wbr"})
# Text inside these is never a citation or a mention: code, links, math, scripts.
OPAQUE = frozenset({"a", "code", "pre", "kbd", "samp", "script", "style", "math", "textarea", "svg", "var"})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})

# (text, the open elements around it as (tag, class) pairs) -> its HTML, or None to keep it
Rewrite = Callable[[str, Sequence[tuple[str, str]]], "str | None"]


class _Rewriter(HTMLParser):
    def __init__(self, rewrite: Rewrite, skip: frozenset[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.rewrite, self.skip = rewrite, skip
        self.out: list[str] = []
        self.stack: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self.get_starttag_text() or "")
        if tag not in VOID:
            self.stack.append((tag, dict(attrs).get("class") or ""))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        self.out.append(f"</{tag}>")
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if any(tag in self.skip for tag, _ in self.stack):
            self.out.append(escape(data, quote=False))
            return
        replaced = self.rewrite(data, self.stack)
        self.out.append(escape(data, quote=False) if replaced is None else replaced)

    def handle_comment(self, data: str) -> None:
        self.out.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.out.append(f"<!{decl}>")


def rewrite_text(html: str, rewrite: Rewrite, skip: frozenset[str] = OPAQUE) -> str:
    """``html`` with each text node outside ``skip`` elements replaced by ``rewrite``'s HTML."""
    parser = _Rewriter(rewrite, skip)
    parser.feed(html)
    parser.close()
    return "".join(parser.out)
