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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from xml.etree import ElementTree

import jinja2
from markdown import Markdown
from markdown.extensions import Extension
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from markupsafe import Markup

from site_builder.site.sitefiles import TEMPLATES_DIR

ADMONITIONS = {
    "note": "Note", "tip": "Tip", "warning": "Warning", "seealso": "See also", "hint": "Hint",
    "important": "Important", "caution": "Caution", "danger": "Danger", "attention": "Attention",
    "error": "Error", "todo": "To do",
}
PROOF_KINDS = ("theorem", "lemma", "definition", "example", "corollary", "proposition", "conjecture",
               "remark", "axiom", "criterion", "algorithm", "observation", "property", "assumption",
               "notation")
CODE_DIRECTIVES = ("code-block", "code", "sourcecode", "code-cell")
# Directives with nothing to show outside Sphinx (or that would read files): they vanish.
VANISHING = ("raw", "toctree", "tableofcontents", "contents", "bibliography", "include",
             "literalinclude", "glue:figure", "glue:math", "glue", "index", "only", "meta",
             "jupyter-execute", "embed", "tags", "footbibliography", "autosummary", "currentmodule")
TITLED_CONTAINERS = ("dropdown", "card", "tab-item", "grid-item-card", "topic", "sidebar", "margin",
                     "rubric", "epigraph", "table", "list-table", "csv-table", "div", "container")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[^{}\s]+)\}(?:[ \t]+(?P<args>.*?))?[ \t]*$")
_TARGET = re.compile(r"^[ \t]*\((?P<label>[^()\s]+)\)=[ \t]*$")
_NOT_SHOWN = re.compile(r"^[ \t]*(?:%|\+\+\+)")  # MyST comments and block breaks
_OPTION = re.compile(r"^:(?P<key>[\w.-]+):(?:[ \t]+(?P<value>.*?))?[ \t]*$")
_YAML_OPTION = re.compile(r"^(?P<key>[\w.-]+):[ \t]*(?P<value>.*?)[ \t]*$")
_MATH_LABEL = re.compile(r"\$\$[ \t]*\((?P<label>[^()\s]+)\)[ \t]*$")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?P<text>.+?)[ \t#]*$")
_EXPLICIT = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_STASHED = re.compile("\u0002wzxhzdk:\\d+\u0003")  # Python-Markdown's htmlStash placeholder
_TARGET_TOKEN = "\u2063myst-target:{}\u2063"
_TARGET_TEXT = re.compile("^\u2063myst-target:(.+)\u2063$")


# ---------------------------------------------------------------- labels of the site


@dataclass(frozen=True)
class Label:
    """Something a ``{ref}``, ``{eq}`` or ``{numref}`` can point at."""

    entry: str  # the entry whose page holds it
    anchor: str  # the element's id
    text: str  # what a reference shows: "Exercise 1", "(2)", a heading's text


@dataclass
class PageProse:
    """Rendering context of one page's prose: the site's labels and documents, numbering so far."""

    entry: str = ""  # the entry being rendered
    doc: str = ""  # its source path, suffix removed, "/"-separated ("demos/basics/plot")
    root: str = ""  # from the page to the site's root: "../", "../../"
    labels: dict[str, Label] = field(default_factory=dict)  # the whole site's
    docs: dict[str, tuple[str, str]] = field(default_factory=dict)  # doc path -> (entry, title)
    publish_image: Callable[[str], str | None] | None = None  # a local image -> its URL, or None
    counters: dict[str, int] = field(default_factory=dict)

    def number(self, kind: str) -> int:
        """The next number of ``kind`` ("equation", "exercise", "theorem", ...) on this page."""
        self.counters[kind] = self.counters.get(kind, 0) + 1
        return self.counters[kind]

    def href(self, label: Label) -> str:
        """The URL of ``label`` from this page."""
        if label.entry == self.entry:
            return f"#{label.anchor}"
        return f"{self.root}{label.entry}/index.html#{label.anchor}"


# ---------------------------------------------------------------- the block scanner


@dataclass
class _Directive:
    name: str
    args: str
    options: dict[str, str]
    body: list[str]
    indent: str


@dataclass
class _Fence:
    language: str
    body: list[str]
    indent: str


@dataclass
class _Math:
    tex: str
    label: str
    indent: str


@dataclass
class _Target:
    label: str
    heading: str  # the text of the heading right after it, "" when none
    indent: str


_Segment = "str | _Directive | _Fence | _Math | _Target"


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's ``:key: value`` lines or ``---`` YAML block, and the content after them."""
    options: dict[str, str] = {}
    if body and body[0].strip() == "---":
        for end in range(1, len(body)):
            if body[end].strip() == "---":
                for line in body[1:end]:
                    match = _YAML_OPTION.match(line.strip())
                    if match:
                        options[match.group("key")] = match.group("value").strip("'\"")
                return options, body[end + 1:]
    i = 0
    while i < len(body):
        match = _OPTION.match(body[i].strip())
        if not match:
            break
        options[match.group("key")] = match.group("value") or ""
        i += 1
    return options, body[i:]


def _dedent(lines: list[str], indent: str) -> list[str]:
    return [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines]


def _scan(lines: list[str]) -> Iterator[object]:
    """The segments of Markdown text: plain lines, fences, directives, display math, targets."""
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence and (fence.group("fence")[0] != "`" or "`" not in fence.group("info")):
            indent, mark, info = fence.group("indent"), fence.group("fence"), fence.group("info").strip()
            end = i + 1
            while end < len(lines) and not _closes(lines[end], mark):
                end += 1
            body = _dedent(lines[i + 1:end], indent)
            directive = _DIRECTIVE.match(info)
            if directive:
                options, content = _options(body)
                yield _Directive(directive.group("name").lower(), directive.group("args") or "",
                                 options, content, indent)
            elif mark[0] == ":":
                yield from lines[i:end + 1]  # a colon fence without a directive: text
            else:
                yield _Fence(info.split()[0] if info else "", body, indent)
            i = end + 1
            continue
        stripped = line.strip()
        target = _TARGET.match(line)
        if target:
            following = next((x for x in lines[i + 1:] if x.strip()), "")
            heading = _HEADING.match(following)
            yield _Target(target.group("label"), heading.group("text") if heading else "",
                          line[: len(line) - len(line.lstrip())])
        elif stripped.startswith("$$"):
            end, rest = i, stripped[2:]
            collected = []
            while "$$" not in rest and end + 1 < len(lines):
                collected.append(rest)
                end += 1
                rest = lines[end].strip()
            if "$$" not in rest:  # never closed: text, as MyST leaves it
                yield line
                i += 1
                continue
            collected.append(rest[: rest.index("$$")])
            label = _MATH_LABEL.search(rest)
            yield _Math("\n".join(collected).strip(), label.group("label") if label else "",
                        line[: len(line) - len(line.lstrip())])
            i = end
        elif not _NOT_SHOWN.match(line):
            yield line
        i += 1


def _gathered(segments: list[object]) -> Iterator[object]:
    """``{solution-start}`` ... ``{solution-end}`` (and exercise's) within one text: one directive."""
    i = 0
    while i < len(segments):
        seg = segments[i]
        if isinstance(seg, _Directive) and seg.name.endswith("-start"):
            base = seg.name.removesuffix("-start")
            end = next((j for j in range(i + 1, len(segments))
                        if isinstance(segments[j], _Directive) and segments[j].name == f"{base}-end"), None)
            if end is not None:
                yield _Directive(base, seg.args, seg.options, _unscanned(segments[i + 1:end]), seg.indent)
                i = end + 1
                continue
        yield seg
        i += 1


def _unscanned(segments: list[object]) -> list[str]:
    """Segments back to lines (a gated directive's body is scanned again when rendered)."""
    out: list[str] = []
    for seg in segments:
        if isinstance(seg, str):
            out.append(seg)
        elif isinstance(seg, _Directive):
            mark = "`" * (4 + _depth(seg.body))
            out += [f"{mark}{{{seg.name}}} {seg.args}".rstrip(),
                    *(f":{k}: {v}" for k, v in seg.options.items()), *seg.body, mark]
        elif isinstance(seg, _Fence):
            mark = "`" * (4 + _depth(seg.body))
            out += [f"{mark}{seg.language}", *seg.body, mark]
        elif isinstance(seg, _Math):
            out += ["$$", seg.tex, f"$$ ({seg.label})" if seg.label else "$$"]
        elif isinstance(seg, _Target):
            out.append(f"({seg.label})=")
    return out


def _depth(body: list[str]) -> int:
    return max((len(m.group("fence")) for line in body if (m := _FENCE.match(line))), default=0)


def segments(text: str) -> list[object]:
    """``text`` scanned, gated directives gathered."""
    return list(_gathered(list(_scan(text.split("\n")))))


# ---------------------------------------------------------------- numbering, shared by both passes


def _title_suffix(args: str) -> str:
    return f" ({args})" if args else ""


def _numbered(d: _Directive, page: PageProse) -> tuple[str, str]:
    """The box title ("Exercise 2 (Limits)") and the label text ("Exercise 2") of a numbered directive."""
    kind = d.name.removeprefix("prf:")
    word = kind.capitalize()
    if "nonumber" in d.options:
        return word + _title_suffix(d.args), word
    number = page.number(kind)
    return f"{word} {number}{_title_suffix(d.args)}", f"{word} {number}"


def _is_numbered(name: str) -> bool:
    return name == "exercise" or (name.startswith("prf:") and name.removeprefix("prf:") in PROOF_KINDS)


def collect_labels(entry: str, texts: list[str]) -> dict[str, Label]:
    """The labels one page's Markdown prose defines, numbered as rendering numbers them."""
    page, found = PageProse(entry=entry), {}

    def walk(segs: list[object]) -> None:
        for seg in segs:
            if isinstance(seg, _Target):
                found[seg.label] = Label(entry, seg.label, seg.heading or seg.label)
            elif isinstance(seg, _Math) and seg.label:
                found[seg.label] = Label(entry, seg.label, f"({page.number('equation')})")
            elif isinstance(seg, _Directive):
                label = seg.options.get("label") or seg.options.get("name") or ""
                if _is_numbered(seg.name):
                    _title, text = _numbered(seg, page)
                elif seg.name == "math" and label:
                    text = f"({page.number('equation')})"
                elif seg.name == "figure":
                    text = f"Fig. {page.number('figure')}"
                else:
                    text = seg.args or label
                if label:
                    found[label] = Label(entry, label, text)
                if seg.name not in VANISHING and not seg.name in CODE_DIRECTIVES and seg.name != "math":
                    walk(segments("\n".join(seg.body)))

    for text in texts:
        walk(segments(text))
    return found


# ---------------------------------------------------------------- rendering helpers


@functools.lru_cache(maxsize=1)
def _macros() -> object:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, auto_reload=True)
    return env.get_template("_prose_myst.html").module


def math_html(tex: str, display: bool) -> str:
    """``tex`` as MathML, with docutils' converter (what reST's math gives); the TeX as code when it cannot."""
    from docutils.utils.math import latex2mathml, unichar2tex

    code = tex.translate(unichar2tex.uni2tex_table)
    try:  # as docutils' HTML writer calls it for math_output "MathML"
        return latex2mathml.tex2mathml(code, inline=not display)
    except Exception:  # noqa: BLE001 (the converter raises SyntaxError and worse on odd TeX)
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
            if isinstance(seg, _Target):
                self.ext.targets.append(seg.label)
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
            _InlineMath(r"(?<![\\$\w])\$(?=[^\s$])(?P<tex>(?:\\.|[^$\\])+?)(?<=\S)\$(?![\d$])", md, False),
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
        if isinstance(seg, _Fence):
            return _highlighted("\n".join(seg.body), seg.language)
        if isinstance(seg, _Math):
            number = str(self.page.number("equation")) if seg.label else ""
            return macros.math_block(Markup(math_html(seg.tex, True)), number, seg.label)
        assert isinstance(seg, _Directive)
        return self.directive_html(seg, macros)

    def directive_html(self, d: _Directive, macros: object) -> str:
        name, body, label = d.name, "\n".join(d.body), d.options.get("label") or d.options.get("name") or ""
        if name in ADMONITIONS:
            # Admonitions take no argument: text on the opening line is their first line.
            content = f"{d.args}\n\n{body}" if d.args else body
            return macros.admonition(name, ADMONITIONS[name], self.nested(content), label)
        if name == "admonition":
            css = "admonition-" + re.sub(r"[^a-z0-9]+", "-", d.args.lower()).strip("-")
            return macros.admonition(css, self.inline(d.args), self.nested(body), label)
        if _is_numbered(name):
            title, _text = _numbered(d, self.page)
            return macros.box(name.replace(":", "-"), self.inline(title), self.nested(body), label)
        if name == "prf:proof":
            return macros.box("prf-proof", "Proof.", self.nested(body), label)
        if name == "solution":
            target = self.page.labels.get(d.args.strip())
            title = f"Solution to {target.text}" if target else "Solution"
            return macros.solution(title, self.nested(body), label)
        if name in ("solution-start", "exercise-start"):  # its end is in a later cell
            if name == "exercise-start":
                title, _text = _numbered(_Directive("exercise", d.args, d.options, [], ""), self.page)
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
        if name in VANISHING or name.endswith("-end"):
            return ""
        # Layout directives and those unknown here: their content, their argument as a title.
        title = self.inline(d.args) if d.args and name in TITLED_CONTAINERS or ":" not in name and d.args else ""
        return macros.container(f"myst-{re.sub(r'[^a-z0-9-]', '-', name)}", title, self.nested(body))

    def figure_html(self, d: _Directive, body: str, label: str, macros: object) -> str:
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
