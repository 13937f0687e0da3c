"""The preview server of ``serve``: the newest built site over HTTP, plus live reload.

Each HTML page gets one external ``<script>`` tag (``templates/serve/script_tag.html``)
added as it is served, so the pages on disk stay exactly what ``build`` writes and no
inline script is needed.  ``/__livereload`` streams the site's version as Server-Sent
Events; the script reloads the page when it changes.  While the search index is older than
the pages (``serve`` publishes pages first), the tag says so and the page shows a notice,
which a ``search`` event removes once the index has caught up (no reload).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import socket
import threading
from dataclasses import dataclass, replace
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from site_builder.errors import one_line
from site_builder.site.sitefiles import TEMPLATES_DIR
from site_builder.site.templates import jinja_environment

log = logging.getLogger(__name__)

EVENTS_PATH = "/__livereload"
SCRIPT_PATH = "/__livereload.js"
_KEEPALIVE_SECONDS = 15.0
MAX_PATH = 2048  # bytes of a request path; no page of a site has a longer address
_HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)


@dataclass(frozen=True)
class SiteSnapshot:
    """What the server shows right now: a site folder, or why there is none."""

    version: str
    site_dir: Path | None  # the folder served (the output, or the failed build's pages)
    error: str | None  # a build that produced no pages at all: its one-line message
    title: str
    search_pending: bool = False  # the pages went out before their search index


class SiteState:
    """The shared, thread-safe "what to serve" of the preview; bumping it reloads browsers."""

    def __init__(self, title: str, site_dir: Path | None) -> None:
        self._token = secrets.token_hex(4)  # a restarted server never repeats a version
        self._generation = 0
        self._changed = threading.Condition()
        self._snapshot = SiteSnapshot(self._version(), site_dir, None, title)
        self.stopping = False

    def _version(self) -> str:
        return f"{self._token}-{self._generation}"

    def snapshot(self) -> SiteSnapshot:
        """The current state (one consistent view for one request)."""
        with self._changed:
            return self._snapshot

    def publish(self, site_dir: Path | None, error: str | None, title: str, search_pending: bool = False) -> None:
        """Serve ``site_dir`` (kept as is when None) or ``error`` from now on; reload the browsers.
        ``search_pending``: its search index is the previous pages' until :meth:`search_ready`."""
        with self._changed:
            self._generation += 1
            keep = site_dir or self._snapshot.site_dir
            self._snapshot = SiteSnapshot(self._version(), keep, one_line(error) if error else error, title,
                                          search_pending)
            self._changed.notify_all()

    def search_ready(self) -> None:
        """The search index has caught up with the pages: tell the open pages (they do not reload)."""
        with self._changed:
            self._snapshot = replace(self._snapshot, search_pending=False)
            self._changed.notify_all()

    def wait_for_change(self, seen: SiteSnapshot | None, timeout: float) -> SiteSnapshot:
        """Block until the snapshot differs from ``seen`` (or ``timeout``); return it."""
        with self._changed:
            self._changed.wait_for(
                lambda: self.stopping or self._snapshot != seen, timeout=timeout
            )
            return self._snapshot

    def stop(self) -> None:
        """Release every waiting live-reload stream."""
        with self._changed:
            self.stopping = True
            self._changed.notify_all()


class _Templates:
    """The serve-only templates: the live-reload tag and the status page."""

    def __init__(self) -> None:
        self.env = jinja_environment()

    def script_tag(self, snapshot: SiteSnapshot) -> bytes:
        return self.env.get_template("serve/script_tag.html").render(
            version=snapshot.version, search_pending=snapshot.search_pending).encode("utf-8")

    def status_page(self, snapshot: SiteSnapshot, demos_hint: str) -> bytes:
        if snapshot.error:
            heading, message = "The site could not be built", snapshot.error
            hint = "Fix the problem and save: this page reloads by itself."
        else:
            heading, message = "Building the site…", None
            hint = f"The first build of {demos_hint} is running; this page reloads when it is done."
        html = self.env.get_template("serve/status.html").render(
            title=snapshot.title, heading=heading, message=message, hint=hint
        )
        return inject_script(html.encode("utf-8"), self.script_tag(snapshot))


def inject_script(page: bytes, tag: bytes) -> bytes:
    """``page`` with ``tag`` added at the end of its head (or at its end when it has none)."""
    match = _HEAD_END.search(page)
    if match is None:
        return page + tag
    return page[: match.start()] + tag + page[match.start() :]


class _Handler(SimpleHTTPRequestHandler):
    """Static files of the current site folder, HTML with the live-reload tag, the event stream."""

    server: PreviewServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib's name)
        log.debug("%s %s", self.address_string(), format % args)

    def end_headers(self) -> None:
        # A preview must never show a page the browser cached before the last rebuild.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802 (stdlib's name)
        self._respond(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802 (stdlib's name)
        self._respond(send_body=False)

    def _respond(self, send_body: bool) -> None:
        # The request path is data from the network: too long or with a NUL byte, it names
        # no file of the site (and the file system would raise on it).
        if len(self.path) > MAX_PATH:
            self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG, f"the address is longer than {MAX_PATH} bytes")
            return
        path = unquote(urlsplit(self.path).path)
        if "\0" in path:
            self.send_error(HTTPStatus.BAD_REQUEST, "the address contains a NUL byte")
            return
        if path == EVENTS_PATH:
            self._events()
            return
        if path == SCRIPT_PATH:
            script = (TEMPLATES_DIR / "serve" / "livereload.js").read_bytes()
            self._send(HTTPStatus.OK, "text/javascript; charset=utf-8", script, send_body)
            return
        snapshot = self.server.state.snapshot()
        navigation = path.endswith("/") or path.endswith(".html")
        if navigation and (snapshot.error or snapshot.site_dir is None):
            status = HTTPStatus.INTERNAL_SERVER_ERROR if snapshot.error else HTTPStatus.SERVICE_UNAVAILABLE
            page = self.server.templates.status_page(snapshot, self.server.demos_hint)
            self._send(status, "text/html; charset=utf-8", page, send_body)
            return
        if snapshot.site_dir is None:
            self.send_error(HTTPStatus.NOT_FOUND, "the site has not been built yet")
            return
        self.directory = os.fspath(snapshot.site_dir)
        target = Path(self.translate_path(self.path))
        try:
            if target.is_dir() and path.endswith("/"):
                target = target / "index.html"
            page = target.suffix == ".html" and target.is_file()
            missing = not page and not target.exists()
        except (OSError, ValueError):  # a name the file system refuses (a segment too long...)
            page, missing = False, True
        if page:
            self._send_page(HTTPStatus.OK, target, snapshot, send_body)
        elif missing and (snapshot.site_dir / "404.html").is_file():
            self._send_page(HTTPStatus.NOT_FOUND, snapshot.site_dir / "404.html", snapshot, send_body)
        elif send_body:
            super().do_GET()
        else:
            super().do_HEAD()

    def _send_page(self, status: HTTPStatus, page: Path, snapshot: SiteSnapshot, send_body: bool) -> None:
        try:
            data = page.read_bytes()
        except OSError:  # swapped away by a rebuild between the check and the read
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        body = inject_script(data, self.server.templates.script_tag(snapshot))
        self._send(status, "text/html; charset=utf-8", body, send_body)

    def _send(self, status: HTTPStatus, content_type: str, body: bytes, send_body: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def _events(self) -> None:
        """Server-Sent Events: the site's version now, then at every rebuild."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        state = self.server.state
        seen: SiteSnapshot | None = None
        try:
            self.wfile.write(b"retry: 1000\n\n")
            while not state.stopping:
                now = state.wait_for_change(seen, _KEEPALIVE_SECONDS)
                if state.stopping:
                    break
                if seen is None or now.version != seen.version:
                    self.wfile.write(f"data: {now.version}\n\n".encode())
                if seen is None or now.search_pending != seen.search_pending:
                    self.wfile.write(f"event: search\ndata: {'pending' if now.search_pending else 'ready'}\n\n".encode())
                if now == seen:  # a comment line keeps proxies and the browser from timing the stream out
                    self.wfile.write(b": ping\n\n")
                self.wfile.flush()
                seen = now
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the tab was closed or reloaded


class PreviewServer(ThreadingHTTPServer):
    """A threading HTTP server that knows the preview's state and templates."""

    daemon_threads = True  # open event streams must not keep the process alive

    def __init__(self, address: tuple[str, int], state: SiteState, demos_hint: str) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        self.state = state
        self.templates = _Templates()
        self.demos_hint = demos_hint

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/"
