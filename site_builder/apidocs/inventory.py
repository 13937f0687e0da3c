"""Sphinx inventories (``objects.inv``, version 2) and the lookup of a Python object's docs page.

An inventory is untrusted data: its size is capped (compressed and decompressed), it is
parsed with a regular expression (nothing is evaluated), and an entry is kept only when its
link is a plain relative URL that stays under the configured base, so every URL produced is
``http(s)://`` below that base.  A package whose inventory cannot be had is one warning;
the build goes on without its links.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import sys
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from site_builder.apidocs import fetch
from site_builder.apidocs.fetch import CACHE_FOLDER, MAX_COMPRESSED, CachedInventory, InventoryUnavailable, size_shown
from site_builder.config import ApiDocsSource
from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular, relative_to_root

log = logging.getLogger(__name__)

MAX_DECOMPRESSED = 64 << 20  # the largest inventories known (Python's, NumPy's) are a few MiB
_HEADER = "# Sphinx inventory version 2"
# Sphinx's own line pattern: name, domain:role, priority, uri, display name.
# Sphinx's own line pattern, with possessive runs where giving characters back cannot help: an
# inventory is data from elsewhere, and the plain pattern is quadratic on a long line that fails.
_LINE = re.compile(r"(.*?\S)\s++(\S++)\s++(-?\d++)\s+?(\S*+)\s+(.*)")  # a name ends at a non-blank
_ENTRY = re.compile(r"^\S.*?\s[^\s:]++:\S++\s+-?\d+\s", re.MULTILINE)  # some line is an entry
# What a relative URL of a documentation page may hold; no quote, space, '<', '>' or '\'.
_SAFE_URI = re.compile(r"[A-Za-z0-9\-._~/#%+!$&'()*,;=:@?]*")
PYTHON = "python"  # the settings key whose inventory is the standard library's


@dataclass(frozen=True)
class ApiTarget:
    """Where one documented object's page is."""

    name: str  # the full dotted name, as the inventory lists it ("numpy.linalg.norm")
    role: str  # the inventory's domain:role, e.g. "py:function", "py:class", "py:method"
    url: str  # absolute http(s) URL, always under the package's configured base
    package: str  # the settings key (top-level import name) whose inventory lists it


class Inventory:
    """One package's inventory, checked; its Python objects are parsed on first use (a
    build whose pages are all unchanged never pays for it)."""

    def __init__(self, package: str, base: str, digest: str, text: str) -> None:
        self.package = package
        self.base = base
        self.digest = digest  # sha256 of the objects.inv bytes
        self._text = text  # the decompressed entries
        self._parsed: tuple[dict[str, tuple[tuple[str, str], ...]], int] | None = None
        self._by_last: dict[str, list[str]] | None = None

    def parsed(self) -> tuple[dict[str, tuple[tuple[str, str], ...]], int]:
        """name -> ((role, url), ...) of its Python objects, and how many entries were left out
        because their link would leave the base URL."""
        if self._parsed is None:
            self._parsed = _python_objects(self._text, self.base)
        return self._parsed

    def ending_in(self, last: str) -> list[str]:
        """The names of its Python objects whose last part is ``last`` (for Sphinx's ``.name`` search)."""
        if self._by_last is None:
            self._by_last = {}
            for name in self.parsed()[0]:
                self._by_last.setdefault(name.rpartition(".")[2], []).append(name)
        return self._by_last.get(last, [])


class InventoryMalformed(Exception):
    """An objects.inv that cannot be read; ``str()`` is the reason, for the user."""


class ApiDocs:
    """The loaded inventories: a full dotted name -> its documentation page."""

    def __init__(self, inventories: Iterable[Inventory] = ()) -> None:
        self._inventories = tuple(inventories)
        self._by_package = {inv.package: inv for inv in self._inventories}
        self._warned: set[str] = set()
        self._fingerprint = hashlib.sha256(
            "\0".join(f"{i.package}\0{i.base}\0{i.digest}" for i in self._inventories).encode()).hexdigest()

    @property
    def packages(self) -> tuple[str, ...]:
        """The settings keys whose inventory is loaded, in the settings' order."""
        return tuple(inv.package for inv in self._inventories)

    def __bool__(self) -> bool:
        return bool(self._inventories)

    def fingerprint(self) -> str:
        """A hash of what is loaded (packages, base URLs, inventory bytes): part of pages' cache keys."""
        return self._fingerprint

    def __repr__(self) -> str:  # stable: page keys hash the site settings' repr
        return f"ApiDocs({self._fingerprint[:16]})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApiDocs) and other._fingerprint == self._fingerprint

    def __hash__(self) -> int:
        return hash(self._fingerprint)

    def lookup(self, name: str, roles: Iterable[str] | None = None) -> ApiTarget | None:
        """The page of the object named exactly ``name`` (optionally only with one of ``roles``)."""
        wanted = None if roles is None else set(roles)
        candidates = [name]
        if name.startswith("builtins."):  # Python's inventory lists builtins bare: "print", "int"
            candidates.append(name.removeprefix("builtins."))
        for candidate in candidates:
            for inv in self._search_order(candidate):
                for role, url in self._objects(inv).get(candidate, ()):
                    if wanted is None or role in wanted:
                        return ApiTarget(candidate, role, url, inv.package)
        return None

    def lookup_suffix(self, suffix: str, roles: Iterable[str] | None = None) -> ApiTarget | None:
        """The object whose full name ends in ``.suffix`` (Sphinx's ``.Axes.plot``), the shortest
        such name when several do (Sphinx takes one of them too); None when none does."""
        wanted = None if roles is None else set(roles)
        found: list[tuple[int, str, Inventory]] = []
        for inv in self._inventories:
            objects = self._objects(inv)
            for name in inv.ending_in(suffix.rpartition(".")[2]):
                if (name == suffix or name.endswith("." + suffix)) and any(
                        wanted is None or role in wanted for role, _ in objects[name]):
                    found.append((len(name), name, inv))
        if not found:
            return None
        _, name, inv = min(found, key=lambda item: (item[0], item[1]))
        role, url = next((r, u) for r, u in self._objects(inv)[name] if wanted is None or r in wanted)
        return ApiTarget(name, role, url, inv.package)

    def _objects(self, inv: Inventory) -> dict[str, tuple[tuple[str, str], ...]]:
        objects, rejected = inv.parsed()
        if rejected and inv.package not in self._warned:  # once per build (each build has its ApiDocs)
            self._warned.add(inv.package)
            log.warning("api_docs %s: %d inventory entries link outside %s (or not over http/https) and "
                        "were left out", inv.package, rejected, inv.base)
        return objects

    def _search_order(self, name: str) -> list[Inventory]:
        """The inventory of the name's own package first (the standard library's for its
        modules and for builtins), then the others in the settings' order."""
        top = name.partition(".")[0]
        own = self._by_package.get(top)
        if own is None and (top in sys.stdlib_module_names or "." not in name):
            own = self._by_package.get(PYTHON)
        if own is None:
            return list(self._inventories)
        return [own, *(inv for inv in self._inventories if inv is not own)]


def _safe_url(base: str, uri: str) -> str | None:
    """``base + uri`` when ``uri`` is a plain relative link that stays under ``base``, else None.

    ``base`` is an http(s) URL of a folder (config checks it): a relative path without a
    scheme, a leading '/', or a '.' or '..' segment (even percent-encoded) cannot leave it.
    """
    if not _SAFE_URI.fullmatch(uri):
        return None  # a space, quote, '<', '>', '\\' or control character
    path = uri.partition("#")[0].partition("?")[0]
    if ":" in path or path.startswith("/"):
        return None  # a scheme (javascript:), or a path from the host's root or another host (//)
    if "." in path or "%" in path:
        for segment in path.split("/"):
            decoded = unquote(segment) if "%" in segment else segment
            if decoded in (".", "..") or "/" in decoded or "\\" in decoded:
                return None
    return base + uri


def _decompress(body: bytes) -> bytes:
    engine = zlib.decompressobj()
    try:
        data = engine.decompress(body, MAX_DECOMPRESSED)
    except zlib.error as exc:
        raise InventoryMalformed(f"its compressed part is not zlib data ({exc})") from None
    if engine.unconsumed_tail:
        raise InventoryMalformed(f"it decompresses to more than {size_shown(MAX_DECOMPRESSED)}")
    if not engine.eof:
        raise InventoryMalformed("it is truncated (its compressed part ends early)")
    return data


@functools.lru_cache(maxsize=16)  # `serve` rebuilds read each inventory once
def parse_inventory(data: bytes, package: str, base: str) -> Inventory:
    """The checked inventory of an objects.inv's bytes, its URLs under ``base``; InventoryMalformed else."""
    if len(data) > MAX_COMPRESSED:
        raise InventoryMalformed(f"it is larger than {size_shown(MAX_COMPRESSED)}")
    parts = data.split(b"\n", 4)
    first = parts[0].decode("utf-8", "replace").rstrip()
    if first != _HEADER:
        if first.startswith("# Sphinx inventory version"):
            raise InventoryMalformed(f"'{first[2:]}' is not supported (only version 2, Sphinx >= 1.0)")
        raise InventoryMalformed("it is not a Sphinx inventory (no '# Sphinx inventory version 2' header)")
    if len(parts) < 5 or b"zlib" not in parts[3]:
        raise InventoryMalformed("it is truncated or not zlib-compressed (its four-line header is incomplete)")
    try:
        text = _decompress(parts[4]).decode("utf-8")
    except UnicodeDecodeError:
        raise InventoryMalformed("its entries are not UTF-8 text") from None
    if text.strip() and not _ENTRY.search(text):
        raise InventoryMalformed(f"none of its {len(text.splitlines())} lines is an inventory entry")
    return Inventory(package, base, hashlib.sha256(data).hexdigest(), text)


def _python_objects(text: str, base: str) -> tuple[dict[str, tuple[tuple[str, str], ...]], int]:
    """The Python objects of an inventory's entries with their URLs, and the number left out."""
    objects: dict[str, list[tuple[str, str]]] = {}
    rejected = 0
    for line in text.splitlines():
        # Python objects' names hold no space: split, and fall back on Sphinx's pattern otherwise
        fields = line.split(" ", 4)
        if len(fields) == 5 and ":" in fields[1] and fields[2].lstrip("-").isdigit():
            name, kind, _priority, uri, _display = fields
        else:
            match = _LINE.fullmatch(line.rstrip())
            if not match:
                continue
            name, kind, _priority, uri, _display = match.groups()
        if not kind.startswith("py:"):
            continue  # labels, terms, C++ objects: not Python objects
        if uri.endswith("$"):
            uri = uri[:-1] + name
        url = _safe_url(base, uri)
        if url is None:
            rejected += 1
            continue
        objects.setdefault(name, []).append((kind, url))
    return {k: tuple(v) for k, v in objects.items()}, rejected


def load_api_docs(settings: Iterable[ApiDocsSource], project_root: Path, records_dir: Path, *,
                  frozen: bool, offline: bool = False) -> tuple[ApiDocs, list[str]]:
    """Every configured package's inventory (local, cached, or fetched unless ``frozen`` or
    ``offline``), and one warning per package that could not be loaded, naming the reason."""
    inventories: list[Inventory] = []
    warnings: list[str] = []
    for source in settings:
        try:
            inventory, warning = _load_one(source, project_root, records_dir, fetching=not (frozen or offline),
                                           frozen=frozen)
        except (InventoryUnavailable, InventoryMalformed) as exc:
            warnings.append(f"api_docs {source.package}: {exc}; pages do not link to its documentation")
            continue
        if warning:
            warnings.append(warning)
        inventories.append(inventory)
    for warning in warnings:
        log.debug("%s", warning)
    return ApiDocs(inventories), warnings


def _load_one(source: ApiDocsSource, project_root: Path, records_dir: Path, *, fetching: bool,
              frozen: bool) -> tuple[Inventory, str | None]:
    """One package's inventory and a warning to say although it loaded (a stale cache), if any."""
    package, base = source.package, source.url
    if source.inventory is not None:
        try:
            with open_regular(project_root, source.inventory) as f:
                data = f.read(MAX_COMPRESSED + 1)
        except UnsafeFileError as exc:
            raise InventoryUnavailable(f"the inventory {exc}") from None  # "PATH: it is missing"
        except UnsafePathError:
            raise InventoryUnavailable(f"the inventory {source.inventory!r} is not a path inside the project") from None
        except OSError as exc:
            raise InventoryUnavailable(f"the inventory {source.inventory} cannot be read ({exc.strerror})") from None
        try:
            return parse_inventory(data, package, base), None
        except InventoryMalformed as exc:
            raise InventoryMalformed(f"{source.inventory}: {exc}") from None
    cached = fetch.read_cache(records_dir, package)
    cache = relative_to_root(records_dir / CACHE_FOLDER, project_root)  # as a message shows it
    where = f"{cache}/{package}.inv"
    other_url = ""
    if cached is not None and cached.url != fetch.inventory_url(source):
        other_url, cached = cached.url, None  # fetched from another URL: the settings changed
    if not fetching:
        if cached is None:
            why = "a --frozen build fetches nothing" if frozen else "offline, nothing is fetched"
            what = f"the cached inventory in {where} is {other_url}'s" if other_url else f"no cached inventory in {where}"
            raise InventoryUnavailable(f"{what} ({why}: build once without --frozen, and commit the records folder)")
        return _parsed_cache(cached, package, base, where), None
    now = time.time()
    if cached is not None and fetch.is_fresh(cached, source, now):
        try:
            return parse_inventory(cached.data, package, base), None
        except InventoryMalformed:
            pass  # a damaged cache: fetch again
    url = fetch.inventory_url(source)
    try:
        data = fetch.download(url, source.timeout)
        inventory = parse_inventory(data, package, base)
    except (InventoryUnavailable, InventoryMalformed) as exc:
        reason = str(exc) if isinstance(exc, InventoryUnavailable) else f"{url}: {exc}"
        if cached is None:
            raise InventoryUnavailable(reason) from None
        day = time.strftime("%Y-%m-%d", time.gmtime(cached.fetched))
        inventory = _parsed_cache(cached, package, base, where)
        return inventory, f"api_docs {package}: could not refresh the inventory ({reason}); using the copy fetched {day}"
    return inventory, fetch.write_cache(records_dir, package, CachedInventory(data, url, now), cache)


def _parsed_cache(cached: CachedInventory, package: str, base: str, where: str) -> Inventory:
    try:
        return parse_inventory(cached.data, package, base)
    except InventoryMalformed as exc:
        raise InventoryMalformed(f"{where}: {exc}") from None
