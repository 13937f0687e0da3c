"""The block's Matplotlib figures, saved as PNG artifacts once the block has run."""

from __future__ import annotations

import io
import os
import struct
import sys
import zlib
from typing import Any

from .animations import live_animations, save_animation
from ..files import BUILDER_DIR, png_size
from ..protocol import safe_name


# The index's thumbnails: made here, from the pixels of the figure the index shows (the
# ``thumbnail_number``-th figure of the run), beside its PNG; the builder adopts them
# (site/outputs/thumbnails.py), which would otherwise decode the PNG again (13 ms at 2x).
THUMBNAIL_BOX = (320, 224)  # pixels; shown at half that size, sharp on high-density screens
# zlib's run-length strategy: the same bytes as the default (flat colours compress as runs)
# in half the time.
ZLIB_RLE = 3
_thumbnail = {"number": 0, "saved": 0}  # the figure to thumbnail (0: none), the figures saved so far


def thumbnail_of(number: int | None) -> None:
    """Make the thumbnail of the run's ``number``-th figure (1-based, None: the first; one
    counted from the end is left to the builder, as figures are still to come)."""
    _thumbnail["number"] = number or 1


def thumbnail_path(figure: str) -> str:
    """Where the thumbnail of the figure saved at ``figure`` is written."""
    return figure.removesuffix(".png") + ".thumbnail.png"


def thumbnail_png(image: Any) -> bytes:
    """The thumbnail of the Pillow ``image`` as PNG bytes, scaled into THUMBNAIL_BOX: RGB or
    RGBA, or RGBX (an opaque figure's pixels read in place), saved as RGB."""
    # reducing_gap: a box filter first, then Lanczos; optimize=False: Pillow's search for
    # the smallest encoding cost twice the rest for 3% of the size (measured on figures)
    image.thumbnail(THUMBNAIL_BOX, sys.modules["PIL.Image"].Resampling.LANCZOS, reducing_gap=2.0)
    if image.mode == "RGBX":  # the same pixels as from an RGB image, without converting the whole
        image = image.convert("RGB")
    out = io.BytesIO()
    image.save(out, format="PNG", compress_type=ZLIB_RLE)
    return out.getvalue()


def save_figures(block: str, builder_dir: str, scale: float = 2.0, namespace: dict[str, Any] | None = None,
                 settings: dict[str, Any] | None = None, shown: list[Any] | None = None,
                 first: int = 1) -> list[dict[str, Any]]:
    """Save every open Matplotlib figure as a PNG artifact (``scale`` pixels per CSS pixel),
    then close them all; then the figures of ``shown`` (a notebook cell's value that is a figure
    pyplot no longer holds, as Jupyter shows it).  A figure an animation of ``namespace`` draws
    is saved as that animation (see animations.py), its poster frame as the figure's PNG.
    The figures are numbered from ``first`` (a notebook's ``plt.show()`` saved the earlier ones).

    ``builder_dir`` is the builder's own folder, outside the demo's working folder: the
    builder moves it to BUILDER_DIR of the run's folder once the demo is dead.
    """
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None and not shown:
        return []
    arts: list[dict[str, Any]] = []
    safe = safe_name(block)
    animated = live_animations(namespace) if namespace is not None else {}
    figures = [(num, None) for num in plt.get_fignums()] if plt is not None else []
    figures += [(None, fig) for fig in shown or ()]
    for k, (num, fig) in enumerate(figures, start=first):
        try:
            _save_figure(plt.figure(num) if fig is None else fig, k, safe, builder_dir, scale, animated,
                         settings or {}, arts)
        except Exception as exc:
            sys.stderr.write(f"site_builder: could not save figure {num or k}: {type(exc).__name__}: {exc}\n")
    if plt is not None:
        plt.close("all")
    return arts


def _save_figure(fig: Any, k: int, safe: str, builder_dir: str, scale: float, animated: dict[int, Any],
                 settings: dict[str, Any], arts: list[dict[str, Any]]) -> None:
    """Save figure number ``k`` of the block (or its animation) and add its artifacts to ``arts``."""
    rel = f"{BUILDER_DIR}/{safe}-figure-{k}.png"
    path = os.path.join(builder_dir, f"{safe}-figure-{k}.png")
    animation = animated.get(id(fig))
    movie = None
    if animation is not None:
        stem = os.path.join(builder_dir, f"{safe}-animation-{k}")
        try:
            movie = save_animation(animation, fig, path, stem, scale * fig.dpi, settings, save_png)
        except Exception as exc:  # the figure still shows, as a still
            sys.stderr.write(f"site_builder: could not save the animation of figure {k}: "
                             f"{type(exc).__name__}: {exc}\n")
    wanted = _thumbnail["saved"] + 1 == _thumbnail["number"] and animation is None
    if animation is None or not os.path.isfile(path):  # no frame drawn: the figure as it is
        save_png(fig, path, scale * fig.dpi, thumbnail_path(path) if wanted else None)
    size = png_size(path)
    _thumbnail["saved"] += 1
    arts.append({"path": rel, "kind": "figure", "size": os.path.getsize(path),
                 "alt": figure_alt(fig), "width": round(size[0] / scale) if size else None,
                 "height": round(size[1] / scale) if size else None})
    if movie is not None:  # after its poster, the figure's PNG, which it takes its size from
        arts.append({**movie, "alt": arts[-1]["alt"], "width": arts[-1]["width"],
                     "height": arts[-1]["height"]})


class _Pixels:
    """A file for ``savefig(format="rgba")``: keeps the buffer Agg writes, which knows its shape."""

    buffer: Any = None

    def write(self, data: Any) -> int:
        self.buffer = data if self.buffer is None else None  # more than one write: not the buffer
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:  # Matplotlib takes only seekable files
        return 0


# The PNG encoding, measured on gallery-like figures at 2x (benchmarks/figures.py, CPU time):
# Pillow's level 6, with its per-row choice among five filters, took 50 ms a figure, and 23 ms
# at level 0 (the filter search alone); the Up filter (each row minus the one above: one NumPy
# subtraction) then zlib level 3 takes 20 ms, Pillow's RGBA to RGB included, for 16% more bytes.
PNG_FILTER_UP = 2
PNG_ZLIB_LEVEL = 3
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Rows filtered and compressed a band at a time: a demo's process touches a band's worth of
# fresh memory per figure, not four whole-image copies (16 MB at 2x, 4,000 page faults).
# zlib's stream does not depend on how its input is cut.
_BAND_ROWS = 32


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(pixels: Any, dpi: float, opaque: bool = False) -> bytes:
    """The PNG of a (height, width, channels) uint8 NumPy array (RGB or RGBA), Up-filtered;
    an ``opaque`` RGBA array is written as RGB (its alpha channel dropped)."""
    np = sys.modules["numpy"]
    height, width, channels = pixels.shape
    kept = 3 if opaque else channels
    flat = pixels.reshape(height, width * channels)
    filtered = np.empty((_BAND_ROWS, width * channels), dtype=np.uint8)
    rows = np.empty((_BAND_ROWS, width * kept + 1), dtype=np.uint8)
    rows[:, 0] = PNG_FILTER_UP
    compressor = zlib.compressobj(PNG_ZLIB_LEVEL)
    parts = []
    for top in range(0, height, _BAND_ROWS):
        count = min(_BAND_ROWS, height - top)
        # uint8 wraps modulo 256, as PNG's filter does; the first row has none above it
        target = rows[:count, 1:] if kept == channels else filtered[:count]
        if top == 0:
            target[0] = flat[0]
            np.subtract(flat[1:count], flat[:count - 1], out=target[1:])
        else:
            np.subtract(flat[top:top + count], flat[top - 1:top + count - 1], out=target)
        if kept != channels:  # Pillow drops the filtered alpha bytes faster than a strided NumPy copy
            image = sys.modules["PIL.Image"].frombuffer("RGBA", (width, count), target, "raw", "RGBA", 0, 1)
            rows[:count, 1:] = np.frombuffer(image.tobytes("raw", "RGB"), dtype=np.uint8).reshape(count, -1)
        parts.append(compressor.compress(rows[:count].data))
    parts.append(compressor.flush())
    per_metre = int(dpi / 0.0254 + 0.5)
    header = struct.pack(">IIBBBBB", width, height, 8, 2 if kept == 3 else 6, 0, 0, 0)
    return b"".join((_PNG_SIGNATURE, _chunk(b"IHDR", header),
                     _chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
                     _chunk(b"IDAT", b"".join(parts)), _chunk(b"IEND", b"")))


def save_png(fig: Any, path: str, dpi: float, thumbnail: str | None = None) -> None:
    """Write ``fig`` to ``path`` as :func:`png_bytes` draws it, and its thumbnail to
    ``thumbnail`` when given (none when the backend gives no pixels: the builder makes it)."""
    rgba = _rgba(fig, dpi)
    opaque = _opaque(rgba)  # one pass over the alpha channel, for the figure and its thumbnail
    data = _png_of(fig, dpi, rgba, opaque)
    with open(path, "wb") as f:
        f.write(data)
    if thumbnail is None or rgba is None:
        return
    mode = "RGBX" if opaque else "RGBA"  # the PNG's pixels, as the builder would decode them
    data = thumbnail_png(sys.modules["PIL.Image"].frombuffer(mode, (rgba.shape[1], rgba.shape[0]), rgba, "raw", mode, 0, 1))
    with open(thumbnail, "wb") as f:
        f.write(data)


def png_bytes(fig: Any, dpi: float) -> bytes:
    """``fig`` as the PNG ``savefig`` would draw it, without an alpha channel when it is opaque.

    An opaque figure (most are) then takes a quarter less to compress and to download.
    Backends that write no shaped buffer get ``savefig``'s own PNG.
    """
    rgba = _rgba(fig, dpi)
    return _png_of(fig, dpi, rgba, _opaque(rgba))


def _rgba(fig: Any, dpi: float) -> Any:
    """``fig`` drawn at ``dpi`` as Agg's own (height, width, 4) buffer in NumPy (not a copy),
    or None for a backend that writes no shaped buffer."""
    np = sys.modules.get("numpy")
    if np is None or "PIL.Image" not in sys.modules:  # Matplotlib imports both
        return None
    pixels = _Pixels()
    fig.savefig(pixels, format="rgba", dpi=dpi)  # the same drawing (bbox, facecolor) as png
    shape = getattr(pixels.buffer, "shape", None)
    if shape is None or len(shape) != 3 or shape[2] != 4:
        return None
    return np.asarray(pixels.buffer)


def _opaque(rgba: Any) -> bool:
    return rgba is not None and bool(rgba[:, :, 3].min() == 255)


def _png_of(fig: Any, dpi: float, rgba: Any, opaque: bool) -> bytes:
    if rgba is None:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
        return buffer.getvalue()
    return encode_png(rgba, dpi, opaque=opaque)


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
