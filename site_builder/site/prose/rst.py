"""reST prose -> HTML with docutils, Sphinx-only constructs degraded (see prose.py).

Apart from prose.py so that a site with Markdown prose only never imports docutils
(30 ms of every build that renders a page).
"""

from __future__ import annotations

import copy
import functools
import io
import logging
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from docutils import frontend, nodes
from docutils.core import publish_doctree, publish_parts
from docutils.parsers.rst import Directive, Parser, directives, roles
from docutils.parsers.rst.directives.body import CodeBlock
from docutils.readers.standalone import Reader
from docutils.writers.null import Writer as NullWriter
from docutils.writers.html5_polyglot import HTMLTranslator, Writer as Html5Writer
from docutils.transforms import Transform

from site_builder.site.highlight import highlighted
from site_builder.site.prose.links import ProseLinks, api_role
from site_builder.site.prose.markdown.macros import macro
from site_builder.site.prose.rst_refs import LabelsNumbered, reference_role
from site_builder.site.prose.rst_parser import ReusingParser
from site_builder.site.prose.rst_refs import register as register_reference_constructs

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.context import PageContext

log = logging.getLogger(__name__)

# Sphinx directives with nothing to show outside a Sphinx project: they vanish.
VANISHING_DIRECTIVES = (
    "tags", "redirect-from", "minigallery", "only", "plot", "toctree", "autosummary",
    "currentmodule", "module", "index", "highlight", "literalinclude", "include",
    "inheritance-diagram", "graphviz", "tabularcolumns", "rst-class", "codeauthor",
    "sectionauthor", "moduleauthor", "automodule", "autoclass", "autofunction", "automethod",
    "autoattribute", "autodata", "autoexception", "py:module", "py:currentmodule",
)
# Layout directives of Sphinx and its extensions: their content shows, without the layout.
CONTAINER_DIRECTIVES = (
    "hlist", "centered", "dropdown", "tab-set", "tab-item", "grid", "grid-item",
    "grid-item-card", "card",
)
VERSION_DIRECTIVES = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
# Roles that name a document or a label: shown as their title text, not as code.
TEXT_ROLES = frozenset({"ref", "doc", "term", "numref", "any", "std:ref", "std:doc", "std:term",
                        "eq", "download", "keyword", "option", "envvar", "guilabel", "menuselection"})
# docutils' own roles keep their meaning; every other role is Sphinx's (or an extension's).
DOCUTILS_ROLES = frozenset({
    "emphasis", "strong", "literal", "code", "math", "subscript", "sub", "superscript", "sup",
    "title-reference", "title", "t", "pep-reference", "pep", "rfc-reference", "rfc",
    "abbreviation", "ab", "acronym", "ac", "raw",
})
_ROLE = re.compile(r":((?:[A-Za-z0-9][-\w.+]*:)?[A-Za-z0-9][-\w.+]*):`")
_EXPLICIT_TITLE = re.compile(r"^(.*?\S)\s*<([^<>]*)>$", re.DOTALL)  # the title ends at a non-blank: linear
# Markup docutils could not resolve here (a link to a section of another cell, an undefined
# substitution, a footnote): its text without the markup.
_UNRESOLVED = re.compile(r"^(?:`(?P<link>.+?)`__?|(?P<word>[\w.-]+)__?|\|(?P<sub>.+?)\|_{0,2}|\[[^\]]*\]_)$", re.DOTALL)

_RST_SETTINGS: dict[str, Any] = {
    "report_level": 5,  # quiet: nothing is printed, per occurrence or otherwise
    "halt_level": 5,
    "traceback": True,  # an error (nesting past Python's recursion limit...) raises: never docutils' sys.exit
    "raw_enabled": False,  # prose is data: no raw HTML ...
    "file_insertion_enabled": False,  # ... and no reading files of the building machine
    "_disable_config": True,  # no docutils.conf from the current folder
    "doctitle_xform": False,  # the docstring's title is read by the parse stage
    "sectsubtitle_xform": False,
    "initial_header_level": 3,
    "math_output": "MathML",  # offline; Chromium and Firefox render it
    "syntax_highlight": "none",  # highlighted below, with the page's Pygments classes
    "smart_quotes": False,
    "embed_stylesheet": False,
    "stylesheet_path": "",
    "footnote_backlinks": False,
}



# ---------------------------------------------------------------- reST: Sphinx constructs


def _role_text(name: str, text: str) -> str:
    """What Sphinx would show for a cross-reference: its explicit title, else the target, shortened."""
    match = _EXPLICIT_TITLE.match(text)
    if match:
        return match.group(1)
    target = text.lstrip("!")
    if name in TEXT_ROLES:
        return target.rsplit("/", 1)[-1] if name.endswith("doc") else target
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    target = target.lstrip(".")
    if name.rsplit(":", 1)[-1] in ("func", "meth") and not target.endswith(")"):
        target += "()"
    return target


def _links(inliner: Any) -> ProseLinks | None:
    """The page's link targets, passed in the document's settings (see rst_html)."""
    document = getattr(inliner, "document", None)
    return getattr(getattr(document, "settings", None), "site_builder_links", None)


def _target(text: str) -> str:
    """A cross-reference's target: the part in <...> after an explicit title, else the text."""
    match = _EXPLICIT_TITLE.match(text)
    return match.group(2) if match else text


def _sphinx_role(name: str, rawtext: str, text: str, lineno: int, inliner: object,
                 options: dict | None = None, content: list | None = None) -> tuple[list, list]:
    name = name.lower()
    resolved = reference_role(name, rawtext, text, lineno, inliner)  # citations, labels, terms
    if resolved is not None:
        return [resolved], []
    shown = _role_text(name, text)
    links = _links(inliner)
    if name in TEXT_ROLES:
        if name.rsplit(":", 1)[-1] in ("ref", "doc"):  # (no links: still the example's name, not its label)
            return [_example_link(links or ProseLinks(), name, rawtext, text)], []
        return [nodes.inline(rawtext, shown)], []
    return [_api_link(links, api_role(name), rawtext, text, shown)], []


def _api_link(links: ProseLinks | None, role: str | None, rawtext: str, text: str, shown: str) -> nodes.Node:
    """Inline code, inside a link to its documentation when the inventories know the target."""
    code = nodes.literal(rawtext, shown)
    target = _target(text)
    if links is None or role is None or target.startswith("!"):  # "!": Sphinx's "do not link"
        return code
    found = links.api(target, role)
    if found is None:
        return code
    return nodes.reference("", "", code, refuri=found.url, reftitle=found.name, classes=["api-link"])


def _example_link(links: ProseLinks, role: str, rawtext: str, text: str) -> nodes.Node:
    """A ``:ref:`` to a Sphinx-Gallery example or a ``:doc:`` path: a link to that entry's page
    when it is in the site, else the example's name as text."""
    match = _EXPLICIT_TITLE.match(text)
    entry, name = links.example(_target(text), role)
    if entry is None:
        return nodes.inline(rawtext, match.group(1) if match else name)
    shown = match.group(1) if match else entry.title() or name
    return nodes.reference("", shown, refuri=links.href(entry), reftitle=entry.name)


def _default_role(name: str, rawtext: str, text: str, lineno: int, inliner: object,
                  options: dict | None = None, content: list | None = None) -> tuple[list, list]:
    # Sphinx projects usually make `x` a cross-reference (default_role = "obj"): code.
    return [_api_link(_links(inliner), "obj", rawtext, text, _role_text("obj", text))], []


class _AnyOptions(dict):  # type: ignore[type-arg]
    """An option spec accepting every option (Sphinx's :caption:, :linenos:, ...) as text.

    Not empty: docutils reads a directive's options only when its spec is truthy.
    """

    def __init__(self) -> None:
        super().__init__({"class": directives.class_option, "name": directives.unchanged})

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Any:
        return dict.get(self, key, directives.unchanged)


class _AnyDirective(Directive):
    """Takes any arguments, options and content, as the Sphinx directives it stands in for."""

    has_content = True
    optional_arguments = 99
    final_argument_whitespace = True
    option_spec = _AnyOptions()


class _Vanish(_AnyDirective):
    def run(self) -> list[nodes.Node]:
        return []


class _BibliographyHere(_AnyDirective):
    """``.. bibliography::``: the page's References list stands here (see markdown.directives)."""

    def run(self) -> list[nodes.Node]:
        return [nodes.raw("", str(macro("bibliography_here")), format="html")]


class _Container(_AnyDirective):

    def run(self) -> list[nodes.Node]:
        node = nodes.container("\n".join(self.content))
        if self.arguments and self.name in ("dropdown", "tab-item", "card", "grid-item-card"):
            node += nodes.paragraph("", "", nodes.strong("", " ".join(self.arguments)))
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class _Aside(_AnyDirective):
    """``seealso`` and ``versionadded`` & co.: an admonition with a title of their own."""

    def run(self) -> list[nodes.Node]:
        if self.name == "seealso":
            title, css = "See also", "seealso"
        else:
            version = " ".join(self.arguments[:1])
            title, css = f"{VERSION_DIRECTIVES[self.name]} {version}".strip(), "version"
        node = nodes.admonition("\n".join(self.content), classes=["admonition", css])
        node += nodes.title(title, title)
        rest = " ".join(self.arguments[1:]) if self.name != "seealso" else " ".join(self.arguments)
        if rest:
            inline, _messages = self.state.inline_text(rest, self.lineno)
            node += nodes.paragraph(rest, "", *inline)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class _Code(CodeBlock):
    option_spec = _AnyOptions()


@functools.lru_cache(maxsize=1)
def _register_sphinx_constructs() -> None:
    """Teach docutils the Sphinx directives once per process (docutils keeps one registry)."""
    for name in VANISHING_DIRECTIVES:
        directives.register_directive(name, _Vanish)
    for name in CONTAINER_DIRECTIVES:
        directives.register_directive(name, _Container)
    directives.register_directive("bibliography", _BibliographyHere)
    for name in ("seealso", *VERSION_DIRECTIVES):
        directives.register_directive(name, _Aside)
    for name in ("code", "code-block", "sourcecode", "code-cell", "ipython"):
        directives.register_directive(name, _Code)
    roles.register_canonical_role("title-reference", _default_role)
    register_reference_constructs()


def _register_roles(text: str) -> None:
    for name in {m.group(1).lower() for m in _ROLE.finditer(text)} - DOCUTILS_ROLES:
        roles.register_local_role(name, _sphinx_role)


def _unresolved_text(raw: str) -> str:
    match = _UNRESOLVED.match(raw.strip())
    if match is None:
        return raw.strip("*`|_")  # e.g. "*unclosed" emphasis
    text = match.group("link") or match.group("word") or match.group("sub") or ""
    title = _EXPLICIT_TITLE.match(text)
    return title.group(1) if title else text


class _WebTransform(Transform):
    """Literal blocks highlighted like the page's code; images of the entry's folder published,
    others shown as links or their alt text (nothing loads from elsewhere)."""

    # After DanglingReferences (850) made the unresolved references problematic, before
    # FilterMessages (870) turns problematic nodes back into their raw source.
    default_priority = 860

    def apply(self) -> None:
        for node in list(self.document.findall(nodes.problematic)):
            # parent.replace: replace_self refuses to drop the node's ids (nothing links to them)
            node.parent.replace(node, nodes.Text(_unresolved_text(node.astext())))
        for block in list(self.document.findall(nodes.literal_block)):
            classes = [c for c in block.get("classes", []) if c not in ("code", "literal-block")]
            language = classes[0] if classes else ("pycon" if block.astext().startswith(">>>") else "python")
            html = highlighted(block.astext(), language)
            if html:
                block.replace_self(nodes.raw("", html, format="html"))
        for block in list(self.document.findall(nodes.doctest_block)):
            block.replace_self(nodes.raw("", highlighted(block.astext(), "pycon"), format="html"))
        publish = getattr(self.document.settings, "site_builder_images", None)
        for image in list(self.document.findall(nodes.image)):
            # An image of the entry's folder is published when it may be (prose.images, the
            # rule every prose format shares); one from the web becomes a link to it; any
            # other shows its alt text.
            uri, alt = image.get("uri", ""), image.get("alt", "")
            web = urlsplit(uri).scheme in ("http", "https")
            url = publish(uri) if publish is not None and not web else None
            if url:
                image["uri"] = url
                continue
            shown: nodes.Node = nodes.reference("", alt or uri, refuri=uri) if web else nodes.inline("", alt)
            old = image.parent if isinstance(image.parent, nodes.reference) else image
            inline = isinstance(old.parent, nodes.TextElement)
            old.replace_self(shown if inline else nodes.paragraph("", "", shown))


class _Translator(HTMLTranslator):
    """docutils' HTML, with a link's ``reftitle`` as its tooltip (the full name of an API link)."""

    def visit_reference(self, node: nodes.reference) -> None:
        super().visit_reference(node)
        title = node.get("reftitle")
        if title and self.body[-1].startswith("<a "):
            self.body[-1] = self.body[-1].replace("<a ", f'<a title="{self.attval(title)}" ', 1)


class _Writer(Html5Writer):
    def __init__(self) -> None:
        super().__init__()
        self.translator_class = _Translator


class _WebReader(Reader):
    def get_transforms(self) -> list[type[Transform]]:
        return [*super().get_transforms(), _WebTransform, LabelsNumbered]


@functools.cache
def _prepared_settings(html: bool) -> Any:
    """docutils' settings for rendering HTML (else a doctree), made once: docutils makes them
    with an option parser of every component's options, 2 ms of each 3-5 ms publish."""
    components = (Parser, _WebReader, _Writer) if html else (Parser, Reader, NullWriter)
    settings = frontend.get_default_settings(*components)
    vars(settings).update(_RST_SETTINGS)
    return settings


def _settings(html: bool, id_prefix: str = "", page: PageContext | None = None, first_line: int = 0) -> Any:
    """A copy of the prepared settings for one publish (a run may set its own attributes on it)."""
    settings = copy.copy(_prepared_settings(html))
    settings.id_prefix, settings.warning_stream = id_prefix, io.StringIO()
    settings.site_builder_links = page.links if page is not None else None
    settings.site_builder_images = page.publish_image if page is not None else None
    # the page's labels, citations and terms, and the text's first line in the entry (rst_refs)
    settings.site_builder_page, settings.site_builder_first_line = page, first_line
    return settings


def rst_html(text: str, id_prefix: str, page: PageContext | None = None, first_line: int = 0) -> str | None:
    """``text`` as HTML (not yet sanitised); None when docutils cannot render it.  ``page``: its
    ``links`` (where API roles, gallery labels and ``:doc:`` paths lead; None: code or text), its
    ``publish_image`` (an image's path -> its URL; None: alt text), the labels, citations and
    terms the text's roles resolve to (rst_refs); ``first_line``: the text's line in the entry."""
    _register_sphinx_constructs()
    _register_roles(text)
    try:
        settings = _settings(True, id_prefix, page, first_line)
        settings.site_builder_text = text  # (rst_refs finds a role's line in it)
        parts = publish_parts(text, writer=_Writer(), reader=_WebReader(), parser=ReusingParser(), settings=settings)
    except Exception:  # noqa: BLE001 (docutils' writers assert on odd trees: the page must still build)
        log.debug("reST prose could not be rendered; shown as Markdown", exc_info=True)
        return None
    return parts["fragment"]


# A title or summary is read on its page, on the index, in its neighbours' links and the
# labels: parsed once (a pure function of the text: the roles it names are registered once).
@functools.lru_cache(maxsize=4096)
def rst_plain(text: str) -> str:
    """One line of reST as the text a reader sees (each text parsed once)."""
    _register_sphinx_constructs()
    _register_roles(text)
    try:
        doctree = publish_doctree(text, parser=ReusingParser(), settings=_settings(False))
    except Exception:  # noqa: BLE001 (as in rst_html)
        return text
    return " ".join(doctree.astext().split())


def rst_doctree(text: str) -> nodes.document | None:
    """``text`` parsed as the page parses it (Sphinx constructs degraded); None when docutils cannot."""
    _register_sphinx_constructs()
    _register_roles(text)
    try:
        return publish_doctree(text, parser=ReusingParser(), settings=_settings(False))
    except Exception:  # noqa: BLE001 (as in rst_html)
        return None


def rst_definitions(text: str, page: PageContext) -> None:
    """Define on ``page`` the labels reST ``text`` defines, numbered as rendering numbers them."""
    if any(mark in text for mark in (".. _", ":name:", ":label:", "figure::", "math::")):
        rst_html(text, "", page)
    # (a text without them defines nothing and numbers nothing a label of the page refers to)
