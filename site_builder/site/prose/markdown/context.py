"""One page's prose context: the site's labels, the page's numbering, ids and warnings.

Every Markdown text of a page (its Markdown cells, a docstring's sections) is rendered with
the page's one ``PageContext``, so exercises, equations and figures are numbered through the
page, labels get their ids (label_ids: a namespace of their own), heading ids are unique on
it, and what cannot be resolved is a warning with its line. A fresh context collects what a
page defines (``resolve.label_definitions``) before any page renders, so a ``{ref}`` on one
page finds a label of another.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from site_builder.site.prose.images import is_remote
from site_builder.site.prose.label_ids import PageIds, is_id_label
from site_builder.site.prose.links import ProseLinks

_NOT_SLUG = re.compile(r"[^\w-]+")


@dataclass(frozen=True)
class Label:
    """Something a ``{ref}``, ``{eq}`` or ``{numref}`` can point at."""

    entry: str  # the entry whose page holds it
    anchor: str  # the element's id (label_ids: never one of the page's own)
    text: str  # what a reference shows: "Exercise 1", "(2)", a heading's text
    where: str = ""  # where it is defined, for messages: "demos/x.py:12"
    number: str = ""  # its number on its page ("2" of "Exercise 2"; "" : not numbered)


@dataclass(frozen=True)
class Definition:
    """A label the prose defines: its name, what a reference to it shows, and where it is."""

    name: str
    text: str
    source: int  # which of the page's texts holds it
    line: int  # its line in that text (0-based)
    number: str = ""


@dataclass(frozen=True)
class ProseWarning:
    """Something in the prose that could not be read as meant, with the line it is on."""

    line: int  # 1-based line in the entry's source (0: not known), or in ``place`` when there is one
    message: str
    place: str = ""  # a part of a file whose lines are not the file's: "cell 3" of a .ipynb


@dataclass
class PageContext:
    """Rendering context of one page's prose (see the module docstring)."""

    entry: str = ""  # the entry being rendered
    doc: str = ""  # its source path, suffix removed, "/"-separated ("demos/basics/plot")
    root: str = ""  # from the page to the site's root: "../", "../../"
    labels: dict[str, Label] = field(default_factory=dict)  # the whole site's (the first of each name)
    docs: dict[str, tuple[str, str]] = field(default_factory=dict)  # doc path -> (entry, title)
    # an image as the prose names it -> its URL once published with the page (prose.images), or None
    publish_image: Callable[[str], str | None] | None = None
    links: ProseLinks | None = None  # where API roles, inline code and example labels lead
    typography: bool = False  # en and em dashes, smart quotes (the typography setting)
    own: dict[str, Label] = field(default_factory=dict)  # this page's labels (labels.site_labels)
    ids: PageIds = field(default_factory=PageIds)  # the ids labels not in ``own`` get
    anchored: set[str] = field(default_factory=set)  # the labels that gave an element its id
    counters: dict[str, int] = field(default_factory=dict)
    definitions: list[Definition] = field(default_factory=list)  # the labels its prose defines, in order
    headings: set[str] = field(default_factory=set)  # the ids its headings got
    warnings: list[ProseWarning] = field(default_factory=list)
    # what extensions keep per page (cited works, glued values, ...), under their own key
    extensions: dict[str, Any] = field(default_factory=dict)
    # passes over each text's HTML before it is sanitised, in order (link_terms' mentions)
    html_passes: list[Callable[[str], str]] = field(default_factory=list)
    source: int = 0  # which of the page's texts is being read (for ``definitions``)
    place: str = ""  # where that text is when its lines are its own, not the file's ("cell 3": warnings)
    at: int = 0  # the line of that text being read (0-based, for ``definitions``)
    _images: dict[str, str | None] = field(default_factory=dict)
    _defined: dict[str, Label] = field(default_factory=dict)

    def number(self, kind: str) -> int:
        """The next number of ``kind`` ("equation", "exercise", "theorem", ...) on this page."""
        self.counters[kind] = self.counters.get(kind, 0) + 1
        return self.counters[kind]

    def define(self, name: str, text: str, number: str = "") -> str:
        """Note that the prose defines the label ``name`` here (a reference shows ``text``), and
        return the id of its element: "" for a second definition on the page, or a label that
        cannot be an id (labels.site_labels says so)."""
        self.definitions.append(Definition(name, text, self.source, self.at, number))
        anchor = self.anchor(name)
        if anchor:
            self._defined.setdefault(name, Label(self.entry, anchor, text, "", number))
        return anchor

    def find(self, name: str) -> Label | None:
        """The label a reference names: this page's own first, else the site's (else one defined
        above it, for a text rendered without the site's labels)."""
        return self.own.get(name) or self.labels.get(name) or self._defined.get(name)

    def anchor(self, name: str) -> str:
        """The id of the element that defines the label ``name``; "" for a second definition
        on the page or a label that cannot be an id (the page's warnings say so)."""
        if name in self.anchored or not is_id_label(name):
            return ""
        self.anchored.add(name)
        label = self.own.get(name)
        if label is None:  # not collected before rendering (a text rendered on its own)
            found = self.labels.get(name)
            if found is not None and found.entry == self.entry and found.anchor not in self.ids.taken:
                self.ids.taken.add(found.anchor)
                return found.anchor
            return self.ids.allocate(name)[0]
        return label.anchor

    def href(self, label: Label) -> str:
        """The URL of ``label`` from this page."""
        if label.entry == self.entry:
            return f"#{label.anchor}"
        return f"{self.root}{label.entry}/index.html#{label.anchor}"

    def heading_id(self, text: str, prefix: str = "") -> str:
        """An id for a heading reading ``text``, not yet given to a heading ("intro", "intro-2", ...)."""
        slug = _NOT_SLUG.sub("-", text.lower()).strip("-") or "section"
        anchor, n = f"{prefix}{slug}", 1
        while anchor in self.headings:
            n += 1
            anchor = f"{prefix}{slug}-{n}"
        self.headings.add(anchor)
        return anchor

    def warn(self, line: int, message: str) -> None:
        """Keep a warning about the prose at ``line`` (1-based in the entry's source; 0: unknown)."""
        self.warnings.append(ProseWarning(line, message, self.place))

    def image_url(self, src: str) -> str | None:
        """The URL a page shows the image ``src`` of its prose at (published with it by
        prose.images' rule); None for another origin's, or a file that is not published.
        Without a page to publish with (a value's Markdown, whose images are files the demo
        wrote, published beside the page) a path stays as written."""
        if is_remote(src):
            return None
        if src not in self._images:
            self._images[src] = src if self.publish_image is None else self.publish_image(src)
        return self._images[src]

    def find_doc(self, target: str) -> tuple[str, str] | None:
        """The (entry, title) a ``{doc}`` path names, relative to this page or the book's root."""
        for suffix in (".md", ".ipynb", ".py", ".qmd", ".rst"):
            target = target.removesuffix(suffix)
        if target.startswith("/"):
            wanted = target.lstrip("/")
            return next((v for k, v in self.docs.items() if k == wanted or k.endswith("/" + wanted)), None)
        return self.docs.get(posixpath.normpath(posixpath.join(posixpath.dirname(self.doc), target)))
