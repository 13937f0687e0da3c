"""MyST Markdown's block structure, read without rendering: directives, fences, math, targets.

Shared by the two passes over a site's Markdown prose: collect_labels (what every page
defines, so ``{ref}`` resolves across the site) and prose_myst's rendering, which number
exercises, proofs, equations and figures the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from site_builder.site.prose.label_ids import PageIds, is_id_label
from site_builder.site.prose.links import ProseLinks

PROOF_KINDS = ("theorem", "lemma", "definition", "example", "corollary", "proposition", "conjecture",
               "remark", "axiom", "criterion", "algorithm", "observation", "property", "assumption",
               "notation")
CODE_DIRECTIVES = ("code-block", "code", "sourcecode", "code-cell")
# Directives with nothing to show outside Sphinx (or that would read files): they vanish.
VANISHING = ("raw", "toctree", "tableofcontents", "contents", "bibliography", "include",
             "literalinclude", "glue:figure", "glue:math", "glue", "index", "only", "meta",
             "jupyter-execute", "embed", "tags", "footbibliography", "autosummary", "currentmodule")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[^{}\s]+)\}(?:[ \t]+(?P<args>.*?))?[ \t]*$")
_TARGET = re.compile(r"^[ \t]*\((?P<label>.+)\)=[ \t]*$")  # any text, as MyST reads it (checked as an id later)
_NOT_SHOWN = re.compile(r"^[ \t]*(?:%|\+\+\+)")  # MyST comments and block breaks
_OPTION = re.compile(r"^:(?P<key>[\w.-]+):(?:[ \t]+(?P<value>.*?))?[ \t]*$")
_YAML_OPTION = re.compile(r"^(?P<key>[\w.-]+):[ \t]*(?P<value>.*?)[ \t]*$")
_MATH_LABEL = re.compile(r"\$\$[ \t]*\((?P<label>[^()\s]+)\)[ \t]*$")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?P<text>.+?)[ \t#]*$")


# ---------------------------------------------------------------- labels of the site


@dataclass(frozen=True)
class Label:
    """Something a ``{ref}``, ``{eq}`` or ``{numref}`` can point at."""

    entry: str  # the entry whose page holds it
    anchor: str  # the element's id (label_ids: never one of the page's own)
    text: str  # what a reference shows: "Exercise 1", "(2)", a heading's text
    where: str = ""  # where it is defined, for messages: "demos/x.py:12"


@dataclass
class PageProse:
    """Rendering context of one page's prose: the site's labels and documents, numbering so far."""

    entry: str = ""  # the entry being rendered
    doc: str = ""  # its source path, suffix removed, "/"-separated ("demos/basics/plot")
    root: str = ""  # from the page to the site's root: "../", "../../"
    labels: dict[str, Label] = field(default_factory=dict)  # the whole site's (the first of each name)
    own: dict[str, Label] = field(default_factory=dict)  # this page's (prose_pages.site_labels)
    docs: dict[str, tuple[str, str]] = field(default_factory=dict)  # doc path -> (entry, title)
    publish_image: Callable[[str], str | None] | None = None  # a local image -> its URL, or None
    counters: dict[str, int] = field(default_factory=dict)
    links: ProseLinks | None = None  # where API roles, inline code and example labels lead
    ids: PageIds = field(default_factory=PageIds)  # the ids labels not in ``own`` get
    anchored: set[str] = field(default_factory=set)  # the labels that gave an element its id
    # the page's citations, cross-references and terms (references.page.PageReferences), None
    # for a text rendered on its own
    refs: Any = None

    def find(self, name: str) -> Label | None:
        """The label a reference names: this page's own first, else the site's."""
        return self.own.get(name) or self.labels.get(name)

    def anchor(self, name: str) -> str:
        """The id of the element that defines the label ``name``; "" for a second definition
        on the page or a label that cannot be an id (the page's warnings say so)."""
        if name in self.anchored or not is_id_label(name):
            return ""
        self.anchored.add(name)
        label = self.own.get(name)
        if label is None:  # not collected before rendering (a text rendered on its own)
            found = self.labels.get(name)
            if found is not None and found.entry == self.entry and found.anchor not in self.ids.taken:
                self.ids.taken.add(found.anchor)
                return found.anchor
            return self.ids.allocate(name)[0]
        return label.anchor

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
class Directive:
    name: str
    args: str
    options: dict[str, str]
    body: list[str]
    indent: str
    line: int = 0  # where it opens in the scanned text (0-based), for messages
    body_line: int = 0  # where its body (after the options) starts


@dataclass
class Fence:
    language: str
    body: list[str]
    indent: str


@dataclass
class Math:
    tex: str
    label: str
    indent: str
    line: int = 0


@dataclass
class Target:
    label: str
    heading: str  # the text of the heading right after it, "" when none
    indent: str
    line: int = 0




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
        fence = FENCE.match(line)
        if fence and (fence.group("fence")[0] != "`" or "`" not in fence.group("info")):
            indent, mark, info = fence.group("indent"), fence.group("fence"), fence.group("info").strip()
            end = i + 1
            while end < len(lines) and not _closes(lines[end], mark):
                end += 1
            body = _dedent(lines[i + 1:end], indent)
            directive = _DIRECTIVE.match(info)
            if directive:
                options, content = _options(body)
                yield Directive(directive.group("name").lower(), directive.group("args") or "",
                                options, content, indent, i, i + 1 + len(body) - len(content))
            elif mark[0] == ":":
                yield from lines[i:end + 1]  # a colon fence without a directive: text
            else:
                yield Fence(info.split()[0] if info else "", body, indent)
            i = end + 1
            continue
        stripped = line.strip()
        target = _TARGET.match(line)
        if target:
            following = next((x for x in lines[i + 1:] if x.strip()), "")
            heading = _HEADING.match(following)
            yield Target(target.group("label").strip(), heading.group("text") if heading else "",
                         line[: len(line) - len(line.lstrip())], i)
        elif stripped.startswith("$$"):
            start, end, rest = i, i, stripped[2:]
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
            yield Math("\n".join(collected).strip(), label.group("label") if label else "",
                       line[: len(line) - len(line.lstrip())], start)
            i = end
        elif not _NOT_SHOWN.match(line):
            yield line
        i += 1


def _gathered(segments: list[object]) -> Iterator[object]:
    """``{solution-start}`` ... ``{solution-end}`` (and exercise's) within one text: one directive."""
    i = 0
    while i < len(segments):
        seg = segments[i]
        if isinstance(seg, Directive) and seg.name.endswith("-start"):
            base = seg.name.removesuffix("-start")
            end = next((j for j in range(i + 1, len(segments))
                        if isinstance(segments[j], Directive) and segments[j].name == f"{base}-end"), None)
            if end is not None:
                yield Directive(base, seg.args, seg.options, _unscanned(segments[i + 1:end]), seg.indent,
                                seg.line, seg.line + 1)
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
        elif isinstance(seg, Directive):
            mark = "`" * (4 + _depth(seg.body))
            out += [f"{mark}{{{seg.name}}} {seg.args}".rstrip(),
                    *(f":{k}: {v}" for k, v in seg.options.items()), *seg.body, mark]
        elif isinstance(seg, Fence):
            mark = "`" * (4 + _depth(seg.body))
            out += [f"{mark}{seg.language}", *seg.body, mark]
        elif isinstance(seg, Math):
            out += ["$$", seg.tex, f"$$ ({seg.label})" if seg.label else "$$"]
        elif isinstance(seg, Target):
            out.append(f"({seg.label})=")
    return out


def _depth(body: list[str]) -> int:
    return max((len(m.group("fence")) for line in body if (m := FENCE.match(line))), default=0)


def segments(text: str) -> list[object]:
    """``text`` scanned, gated directives gathered."""
    return list(_gathered(list(_scan(text.split("\n")))))


# ---------------------------------------------------------------- numbering, shared by both passes


def _title_suffix(args: str) -> str:
    return f" ({args})" if args else ""


def numbered(d: Directive, page: PageProse) -> tuple[str, str]:
    """The box title ("Exercise 2 (Limits)") and the label text ("Exercise 2") of a numbered directive."""
    kind = d.name.removeprefix("prf:")
    word = kind.capitalize()
    if "nonumber" in d.options:
        return word + _title_suffix(d.args), word
    number = page.number(kind)
    return f"{word} {number}{_title_suffix(d.args)}", f"{word} {number}"


def is_numbered(name: str) -> bool:
    return name == "exercise" or (name.startswith("prf:") and name.removeprefix("prf:") in PROOF_KINDS)


@dataclass(frozen=True)
class Definition:
    """A label defined in prose: its name, what a reference to it shows, and where it is."""

    name: str
    text: str
    source: int  # which of the texts holds it
    line: int  # its line in that text (0-based)


def label_definitions(texts: list[str]) -> list[Definition]:
    """The labels Markdown texts (one page's, in page order) define, in order, numbered as
    rendering numbers them; a name may come twice."""
    page, found = PageProse(), []

    def walk(segs: list[object], source: int, offset: int) -> None:
        for seg in segs:
            if isinstance(seg, Target):
                found.append(Definition(seg.label, seg.heading or seg.label, source, offset + seg.line))
            elif isinstance(seg, Math) and seg.label:
                found.append(Definition(seg.label, f"({page.number('equation')})", source, offset + seg.line))
            elif isinstance(seg, Directive):
                label = seg.options.get("label") or seg.options.get("name") or ""
                if is_numbered(seg.name) or seg.name == "exercise-start":  # (a start whose end is in a later cell)
                    _title, text = numbered(Directive("exercise", seg.args, seg.options, [], "")
                                            if seg.name == "exercise-start" else seg, page)
                elif seg.name == "math" and label:
                    text = f"({page.number('equation')})"
                elif seg.name == "figure":
                    text = f"Fig. {page.number('figure')}"
                else:
                    text = seg.args or label
                if label:
                    found.append(Definition(label, text, source, offset + seg.line))
                if seg.name not in VANISHING and not seg.name in CODE_DIRECTIVES and seg.name != "math":
                    walk(segments("\n".join(seg.body)), source, offset + seg.body_line)

    for source, text in enumerate(texts):
        walk(segments(text), source, 0)
    return found


def collect_labels(entry: str, texts: list[str]) -> dict[str, Label]:
    """The labels one page's Markdown prose defines (the first of each name that can be an
    id), with their ids; prose_pages.site_labels adds the page's blocks and says what is wrong."""
    ids, found = PageIds(), {}
    for d in label_definitions(texts):
        if d.name not in found and is_id_label(d.name):
            found[d.name] = Label(entry, ids.allocate(d.name)[0], d.text)
    return found



# ---------------------------------------------------------------- gates across cells

GATES = ("solution-start", "solution-end", "exercise-start", "exercise-end")


@dataclass(frozen=True)
class Gate:
    """A ``{solution-start}`` (or ``-end``, or exercise's) whose partner is in another cell."""

    opens: bool
    kind: str  # "solution" or "exercise"
    args: str
    options: dict[str, str]


def gate_split(text: str) -> list[str | Gate]:
    """``text`` cut at the gated directives whose partner is not in it (paired ones stay)."""
    lines = text.split("\n")
    found: list[tuple[int, int, Gate]] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match and (match.group("fence")[0] != "`" or "`" not in match.group("info")):
            mark, end = match.group("fence"), i + 1
            while end < len(lines) and not _closes(lines[end], mark):
                end += 1
            directive = _DIRECTIVE.match(match.group("info").strip())
            name = directive.group("name").lower() if directive else ""
            if name in GATES:
                options, _content = _options(_dedent(lines[i + 1:end], match.group("indent")))
                found.append((i, end, Gate(name.endswith("-start"), name.split("-")[0],
                                           (directive.group("args") or "").strip(), options)))
            i = end + 1
            continue
        i += 1
    unpaired, j = [], 0
    while j < len(found):
        gate = found[j][2]
        if gate.opens and j + 1 < len(found) and not found[j + 1][2].opens and found[j + 1][2].kind == gate.kind:
            j += 2  # start and end in this text: one directive (see _gathered)
            continue
        unpaired.append(found[j])
        j += 1
    parts: list[str | Gate] = []
    start = 0
    for first, last, gate in unpaired:
        if "\n".join(lines[start:first]).strip():
            parts.append("\n".join(lines[start:first]))
        parts.append(gate)
        start = last + 1
    if "\n".join(lines[start:]).strip():
        parts.append("\n".join(lines[start:]))
    return parts
