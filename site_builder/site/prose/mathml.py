"""TeX in prose as MathML, with docutils' converter: what reST's math gives, for MyST's too.

Nothing is loaded from elsewhere (no MathJax); TeX the converter does not read is rewritten
to what it does (``equation``/``align`` environments, ``array``, ``\\bf``, labels...), and
shows as code (templates/_prose_myst.html's ``math_tex``) when that fails too.
"""

from __future__ import annotations

import inspect
import logging
import re

from markupsafe import Markup

from site_builder.site.prose.markdown.macros import macro

log = logging.getLogger(__name__)

# TeX that docutils' converter does not read, rewritten to what it does (tried after a failure).
_TEX_REWRITES = (
    (re.compile(r"\\begin\{(?:equation|gather|multline)\*?\}|\\end\{(?:equation|gather|multline)\*?\}"), ""),
    # docutils 0.19 aligns rows split by \\ and & itself but refuses the environments around them
    (re.compile(r"\\(?:begin|end)\{(?:aligned|align|alignat|split|eqnarray|gathered|flalign)\*?\}(?:\{\d+\})?"), ""),
    (re.compile(r"\\begin\{array\}\{[^{}]*\}"), r"\\begin{matrix}"),
    (re.compile(r"\\end\{array\}"), r"\\end{matrix}"),
    (re.compile(r"\\cr\b"), r"\\\\"),
    (re.compile(r"\\(?:color|textcolor)\{[^{}]*\}"), ""),
    (re.compile(r"\{\\bf\s+([^{}]*)\}"), r"\\mathbf{\1}"),
    (re.compile(r"\\dots\b"), r"\\ldots"),
    (re.compile(r"\\label\{[^{}]*\}|\\nonumber\b|\\notag\b|(?<!\\)%[^\n]*"), ""),
)


def math_html(tex: str, display: bool) -> Markup:
    """``tex`` as MathML; the TeX as code when the converter cannot read it."""
    from docutils.utils.math import latex2mathml, unichar2tex

    code = tex.translate(unichar2tex.uni2tex_table)
    block = "as_block" in inspect.signature(latex2mathml.tex2mathml).parameters  # docutils >= 0.21
    for attempt in range(2):
        try:  # as docutils' HTML writer calls it for math_output "MathML"
            if block:
                return Markup(latex2mathml.tex2mathml(code, as_block=display))
            return Markup(latex2mathml.tex2mathml(code, inline=not display))
        except Exception as exc:  # noqa: BLE001 (the converter raises SyntaxError and worse on odd TeX)
            if attempt:
                log.debug("TeX the MathML converter cannot read, shown as code: %s (%s)", tex, exc)
        for pattern, replacement in _TEX_REWRITES:
            code = pattern.sub(replacement, code)
    return macro("math_tex", tex)
