"""Markdown prose's syntax: one markdown-it parser for CommonMark, GitHub's extensions and MyST.

What Jupyter shows (CommonMark with GitHub's tables, strikethrough, autolinks and task lists)
and what MyST adds (roles, directives, ``(label)=`` targets, ``%`` comments, ``+++`` breaks,
``$``/``$$`` and amsmath math, colon fences, definition lists, footnotes, front matter,
``{#id .class}`` attributes) and Pandoc's citations (source.syntax.citations), read by
markdown-it-py and mdit-py-plugins, the parser MyST-Parser is built on. Parsing only: the site stage renders the tokens (site/prose/markdown/).

Depth is bounded: markdown-it stops nesting blocks (quotes in lists in quotes ...) and inline
markup at ``MAX_NESTING`` levels (the rest of that block is dropped, as markdown-it does), and
the site stage parses a directive's body at most ``MAX_DIRECTIVE_DEPTH`` directives deep.
markdown-it is imported on the first parse: building a site of scripts never loads it.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from site_builder.source.syntax.pandoc_blocks import pandoc_attributes, pandoc_blocks_plugin
from site_builder.source.syntax.yaml_guard import load_plain_yaml

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

MAX_NESTING = 20  # markdown-it's maxNesting: block and inline nesting levels within one text
MAX_DIRECTIVE_DEPTH = 8  # directives inside directives (each body is parsed on its own)
# A line's text up to its last non-blank, matched possessively: a lazy ".*?" before "[ \t]*$"
# tries every length against every blank run (quadratic in a long run followed by more text).
_TEXT = r"[^ \t\n](?:[ \t]*+[^ \t\n])*+"
_DIRECTIVE_INFO = re.compile(rf"^\{{(?P<name>[^{{}}\s]+)\}}(?:[ \t]+(?P<argument>{_TEXT}))?[ \t]*$")
_OPTION_LINE = re.compile(rf"^:(?P<key>[\w.-]+):(?:[ \t]+(?P<value>{_TEXT}))?[ \t]*$")
# The title ends at a non-blank: a lazy title before "\s*<" would try every length against a blank run.
_EXPLICIT_TITLE = re.compile(r"^(?P<title>.*?\S)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):")
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]+")  # what browsers skip in a URL's scheme
LINK_SCHEMES = ("http", "https", "mailto")


def valid_link(url: str) -> bool:
    """A link or image leads to http(s), mailto or a relative URL (``java&#09;script:`` is none,
    even percent-encoded as markdown-it has it by now)."""
    from urllib.parse import unquote

    scheme = _SCHEME.match(_IGNORED_IN_URL.sub("", unquote(url)).lower())
    return scheme is None or scheme.group(1) in LINK_SCHEMES


@functools.lru_cache(maxsize=4)
def markdown_parser(typography: bool = False) -> MarkdownIt:
    """The parser (one per ``typography``: en and em dashes, smart quotes, as Jupyter Book shows them)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.amsmath import amsmath_plugin
    from mdit_py_plugins.attrs import attrs_block_plugin, attrs_plugin
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.deflist import deflist_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin
    from mdit_py_plugins.gfm_autolink import gfm_autolink_plugin
    from mdit_py_plugins.myst_blocks import myst_block_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    from site_builder.source.syntax.citations import pandoc_citation_plugin
    from site_builder.source.quarto.shortcodes import shortcode_plugin

    # "html": raw HTML is read as HTML, so that the renderer can show it as text (prose is
    # data) and drop the comments (Jupyter hides them too).
    md = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING, "typographer": typography, "html": True})
    # Every link is parsed as a link (its text shows as text, not as "[a](...)"); the renderer
    # drops the URLs valid_link refuses, and the sanitiser checks again.
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    md.enable(["table", "strikethrough"])  # GitHub's tables and ~~strikethrough~~
    md.options["tasklists"] = True  # - [x] done: markdown-it >= 4.1 marks the list item
    md.options["strikethrough_single_tilde"] = True  # ~struck~, as JupyterLab's marked reads it
    if typography:
        md.enable(["replacements", "smartquotes"])
    md.use(gfm_autolink_plugin)  # bare https://... and www. links, GitHub's rules
    md.use(front_matter_plugin).use(myst_block_plugin).use(myst_role_plugin)
    # MyST's rules ("$ x $" is math), but a "$" with a digit outside delimits nothing ("$5 and $10")
    md.use(dollarmath_plugin, allow_labels=True, allow_space=True, allow_digits=False, double_inline=True)
    # Footnotes: a reference whose definition is in another cell is still one, and a definition
    # no reference of its text uses is kept (a notebook's cells are one document).
    md.use(amsmath_plugin).use(colon_fence_plugin).use(deflist_plugin).use(footnote_plugin, always_match_refs=True)
    md.core.ruler.before("footnote_tail", "footnotes_kept", _keep_unreferenced_footnotes)
    md.use(attrs_plugin, spans=True).use(attrs_block_plugin)  # [text]{.class}: Pandoc's spans
    md.use(pandoc_citation_plugin)  # [@key], @key, @fig-x (Pandoc's and Quarto's)
    md.use(shortcode_plugin)  # Quarto's {{< name args >}}
    md.use(pandoc_blocks_plugin)  # Pandoc's grid tables, "$$ ... \n$$ {#eq-x}"
    md.inline.ruler.after("attr", "pandoc_image_attrs", _image_attributes)  # ![x](a.png){width=50%}
    # colon_fence reads every ":::" block (MyST's ":::{note}" and Pandoc's "::: name"): the
    # container plugin, which reads the same fences, would take them from it.
    return md


def _image_attributes(state: Any, silent: bool) -> bool:
    """``{...}`` after an image that the attrs plugin could not read (``width=50%``): its attributes."""
    src, pos = state.src, state.pos
    if state.pending or not state.tokens or state.tokens[-1].type != "image" or not src.startswith("{", pos):
        return False
    end = src.find("}", pos, pos + 500)
    found = pandoc_attributes(src[pos:end + 1]) if end > 0 and "\n" not in src[pos:end] else None
    if found is None:
        return False
    if not silent:
        image = state.tokens[-1]
        for key, value in found.items():
            image.attrSet(key, f"{image.attrGet(key)} {value}" if key == "class" and image.attrGet(key) else value)
    state.pos = end + 1
    return True


def _keep_unreferenced_footnotes(state: Any) -> None:
    """Footnotes of one text: a definition no reference uses is listed still (footnote_tail would
    drop it); a reference defined in no other way than elsewhere lists nothing here."""
    data = state.env.get("footnotes")
    if not data:
        return
    defined = {t.meta.get("label") for t in state.tokens if t.type == "footnote_reference_open"}
    kept = [note for note in data["list"].values() if "tokens" in note or note.get("label") in defined]
    kept += [{"label": key[1:], "count": 0} for key, index in data["refs"].items() if index < 0]
    number = {note.get("label"): i for i, note in enumerate(kept)}
    data["list"] = dict(enumerate(kept))
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "footnote_ref":  # renumbered; one defined elsewhere shows as text (renderer)
                child.meta["id"] = number.get(child.meta.get("label"), -1)


def parse(text: str, typography: bool = False, env: dict[str, Any] | None = None) -> list[Token]:
    """The block tokens of ``text`` (inline tokens are each ``inline`` token's children), the
    caller's own to change; ``env`` gets the parse's references and footnotes."""
    if env:  # a parse reading what env holds already
        return _parse(text, typography, env)
    # A text is read by several passes of a build (its page's head, labels, expressions, the
    # render): each gets a copy of its first parse, which costs a fraction of parsing again.
    tokens, found = _first_parse(text, typography)
    if env is not None:
        env.update(copy.deepcopy(found))
    return _copied(tokens)


@functools.lru_cache(maxsize=256)
def _first_parse(text: str, typography: bool) -> tuple[list[Token], dict[str, Any]]:
    env: dict[str, Any] = {}
    return _parse(text, typography, env), env


def _copied(tokens: list[Token]) -> list[Token]:
    from markdown_it.token import Token

    return [Token(t.type, t.tag, t.nesting, dict(t.attrs), None if t.map is None else list(t.map), t.level,
                  None if t.children is None else _copied(t.children), t.content, t.markup, t.info,
                  copy.deepcopy(t.meta) if t.meta else {}, t.block, t.hidden) for t in tokens]


def _parse(text: str, typography: bool, env: dict[str, Any]) -> list[Token]:
    tokens = markdown_parser(typography).parse(text, env)
    if tokens and tokens[0].type == "front_matter" and front_matter(tokens[0]) is None:
        # "---" lines around no YAML mapping are thematic breaks, as CommonMark reads them
        # (a blank line first: no front matter), the lines numbered as in ``text``
        env.clear()
        tokens = markdown_parser(typography).parse("\n" + text, env)
        for token in tokens:
            token.map = [token.map[0] - 1, token.map[1] - 1] if token.map else None
    return tokens


@functools.lru_cache(maxsize=1)
def _typographer() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("zero", {"typographer": True}).enable(["replacements", "smartquotes"])


def typographic(text: str) -> str:
    """Plain ``text`` (a title) with the typographer's dashes and quotes, as its prose shows them."""
    tokens = _typographer().parseInline(text, {})
    return "".join(child.content for child in tokens[0].children or ()) if tokens else text


# ---------------------------------------------------------------- directives


@dataclass
class DirectiveSyntax:
    """A directive as written: ```` ```{name} argument ````, its options, its body."""

    name: str  # lower case: "note", "prf:theorem", "code-cell"
    argument: str
    options: dict[str, str]
    body: str
    body_line: int  # lines from the opening fence to the body's first line
    colon: bool = False  # a ":::" fence
    extra: dict[str, Any] = field(default_factory=dict)


def directive_of(token: Token) -> DirectiveSyntax | None:
    """The directive a ``fence`` or ``colon_fence`` token holds, None for a plain code fence."""
    if token.type not in ("fence", "colon_fence"):
        return None
    info = token.info.strip()
    match = _DIRECTIVE_INFO.match(info)
    colon = token.type == "colon_fence"
    if match is None or match.group("name")[0] in ".#=":
        # a Pandoc div ("::: name", "::: {.class #id}"): a container of Markdown
        return DirectiveSyntax("div", info.strip("{} "), {}, token.content, 1, True) if colon else None
    options, body, skipped = directive_options(token.content)
    return DirectiveSyntax(match.group("name").lower(), (match.group("argument") or "").strip(), options,
                           body, 1 + skipped, colon)


def directive_options(content: str) -> tuple[dict[str, str], str, int]:
    """A directive body's ``:key: value`` lines or ``---`` YAML block, the rest of the body, and
    the number of lines the options took."""
    lines = content.split("\n")
    options: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() == "---":
                options = _yaml_options("\n".join(lines[1:end]))
                return options, "\n".join(lines[end + 1:]), end + 1
    taken = 0
    for line in lines:
        match = _OPTION_LINE.match(line.strip())
        if match is None:
            break
        value = match.group("value") or ""
        # a quoted value is a YAML string, as MyST reads these lines (:name: "fig-boot")
        quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "'\""
        options[match.group("key")] = value[1:-1] if quoted else value
        taken += 1
    if taken and taken < len(lines) and not lines[taken].strip():
        taken += 1  # the blank line after the options
    return options, "\n".join(lines[taken:]), taken


def _yaml_options(text: str) -> dict[str, str]:
    """A YAML options block as strings (a malformed one: its ``key: value`` lines as written)."""
    data = load_plain_yaml(text)
    if isinstance(data, dict):
        return {str(k): "" if v is None else _yaml_text(v) for k, v in data.items()}
    found = {}
    for line in text.split("\n"):
        key, colon, value = line.partition(":")
        if colon and key.strip() and not key.startswith(" "):
            found[key.strip()] = value.strip().strip("'\"")
    return found


def _yaml_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def front_matter(token: Token) -> dict[str, Any] | None:
    """The mapping a ``front_matter`` token holds, None when it is no YAML mapping (then the
    ``---`` lines were thematic breaks, as CommonMark reads them) or uses anchors or aliases."""
    data = load_plain_yaml(token.content)
    return data if isinstance(data, dict) else None


# ---------------------------------------------------------------- text of inline markup


def explicit_title(content: str) -> tuple[str, str]:
    """A role's ``title <target>`` split into (title, target); ("", content) without a title."""
    match = _EXPLICIT_TITLE.match(content.strip())
    if match is None:
        return "", content.strip()
    return match.group("title").strip(), match.group("target").strip()


def role_text(name: str, content: str) -> str:
    """What a role shows as plain text: its explicit title, else its content (``{index}`Matplotlib
    <single: Matplotlib>``` reads "Matplotlib")."""
    title, target = explicit_title(content)
    return title or target


def inline_text(tokens: Iterable[Token] | None) -> str:
    """Inline tokens as the plain text a reader sees: markup, links and raw HTML left out."""
    parts: list[str] = []
    for token in tokens or ():
        if token.type in ("text", "code_inline", "math_inline", "math_inline_double"):
            parts.append(token.content)
        elif token.type == "myst_role":
            parts.append(role_text(token.meta.get("name", ""), token.content))
        elif token.type == "pandoc_cite":
            parts.append(token.content)
        elif token.type == "image":
            parts.append(inline_text(token.children))
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split())
