"""The state's files as bytes, a slice at a time (see state.py: save_state)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


# Written a slice at a time: a large site's state as one text (and its bytes) would add tens of
# megabytes to the build's peak memory.
_SLICE = 2000


def json_parts(data: dict[str, Any], large: tuple[str, ...]) -> Iterator[bytes]:
    """``json.dumps(data, sort_keys=True, separators=(",", ":"))`` encoded, in parts: the
    mappings of ``data`` named ``large`` a slice of items at a time."""
    def dumps(value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))

    yield b"{"
    for i, key in enumerate(sorted(data)):
        yield f"{',' if i else ''}{dumps(key)}:".encode("utf-8")
        if key not in large:
            yield dumps(data[key]).encode("utf-8")
            continue
        items = sorted(data[key].items())
        yield b"{"
        for start in range(0, len(items), _SLICE):  # a slice as one mapping: one call of the C encoder
            part = dumps(dict(items[start:start + _SLICE]))[1:-1]
            yield f"{',' if start else ''}{part}".encode("utf-8")
        yield b"}"
    yield b"}"


def script_lines(scripts: dict[str, tuple[str, str]], rows: dict[str, str]) -> Iterator[bytes]:
    """The parses' file, a slice of lines at a time: one line per entry (its parse, then its
    site row when it has one); a parse is used only under its key, whichever build wrote the
    line. JSON escapes tabs and line breaks: neither is in a line's fields."""
    items = sorted(scripts.items())
    for start in range(0, len(items), _SLICE):
        yield "".join(f"{key}\t{json.dumps(name)}\t{text}" + (f"\t{rows[name]}\n" if name in rows else "\n")
                      for name, (key, text) in items[start:start + _SLICE]).encode("utf-8")
