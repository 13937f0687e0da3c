"""The values prose quotes: inline expressions evaluated in the demo's namespace, and glue.

``evaluate`` runs one expression as the page's prose wrote it (``source/expressions``) in the
demo's own namespace, at its place in the run, and returns its text: formatted by its spec,
else the value's ``_repr_markdown_`` or ``_repr_latex_`` (marked as such), else ``str``; a value
whose text says nothing and which has an image (a Matplotlib figure) is that image. An
exception is the expression's result, as text. ``glued`` reads MyST-NB's ``glue(name, value)``
from the display output it publishes (metadata ``scrapbook``), in notebooks and scripts alike.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from typing import Any

from .values import real_method

TEXT_LIMIT = 10_000  # characters of an expression's text kept
GLUE_PREFIX = "application/papermill.record/"  # MyST-NB's glue(..., display=False) hides the bundle so


def evaluate(expression: dict[str, Any], ns: dict[str, Any],
             picture: Callable[[Any, str], tuple[dict[str, str], str]] | None = None) -> dict[str, Any]:
    """``{"i", "text", "kind", "type", "error"}`` of one expression (``kind``: text, markdown, latex,
    or image: then ``files``, its image written by ``picture``, and ``text``, what the image shows)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()  # what an expression prints is no block's output
    try:
        where = f"<expression on line {expression.get('line') or '?'}>"
        value = eval(compile(expression["code"], where, "eval"), ns)  # noqa: S307 (the demo's own code)
        spec = expression.get("spec", "")
        text, kind = _text(value, spec)
        found = {"text": text[:TEXT_LIMIT], "kind": kind, "type": _type_name(value), "error": ""}
        if kind == "text" and not spec and picture is not None:
            files, alt = picture(value, text)  # a figure: mystmd shows its image, as Jupyter would
            if files:
                found.update(kind="image", files=files, text=(alt or text)[:TEXT_LIMIT])
    except (Exception, SystemExit) as exc:
        found = {"text": "", "kind": "text", "type": "", "error": _error(exc)}
    finally:
        sys.stdout, sys.stderr = saved
    return {"i": expression["i"], **found}


def _text(value: Any, spec: str) -> tuple[str, str]:
    if spec:
        return format(value, spec), "text"
    for kind, name in (("markdown", "_repr_markdown_"), ("latex", "_repr_latex_")):
        method = real_method(value, name)
        if method is not None:
            shown = method()
            shown = shown[0] if isinstance(shown, tuple) and shown else shown  # (data, metadata)
            if isinstance(shown, str):
                return shown, kind
    return str(value), "text"


def _type_name(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def _error(exc: BaseException) -> str:
    message = str(exc).split("\n", 1)[0][:500]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def glued(bundle: dict[Any, Any], metadata: Any) -> tuple[str, dict[Any, Any], bool] | None:
    """``(name, bundle without glue's prefix, shown)`` of a display output ``glue()`` published,
    else None (``shown``: glue's ``display=True``)."""
    scrapbook = metadata.get("scrapbook") if isinstance(metadata, dict) else None
    if not isinstance(scrapbook, dict) or not isinstance(scrapbook.get("name"), str):
        return None
    prefix = scrapbook.get("mime_prefix") or ""
    prefix = prefix if isinstance(prefix, str) else ""
    data = {key[len(prefix):]: value for key, value in bundle.items()
            if isinstance(key, str) and key.startswith(prefix)}
    return scrapbook["name"], data, not prefix
