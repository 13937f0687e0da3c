"""What a value looks like, as Jupyter's display protocol shows it: a MIME bundle.

``describe_value`` asks the object the way IPython's formatters do (``_repr_mimebundle_``,
then each ``_repr_*_`` method, found as IPython's get_real_method finds them), and always
adds ``text/plain`` (its repr).
Pure: no file is written here (``display.py`` writes the image types as files).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import types
from typing import Any

# A repr that says only "an object lives here" tells a reader nothing (Matplotlib's
# `<matplotlib.colorbar.Colorbar object at 0x7f...>`): such values are not shown.
_DEFAULT_REPR = re.compile(r"<[^\n]* at 0x[0-9a-fA-F]+>")

VALUE_TEXT_LIMIT = 20_000  # characters of a value's repr kept

# IPython's formatters, in its own order (richest first).
REPR_METHODS = (
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("image/svg+xml", "_repr_svg_"),
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("text/latex", "_repr_latex_"),
    ("application/json", "_repr_json_"),
    ("application/javascript", "_repr_javascript_"),
    ("application/pdf", "_repr_pdf_"),
)
# Types held as bytes and written as files, never inline (an SVG may carry a script).
BINARY_TYPES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
                "application/pdf": ".pdf"}
FILE_TYPES = {**BINARY_TYPES, "image/svg+xml": ".svg"}
MIME_TYPE = re.compile(r"^[a-z0-9][a-z0-9.+-]*/[a-z0-9][a-z0-9.+-]*$")


def is_json_type(mime: str) -> bool:
    """application/json and the vendor types built on it (application/vnd.plotly.v1+json)."""
    return mime == "application/json" or mime.endswith("+json")


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


def tells_nothing(value: Any, text: str) -> bool:
    """True when ``text``, ``value``'s repr, tells a reader nothing (see ``_noise``)."""
    return _noise(value, text)


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


def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return method(*args, **kwargs)
    except Exception:  # as IPython: a failing formatter is skipped, not an error of the block
        return None


def normalise(mime: str, data: Any) -> str | bytes | None:
    """One representation as the record keeps it: bytes for binary types, text for the rest."""
    if not isinstance(mime, str) or not MIME_TYPE.match(mime):
        return None
    if isinstance(data, tuple) and len(data) == 2:  # (data, metadata) from a _repr_*_ method
        data = data[0]
    if mime in BINARY_TYPES:
        if isinstance(data, (bytes, bytearray, memoryview)):
            return bytes(data) or None
        if isinstance(data, str):  # base64, as in a notebook
            try:
                return base64.b64decode(data, validate=False) or None
            except (binascii.Error, ValueError):
                return None
        return None
    if is_json_type(mime):
        if isinstance(data, (bytes, str)):
            try:
                data = json.loads(data)
            except ValueError:
                return None
        try:
            return json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
        except (TypeError, ValueError):
            return None
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data).decode("utf-8", "replace")
    return data if isinstance(data, str) and data.strip() else None


def mime_bundle(value: Any, raw: bool = False) -> dict[str, str | bytes]:
    """Every representation of ``value`` (``raw``: ``value`` is already a bundle, as ``display(raw=True)``)."""
    found: dict[str, Any] = {}
    if raw and isinstance(value, dict):
        found.update(value)
    else:
        bundle_method = real_method(value, "_repr_mimebundle_")
        if bundle_method is not None:
            bundle = _call(bundle_method, include=None, exclude=None)
            if isinstance(bundle, tuple) and len(bundle) == 2:
                bundle = bundle[0]
            if isinstance(bundle, dict):
                found.update(bundle)
        for mime, name in REPR_METHODS:
            method = real_method(value, name) if mime not in found else None
            if method is not None:
                result = _call(method)
                if result is not None:
                    found[mime] = result
        if "text/plain" not in found:
            try:
                found["text/plain"] = repr(value)
            except Exception:
                pass
    return normalised(found)


def describe_value(value: Any) -> dict[str, str | bytes] | None:
    """The bundle of a block's last expression, as Jupyter shows it, or None for nothing worth showing."""
    if value is None:
        return None
    return worth_showing(value, mime_bundle(value))


def worth_showing(value: Any, bundle: dict[str, str | bytes]) -> dict[str, str | bytes] | None:
    """``bundle`` (``value``'s, normalised) with its text cut to VALUE_TEXT_LIMIT, or None when
    it tells a reader nothing: no form at all, or only a repr naming a memory address."""
    text = bundle.get("text/plain")
    if not isinstance(text, str):
        if not bundle:
            return None
        text = ""
    if set(bundle) <= {"text/plain"} and _noise(value, text):
        return None  # an object with a rich view is worth showing whatever its repr
    if len(text) > VALUE_TEXT_LIMIT:
        bundle["text/plain"] = text[:VALUE_TEXT_LIMIT] + "\n…"
    return bundle


def normalised(found: dict[Any, Any]) -> dict[str, str | bytes]:
    """The representations of ``found`` (MIME type -> data, as IPython's formatters give them)
    that the record can keep, normalised (see :func:`normalise`)."""
    kept = {}
    for mime, data in found.items():
        norm = normalise(mime, data)
        if norm is not None:
            kept[mime] = norm
    return kept
