"""Microbenchmark of the figure path (issue 19, item 6): draw, PNG encoding, thumbnail.

    python benchmarks/figures.py            # 40 figures, 3 rounds; CPU time per figure
    python benchmarks/figures.py --count 10 --rounds 1

Measures process CPU time (time.process_time), which a loaded machine disturbs far less
than wall time: per figure, Agg drawing at the builder's 2x, the opaque check, the PNG
encoding at several zlib levels and strategies (with the bytes each gives), and the
thumbnail made from the saved PNG.  The figures are the kinds a gallery makes: lines,
scatter, an image, a grid of small axes, bars with text.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from site_builder.run.child.outputs import figures  # noqa: E402
from site_builder.site.outputs import thumbnails  # noqa: E402

SCALE = 2.0
# (label, Pillow's PNG options): zlib level and strategy (compress_type: 0 default,
# 1 filtered, 2 Huffman only, 3 RLE, 4 fixed).
ENCODINGS = [
    ("level 6 (Pillow's default)", {}),
    ("level 1", {"compress_level": 1}),
    ("level 2", {"compress_level": 2}),
    ("level 3", {"compress_level": 3}),
    ("level 1, RLE", {"compress_level": 1, "compress_type": 3}),
    ("level 6, RLE", {"compress_level": 6, "compress_type": 3}),
    ("level 1, filtered", {"compress_level": 1, "compress_type": 1}),
]


def make_figure(i: int) -> plt.Figure:
    rng = np.random.default_rng(i)
    kind = i % 5
    if kind == 0:
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        x = np.linspace(0, 10, 500)
        for k in range(4):
            ax.plot(x, np.sin(x + k) * np.exp(-x / (5 + k)), label=f"curve {k}")
        ax.legend()
        ax.set_title("lines")
    elif kind == 1:
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        ax.scatter(rng.normal(size=2000), rng.normal(size=2000), c=rng.random(2000), s=8, alpha=0.6)
        ax.set_title("scatter")
    elif kind == 2:
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        im = ax.imshow(rng.random((64, 64)), cmap="viridis")
        fig.colorbar(im)
        ax.set_title("image")
    elif kind == 3:
        fig, axes = plt.subplots(3, 3, figsize=(8, 6))
        for ax in axes.flat:
            ax.hist(rng.normal(size=300), bins=20)
        fig.suptitle("grid")
    else:
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        values = rng.random(12)
        ax.bar(range(12), values)
        for k, v in enumerate(values):
            ax.text(k, v, f"{v:.2f}", ha="center", va="bottom")
        ax.set_title("bars")
    return fig


def cpu(action: Callable[[], object]) -> tuple[float, object]:
    t0 = time.process_time()
    result = action()
    return time.process_time() - t0, result


def pixels_of(fig: plt.Figure) -> Image.Image:
    buffer = figures._Pixels()
    fig.savefig(buffer, format="rgba", dpi=SCALE * fig.dpi)
    shape = buffer.buffer.shape
    return Image.frombuffer("RGBA", (shape[1], shape[0]), buffer.buffer, "raw", "RGBA", 0, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    times: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}

    def add(label: str, seconds: float, size: int = 0) -> None:
        times.setdefault(label, []).append(seconds)
        sizes[label] = sizes.get(label, 0) + size

    for _round in range(args.rounds):
        for i in range(args.count):
            fig = make_figure(i)
            seconds, image = cpu(lambda: pixels_of(fig))
            add("draw (Agg, rgba buffer)", seconds)
            seconds, _ = cpu(lambda: fig.savefig(io.BytesIO(), format="rgba", dpi=SCALE * fig.dpi))
            add("draw again (same figure)", seconds)
            seconds, rgb = cpu(lambda: image.convert("RGB") if image.getchannel("A").getextrema() == (255, 255)
                               else image)
            add("opaque check + RGB", seconds)
            for label, options in ENCODINGS:
                out = io.BytesIO()
                seconds, _ = cpu(lambda: rgb.save(out, format="png", **options))
                add(f"encode {label}", seconds, len(out.getvalue()))
            seconds, png = cpu(lambda: figures.encode_png(np.asarray(rgb), SCALE * fig.dpi))
            add("encode: the builder's (Up filter, zlib 3)", seconds, len(png))
            seconds, _ = cpu(lambda: thumbnails._make(png))
            add("thumbnail (decode, resize, encode)", seconds)
            seconds, _ = cpu(lambda: fig.savefig(io.BytesIO(), format="png", dpi=SCALE * fig.dpi))
            add("savefig(png) for comparison", seconds)
            plt.close(fig)
    base = sizes["encode level 6 (Pillow's default)"]
    print(f"{args.count} figures x {args.rounds} rounds at {SCALE:g}x; CPU ms per figure (median of rounds)")
    for label, values in times.items():
        per_round = [sum(values[r * args.count:(r + 1) * args.count]) / args.count for r in range(args.rounds)]
        extra = ""
        if label.startswith("encode") and base:
            extra = f"   bytes {sizes[label] / base:.2f}x of level 6"
        print(f"  {label:40s} {1000 * statistics.median(per_round):7.1f} ms{extra}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
