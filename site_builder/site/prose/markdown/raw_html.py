"""Raw HTML in a notebook's Markdown, shown as JupyterLab shows it: rendered, then sanitised.

JupyterLab renders the HTML of a Markdown cell through its sanitiser, and notebooks rely on
it (``<img width>``, ``<center>``, ``<br>``, ``<div class="alert">``, ``<a id>``,
``<details>``, tables).  Each HTML token of the text is written again tag by tag
(safety.html_tags) with the page's rules, then cleaned by nh3 with the rest of the text
(prose.html: one allow-list for all prose):

- an element's ``id`` (an ``<a name>`` when it has none) names an anchor: it gets an id of
  the label namespace (label_ids: ``label-NAME``), never one of the page's own, and a
  ``#NAME`` link, raw or Markdown, leads there (``PageContext.fragment``, which also leads
  JupyterLab's ``#Heading-Text`` links to their heading);
- an ``<img>`` follows the rule of Markdown's images (prose.images): a file of the entry's
  folder is published under ``_images/``; one from the web becomes a link to it (its alt
  text, or its file's name, inside a link already), as nothing loads from elsewhere; any
  other its alt text;
- ``style`` is left out: the page's CSP runs no inline style; so is what would load from a
  URL on any other element (``poster``, ``background``...), and ``<video>``, ``<audio>``
  themselves (their content stays);
- event handlers, scripts, forms and whatever else nh3 does not keep are dropped there.

Every text is cleaned on its own (a cell, a docstring), so a ``<div>`` a cell leaves open
ends with it and a stray ``</main>`` closes nothing of the page.  A script's prose (house
style, Sphinx-Gallery) is the project's Markdown: its raw HTML shows as text.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from markupsafe import escape

from site_builder.site.prose.images import is_remote
from site_builder.site.prose.markdown.macros import macro
from site_builder.site.safety.html_tags import Attributes, TagRewriter, start_tag
from site_builder.source.syntax.markdown import valid_link

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.context import PageContext

# What loads from a URL: only an <img> does (by the prose-image rule), never another element.
# Players of raw HTML leave the page (their content stays): the prose's own players are Quarto's
# {{< video >}} of a file published with the page, which the sanitiser keeps (safety.html).
_PLAYERS = frozenset({"video", "audio", "source", "track"})
_LOADS = frozenset({"src", "srcset", "poster", "background", "data", "action", "formaction"})
# What an <img> keeps of its own besides src (nh3 then keeps what its allow-list has).
_IMAGE_KEPT = frozenset({"alt", "title", "class", "width", "height", "align", "border", "hspace", "vspace",
                         "lang", "dir"})


def anchor_name(tag: str, attributes: Attributes) -> str:
    """The anchor an element of raw HTML names: its ``id``, else an ``<a name>`` ("" : none)."""
    found = dict(attributes)
    return found.get("id") or (found.get("name", "") if tag == "a" else "")


class _Names(TagRewriter):
    def __init__(self) -> None:
        self.found: list[str] = []

    def start(self, tag: str, attributes: Attributes) -> str:
        name = anchor_name(tag, attributes)
        if name:
            self.found.append(name)
        return ""


def anchor_names(html: str) -> list[str]:
    """The anchors a piece of raw HTML names, in order (as ``raw_html`` gives them ids)."""
    names = _Names()
    names.rewrite(html)
    return names.found


class _ProseTags(TagRewriter):
    """Raw HTML of one text written again with the page's rules (see the module docstring)."""

    def __init__(self, page: PageContext, env: dict[str, Any]) -> None:
        self.page, self.env = page, env
        self.open = env.setdefault("raw_html_open", [])  # the text's HTML tokens nest as one

    def start(self, tag: str, attributes: Attributes) -> str:
        named = anchor_name(tag, attributes)
        anchor = self.page.html_anchor(named) if named else ""
        if tag == "img":
            return self._image(attributes, anchor)
        if tag in _PLAYERS:
            return ""
        kept: Attributes = []
        for name, value in attributes:
            if name in ("id", "name", "style") or name in _LOADS or name.startswith("on"):
                continue
            if name == "href" and value.startswith("#") and len(value) > 1:
                value = "#" + self.page.fragment(value[1:])
            kept.append((name, value))
        if anchor:
            kept.insert(0, ("id", anchor))
        if tag == "a":  # a remote image inside it becomes its text, not a link in a link
            self.env["in_link"] = self.env.get("in_link", 0) + 1
        return start_tag(tag, kept)

    def end(self, tag: str) -> str:
        if tag in _PLAYERS:
            return ""
        if tag == "a" and self.env.get("in_link", 0) > 0:
            self.env["in_link"] -= 1
        return super().end(tag)

    def _image(self, attributes: Attributes, anchor: str) -> str:
        found = dict(attributes)
        src, alt = found.get("src", "").strip(), found.get("alt", "")
        if is_remote(src):  # the page loads nothing from elsewhere
            text = alt or found.get("title", "") or _file_stem(src) or src
            return str(escape(text)) if self.env.get("in_link") else macro("remote_image", src, text)
        url = self.page.image_url(src) if src else None
        if url is None or not valid_link(url):  # not an image of the entry's folder it may publish
            return macro("missing_image", alt)
        kept = [("id", anchor)] if anchor else []
        kept += [("src", url)] + [(k, v) for k, v in attributes if k in _IMAGE_KEPT]
        return start_tag("img", kept)


def _file_stem(url: str) -> str:
    """What an image without alt text is called: its file's name ("open-in-kaggle" of ".../open-in-kaggle.svg")."""
    return unquote(posixpath.splitext(posixpath.basename(urlsplit(url).path))[0])


def raw_html(html: str, page: PageContext, env: dict[str, Any]) -> str:
    """One HTML token of a notebook's Markdown, written again with the page's rules (not yet
    cleaned: the whole text is, by the caller)."""
    return _ProseTags(page, env).rewrite(html)


def define_anchors(html: str, page: PageContext) -> None:
    """Note the anchors a piece of raw HTML names (the resolve pass: before anything renders)."""
    for name in anchor_names(html):
        page.define_html(name)
