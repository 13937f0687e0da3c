"""Entry names: which strings can name an entry (a URL segment and a file name).

Shared bottom layer: the settings, the discover stage and ``new`` all check names here.
An entry in a section (a sub-folder of the demos folder) is named by its path there,
``SECTION/NAME``: every part follows the rule of a flat entry's name.
"""

from __future__ import annotations

import re

# A clean URL segment that is also a portable file name: lower-case letters, digits,
# '-' and '_', starting with a letter or digit.  Upper case is refused rather than
# folded so that two entries can never collide on a case-insensitive host.
ENTRY_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# Names the site itself uses at its top level; an entry of that name would shadow them.
RESERVED_NAMES = frozenset({"static", "pagefind", "404", "index", "timings", "search", "api"})
# Sections nest this deep at most (Sphinx-Gallery uses one level): SECTION/SUB/NAME.
MAX_SECTION_DEPTH = 2


def check_entry_name(name: str) -> str | None:
    """Return why ``name`` cannot be an entry name, or None when it can."""
    if name in RESERVED_NAMES:
        return f"'{name}' is reserved for the site's own pages"
    if not ENTRY_NAME.match(name):
        return (
            f"'{name}' is not a clean URL segment "
            "(use lower-case letters, digits, '-' and '_', starting with a letter or digit)"
        )
    return None


def check_qualified_name(name: str) -> str | None:
    """Return why ``name`` (``NAME`` or ``SECTION/NAME``) cannot name an entry, or None when it can."""
    parts = name.split("/")
    if len(parts) > MAX_SECTION_DEPTH + 1:
        return f"'{name}' nests sections more than {MAX_SECTION_DEPTH} deep"
    for part in parts:
        why = check_entry_name(part)
        if why:
            return why
    return None


def section_of(name: str) -> str:
    """The section of the entry ``name`` ("" for an entry at the top of the demos folder)."""
    return name.rpartition("/")[0]


def stem_of(name: str) -> str:
    """The bare name of the entry ``name``: its file name without ``.py``."""
    return name.rpartition("/")[2]
