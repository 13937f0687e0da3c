"""Cross-references: MyST's ``{ref}``, ``{numref}``, ``{eq}``, ``{doc}`` and links to labels and pages.

A reference shows the title given, else the label's text ("Fig. 2", "(1)", "Exercise 3", a
heading); ``{numref}``'s title puts the number in place of ``%s`` or ``{number}``.  Links
resolve as MyST reads them: ``[text](#label)``, ``[](#label)`` (the label's text),
``[text](other.md#label)``, ``[](other.md)`` (the page's title), and the legacy ``[](label)``.
What names nothing of the site reads as text, never as syntax, and warns with its line
(reST's ``:ref:`` and Quarto's ``@fig-x`` resolve through ``label_link`` too).  Jupyter Book's
``{tableofcontents}`` lists the site's other pages.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import unquote

from markdown_it.token import Token

from site_builder.site.prose.label_ids import is_id_label
from site_builder.site.prose.markdown.registry import Directive, DirectiveCall, Registry, Role, RoleCall
from site_builder.site.prose.markdown.registry import register_all, registers

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.context import PageContext
    from site_builder.site.prose.markdown.registry import Output

REFERENCES = ("ref", "numref", "eq", "prf:ref", "std:ref", "any", "std:numref")
DOC_SUFFIXES = (".md", ".ipynb", ".py", ".qmd", ".rst")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def label_link(out: Output, written: str, name: str, title: str = "", numbered: bool = False, line: int = 0) -> str:
    """A link to the label ``name`` showing ``title`` (``numbered``: its ``%s`` is the label's
    number), else the label's text; unresolved text and a warning naming ``written`` (the
    reference as the source has it) when the site has no such label."""
    label = out.page.find(name)
    if label is None:
        if is_id_label(name):  # (one that cannot be an id: its definition's warning says so)
            out.warn(line, f"{written}: no label {name!r} in the site (it shows as text)")
        if numbered and ("%s" in title or "{number}" in title):
            title = ""  # the number of nothing: the label's name reads instead
        return out.macro("unresolved", _title(out, title, line) or name, "cross-reference")
    if numbered and title:
        number = label.number or (label.text.split() or [""])[-1]
        title = title.replace("%s", number).replace("{number}", number)
    kind = "internal" if label.entry == out.page.entry else "entry"
    return out.macro("xref", out.page.href(label), _title(out, title, line) or label.text, kind)


def _title(out: Output, title: str, line: int) -> str:
    """An explicit title's inline Markdown ("*steady state*") as HTML; plain text as it is."""
    return out.inline(title, line) if title and any(c in title for c in "*_`$[<\\{") else title


@registers(*REFERENCES)
class Reference(Role):
    """A label of the site (see ``label_link``)."""

    rst = True

    def render(self, call: RoleCall, out: Output) -> str:
        return label_link(out, call.data.get("written") or f"{{{call.name}}}`{call.content}`", call.target, call.title,
                          call.name.endswith("numref"), call.line)


@registers("doc", "std:doc", "download")
class Document(Role):
    """Another entry's page, by its source path (relative to this page, or from the book's root)."""

    def render(self, call: RoleCall, out: Output) -> str:
        found = out.page.find_doc(call.target) if call.name != "download" else None
        shown = call.title or (found[1] if found else call.target.rsplit("/", 1)[-1])
        if found is None:
            if call.name != "download":
                out.warn(call.line, f"{{{call.name}}}`{call.content}`: no entry {call.target!r} in the site")
            return out.macro("element", "span", shown, "unresolved" if call.name != "download" else "")
        return out.macro("link", f"{out.page.root}{found[0]}/index.html", shown)


@registers("tableofcontents")
class TableOfContents(Directive):
    """Jupyter Book's ``{tableofcontents}``: links to the site's other pages, in the site's order."""

    content = False

    def render(self, call: DirectiveCall, out: Output) -> str:
        pages = [(f"{out.page.root}{entry}/index.html", title) for entry, title in dict(out.page.docs.values()).items()
                 if entry != out.page.entry]
        return out.macro("pages", pages) if pages else ""


def resolve_links(children: list[Token], page: PageContext, line: int = 0) -> None:
    """Links of one inline run that name a label or a page of the site lead there (see the
    module docstring); an empty ``[](#label)`` naming nothing becomes a ``{ref}`` (it warns)."""
    i = 0
    while i < len(children):
        if children[i].type == "link_open":
            _link(children, i, page, line)
        i += 1


def _link(children: list[Token], index: int, page: PageContext, line: int) -> None:
    token = children[index]
    href = unquote(str(token.attrGet("href") or ""))
    if not href or _SCHEME.match(href) or href.startswith("//"):
        return
    path, _, fragment = href.partition("#")
    empty = index + 1 < len(children) and children[index + 1].type == "link_close"
    doc = page.find_doc(path) if path and _is_doc_path(path) else None
    legacy = bool(path) and doc is None and not fragment and "/" not in path and "." not in path
    name = fragment if not path or doc is not None else path if legacy else ""
    label = page.find(name) if name else None
    if label is not None and (doc is None or label.entry == doc[0]):
        kind = "internal" if label.entry == page.entry else "entry"
        _lead(children, index, page.href(label), label.text if empty else "", f"xref xref-{kind}")
    elif doc is not None:
        if fragment:
            page.warn(line, f"[...]({href}): no label {fragment!r} on {doc[0]}: the link leads to its page")
        _lead(children, index, f"{page.root}{doc[0]}/index.html", doc[1] if empty else "", "")
    elif empty and not path and fragment in page.html_ids:  # [](#id) of raw HTML: its name shows
        _lead(children, index, f"#{page.html_ids[fragment]}", fragment, "xref xref-internal")
    elif empty and name:  # [](#nothing), [](nothing): reads as an unresolved {ref} (which warns)
        children[index:index + 2] = [Token("myst_role", "", 0, content=name, meta={"name": "ref"})]
    elif legacy:  # [text](nothing): MyST reads a label or a page, the site has neither: its text
        page.warn(line, f"[...]({href}): no label or entry {path!r} in the site (its text shows, unlinked)")
        _unlinked(children, index)
    elif path.endswith(DOC_SUFFIXES):  # [text](other.md#x) whose document is no page of the site
        page.warn(line, f"[...]({href}): no document {path!r} in the site, relative to this page "
                        "(its text shows, unlinked)")
        _unlinked(children, index)


def _unlinked(children: list[Token], index: int) -> None:
    """The link at ``index`` shows its text, marked unresolved, leading nowhere."""
    depth = 0
    for token in children[index:]:
        depth += 1 if token.type == "link_open" else -1 if token.type == "link_close" else 0
        if token.type in ("link_open", "link_close") and depth <= 1:
            token.tag, token.attrs = "span", {"class": "unresolved", "title": "Unresolved cross-reference"}
        if depth == 0:
            break


def _is_doc_path(path: str) -> bool:
    """A link's path that may name a page's source: ``other.md``, ``../part/other``."""
    base = path.rstrip("/").rsplit("/", 1)[-1]
    return path.endswith(DOC_SUFFIXES) or "." not in base


def _lead(children: list[Token], index: int, href: str, text: str, css: str) -> None:
    token = children[index]
    token.attrSet("href", href)
    if css:
        token.attrSet("class", css)
    if text:  # an empty link shows what it names
        children.insert(index + 1, Token("text", "", 0, content=text))


def register(registry: Registry) -> None:
    register_all(registry, Reference, Document, TableOfContents)
