"""Helpers for the browser tests: find Chromium, serve a site under a sub-path, open a page watched for trouble."""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

CHROMIUM = "/usr/bin/chromium"
# Playwright (1.65) disables these Chromium features itself; a --disable-features of ours replaces
# its list rather than adding to it (the last switch wins), so ours repeats it.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AimEnabled,AvoidCorsURLLoaderRestartOnRedirect,AvoidUnnecessaryBeforeUnloadCheckSync,DestroyProfileOnBrowserClose,"
    "HttpsFirstBalancedModeAutoEnable,HttpsUpgrades,LensOverlay,MediaRouter,NetworkTimeServiceQuerying,OptimizationHints,"
    "PaintHolding,PreconnectToSearch,ThirdPartyStoragePartitioning,TcpPortRandomizationWin,msForceBrowserSignIn,"
    "msEdgeUpdateLaunchServicesPreferredVersion"
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # Every page Playwright opens is a window of its own, and Chromium gives each window's address
    # bar a popup made of web pages (chrome://omnibox-popup.top-chrome/) in a renderer process of
    # its own: about 0.5 CPU-s a page for a bar headless Chromium never shows. The site's pages
    # render the same without it (their screenshots and axe-core's findings are unchanged).
    f"--disable-features={PLAYWRIGHT_DISABLED_FEATURES},WebUIOmniboxPopup,WebUIOmniboxAimPopup",
]
# The site is served below a sub-path, as on a project page of a static host, so a link
# that assumes the host root (href="/static/...") 404s instead of passing by luck.
SUB_PATH = "/dictionary/sub/"
TIMEOUT_MS = 15_000  # generous: the 2 shared cores may be busy; a passing test never waits this long
DESKTOP = {"width": 1280, "height": 800}  # the viewport of a laptop screen


def in_ci() -> bool:
    """True when the CI environment variable says we run in CI (where browser tests must run)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing_browser_tools() -> str | None:
    """Why the browser tests cannot run here (a one-line reason), or None when they can."""
    missing = []
    if importlib.util.find_spec("playwright") is None:
        missing.append("the Python package 'playwright' (pip install -e '.[test]')")
    if importlib.util.find_spec("axe_playwright_python") is None:
        missing.append("the Python package 'axe-playwright-python' (pip install -e '.[test]')")
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        found = shutil.which("chromium")
        missing.append(f"Debian's Chromium at {CHROMIUM} (apt-get install chromium)" + (f"; found {found} instead" if found else ""))
    return "browser tests need " + " and ".join(missing) if missing else None


class _SubPathHandler(http.server.SimpleHTTPRequestHandler):
    """Serves ``directory`` at ``SUB_PATH`` only; every URL outside it is a 404, like a project page."""

    def do_GET(self) -> None:
        if self._outside_site():
            self.send_error(404, "outside the site's sub-path")
            return
        super().do_GET()

    def do_HEAD(self) -> None:
        if self._outside_site():
            self.send_error(404, "outside the site's sub-path")
            return
        super().do_HEAD()

    def _outside_site(self) -> bool:
        return not urlsplit(self.path).path.startswith(SUB_PATH)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # Like a static host, answer a missing page of the site with the site's own 404.html.
        not_found_page = Path(self.directory) / "404.html"
        if code != 404 or self._outside_site() or not not_found_page.is_file():
            super().send_error(code, message, explain)
            return
        body = not_found_page.read_bytes()
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def translate_path(self, path: str) -> str:
        # Strip the sub-path, then let the standard handler map the rest inside `directory`.
        rest = urlsplit(path).path[len(SUB_PATH) - 1 :]
        return super().translate_path(rest)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output quiet; failures are reported by the page watcher


@contextlib.contextmanager
def serve_site(site: Path) -> Iterator[str]:
    """Serve ``site`` over HTTP on a free port of 127.0.0.1 under ``SUB_PATH``; yields the site's base URL."""
    handler = functools.partial(_SubPathHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{SUB_PATH}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class PageWatch:
    """Everything that went wrong on the pages one browser page visited: console errors,
    uncaught exceptions, failed or 4xx/5xx requests, and requests leaving the site."""

    base_url: str  # every request must start with it (http://host:port/sub/ or file:///.../build/)
    problems: list[str] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    expected_failures: set[str] = field(default_factory=set)  # URLs a test asks for knowing they 404

    def attach(self, page: Any) -> None:
        """Record the page's console errors, page errors, failed requests and foreign requests."""
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.problems.append(f"uncaught exception on {page.url}: {error}"))
        page.on("requestfailed", self._on_request_failed)
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("framenavigated", lambda frame: frame.parent_frame is None and self.visited.append(frame.url))

    def _on_console(self, message: Any) -> None:
        if message.type == "error":
            where = message.location or {}
            if where.get("url") in self.expected_failures and "404" in message.text:
                return  # Chromium logs the 404 of a page the test asked for on purpose
            self.problems.append(f"console error on {where.get('url') or '?'}: {message.text}")

    def _on_request(self, request: Any) -> None:
        url = request.url
        if url.startswith(("data:", "blob:", self.base_url)) or url == self.base_url.rstrip("/"):
            return
        self.problems.append(f"request outside the site ({request.resource_type}): {url}")

    def _on_request_failed(self, request: Any) -> None:
        if request.failure == "net::ERR_ABORTED" and not request.is_navigation_request():
            # Chromium cancels a page's pending loads (a lazy image, say) when the reader moves
            # on; a missing file is a 404 over HTTP and net::ERR_FILE_NOT_FOUND from disk.
            return
        if request.url not in self.expected_failures:
            self.problems.append(f"request failed ({request.failure}): {request.url}")

    def _on_response(self, response: Any) -> None:
        if response.status >= 400 and response.url not in self.expected_failures:
            self.problems.append(f"HTTP {response.status} for {response.url}")

    def assert_clean(self) -> None:
        """Fail with every recorded problem, one per line, naming the pages visited."""
        assert not self.problems, "trouble in the browser:\n  " + "\n  ".join(self.problems) + "\npages visited:\n  " + "\n  ".join(self.visited)


# conftest's ``open_page``: ``open_page(scheme="light", width=1280, height=800, base=site_url, own_context=False)``.
OpenPage = Callable[..., tuple[Any, PageWatch]]
# The blocks of demos/attention.py, in order: one cell each on its page.
ATTENTION_CELLS = ["setup", "B-corpus", "B-tokens", "B-model", "B-forward", "B-train", "B-display", "B-csv", "B-preview"]
# The page background a reader sees: body's, else html's, else the canvas white.
BACKGROUND_LUMINANCE_JS = """() => {
  for (const el of [document.body, document.documentElement]) {
    const m = getComputedStyle(el).backgroundColor.match(/[\\d.]+/g);
    if (m && (m.length < 4 || Number(m[3]) > 0)) {
      const [r, g, b] = m.slice(0, 3).map(Number);
      return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    }
  }
  return 1;
}"""


def watched_context(browser: Any, base: str, *, timeout_ms: float | None = TIMEOUT_MS, clipboard: bool = False,
                    **context_options: Any) -> Any:
    """A new context of ``browser`` (``context_options`` go to Playwright's ``new_context``: viewport,
    color_scheme, reduced_motion, java_script_enabled...) for pages of the site at ``base``.

    ``timeout_ms`` is the default of every wait (None keeps Playwright's own); ``clipboard`` lets the pages of
    an http(s) ``base`` read and write the clipboard. The caller closes the context.
    """
    context = browser.new_context(**context_options)
    try:
        if clipboard and base.startswith(("http://", "https://")):
            parts = urlsplit(base)
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=f"{parts.scheme}://{parts.netloc}")
        if timeout_ms is not None:
            context.set_default_timeout(timeout_ms)
    except BaseException:
        context.close()
        raise
    return context


def watched_page(context: Any, base: str) -> tuple[Any, PageWatch]:
    """A new page of ``context`` with a PageWatch for ``base``; (page, watch)."""
    page = context.new_page()
    watch = PageWatch(base_url=base)
    watch.attach(page)
    return page, watch


@contextlib.contextmanager
def read_only_pages(browser: Any, base: str, **context_options: Any) -> Iterator[Callable[[str], tuple[Any, PageWatch]]]:
    """``load(path)``: (page, watch) of ``base + path`` loaded once, in one context of ``context_options``
    (``watched_context``'s), for the tests that only read it: none clicks, hovers, scrolls, focuses or
    emulates anything there. Its watch holds the trouble of the load and of every test on it."""
    context = watched_context(browser, base, **context_options)
    loaded: dict[str, tuple[Any, PageWatch]] = {}

    def load(path: str) -> tuple[Any, PageWatch]:
        if path not in loaded:
            page, watch = watched_page(context, base)
            page.goto(base + path)
            loaded[path] = page, watch
        return loaded[path]

    try:
        yield load
    finally:
        context.close()


def stored_anything(context: Any, page: Any) -> bool:
    """Whether ``context`` holds a cookie, or the origin ``page`` shows holds local storage (True when
    it cannot tell): what a test leaves for the next one if they share the context."""
    try:
        return bool(context.cookies()) or page.is_closed() or bool(page.evaluate("() => localStorage.length"))
    except Exception:  # noqa: BLE001 - a crashed page, an opaque origin: assume the worst
        return True


# Marks one element per distinct Pygments token class (and cell status) inside the code: the
# one with the longest text, as axe leaves one- or two-character text undecided.
_MARK_CODE_SAMPLES_JS = """() => {
  const best = new Map();
  for (const el of document.querySelectorAll('.highlight *')) {
    if (el.childElementCount) continue;
    const key = el.tagName + '.' + el.className + '|'
      + ((el.closest('[data-status]') || document.body).dataset.status || '');
    const length = el.textContent.trim().length;
    if (!best.has(key) || length > best.get(key).length) best.set(key, {el, length});
  }
  for (const {el} of best.values()) el.setAttribute('data-axe-sample', '');
}"""


# One run of axe on the whole page: every rule sees the whole page, but contrast is checked only
# on what data-axe-contrast marks (everything outside the code, plus the code's samples). One run
# instead of a run per context: axe's per-run set-up (its tree of the page, the layout grid for
# contrast) is most of a run's cost, and the results are those of running contrast on its own
# over that context (checked node for node on the attention page in both schemes).
_AXE_RUN_JS = """async () => {
  for (const el of document.querySelectorAll('*')) {
    el.removeAttribute('data-axe-contrast');  // a check of the page as it is now, after any change
    if (!el.closest('.highlight') || el.hasAttribute('data-axe-sample')) el.setAttribute('data-axe-contrast', '');
  }
  axe.configure({rules: [{id: 'color-contrast', selector: '[data-axe-contrast]'}]});
  return (await axe.run(document, {resultTypes: ['violations']})).violations;
}"""


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """Run axe-core (from axe-playwright-python) on the whole page; its violations.

    axe's color-contrast rule costs milliseconds per text node, and a page of highlighted code
    has thousands that share a few dozen token classes: contrast is checked on everything but
    the code, plus one node per token class in the code; every other rule sees the whole page.
    axe-core is injected once per document (half a megabyte of script to parse each time).
    """
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    page.evaluate(_MARK_CODE_SAMPLES_JS)
    violations: list[dict[str, Any]] = page.evaluate(_AXE_RUN_JS)
    return violations


def serious_violations(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The axe-core violations whose impact is serious or critical."""
    return [v for v in violations if v.get("impact") in ("serious", "critical")]


def serious_look(page: Any, scheme: str) -> list[dict[str, Any]]:
    """A look for SchemeLooks: the serious or critical axe violations of the page as it is."""
    return serious_violations(axe_violations(page))


def serious_look_with_images(page: Any, scheme: str) -> list[dict[str, Any]]:
    """A look for SchemeLooks: the page's serious or critical axe violations once its images have loaded."""
    load_images(page)
    return serious_violations(axe_violations(page))


def describe_violations(violations: list[dict[str, Any]]) -> str:
    """A readable list of axe violations: rule, impact, help text and the offending elements."""
    lines = []
    for v in violations:
        lines.append(f"- {v['id']} ({v['impact']}): {v['help']} [{v.get('helpUrl', '')}]")
        for node in v.get("nodes", [])[:8]:
            target = ", ".join(str(t) for t in node.get("target", []))
            summary = (node.get("failureSummary") or "").replace("\n", " ")
            lines.append(f"    {target}: {node.get('html', '')[:160]}  -- {summary[:300]}")
        if len(v.get("nodes", [])) > 8:
            lines.append(f"    ... and {len(v['nodes']) - 8} more elements")
    return "\n".join(lines)



ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"  # screenshots, for a reader to look at


def full_page_screenshot(page: Any, name: str) -> bytes:
    """A PNG of the whole page, also written to ``test-artifacts/NAME`` (whole or not at all: another
    test process may write the same picture meanwhile); its bytes."""
    png: bytes = page.screenshot(full_page=True)
    ARTIFACTS.mkdir(exist_ok=True)
    part = ARTIFACTS / f".{name}.{os.getpid()}"
    part.write_bytes(png)
    part.replace(ARTIFACTS / name)
    return png

def block_source(script: Path, block: str) -> str:
    """The source lines of ``# %% BLOCK`` in ``script`` (without the marker), blank lines around them dropped."""
    lines = script.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f"# %% {block}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("# %%")), len(lines))
    return "\n".join(lines[start:end]).strip("\n")


def tab_to(page: Any, css_class: str, what: str) -> None:
    """Press Tab (40 times at most) until the focused element has ``css_class``; fail naming ``what`` if it never does."""
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("name => document.activeElement.classList.contains(name)", css_class):
            return
    pytest.fail(f"Tab never reached {what}")


def load_images(page: Any) -> None:
    """Scroll every image into view (they may be lazy) and wait until each has loaded."""
    images = page.locator("img")
    for i in range(images.count()):
        image = images.nth(i)
        image.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    page.evaluate("() => window.scrollTo(0, 0)")
