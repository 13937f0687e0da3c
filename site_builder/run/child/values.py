"""A block's value (its last expression) as the page shows it."""

from __future__ import annotations

import re
from typing import Any

# A repr that says only "an object lives here" tells a reader nothing (Matplotlib's
# `<matplotlib.colorbar.Colorbar object at 0x7f...>`): such values are not shown.
_DEFAULT_REPR = re.compile(r"<[^\n]* at 0x[0-9a-fA-F]+>")

VALUE_TEXT_LIMIT = 20_000  # characters of a value's repr kept

VALUE_HTML_LIMIT = 200_000  # characters of a value's _repr_html_ kept; longer: the repr instead


def _noise(value: Any, text: str) -> bool:
    """True for None, a default repr, a list/tuple of only such values (e.g. ``plt.plot``'s),
    or any repr naming a memory address: it differs on every run, so ``check`` would call it drift."""
    if value is None or _DEFAULT_REPR.fullmatch(text) or _DEFAULT_REPR.search(text):
        return True
    if type(value) in (list, tuple) and 0 < len(value) <= 1000:
        try:
            return all(_DEFAULT_REPR.fullmatch(repr(v)) for v in value)
        except Exception:
            return False
    return False


def describe_value(value: Any) -> dict[str, str] | None:
    """What a block's last expression evaluated to, as Jupyter shows it (repr, _repr_html_), or None."""
    if value is None:
        return None
    try:
        text = repr(value)
    except Exception:
        return None
    if not isinstance(text, str):
        return None
    html = None
    html_method = getattr(type(value), "_repr_html_", None)  # on the class, as IPython looks it up
    if callable(html_method):
        try:
            html = html_method(value)
        except Exception:
            html = None
    if not (isinstance(html, str) and html.strip() and len(html) <= VALUE_HTML_LIMIT):
        html = None
        if _noise(value, text):  # an object with an HTML view is worth showing whatever its repr
            return None
    if len(text) > VALUE_TEXT_LIMIT:
        text = text[:VALUE_TEXT_LIMIT] + "\n…"
    return {"text": text, "html": html} if html else {"text": text}
