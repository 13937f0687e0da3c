"""Entry names: which strings can name an entry (a URL segment and a file name).

Shared bottom layer: the settings, the discover stage and ``new`` all check names here.
An entry in a section (a sub-folder of the demos folder) is named by its path there,
``SECTION/NAME``: every part follows the rule of a flat entry's name.
"""

from __future__ import annotations

import re
import unicodedata

# A clean URL segment that is also a portable file name: lower-case letters, digits,
# '-' and '_', starting with a letter or digit.  Upper case is refused rather than
# folded so that two entries can never collide on a case-insensitive host.
ENTRY_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# Names the site itself uses at its top level; an entry of that name would shadow them.
RESERVED_NAMES = frozenset({"static", "pagefind", "404", "index", "timings", "search", "api"})
# A document (index.qmd, .md, .ipynb) of that name is the home page of the site or of its section.
HOME_DOCUMENT = "index"
# Sections nest this deep at most (Sphinx-Gallery uses one level; a Quarto website or a Jupyter
# Book's folders go deeper: docs/download/changelog/1.1/): SECTION/SUB/SUB/SUB/NAME.
MAX_SECTION_DEPTH = 4


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


# Runs of characters a URL segment does not keep (after folding to lower-case ASCII).
_NOT_SEGMENT = re.compile(r"[^a-z0-9_-]+")


def url_segment(file_stem: str) -> str:
    """The entry name a file called ``file_stem`` (its name without the suffix) gets.

    Unicode is folded to ASCII (NFKD, marks dropped), upper case to lower case, every run of
    characters other than ``a-z 0-9 _ -`` becomes one ``-``, and ``-``/``_`` are trimmed from
    both ends: ``02.01-Understanding Data Types`` -> ``02-01-understanding-data-types``,
    ``Über Plot`` -> ``uber-plot``. "" when nothing is left (the caller refuses the file).
    """
    folded = unicodedata.normalize("NFKD", file_stem).encode("ascii", "ignore").decode("ascii")
    return _NOT_SEGMENT.sub("-", folded.lower()).strip("-_")[:64].rstrip("-_")


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
