"""Page text without control characters: the ``finalize`` of every Jinja environment that writes
a page, so no user-controlled string (notebook metadata, file names, records, prose) brings a
terminal escape, NUL or other C0/C1 control into the site, whatever path it took to the template."""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup

# A colour or cursor sequence (CSI) or a title (OSC) as a whole, so "\x1b[31mred" reads "red";
# only characters that cannot be markup (no < > " ' &), so removing one never reshapes the HTML.
_SEQUENCE = re.compile(r"\x1b\[[0-9;:?]*[A-Za-z@`~]|\x1b\][^\x00-\x1f<>\"'&]*(?:\x07|\x1b\\)")
# What a page cannot show: C0 controls but tab, newline and carriage return (HTML reads those as
# white space), DEL and C1 controls; and lone surrogates, which UTF-8 cannot carry (U+FFFD).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_EITHER = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")  # one search for the common case


def page_text(text: str) -> str:
    """``text`` with terminal sequences and control characters removed (one character at a time
    outside whole sequences: safe on escaped HTML, where it never joins or splits a tag)."""
    if not _EITHER.search(text):
        return text
    if _CONTROL.search(text):
        text = _CONTROL.sub("", _SEQUENCE.sub("", text))
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    return text


def finalize(value: Any) -> Any:
    """Jinja's ``finalize``: each ``{{ value }}`` of a template as :func:`page_text` (Markup kept Markup)."""
    if isinstance(value, Markup):
        if not _EITHER.search(value):  # (most values: no copy of the text to compare)
            return value
        cleaned = page_text(str(value))
        return value if cleaned == value else Markup(cleaned)
    if isinstance(value, str):
        return page_text(value)
    return value
