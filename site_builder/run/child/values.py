"""A block's value (its last expression) as the page shows it."""

from __future__ import annotations

import re
import types
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


def real_method(value: Any, name: str) -> Any:
    """``value``'s bound method ``name`` as IPython finds it (a property may return it, as
    scikit-learn's ``_repr_html_`` does), or None: never on a class, nor on an object that
    answers every attribute (IPython's canary)."""
    try:
        if getattr(value, "_ipython_canary_method_should_not_exist_", None) is not None:
            return None
        method = getattr(value, name, None)
    except Exception:
        return None
    if isinstance(value, type) and not isinstance(method, types.MethodType):
        return None
    return method if callable(method) else None


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
    html_method = real_method(value, "_repr_html_")
    if html_method is not None:
        try:
            html = html_method()
        except Exception:
            html = None
    if not (isinstance(html, str) and html.strip() and len(html) <= VALUE_HTML_LIMIT):
        html = None
        if _noise(value, text):  # an object with an HTML view is worth showing whatever its repr
            return None
    if len(text) > VALUE_TEXT_LIMIT:
        text = text[:VALUE_TEXT_LIMIT] + "\n…"
    return {"text": text, "html": html} if html else {"text": text}
