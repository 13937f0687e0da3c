"""MyST's roles: math, references to labels and documents, inline markup, API names.

``{ref}``, ``{numref}``, ``{eq}`` link to a label of the site (its text, else the label's
own: "Exercise 2", "(1)", a heading); ``{doc}`` to another entry's page; API roles
(``{py:func}``, ``{class}``...) to the package's documentation when an inventory knows the
name, else code as Sphinx shows it unresolved. What cannot be resolved shows as text, never
as syntax, and warns with its line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from site_builder.site.prose.label_ids import is_id_label
from site_builder.site.prose.links import api_role
from site_builder.site.prose.mathml import math_html
from site_builder.site.prose.markdown.registry import Registry, Role, RoleCall, register_all, registers

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.renderer import Output

# Roles shown as an element around their text.
ELEMENTS = {"sub": "sub", "subscript": "sub", "sup": "sup", "superscript": "sup", "kbd": "kbd",
            "code": "code", "literal": "code", "emphasis": "em", "strong": "strong", "samp": "code",
            "file": "code", "command": "strong", "guilabel": "span", "dfn": "em", "title-reference": "cite",
            "del": "del", "u": "u", "mark": "mark"}
# Roles shown as their text (their explicit title, else their target).
TEXT = ("index", "glue", "glue:", "glue:text", "glue:md", "menuselection", "keyword", "option", "envvar",
        "pep", "rfc")
CITATIONS = ("cite", "cite:p", "cite:t", "cite:ps", "cite:ts", "footcite", "footcite:p", "footcite:t")
REFERENCES = ("ref", "numref", "eq", "prf:ref", "std:ref", "any", "term", "std:term", "std:numref")
# The short form ends at a non-blank (linear: no lazy text tried against every blank run); a text
# not ending in ")" is refused before the pattern runs (".+" would be tried from every "(").
_ABBREVIATION = re.compile(r"^(?P<short>.*?\S)\s*\((?P<long>.+)\)$", re.DOTALL)


@registers("math")
class InlineMath(Role):
    def render(self, call: RoleCall, out: Output) -> str:
        return math_html(call.content, False)


@registers(*REFERENCES)
class Reference(Role):
    """A label of the site: a link showing the title given, else the label's text."""

    def render(self, call: RoleCall, out: Output) -> str:
        label = out.page.find(call.target)
        title = call.title
        if label is None:
            if is_id_label(call.target):  # (one that cannot be an id: its definition's warning says so)
                out.warn(call.line, f"{{{call.name}}}`{call.content}`: no label {call.target!r} in the site")
            return out.macro("element", "span", title or call.target, "unresolved")
        if call.name.endswith("numref") and title:
            number = label.number or label.text.split()[-1]
            title = title.replace("%s", number).replace("{number}", number)
        return out.macro("link", out.page.href(label), title or label.text)


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


@registers("abbr")
class Abbreviation(Role):
    def render(self, call: RoleCall, out: Output) -> str:
        text = call.content.strip()
        match = _ABBREVIATION.match(text) if text.endswith(")") else None
        if match is None:
            return out.macro("element", "abbr", call.content)
        return out.macro("element", "abbr", match.group("short"), "", match.group("long"))


@registers(*ELEMENTS)
class Element(Role):
    def render(self, call: RoleCall, out: Output) -> str:
        return out.macro("element", ELEMENTS[call.name.lower()], call.content)


@registers(*TEXT)
class Text(Role):
    def render(self, call: RoleCall, out: Output) -> str:
        return out.macro("element", "span", call.title or call.target)


@registers(*CITATIONS)
class Citation(Role):
    """A citation, as its key in brackets (no bibliography is read yet)."""

    def render(self, call: RoleCall, out: Output) -> str:
        return out.macro("element", "span", f"[{call.content}]")


class ApiOrUnknown(Role):
    """API roles (``{py:func}``, ``{class}``...): a link to the documentation, else code as
    Sphinx shows it unresolved; other unknown roles: their text as code (the resolve pass warned)."""

    def render(self, call: RoleCall, out: Output) -> str:
        from site_builder.site.prose.rst import _role_text  # Sphinx's shortening rules

        role = api_role(call.name)
        links = out.page.links
        found = links.api(call.target, role) if links is not None and role is not None else None
        shown = _role_text(call.name, call.content)
        if found is None:
            return out.macro("element", "code", shown)
        return out.macro("api_code", found.url, found.name, out.macro("element", "code", shown))


def register(registry: Registry) -> None:
    register_all(registry, InlineMath, Reference, Document, Abbreviation, Element, Text, Citation)
    api = ApiOrUnknown()
    for name in ("func", "class", "exc", "meth", "attr", "data", "const", "mod", "obj"):
        registry.add_role(api, name, f"py:{name}")
    registry.unknown_role = api
