"""MyST Markdown's common constructs for Python-Markdown: directives, roles, math, targets.

What Jupyter Book sources use: admonitions (```` ```{note} ````), ``{math}`` and ``$``/``$$``
math with labels (MathML through docutils' converter, as reST prose), ``(label)=`` targets,
``{ref}``/``{eq}``/``{doc}`` links resolved within the site (else their text), code blocks,
figures of the notebook's folder, sphinx-exercise and sphinx-proof boxes (numbered; solutions
folded). Directives and roles it does not know show their content or text, never their
syntax; ``{raw}`` is dropped.  The markup of the boxes is templates/_prose_myst.html.
"""

from __future__ import annotations

import functools
import inspect
import logging
import posixpath
import re
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree

import jinja2
from markdown import Markdown
from markdown.extensions import Extension
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from markupsafe import Markup

from site_builder.site.myst_scan import (
    CODE_DIRECTIVES, VANISHING, Directive, Fence, Math, PageProse, Target, is_numbered, numbered, segments,
)
from site_builder.site.sitefiles import TEMPLATES_DIR

log = logging.getLogger(__name__)

ADMONITIONS = {
    "note": "Note", "tip": "Tip", "warning": "Warning", "seealso": "See also", "hint": "Hint",
    "important": "Important", "caution": "Caution", "danger": "Danger", "attention": "Attention",
    "error": "Error", "todo": "To do",
}
# The title ends at a non-blank: a lazy title before "\s*<" would try every length against a blank run.
_EXPLICIT = re.compile(r"^(?P<title>.*?\S)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_STASHED = re.compile("\u0002wzxhzdk:\\d+\u0003")  # Python-Markdown's htmlStash placeholder
_TARGET_TOKEN = "\u2063myst-target:{}\u2063"
_TARGET_TEXT = re.compile("^\u2063myst-target:(.+)\u2063$")


# ---------------------------------------------------------------- rendering helpers


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True, auto_reload=True)


def _macros() -> Any:
    """The macros of templates/_prose_myst.html (reloaded when the file changes, as under ``serve``)."""
    return _environment().get_template("_prose_myst.html").module


# TeX that docutils' converter does not read, rewritten to what it does (tried after a failure).
_TEX_REWRITES = (
    (re.compile(r"\\begin\{(?:equation|gather|multline)\*?\}|\\end\{(?:equation|gather|multline)\*?\}"), ""),
    # docutils 0.19 aligns rows split by \\ and & itself but refuses the environments around them
    (re.compile(r"\\(?:begin|end)\{(?:aligned|align|split|eqnarray|gathered)\*?\}"), ""),
    (re.compile(r"\\begin\{array\}\{[^{}]*\}"), r"\\begin{matrix}"),
    (re.compile(r"\\end\{array\}"), r"\\end{matrix}"),
    (re.compile(r"\\cr\b"), r"\\\\"),
    (re.compile(r"\\(?:color|textcolor)\{[^{}]*\}"), ""),
    (re.compile(r"\{\\bf\s+([^{}]*)\}"), r"\\mathbf{\1}"),
    (re.compile(r"\\dots\b"), r"\\ldots"),
    (re.compile(r"\\label\{[^{}]*\}|\\nonumber\b|\\notag\b|(?<!\\)%[^\n]*"), ""),
)


def math_html(tex: str, display: bool) -> str:
    """``tex`` as MathML, with docutils' converter (what reST's math gives); the TeX as code when it cannot."""
    from docutils.utils.math import latex2mathml, unichar2tex

    code = tex.translate(unichar2tex.uni2tex_table)
    block = "as_block" in inspect.signature(latex2mathml.tex2mathml).parameters  # docutils >= 0.21
    for attempt in range(2):
        try:  # as docutils' HTML writer calls it for math_output "MathML"
            if block:
                return latex2mathml.tex2mathml(code, as_block=display)
            return latex2mathml.tex2mathml(code, inline=not display)
        except Exception as exc:  # noqa: BLE001 (the converter raises SyntaxError and worse on odd TeX)
            if attempt:
                log.debug("TeX the MathML converter cannot read, shown as code: %s (%s)", tex, exc)
        for pattern, replacement in _TEX_REWRITES:
            code = pattern.sub(replacement, code)
    element = ElementTree.Element("code", {"class": "math-tex"})
    element.text = tex
    return ElementTree.tostring(element, encoding="unicode")


def _highlighted(code: str, language: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer

    from site_builder.site.prose_rst import _highlighted as highlighted  # one highlighter for prose

    return highlighted(code, language) or highlight(code, TextLexer(), HtmlFormatter(cssclass="highlight", wrapcode=True))


def _role_text(name: str, text: str) -> str:
    from site_builder.site.prose_rst import _role_text as role_text  # Sphinx's shortening rules

    return role_text(name, text)


# ---------------------------------------------------------------- the Markdown extension


class _Blocks(Preprocessor):
    """Directives, display math, code fences and targets, rendered and stashed before block parsing."""

    def __init__(self, md: Markdown, ext: MystExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        for seg in segments("\n".join(lines)):
            if isinstance(seg, str):
                out.append(seg)
                continue
            if isinstance(seg, Target):
                self.ext.targets.append(seg.label)
                out += ["", seg.indent + _TARGET_TOKEN.format(len(self.ext.targets) - 1), ""]
                continue
            html = self.ext.block_html(seg)
            out += ["", seg.indent + self.md.htmlStash.store(html) if html else "", ""]
        return out


class _Role(InlineProcessor):
    """``{name}`text```: math, links to labels and documents, code, or the text."""

    def __init__(self, md: Markdown, ext: MystExtension) -> None:
        # The opening run is taken whole ((?!`)): fewer ticks would be tried against every closing one.
        super().__init__(r"\{(?P<name>[A-Za-z][\w:.+-]*)\}(?P<ticks>`+)(?!`)(?P<text>.+?)(?P=ticks)(?!`)", md)
        self.ext = ext

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[object, int, int]:  # noqa: N802
        return self.ext.role(m.group("name").lower(), m.group("text").strip()), m.start(0), m.end(0)


class _InlineMath(InlineProcessor):
    def __init__(self, pattern: str, md: Markdown, display: bool) -> None:
        super().__init__(pattern, md)
        self.display = display

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[object, int, int]:  # noqa: N802
        return self.md.htmlStash.store(math_html(m.group("tex"), self.display)), m.start(0), m.end(0)


class _Anchors(Treeprocessor):
    """Targets give their id to the element after them; headings get an id (for "On this page")."""

    def __init__(self, md: Markdown, ext: MystExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, root: ElementTree.Element) -> None:
        for parent in list(root.iter()):
            children = list(parent)
            for index, child in enumerate(children):
                match = _TARGET_TEXT.match(child.text or "") if child.tag == "p" else None
                if match is None:
                    continue
                label = self.ext.targets[int(match.group(1))]
                after = children[index + 1] if index + 1 < len(children) else None
                if after is not None and not after.get("id") and not _STASHED.fullmatch((after.text or "").strip()):
                    after.set("id", label)
                    parent.remove(child)
                else:  # before a stashed directive (or nothing): an anchor of its own
                    child.tag, child.text = "span", None
                    child.set("id", label)
        seen: set[str] = set()
        for heading in root.iter():
            if heading.tag in ("h1", "h2", "h3", "h4", "h5", "h6") and not heading.get("id"):
                slug = re.sub(r"[^\w-]+", "-", "".join(heading.itertext()).lower()).strip("-") or "section"
                anchor, n = f"{self.ext.id_prefix}{slug}", 1
                while anchor in seen:
                    n += 1
                    anchor = f"{self.ext.id_prefix}{slug}-{n}"
                seen.add(anchor)
                heading.set("id", anchor)


class _LocalImages(Treeprocessor):
    """A Markdown image of the notebook's folder is published with the page; others show their alt text."""

    def __init__(self, md: Markdown, ext: MystExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, root: ElementTree.Element) -> None:
        if self.ext.page.publish_image is None:  # no page to publish with (a docstring's text)
            return
        for el in root.iter("img"):
            src = el.get("src", "")
            url = self.ext.image_url(src)
            if url:
                el.set("src", url)
            elif _local_path(src) is not None or not src.startswith(("http://", "https://")):
                alt = el.get("alt", "")
                for key in list(el.attrib):
                    del el.attrib[key]
                el.tag, el.text = "span", alt


def list_table_rows(lines: list[str]) -> list[list[str]]:
    """The cells of a MyST list-table's body (``* - a`` starts a row, ``  - b`` adds a cell,
    deeper lines continue the cell), as Markdown texts."""
    rows: list[list[str]] = []
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if indent == 0 and stripped[:1] in "*-+" and stripped[1:].lstrip().startswith("- "):
            rows.append([stripped[1:].lstrip()[2:]])
        elif rows and stripped.startswith("- ") and indent <= 2:
            rows[-1].append(stripped[2:])
        elif rows and stripped:
            rows[-1][-1] += "\n" + line[min(indent, 4):]
        elif rows:
            rows[-1][-1] += "\n"
    return rows


def _local_path(src: str) -> str | None:
    """``src`` as a path inside the notebook's folder, or None (remote, absolute, or leaving it)."""
    if not src or "://" in src or src.startswith(("/", "\\", "data:")) or ":" in src.split("/")[0]:
        return None
    path = posixpath.normpath(src.split("#")[0].split("?")[0])
    return None if path.startswith("..") or path == "." else path


class MystExtension(Extension):
    """Teaches a Markdown converter MyST; ``page`` is swapped per page, ``id_prefix`` per cell."""

    def __init__(self, render_nested: Callable[[str, str, PageProse, int], str], depth: int = 0) -> None:
        super().__init__()
        self.page = PageProse()
        self.id_prefix = ""
        self.targets: list[str] = []
        self.render_nested = render_nested  # Markdown -> HTML at the next nesting depth
        self.depth = depth

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Markdown's API)
        self.md = md
        md.registerExtension(self)  # reset() with the converter's
        md.preprocessors.register(_Blocks(md, self), "myst_blocks", 28)
        md.inlinePatterns.register(_Role(md, self), "myst_role", 195)
        md.inlinePatterns.register(_InlineMath(r"(?<![\\$])\$\$(?P<tex>[^$]+?)\$\$", md, True), "myst_dmath", 187)
        md.inlinePatterns.register(
            # Blanks, one non-blank (or an escape), then anything to the next unescaped "$": each
            # part can match in one way only, so a "$" never closed costs one scan, not a quadratic search.
            _InlineMath(r"(?<![\\$\w])\$(?!\$)(?P<tex>\s*(?:\\.|[^$\\\s])(?:\\.|[^$\\])*)\$(?![\d$])", md, False),
            "myst_math", 186)
        md.treeprocessors.register(_Anchors(md, self), "myst_anchors", 5)
        md.treeprocessors.register(_LocalImages(md, self), "myst_images", 4)

    def reset(self) -> None:
        self.targets = []

    # -- blocks

    def nested(self, text: str) -> Markup:
        return Markup(self.render_nested(text, self.id_prefix, self.page, self.depth + 1))

    def inline(self, text: str) -> Markup:
        """One line of Markdown (a title) as inline HTML."""
        html = self.nested(text).strip()
        if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
            html = html[3:-4]
        return Markup(html)

    def image_url(self, src: str) -> str | None:
        path = _local_path(src)
        if path is None or self.page.publish_image is None:
            return None
        return self.page.publish_image(path)

    def block_html(self, seg: object) -> str:
        macros = _macros()
        if isinstance(seg, Fence):
            return _highlighted("\n".join(seg.body), seg.language)
        if isinstance(seg, Math):
            number = str(self.page.number("equation")) if seg.label else ""
            return macros.math_block(Markup(math_html(seg.tex, True)), number, seg.label)
        assert isinstance(seg, Directive)
        return self.directive_html(seg, macros)

    def directive_html(self, d: Directive, macros: Any) -> str:
        name, body, label = d.name, "\n".join(d.body), d.options.get("label") or d.options.get("name") or ""
        if name in ADMONITIONS:
            # Admonitions take no argument: text on the opening line is their first line.
            content = f"{d.args}\n\n{body}" if d.args else body
            return macros.admonition(name, ADMONITIONS[name], self.nested(content), label)
        if name == "admonition":
            css = "admonition-" + re.sub(r"[^a-z0-9]+", "-", d.args.lower()).strip("-")
            return macros.admonition(css, self.inline(d.args), self.nested(body), label)
        if is_numbered(name):
            title, _text = numbered(d, self.page)
            return macros.box(name.replace(":", "-"), self.inline(title), self.nested(body), label)
        if name == "prf:proof":
            return macros.box("prf-proof", "Proof.", self.nested(body), label)
        if name == "solution":
            target = self.page.labels.get(d.args.strip())
            title = f"Solution to {target.text}" if target else "Solution"
            return macros.solution(title, self.nested(body), label)
        if name in ("solution-start", "exercise-start"):  # its end is in a later cell
            if name == "exercise-start":
                title, _text = numbered(Directive("exercise", d.args, d.options, [], ""), self.page)
            else:
                target = self.page.labels.get(d.args.strip())
                title = f"Solution to {target.text}" if target else "Solution"
            return macros.gated_title(self.inline(title))
        if name == "math":
            number = str(self.page.number("equation")) if label else ""
            return macros.math_block(Markup(math_html(body, True)), number, label)
        if name in CODE_DIRECTIVES:
            return macros.code(Markup(_highlighted(body, d.args.split()[0] if d.args else "")),
                               d.options.get("caption", ""))
        if name in ("figure", "image"):
            return self.figure_html(d, body, label, macros)
        if name == "eval-rst":
            from site_builder.site.prose_rst import rst_html

            return rst_html(body, self.id_prefix) or ""
        if name == "list-table":
            rows = [[self.nested(cell) for cell in row] for row in list_table_rows(d.body)]
            count = int(d.options.get("header-rows", "0")) if d.options.get("header-rows", "0").isdigit() else 0
            title = self.inline(d.args) if d.args else ""
            return macros.list_table(title, rows[:count], rows[count:], label)
        if name in VANISHING or name.endswith("-end"):
            return ""
        # Layout directives and those unknown here: their content, their argument as a title.
        title = self.inline(d.args) if d.args else ""
        return macros.container(f"myst-{re.sub(r'[^a-z0-9-]', '-', name)}", title, self.nested(body))

    def figure_html(self, d: Directive, body: str, label: str, macros: Any) -> str:
        src, alt = d.args.strip(), d.options.get("alt", "")
        url = self.image_url(src)
        web = src.startswith(("http://", "https://"))
        figure = d.name == "figure"
        number = str(self.page.number("figure")) if figure else ""
        caption = self.nested(body) if figure and body.strip() else ""
        if figure and not alt:
            alt = " ".join(d.body[0].split()) if d.body else ""
        width = d.options.get("width", "")
        width = width if width.isdigit() else ""
        return macros.figure(url, src if web else "", alt, width, caption, number, label, figure)

    # -- roles

    def role(self, name: str, text: str) -> object:
        explicit = _EXPLICIT.match(text)
        title, target = (explicit.group("title"), explicit.group("target")) if explicit else ("", text)
        if name == "math":
            return self.md.htmlStash.store(math_html(text, False))
        if name in ("ref", "numref", "eq", "prf:ref", "std:ref", "any", "term"):
            label = self.page.labels.get(target.strip())
            if name == "numref" and title and label:
                title = title.replace("%s", label.text.split()[-1]).replace("{number}", label.text.split()[-1])
            shown = title or (label.text if label else target)
            return _element("a", shown, href=self.page.href(label)) if label else _element("span", shown)
        if name in ("doc", "std:doc", "download"):
            found = self.doc(target.strip()) if name != "download" else None
            shown = title or (found[1] if found else target.rsplit("/", 1)[-1])
            return _element("a", shown, href=f"{self.page.root}{found[0]}/index.html") if found else _element("span", shown)
        if name == "abbr":
            match = re.match(r"^(?P<short>.*?\S)\s*\((?P<long>.+)\)$", text) if text.endswith(")") else None
            return _element("abbr", match.group("short"), title=match.group("long")) if match else _element("abbr", text)
        tag = {"sub": "sub", "subscript": "sub", "sup": "sup", "superscript": "sup", "kbd": "kbd",
               "code": "code", "literal": "code", "emphasis": "em", "strong": "strong",
               "samp": "code", "file": "code", "command": "strong", "guilabel": "span"}.get(name)
        if tag:
            return _element(tag, text)
        if name in ("cite", "cite:p", "cite:t", "footcite", "cite:ps", "cite:ts"):
            return _element("span", f"[{text}]")
        if name in ("index", "glue", "glue:", "glue:text", "glue:md", "menuselection", "keyword",
                    "option", "envvar", "dfn", "title-reference", "pep", "rfc"):
            return _element("span", title or target)
        # API roles ({py:func}, {class}, ...) and the rest: code, as Sphinx shows them unresolved.
        return _element("code", _role_text(name, text))

    def doc(self, target: str) -> tuple[str, str] | None:
        """The (entry, title) a ``{doc}`` path names, relative to this page or the book's root."""
        target = target.removesuffix(".md").removesuffix(".ipynb").removesuffix(".py")
        if target.startswith("/"):
            wanted = target.lstrip("/")
            return next((v for k, v in self.page.docs.items() if k == wanted or k.endswith("/" + wanted)), None)
        return self.page.docs.get(posixpath.normpath(posixpath.join(posixpath.dirname(self.page.doc), target)))


def _element(tag: str, text: str, **attributes: str) -> ElementTree.Element:
    element = ElementTree.Element(tag, attributes)
    element.text = text
    return element
