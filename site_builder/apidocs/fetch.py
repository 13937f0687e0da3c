"""Fetch a package's ``objects.inv`` over http(s) and keep it in the records folder.

The cache, ``<records>/_inventories/<package>.inv`` with ``<package>.json`` beside it
(the URL and the fetch time), is meant to be committed: ``--frozen`` builds and CI read
it and never fetch.  Everything fetched is untrusted: only http(s) URLs (redirects
included), a timeout, and a size cap.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from site_builder.config import ApiDocsSource
from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular, write_new

if TYPE_CHECKING:
    import urllib.request

log = logging.getLogger(__name__)

CACHE_FOLDER = "_inventories"  # inside the records folder; entry names never start with "_"
MAX_COMPRESSED = 8 << 20  # bytes of an objects.inv read, fetched or local
SECONDS_PER_DAY = 86400.0


class InventoryUnavailable(Exception):
    """An inventory that cannot be had; ``str()`` is the reason, for the user."""


@dataclass(frozen=True)
class CachedInventory:
    """A fetched inventory as the cache keeps it."""

    data: bytes
    url: str  # where it was fetched from
    fetched: float  # Unix time of the fetch


def inventory_url(source: ApiDocsSource) -> str:
    """Where a package's inventory is fetched from: its base URL + ``objects.inv``."""
    return source.url + "objects.inv"


def _opener() -> urllib.request.OpenerDirector:
    """An opener built from scratch: no file:, ftp: or data: handler at all, and redirects
    followed only to http(s) URLs (urllib would also follow ftp:)."""
    # urllib.request and http.client (email, ssl: ~35 ms) only when an inventory is fetched
    import urllib.error
    import urllib.request

    class HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
            if urlsplit(newurl).scheme not in ("http", "https"):
                raise urllib.error.HTTPError(newurl, code, f"redirected to a non-http(s) URL {newurl!r}", headers, fp)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    HttpOnlyRedirects(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.HTTPDefaultErrorHandler()):
        opener.add_handler(handler)
    return opener


def download(url: str, timeout: float) -> bytes:
    """The body of ``url`` (http or https only), at most MAX_COMPRESSED bytes; InventoryUnavailable else."""
    if urlsplit(url).scheme not in ("http", "https"):
        raise InventoryUnavailable(f"{url!r} is not an http(s) URL")
    import http.client
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"User-Agent": "site_builder (objects.inv)"})
    deadline = time.monotonic() + timeout
    try:
        with _opener().open(request, timeout=timeout) as response:
            final = response.geturl()
            if urlsplit(final).scheme not in ("http", "https"):
                raise InventoryUnavailable(f"{url} redirected to a non-http(s) URL")
            chunks: list[bytes] = []
            size = 0
            # the timeout bounds each read; the deadline bounds a server that trickles bytes
            while chunk := response.read(1 << 16):
                size += len(chunk)
                if size > MAX_COMPRESSED:
                    raise InventoryUnavailable(f"{url} is larger than {size_shown(MAX_COMPRESSED)}")
                if time.monotonic() > deadline:
                    raise InventoryUnavailable(f"{url} did not arrive within {timeout:g} s")
                chunks.append(chunk)
            expected = response.headers.get("Content-Length", "")
            if expected.isdigit() and size < int(expected):
                raise InventoryUnavailable(f"{url} is truncated ({size} of {expected} bytes arrived)")
            return b"".join(chunks)
    except urllib.error.HTTPError as exc:
        raise InventoryUnavailable(f"{url} answered HTTP {exc.code} ({exc.reason})") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise InventoryUnavailable(f"{url} did not answer within {timeout:g} s") from None
        raise InventoryUnavailable(f"{url} is unreachable ({reason})") from None
    except TimeoutError:
        raise InventoryUnavailable(f"{url} did not answer within {timeout:g} s") from None
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise InventoryUnavailable(f"{url} could not be read ({type(exc).__name__}: {exc})") from None


def size_shown(size: int) -> str:
    """A size limit for a message: "8 MiB", or bytes below one MiB."""
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size} bytes"


def read_cache(records_dir: Path, package: str) -> CachedInventory | None:
    """The cached inventory of ``package``, or None when there is none (or it is unreadable)."""
    try:
        with open_regular(records_dir, f"{CACHE_FOLDER}/{package}.json") as f:
            meta = json.loads(f.read(1 << 16))
        with open_regular(records_dir, f"{CACHE_FOLDER}/{package}.inv") as f:
            data = f.read(MAX_COMPRESSED + 1)
    except (UnsafeFileError, UnsafePathError, OSError, ValueError):
        return None
    if (not isinstance(meta, dict) or not isinstance(meta.get("url"), str)
            or not isinstance(meta.get("fetched"), (int, float)) or len(data) > MAX_COMPRESSED):
        return None
    return CachedInventory(data, meta["url"], float(meta["fetched"]))


def is_fresh(cached: CachedInventory, source: ApiDocsSource, now: float) -> bool:
    """The cache is of this URL and younger than the package's ``refresh_days``."""
    return cached.url == inventory_url(source) and now - cached.fetched < source.refresh_days * SECONDS_PER_DAY


def write_cache(records_dir: Path, package: str, cached: CachedInventory, shown: str) -> str | None:
    """Keep a fetched inventory (atomically, through no link); a warning when it cannot be kept
    (``shown``: the cache folder as messages show it)."""
    folder = records_dir / CACHE_FOLDER
    try:
        records_dir.mkdir(parents=True, exist_ok=True)
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            folder.mkdir()
            mode = os.lstat(folder).st_mode
        if not stat.S_ISDIR(mode):
            return f"api_docs {package}: {shown} is not a folder: the inventory is not cached"
        meta = json.dumps({"url": cached.url, "fetched": int(cached.fetched),
                           "fetched_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(cached.fetched))},
                          indent=1, sort_keys=True) + "\n"
        for name, data in ((f"{package}.inv", cached.data), (f"{package}.json", meta.encode())):
            temporary = folder / f".{name}.{os.getpid()}.tmp"
            write_new(temporary, data)
            os.replace(temporary, folder / name)  # replaces a planted link itself, never its target
    except OSError as exc:
        return f"api_docs {package}: cannot cache the inventory in {shown} ({exc.strerror})"
    return None
