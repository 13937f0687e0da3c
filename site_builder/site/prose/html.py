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
from urllib.parse import urlsplit
from xml.etree import ElementTree

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

from markupsafe import escape

from site_builder.site.prose.myst_scan import PageProse
from site_builder.site.prose.links import ProseLinks
from site_builder.site.prose.myst import MystExtension
from site_builder.site.safety.html import clean_html

log = logging.getLogger(__name__)
MARKDOWN_EXTENSIONS = ["fenced_code", "tables", "sane_lists"]
MAX_NESTING = 8  # directives inside directives, as deep as Markdown prose may go


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
    refs = page.refs if page else None
    if refs is not None:
        refs.begin(text)  # (its warnings name lines of this text, its citations number in its order)
    html = None
    if language == "rst":
        from site_builder.site.prose.rst import rst_html  # docutils: only for reST

        html = rst_html(text, id_prefix, page.links if page else None, page.publish_image if page else None, refs)
    if html is None:
        html = _markdown(text, id_prefix, page or PageProse())
        html = refs.markdown_html(html) if refs is not None else html
    return clean_html(refs.mentions(html) if refs is not None else html)


def plain(text: str, language: str) -> str:
    """``text`` (one line of Markdown or reST) as plain text: what a reader sees, without markup."""
    if language != "rst" or not text.strip():
        return text
    from site_builder.site.prose.rst import rst_plain

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


class _NoRawHtml(Extension):
    """Raw HTML in Markdown shows as text: prose is data, and the sanitiser is the second line."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 (Markdown's API)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_RemoteImagesAsLinks(md), "remote_images", 0)
        md.treeprocessors.register(_ApiCodeLinks(md), "api_code_links", 1)


@functools.lru_cache(maxsize=MAX_NESTING + 1)
def _markdown_converter(depth: int) -> tuple[markdown.Markdown, MystExtension]:
    """One converter per nesting depth: a directive's content is converted while its parent is."""
    myst = MystExtension(_markdown, depth)
    return markdown.Markdown(extensions=[*MARKDOWN_EXTENSIONS, _NoRawHtml(), myst]), myst


def _markdown(text: str, id_prefix: str, page: PageProse, depth: int = 0) -> str:
    if depth > MAX_NESTING:  # directives nested deeper than any real text: shown as text
        return str(escape(text))
    md, myst = _markdown_converter(depth)
    md.reset()
    myst.page, myst.id_prefix = page, id_prefix
    linker = md.treeprocessors["api_code_links"]
    assert isinstance(linker, _ApiCodeLinks)
    linker.links = page.links
    try:
        return md.convert(text)
    finally:
        linker.links = None


