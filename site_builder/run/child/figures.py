"""The block's Matplotlib figures, saved as PNG artifacts once the block has run."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from .files import BUILDER_DIR, png_size


def save_figures(block: str, builder_dir: str, scale: float = 2.0) -> list[dict[str, Any]]:
    """Save every open Matplotlib figure as a PNG artifact (``scale`` pixels per CSS pixel),
    then close them all.

    ``builder_dir`` is the builder's own folder, outside the demo's working folder: the
    builder moves it to BUILDER_DIR of the run's folder once the demo is dead.
    """
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    arts = []
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", block)  # as execute._safe_name
    for k, num in enumerate(plt.get_fignums(), start=1):
        rel = f"{BUILDER_DIR}/{safe}-figure-{k}.png"
        path = os.path.join(builder_dir, f"{safe}-figure-{k}.png")
        try:
            fig = plt.figure(num)
            save_png(fig, path, scale * fig.dpi)
            size = png_size(path)
            arts.append({"path": rel, "kind": "figure", "size": os.path.getsize(path),
                         "alt": figure_alt(fig), "width": round(size[0] / scale) if size else None,
                         "height": round(size[1] / scale) if size else None})
        except Exception as exc:
            sys.stderr.write(f"site_builder: could not save figure {num}: {type(exc).__name__}: {exc}\n")
    plt.close("all")
    return arts


class _Pixels:
    """A file for ``savefig(format="rgba")``: keeps the buffer Agg writes, which knows its shape."""

    buffer: Any = None

    def write(self, data: Any) -> int:
        self.buffer = data if self.buffer is None else None  # more than one write: not the buffer
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:  # Matplotlib takes only seekable files
        return 0


def save_png(fig: Any, path: str, dpi: float) -> None:
    """Save ``fig`` as the PNG ``savefig`` would, without an alpha channel when it is opaque.

    An opaque figure (most are) then takes a quarter less to compress and to download.
    Backends that write no shaped buffer get ``savefig``'s own PNG.
    """
    image_module = sys.modules.get("PIL.Image")  # matplotlib.image imports Pillow
    pixels = _Pixels()
    shape = None
    if image_module is not None:
        fig.savefig(pixels, format="rgba", dpi=dpi)  # the same drawing (bbox, facecolor) as png
        shape = getattr(pixels.buffer, "shape", None)
    if shape is None or len(shape) != 3 or shape[2] != 4:
        fig.savefig(path, format="png", dpi=dpi, metadata={"Software": None})
        return
    image = image_module.frombuffer("RGBA", (shape[1], shape[0]), pixels.buffer, "raw", "RGBA", 0, 1)
    if image.getchannel("A").getextrema() == (255, 255):
        image = image.convert("RGB")
    image.save(path, format="png", dpi=(dpi, dpi))


def figure_alt(fig: Any) -> str:
    parts = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(suptitle.get_text())
    for ax in fig.axes:
        for loc in ("left", "center", "right"):
            parts.append(ax.get_title(loc=loc))
        parts += [ax.get_xlabel(), ax.get_ylabel()]
    return "; ".join(p.strip() for p in parts if p and p.strip())
