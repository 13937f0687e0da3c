"""MyST's roles: math, inline markup, API names (cross-references: xrefs; citations and terms:
site/references).

API roles (``{py:func}``, ``{class}``...) link to the package's documentation when an
inventory knows the name, else show code as Sphinx shows it unresolved. An unknown role
shows its text, never its syntax (the resolve pass warns with its line).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from site_builder.site.prose.links import api_role
from site_builder.site.prose.mathml import math_html
from site_builder.site.prose.markdown.registry import Registry, Role, RoleCall, register_all, registers

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.registry import Output

# Roles shown as an element around their text.
ELEMENTS = {"sub": "sub", "subscript": "sub", "sup": "sup", "superscript": "sup", "kbd": "kbd",
            "code": "code", "literal": "code", "emphasis": "em", "strong": "strong", "samp": "code",
            "file": "code", "command": "strong", "guilabel": "span", "dfn": "em", "title-reference": "cite",
            "del": "del", "u": "u", "mark": "mark"}
# Roles shown as their text (their explicit title, else their target).
TEXT = ("index", "menuselection", "keyword", "option", "envvar",
        "pep", "rfc")
# The short form ends at a non-blank (linear: no lazy text tried against every blank run); a text
# not ending in ")" is refused before the pattern runs (".+" would be tried from every "(").
_ABBREVIATION = re.compile(r"^(?P<short>.*?\S)\s*\((?P<long>.+)\)$", re.DOTALL)


@registers("math")
class InlineMath(Role):
    def render(self, call: RoleCall, out: Output) -> str:
        return math_html(call.content, False)


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
    register_all(registry, InlineMath, Abbreviation, Element, Text)
    api = ApiOrUnknown()
    for name in ("func", "class", "exc", "meth", "attr", "data", "const", "mod", "obj"):
        registry.add_role(api, name, f"py:{name}")
    registry.unknown_role = api
