"""The ids prose labels get: a namespace of their own, apart from every id the page gives.

An entry page's own ids (templates/base.html, entry.html, _output.html and the renderer):
``main``, ``search``, ``search-input``, ``search-status``, ``search-results``,
``theme-toggle``, ``api-used-heading``; each block's name (its ``<section>``) and the ids
made from it, ``NAME-animation-N``, ``NAME-output-more[-N]``, ``NAME-tail-output-more[-N]``;
``value-N`` (and ``value-N-...`` inside a value), ``plotly-N``; prose headings' and reST's
ids, ``prose-N-...`` and ``intro-...``; ``references-heading``, ``referred-by-heading``, the References
list's ``bib-KEY`` and a glossary's ``term-TERM`` (site/references).

A label (MyST's ``(label)=``, a directive's ``:label:`` or ``:name:``, ``$$ (label)``, a
code cell's ``#| label:``) gets the id ``label-LABEL``, or ``LABEL`` itself when it starts
with a Quarto prefix (``fig-``, ``tbl-``, ``eq-``, ``sec-``, ...): no fixed id of the page has
either form.  Block names are the author's, so one may still take a label's id: that label
then gets the next free id (``label-fig-x``, ``label-x-2``), and the page says so.
"""

from __future__ import annotations

import re

PAGE_IDS = frozenset({"main", "search", "search-input", "search-status", "search-results",
                      "theme-toggle", "api-used-heading", "references-heading", "referred-by-heading"})
BLOCK_ID_SUFFIXES = ("-animation-", "-output-more", "-tail-output-more")  # after a block's name
LABEL_PREFIX = "label-"
# Quarto's cross-reference prefixes: such a label is already a namespaced, readable id.
QUARTO_PREFIXES = ("fig-", "tbl-", "lst-", "eq-", "sec-", "thm-", "lem-", "cor-", "prp-", "cnj-",
                   "def-", "exm-", "exr-", "sol-", "rem-")
# What a label may hold to be an id and a URL fragment as it is: letters, digits, _ . : -
_ID_LABEL = re.compile(r"[\w.:-]+")
ID_RULE = "an id takes letters, digits and _ . : - only"


def is_id_label(label: str) -> bool:
    """True when ``label`` can be an element's id (no space, quote, ``#``, ``<``...)."""
    return bool(_ID_LABEL.fullmatch(label))


def preferred_id(label: str) -> str:
    """The id ``label`` gets when nothing on its page has it: ``fig-loss``, ``label-intro``."""
    return label if label.startswith(QUARTO_PREFIXES) else LABEL_PREFIX + label


class PageIds:
    """The ids of one page's labels, none of them an id the page gives its own elements."""

    def __init__(self, blocks: tuple[str, ...] = ()) -> None:
        self.blocks = blocks
        self.taken: set[str] = set()

    def owner(self, anchor: str) -> str | None:
        """What on the page holds the id ``anchor`` (not counting labels), or None."""
        if anchor in PAGE_IDS:
            return f"the page's own {anchor!r}"
        for block in self.blocks:
            if anchor == block or anchor.startswith(tuple(block + suffix for suffix in BLOCK_ID_SUFFIXES)):
                return f"block {block}"
        return None

    def allocate(self, label: str) -> tuple[str, str | None]:
        """A new id for ``label``, unique on the page, and what would have held its preferred
        id (None when nothing did)."""
        wanted = preferred_id(label)
        clash = self.owner(wanted)
        base = LABEL_PREFIX + label if clash is not None and not wanted.startswith(LABEL_PREFIX) else wanted
        anchor, n = base, 1
        while anchor in self.taken or self.owner(anchor) is not None:
            n += 1
            anchor = f"{base}-{n}"
        self.taken.add(anchor)
        return anchor, clash
