"""Pandoc's fenced divs ``::: {#id .class key="value"}`` as Quarto shows them.

A callout (``.callout-note``, ``-tip``, ``-warning``, ``-important``, ``-caution``) is an
aside titled by ``title=``, else by a heading opening its body, else by its kind; with
``collapse="true"`` it is folded (a native ``<details>``, as our other folds), ``"false"``
folded open; ``appearance`` (default, simple, minimal) is a class. A ``.panel-tabset`` is
tabs, one per heading of its body's first heading level: every panel is a section with its
heading, readable and printed without script; static/site.js makes them tabs (roles, arrow
keys), ``group=`` keeping the page's tabsets of one group on the same tab. Any other div keeps
its id and classes; its other attributes (``style`` among them) are dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from markupsafe import Markup

from site_builder.site.prose.markdown.directives import css_name
from site_builder.site.prose.markdown.renderer import highlighted
from site_builder.site.prose.markdown.registry import Directive, DirectiveCall, Registry, register_all, registers
from site_builder.source.syntax.markdown import pandoc_attributes

if TYPE_CHECKING:
    from markdown_it.token import Token

    from site_builder.site.prose.markdown.context import PageContext
    from site_builder.site.prose.markdown.registry import Output

CALLOUTS = {"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important", "caution": "Caution"}
APPEARANCES = ("default", "simple", "minimal")
# Quarto's cell languages (```{python}): a cell the page shows as code when it did not run.
ENGINES = ("python", "python3", "ipython", "ipython3", "r", "julia", "ojs", "bash", "sql", "mermaid", "dot")


def div_attributes(argument: str) -> tuple[str, list[str], dict[str, str]]:
    """A div's ``{#id .class key=value}`` (or bare ``name``, a class) as (id, classes, other attributes),
    read by mdit-py-plugins' attribute parser (Pandoc's syntax)."""
    text = argument.strip()
    if text and not text.startswith(("{", ".", "#")) and "=" not in text and " " not in text:
        return "", [text], {}  # "::: warning": Pandoc's bare class
    found = pandoc_attributes("{" + text.strip("{}") + "}")
    if found is None:
        return "", [w.lstrip(".") for w in text.strip("{}").split() if w.startswith(".")], {}
    classes = found.pop("class", "").split()
    ident = found.pop("id", "")
    return ident, classes, found


@registers("div")
class PandocDiv(Directive):
    """A fenced div: a callout, a tabset, or a div with its id and classes (see the module docstring)."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        ident, classes, attributes = div_attributes(call.argument)
        kind = next((c.removeprefix("callout-") for c in classes if c.removeprefix("callout-") in CALLOUTS
                     and c.startswith("callout-")), "")
        call.data.update(classes=classes, attributes=attributes, kind=kind)
        if ident:
            call.options["label"] = ident
        if kind and "title" not in attributes:
            first, _, rest = call.body.lstrip("\n").partition("\n")
            if first.startswith("#") and first.lstrip("#").startswith(" "):  # "## Title" opening the body
                call.data["title"] = first.lstrip("#").strip()
                skipped = len(call.body) - len(call.body.lstrip("\n"))
                call.body_line += call.body[:skipped].count("\n") + 1
                call.body = rest

    def render(self, call: DirectiveCall, out: Output) -> str:
        classes, attributes, kind = call.data["classes"], call.data["attributes"], call.data["kind"]
        if kind:
            title = attributes.get("title") or call.data.get("title") or CALLOUTS[kind]
            collapse = attributes.get("collapse", "").lower()
            appearance = attributes.get("appearance", "default").lower()
            return out.macro("callout", kind, out.inline(title, call.line), out.body(call), call.anchor,
                             folded={"true": True, "false": False}.get(collapse),
                             appearance=appearance if appearance in APPEARANCES else "default")
        if "panel-tabset" in classes and call.children is not None:
            tabs = self.tabs(call, out)
            if tabs:
                group = css_name(attributes.get("group", ""))
                return out.macro("tabset", tabs, group, call.anchor)
        names = " ".join(css_name(c) for c in classes if css_name(c))
        return out.macro("container", f"myst-div {names}".strip(), "", out.body(call), call.anchor)

    @staticmethod
    def tabs(call: DirectiveCall, out: Output) -> list[tuple[str, Markup, Markup, str]]:
        """(its key, title, panel) of each tab: the body cut at its first heading level's headings."""
        tokens: list[Token] = call.children or []
        levels = [t.tag for t in tokens if t.type == "heading_open" and t.level == 0]
        if not levels:
            return []
        tag = min(levels)
        starts = [i for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0 and t.tag == tag]
        found = []
        env = {**out.env, **call.data.get("env", {})}  # the body's own (its footnotes), as out.body renders it
        for k, start in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else len(tokens)
            inline = tokens[start + 1]
            title = Markup(out.renderer.renderInline(inline.children or [], out.options, env))
            panel = Markup(out.renderer.render(tokens[start + 3:end], out.options, env))
            found.append((css_name(inline.content) or str(k + 1), title, panel, tag))
        return found


@registers(*ENGINES)
class CellListing(Directive):
    """A Quarto cell that did not run (inside a list, or on the page of a document that failed): its code."""

    content = False

    def render(self, call: DirectiveCall, out: Output) -> str:
        return out.macro("code", highlighted(call.body, call.name), "", call.anchor)


def register(registry: Registry) -> None:
    register_all(registry, PandocDiv, CellListing)
