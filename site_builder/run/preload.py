"""Which modules the fork server imports before it forks any demo (``fork_server.preload``).

Learned from the demos themselves: the third-party modules their scripts import (found
with ``ast`` in the import statements), the packages their run records list (what
they, or the local modules they use, imported last time), and IPython's modules when a
notebook is among them (its cells run in IPython).  ``preload = [...]`` in
``[tool.site_builder]`` adds modules; ``preload = []`` turns preloading off.  Only installed
packages (site-packages) are preloaded: a module on PYTHONPATH or installed in editable mode
may be edited while ``serve`` runs, and each demo imports it afresh.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import platform
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from site_builder.source.entries import Entry

# Lines that start an import statement: only these are parsed (a whole script costs ~1 ms).
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t]", re.MULTILINE)
# Record environment rows that are no packages.
_NOT_PACKAGES = {"python", "platform", "blas"}
_CACHE: dict[str, tuple[str, ...]] = {}  # source text -> its modules (serve rebuilds)
# What a notebook's IPython shell (run/child/shell.py) imports, up to its first cells: its
# creation, magics, help's colours, %time. Preloaded, a trivial notebook's process spends
# about 25 ms of CPU against 75 ms importing them itself, and a script's 6 ms (benchmark (k)).
NOTEBOOK_MODULES = (
    "IPython.core.interactiveshell", "IPython.core.application", "IPython.core.completer",
    "IPython.core.completerlib", "IPython.core.magics", "IPython.core.oinspect",
    "IPython.core.crashhandler", "IPython.core.logger", "pygments.lexers.python",
    "pygments.formatters.terminal256", "pygments.formatters.html",
)
_CACHE_MAX = 10_000


@dataclass(frozen=True)
class Preload:
    """What one fork server imports up front, and what it needs to judge those imports."""

    modules: tuple[str, ...]
    demos: str  # the demos folder: a module a file of it would shadow is not preloaded
    project: str  # a module whose import loads a project file is refused
    installed: str = ""  # packages_stamp(): a server that loaded older packages is replaced


# The fork server is started as ``python -P -c SERVER_BOOT fork_server.py FD OPTIONS``: its file is
# loaded as a module (not in sys.modules), whose compiled bytecode Python keeps in __pycache__; run
# as a script it would be compiled again at every start (about 4 ms of CPU a build that runs a demo).
SERVER_BOOT = ("import importlib.util, sys\n"
               "spec = importlib.util.spec_from_file_location('_site_builder_fork_server', sys.argv[1])\n"
               "server = importlib.util.module_from_spec(spec)\n"
               "spec.loader.exec_module(server)\n"
               "server.main(sys.argv[1:])\n")


def server_options(preload: Preload | None) -> str:
    """The fork server's JSON argument: what it preloads, and ``platform.platform()`` and
    ``python_version()`` (the runner reports them): found here, as the server would import subprocess and threading for it, and each
    of its children would then run threading's after-fork hook (some 100 pages copied a run)."""
    options: dict[str, object] = {"platform": platform.platform(), "python": platform.python_version()}
    if preload is not None and preload.modules:
        options.update(modules=list(preload.modules), demos=preload.demos, project=preload.project)
    return json.dumps(options)


def script_imports(source: str) -> tuple[str, ...]:
    """Absolute modules a script's import statements name (``import a.b``, ``from a import b``:
    ``a.b``, and ``a.b`` when b may be a submodule)."""
    cached = _CACHE.get(source)
    if cached is not None:
        return cached
    found: set[str] = set()
    for statement in _import_statements(source):
        try:
            tree = ast.parse(statement)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
    result = tuple(sorted(found))
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[source] = result
    return result


def _import_statements(source: str) -> Iterable[str]:
    """Each import statement's text, dedented; a parenthesised or continued one whole."""
    for match in _IMPORT_LINE.finditer(source):
        start = match.start()
        end = source.find("\n", start)
        end = len(source) if end < 0 else end
        text = source[start:end]
        while (text.count("(") > text.count(")") or text.rstrip().endswith("\\")) and end < len(source):
            nxt = source.find("\n", end + 1)
            nxt = len(source) if nxt < 0 else nxt
            text = source[start:nxt]
            end = nxt
        yield text.strip().split(";")[0]


def _third_party(module: str) -> bool:
    top = module.partition(".")[0]
    return bool(top) and top not in sys.stdlib_module_names and top != "__future__"


def recorded_packages(record_file: Path) -> list[str]:
    """The top-level modules of the packages a run record lists (distribution names as modules)."""
    try:
        environment = json.loads(record_file.read_bytes()).get("environment", {})
    except (OSError, ValueError, AttributeError, RecursionError):  # damaged: no hint, the lookup says why
        return []
    if not isinstance(environment, dict):
        return []
    names = [str(d).lower().replace("-", "_") for d in environment if d not in _NOT_PACKAGES]
    return [n for n in names if n.isidentifier()]


def packages_stamp(installed_only: bool = False) -> str:
    """The mtimes of the import path's folders: installing, upgrading or removing a package changes them.

    (pip replaces ``NAME-VERSION.dist-info`` in site-packages.)  ``installed_only``: only the
    folders pip installs into (site-packages, dist-packages), the only ones preloaded from.
    """
    parts = [sys.version]
    cwd = os.getcwd()
    # Python puts the folder of what started it first on the path: the project folder under
    # `python -m` (every build renames folders in it), the venv's bin/ under the
    # `site-builder` script. Neither holds packages, and counting it would make the two ways
    # of starting a build distrust each other's records.
    started_from = sys.path[0] if sys.path and not sys.flags.safe_path else None
    for entry in sys.path:
        if not entry or entry in (cwd, started_from) or (installed_only and not _installs_here(entry)):
            continue
        try:
            parts += [entry, str(os.stat(entry).st_mtime_ns)]
        except OSError:
            parts += [entry, "-"]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def installed_version(dist: str) -> str | None:
    """The installed version of distribution ``dist`` (None when absent), as ``importlib.metadata.version``
    gives it, read from the metadata's header alone: ``version`` parses the whole file (the long
    description too) with the email package, about 0.6 ms a distribution, and a build asks for nine."""
    from importlib import metadata  # ~20 ms to import: only when a version is needed

    try:
        found = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return None
    text = found.read_text("METADATA") or found.read_text("PKG-INFO") or found.read_text("") or ""
    for line in text.splitlines():
        if not line.strip():
            break  # the end of the header
        name, colon, value = line.partition(":")
        if colon and name.lower() == "version":  # email's reading of it: the first one, leading blanks dropped
            return value.lstrip(" \t")
    return None


def _installs_here(folder: str) -> bool:
    return "site-packages" in folder or "dist-packages" in folder


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def preload_for(setting: tuple[str, ...] | None, demos_dir: Path, root: Path, entries: Iterable[Entry],
                record_files: Iterable[Path]) -> Preload:
    """The modules to preload for these entries (see the module docstring); ``setting``: the
    preload setting (None: learn them, (): none); ``demos_dir``, ``root``: the demos and project folders."""
    demos, project, installed = str(demos_dir), str(root), packages_stamp(installed_only=True)
    if setting == ():
        return Preload((), demos, project, installed)
    modules: set[str] = set(setting or ())
    for entry in entries:
        modules.update(m for m in script_imports(entry.source) if _third_party(m))
        if entry.format != "py":  # cells run in IPython
            modules.update(NOTEBOOK_MODULES)
    recorded = {m for record in record_files for m in recorded_packages(record) if _third_party(m)}
    # distribution names that are no module (scikit-learn) are left out
    modules.update(m for m in recorded - modules if _installed(m))
    tops = {m.partition(".")[0] for m in modules}
    if "matplotlib" in tops:
        modules.add("matplotlib.pyplot")  # the builder saves the figures through pyplot
    if "numpy" in tops:
        # NumPy 2 imports numpy.random on first use (np.random.default_rng): 7-10 ms of every
        # demo's CPU. Its global generator is re-seeded in each child (fork_server.reseed).
        modules.add("numpy.random")
    # importing a.b imports a: the same set, however it was learned, keeps serve's server
    kept = sorted(m for m in modules if not any(o.startswith(m + ".") for o in modules))
    return Preload(tuple(kept), demos, project, installed)
