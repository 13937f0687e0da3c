"""A Display (a value or a ``display()`` output) as the page shows it: its richest safe form.

The order is Jupyter's, richest first: text/html (sanitised), the image types (always as
an image file: an SVG never goes inline, so no script in it can run), text/markdown
(rendered as prose, raw HTML shown as text), text/latex (MathML, through the reST math
path prose uses), JSON (pretty-printed), text/plain.  A form the sanitiser empties is
skipped for the next.  Every form left out for its size is named in a note, and so is an
HTML value shown without its styles (its CSS did not pass the check in safety/css_check).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from markupsafe import Markup

from site_builder.run.execute import Display
from site_builder.site.formatting import format_size
from site_builder.site.outputs.interactive import PLOTLY_MIME, plotly_figure
from site_builder.site.safety.html import clean_html

IMAGE_TYPES = ("image/svg+xml", "image/png", "image/jpeg", "image/gif", "image/webp")
# Delimiters a _repr_latex_ wraps its formula in (IPython's Math, SymPy, pandas).
_LATEX_DELIMITERS = re.compile(r"^\s*(?:\$\$(.*)\$\$|\$(.*)\$|\\\[(.*)\\\]|\\\((.*)\\\))\s*$", re.S)
_LATEX_ENVIRONMENT = re.compile(r"^\s*\\begin\{(equation|displaymath|math)\*?\}(.*)\\end\{\1\*?\}\s*$", re.S)
JSON_SHOWN_CHARS = 20_000  # characters of pretty-printed JSON shown

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OmittedView:
    """A representation left out because it was over ``display_limit``."""

    mime: str
    size: str  # "30.0 MB"


@dataclass
class PageAssets:
    """What one page's displays need beside its HTML: the CSS their HTML keeps (scoped to
    each display's box), the data files of its interactive figures."""

    css: list[str] = field(default_factory=list)
    figures: list[bytes] = field(default_factory=list)  # plotly-N.js data files, N from 1
    boxes: int = 0
    entry: str = ""  # the page's entry, named by its warnings

    def scope(self) -> str:
        """A new id for a display's box, unique on the page."""
        self.boxes += 1
        return f"value-{self.boxes}"


@dataclass(frozen=True)
class DisplayView:
    """The template's view of one Display."""

    kind: str  # "html", "plotly", "image", "json" or "text"
    mime: str  # the type shown ("" when nothing could be)
    scope: str = ""  # kind "html": the id of its box, which its CSS is scoped to; "plotly": the plot's
    html: Markup | None = None  # kind "html": sanitised (text/html, or markdown and latex rendered)
    text: str = ""  # kind "json" or "text"
    src: str | None = None  # kind "image": URL relative to the page
    alt: str = ""
    width: int | None = None
    height: int | None = None
    omitted: tuple[OmittedView, ...] = ()
    unstyled: str = ""  # kind "html": why the value's own CSS is left out, when it is


def display_view(display: Display, publish: Callable[[str], str | None],
                 sizes: dict[str, tuple[int | None, int | None]] | None = None,
                 assets: PageAssets | None = None) -> DisplayView:
    """The richest safe form of ``display``; ``publish`` publishes a file of the block and
    returns its URL (None when it cannot be published); ``sizes``: path -> (width, height);
    ``assets`` collects what the page needs for it (without: HTML loses its styles, and a
    Plotly figure shows its other forms)."""
    omitted = tuple(OmittedView(mime, format_size(size)) for mime, size in sorted(display.omitted.items()))
    alt = _alt(display.text)
    if assets is not None and PLOTLY_MIME in display.data:  # its HTML form loads plotly.js from a CDN
        script = plotly_figure(f"plotly-{len(assets.figures) + 1}", display.data[PLOTLY_MIME])
        if script is not None:
            assets.figures.append(script)
            return DisplayView("plotly", PLOTLY_MIME, scope=f"plotly-{len(assets.figures)}",
                               text=display.text, alt=alt, omitted=omitted)
    for mime in ("text/html", *IMAGE_TYPES, "text/markdown", "text/latex"):
        if mime in display.files and mime in IMAGE_TYPES:
            src = publish(display.files[mime])
            if src is None:
                continue
            width, height = (sizes or {}).get(display.files[mime], (None, None))
            return DisplayView("image", mime, src=src, alt=alt, width=width, height=height, omitted=omitted)
        text = display.data.get(mime)
        if text is None:
            continue
        if mime == "text/html" and assets is not None:
            # here: the CSS sanitiser (tinycss2) is imported by a site whose values show HTML only
            from site_builder.site.outputs.value_html import clean_value_html

            scope = assets.scope()
            styled = clean_value_html(text, scope)
            if styled.html:
                assets.css.append(styled.css)
                if styled.dropped:
                    log.warning("%s: a value is shown without its styles: its CSS did not pass the check (%s)",
                                assets.entry, styled.dropped)
                return DisplayView("html", mime, scope=scope, html=Markup(styled.html), omitted=omitted,
                                   unstyled=styled.dropped)
            continue
        html = _html(mime, text)
        if html:
            return DisplayView("html", mime, html=Markup(html), omitted=omitted)
    if "application/json" in display.data:  # vendor +json types are for their own renderers
        return DisplayView("json", "application/json", text=_pretty_json(display.data["application/json"]),
                           omitted=omitted)
    if display.text:
        return DisplayView("text", "text/plain", text=display.text, omitted=omitted)
    return DisplayView("text", "", omitted=omitted)


def _html(mime: str, text: str) -> str:
    """Sanitised HTML for a text form, "" when nothing is left of it."""
    if mime == "text/html":
        return clean_html(text).strip()
    if mime == "text/markdown":
        return markdown_html(text)
    return latex_html(text)


def markdown_html(markdown: str) -> str:
    """A text/markdown form as the page shows it: rendered as prose, raw HTML in it shown as text."""
    from site_builder.site.prose import html as prose  # Markdown: only for this form

    return prose.render(markdown, "markdown").strip()


def latex_html(latex: str) -> str:
    """A formula (``$...$``, ``$$...$$``, ``\\[...\\]``, ``\\begin{equation}``) as sanitised MathML; "" when
    it is not one formula docutils understands."""
    from site_builder.site.prose import html as prose

    if (found := _LATEX_DELIMITERS.match(latex)) is not None:
        formula = next(g for g in found.groups() if g is not None)
    elif (found := _LATEX_ENVIRONMENT.match(latex)) is not None:
        formula = found.group(2)
    else:
        return ""
    if not formula.strip():
        return ""
    body = "\n".join("   " + line for line in formula.strip().splitlines())
    html = prose.render(f".. math::\n\n{body}\n", "rst").strip()
    return html if "<math" in html else ""


def _pretty_json(text: str) -> str:
    try:
        pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=False)
    except ValueError:
        pretty = text
    return pretty if len(pretty) <= JSON_SHOWN_CHARS else pretty[:JSON_SHOWN_CHARS] + "\n…"


def _alt(text: str) -> str:
    """An image's text alternative: its text/plain form, when that says more than a default repr."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return "" if re.fullmatch(r"<.* at 0x[0-9a-fA-F]+>", first) else first[:200]

