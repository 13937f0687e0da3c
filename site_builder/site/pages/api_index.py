"""Where each documented API is used: ``api/index.html`` and ``_downloads/api_usage.json``.

Both list every documented object that some entry's code names itself (a variable's type
is linked in the code but is not a use), grouped by package, A-Z, each with the entries and
blocks naming it.  The JSON is for other documentation sites ("Examples using X" on a Sphinx
API page); its format is documented in the README and versioned by ``API_USAGE_VERSION``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from site_builder.apidocs.inventory import ApiTarget
from site_builder.json_text import indented
from site_builder.site.downloads.archives import ARCHIVE_DIR
from site_builder.site.outputs.thumbnails import Thumbnail

API_DIR = "api"  # the page's folder; a reserved entry name (names.RESERVED_NAMES)
API_PAGE = f"{API_DIR}/index.html"
API_USAGE = f"{ARCHIVE_DIR}/api_usage.json"
API_USAGE_FORMAT = "site_builder-api-usage"
API_USAGE_VERSION = 1  # bump when the JSON's layout or meaning changes
_ROLE_WORDS = {"function": "function", "class": "class", "method": "method", "attribute": "attribute",
               "module": "module", "data": "data", "exception": "exception", "property": "property",
               "classmethod": "class method", "staticmethod": "static method"}


@dataclass(frozen=True)
class EntryUse:
    """One entry naming an object: where its page is, which blocks name it."""

    name: str  # the entry's name ("plots", "section/plots")
    label: str  # its title on the index
    blocks: tuple[str, ...]  # its blocks naming the object, in page order
    thumbnail: Thumbnail | None
    anchors: tuple[str, ...] = ()  # those blocks' ids on its page (label_ids.block_ids; () : their names)


@dataclass(frozen=True)
class ApiUse:
    """One documented object and the entries naming it."""

    target: ApiTarget
    anchor: str  # its id on the API page
    kind: str  # "function", "class method", ...
    entries: tuple[EntryUse, ...]


@dataclass(frozen=True)
class PackageGroup:
    """The used objects of one package, A-Z."""

    package: str
    anchor: str
    uses: tuple[ApiUse, ...]


def role_word(role: str) -> str:
    """``py:function`` -> "function"."""
    kind = role.rpartition(":")[2]
    return _ROLE_WORDS.get(kind, kind)


def api_anchor(name: str) -> str:
    """The id of an object on the API page (``api-numpy.linalg.norm``): valid, unique per name."""
    return "api-" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def api_groups(uses: Mapping[str, Mapping[str, tuple[ApiTarget, tuple[str, ...]]]],
               entries: list[dict[str, object]], anchors: Mapping[str, Mapping[str, str]] | None = None
               ) -> list[PackageGroup]:
    """``uses``: entry -> (full name -> (object, blocks)); ``entries``: the index's views of the
    entries (name, label, thumbnail), in site order; ``anchors``: entry -> block name -> its id
    on the entry's page -> the API page's groups."""
    anchors = anchors or {}
    labels = {str(e["name"]): str(e["label"]) for e in entries}
    thumbnails = {str(e["name"]): e["thumbnail"] for e in entries}
    objects: dict[str, tuple[ApiTarget, list[EntryUse]]] = {}
    for entry in labels:
        for name, (target, blocks) in uses.get(entry, {}).items():
            thumbnail = thumbnails[entry]
            ids = tuple(anchors.get(entry, {}).get(block, block) for block in blocks)
            objects.setdefault(name, (target, []))[1].append(
                EntryUse(entry, labels[entry], blocks, thumbnail if isinstance(thumbnail, Thumbnail) else None, ids))
    packages: dict[str, list[ApiUse]] = {}
    for name in sorted(objects, key=lambda n: (n.lower(), n)):
        target, entries = objects[name]
        packages.setdefault(target.package, []).append(
            ApiUse(target, api_anchor(name), role_word(target.role), tuple(entries)))
    return [PackageGroup(p, api_anchor(f"package-{p}"), tuple(packages[p])) for p in sorted(packages)]


def api_usage_json(groups: list[PackageGroup], site_url: str | None) -> bytes:
    """The map object -> entries as ``_downloads/api_usage.json`` (stable bytes: sorted, no time)."""
    base = site_url.rstrip("/") + "/" if site_url else None
    objects = {}
    for group in groups:
        for use in group.uses:
            objects[use.target.name] = {
                "package": group.package,
                "role": use.target.role,
                "docs": use.target.url,
                "entries": [{
                    "entry": e.name,
                    "title": e.label,
                    "page": f"{e.name}/index.html",
                    "url": f"{base}{e.name}/index.html" if base else None,
                    "blocks": list(e.blocks),
                    "thumbnail": e.thumbnail.src if e.thumbnail else None,
                } for e in use.entries],
            }
    data = {"format": API_USAGE_FORMAT, "version": API_USAGE_VERSION, "site_url": base, "objects": objects}
    return (indented(data, ensure_ascii=False) + "\n").encode("utf-8")


def entry_uses(used: Mapping[str, tuple[ApiTarget, tuple[str, ...]]]) -> tuple[ApiUse, ...]:
    """The APIs one entry names (see code_links.used_targets), A-Z, for the end of its page."""
    return tuple(ApiUse(target, api_anchor(name), role_word(target.role), ())
                 for name, (target, _blocks) in sorted(used.items(), key=lambda kv: (kv[0].lower(), kv[0])))
