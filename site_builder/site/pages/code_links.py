"""Code that links to its documentation: a run's name records + the inventories -> links.

Each block's record says what its names denoted when it ran (``BlockResult.names``); the
first of a name's candidate full names that an inventory lists becomes a link.  Where
chains nest (``np``, ``np.linalg``, ``np.linalg.norm`` all start at one column) the longest
documented one wins.  The highlighter (site/highlight.py) then wraps each linked name's
token spans in an ``<a>``: the highlighting colours stay, the text (what Copy copies) is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

from site_builder.apidocs.inventory import ApiDocs, ApiTarget
from site_builder.run.execute import BlockResult, RunResult
from site_builder.run.name_refs import NameRef
from site_builder.site.highlight import CodeLink



def _target(ref: NameRef, api_docs: ApiDocs) -> tuple[ApiTarget, bool] | None:
    for k, name in enumerate(ref.names):
        found = api_docs.lookup(name)
        if found is not None:
            return found, k < ref.explicit
    return None


def block_links(block: BlockResult | None, api_docs: ApiDocs) -> tuple[CodeLink, ...]:
    """The links of one block's code, in code order, never overlapping."""
    if block is None or not block.names or not api_docs:
        return ()
    best: dict[tuple[int, int], CodeLink] = {}
    for ref in block.names:
        key = (ref.line, ref.col)
        if key in best and best[key].end_col >= ref.end_col:
            continue
        found = _target(ref, api_docs)
        if found is not None:
            best[key] = CodeLink(ref.line, ref.col, ref.end_col, found[0], found[1])
    links: list[CodeLink] = []
    for key in sorted(best):
        link = best[key]
        if links and links[-1].line == link.line and link.col < links[-1].end_col:
            continue  # inside a longer linked chain
        links.append(link)
    return tuple(links)


def used_targets(blocks: Iterable[tuple[str, tuple[CodeLink, ...]]]) -> dict[str, tuple[ApiTarget, tuple[str, ...]]]:
    """Full name -> (the object, the blocks naming it), for the objects the code names itself."""
    found: dict[str, tuple[ApiTarget, list[str]]] = {}
    for block, links in blocks:
        for link in links:
            if link.explicit:
                target, where = found.setdefault(link.target.name, (link.target, []))
                if block not in where:
                    where.append(block)
    return {name: (target, tuple(where)) for name, (target, where) in sorted(found.items())}


class SiteCodeLinks:
    """Each entry's code links in one site build, found once: its page and the API page need them."""

    def __init__(self, api_docs: ApiDocs) -> None:
        self.api_docs = api_docs
        self._found: dict[str, dict[str, tuple[CodeLink, ...]]] = {}

    def of(self, result: RunResult) -> dict[str, tuple[CodeLink, ...]]:
        """Block name -> its code links."""
        found = self._found.get(result.entry)
        if found is None:
            found = self._found[result.entry] = {b.name: block_links(b, self.api_docs) for b in result.blocks}
        return found

    def used(self, result: RunResult) -> dict[str, tuple[ApiTarget, tuple[str, ...]]]:
        """The objects the entry's code names itself (see :func:`used_targets`)."""
        return used_targets(self.of(result).items())
