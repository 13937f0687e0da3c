"""The run's values in prose: inline expressions (``{eval}``, reST's ``:eval:``, Quarto's
``` `{python} x` ```) and MyST-NB's glue roles and directives.

The child evaluated each expression at its place (``run.quoting``); the page finds its value by
the place of the text being rendered (``PageContext.after``) and the text as written. A value
shows as text, escaped (its ``_repr_markdown_`` as Markdown, its ``_repr_latex_`` as math); one
that raised, or that the run never reached, shows as a visible error and warns with its line.
Glue pastes what ``glue(name, value)`` kept: ``{glue}``/``{glue:any}`` its richest form,
``{glue:text}`` its text with a format spec, ``{glue:md}``, ``{glue:math}``, ``{glue:figure}``
(numbered, captioned, labelled by ``:name:``); ``other.ipynb::name`` reads another entry's.
"""

from __future__ import annotations

import ast
import posixpath
import re
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from site_builder.run.results import Display
from site_builder.site.prose.mathml import math_html
from site_builder.site.prose.markdown.registry import Directive, DirectiveCall, Registry, Role, RoleCall, \
    number_equation, number_figure, register_all, registers

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.context import PageContext
    from site_builder.site.prose.markdown.registry import Output

QUARTO_INLINE = re.compile(r"^\{python\}\s+\S")  # `{python} expr`: Quarto's inline code
_MATH_DELIMITERS = re.compile(r"^\s*(\$\$?|\\\[|\\\()(?P<body>.*?)(\$\$?|\\\]|\\\))\s*$", re.DOTALL)
_BLOCK_HTML = re.compile(r"<(?:address|article|aside|blockquote|details|div|dl|figure|footer|h[1-6]|header|hr|"
                         r"ol|p|pre|section|table|ul)\b", re.I)  # elements that end a paragraph
_LITERAL_LIMIT = 10_000  # characters of a glued text/plain read back as a Python literal
_TYPES = {"b": int, "c": int, "d": int, "o": int, "x": int, "X": int, "e": float, "E": float, "f": float,
          "F": float, "g": float, "G": float, "n": float, "%": float, "s": str}


def quoted_html(out: Output, written: str, line: int, block: bool = False) -> Markup:
    """The value of the expression ``written`` at the place being rendered (see the module docstring);
    ``block``: as a paragraph of its own."""
    page = out.page
    value = page.quoted.get((page.after, written))
    if value is None or not value.evaluated:
        out.warn(line, f"the expression {written!r} was not evaluated: the run did not reach its place")
        shown = out.macro("quoted_error", written, "not evaluated")
    elif value.error:
        out.warn(line, f"the expression {value.code!r} raised {value.error}")
        shown = out.macro("quoted_error", written, value.error)
    elif value.kind == "image":
        view = image_view(page, value)
        if view is not None:  # a figure, as mystmd shows it
            return out.macro("pasted", view, block, value.code)
        out.warn(line, f"the expression {value.code!r} gives an image that cannot be published")
        shown = out.macro("quoted_error", written, "image not published")
    else:
        shown = shown_text(out, value.text, value.kind)
    return out.macro("quoted_block", shown) if block else shown


def image_view(page: PageContext, value: Any) -> Any:
    """The view (site.outputs.displays.DisplayView) of a quoted value's image, published with the
    page; None when it has none or it cannot be published."""
    if value.kind != "image" or page.show_value is None:
        return None
    view = page.show_value(Display(data={"text/plain": value.text}, files=dict(value.files)))
    return view if view.kind == "image" else None


def shown_text(out: Output, text: str, kind: str) -> Markup:
    """A value's text as the prose shows it: Markdown rendered, LaTeX as math, else escaped."""
    if kind == "markdown":
        return out.inline(text)
    if kind == "latex":
        return math_html(_math_body(text), False)
    return out.macro("quoted", text)


def _math_body(latex: str) -> str:
    match = _MATH_DELIMITERS.match(latex)
    return (match.group("body") if match else latex).strip()


@registers("eval")
class Eval(Role):
    """``{eval}`expr[:spec]```, and reST's ``:eval:`expr```: the value the run gave it."""

    rst = True

    def render(self, call: RoleCall, out: Output) -> str:
        return str(quoted_html(out, call.content, call.line))


@registers("eval")
class EvalDirective(Directive):
    """MyST-NB's ```` ```{eval} expr ````: the value as a paragraph of its own."""

    content = False

    def render(self, call: DirectiveCall, out: Output) -> str:
        return str(quoted_html(out, call.argument.strip(), call.line, block=True))


@registers("eval:figure")
class EvalFigure(Directive):
    """MyST-NB's ```` ```{eval:figure} expr ````: the value (a figure's image) as a numbered figure,
    its body the caption, ``:name:`` its label."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        number_figure(call, page)

    def render(self, call: DirectiveCall, out: Output) -> str:
        written = call.argument.strip()
        caption = out.body(call) if call.body.strip() else ""
        value = out.page.quoted.get((out.page.after, written))
        view = image_view(out.page, value) if value is not None and value.evaluated and not value.error else None
        if view is not None:
            alt = call.options.get("alt", "") or view.alt or written
            return str(out.macro("figure", view.src, "", alt, view.width or "", caption, call.data["number_text"],
                                 call.anchor))
        return str(out.macro("figure_box", quoted_html(out, written, call.line, block=True), caption,
                             call.data["number_text"], call.anchor))


# ---------------------------------------------------------------- glue


def glued(page: PageContext, written: str) -> tuple[Any, str, str]:
    """(the glued value ``written`` names (site.outputs.quoted.Pasted), or None; its name; the text
    after ``:``, a format spec)."""
    doc, _, rest = written.strip().rpartition("::")
    name, _, spec = rest.partition(":")
    entry = ""
    if doc:
        here = posixpath.dirname(page.doc)
        target = posixpath.normpath(posixpath.join(here, posixpath.splitext(doc)[0]))
        entry = page.docs.get(target, ("\0", ""))[0]
        entry = "" if entry == page.entry else entry
    return page.glued.get(entry, {}).get(name.strip()), name.strip(), spec.strip()


def _missing(out: Output, written: str, name: str, line: int) -> Markup:
    out.warn(line, f"glue: no value named {name!r} was glued (glue({name!r}, value) in the code)")
    return out.macro("quoted_error", written, "not glued")


def formatted(text: str, spec: str) -> str:
    """MyST-NB's ``{glue:text}``: the text/plain read back as a literal, formatted by ``spec``."""
    value: Any = text
    if len(text) <= _LITERAL_LIMIT:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = text
    if not spec:
        return str(value)
    try:
        convert = _TYPES.get(spec[-1])
        return format(convert(value) if convert else value, spec)
    except (ValueError, TypeError, OverflowError):
        return text


def pasted(out: Output, found: Any, block: bool) -> Markup:
    """A glued value in its richest form, as a block's value shows it: sanitised HTML or an image
    (published beside the page), else its Markdown, its math or its text."""
    display = found.display
    data = display.data
    if "text/html" in data or display.files:
        view = found.view()
        if view.kind in ("image", "plotly") or view.mime == "text/html":
            # a table in a sentence ends its paragraph whatever the markup says: pasted as a block
            block = block or (view.kind == "html" and _BLOCK_HTML.search(str(view.html)) is not None)
            return out.macro("pasted", view, block, "A glued value")
    if "text/markdown" in data:
        return out.markdown(data["text/markdown"]) if block else out.inline(data["text/markdown"])
    if "text/latex" in data:
        return math_html(_math_body(data["text/latex"]), block)
    text = out.macro("quoted", data.get("text/plain", ""))
    return out.macro("quoted_block", text) if block else text


@registers("glue", "glue:", "glue:any", "glue:text", "glue:md", "glue:math")
class GlueRole(Role):
    def render(self, call: RoleCall, out: Output) -> str:
        found, name, spec = glued(out.page, call.content)
        if found is None:
            return str(_missing(out, call.content, name, call.line))
        display = found.display
        if call.name == "glue:text":
            return str(out.macro("quoted", formatted(display.data.get("text/plain", ""), spec)))
        if call.name == "glue:md":
            return str(out.inline(display.data.get("text/markdown", display.data.get("text/plain", ""))))
        if call.name == "glue:math":
            return str(math_html(_math_body(display.data.get("text/latex", display.data.get("text/plain", ""))), False))
        return str(pasted(out, found, False))


@registers("glue", "glue:", "glue:any", "glue:figure", "glue:math", "glue:md")
class GlueDirective(Directive):
    """The directives paste a glued value as a block; ``glue:figure`` is a numbered figure."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        if call.name == "glue:figure":
            number_figure(call, page)
        elif call.name == "glue:math" and call.label:
            number_equation(call, page)

    def render(self, call: DirectiveCall, out: Output) -> str:
        doc = call.options.get("doc", "").strip()  # MyST-NB's :doc: other.ipynb
        found, name, _ = glued(out.page, f"{doc}::{call.argument}" if doc else call.argument)
        if found is None:
            return str(_missing(out, call.argument, name, call.line))
        display = found.display
        if call.name == "glue:figure":
            caption = out.body(call) if call.body.strip() else ""
            alt = call.options.get("alt", "") or " ".join(call.body.strip().split("\n")[0].split()) or name
            view = found.view() if display.files else None
            if view is not None and view.kind == "image":
                return str(out.macro("figure", view.src, "", alt, view.width or "", caption,
                                     call.data["number_text"], call.anchor))
            return str(out.macro("figure_box", pasted(out, found, True), caption, call.data["number_text"],
                                 call.anchor))
        if call.name == "glue:math":
            tex = _math_body(display.data.get("text/latex", display.data.get("text/plain", "")))
            return str(out.macro("math_block", math_html(tex, True), call.data.get("number", ""), call.anchor))
        return str(pasted(out, found, True))


def register(registry: Registry) -> None:
    register_all(registry, Eval, EvalDirective, EvalFigure, GlueRole, GlueDirective)

