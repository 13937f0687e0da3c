"""What the demo ran with: Python, platform, the packages its code imported (with the
fork server's preloads counted only when the demo imported them itself)."""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any

# Top-level packages the fork server imported before forking (set by fork_server.py), and
# those of them the demo imported: only those count as imported, as in a fresh interpreter.
PRELOADED: frozenset[str] = frozenset()
PRELOADED_USED: set[str] = set()
KNOWN_VERSIONS: dict[str, str] = {}  # top-level package -> version, found once by the fork server
PLATFORM: str | None = None  # platform.platform() as the builder found it (set by fork_server.py)
PYTHON: str | None = None  # platform.python_version() as the builder found it (set by fork_server.py)


def environment_of(namespaces: list[dict[str, Any]]) -> dict[str, str]:
    """Python, platform, the third-party packages the demo's code imported, numpy's BLAS."""
    if PLATFORM is None or PYTHON is None:  # a spawned runner: no fork server was told them
        import platform

        env = {"python": platform.python_version(), "platform": platform.platform()}
    else:  # the demo's process imports no platform module it did not ask for
        env = {"python": PYTHON, "platform": PLATFORM}
    try:
        tops = sorted(imported_packages(namespaces))
        if tops:  # a stdlib-only demo skips importlib.metadata altogether
            env.update(_versions(tops))
    except Exception:
        pass
    numpy = sys.modules.get("numpy")
    if numpy is not None and ("numpy" not in PRELOADED or "numpy" in PRELOADED_USED):
        try:
            blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
            env["blas"] = f"{blas.get('name', '')} {blas.get('version', '')}".strip()
        except Exception:
            pass
    return env


def _versions(tops: list[str]) -> dict[str, str]:
    """Distribution name -> version for the given top-level packages.

    Most distributions are named like their package (numpy, matplotlib) and are looked up
    directly; only the others need ``packages_distributions()``, which scans every
    installed distribution (about 0.1-0.5 s, more than a small demo's whole run).
    """
    from importlib import metadata

    found: dict[str, str] = {}
    unnamed = []
    for top in tops:
        if top in KNOWN_VERSIONS:  # each lookup scans the import path: ~0.1 s
            found[top] = KNOWN_VERSIONS[top]
            continue
        try:
            found[top] = metadata.version(top)
        except Exception:
            unnamed.append(top)
    if unnamed:
        dists = metadata.packages_distributions()
        for top in unnamed:
            for dist in dists.get(top, ()):
                try:
                    found[dist] = metadata.version(dist)
                except Exception:
                    pass
    return found


def imported_packages(namespaces: list[dict[str, Any]]) -> set[str]:
    """Top-level non-stdlib packages bound in the demo's namespaces (``import numpy as np``,
    ``from scipy import stats``); what those packages import in turn is left out."""
    tops = set()
    for ns in namespaces:
        for value in list(ns.values()):
            try:
                if isinstance(value, types.ModuleType):
                    name = value.__name__
                else:
                    name = getattr(value, "__module__", None)
            except Exception:  # lazy proxies and other odd objects
                continue
            if isinstance(name, str):
                tops.add(name.partition(".")[0])
    return {t for t in tops if t and not t.startswith("_") and t not in sys.stdlib_module_names
            and t != "builtins"}


def track_preloaded_imports() -> None:
    """Note each import statement (the demo's, or a module's it loads) naming a preloaded package."""
    real = builtins.__import__

    def __import__(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),  # noqa: A002
                   level: int = 0) -> Any:
        if level == 0 and (top := name.partition(".")[0]) in PRELOADED:
            PRELOADED_USED.add(top)
        return real(name, globals, locals, fromlist, level)

    builtins.__import__ = __import__
