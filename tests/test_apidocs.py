"""API inventories: the [tool.site_builder.api_docs] settings, local files, fetching over a
local HTTP server (200, 404, timeout, truncated, not zlib, oversized, unsafe links), the cache."""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from site_builder.apidocs import fetch, inventory
from site_builder.apidocs.inventory import load_api_docs
from site_builder.config import ApiDocsSource, load_config
from site_builder.errors import UsageError
from tests.inventory_support import inventory_bytes, write_inventory

NUMPY = [
    ("numpy", "py:module", "index.html#module-$"),
    ("numpy.linalg.norm", "py:function", "reference/generated/numpy.linalg.norm.html#$"),
    ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html#$"),
    ("numpy.ndarray.sum", "py:method", "reference/generated/numpy.ndarray.sum.html#$"),
    ("numpy.pi", "py:data", "reference/constants.html#$"),
    ("basics", "std:label", "user/basics.html#basics", "Basics"),  # not a Python object
]


def write_pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text("[tool.site_builder.api_docs]\n" + body, encoding="utf-8")


# ---------------------------------------------------------------- settings


def test_settings_take_a_url_or_a_table(tmp_path: Path) -> None:
    write_pyproject(tmp_path, 'numpy = "https://numpy.org/doc/stable/"\n'
                              'python = "https://docs.python.org/3"\n'
                              'sklearn = { url = "https://scikit-learn.org/stable/", '
                              'inventory = "docs/inventories/sklearn.inv", refresh_days = 1, timeout = 2 }\n')
    sources = load_config(tmp_path).api_docs
    assert [s.package for s in sources] == ["numpy", "python", "sklearn"]
    assert sources[0] == ApiDocsSource("numpy", "https://numpy.org/doc/stable/")
    assert sources[1].url == "https://docs.python.org/3/"  # a folder: the inventory's links join onto it
    assert sources[2].inventory == "docs/inventories/sklearn.inv"
    assert (sources[2].refresh_days, sources[2].timeout) == (1.0, 2.0)


@pytest.mark.parametrize(("body", "message"), [
    ('numpy = { url = "https://numpy.org/doc/", inventroy = "x.inv" }\n', "unknown key api_docs.numpy.inventroy"),
    ('numpy = "ftp://numpy.org/doc/"\n', "must be an http(s) URL"),
    ('numpy = "javascript:alert(1)//"\n', "must be an http(s) URL"),
    ('numpy = 3\n', "must be a URL or a table"),
    ('numpy = { inventory = "x.inv" }\n', "numpy needs a url"),
    ('numpy = { url = "https://n.org/", inventory = "../x.inv" }\n', "must be a path inside the project"),
    ('numpy = { url = "https://n.org/", inventory = "/etc/x.inv" }\n', "must be a path inside the project"),
    ('numpy = { url = "https://n.org/", timeout = 0 }\n', "timeout must be positive"),
    ('"numpy.linalg" = "https://n.org/"\n', "not a top-level import name"),
])
def test_bad_settings_are_errors_naming_the_key(tmp_path: Path, body: str, message: str) -> None:
    write_pyproject(tmp_path, body)
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(tmp_path)


# ---------------------------------------------------------------- local inventories


def _local(tmp_path: Path, entries: list[tuple[str, ...]] = NUMPY, base: str = "https://numpy.org/doc/stable/"):
    write_inventory(tmp_path / "docs" / "numpy.inv", entries)
    source = ApiDocsSource("numpy", base, "docs/numpy.inv")
    return load_api_docs([source], tmp_path, tmp_path / "_freeze", frozen=False)


def test_a_local_inventory_resolves_full_names_to_urls_under_its_base(tmp_path: Path) -> None:
    docs, warnings = _local(tmp_path)
    assert warnings == [] and docs and docs.packages == ("numpy",)
    norm = docs.lookup("numpy.linalg.norm")
    assert norm is not None
    assert norm.url == "https://numpy.org/doc/stable/reference/generated/numpy.linalg.norm.html#numpy.linalg.norm"
    assert (norm.role, norm.package) == ("py:function", "numpy")
    assert docs.lookup("numpy.ndarray", roles=["py:class"]) is not None
    assert docs.lookup("numpy.ndarray", roles=["py:function"]) is None
    assert docs.lookup("basics") is None  # a label, not a Python object
    assert docs.lookup("numpy.linalg") is None  # exact names only
    assert not (tmp_path / "_freeze").exists()  # a local inventory is never cached


def test_fingerprint_is_stable_and_follows_the_inventory(tmp_path: Path) -> None:
    first, _ = _local(tmp_path)
    again, _ = _local(tmp_path)
    changed, _ = _local(tmp_path, NUMPY[:2])
    rebased, _ = _local(tmp_path, base="https://numpy.org/doc/2.0/")
    assert first.fingerprint() == again.fingerprint() and repr(first) == repr(again)
    assert len({first.fingerprint(), changed.fingerprint(), rebased.fingerprint()}) == 3


def test_the_standard_library_and_builtins_come_from_the_python_key(tmp_path: Path) -> None:
    write_inventory(tmp_path / "py.inv", [("os.path.join", "py:function", "library/os.path.html#$"),
                                           ("print", "py:function", "library/functions.html#$")])
    write_inventory(tmp_path / "np.inv", NUMPY)
    docs, _ = load_api_docs([ApiDocsSource("numpy", "https://numpy.org/doc/stable/", "np.inv"),
                             ApiDocsSource("python", "https://docs.python.org/3/", "py.inv")],
                            tmp_path, tmp_path / "_freeze", frozen=False)
    assert docs.lookup("os.path.join").url == "https://docs.python.org/3/library/os.path.html#os.path.join"
    assert docs.lookup("os.path.join").package == "python"
    assert docs.lookup("builtins.print").name == "print"


@pytest.mark.parametrize("uri", [
    "javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "https://evil.example/x.html",
    "//evil.example/x.html", "/x.html", "../other/x.html", "a/../../x.html", "%2e%2e/x.html", "a\\b.html",
    'x.html" onmouseover="alert(1)', "x.html<script>", "a%2f..%2f..%2fx.html",
])
def test_entries_whose_link_leaves_the_base_are_left_out(tmp_path: Path, uri: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    docs, warnings = _local(tmp_path, [("numpy.bad", "py:function", uri), *NUMPY[:2]])
    assert warnings == []  # the entries are read when a page first looks a name up
    assert docs.lookup("numpy.bad") is None
    assert docs.lookup("numpy.linalg.norm") is not None  # the rest of the inventory is kept
    assert [r.getMessage() for r in caplog.records] == [
        "api_docs numpy: 1 inventory entries link outside https://numpy.org/doc/stable/ "
        "(or not over http/https) and were left out"]  # once


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "not a Sphinx inventory"),
    (b"<html>Not found</html>", "not a Sphinx inventory"),
    (b"# Sphinx inventory version 1\n# Project: x\n# Version: 1\nnumpy mod index.html\n", "version 1' is not supported"),
    (inventory_bytes(NUMPY)[:-20], "truncated"),
    (inventory_bytes(NUMPY).split(b"zlib.\n")[0] + b"zlib.\nthis is not compressed", "not zlib data"),
    (inventory_bytes([])[:40], "header is incomplete"),
    (inventory_bytes([]).split(b"zlib.\n")[0] + b"zlib.\n" + zlib.compress(b"\xff\xfe garbage\n"), "not UTF-8"),
    (inventory_bytes([]).split(b"zlib.\n")[0] + b"zlib.\n" + zlib.compress(b"nonsense\nmore\n"), "none of its 2 lines"),
])
def test_a_malformed_inventory_is_one_warning_naming_package_and_reason(tmp_path: Path, data: bytes,
                                                                         reason: str) -> None:
    (tmp_path / "bad.inv").write_bytes(data)
    write_inventory(tmp_path / "good.inv", [("scipy.stats.norm", "py:data", "stats.html#$")])
    docs, warnings = load_api_docs([ApiDocsSource("numpy", "https://numpy.org/doc/stable/", "bad.inv"),
                                    ApiDocsSource("scipy", "https://docs.scipy.org/doc/scipy/", "good.inv")],
                                   tmp_path, tmp_path / "_freeze", frozen=False)
    assert len(warnings) == 1 and warnings[0].startswith("api_docs numpy: bad.inv: ")
    assert reason in warnings[0] and "pages do not link to its documentation" in warnings[0]
    assert docs.packages == ("scipy",) and docs.lookup("scipy.stats.norm") is not None


def test_a_zip_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inventory, "MAX_DECOMPRESSED", 1 << 16)
    inventory.parse_inventory.cache_clear()
    header = inventory_bytes([]).split(b"zlib.\n")[0] + b"zlib.\n"
    (tmp_path / "bomb.inv").write_bytes(header + zlib.compress(b"a py:function 1 x.html -\n" * 100_000))
    docs, warnings = load_api_docs([ApiDocsSource("numpy", "https://n.org/", "bomb.inv")], tmp_path,
                                   tmp_path / "_freeze", frozen=False)
    assert not docs and "decompresses to more than" in warnings[0]


def test_a_local_inventory_must_be_a_regular_file_inside_the_project(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_inventory(outside / "numpy.inv", NUMPY)
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "numpy.inv").symlink_to(outside / "numpy.inv")
    (project / "linked").symlink_to(outside, target_is_directory=True)
    for rel, reason in [("docs/numpy.inv", "it is a symbolic link"), ("linked/numpy.inv", "linked/ is a symbolic link"),
                        ("docs/missing.inv", "it is missing"), ("docs", "not a regular file")]:
        docs, warnings = load_api_docs([ApiDocsSource("numpy", "https://n.org/", rel)], project,
                                       project / "_freeze", frozen=False)
        assert not docs and warnings[0].startswith(f"api_docs numpy: the inventory {rel}") and reason in warnings[0]


# ---------------------------------------------------------------- fetching


@dataclass
class Served:
    """What the test server answers on a path: status, body, seconds to wait first."""

    status: int = 200
    body: bytes = b""
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Server:
    base: str
    routes: dict[str, Served]
    hits: list[str]


@pytest.fixture
def server(shared_server: Server) -> Server:
    """The test server with no routes and no hits yet."""
    shared_server.routes.clear()
    shared_server.hits.clear()
    return shared_server


@pytest.fixture(scope="module")
def shared_server() -> Iterator[Server]:
    """An HTTP server on 127.0.0.1 answering from ``routes`` (404 elsewhere); one per module
    (stopping one takes half a second)."""
    routes: dict[str, Served] = {}
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            hits.append(self.path)
            served = routes.get(self.path, Served(404, b"not here"))
            time.sleep(served.delay)
            try:
                self.send_response(served.status)
                for key, value in served.headers.items():
                    self.send_header(key, value)
                length = served.headers.get("Content-Length", str(len(served.body)))
                self.send_header("Content-Length", length)
                self.end_headers()
                self.wfile.write(served.body)
            except OSError:
                pass  # the client gave up (timeout)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_address[1]}/", routes, hits)
    finally:
        httpd.shutdown()
        httpd.server_close()


def _fetch(server: Server, tmp_path: Path, frozen: bool = False, timeout: float = 5.0, refresh_days: float = 7.0,
           path: str = "docs/"):
    source = ApiDocsSource("numpy", server.base + path, None, refresh_days, timeout)
    return load_api_docs([source], tmp_path, tmp_path / "_freeze", frozen=frozen)


def test_a_fetched_inventory_is_cached_in_the_records_folder(server: Server, tmp_path: Path) -> None:
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY))
    before = time.time()
    docs, warnings = _fetch(server, tmp_path)
    after = time.time()
    assert warnings == []
    assert docs.lookup("numpy.pi").url == f"{server.base}docs/reference/constants.html#numpy.pi"
    cache = tmp_path / "_freeze" / "_inventories"
    assert (cache / "numpy.inv").read_bytes() == inventory_bytes(NUMPY)
    meta = json.loads((cache / "numpy.json").read_text())
    # stamped during the fetch (in whole seconds): between the clock before and after it, however slow the machine
    assert meta["url"] == f"{server.base}docs/objects.inv" and int(before) <= meta["fetched"] <= after
    assert sorted(os.listdir(cache)) == ["numpy.inv", "numpy.json"]  # no temporary left
    # fresh: the next build does not fetch; the same links
    again, warnings = _fetch(server, tmp_path)
    assert server.hits == ["/docs/objects.inv"] and warnings == []
    assert again.fingerprint() == docs.fingerprint()


def test_frozen_builds_never_fetch(server: Server, tmp_path: Path) -> None:
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY))
    docs, warnings = _fetch(server, tmp_path, frozen=True)
    assert not docs and server.hits == []
    assert warnings == ["api_docs numpy: no cached inventory in _freeze/_inventories/numpy.inv (a --frozen build "
                        "fetches nothing: build once without --frozen, and commit the records folder); "
                        "pages do not link to its documentation"]
    _fetch(server, tmp_path)
    # stale, the server gone: --frozen uses the cache as it is, without a word
    (server.routes.clear(), server.hits.clear())
    docs, warnings = _fetch(server, tmp_path, frozen=True, refresh_days=1e-9)
    assert docs.lookup("numpy.linalg.norm") and warnings == [] and server.hits == []


def test_offline_loading_reads_the_cache_and_fetches_nothing(server: Server, tmp_path: Path) -> None:
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY))
    source = ApiDocsSource("numpy", server.base + "docs/", None, 1e-9, 5.0)
    _, warnings = load_api_docs([source], tmp_path, tmp_path / "_freeze", frozen=False, offline=True)
    assert server.hits == [] and "no cached inventory" in warnings[0] and "offline, nothing is fetched" in warnings[0]
    _fetch(server, tmp_path)
    server.hits.clear()
    docs, warnings = load_api_docs([source], tmp_path, tmp_path / "_freeze", frozen=False, offline=True)
    assert server.hits == [] and warnings == [] and docs.lookup("numpy.pi") is not None  # stale, yet used


def test_a_stale_cache_is_refreshed_and_kept_when_the_refresh_fails(server: Server, tmp_path: Path) -> None:
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY))
    _fetch(server, tmp_path)
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY[:3]))
    docs, warnings = _fetch(server, tmp_path, refresh_days=1e-9)
    assert warnings == [] and docs.lookup("numpy.pi") is None  # the new one
    server.routes["/docs/objects.inv"] = Served(404)
    docs, warnings = _fetch(server, tmp_path, refresh_days=1e-9)
    assert docs.lookup("numpy.ndarray") is not None
    assert len(warnings) == 1 and warnings[0].startswith("api_docs numpy: could not refresh the inventory (")
    assert "HTTP 404" in warnings[0] and "using the copy fetched 20" in warnings[0]
    # a changed URL does not use the other URL's copy
    docs, warnings = _fetch(server, tmp_path, path="other/")
    assert not docs and "HTTP 404" in warnings[0]
    docs, warnings = _fetch(server, tmp_path, path="other/", frozen=True)
    assert not docs and f"the cached inventory in _freeze/_inventories/numpy.inv is {server.base}docs/objects.inv's" \
        in warnings[0]


@pytest.mark.parametrize(("served", "reason"), [
    (Served(404, b"nope"), "answered HTTP 404"),
    (Served(500, b"oops"), "answered HTTP 500"),
    (Served(body=inventory_bytes(NUMPY)[:-25]), "truncated"),
    (Served(body=inventory_bytes(NUMPY), headers={"Content-Length": "100000"}), "is truncated"),
    (Served(body=b"# Sphinx inventory version 2\n# P\n# V\n# The remainder of this file is compressed using zlib.\n"
                 b"plain text"), "not zlib data"),
    (Served(body=b"<!doctype html><title>Docs</title>"), "not a Sphinx inventory"),
    (Served(302, headers={"Location": "file:///etc/passwd"}), "file:///etc/passwd"),
])
def test_a_failed_fetch_is_one_warning_and_caches_nothing(server: Server, tmp_path: Path, served: Served,
                                                          reason: str) -> None:
    server.routes["/docs/objects.inv"] = served
    docs, warnings = _fetch(server, tmp_path)
    assert not docs and len(warnings) == 1, warnings
    assert warnings[0].startswith("api_docs numpy: ") and reason in warnings[0]
    assert not (tmp_path / "_freeze" / "_inventories" / "numpy.inv").exists()


def test_a_redirect_to_http_is_followed(server: Server, tmp_path: Path) -> None:
    server.routes["/docs/objects.inv"] = Served(301, headers={"Location": "/moved/objects.inv"})
    server.routes["/moved/objects.inv"] = Served(body=inventory_bytes(NUMPY))
    docs, warnings = _fetch(server, tmp_path)
    assert warnings == [] and docs.lookup("numpy.pi").url.startswith(f"{server.base}docs/")


def test_a_server_that_does_not_answer_times_out(server: Server, tmp_path: Path) -> None:
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY), delay=3)
    docs, warnings = _fetch(server, tmp_path, timeout=0.3)
    # the 0.3 s timeout fired (a fetch that waited out the 3 s delay would hold the inventory)
    assert not docs and "did not answer within 0.3 s" in warnings[0]


def test_an_oversized_inventory_is_refused(server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch, "MAX_COMPRESSED", 1000)
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY) + b"\0" * 5000)
    docs, warnings = _fetch(server, tmp_path)
    assert not docs and "objects.inv is larger than 1000 bytes;" in warnings[0]


def test_javascript_links_of_a_fetched_inventory_never_become_links(server: Server, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    entries = [("numpy.evil", "py:function", "javascript:alert(document.cookie)"),
               ("numpy.evil2", "py:function", "http://evil.example/$"), *NUMPY]
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(entries))
    docs, warnings = _fetch(server, tmp_path)
    assert docs.lookup("numpy.evil") is None and docs.lookup("numpy.evil2") is None
    assert docs.lookup("numpy.ndarray") is not None
    assert warnings == [] and "2 inventory entries link outside" in caplog.text


def test_a_planted_link_in_the_cache_is_not_followed(server: Server, tmp_path: Path) -> None:
    secret = tmp_path / "secret.inv"
    write_inventory(secret, [("numpy.secret", "py:function", "s.html")])
    cache = tmp_path / "_freeze" / "_inventories"
    cache.mkdir(parents=True)
    (cache / "numpy.inv").symlink_to(secret)
    (cache / "numpy.json").write_text(json.dumps({"url": f"{server.base}docs/objects.inv", "fetched": time.time()}))
    docs, _ = _fetch(server, tmp_path, frozen=True)
    assert not docs  # the link is no cache
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY))
    docs, warnings = _fetch(server, tmp_path)
    assert warnings == [] and docs.lookup("numpy.pi") is not None
    assert not (cache / "numpy.inv").is_symlink()  # replaced, the file it pointed to untouched
    assert secret.read_bytes() == inventory_bytes([("numpy.secret", "py:function", "s.html")])


# ---------------------------------------------------------------- whole builds

LINKED_DEMO = '''"""
Norms
=====

Uses :func:`numpy.linalg.norm`.
"""
print(5.0)
'''


def test_builds_fetch_once_then_link_from_the_cache(server: Server, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import run_main, write_demo

    write_demo(tmp_path, "norms", LINKED_DEMO)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.site_builder.api_docs]\nnumpy = {{ url = "{server.base}docs/", refresh_days = 1e-9 }}\n',
        encoding="utf-8")
    server.routes["/docs/objects.inv"] = Served(body=inventory_bytes(NUMPY))
    code, err = run_main(["build"], tmp_path, capsys, monkeypatch)
    assert code == 0, err
    page = (tmp_path / "build" / "norms" / "index.html").read_text(encoding="utf-8")
    href = f'href="{server.base}docs/reference/generated/numpy.linalg.norm.html#numpy.linalg.norm"'
    assert href in page and (tmp_path / "_freeze" / "_inventories" / "numpy.inv").is_file()
    # the site is unchanged, the refresh fails: said, and the cached copy still links
    server.routes["/docs/objects.inv"] = Served(503)
    caplog.clear()
    code, err = run_main(["build"], tmp_path, capsys, monkeypatch)
    assert code == 0 and "api_docs numpy: could not refresh the inventory" in caplog.text and "HTTP 503" in caplog.text
    assert (tmp_path / "build" / "norms" / "index.html").read_text(encoding="utf-8") == page
    # --frozen: no request at all, the same page
    server.hits.clear()
    caplog.clear()
    code, err = run_main(["build", "--frozen"], tmp_path, capsys, monkeypatch)
    assert code == 0 and server.hits == [] and "api_docs" not in caplog.text
    assert (tmp_path / "build" / "norms" / "index.html").read_text(encoding="utf-8") == page
