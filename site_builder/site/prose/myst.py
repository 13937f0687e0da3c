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

from site_builder.site.prose.myst_scan import (
    CODE_DIRECTIVES, VANISHING, Directive, Fence, Math, PageProse, Target, is_numbered, numbered, segments,
)
from site_builder.site.prose.images import is_remote
from site_builder.site.prose.mathml import math_html
from site_builder.site.references.glossary import glossary_html
from site_builder.site.sitefiles import TEMPLATES_DIR

ADMONITIONS = {
    "note": "Note", "tip": "Tip", "warning": "Warning", "seealso": "See also", "hint": "Hint",
    "important": "Important", "caution": "Caution", "danger": "Danger", "attention": "Attention",
    "error": "Error", "todo": "To do",
}
_EXPLICIT = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_STASHED = re.compile("\u0002wzxhzdk:\\d+\u0003")  # Python-Markdown's htmlStash placeholder
_UNESCAPE = re.compile("\u0002(\\d+)\u0003")  # Python-Markdown's backslash escape, undone at the end
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


def _highlighted(code: str, language: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer

    from site_builder.site.prose.rst import _highlighted as highlighted  # one highlighter for prose

    return highlighted(code, language) or highlight(code, TextLexer(), HtmlFormatter(cssclass="highlight", wrapcode=True))


def _role_text(name: str, text: str) -> str:
    from site_builder.site.prose.rst import _role_text as role_text  # Sphinx's shortening rules

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
            if isinstance(seg, Target):  # its id now, in page order with the directives' (see PageProse.anchor)
                self.ext.targets.append(self.ext.page.anchor(seg.label))
                out += ["", seg.indent + _TARGET_TOKEN.format(len(self.ext.targets) - 1), ""]
                continue
            html = self.ext.block_html(seg)
            out += ["", seg.indent + self.md.htmlStash.store(html) if html else "", ""]
        return out


class _Role(InlineProcessor):
    """``{name}`text```: math, links to labels and documents, code, or the text."""

    def __init__(self, md: Markdown, ext: MystExtension) -> None:
        super().__init__(r"\{(?P<name>[A-Za-z][\w:.+-]*)\}(?P<ticks>`+)(?P<text>.+?)(?P=ticks)(?!`)", md)
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
                anchor = self.ext.targets[int(match.group(1))]
                after = children[index + 1] if index + 1 < len(children) else None
                if not anchor:  # a second definition, or no id: the target shows nothing
                    parent.remove(child)
                elif after is not None and not after.get("id") and not _STASHED.fullmatch((after.text or "").strip()):
                    after.set("id", anchor)
                    parent.remove(child)
                else:  # before a stashed directive (or nothing): an anchor of its own
                    child.tag, child.text = "span", None
                    child.set("id", anchor)
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
    """An image of the entry's folder is published with the page when it may be (prose.images),
    else shows its alt text; web images become links.  Without a page (a value's Markdown,
    whose images are files the demo wrote, published beside the page) paths stay as they are."""

    def __init__(self, md: Markdown, ext: MystExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, root: ElementTree.Element) -> None:
        if self.ext.page.publish_image is None:
            return
        for el in root.iter("img"):
            src = _UNESCAPE.sub(lambda m: chr(int(m.group(1))), el.get("src", ""))  # `\_` in a path
            src = _STASHED.sub("\u2026", src)  # `$x$` in a path was made math: no such file, and no placeholder said
            if is_remote(src):
                continue  # a link to it (prose._RemoteImagesAsLinks)
            url = self.ext.image_url(src)
            if url:
                el.set("src", url)
            else:
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
            _InlineMath(r"(?<![\\$\w])\$(?!\$)(?P<tex>(?:\\.|[^$\\])*?\S(?:\\.|[^$\\])*?)\$(?![\d$])", md, False),
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
        """The URL of the image ``src`` names, published with the page; None when it is not."""
        publish = self.page.publish_image
        return publish(src) if publish is not None and not is_remote(src) else None

    def block_html(self, seg: object) -> str:
        macros = _macros()
        if isinstance(seg, Fence):
            return _highlighted("\n".join(seg.body), seg.language)
        if isinstance(seg, Math):
            number = str(self.page.number("equation")) if seg.label else ""
            anchor = self.page.anchor(seg.label) if seg.label else ""
            return macros.math_block(Markup(math_html(seg.tex, True)), number, anchor)
        assert isinstance(seg, Directive)
        return self.directive_html(seg, macros)

    def directive_html(self, d: Directive, macros: Any) -> str:
        name, body, label = d.name, "\n".join(d.body), d.options.get("label") or d.options.get("name") or ""
        anchor = self.page.anchor(label) if label else ""  # before its content's labels, in page order
        if name in ADMONITIONS:
            # Admonitions take no argument: text on the opening line is their first line.
            content = f"{d.args}\n\n{body}" if d.args else body
            return macros.admonition(name, ADMONITIONS[name], self.nested(content), anchor)
        if name == "admonition":
            css = "admonition-" + re.sub(r"[^a-z0-9]+", "-", d.args.lower()).strip("-")
            return macros.admonition(css, self.inline(d.args), self.nested(body), anchor)
        if is_numbered(name):
            title, _text = numbered(d, self.page)
            return macros.box(name.replace(":", "-"), self.inline(title), self.nested(body), anchor)
        if name == "prf:proof":
            return macros.box("prf-proof", "Proof.", self.nested(body), anchor)
        if name == "solution":
            target = self.page.find(d.args.strip())
            title = f"Solution to {target.text}" if target else "Solution"
            return macros.solution(title, self.nested(body), anchor)
        if name in ("solution-start", "exercise-start"):  # its end is in a later cell
            if name == "exercise-start":
                title, _text = numbered(Directive("exercise", d.args, d.options, [], ""), self.page)
            else:
                target = self.page.find(d.args.strip())
                title = f"Solution to {target.text}" if target else "Solution"
            return macros.gated_title(self.inline(title))
        if name == "math":
            number = str(self.page.number("equation")) if label else ""
            return macros.math_block(Markup(math_html(body, True)), number, anchor)
        if name in CODE_DIRECTIVES:
            return macros.code(Markup(_highlighted(body, d.args.split()[0] if d.args else "")),
                               d.options.get("caption", ""), anchor)
        if name in ("figure", "image"):
            return self.figure_html(d, body, anchor, macros)
        if name == "eval-rst":
            from site_builder.site.prose.rst import rst_html

            return rst_html(body, self.id_prefix, self.page.links, self.page.publish_image) or ""
        if name == "list-table":
            rows = [[self.nested(cell) for cell in row] for row in list_table_rows(d.body)]
            count = int(d.options.get("header-rows", "0")) if d.options.get("header-rows", "0").isdigit() else 0
            title = self.inline(d.args) if d.args else ""
            return macros.list_table(title, rows[:count], rows[count:], anchor)
        if name == "glossary":
            return glossary_html(self.page, d.body, self.nested)
        if name in VANISHING or name.endswith("-end"):
            return ""
        # Layout directives and those unknown here: their content, their argument as a title.
        title = self.inline(d.args) if d.args else ""
        return macros.container(f"myst-{re.sub(r'[^a-z0-9-]', '-', name)}", title, self.nested(body), anchor)

    def figure_html(self, d: Directive, body: str, anchor: str, macros: Any) -> str:
        src, alt = d.args.strip(), d.options.get("alt", "")
        url = self.image_url(src)
        web = is_remote(src)
        figure = d.name == "figure"
        number = str(self.page.number("figure")) if figure else ""
        caption = self.nested(body) if figure and body.strip() else ""
        if figure and not alt:
            alt = " ".join(d.body[0].split()) if d.body else ""
        width = d.options.get("width", "")
        width = width if width.isdigit() else ""
        return macros.figure(url, src if web else "", alt, width, caption, number, anchor, figure)

    # -- roles

    def role(self, name: str, text: str) -> object:
        explicit = _EXPLICIT.match(text)
        title, target = (explicit.group("title"), explicit.group("target")) if explicit else ("", text)
        refs = self.page.refs  # citations, cross-references, terms (site/references)
        resolved = refs.role(name, text, refs.where(f"{{{name}}}`{text}`")) if refs is not None else None
        if resolved is not None:
            return self.md.htmlStash.store(str(resolved))
        if name == "math":
            return self.md.htmlStash.store(math_html(text, False))
        if name in ("ref", "numref", "eq", "prf:ref", "std:ref", "any", "term"):
            label = self.page.find(target.strip())  # this page's own first
            if name == "numref" and title and label:
                title = title.replace("%s", label.text.split()[-1]).replace("{number}", label.text.split()[-1])
            shown = title or (label.text if label else target)
            return _element("a", shown, href=self.page.href(label)) if label else _element("span", shown)
        if name in ("doc", "std:doc", "download"):
            found = self.doc(target.strip()) if name != "download" else None
            shown = title or (found[1] if found else target.rsplit("/", 1)[-1])
            return _element("a", shown, href=f"{self.page.root}{found[0]}/index.html") if found else _element("span", shown)
        if name == "abbr":
            match = re.match(r"^(?P<short>.+?)\s*\((?P<long>.+)\)$", text)
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
