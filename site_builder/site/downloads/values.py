"""The run's values for the printed entry: ``_downloads/values/NAME.json`` and ``NAME.tex``.

Every value the prose quotes (inline expressions, glue) and every name the entry exports (an
``Export`` section, front matter ``export:``) is written as JSON (format ``VALUES_FORMAT``, see
docs/guide/values.md) and as LaTeX macros, ``\\newcommand{\\attentionFinalLoss}{0.395}``, so
a LaTeX document can ``\\input`` the demo's numbers. Nothing in either file depends on when or
where the build ran: a rebuild with the same values writes the same bytes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass

from site_builder.json_text import indented
from site_builder.run.results import GluedValue, QuotedValue, RunResult
from site_builder.site.prose.quoting import formatted
from site_builder.site.sitefiles import SiteFile, value_paths

log = logging.getLogger(__name__)

VALUES_FORMAT = 1  # bump when the JSON layout changes
# says nothing, and differs on every run; or names only its class (IPython's HTML, Markdown...)
_DEFAULT_REPR = re.compile(r"<[^\n]* at 0x[0-9a-fA-F]+>|\A<[\w.]+ object>\Z")
_WORD = re.compile(r"[A-Za-z]+|[0-9]")
_DIGITS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                  "^": r"\^{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}"}


@dataclass(frozen=True)
class ExportedValue:
    """One value as the files give it."""

    name: str  # the exported or glued name, else the expression as written
    macro: str  # its LaTeX macro, without the backslash
    value: str  # as text
    type: str  # the value's type ("float", "numpy.float64"; glue: its MIME types' richest)
    block: str  # the block it was taken after ("" : before any block)
    origin: str  # "export", "expression" or "glue"


def latex_name(entry: str, name: str) -> str:
    """The macro name of ``name`` of ``entry``: the words (runs of ASCII letters) and digits of
    both, each capitalised but the first, each digit spelled out ("attention", "final_loss_2" ->
    "attentionFinalLossTwo"); LaTeX macro names hold letters only."""
    words = [_DIGITS[int(w)] if w.isdigit() else w for w in _WORD.findall(entry.rsplit("/", 1)[-1])]
    words += [_DIGITS[int(w)] if w.isdigit() else w for w in _WORD.findall(name)]
    if not words:
        return "value"
    head = words[0][0].lower() + words[0][1:]
    return head + "".join(w[0].upper() + w[1:] for w in words[1:])


def latex_text(text: str) -> str:
    """``text`` as LaTeX text: its special characters escaped, on one line."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in " ".join(text.split()))


def exported_values(entry: str, quoted: Iterable[QuotedValue], glued: Iterable[GluedValue]) -> list[ExportedValue]:
    """The values an entry's files hold, in page order then glue order (an expression quoted
    twice once; one that raised or was never reached left out, with a warning; a glued value whose
    text is a default repr, ``<Formula at 0x...>``, or that is a figure, left out)."""
    found: dict[str, ExportedValue] = {}
    for q in quoted:
        name = q.export or (f"{q.code}:{q.spec}" if q.spec else q.code)  # Quarto's: its expression
        if q.kind == "image":  # a figure: no text to quote
            continue
        if q.error or not q.evaluated:
            if q.export:
                log.warning("%s: the exported name %r has no value: %s", entry, q.export, q.error or "not evaluated")
            continue
        origin = "export" if q.export else "expression"
        found.setdefault(name, ExportedValue(name, latex_name(entry, name), q.text, q.type, q.block, origin))
    for g in glued:
        text = g.display.data.get("text/plain")
        if text is not None and not _DEFAULT_REPR.search(text) and not g.display.files:  # a figure: no text
            found.setdefault(g.name, ExportedValue(g.name, latex_name(entry, g.name), formatted(text, ""),
                                                   "glue", g.block, "glue"))
    return list(found.values())


def value_files(entry: str, result: RunResult) -> list[SiteFile]:
    """``_downloads/values/ENTRY.json`` and ``.tex`` of ``entry``'s values (none: no files)."""
    values = exported_values(entry, result.quoted, result.glued)
    if not values:
        return []
    data = {"format": VALUES_FORMAT, "entry": entry, "values": [{
        "name": v.name, "macro": "\\" + v.macro, "value": v.value, "type": v.type, "block": v.block,
        "origin": v.origin} for v in values]}
    text = indented(data, ensure_ascii=False) + "\n"
    lines = [f"% The values of the entry {entry}, as its demo computed them (site_builder, values format "
             f"{VALUES_FORMAT}).", "% \\input this file once; each macro gives one value as text."]
    macros: dict[str, str] = {}
    for v in values:
        if v.macro in macros:
            log.warning("%s: the values %r and %r have the same LaTeX name \\%s: only the first is in %s.tex",
                        entry, macros[v.macro], v.name, v.macro, entry)
            continue
        macros[v.macro] = v.name
        lines.append(f"\\newcommand{{\\{v.macro}}}{{{latex_text(v.value)}}}")
    json_path, tex_path = value_paths(entry)
    return [SiteFile(json_path, text.encode("utf-8")), SiteFile(tex_path, ("\n".join(lines) + "\n").encode("utf-8"))]
