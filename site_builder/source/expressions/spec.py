"""An inline expression as written: the Python expression and the format spec after it."""

from __future__ import annotations

import ast
import re
import warnings

# Python's format-spec mini-language: [[fill]align][sign][z][#][0][width][grouping][.precision][type]
_SPEC = re.compile(r"(?:.?[<>=^])?[+\- ]?z?#?0?\d*[,_]?(?:\.\d+)?[bcdeEfFgGnosxX%]?", re.DOTALL)
_OPEN, _CLOSE = "([{", ")]}"


def _parses(code: str) -> bool:
    """True when ``code`` is one Python expression (parsed only, never evaluated)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: the run's business
            ast.parse(code.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return bool(code.strip())


def _top_level_colons(text: str) -> list[int]:
    """Where ``text`` has a ":" outside brackets and string literals."""
    found, depth, quote, i = [], 0, "", 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif text.startswith(quote, i):
                i += len(quote) - 1
                quote = ""
        elif char in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else char
            i += len(quote) - 1
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif char == ":" and depth == 0:
            found.append(i)
        i += 1
    return found


def split_spec(written: str) -> tuple[str, str]:
    """``"loss[-1]:.3f"`` -> ``("loss[-1]", ".3f")``: the spec follows the last top-level ``:``
    when what follows is a format spec and what precedes parses as an expression; else no spec."""
    text = written.strip()
    for at in reversed(_top_level_colons(text)):
        code, spec = text[:at], text[at + 1:]
        if _SPEC.fullmatch(spec) and _parses(code):
            return code.strip(), spec
    return text, ""
