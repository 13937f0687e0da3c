"""Rich outputs of a block: its value and its ``IPython.display.display(...)`` calls.

A bundle is reported as the record keeps it (see ``site_builder.run.execute.Display``):
``{"data": {MIME: text}, "files": {MIME: path}, "omitted": {MIME: bytes}}``.  Binary
types and SVG are written as files next to the figures (``files``: never inline, so no
script in an SVG can run); JSON types as JSON text; a representation over the size cap
is left out and its size kept (``omitted``), so the page can say so.

``display()`` is IPython's.  In a script, when the demo imports IPython (or it was
preloaded), its ``display`` function is replaced by one that publishes here, in order with
the block's printed output (without IPython installed a demo's ``display`` call fails as it
would under ``python demos/x.py``).  In a notebook, IPython's own display publisher and
displayhook publish here (``shell.py``), with IPython's formatters' bundles.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..files import BUILDER_DIR, png_size
from .figures import figure_alt, png_bytes
from .quoted import glued
from ..protocol import DisplayPayload, Event, GlueEvent, safe_name
from .values import FILE_TYPES, describe_value, mime_bundle, normalised, tells_nothing, worth_showing

DISPLAY_MODULE = "IPython.core.display_functions"  # where IPython >= 7.23 defines display()


class Displays:
    """Turns bundles into records (writing their files) and publishes display() calls."""

    def __init__(self, sink: Any, builder_dir: str, limit: int) -> None:
        self.sink, self.builder_dir, self.limit = sink, builder_dir, limit
        self.index: int | None = None
        self.safe = ""
        self.count = 0
        self.artifacts: list[dict[str, Any]] = []

    def begin(self, index: int, block: str) -> None:
        self.index, self.count, self.artifacts = index, 0, []
        self.safe = safe_name(block)

    def end(self) -> list[dict[str, Any]]:
        """The files written for this block's bundles (artifacts of kind "display")."""
        self.index = None
        return self.artifacts

    def value(self, value: Any) -> DisplayPayload | None:
        """The record of a block's value, or None when it is not worth showing."""
        bundle = describe_value(value)
        return self.record(bundle) if bundle else None

    def formatted_value(self, value: Any, data: dict[str, Any], metadata: Any = None) -> DisplayPayload | None:
        """The record of a block's value from the bundle IPython's formatters made of it
        (``data``, ``metadata``), or None when it is not worth showing."""
        bundle = worth_showing(value, normalised(data))
        return self.record(bundle, metadata) if bundle else None

    def show(self, obj: Any, raw: bool = False, metadata: Any = None) -> None:
        """Publish one display() argument, after everything printed before it."""
        self.publish(mime_bundle(obj, raw), metadata)

    def publish(self, bundle: dict[Any, Any], metadata: Any = None) -> None:
        """Publish one display output (a MIME bundle, as IPython's display publisher gets it)."""
        if self.index is None:  # between blocks (an atexit hook): nowhere to show it
            return
        glue = glued(bundle, metadata)  # MyST-NB's glue(name, value): kept for the prose to paste
        bundle = normalised(glue[1] if glue else bundle)
        if not bundle:
            return
        record = self.record(bundle, metadata)
        if glue is not None:
            self.sink.events.send([GlueEvent(event=Event.GLUE, i=self.index, name=glue[0][:200], **record)])
        if glue is None or glue[2]:
            self.sink.display(record)

    def picture(self, value: Any, text: str, scale: float) -> tuple[dict[str, str], str]:
        """(the image files, written as the running block's, and what they show) of a value shown
        as an image: a Matplotlib figure (drawn at ``scale`` pixels per CSS pixel, as the block's
        figures are), or one whose ``text`` says nothing and that has an image form; else ({}, "")."""
        if self.index is None:
            return {}, ""
        if type(value).__module__ == "matplotlib.figure" and hasattr(value, "savefig"):
            width, height = (round(x * value.dpi) for x in value.get_size_inches())
            bundle: dict[str, str | bytes] = {"image/png": png_bytes(value, scale * value.dpi)}
            record = self.record(bundle, {"image/png": {"width": width, "height": height}})
            return record["files"], figure_alt(value) or text
        if not tells_nothing(value, text):
            return {}, ""
        bundle = {mime: data for mime, data in mime_bundle(value).items() if mime.startswith("image/")}
        return (self.record(bundle)["files"], text) if bundle else ({}, "")

    def record(self, bundle: dict[str, str | bytes], metadata: Any = None) -> DisplayPayload:
        """The record of a bundle, its files written; ``metadata`` may give an image's shown
        size (Jupyter's ``{MIME: {"width": W, "height": H}}``, as a retina PNG carries it)."""
        data: dict[str, str] = {}
        files: dict[str, str] = {}
        omitted: dict[str, int] = {}
        self.count += 1
        for mime, content in bundle.items():
            size = len(content.encode("utf-8", "replace") if isinstance(content, str) else content)
            if mime != "text/plain" and size > self.limit:
                omitted[mime] = size
            elif mime in FILE_TYPES:
                path = self._write(mime, content, _shown_size(metadata, mime))
                if path:
                    files[mime] = path
            elif isinstance(content, str):
                data[mime] = content
        return DisplayPayload(data=data, files=files, omitted=omitted)

    def _write(self, mime: str, content: str | bytes, shown: tuple[int, int] | None = None) -> str | None:
        name = f"{self.safe}-display-{self.count}{FILE_TYPES[mime]}"
        path = os.path.join(self.builder_dir, name)
        try:
            with open(path, "wb") as f:
                f.write(content.encode("utf-8") if isinstance(content, str) else content)
        except OSError as exc:
            sys.stderr.write(f"site_builder: could not save a {mime} output: {exc}\n")
            return None
        size = shown or (png_size(path) if mime == "image/png" else None)
        rel = f"{BUILDER_DIR}/{name}"
        self.artifacts.append({"path": rel, "kind": "display", "size": os.path.getsize(path), "alt": "",
                               "width": size[0] if size else None, "height": size[1] if size else None})
        return rel


def _shown_size(metadata: Any, mime: str) -> tuple[int, int] | None:
    """(width, height) an image's metadata asks it to be shown at, when it gives both."""
    entry = metadata.get(mime) if isinstance(metadata, dict) else None
    if not isinstance(entry, dict):
        return None
    width, height = entry.get("width"), entry.get("height")
    if all(isinstance(v, int) and not isinstance(v, bool) and 0 < v < 100_000 for v in (width, height)):
        return width, height
    return None


def hook_ipython_display(displays: Displays) -> None:
    """Make IPython's ``display()`` publish to ``displays``: now if IPython is loaded, else
    when the demo imports it (``when_imported``)."""

    def display(*objs: Any, include: Any = None, exclude: Any = None, metadata: Any = None,
                transient: Any = None, display_id: Any = None, raw: bool = False, clear: bool = False,
                **kwargs: Any) -> None:
        for obj in objs:
            displays.show(obj, raw, metadata)

    display.__doc__ = "IPython's display(), as the site builder captures it: each object shows under its block."
    module = sys.modules.get(DISPLAY_MODULE)
    if module is not None:
        _patch_loaded(module, display)
        return
    # Patched as soon as it has run: before IPython.display imports display() by name.
    when_imported(DISPLAY_MODULE, lambda loaded: setattr(loaded, "display", display))


def _patch_loaded(module: Any, display: Any) -> None:
    """Replace ``display`` in DISPLAY_MODULE and wherever IPython imported it by name."""
    original = getattr(module, "display", None)
    for name, loaded in list(sys.modules.items()):
        if (name == "IPython" or name.startswith("IPython.")) and getattr(loaded, "display", None) is original:
            try:
                setattr(loaded, "display", display)
            except Exception:
                pass


def when_imported(name: str, patch: Any) -> None:
    """Call ``patch(module)`` as soon as the module ``name`` has run, when the demo imports it
    (never importing it ourselves: a demo that does not use it must not pay for it)."""
    sys.meta_path.insert(0, _AfterImport(name, patch))


class _AfterImport:
    """A meta path finder that finds nothing itself: it wraps the real loader of one module
    so that module is patched as soon as it has run."""

    def __init__(self, name: str, patch: Any) -> None:
        self.name, self.patch = name, patch

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, patch = spec.loader, self.patch
        real_exec = loader.exec_module

        def exec_module(module: Any) -> None:
            real_exec(module)
            patch(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
