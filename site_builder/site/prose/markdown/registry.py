"""The roles and directives Markdown prose knows: one registry, filled by plugin modules.

A directive is a ``Directive`` subclass, a role a ``Role`` subclass, each registered under
its names by a plugin module's ``register(registry)`` (the modules in ``PLUGINS``, as a
Sphinx extension's ``setup``). Each has two steps, both called in page order:

- ``resolve(call, page)``: runs before any page is rendered (to collect the site's labels)
  and again when its page is rendered, with a fresh ``PageContext`` each time: number the
  construct, ``page.define`` its labels (which gives the id of its element: keep it as
  ``call.data["anchor"]``; a labelled directive that defines nothing gets one defined for
  it), keep what ``render`` needs in ``call.data``;
- ``render(call, out)``: its HTML, from the macros of templates/_prose_myst.html
  (``out.macro``), its rendered body (``out.body``) or other Markdown (``out.markdown``).

A name nobody registered falls back to ``Registry.unknown_directive`` / ``unknown_role``:
its content or text is shown, never its syntax, and the page gets a warning with its line.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from site_builder.source.syntax.markdown import explicit_title

if TYPE_CHECKING:
    from markdown_it.token import Token

    from site_builder.site.prose.markdown.context import PageContext
    from markupsafe import Markup

# The modules whose register(registry) fills the default registry, in this order (a later
# module may replace an earlier one's handler of the same name).
PLUGINS = (
    "site_builder.site.prose.markdown.directives",
    "site_builder.site.prose.markdown.boxes",
    "site_builder.site.prose.markdown.roles",
    "site_builder.site.prose.markdown.xrefs",
    "site_builder.site.prose.markdown.pandoc",  # Pandoc's divs: Quarto's callouts and tabsets
    "site_builder.site.references.roles",  # citations (MyST's and Pandoc's), terms, glossaries
    "site_builder.site.prose.quoting",  # the run's values: {eval}, Quarto's inline code, glue
)


class Output(Protocol):
    """What a role's or directive's ``render`` works with: the page, the macros, nested prose
    (renderer.ProseOutput is the one there is; handlers need only this much of it)."""

    @property
    def page(self) -> PageContext: ...

    def macro(self, name: str, *args: Any, **kwargs: Any) -> Markup: ...

    def body(self, call: DirectiveCall) -> Markup: ...

    def tokens(self, tokens: Sequence[Token]) -> Markup: ...

    def markdown(self, text: str, line: int = 0) -> Markup: ...

    def inline(self, text: str, line: int = 0) -> Markup: ...

    def warn(self, line: int, message: str) -> None: ...


@dataclass
class DirectiveCall:
    """One directive of a page, as written and as resolved."""

    name: str  # "note", "prf:theorem", ...
    argument: str  # the text after the name on the opening line
    options: dict[str, str]
    body: str  # its content, options left out
    line: int  # 1-based line of its opening fence in the entry's source (0: not known)
    body_line: int  # 1-based line of the body's first line
    children: list[Token] | None = None  # the body parsed and resolved (a directive with Markdown content)
    data: dict[str, Any] = field(default_factory=dict)  # what resolve leaves for render

    @property
    def label(self) -> str:
        """The label it defines (``:label:`` or ``:name:``), "" when none."""
        return (self.options.get("label") or self.options.get("name") or "").strip()

    @property
    def anchor(self) -> str:
        """The id its element gets for its label ("" : none; see PageContext.define)."""
        return str(self.data.get("anchor", ""))


@dataclass
class RoleCall:
    """One role of a page: ``{name}`content```."""

    name: str
    content: str
    line: int  # 1-based line in the entry's source (0: not known)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """The explicit title of ``title <target>``, "" when none."""
        return explicit_title(self.content)[0]

    @property
    def target(self) -> str:
        """The target of ``title <target>``, else the whole content."""
        return explicit_title(self.content)[1]


class Directive:
    """How one kind of directive is read and shown (see the module docstring)."""

    content: ClassVar[bool] = True  # its body is Markdown: parsed, resolved and rendered as prose

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        """Number it and define its labels (called before its body is resolved)."""

    def render(self, call: DirectiveCall, out: Output) -> str:
        raise NotImplementedError


class Role:
    """How one kind of role is read and shown (see the module docstring)."""

    rst: ClassVar[bool] = False  # reST's role of the same name is this one too (:cite:p:, :ref:, :term:)

    def resolve(self, call: RoleCall, page: PageContext) -> None:
        """Define what it defines, note what it uses."""

    def render(self, call: RoleCall, out: Output) -> str:
        raise NotImplementedError


class Registry:
    """Directives and roles by name (lower case)."""

    def __init__(self) -> None:
        self.directives: dict[str, Directive] = {}
        self.roles: dict[str, Role] = {}
        self.unknown_directive: Directive | None = None
        self.unknown_role: Role | None = None

    def add_directive(self, handler: Directive, *names: str) -> None:
        for name in names:
            self.directives[name.lower()] = handler

    def add_role(self, handler: Role, *names: str) -> None:
        for name in names:
            self.roles[name.lower()] = handler

    def directive(self, name: str) -> tuple[Directive, bool]:
        """The handler of directive ``name``, and whether it is known."""
        found = self.directives.get(name)
        if found is not None:
            return found, True
        assert self.unknown_directive is not None
        return self.unknown_directive, False

    def role(self, name: str) -> tuple[Role, bool]:
        """The handler of role ``name``, and whether it is known."""
        found = self.roles.get(name.lower())
        if found is not None:
            return found, True
        assert self.unknown_role is not None
        return self.unknown_role, False


def registers(*names: str) -> Callable[[type[Any]], type[Any]]:
    """Class decorator: the names a Directive or Role class is registered under (see ``register_all``)."""

    def decorate(cls: type[Any]) -> type[Any]:
        cls.names = names
        return cls

    return decorate


def register_all(registry: Registry, *classes: type[Any]) -> None:
    """Register one instance of each class under its ``names`` (set by ``registers``)."""
    for cls in classes:
        handler = cls()
        if isinstance(handler, Directive):
            registry.add_directive(handler, *cls.names)
        else:
            registry.add_role(handler, *cls.names)


@functools.lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The registry every page uses: the ``PLUGINS``' handlers."""
    registry = Registry()
    for module in PLUGINS:
        importlib.import_module(module).register(registry)
    return registry


def number_figure(call: DirectiveCall, page: PageContext) -> None:
    """Give a figure directive the page's next figure number, and its label an anchor; a Quarto
    figure (``![Caption](x.png){#fig-x}``, data "quarto") is "Figure N", as Quarto names it."""
    number = page.number("figure")
    word = "Figure" if call.data.get("quarto") else "Fig."
    call.data["number"], call.data["number_text"] = str(number), f"{word} {number}" + ":" * (word == "Figure")
    if call.label:
        call.data["anchor"] = page.define(call.label, f"{word} {number}", str(number))


def number_equation(call: DirectiveCall, page: PageContext) -> None:
    """Give a labelled display-math directive the page's next equation number and an anchor."""
    number = page.number("equation")
    call.data["number"] = str(number)
    call.data["anchor"] = page.define(call.label, f"({number})", str(number))
