"""The keys of each entry's page and notebook, and of the site-wide files (see plan.Rebuild).

A page's key covers what its bytes depend on: the builder, the settings, its script's prose
and requirements, its notebook's key (its script, its result), its neighbours in the site's
order, the other entries it may link to, its part of the site's connections, the glued values
it pastes. Most of those are the same for every page (``context``): when the last build's
context holds, an entry whose own inputs are as that build saved them (``kept``) keeps its
saved keys instead of hashing them again; any other entry is keyed as a full computation
would, so the keys are the same either way.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from site_builder.json_text import fields
from site_builder.source.expressions.places import pastes_from_other_entries
from site_builder.site.rebuild.lend import content_digest
from site_builder.site.rebuild.state import sha_of
from site_builder.site.sitefiles import HOME, EntryBuild, SiteInfo, is_section_home

if TYPE_CHECKING:
    from site_builder.site.references.site import SiteReferences

# reST's :ref: and :doc: (gallery examples by title) and Jupyter Book's {tableofcontents} (every page's)
_REFERS_TO_ENTRIES = re.compile(r":(?:std:)?(?:ref|doc):`|\{tableofcontents\}")


@dataclass(frozen=True)
class PageKeys:
    """Per entry the key of its notebook and of its page; the key of the site-wide files; and
    what every page's key shares (saved, for the next build's ``kept``)."""

    notebooks: dict[str, str]
    pages: dict[str, str]
    site: str
    context: str


def page_keys(ordered: list[EntryBuild], info: SiteInfo, notebook_base: str, page_base: str,
              digests: dict[str, str], root: Path, connections: SiteReferences, connections_key: str,
              saved_context: str, kept: Callable[[EntryBuild, str], tuple[str, str] | None]) -> PageKeys:
    """The keys of the builds (``ordered``: in site order). ``digests``: the result digests known
    (of records unchanged), completed here for every entry; ``root``: the project folder, which
    the results' folders are named relative to; ``connections``: what each page shows of the
    others and of the bibliography (labels, titles, works, terms), made from what
    ``connections_key`` names (references.index.index_key). When ``saved_context`` (the last
    build's context) is this build's, ``kept(build, result digest)`` gives an entry's saved
    (notebook, page) keys when its own inputs are as saved, else None."""
    neighbours = [f"{b.entry.name}\0{b.script.summary}\0{b.script.title}" for b in ordered]
    notebooks: dict[str, str] = {}
    pages: dict[str, str] = {}
    # What the site-wide pages show of each entry: its index line (name, summary, outcome),
    # its timings and environment (the result), its sitemap line; not its code or prose.
    listed: list[str] = []
    site_entries = sha_of(*neighbours)
    glued = sha_of(*(b.glued_key for b in ordered))  # what {glue}`other.ipynb::name` pastes
    shown = sha_of(repr(info))  # the site-wide settings every page shows: one repr, not one per page
    values = repr(info.values)
    context = sha_of(page_base, notebook_base, shown, values, site_entries, glued, connections_key)
    same = context == saved_context
    for i, build in enumerate(ordered):
        name = build.entry.name
        result = digests[name] = digests.get(name) or _result_digest(build, root)
        listed += [neighbours[i], result, repr(build.script.thumbnail_number)]
        saved = kept(build, result) if same else None
        if saved is not None:
            notebooks[name], pages[name] = saved
            continue
        notebooks[name] = sha_of(notebook_base, name, values, content_digest(build.entry), result)
        prev = neighbours[i - 1] if i > 0 else ""
        next = neighbours[i + 1] if i + 1 < len(neighbours) else ""
        # the notebook's key covers what the script's text decides; its requirements also
        # depend on the local modules beside it
        # prose that may refer to other entries (:ref:, :doc:) links them (by title) when in the site
        others = site_entries if _REFERS_TO_ENTRIES.search(build.entry.source) else ""
        pasted = glued if pastes_from_other_entries(build.script) else ""
        pages[name] = sha_of(page_base, shown, build.script.prose, repr(build.script.requirements),
                             notebooks[name], prev, next, others, connections.page_key(name), pasted)
    # the home page (index.qmd at the top) and the sections' pages are site-wide pages showing their entry's
    homes = [pages[b.entry.name] for b in ordered if is_section_home(b.entry.name, b.entry.format)]
    site = sha_of(page_base, shown, *listed, connections.site_key(), pages.get(HOME, ""), *homes)
    return PageKeys(notebooks, pages, site, context)


def _result_digest(build: EntryBuild, root: Path) -> str:
    """Every output, time and file of the run the page shows, the same whether just run or read back,
    and wherever the project lies: its files' folder as a path inside ``root`` (a project moved or
    checked out elsewhere keeps its pages), the absolute path only for a folder outside it."""
    result, folder, inside = build.result, str(build.result.files_dir), f"{root}/"
    if folder.startswith(inside):
        result = dataclasses.replace(result, files_dir=Path(folder[len(inside):]))
    data = json.dumps(result, sort_keys=True, default=_plain, ensure_ascii=False)
    return sha_of(data)


def _plain(value: Any) -> Any:
    """A dataclass as its fields (no deep copy: ``dataclasses.asdict`` costs 8 ms a result), else text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return fields(value)
    return str(value)
