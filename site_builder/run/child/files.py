"""The demo's files: which paths are project files, what it read (an audit hook), what
it wrote in its working folder (snapshots before and after each block)."""

from __future__ import annotations

import io
import os
import sys
import types
from typing import Any

from .streams import BinaryStream, TextStream

BUILDER_DIR = "_site_builder"  # the one definition: the parent (run.execute) imports it from here
# site_builder/ (this file is site_builder/run/child/files.py)
BUILDER_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp")


class Paths:
    """Decides which paths count as project files (for reads and tracebacks)."""

    def __init__(self, project_root: str, files_dir: str) -> None:
        self.root = os.path.realpath(project_root)
        self.files_dir = os.path.realpath(files_dir)
        outside = {sys.prefix, sys.base_prefix, sys.exec_prefix}
        outside |= {p for p in sys.path if "site-packages" in p or "dist-packages" in p}
        # The builder itself (run_cell's frame): it may sit inside the project (a checkout of
        # the builder building its own demos) and must never show in a demo's traceback.
        outside.add(BUILDER_PACKAGE)
        self.outside = [cached_realpath(p) for p in outside if p]

    def project_rel(self, path: str) -> str | None:
        real = cached_realpath(path)
        if not inside(real, self.root) or inside(real, self.files_dir):
            return None
        if any(inside(real, p) for p in self.outside):
            return None
        rel = os.path.relpath(real, self.root).replace(os.sep, "/")
        return None if "__pycache__" in rel.split("/") else rel

    def in_run_folder(self, path: str) -> bool:
        """Whether ``path`` is a file the demo wrote in its working folder (a module it then imports)."""
        return inside(cached_realpath(path), self.files_dir)


_REALPATHS: dict[str, str] = {}


def cached_realpath(path: str) -> str:
    """``os.path.realpath``, remembered: every module file is resolved twice per run.

    The fork server fills it for the modules it has loaded (see ``warm_realpaths``), so
    its children resolve only what their demo imported.
    """
    real = _REALPATHS.get(path)
    if real is None:
        real = _REALPATHS[path] = os.path.realpath(path)
    return real


def warm_realpaths() -> None:
    """Resolve the files of every module loaded so far, and the folders Paths looks at."""
    for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]:
        cached_realpath(p)
    for module in list(sys.modules.values()):
        f = getattr(module, "__file__", None)
        if isinstance(f, str):
            cached_realpath(os.path.abspath(f))


def inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both already resolved)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class ReadAudit:
    """Records files opened for reading, via an audit hook (it cannot be removed)."""

    def __init__(self) -> None:
        self.on = False
        self.opened: set[str] = set()
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not self.on:
            return
        try:
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            if mode is not None:
                reading = "r" in mode
            else:
                reading = (flags & os.O_ACCMODE) != os.O_WRONLY and not flags & os.O_TRUNC
            if reading:
                self.opened.add(os.path.abspath(os.fsdecode(path)))
        except Exception:
            pass  # an audit hook must never break the demo


def snapshot(root: str) -> dict[str, tuple[int, int]]:
    """relpath -> (size, mtime_ns) of every file under ``root`` except BUILDER_DIR."""
    found: dict[str, tuple[int, int]] = {}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if folder == root and e.name == BUILDER_DIR:
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.is_file(follow_symlinks=False):  # a symlink could publish any file
                    st = e.stat()
                    rel = os.path.relpath(e.path, root).replace(os.sep, "/")
                    found[rel] = (st.st_size, st.st_mtime_ns)
            except OSError:
                continue
    return found


def png_size(path: str) -> tuple[int, int] | None:
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def file_artifacts(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]],
                   files_dir: str) -> list[dict[str, Any]]:
    arts = []
    for rel in sorted(after):
        if before.get(rel) == after[rel]:
            continue
        is_image = rel.lower().endswith(IMAGE_SUFFIXES)
        size = png_size(os.path.join(files_dir, rel)) if rel.lower().endswith(".png") else None
        arts.append({"path": rel, "kind": "image" if is_image else "file", "size": after[rel][0],
                     "alt": "", "width": size[0] if size else None,
                     "height": size[1] if size else None})
    return arts


def reads(audit: ReadAudit, paths: Paths, modules: list[types.ModuleType]) -> list[str]:
    """Project-relative paths of files read and of the project ``modules`` imported.

    The script itself is listed only when the demo opened it (``open(__file__)``,
    ``inspect.getsource``): then its exact text, comments included, shapes the output.
    """
    found = set(audit.opened)
    for module in modules:
        f = getattr(module, "__file__", None)
        if isinstance(f, str):
            found.add(os.path.abspath(f))
    rels = {paths.project_rel(p) for p in found if os.path.isfile(p)}
    return sorted(r for r in rels if r)


def modules_mark() -> tuple[int, str, Any]:
    """How many modules ``sys.modules`` holds now and its last entry, for ``modules_since``: a
    dict keeps its insertion order, so what is imported from now on comes after that entry.
    (A copy of ``sys.modules`` would write the reference count of every module and name in
    it: in a child of the fork server, some 130 of the server's pages copied per run.)"""
    name = next(reversed(sys.modules))
    return len(sys.modules), name, sys.modules[name]


def modules_since(mark: tuple[int, str, Any]) -> list[types.ModuleType]:
    """Modules imported since ``mark`` (``modules_mark()``) was taken, ``__main__`` aside.

    What the interpreter loaded before the demo started (the standard library, site) is
    never a project file, and looking each of them up again costs a small demo's run time:
    only the entries after the mark are read.  When the mark's entry is gone or has moved,
    or the modules before it are no longer as many (the demo took some out of
    ``sys.modules``), every module is listed.
    """
    count, last, module_then = mark
    main = sys.modules.get("__main__")
    since: list[types.ModuleType] = []
    try:
        after = 0
        for name, module in reversed(sys.modules.items()):
            if name == last:
                if module is module_then and len(sys.modules) - after == count:
                    return [m for m in reversed(since) if m is not main]
                break
            since.append(module)
            after += 1
    except RuntimeError:  # a thread the demo left running imported meanwhile
        pass
    return [m for m in list(sys.modules.values()) if m is not main]


# What a script's globals mostly hold (its names, numbers, modules, functions, classes): never a
# file. isinstance against the io.IOBase ABC writes its caches for each new type, which in a
# child of the fork server copies some 40 of the server's pages per run.
_NEVER_FILES = frozenset({str, int, float, complex, bool, type(None), bytes, tuple, list, dict, set, frozenset,
                          type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType})


def flush_demo_files(namespace: dict[str, Any]) -> None:
    """Flush what interpreter shutdown would (the runner skips it): a ``sys.stdout`` or
    ``sys.stderr`` the demo replaced (``sys.stdout = open("log.txt", "w")``) and files its
    globals hold open, so what it wrote is on disk before its files are listed."""
    for stream in [sys.stdout, sys.stderr, *list(namespace.values())]:
        if type(stream) in _NEVER_FILES:
            continue
        if isinstance(stream, io.IOBase) and not isinstance(stream, (TextStream, BinaryStream)):
            try:
                if not stream.closed:
                    stream.flush()
            except Exception:
                pass  # a demo's broken stream: shutdown would have ignored it too
