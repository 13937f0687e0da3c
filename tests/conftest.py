"""Shared fixtures: run the CLI as a user would, build the repository's real demos once, open watched pages."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_server import shared_server

REPO = Path(__file__).resolve().parent.parent


# The front matter Jupytext writes on a MyST Markdown notebook (a Jupyter Book page).
MYST_FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

# One per test process, though this file is imported twice there (as pytest's "conftest" and as
# "tests.conftest", the name test modules import it by): one server and one command at a time.
_CLI_SERVER = shared_server(REPO)


def run_cli(*args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None,
            fresh: bool = False, script: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m site_builder ARGS`` (or ``python SCRIPT ARGS``) in ``cwd`` and capture what a
    user would see: forked from the test process's warm interpreter (tests/cli_server.py), or
    ``fresh`` in a new one."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    if not fresh and _CLI_SERVER.can_run(full_env):
        return _CLI_SERVER.run(list(args), cwd, full_env, timeout, script)
    return subprocess.run(
        [sys.executable, *([str(script)] if script else ["-m", "site_builder"]), *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def start_cli() -> Iterator[Callable[..., Any]]:
    """Start ``python -m site_builder ARGS`` in ``cwd`` and return it to drive as a ``subprocess.Popen``
    (text; stdout and stderr captured, or sent to /dev/null): forked from the warm interpreter
    (tests/cli_server.py) when it is free, else a new one.  Whatever still runs at the test's end is killed."""
    started: list[Any] = []

    def start(*args: str, cwd: Path, env: dict[str, str] | None = None, capture: bool = True) -> Any:
        full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
        if _CLI_SERVER.can_run(full_env):
            started.append(_CLI_SERVER.start(list(args), cwd, full_env, capture))
        else:
            output = subprocess.PIPE if capture else subprocess.DEVNULL
            started.append(subprocess.Popen([sys.executable, "-m", "site_builder", *args], cwd=cwd, env=full_env,
                                            stdin=subprocess.DEVNULL, stdout=output, stderr=output, text=True))
        return started[-1]

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def copy_of(project: Path, tmp_path: Path, name: str = "project") -> Path:
    """A copy of a module's shared ``project`` in ``tmp_path`` (links kept as links), named ``name``, for a
    test that rebuilds or edits it: the module's other tests read the original."""
    copy = tmp_path / name
    shutil.copytree(project, copy, symlinks=True)
    return copy


def shared_folder(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``NAME`` of this test run, which ``make`` fills once for all xdist workers (a module's
    project that its tests only read, or copy with ``copy_of``): the first process to ask makes it,
    the others wait for it, so a module whose tests run on two workers builds it once."""
    folder = _run_folder(tmp_path_factory) / f"shared-{name}"
    with open(folder.with_name(f"shared-{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when this block ends, made or failed
        if not folder.with_name(f"shared-{name}.made").is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a failed attempt's leftovers
            folder.mkdir()
            make(folder)
            folder.with_name(f"shared-{name}.made").touch()
    return folder


def build_site(project: Path, timeout: float = 120, env: dict[str, str] | None = None, fresh: bool = False) -> Path:
    """Build ``project`` with ``python -m site_builder build`` (see run_cli), failing with its stderr; the built site's folder."""
    done = run_cli("build", cwd=project, timeout=timeout, env=env, fresh=fresh)
    assert done.returncode == 0, done.stderr
    return project / "build"


def run_main(args: list[str], project: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """Run the CLI's ``main`` in this process (fast), as ``python -m site_builder ARGS`` would: status, stderr."""
    from site_builder.cli import main

    monkeypatch.chdir(project)
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own exits
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def write_demo(project: Path, name: str, source: str) -> Path:
    """Write ``demos/NAME.py`` (NAME may be ``SECTION/NAME``) under ``project`` with dedented ``source``."""
    path = project / "demos" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return path


def build_keeping_warnings(project: Path) -> Path:
    """Build ``project`` in this process (it must succeed), its warnings written to
    ``warnings.txt`` beside it, one a line; return ``project``."""
    import logging

    from site_builder.commands.build import BuildOptions, build
    from site_builder.config import load_config

    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    keep = Keep(logging.WARNING)
    logging.getLogger("site_builder").addHandler(keep)
    try:
        report = build(load_config(project), BuildOptions())
    finally:
        logging.getLogger("site_builder").removeHandler(keep)
    assert report.ok, report.failures
    (project / "warnings.txt").write_text("\n".join(said))
    return project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (no pyproject.toml: all defaults)."""
    return tmp_path


@pytest.fixture
def rendered_pages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages the builds of a test render, in order: an entry's name, or the site-wide
    template's (index.html, 404.html, ...); clear it between builds."""
    from site_builder.site.pages.renderer import PageRenderer

    rendered: list[str] = []
    page = PageRenderer.page

    def recording(self: PageRenderer, template: str, **context: object) -> bytes:
        rendered.append(str(context.get("name", template)))
        return page(self, template, **context)

    page_file = PageRenderer.page_file

    def recording_file(self: PageRenderer, path: str, template: str, **context: object) -> object:
        if self.spool is not None:  # without a spool, page_file renders through page
            rendered.append(str(context.get("name", template)))
        return page_file(self, path, template, **context)

    monkeypatch.setattr(PageRenderer, "page", recording)
    monkeypatch.setattr(PageRenderer, "page_file", recording_file)
    return rendered


# A test's kind, by what its module uses: a browser (the `browser` fixture, test_browser*.py), the
# command line (any of these names in the module, a shared build's fixture included), else units.
_CLI_NAMES = ("run_cli", "build_site", "run_main", "build_keeping_warnings", "built_site", "subprocess", "CliServer",
              "start_cli")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test unit, cli or browser (registered in pyproject.toml), so ``-m`` selects them."""
    module_kinds: dict[Path, str] = {}
    for item in items:
        path = Path(str(item.path))
        if "browser" in getattr(item, "fixturenames", ()) or path.name.startswith("test_browser"):
            kind = "browser"
        else:
            if path not in module_kinds:
                text = path.read_text(encoding="utf-8")
                module_kinds[path] = "cli" if any(name in text for name in _CLI_NAMES) else "unit"
            kind = module_kinds[path]
        item.add_marker(getattr(pytest.mark, kind))


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's base temp folder, which xdist workers share."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _real_site_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the real demos' site is built."""
    return _run_folder(tmp_path_factory) / "real-site"


def _copy_real_project(project: Path) -> None:
    shutil.rmtree(project, ignore_errors=True)  # a failed attempt's leftovers
    shutil.copytree(REPO / "demos", project / "demos")
    shutil.copy(REPO / "pyproject.toml", project / "pyproject.toml")  # the site's own wording


def pytest_collection_finish(session: pytest.Session) -> None:
    """When a collected test needs ``built_site``, start that build now, in the background, so no
    test waits for it: the first test process to take the lock starts it and the build holds
    the lock until it ends (``built_site`` then only waits, and builds itself if this failed)."""
    if not hasattr(session.config, "workerinput") and session.config.getoption("numprocesses", None):
        return  # the xdist controller runs no test
    if not any("built_site" in getattr(item, "fixturenames", ()) for item in session.items):
        return
    project = _real_site_folder(session.config._tmp_path_factory)  # type: ignore[attr-defined]
    lock = os.open(project.with_name("real-site.lock"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return  # another test process is building it
    if (project / "built").is_file():
        os.close(lock)
        return
    _copy_real_project(project)
    # A real `python -m site_builder` (end to end); `built` marks success; the lock's descriptor
    # goes with the shell and the builder, so it is released when they end.
    subprocess.Popen(["sh", "-c", '"$0" -m site_builder build > build.log 2>&1 && touch built', sys.executable],
                     cwd=project, env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL,
                     pass_fds=[lock])
    os.close(lock)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's demos built once per test run (started at collection, see above),
    shared by the xdist workers; returns the site folder. Tests only read it."""
    project = _real_site_folder(tmp_path_factory)
    with open(project.with_name("real-site.lock"), "w") as lock:
        deadline = time.monotonic() + 200
        while True:  # released when the background build ends, or when a test process's build does
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, "the build of the real demos did not end in 200 s"
                time.sleep(0.2)
        if not (project / "built").is_file():  # the background build failed: again, saying why
            _copy_real_project(project)
            build_site(project, timeout=170, fresh=True)  # end to end: a real `python -m site_builder`
            (project / "built").touch()
    return project / "build"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium per test process (fails in CI, skips locally, when it cannot run).

    Here, not in a browser test module: Playwright's sync API runs one instance per process.
    """
    from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, in_ci, missing_browser_tools

    reason = missing_browser_tools()
    if reason:
        if in_ci():
            pytest.fail(f"{reason}; in CI the browser tests must run, not skip (.ci/run installs them)", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def shared_contexts(browser: Any) -> Iterator[dict[tuple[str, ...], list[Any]]]:
    """The browser contexts that tests of one module asking for the same options share (see
    ``open_watched_page``), by (module, base URL, options): [context, the last test's page, kept open
    until the next test's ends]; closed when the test process ends."""
    contexts: dict[tuple[str, ...], list[Any]] = {}
    yield contexts
    for context, _ in contexts.values():
        context.close()


@pytest.fixture
def open_watched_page(browser: Any, shared_contexts: dict[tuple[str, ...], list[Any]],
                      request: pytest.FixtureRequest) -> Iterator[Callable[..., tuple[Any, Any]]]:
    """``open_watched_page(base, own_context=False, **options)``: (page, watch): a new page watched for
    trouble (browser_support's ``watched_page``) in a context of those options (``watched_context``),
    closed when the test ends.

    Its context (about 0.25 CPU-s of Chromium to make) is shared with the module's other tests that ask
    for the same base and options: pages of one context share cookies, storage, the HTTP cache and
    permissions. A test that stores something on purpose (the theme toggle) asks for ``own_context``;
    a shared context found holding a cookie or local storage after a test is closed, not shared again.
    A shared context's last page is closed at the end of the next test that opens one there, not of
    its own: a new page whose site has a live page in the context reuses that page's renderer process
    instead of starting one (about 0.3 CPU-s). Nothing of the site's reaches one page from another
    (no storage events, channels or workers shared), so the kept page changes nothing a test sees.
    """
    from tests.browser_support import stored_anything, watched_context, watched_page

    opened: list[tuple[tuple[str, ...] | None, Any, Any]] = []

    def _open(base: str, own_context: bool = False, **options: Any) -> tuple[Any, Any]:
        key = None if own_context else (request.module.__name__, base, repr(sorted(options.items())))
        if key is None:
            context = watched_context(browser, base, **options)
        else:
            if key not in shared_contexts:
                shared_contexts[key] = [watched_context(browser, base, **options), None]
            context = shared_contexts[key][0]
        page, watch = watched_page(context, base)
        opened.append((key, context, page))
        return page, watch

    yield _open
    for key, context, page in opened:
        shared = shared_contexts.get(key) if key is not None else None
        if shared is None or shared[0] is not context:
            (context if key is None else page).close()
        elif stored_anything(context, page):
            del shared_contexts[key]
            context.close()
        else:
            if shared[1] is not None:
                shared[1].close()
            shared[1] = page


@pytest.fixture
def scheme_looks(open_watched_page: Callable[..., tuple[Any, Any]]) -> Any:
    """``scheme_looks.seen(base, url, scheme, look, ...)``, ``.walked(...)``: tests/scheme_looks.py's SchemeLooks (a page loaded
    once for the light and the dark scheme's tests), its pages from ``open_watched_page``."""
    from tests.scheme_looks import SchemeLooks

    return SchemeLooks(open_watched_page)


@pytest.fixture(scope="session")
def site_url(browser: Any, built_site: Path) -> Iterator[str]:
    """The session's built site served over HTTP on 127.0.0.1 under a sub-path; its base URL (one
    server per test process for test_browser_reading.py and test_browser_navigation.py)."""
    from tests.browser_support import serve_site

    with serve_site(built_site) as url:
        yield url


@pytest.fixture
def open_page(open_watched_page: Callable[..., tuple[Any, Any]], site_url: str) -> Callable[..., tuple[Any, Any]]:
    """Open a watched page, clipboard allowed: ``open_page(scheme="light", width=1280, height=800, base=site_url,
    own_context=False)`` (see ``open_watched_page``)."""

    def _open(scheme: str = "light", width: int = 1280, height: int = 800, base: str = site_url,
              own_context: bool = False) -> tuple[Any, Any]:
        return open_watched_page(base, own_context, clipboard=True, viewport={"width": width, "height": height},
                                 color_scheme=scheme)

    return _open
