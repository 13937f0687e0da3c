"""The ``serve`` command: build, serve the site on localhost, rebuild on changes, reload the tab.

The builds run in the main thread (so Ctrl-C reaches them and kills the running demos
at once); the HTTP server and the file watchers run in daemon threads.  Changes that
arrive during a build are coalesced into one more build after it.  What a rebuild
re-runs is the build's business (the execution cache re-runs only demos whose inputs
changed; a template change only re-renders).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import watchfiles

from site_builder.commands.build import BuildOptions, build
from site_builder.commands.build.options import folders_of
from site_builder.commands.build.search_later import catch_up_search
from site_builder.config import Config, load_config, with_overrides
from site_builder.fs import relative_to_root
from site_builder.errors import SiteBuilderError, UsageError, print_line
from site_builder.run.demo_process import close_fork_server
from site_builder.run.execute import path_scrubber
from site_builder.site.publish.swap import failed_dir
from site_builder.site.publish.preview_http import PreviewServer, SiteState
from site_builder.reports.progress import make_progress
from site_builder.site.pages.render import TEMPLATES_DIR

log = logging.getLogger(__name__)

_CONFIG_FILE = "pyproject.toml"


@dataclass(frozen=True)
class ServeOptions:
    """Command-line choices of ``serve``."""

    host: str = "127.0.0.1"
    port: int = 8000
    jobs: int = 1
    overrides: dict[str, Any] = field(default_factory=dict)  # demos / output / timeout from the CLI


class _AnyEvent:
    """Set when any of its events is set (watchfiles polls ``is_set()`` to stop)."""

    def __init__(self, *events: threading.Event) -> None:
        self.events = events

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)


class Watcher:
    """Watches the demos and templates (recursively) and the project folder (its top only).

    Any relevant change sets ``changed``.  ``retarget`` follows a demos folder that moved
    (configuration) or appeared.
    """

    def __init__(self, root: Path, demos: Path, changed: threading.Event) -> None:
        self.root = root
        self.changed = changed
        self.stopped = threading.Event()
        self._rewatch = threading.Event()
        self._lock = threading.Lock()
        self._demos = demos
        self._watching: tuple[Path, ...] = ()

    def start(self) -> None:
        """Start the two watcher threads."""
        threading.Thread(target=self._watch_trees, name="watch-trees", daemon=True).start()
        threading.Thread(target=self._watch_top, name="watch-project", daemon=True).start()

    def stop(self) -> None:
        """Stop watching (the threads notice within a fraction of a second)."""
        self.stopped.set()

    def retarget(self, demos: Path) -> None:
        """Watch ``demos`` from now on (and pick up a demos folder that was just created)."""
        with self._lock:
            self._demos = demos
            if self._trees() != self._watching:
                self._rewatch.set()
                # a change made before the new watch starts would be missed: look once more
                self.changed.set()

    def _trees(self) -> tuple[Path, ...]:
        return tuple(p for p in (self._demos, TEMPLATES_DIR) if p.is_dir())

    def _watch_trees(self) -> None:
        while not self.stopped.is_set():
            with self._lock:
                self._rewatch.clear()
                self._watching = self._trees()
            if not self._watching:
                self._rewatch.wait(0.5)
                continue
            self._run(self._watching, recursive=True, accept=lambda path: True)

    def _watch_top(self) -> None:
        def accept(path: str) -> bool:
            # the config file, or the demos folder itself appearing or disappearing
            return Path(path) in (self.root / _CONFIG_FILE, self._demos)

        self._run((self.root,), recursive=False, accept=accept)

    def _run(self, paths: tuple[Path, ...], recursive: bool, accept: Callable[[str], bool]) -> None:
        try:
            for changes in watchfiles.watch(
                *paths,
                stop_event=_AnyEvent(self.stopped, self._rewatch) if recursive else self.stopped,
                recursive=recursive,
                rust_timeout=500,
                yield_on_timeout=False,
                raise_interrupt=False,
            ):
                if any(accept(path) for _, path in changes):
                    log.debug("changed: %s", sorted(path for _, path in changes))
                    self.changed.set()
        except (OSError, RuntimeError) as exc:  # a watched folder vanished: look again shortly
            log.debug("watcher restarting: %s", exc)
            self.changed.set()
            self.stopped.wait(0.5)


def _load(root: Path, options: ServeOptions) -> Config:
    return with_overrides(load_config(root), **options.overrides)


def _newest_site(config: Config) -> Path | None:
    """The output folder or the failed build's pages, whichever was written last."""
    candidates = [p for p in (config.output, failed_dir(config.output)) if (p / "index.html").is_file()]
    return max(candidates, key=lambda p: p.stat().st_mtime, default=None)


def _build_once(root: Path, options: ServeOptions, state: SiteState, watcher: Watcher) -> Config | None:
    """One build; its pages (or its one-line error) become what the server shows.  Returns the
    settings when the pages went out before their search index (see _catch_up)."""
    try:
        config = _load(root, options)
    except SiteBuilderError as exc:
        print_line(f"error: {exc}", sys.stderr)
        state.publish(None, str(exc), state.snapshot().title)
        return None
    watcher.retarget(config.demos)
    if not config.demos.is_dir():
        message = (
            f"demos folder not found: {relative_to_root(config.demos, root)} "
            "(create an entry with: python -m site_builder new NAME); waiting for it"
        )
        print_line(f"error: {message}", sys.stderr)
        state.publish(None, message, config.title)
        return None
    try:
        # keep_warm: the fork server (its preloaded modules) serves the next rebuild too
        # defer_search: the page is shown first, the search index made after (see _catch_up)
        report = build(config, BuildOptions(jobs=options.jobs, keep_warm=True, defer_search=True),
                       make_progress(sys.stderr, quiet=False))
    except SiteBuilderError as exc:
        print_line(f"error: {exc}", sys.stderr)
        state.publish(None, str(exc), config.title)
        return None
    except Exception as exc:  # the server must outlive any build problem; say what it was
        # shown in the browser too: no absolute path of this machine
        scrub = path_scrubber([(root, "."), (TEMPLATES_DIR, "templates"), (Path.home(), "~")])
        message = scrub(f"the build failed unexpectedly: {type(exc).__name__}: {exc}")
        print_line(f"error: {message}", sys.stderr)
        state.publish(None, message, config.title)
        return None
    for failure in report.failures:
        print_line(f"error: {failure}", sys.stderr)
    where = relative_to_root(report.site_dir, root) if report.site_dir else "?"
    ran = len(report.builds) - len(report.from_cache)
    verdict = (
        "site unchanged" if report.unchanged
        else f"built in {report.wall_time:.1f} s ({ran} run, {len(report.from_cache)} from the cache)"
        if report.ok
        else f"build failed ({len(report.failures)} problem(s)); showing {where}"
    )
    pending = "; search catching up" if report.search_pending else ""
    print_line(f"{verdict}{pending}; waiting for changes", sys.stderr)
    state.publish(report.site_dir, None, config.title, search_pending=report.search_pending)
    return config if report.search_pending else None


def _catch_up(config: Config, state: SiteState, changed: threading.Event) -> None:
    """Make the search index of the pages just published; a change saved meanwhile stops it
    (the next build defers the index again, and this runs after it)."""
    problem = catch_up_search(folders_of(config), stop=changed.is_set)
    if problem:
        print_line(f"warning: {problem}", sys.stderr)
    if problem is None:
        print_line("search index caught up", sys.stderr)
        state.search_ready()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(root: Path, options: ServeOptions) -> int:
    """Run the preview until Ctrl-C; return the exit status."""
    root = root.resolve()
    config = _load(root, options)  # a bad configuration at start is a usage error (exit 2)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # it logs every change at INFO
    state = SiteState(config.title, _newest_site(config))
    try:
        server = PreviewServer((options.host, options.port), state, relative_to_root(config.demos, root))
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc} (try another --port)"
        ) from None
    if threading.current_thread() is threading.main_thread():
        # `kill PID` stops the preview as cleanly as Ctrl-C (running demos killed, one line)
        signal.signal(signal.SIGTERM, _interrupt)
    changed = threading.Event()
    watcher = Watcher(root, config.demos, changed)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="http", daemon=True).start()
    watcher.start()
    print_line(f"serving {server.url} (Ctrl-C to stop)", sys.stdout)
    try:
        pending = _build_once(root, options, state, watcher)
        while True:
            if pending is not None and not changed.is_set():
                _catch_up(pending, state, changed)
                pending = None
            if changed.wait(0.25):
                changed.clear()
                print("change detected; rebuilding", file=sys.stderr, flush=True)
                pending = _build_once(root, options, state, watcher)
    except KeyboardInterrupt:
        # The build (if one was running) has killed its demos before this point; a second
        # Ctrl-C during the short clean-up below must not end in a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("stopped serving", file=sys.stderr, flush=True)
        return 0
    finally:
        close_fork_server()
        watcher.stop()
        state.stop()
        server.shutdown()
        server.server_close()
