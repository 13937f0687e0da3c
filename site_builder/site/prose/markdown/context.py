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
from urllib.parse import unquote
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from site_builder.site.prose.images import is_remote
from site_builder.site.prose.label_ids import PageIds, is_id_label
from site_builder.site.prose.links import ProseLinks

_NOT_SLUG = re.compile(r"[^\w-]+")
# What the typography setting typesets, back as typed (markdown-it's smart quotes and dashes).
_AS_TYPED = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "--",
                           "\u2014": "---", "\u2026": "..."})


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
    kind: str = "label"  # or "html": an anchor of raw HTML (``id``, ``<a name>``), of its page only


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
    # the text being read's "attachment:NAME" images (a .ipynb Markdown cell's: name -> (MIME
    # type, data)), and what publishes one (prose.images) and gives its URL, or None
    attachments: dict[str, tuple[str, str]] = field(default_factory=dict)
    publish_attachment: Callable[[str, str, str], str | None] | None = None
    publish_video: Callable[[str], str | None] | None = None  # Quarto's {{< video >}}: its file, by the same rule
    links: ProseLinks | None = None  # where API roles, inline code and example labels lead
    typography: bool = False  # en and em dashes, smart quotes (the typography setting)
    # a notebook's prose, read as JupyterLab reads it: its raw HTML renders, sanitised
    # (markdown.raw_html), and a "#Heading-Text" link leads to the heading (``fragment``)
    notebook: bool = False
    table_widths: tuple[float, ...] = ()  # a Quarto document's tbl-colwidths: its tables' columns without their own
    own: dict[str, Label] = field(default_factory=dict)  # this page's labels (labels.site_labels)
    ids: PageIds = field(default_factory=PageIds)  # the ids labels not in ``own`` get
    anchored: set[str] = field(default_factory=set)  # the labels that gave an element its id
    # raw HTML's anchors -> their ids (label_ids' namespace; labels.site_labels collects them)
    html_ids: dict[str, str] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    definitions: list[Definition] = field(default_factory=list)  # the labels its prose defines, in order
    headings: set[str] = field(default_factory=set)  # the ids its headings got
    # a heading's id as JupyterLab gives it (its text, spaces as "-") -> the id it got here
    jupyter_ids: dict[str, str] = field(default_factory=dict)
    unresolved: set[str] = field(default_factory=set)  # "#name" links not known yet (``late_fragments``)
    warnings: list[ProseWarning] = field(default_factory=list)
    # what extensions keep per page (cited works, glued values, ...), under their own key
    extensions: dict[str, Any] = field(default_factory=dict)
    # passes over each text's HTML before it is sanitised, in order (link_terms' mentions)
    html_passes: list[Callable[[str], str]] = field(default_factory=list)
    # the run's values its prose quotes, by (place, text as written) (run.results.QuotedValue), what
    # glue() kept, by entry ("" : this one) and name (GluedValue), and the place of the text being
    # read: the code cell it follows (Script.code_cells; -1: none; None: after the whole run)
    quoted: dict[tuple[int | None, str], Any] = field(default_factory=dict)
    glued: Mapping[str, dict[str, Any]] = field(default_factory=dict)  # site.outputs.quoted.Pasted
    # a Display of the run -> its richest safe form on the page (site.outputs.displays.DisplayView)
    show_value: Callable[[Any], Any] | None = None
    after: int | None = None
    source: int = 0  # which of the page's texts is being read (for ``definitions``)
    place: str = ""  # where that text is when its lines are its own, not the file's ("cell 3": warnings)
    at: int = 0  # the line of that text being read (0-based, for ``definitions``)
    _images: dict[str, str | None] = field(default_factory=dict)
    _html_anchored: set[str] = field(default_factory=set)
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

    def define_html(self, name: str) -> None:
        """Note that raw HTML names the anchor ``name`` here (an ``id``, an ``<a name>``): it gets
        an id now unless the page's were collected before rendering (``html_ids``)."""
        self.definitions.append(Definition(name, "", self.source, self.at, kind="html"))
        if name not in self.html_ids and is_id_label(name):
            self.html_ids[name] = self.ids.allocate(name)[0]

    def html_anchor(self, name: str) -> str:
        """The id of the element of raw HTML naming the anchor ``name``; "" for a second one on
        the page, or a name that cannot be an id (labels.page_labels says so)."""
        if name in self._html_anchored or name not in self.html_ids:
            return ""
        self._html_anchored.add(name)
        return self.html_ids[name]

    def fragment(self, name: str) -> str:
        """Where a ``#name`` link of the prose leads: the id of raw HTML's anchor ``name``, of
        this page's label ``name``, of its block ``name`` or, in a notebook, of the heading
        JupyterLab would give the id ``name``; else ``name`` as written (a heading's id here)."""
        for wanted in dict.fromkeys((name, unquote(name))):  # markdown-it percent-encodes a link
            if wanted in self.html_ids:
                return self.html_ids[wanted]
            label = self.own.get(wanted) or self._defined.get(wanted)
            if label is not None and label.entry == self.entry:
                return label.anchor
            if wanted in self.ids.renamed:  # a block whose name cannot be its id
                return self.ids.renamed[wanted][0]
            if wanted in self.jupyter_ids:
                return self.jupyter_ids[wanted]
        if self.notebook:
            self.unresolved.add(name)  # perhaps a heading further down the page
        return name

    def jupyter_heading(self, text: str, anchor: str) -> None:
        """Note the heading reading ``text`` (plain) got the id ``anchor``: a notebook's
        ``#Its-Text`` links lead there, as in JupyterLab (the first heading of that text;
        JupyterLab typesets no quotes or dashes, so its text as written counts too)."""
        for written in dict.fromkeys((text, text.translate(_AS_TYPED) if self.typography else text)):
            self.jupyter_ids.setdefault(written.replace(" ", "-"), anchor)

    def late_fragments(self) -> dict[str, str]:
        """The ``#name`` links rendered before the heading they lead to, and that heading's id:
        what the page's prose must still point there (views.with_late_links)."""
        late = {}
        for name in self.unresolved:
            for wanted in dict.fromkeys((name, unquote(name))):
                if wanted in self.jupyter_ids:
                    late[name] = self.jupyter_ids[wanted]
                    break
        return late

    def href(self, label: Label) -> str:
        """The URL of ``label`` from this page."""
        if label.entry == self.entry:
            return f"#{label.anchor}"
        return f"{self.root}{label.entry}/index.html#{label.anchor}"

    def heading_id(self, text: str, prefix: str = "") -> str:
        """An id for a heading reading ``text``, not yet given to a heading ("intro", "intro-2", ...)."""
        slug = _NOT_SLUG.sub("-", text.lower()).strip("-") or "section"
        anchor, n = f"{prefix}{slug}", 1
        while anchor in self.headings or self.ids.owner(anchor):  # never a block's, nor the page's own
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
        if src.startswith("attachment:") and self.publish_attachment is not None:  # the cell's own
            name = unquote(src[len("attachment:"):])
            mime, data = self.attachments.get(name, ("", ""))
            return self.publish_attachment(name, mime, data)
        if src not in self._images:
            self._images[src] = src if self.publish_image is None else self.publish_image(src)
        return self._images[src]

    def video_url(self, src: str) -> str | None:
        """The URL a page links the video ``src`` at (published like images); None when it is not."""
        if is_remote(src):
            return src
        return self.publish_video(src) if self.publish_video is not None else None

    def find_doc(self, target: str) -> tuple[str, str] | None:
        """The (entry, title) a ``{doc}`` path names, relative to this page or the book's root."""
        for suffix in (".md", ".ipynb", ".py", ".qmd", ".rst"):
            target = target.removesuffix(suffix)
        if target.startswith("/"):
            wanted = target.lstrip("/")
            return next((v for k, v in self.docs.items() if k == wanted or k.endswith("/" + wanted)), None)
        return self.docs.get(posixpath.normpath(posixpath.join(posixpath.dirname(self.doc), target)))
