"""Sphinx inventories for the tests: a real version-2 ``objects.inv``, written by us."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path


def inventory_bytes(entries: Sequence[tuple[str, ...]], project: str = "x", version: str = "1") -> bytes:
    """The bytes of an objects.inv listing ``entries``: (name, role, uri) or (name, role, uri, dispname).

    ``role`` is "py:function" and the like; a ``uri`` ending in ``$`` stands for the name
    there, a dispname of ``-`` for the name itself (as Sphinx writes them).
    """
    lines = []
    for entry in entries:
        name, role, uri = entry[:3]
        display = entry[3] if len(entry) > 3 else "-"
        lines.append(f"{name} {role} 1 {uri} {display}\n")
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
              "# The remainder of this file is compressed using zlib.\n")
    return header.encode() + zlib.compress("".join(lines).encode())


def write_inventory(path: Path, entries: Sequence[tuple[str, ...]], project: str = "x", version: str = "1") -> bytes:
    """Write :func:`inventory_bytes` to ``path`` (its folder made) and return them."""
    data = inventory_bytes(entries, project, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data
