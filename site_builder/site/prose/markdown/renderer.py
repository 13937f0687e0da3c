"""Resolved tokens -> HTML: markdown-it's HTML renderer with one method per token type.

CommonMark's own blocks and inlines render as markdown-it renders them; the methods below
are the site's rules (as MyST-NB's ``render_<mime>``): roles and directives call their
registered handler, math becomes MathML, ``(label)=`` an anchor, images of the entry's folder
are published with the page by prose.images' rule (others become links: nothing loads from
elsewhere), inline code
naming a documented object links to its documentation, task list items get their box, a
``#name`` link leads to the id its anchor got, raw HTML renders on a notebook's page
(``raw_html``) and shows as text elsewhere. The markup of each is a macro of
templates/_prose_myst.html. The HTML is sanitised by the caller.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import OptionsDict
from markupsafe import Markup

from site_builder.site.highlight import highlighted
from site_builder.site.prose.images import is_remote
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.prose.markdown.macros import macro
from site_builder.site.prose.mathml import math_html
from site_builder.site.prose.quoting import QUARTO_INLINE, quoted_html
from site_builder.site.prose.markdown.raw_html import raw_html
from site_builder.site.prose.markdown.registry import DirectiveCall, RoleCall, default_registry
from site_builder.site.prose.markdown.resolve import Where, parse_resolved, resolve
from site_builder.source.syntax.markdown import inline_text, markdown_parser, parse, valid_link

_Env = dict[str, Any]


class ProseOutput:
    """What a role's or directive's ``render`` works with (registry.Output): the page, the macros, nested prose."""

    def __init__(self, renderer: ProseRenderer, options: OptionsDict, env: _Env) -> None:
        self.renderer, self.options, self.env = renderer, options, env

    @property
    def page(self) -> PageContext:
        return self.env["page"]

    @staticmethod
    def macro(name: str, *args: Any, **kwargs: Any) -> Markup:
        """The HTML of macro ``name`` of templates/_prose_myst.html."""
        return macro(name, *args, **kwargs)

    def body(self, call: DirectiveCall) -> Markup:
        """The directive's body rendered (its text, escaped, when nested too deep to parse)."""
        if call.children is None:
            return macro("too_deep", call.body) if call.data.get("too_deep") else Markup("")
        env = {**self.env, **call.data.get("env", {})}
        return Markup(self.renderer.render(call.children, self.options, env))

    def tokens(self, tokens: Sequence[Token]) -> Markup:
        """Some of a directive's resolved tokens rendered (a list-table's cell)."""
        return Markup(self.renderer.render(tokens, self.options, self.env))

    def markdown(self, text: str, line: int = 0) -> Markup:
        """Other Markdown of the page (parsed and resolved now) as HTML."""
        tokens, env = parse_resolved(text, self.page, Where(line, 0, self.env.get("id_prefix", ""), 1))
        return Markup(self.renderer.render(tokens, self.options, {**self.env, **env}))

    def inline(self, text: str, line: int = 0) -> Markup:
        """One line of Markdown (a title) as inline HTML."""
        tokens = parse(text, self.page.typography)
        if len(tokens) == 3 and tokens[0].type == "paragraph_open":
            resolve(tokens, self.page, Where(line, 0, self.env.get("id_prefix", "")))
            return Markup(self.renderer.renderInline(tokens[1].children or [], self.options, self.env))
        return self.markdown(text, line)

    def warn(self, line: int, message: str) -> None:
        self.page.warn(line, message)


class ProseRenderer(RendererHTML):
    """markdown-it's HTML renderer with the site's rules (methods named after token types)."""

    def __init__(self, parser: Any = None) -> None:
        super().__init__(parser)
        self.plugin_rules = dict(markdown_parser().renderer.rules)  # footnotes and the like

    def render(self, tokens: Sequence[Token], options: OptionsDict, env: _Env) -> str:
        out: list[str] = []
        for i, token in enumerate(tokens):
            if token.type == "inline":
                out.append(self.renderInline(token.children or [], options, env))
            elif token.type in self.rules:
                out.append(self.rules[token.type](tokens, i, options, env))
            elif token.type in self.plugin_rules:
                out.append(self.plugin_rules[token.type](tokens, i, options, env))
            else:
                out.append(self.renderToken(tokens, i, options, env))
        return "".join(out)

    def renderInline(self, tokens: Sequence[Token], options: OptionsDict, env: _Env) -> str:  # noqa: N802
        out: list[str] = []
        for i, token in enumerate(tokens):
            rule = self.rules.get(token.type) or self.plugin_rules.get(token.type)
            out.append(rule(tokens, i, options, env) if rule else self.renderToken(tokens, i, options, env))
        return "".join(out)

    # -------------------------------------------------------------- roles and directives

    def myst_role(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        token = tokens[idx]
        return str(token.meta["handler"].render(token.meta["call"], ProseOutput(self, options, env)))

    pandoc_cite = myst_role  # Pandoc's [@key], @key (source.syntax.citations): a role of its own

    def fence(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        token = tokens[idx]
        if "call" in token.meta:
            return str(token.meta["handler"].render(token.meta["call"], ProseOutput(self, options, env)))
        language = token.info.strip().split(maxsplit=1)[0].strip("{}.") if token.info.strip() else ""
        if language.startswith("="):  # Pandoc's raw block: HTML as a notebook's raw HTML, other formats vanish
            return raw_html(token.content, env["page"], env) if language == "=html" and env["page"].notebook else ""
        return Markup(highlighted(token.content, language, plain=True))

    colon_fence = fence

    def myst_target(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        token = tokens[idx]
        return "" if token.meta.get("attached") else macro("target", token.meta["anchor"])

    def myst_line_comment(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        return ""  # "% comment": not shown

    def myst_block_break(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        return ""  # "+++": a cell break in the source, nothing on the page

    def front_matter(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        return ""  # the page's metadata (its title is read by the parse stage; see parse_resolved)

    # -------------------------------------------------------------- math

    def math_inline(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        return math_html(tokens[idx].content, False)

    def math_inline_double(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        return math_html(tokens[idx].content, True)

    def math_block(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        return macro("math_block", math_html(tokens[idx].content.strip(), True))

    def math_block_label(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        token = tokens[idx]
        return macro("math_block", math_html(token.content.strip(), True), str(token.meta["number"]),
                     token.meta["anchor"])

    def amsmath(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        return macro("math_block", math_html(tokens[idx].content.strip(), True))

    # -------------------------------------------------------------- inline markup

    def image(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        token, page = tokens[idx], env["page"]
        src = str(token.attrGet("src") or "")
        alt = str(token.attrGet("fig-alt") or "") or inline_text(token.children)  # Quarto's fig-alt="..."
        if token.attrs:
            token.attrs.pop("fig-alt", None)
        if is_remote(src):
            return macro("remote_image", src, alt or src)  # the page loads nothing from elsewhere
        url = page.image_url(src)
        if url is None or not valid_link(url):  # not an image of the entry's folder that may be published (prose.images)
            return macro("missing_image", alt)
        token.attrSet("src", url)
        token.attrSet("alt", alt)
        return self.renderToken(tokens, idx, options, env)

    def shortcode(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        """Quarto's shortcodes: a page break, keys, a video (a player of a file published with the
        page; a link to another site's: the page loads nothing from elsewhere); the others show
        nothing (resolve warned)."""
        name, args = tokens[idx].meta.get("name", ""), tokens[idx].meta.get("args", [])
        if name == "pagebreak":
            return macro("pagebreak")
        if name == "kbd":  # {{< kbd Shift-Ctrl-P mac=... >}}: the keys (the first, or the one for every system)
            return macro("kbd", next((a for a in args if "=" not in a), ""))
        if name == "video" and args:
            url = env["page"].video_url(args[0])
            named = dict(a.partition("=")[::2] for a in args[1:] if "=" in a)
            size = [named.get(k, "") if named.get(k, "").isdigit() else "" for k in ("width", "height")]
            if url and valid_link(url) and not is_remote(url):
                return macro("video", url, named.get("title", "") or args[0], *size)
            return macro("video_link", url if url and valid_link(url) else "", args[0])
        return ""

    def code_inline(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        code, links = tokens[idx].content, env["page"].links
        if tokens[idx].markup == "`" and QUARTO_INLINE.match(code):  # `{python} expr`: the run's value (Quarto's inline code)
            return str(quoted_html(ProseOutput(self, options, env), code, tokens[idx].meta.get("line", 0)))
        html = super().code_inline(tokens, idx, options, env)
        if links is None or not links.api_docs or env.get("in_link"):
            return html
        text = code.strip()
        # a bare name links only when the script imports it: `x` or `list` stay code
        if "." not in text and text.partition(".")[0] not in links.aliases:
            return html
        found = links.api(text)
        return html if found is None else macro("api_code", found.url, found.name, Markup(html))

    def link_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        env["in_link"] = env.get("in_link", 0) + 1
        token, href = tokens[idx], str(tokens[idx].attrGet("href") or "")
        if not valid_link(href):
            token.attrs.pop("href", None)  # javascript: and the like: the text alone
        elif href.startswith("#") and len(href) > 1:  # an anchor of raw HTML or a label: its id
            token.attrSet("href", "#" + env["page"].fragment(href[1:]))
        return self.renderToken(tokens, idx, options, env)

    def link_close(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        env["in_link"] = env.get("in_link", 1) - 1
        return self.renderToken(tokens, idx, options, env)

    def html_block(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        if env["page"].notebook:
            return raw_html(tokens[idx].content, env["page"], env)
        return _raw_html(tokens[idx].content, block=True)

    def html_inline(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        if env["page"].notebook:
            return raw_html(tokens[idx].content, env["page"], env)
        return _raw_html(tokens[idx].content, block=False)

    def footnote_ref(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        token = tokens[idx]
        if token.meta["id"] not in (env.get("footnotes") or {}).get("list", {}):
            return macro("element", "sup", f"[{token.meta['label']}]", "footnote-ref")  # defined elsewhere
        return self.plugin_rules["footnote_ref"](tokens, idx, options, env)

    def footnote_anchor(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        listed = (env.get("footnotes") or {}).get("list", {}).get(tokens[idx].meta["id"], {})
        if listed.get("count", 1) == 0:
            return ""  # no reference to go back to (it is in another cell, or nowhere)
        return self.plugin_rules["footnote_anchor"](tokens, idx, options, env)

    def list_item_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        token = tokens[idx]
        html = self.renderToken(tokens, idx, options, env)
        if "checked" not in (token.meta or {}):
            return html
        return html + str(macro("task_box", bool(token.meta["checked"])))

    def th_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: _Env) -> str:
        token = tokens[idx]
        style = str(token.attrs.pop("style", ""))  # a column's alignment: the sanitiser keeps align=
        if style.startswith("text-align:"):
            token.attrSet("align", style.removeprefix("text-align:"))
        return self.renderToken(tokens, idx, options, env)

    td_open = th_open


def _raw_html(html: str, block: bool) -> str:
    """Raw HTML in a script's prose shows as text; a comment vanishes, as in Jupyter."""
    if html.strip().startswith("<!--") and html.strip().endswith("-->"):
        return ""
    return macro("raw_html", html.strip("\n") if block else html, block)


@functools.cache
def _renderer() -> ProseRenderer:
    return ProseRenderer()


def role_html(name: str, content: str, page: PageContext, line: int = 0, written: str = "") -> str:
    """A reST role's HTML, resolved and rendered by the registered handler of its name
    (``:cite:p:``, ``:ref:``, ``:term:``...); ``line``: its line in the entry, ``written``: the
    role as its source has it (for warnings)."""
    call = RoleCall(name.lower(), content, line, {"written": written, "rst": True})
    handler, _known = default_registry().role(call.name)
    handler.resolve(call, page)
    return str(handler.render(call, ProseOutput(_renderer(), markdown_parser(page.typography).options, {"page": page})))


def render_markdown(text: str, page: PageContext, id_prefix: str = "", first_line: int = 0) -> str:
    """``text`` (Markdown: CommonMark, GitHub's extensions, MyST) as HTML, not yet sanitised."""
    # footnotes' ids: "fn-<text>-1", one <text> per text rendered on the page
    page_env: _Env = {"page": page, "id_prefix": id_prefix, "docId": f"{id_prefix}{page.number('text')}"}
    tokens, env = parse_resolved(text, page, Where(first_line, 0, id_prefix))
    return _renderer().render(tokens, markdown_parser(page.typography).options, {**env, **page_env})
