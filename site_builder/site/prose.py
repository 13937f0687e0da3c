"""Prose -> safe HTML: one entry point for Markdown (Python-Markdown) and reST (docutils).

Sphinx-only constructs degrade instead of failing: cross-reference roles become inline code
or plain text, directives that mean nothing outside Sphinx vanish, ``seealso`` and
``versionadded`` become asides like ``note``. docutils reports nothing (quiet reporter).
Every result goes through ``sanitize.clean_html``; images from another origin become links
(the Content-Security-Policy lets a page load nothing from elsewhere).  The reST side lives
in prose_rst.py, imported with docutils on the first reST text.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit
from xml.etree import ElementTree

import markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from markdown.util import AtomicString

from markupsafe import escape

from site_builder.site.myst_scan import PageProse
from site_builder.site.prose_links import ProseLinks
from site_builder.site.prose_myst import MystExtension
from site_builder.site.sanitize import clean_html

log = logging.getLogger(__name__)
MARKDOWN_EXTENSIONS = ["fenced_code", "tables", "sane_lists"]
MAX_NESTING = 8  # directives inside directives, as deep as Markdown prose may go
# Lists nest this deep at most: a deeper item is shown at this depth (Python-Markdown nests by
# recursion, and copies the rest of the text at each level: 600 levels exhausted Python's stack,
# 3,000 took gigabytes).  Past any real document's, far below the stack's limit.
MAX_LIST_DEPTH = 32
# A paragraph (any element's text) longer than this is shown without inline markup: Python-Markdown
# rebuilds the text at each inline element it finds (time: elements x length), and no real
# paragraph comes near it.
MAX_INLINE_TEXT = 10_000
# A list item's line: its indentation and the list markers that open it ("- - a" is nested twice).
_LIST_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?P<markers>(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)+)")
_MARKER = re.compile(r"([-*+]|\d{1,9}[.)])([ \t]+)")


# ---------------------------------------------------------------- shared


def is_local(url: str) -> bool:
    """A relative URL inside the site (no scheme, host or leading slash)."""
    url = url.strip()
    parts = urlsplit(url)
    return not (parts.scheme or parts.netloc or url.startswith("/") or url.startswith("\\"))


def render(text: str, language: str, *, id_prefix: str = "", page: PageProse | None = None) -> str:
    """``text`` (Markdown or reST) as sanitised HTML; ``id_prefix`` keeps its ids apart from other cells'.

    Markdown is MyST Markdown (prose_myst.py); ``page`` holds the site's labels, the page's
    numbering (shared by the cells of one page) and ``links``: where its cross-references and
    inline code naming documented objects lead.
    """
    if not text.strip():
        return ""
    html = None
    if language == "rst":
        from site_builder.site.prose_rst import rst_html  # docutils: only for reST

        html = rst_html(text, id_prefix, page.links if page else None)
    return clean_html(_markdown(text, id_prefix, page or PageProse()) if html is None else html)


def plain(text: str, language: str) -> str:
    """``text`` (one line of Markdown or reST) as plain text: what a reader sees, without markup."""
    if language != "rst" or not text.strip():
        return text
    from site_builder.site.prose_rst import rst_plain

    return rst_plain(text)


# ---------------------------------------------------------------- Markdown


class _RemoteImagesAsLinks(Treeprocessor):
    """An image from another origin becomes a link to it, the text around it kept."""

    def run(self, root: ElementTree.Element) -> None:
        for el in root.iter("img"):
            src = el.get("src", "")
            if is_local(src):
                continue
            alt = el.get("alt", "") or src
            for key in list(el.attrib):
                del el.attrib[key]
            el.tag, el.text = "a", alt  # el.tail, the text after the image, stays
            el.set("href", src)


class _ApiCodeLinks(Treeprocessor):
    """Inline code naming a documented object (```np.linalg.norm```) becomes a link around that code."""

    links: ProseLinks | None = None  # set for each text (see _markdown)

    def run(self, root: ElementTree.Element) -> None:
        if self.links is None or not self.links.api_docs:
            return
        self._link_below(root)

    def _link_below(self, parent: ElementTree.Element) -> None:
        assert self.links is not None
        for i, el in enumerate(list(parent)):
            if el.tag in ("pre", "a"):
                continue  # code blocks, and code already inside a link
            if el.tag != "code" or len(el):
                self._link_below(el)
                continue
            text = (el.text or "").strip()
            # a bare name links only when the script imports it: `x` or `list` stay code
            head = text.partition(".")[0]
            if "." not in text and head not in self.links.aliases:
                continue
            found = self.links.api(text)
            if found is None:
                continue
            link = ElementTree.Element("a", {"href": found.url, "class": "api-link", "title": found.name})
            link.tail, el.tail = el.tail, None
            parent.remove(el)
            link.append(el)
            parent.insert(i, link)


class _ShallowLists(Preprocessor):
    """List items nested deeper than MAX_LIST_DEPTH (by indentation, or by markers on one line)
    come out at that depth, their further markers shown as text."""

    def run(self, lines: list[str]) -> list[str]:
        tab = self.md.tab_length
        deepest = MAX_LIST_DEPTH * tab
        for i, line in enumerate(lines):
            item = _LIST_ITEM.match(line)
            if item is None:
                continue
            indent, markers = item.group("indent").expandtabs(tab), item.group("markers")
            level = len(indent) // tab + len(_MARKER.findall(markers))
            if level <= MAX_LIST_DEPTH:
                continue
            indent = indent[:deepest]
            kept = max(1, MAX_LIST_DEPTH - len(indent) // tab)
            parts = _MARKER.findall(markers)
            shown = "".join(m + s for m, s in parts[:kept]) + "".join("\\" + m + s if not m[0].isdigit()
                                                                     else m[:-1] + "\\" + m[-1] + s
                                                                     for m, s in parts[kept:])
            lines[i] = indent + shown + line[item.end():]
        return lines


# Python-Markdown's link processors scan from each "[" (and from each "](") to its closing
# bracket, to the end of the text when there is none: 20,000 "[" never finished.  The scans of
# one text share a budget (characters) in proportion to the text; once it is spent, the rest
# of its brackets are text.  Real prose spends a fraction of it.
_SCANNERS = {"reference": ("getText",), "link": ("getText", "getLink"), "image_link": ("getText", "getLink"),
             "image_reference": ("getText",), "short_reference": ("getText",), "short_image_ref": ("getText",)}


class _ScanBudget:
    """What is left of one text's budget for link scans."""

    left = 0

    def start(self, text: str) -> None:
        self.left = 16 * len(text) + 1_000_000


def _budgeted(scan: Callable[..., tuple[Any, ...]], budget: _ScanBudget) -> Callable[..., tuple[Any, ...]]:
    """``scan`` (a link processor's getText or getLink), refused once ``budget`` is spent."""
    def bounded(data: str, index: int) -> tuple[Any, ...]:
        if budget.left <= 0:
            return ("", index, False) if scan.__name__ == "getText" else ("", None, index, False)
        found = scan(data, index)
        budget.left -= (found[-2] if found[-1] else len(data)) - index
        return found
    return bounded


def _bound_link_scans(md: markdown.Markdown) -> _ScanBudget:
    """Put the link processors of ``md`` on one budget (started for each text it converts)."""
    budget = _ScanBudget()
    for name, methods in _SCANNERS.items():
        processor = md.inlinePatterns[name]
        for method in methods:
            setattr(processor, method, _budgeted(getattr(processor, method), budget))
    return budget


class _LongTextsPlain(Treeprocessor):
    """Texts longer than MAX_INLINE_TEXT are kept as they are (no emphasis, code or links in them)."""

    def run(self, root: ElementTree.Element) -> None:
        for el in root.iter():
            if el.text and len(el.text) > MAX_INLINE_TEXT:
                el.text = AtomicString(el.text)
            if el.tail and len(el.tail) > MAX_INLINE_TEXT:
                el.tail = AtomicString(el.tail)


class _NoRawHtml(Extension):
    """Raw HTML in Markdown shows as text: prose is data, and the sanitiser is the second line."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 (Markdown's API)
        md.preprocessors.deregister("html_block")
        md.preprocessors.register(_ShallowLists(md), "shallow_lists", 22)  # after fenced code is stashed
        md.treeprocessors.register(_LongTextsPlain(md), "long_texts_plain", 21)  # before inline markup
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_RemoteImagesAsLinks(md), "remote_images", 0)
        md.treeprocessors.register(_ApiCodeLinks(md), "api_code_links", 1)


@functools.lru_cache(maxsize=MAX_NESTING + 1)
def _markdown_converter(depth: int) -> tuple[markdown.Markdown, MystExtension, _ScanBudget]:
    """One converter per nesting depth: a directive's content is converted while its parent is."""
    myst = MystExtension(_markdown, depth)
    md = markdown.Markdown(extensions=[*MARKDOWN_EXTENSIONS, _NoRawHtml(), myst])
    return md, myst, _bound_link_scans(md)


def _markdown(text: str, id_prefix: str, page: PageProse, depth: int = 0) -> str:
    if depth > MAX_NESTING:  # directives nested deeper than any real text: shown as text
        return str(escape(text))
    md, myst, budget = _markdown_converter(depth)
    md.reset()
    budget.start(text)
    myst.page, myst.id_prefix = page, id_prefix
    linker = md.treeprocessors["api_code_links"]
    assert isinstance(linker, _ApiCodeLinks)
    linker.links = page.links
    try:
        return md.convert(text)
    except RecursionError:  # nesting past what the bounds above foresee: the text, shown as text
        log.warning("Markdown prose nested too deep to render; shown as text: %.60s", text.lstrip())
        return str(escape(text))
    finally:
        linker.links = None


