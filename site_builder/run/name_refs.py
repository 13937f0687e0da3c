"""What the names of a block's code denoted when it ran, as the runner reports it and records keep it.

The runner (``child/api_names.py``) sends ``[line, col, end_col, [names], explicit]`` per
name; records store the same as objects. Both are untrusted: :func:`name_refs` keeps only
well-formed items, and the site only ever looks these names up in the inventories.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_NAME_REFS = 1500  # per block, as the runner's cap (child/api_names.py)
MAX_NAMES = 6  # candidate names per chain, as the runner's cap
MAX_NAME_LENGTH = 300


@dataclass(frozen=True)
class NameRef:
    """What a name or dotted chain of a block's code denoted when the block ran."""

    line: int  # script line
    col: int  # characters from the line's start
    end_col: int
    names: tuple[str, ...]  # the full names it may be documented under, most exact first
    explicit: int  # how many of ``names`` name the object itself; the others name its type (a variable's)


def name_refs(raw: Any) -> tuple[NameRef, ...]:
    """The runner's (or a record's) ``[line, col, end_col, [names], explicit]`` list, malformed items dropped."""
    if not isinstance(raw, list):
        return ()
    refs = []
    for item in raw[:MAX_NAME_REFS]:
        if isinstance(item, dict):
            item = [item.get("line"), item.get("col"), item.get("end_col"), item.get("names"), item.get("explicit")]
        if not (isinstance(item, list) and len(item) == 5 and isinstance(item[3], list)):
            continue
        line, col, end, names, explicit = item
        if not all(type(n) is int and n >= 0 for n in (line, col, end, explicit)) or line < 1 or end <= col:
            continue
        if not all(isinstance(n, str) and 0 < len(n) <= MAX_NAME_LENGTH for n in names[:MAX_NAMES]) or not names:
            continue
        refs.append(NameRef(line, col, end, tuple(names[:MAX_NAMES]), min(explicit, len(names[:MAX_NAMES]))))
    return tuple(refs)
