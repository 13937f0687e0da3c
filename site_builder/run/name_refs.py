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
        # plain tests, no generators: a site's records hold tens of thousands of these
        if not (type(line) is int and type(col) is int and type(end) is int and type(explicit) is int):
            continue
        if line < 1 or col < 0 or explicit < 0 or end <= col or not names:
            continue
        kept = names[:MAX_NAMES]
        if _well_formed(kept):
            refs.append(NameRef(line, col, end, tuple(kept), min(explicit, len(kept))))
    return tuple(refs)


def _well_formed(names: list[Any]) -> bool:
    for name in names:
        if not (isinstance(name, str) and 0 < len(name) <= MAX_NAME_LENGTH):
            return False
    return True
