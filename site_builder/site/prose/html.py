"""Prose -> safe HTML: one entry point for Markdown (markdown-it, see ``markdown/``) and reST (docutils).

Markdown is CommonMark with GitHub's extensions and MyST's roles, directives, targets and
math, as Jupyter and Jupyter Book show them. reST's Sphinx-only constructs degrade instead
of failing: cross-reference roles become inline code or plain text, directives that mean
nothing outside Sphinx vanish. Every result goes through ``clean_html``; images are files of
the entry's folder published with the page, others become links (the Content-Security-Policy
lets a page load nothing from elsewhere). docutils is imported on the first reST text.
"""

from __future__ import annotations

from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.prose.markdown.renderer import render_markdown
from site_builder.site.safety.html import clean_html


def render(text: str, language: str, *, id_prefix: str = "", page: PageContext | None = None,
           first_line: int = 0) -> str:
    """``text`` (Markdown or reST) as sanitised HTML; ``id_prefix`` keeps its ids apart from other texts'.

    ``page`` holds the site's labels, the page's numbering (shared by the texts of one page),
    its warnings and ``links``: where cross-references and inline code naming documented
    objects lead; ``first_line``: the text's first line in the entry's source, for warnings.
    """
    if not text.strip():
        return ""
    page = page if page is not None else PageContext()
    html = None
    if language == "rst":
        from site_builder.site.prose.rst import rst_html  # docutils: only for reST

        html = rst_html(text, id_prefix, page, first_line)
    if html is None:  # Markdown (and reST docutils could not read: shown as Markdown)
        html = render_markdown(text, page, id_prefix, first_line).rstrip("\n")
    for finish in page.html_passes:  # what reads the page's prose as a whole (link_terms' mentions)
        html = finish(html)
    return clean_html(html, media=True)


def plain(text: str, language: str, typography: bool = False) -> str:
    """``text`` (one line of Markdown or reST) as plain text: what a reader sees, without markup."""
    if not text.strip():
        return text
    if language != "rst":
        from site_builder.source.syntax.markdown import typographic

        return typographic(text) if typography else text
    from site_builder.site.prose.rst import rst_plain

    return rst_plain(text)
