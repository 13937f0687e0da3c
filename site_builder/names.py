"""Entry names: which strings can name an entry (a URL segment and a file name).

Shared bottom layer: the settings, the discover stage and ``new`` all check names here.
"""

from __future__ import annotations

import re

# A clean URL segment that is also a portable file name: lower-case letters, digits,
# '-' and '_', starting with a letter or digit.  Upper case is refused rather than
# folded so that two entries can never collide on a case-insensitive host.
ENTRY_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# Names the site itself uses at its top level; an entry of that name would shadow them.
RESERVED_NAMES = frozenset({"static", "pagefind", "404", "index", "timings", "search"})


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
