"""MyST Markdown's block structure, read without rendering: directives, fences, math, targets.

Shared by the two passes over a site's Markdown prose: collect_labels (what every page
defines, so ``{ref}`` resolves across the site) and prose_myst's rendering, which number
exercises, proofs, equations and figures the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from site_builder.site.prose_links import ProseLinks

PROOF_KINDS = ("theorem", "lemma", "definition", "example", "corollary", "proposition", "conjecture",
               "remark", "axiom", "criterion", "algorithm", "observation", "property", "assumption",
               "notation")
CODE_DIRECTIVES = ("code-block", "code", "sourcecode", "code-cell")
# Directives with nothing to show outside Sphinx (or that would read files): they vanish.
VANISHING = ("raw", "toctree", "tableofcontents", "contents", "bibliography", "include",
             "literalinclude", "glue:figure", "glue:math", "glue", "index", "only", "meta",
             "jupyter-execute", "embed", "tags", "footbibliography", "autosummary", "currentmodule")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
# A line's text up to its last non-blank, matched possessively: a lazy ".*?" before "[ \t]*$"
# tries every length against every blank run (quadratic in a long run followed by more text).
_TEXT = r"[^ \t\n](?:[ \t]*+[^ \t\n])*+"
_DIRECTIVE = re.compile(rf"^\{{(?P<name>[^{{}}\s]+)\}}(?:[ \t]+(?P<args>{_TEXT}))?[ \t]*$")
_TARGET = re.compile(r"^[ \t]*\((?P<label>[^()\s]+)\)=[ \t]*$")
_NOT_SHOWN = re.compile(r"^[ \t]*(?:%|\+\+\+)")  # MyST comments and block breaks
_OPTION = re.compile(rf"^:(?P<key>[\w.-]+):(?:[ \t]+(?P<value>{_TEXT}))?[ \t]*$")
_YAML_OPTION = re.compile(rf"^(?P<key>[\w.-]+):[ \t]*(?P<value>(?:{_TEXT})?)[ \t]*$")
_MATH_LABEL = re.compile(r"\$\$[ \t]*\((?P<label>[^()\s]+)\)[ \t]*$")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?P<text>[^\n](?:[ \t#]*+[^ \t#\n])*+)[ \t#]*$")


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
    links: ProseLinks | None = None  # where API roles, inline code and example labels lead

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


@dataclass
class Target:
    label: str
    heading: str  # the text of the heading right after it, "" when none
    indent: str




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
                                 options, content, indent)
            elif mark[0] == ":":
                yield from lines[i:end + 1]  # a colon fence without a directive: text
            else:
                yield Fence(info.split()[0] if info else "", body, indent)
            i = end + 1
            continue
        stripped = line.strip()
        target = _TARGET.match(line)
        if target:
            after = i + 1  # the next line that is not blank (not a copy of the rest of the page: linear)
            while after < len(lines) and not lines[after].strip():
                after += 1
            following = lines[after] if after < len(lines) else ""
            heading = _HEADING.match(following)
            yield Target(target.group("label"), heading.group("text") if heading else "",
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
            yield Math("\n".join(collected).strip(), label.group("label") if label else "",
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
        if isinstance(seg, Directive) and seg.name.endswith("-start"):
            base = seg.name.removesuffix("-start")
            end = next((j for j in range(i + 1, len(segments))
                        if isinstance(segments[j], Directive) and segments[j].name == f"{base}-end"), None)
            if end is not None:
                yield Directive(base, seg.args, seg.options, _unscanned(segments[i + 1:end]), seg.indent)
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


def collect_labels(entry: str, texts: list[str]) -> dict[str, Label]:
    """The labels one page's Markdown prose defines, numbered as rendering numbers them."""
    page, found = PageProse(entry=entry), {}

    def walk(segs: list[object]) -> None:
        for seg in segs:
            if isinstance(seg, Target):
                found[seg.label] = Label(entry, seg.label, seg.heading or seg.label)
            elif isinstance(seg, Math) and seg.label:
                found[seg.label] = Label(entry, seg.label, f"({page.number('equation')})")
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
                    found[label] = Label(entry, label, text)
                if seg.name not in VANISHING and not seg.name in CODE_DIRECTIVES and seg.name != "math":
                    walk(segments("\n".join(seg.body)))

    for text in texts:
        walk(segments(text))
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
