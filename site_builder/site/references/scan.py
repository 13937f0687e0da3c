"""What one page's prose refers to, read from its source text before anything renders.

The rebuild keys each page by what it shows of other pages and of the bibliography, and
"Referred to by" and the works-cited page list who refers to whom, so all of it is read
from every page's prose first, in every syntax: sphinxcontrib-bibtex's and Sphinx's roles
(MyST ``{cite:t}`k``` and reST ``:cite:t:`k```), Pandoc's ``[@k]``/``@k``, Markdown links
and glossary directives.  Code (fenced blocks, literal blocks, inline code) is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from site_builder.site.references.citations import is_cite_role
from site_builder.source.syntax.citations import KEY
from site_builder.source.syntax.markdown import MAX_DIRECTIVE_DEPTH, explicit_title
from site_builder.site.references.terms import GlossaryTerm, glossary_terms

_MYST_ROLE = re.compile(r"\{(?P<role>[\w:+.-]+)\}`(?P<content>[^`]+)`")
# a role's name holds one ":" at most (``cite:p``, ``py:func``): its parts cannot trade characters
_ROLE_NAME = r"(?:[A-Za-z0-9][-\w.+]*:)?[A-Za-z0-9][-\w.+]*"
_RST_ROLE = re.compile(rf"(?<![\w`]):(?P<role>{_ROLE_NAME}):`(?P<content>[^`]+)`")
_PANDOC = re.compile(rf"(?<![\w@\\])-?@{KEY}")
_MD_LINK = re.compile(r"\]\((?P<target>[^()\s]+)(?:\s+\"[^\"]*\")?\)")
_RST_LINK = re.compile(r"<(?P<target>[^<>\s`]+)>`__?")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>[^\n]*)$")
_BACKTICKS = re.compile(r"`+")
_GLOSSARY_FENCE = re.compile(r"^\{glossary\}")
_RST_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+(?P<name>[\w:.+-]+)::")
CODE_DIRECTIVES = frozenset({"code", "code-block", "sourcecode", "literalinclude", "math", "raw", "ipython",
                             "doctest", "testcode", "testoutput", "highlight"})
_RST_GLOSSARY = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+glossary::[ \t]*$")
LABEL_ROLES = frozenset({"ref", "numref", "eq", "prf:ref", "std:ref", "any", "std:numref"})
DOC_ROLES = frozenset({"doc", "std:doc"})
TERM_ROLES = frozenset({"term", "std:term"})


@dataclass
class PageScan:
    """What one page's prose cites and refers to (names as written; resolved by SiteReferences)."""

    cites: set[str] = field(default_factory=set)  # citation keys ([@x] and @x: possible keys)
    bare: set[str] = field(default_factory=set)  # keys of bare @x: citations only when a work has them
    labels: set[str] = field(default_factory=set)  # {ref}, {numref}, {eq}, [](#x), @fig-x ...
    docs: set[str] = field(default_factory=set)  # {doc} and :doc: targets
    links: set[str] = field(default_factory=set)  # Markdown and reST link targets
    terms: set[str] = field(default_factory=set)  # {term} and :term: targets
    glossary: list[GlossaryTerm] = field(default_factory=list)
    bibliography: bool = False  # a {bibliography} stands in it: citing nothing, it lists the site's works
    prose: str = ""  # the prose without its code, for mentions of terms


def _target(content: str) -> str:
    return explicit_title(content)[1]


def _without_code_spans(text: str) -> str:
    """``text`` with its inline code (a run of backticks to the next run as long) blanked."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    closing: dict[int, int] = {}  # a run's index -> the index of the next run as long
    after: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        if length in after:
            closing[i] = after[length]
        after[length] = i
    out, last, i = [], 0, 0
    while i < len(runs):
        if i in closing:
            out += [text[last:runs[i][0]], " "]
            last, i = runs[closing[i]][1], closing[i] + 1
        else:
            i += 1
    return "".join(out) + text[last:]


def _without_code(text: str, scan: PageScan, depth: int = 0) -> str:
    """``text`` without fenced code and literal blocks (a glossary fence is read into ``scan``);
    directives deeper than the page renders (MAX_DIRECTIVE_DEPTH) are kept as they are."""
    lines = text.split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            mark, info = fence.group("fence"), fence.group("info").strip()
            end = i + 1
            while end < len(lines) and not (lines[end].strip().startswith(mark) and set(lines[end].strip()) == {mark[0]}):
                end += 1
            body = "\n".join(lines[i + 1:end])
            scan.bibliography |= info.startswith("{bibliography}")
            if _GLOSSARY_FENCE.match(info):
                scan.glossary += glossary_terms(strip_options(body))
                kept.append(body)
            elif info.startswith("{") or mark[0] == ":":  # a directive's body is prose
                kept.append(_without_code(body, scan, depth + 1) if depth < MAX_DIRECTIVE_DEPTH else body)
            i = end + 1
            continue
        glossary = _RST_GLOSSARY.match(line)
        if glossary or line.rstrip().endswith("::"):
            indent = len(line) - len(line.lstrip())
            end = i + 1
            while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
                end += 1
            body = "\n".join(lines[i + 1:end])
            directive = _RST_DIRECTIVE.match(line)
            scan.bibliography |= bool(directive) and directive.group("name").lower() == "bibliography"
            if glossary:
                scan.glossary += glossary_terms(strip_options(body))
                kept.append(body)
            elif directive and directive.group("name").lower() not in CODE_DIRECTIVES:
                body = strip_options(body)  # a directive's body is prose
                kept.append(_without_code(body, scan, depth + 1) if depth < MAX_DIRECTIVE_DEPTH else body)
            kept.append("" if directive else line.rstrip().removesuffix("::"))
            i = end
            continue
        kept.append(line)
        i += 1
    return "\n".join(kept)


def strip_options(body: str) -> str:
    """A directive's body without its ``:option:`` lines or ``---`` YAML block."""
    lines = body.strip("\n").split("\n")
    if lines and lines[0].strip() == "---":
        end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), 0)
        lines = lines[end + 1:]
    while lines and re.match(r"^\s*:[\w.-]+:", lines[0]):
        lines = lines[1:]
    return "\n".join(lines)


def scan_prose(texts: list[str]) -> PageScan:
    """What the prose ``texts`` of one page (its introduction, its prose cells) refer to."""
    scan = PageScan()
    prose: list[str] = []
    for text in texts:
        if not text.strip():
            continue
        text = _without_code(text, scan)
        for pattern in (_MYST_ROLE, _RST_ROLE):
            for match in pattern.finditer(text):
                role, content = match.group("role").lower(), match.group("content")
                if is_cite_role(role):
                    scan.cites.update(k.strip() for k in content.split(",") if k.strip())
                elif role in LABEL_ROLES:
                    scan.labels.add(_target(content))
                elif role in DOC_ROLES:
                    scan.docs.add(_target(content))
                elif role in TERM_ROLES:
                    scan.terms.add(_target(content))
        plain = _without_code_spans(_MYST_ROLE.sub(" ", _RST_ROLE.sub(" ", text)))
        for match in _PANDOC.finditer(plain):
            key = match.group("braced") or match.group("key")
            start = match.start()
            in_brackets = plain.rfind("[", 0, start) > plain.rfind("]", 0, start)
            (scan.cites if in_brackets else scan.bare).add(key)
            scan.labels.add(key)
        for pattern in (_MD_LINK, _RST_LINK):
            for match in pattern.finditer(text):
                target = match.group("target")
                path, _, fragment = target.partition("#")
                if fragment:  # [](#label), [text](other.md#label)
                    scan.labels.add(fragment)
                if path:
                    scan.links.add(target)
                    if "/" not in path and "." not in path and not fragment:  # MyST's legacy [](label)
                        scan.labels.add(path)
        prose.append(plain)
    scan.prose = "\n".join(prose)
    return scan


def cited_in_order(text: str) -> list[str]:
    """The citation keys of one prose text in the order they appear (roles and Pandoc's ``@key``)."""
    found: list[tuple[int, str]] = []
    for pattern in (_MYST_ROLE, _RST_ROLE):
        for match in pattern.finditer(text):
            if is_cite_role(match.group("role")):
                found += [(match.start(), k.strip()) for k in match.group("content").split(",") if k.strip()]
    for match in _PANDOC.finditer(text):
        found.append((match.start(), match.group("braced") or match.group("key")))
    return [key for _, key in sorted(found)]
