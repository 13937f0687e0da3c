"""One page's prose context: the site's labels, the page's numbering, ids and warnings.

Every Markdown text of a page (its Markdown cells, a docstring's sections) is rendered with
the page's one ``PageContext``, so exercises, equations and figures are numbered through the
page, heading ids are unique on it, and what cannot be resolved is a warning with its line.
The same context, fresh, collects what a page defines (``labels_of``) before any page is
rendered, so a ``{ref}`` on one page finds a label of another.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from site_builder.site.prose.links import ProseLinks

log = logging.getLogger(__name__)
_NOT_SLUG = re.compile(r"[^\w-]+")


@dataclass(frozen=True)
class Label:
    """Something a ``{ref}``, ``{eq}`` or ``{numref}`` can point at."""

    entry: str  # the entry whose page holds it
    anchor: str  # the element's id
    text: str  # what a reference shows: "Exercise 1", "(2)", a heading's text
    kind: str = ""  # "figure", "equation", "exercise", "section", ... ("" : a plain target)
    number: str = ""  # its number on its page ("" : not numbered)


@dataclass(frozen=True)
class ProseWarning:
    """Something in the prose that could not be read as meant, with the line it is on."""

    line: int  # 1-based line in the entry's source (0: not known)
    message: str


@dataclass
class PageContext:
    """Rendering context of one page's prose (see the module docstring)."""

    entry: str = ""  # the entry being rendered
    doc: str = ""  # its source path, suffix removed, "/"-separated ("demos/basics/plot")
    root: str = ""  # from the page to the site's root: "../", "../../"
    labels: dict[str, Label] = field(default_factory=dict)  # the whole site's
    docs: dict[str, tuple[str, str]] = field(default_factory=dict)  # doc path -> (entry, title)
    publish_image: Callable[[str], str | None] | None = None  # a local image -> its URL, or None
    links: ProseLinks | None = None  # where API roles, inline code and example labels lead
    typography: bool = False  # en and em dashes, smart quotes (the typography setting)
    counters: dict[str, int] = field(default_factory=dict)
    defined: dict[str, Label] = field(default_factory=dict)  # the labels this page's prose defines
    ids: set[str] = field(default_factory=set)  # ids given on the page so far
    warnings: list[ProseWarning] = field(default_factory=list)
    # what extensions keep per page (cited works, glued values, ...), under their own key
    extensions: dict[str, Any] = field(default_factory=dict)
    _images: dict[str, str | None] = field(default_factory=dict)

    def number(self, kind: str) -> int:
        """The next number of ``kind`` ("equation", "exercise", "theorem", ...) on this page."""
        self.counters[kind] = self.counters.get(kind, 0) + 1
        return self.counters[kind]

    def define(self, name: str, text: str, kind: str = "", number: str = "", anchor: str = "") -> Label:
        """Record that this page defines the label ``name`` (its element's id: ``anchor`` or the name)."""
        label = Label(self.entry, anchor or name, text, kind, number)
        self.defined.setdefault(name, label)
        self.ids.add(label.anchor)
        return label

    def label(self, name: str) -> Label | None:
        """The label ``name`` of the site (this page's first)."""
        return self.labels.get(name) or self.defined.get(name)

    def href(self, label: Label) -> str:
        """The URL of ``label`` from this page."""
        if label.entry == self.entry:
            return f"#{label.anchor}"
        return f"{self.root}{label.entry}/index.html#{label.anchor}"

    def unique_id(self, text: str, prefix: str = "") -> str:
        """An id for a heading reading ``text``, not yet used on the page ("intro", "intro-2", ...)."""
        slug = _NOT_SLUG.sub("-", text.lower()).strip("-") or "section"
        anchor, n = f"{prefix}{slug}", 1
        while anchor in self.ids:
            n += 1
            anchor = f"{prefix}{slug}-{n}"
        self.ids.add(anchor)
        return anchor

    def warn(self, line: int, message: str) -> None:
        """Keep a warning about the prose at ``line`` (1-based in the entry's source; 0: unknown)."""
        self.warnings.append(ProseWarning(line, message))

    def image_url(self, src: str) -> str | None:
        """The URL a page shows the image ``src`` of its prose at: a file of the entry's folder,
        published with the page; None for another origin's, or a file that cannot be published.
        Without a page to publish with (a text rendered alone), a local path stays as written."""
        if src not in self._images:
            path = local_path(src)
            if path is None:
                self._images[src] = None
            elif self.publish_image is None:
                self._images[src] = src
            else:
                self._images[src] = self.publish_image(path)
        return self._images[src]

    def find_doc(self, target: str) -> tuple[str, str] | None:
        """The (entry, title) a ``{doc}`` path names, relative to this page or the book's root."""
        for suffix in (".md", ".ipynb", ".py", ".qmd", ".rst"):
            target = target.removesuffix(suffix)
        if target.startswith("/"):
            wanted = target.lstrip("/")
            return next((v for k, v in self.docs.items() if k == wanted or k.endswith("/" + wanted)), None)
        return self.docs.get(posixpath.normpath(posixpath.join(posixpath.dirname(self.doc), target)))


def local_path(src: str) -> str | None:
    """``src`` as a path inside the entry's folder, or None (remote, absolute, data, or leaving it)."""
    src = src.strip()
    if not src or "://" in src or src.startswith(("/", "\\", "data:")) or ":" in src.split("/")[0]:
        return None
    path = posixpath.normpath(src.split("#")[0].split("?")[0])
    return None if path.startswith("..") or path == "." else path
