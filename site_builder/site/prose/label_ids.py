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

A block's id is its name (``#B-train``), unless that name cannot be one: a fixed id of the
page (``main``, ``search``, ``value-1``...), an id made from another block's name
(``B-x-output-more``), or not an id at all (``my block``). Such a block gets
``block-NAME`` (its name made an id, then ``-2``... until free) and the page says so;
``block_ids`` decides, from the page's block names alone, so every page that links to a
block (its own, the timings, the API index) finds the same id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PAGE_IDS = frozenset({"main", "search", "search-input", "search-status", "search-results",
                      "theme-toggle", "api-used-heading", "references-heading", "referred-by-heading"})
BLOCK_ID_SUFFIXES = ("-animation-", "-output-more", "-tail-output-more")  # after a block's name
# Ids the page numbers: its values' boxes (and the ids inside them), its interactive figures.
_NUMBERED_IDS = re.compile(r"(?:value|plotly)-\d+(?:-.*)?")
BLOCK_PREFIX = "block-"  # of a block whose name cannot be its id
LABEL_PREFIX = "label-"
# Quarto's cross-reference prefixes: such a label is already a namespaced, readable id.
QUARTO_PREFIXES = ("fig-", "tbl-", "lst-", "eq-", "sec-", "thm-", "lem-", "cor-", "prp-", "cnj-",
                   "def-", "exm-", "exr-", "sol-", "rem-")
# What a label may hold to be an id and a URL fragment as it is: letters, digits, _ . : -
_ID_LABEL = re.compile(r"[\w.:-]+")
_NOT_ID = re.compile(r"[^\w.:-]+")
ID_RULE = "an id takes letters, digits and _ . : - only"


def is_id_label(label: str) -> bool:
    """True when ``label`` can be an element's id (no space, quote, ``#``, ``<``...)."""
    return bool(_ID_LABEL.fullmatch(label))


def preferred_id(label: str) -> str:
    """The id ``label`` gets when nothing on its page has it: ``fig-loss``, ``label-intro``."""
    return label if label.startswith(QUARTO_PREFIXES) else LABEL_PREFIX + label


class PageIds:
    """The ids of one page's labels, none of them an id the page gives its own elements
    (``names``: its blocks' names; ``block_id`` gives each its id, ``blocks`` holds them)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        found = block_ids(names)
        self.block_id = {name: anchor for name, (anchor, _why) in found.items()}
        self.renamed = {name: (anchor, why) for name, (anchor, why) in found.items() if why is not None}
        self.blocks = tuple(self.block_id.values())
        self.taken: set[str] = set()

    def owner(self, anchor: str) -> str | None:
        """What on the page holds the id ``anchor`` (not counting labels), or None (``blocks``: the
        blocks' ids)."""
        if anchor in PAGE_IDS or _NUMBERED_IDS.fullmatch(anchor):
            return f"the page's own {anchor!r}"
        return _block_owner(anchor, self.blocks)

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


def _block_owner(anchor: str, blocks: Iterable[str]) -> str | None:
    """The block among ``blocks`` (their ids) whose id, or an id made from it, is ``anchor``."""
    for block in blocks:
        if anchor == block or anchor.startswith(block) and anchor[len(block):].startswith(BLOCK_ID_SUFFIXES):
            return f"block {block}"
    return None


def _name_problem(name: str, others: Iterable[str]) -> str | None:
    """Why the block name ``name`` cannot be its id on a page with the blocks ``others``, or None."""
    if not is_id_label(name):
        return ID_RULE
    if name in PAGE_IDS or _NUMBERED_IDS.fullmatch(name):
        return f"{name} is an id of the page's own"
    clash = _block_owner(name, (other for other in others if other != name))
    return f"it is an id made for {clash}" if clash else None


def block_ids(names: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """Each block name of a page -> (its id, why that is not its name; None when it is)."""
    names = list(names)
    problems = {name: _name_problem(name, names) for name in names}
    taken = [name for name in names if problems[name] is None]
    found: dict[str, tuple[str, str | None]] = {}
    for name in names:
        why = problems[name]
        if why is None:
            found[name] = (name, None)
            continue
        base = BLOCK_PREFIX + (_NOT_ID.sub("-", name).strip("-") or "block")
        anchor, n = base, 1
        while anchor in PAGE_IDS or _block_owner(anchor, taken) or any(_block_owner(other, (anchor,)) for other in taken):
            n += 1
            anchor = f"{base}-{n}"
        taken.append(anchor)
        found[name] = (anchor, why)
    return found
