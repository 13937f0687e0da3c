"""JSON laid out as ``json.dumps(data, indent=1, sort_keys=True)`` writes it, in less CPU.

On Python 3.11 the standard library's C encoder cannot indent, so every indented record and
notebook went through its pure-Python encoder (generators nested per level, 0.2-0.4 ms for a
small record).  ``indented`` gives the same text from one recursive function whose strings
and numbers are encoded by the standard library's own (C) functions.
"""

from __future__ import annotations

import dataclasses
from json.encoder import encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

_INFINITY = float("inf")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _key(key: object) -> str:
    """A key as json.dumps writes it (its text; a number, bool or None written as JSON)."""
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def fields(value: Any) -> dict[str, Any]:
    """A dataclass instance's fields by name, not copied: as JSON, what ``dataclasses.asdict`` gives
    of one whose fields hold no dataclass, without its deep copy of every value (0.1-0.2 ms a record)."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def indented(data: Any, ensure_ascii: bool = True) -> str:
    """``json.dumps(data, indent=1, sort_keys=True, ensure_ascii=ensure_ascii)``, the same text.

    Only plain JSON data (dicts, lists, tuples, str, int, float, bool, None and their
    subclasses); anything else raises TypeError, as json.dumps without ``default`` does."""
    string = encode_basestring_ascii if ensure_ascii else encode_basestring
    parts: list[str] = []
    add = parts.append

    def walk(value: Any, newline: str) -> None:
        if isinstance(value, str):
            add(string(value))
        elif value is None:
            add("null")
        elif value is True:
            add("true")
        elif value is False:
            add("false")
        elif isinstance(value, int):
            add(int.__repr__(value))
        elif isinstance(value, float):
            add(_float(value))
        elif isinstance(value, dict):
            if not value:
                add("{}")
                return
            inner = newline + " "
            separator = "{" + inner
            for key, item in sorted(value.items()):  # as json sorts: by the keys themselves
                add(separator)
                add(string(_key(key)))
                add(": ")
                walk(item, inner)
                separator = "," + inner
            add(newline)
            add("}")
        elif isinstance(value, (list, tuple)):
            if not value:
                add("[]")
                return
            inner = newline + " "
            separator = "[" + inner
            for item in value:
                add(separator)
                walk(item, inner)
                separator = "," + inner
            add(newline)
            add("]")
        else:
            raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")

    walk(data, "\n")
    return "".join(parts)


def indented_file(data: Any) -> bytes:
    """``data`` as a JSON file's bytes: ``indented`` text and a newline, in UTF-8, or all escaped
    to ASCII when some text holds a lone surrogate (a demo's output can) that UTF-8 cannot carry."""
    try:
        return (indented(data, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (indented(data) + "\n").encode("ascii")
