"""Matplotlib animations alive at the end of a block, saved so they play under it.

An animation (``FuncAnimation``, ``ArtistAnimation``) bound to a global name of the demo,
whose figure is still open, is encoded with ffmpeg as an H.264 MP4 when one is found (the
builder's ``SITE_BUILDER_FFMPEG``, else looked up here: see ``find_ffmpeg``), else with Pillow as an animated WebP (or PNG where Pillow has no
WebP).  Its last frame kept is saved as the figure's PNG: the poster (a plot that builds
up shows whole), which the thumbnail and the notebook use.  Past ``frames`` frames the rest is left out; a file over ``max_bytes``
is dropped (the poster stays); each says so on the block's stderr, never failing the block.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from ..files import BUILDER_DIR

# The environment the demo's process started with (the builder's): the ffmpeg lookup sees it
# as the builder would, whatever the demo changed in its own.
_ENVIRON = dict(os.environ)
# imageio-ffmpeg's ffmpeg (it runs the binary to check it), else the one on PATH. Run in a
# process of its own: the demo's process never imports imageio_ffmpeg.
_FIND_FFMPEG = """import sys
try:
    import imageio_ffmpeg
    sys.stdout.write(imageio_ffmpeg.get_ffmpeg_exe())
except Exception:  # not installed, or its binary is missing for this platform
    import shutil
    sys.stdout.write(shutil.which("ffmpeg") or "")
"""
_found: list[str | None] = []  # find_ffmpeg's answer, once it has looked



class _Enough(Exception):
    """Raised from the writer once it has the frames it may keep."""


def live_animations(namespace: dict[str, Any]) -> dict[int, Any]:
    """id(figure) -> the animation drawing it, for animations held by the demo's globals."""
    module = sys.modules.get("matplotlib.animation")
    if module is None:
        return {}
    found = {}
    for value in list(namespace.values()):
        if isinstance(value, module.Animation) and getattr(value, "_fig", None) is not None:
            found[id(value._fig)] = value
    return found


def frame_count(animation: Any) -> int | None:
    """How many frames saving ``animation`` would draw, when it says (None: unknown or endless)."""
    count = getattr(animation, "_save_count", None)
    if count is None and hasattr(animation, "_framedata"):  # ArtistAnimation
        count = len(animation._framedata)
    return count if isinstance(count, int) else None


def save_animation(animation: Any, fig: Any, poster: str, stem: str, dpi: float,
                   settings: dict[str, Any], save_png: Any) -> dict[str, Any] | None:
    """Encode ``animation``; write its last frame kept to ``poster`` (with ``save_png``).

    Returns the animation's artifact, or None when its file was not kept.  ``stem`` is the
    path of its file without suffix, in the builder's folder.
    """
    module = sys.modules["matplotlib.animation"]
    ffmpeg = find_ffmpeg() if settings.get("find_ffmpeg") else settings.get("ffmpeg")
    cap = int(settings.get("animation_frames", 300))
    base = module.FFMpegWriter if ffmpeg else module.PillowWriter
    interval = float(getattr(animation, "_interval", 200) or 200)
    fps = max(1.0, min(60.0, 1000.0 / interval))

    class Writer(base):  # type: ignore[misc, valid-type]
        kept = 0

        def grab_frame(self, **savefig_kwargs: Any) -> None:
            super().grab_frame(**savefig_kwargs)
            self.kept += 1
            if self.kept >= cap:
                raise _Enough  # the figure stays at the last frame kept

    if ffmpeg:
        suffix = ".mp4"
        writer = Writer(fps=fps, codec="h264",
                        extra_args=["-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                                    "-movflags", "+faststart"])
    else:
        suffix = ".webp" if _pillow_webp() else ".png"
        writer = Writer(fps=fps)
    path = stem + suffix
    matplotlib = sys.modules["matplotlib"]
    try:
        with matplotlib.rc_context({"animation.ffmpeg_path": ffmpeg} if ffmpeg else {}):
            animation.save(path, writer=writer, dpi=dpi)
    except _Enough:
        pass  # the writer's finish() has run: the file holds the frames kept
    if writer.kept:
        save_png(fig, poster, dpi)  # the last frame: a plot that builds up shows whole
    total = frame_count(animation)
    if writer.kept >= cap and (total is None or total > cap):
        more = f"{total} frames" if total else "more frames"
        sys.stderr.write(f"site_builder: the animation has {more}; the first {cap} are shown "
                         f"(raise animation_frames in [tool.site_builder] to show more)\n")
    if not os.path.isfile(path):
        return None
    size = os.path.getsize(path)
    limit = int(settings.get("animation_size", 20_000_000))
    if size > limit:
        os.remove(path)
        sys.stderr.write(f"site_builder: the animation's {suffix[1:].upper()} is {_size(size)}, over "
                         f"animation_size ({_size(limit)}): its poster frame is shown instead "
                         f"(raise animation_size in [tool.site_builder] to show it)\n")
        return None
    name = os.path.basename(path)
    return {"path": f"{BUILDER_DIR}/{name}", "kind": "animation", "size": size, "alt": "",
            "width": None, "height": None}


def find_ffmpeg() -> str | None:
    """The ffmpeg of imageio-ffmpeg, else the one on PATH, else None: looked up by the first
    animation of a demo (most builds have none), in the builder's environment and interpreter."""
    if not _found:
        import subprocess  # Matplotlib's animation module has imported it already

        try:
            done = subprocess.run([sys.executable, "-P", "-c", _FIND_FFMPEG], env=_ENVIRON, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=60)
            _found.append(done.stdout if done.returncode == 0 and done.stdout else None)
        except (OSError, subprocess.SubprocessError):
            _found.append(None)
    return _found[0]


def _pillow_webp() -> bool:
    try:  # by name: Pillow is Matplotlib's dependency, loaded already; this file imports no package
        return bool(importlib.import_module("PIL.features").check("webp"))
    except Exception:
        return False


def _size(n: int) -> str:
    """Decimal size, as the pages write sizes (site.formatting.format_size, which the child cannot import)."""
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB"
