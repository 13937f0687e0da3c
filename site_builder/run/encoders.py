"""Which encoder the child uses for Matplotlib animations: ffmpeg when one is found, else Pillow.

ffmpeg comes from ``SITE_BUILDER_FFMPEG`` (a path, or ``none`` to use Pillow), else the
``imageio-ffmpeg`` package (the ``animations`` extra: a static build with H.264), else the
``ffmpeg`` on ``PATH``.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import threading

log = logging.getLogger(__name__)
ENV_FFMPEG = "SITE_BUILDER_FFMPEG"
_LOOKUP = threading.Lock()


@functools.lru_cache(maxsize=4)
def _find(setting: str | None) -> str | None:
    if setting is not None:
        if setting.strip().lower() in ("", "0", "none", "off", "no"):
            return None
        found = shutil.which(setting)
        if found is None:
            log.warning("%s=%s: no such program; animations are encoded with Pillow", ENV_FFMPEG, setting)
        return found
    try:
        import imageio_ffmpeg

        return str(imageio_ffmpeg.get_ffmpeg_exe())
    except Exception:  # not installed, or its binary is missing for this platform
        return shutil.which("ffmpeg")


def find_ffmpeg() -> str | None:
    """The ffmpeg program animations are encoded with, or None (Pillow then makes them)."""
    # One lookup at a time: the build's early lookup and its first demo's job ask at once, and
    # each would run ``ffmpeg -version`` (about 17 ms of CPU) before the other's answer is cached.
    with _LOOKUP:
        return _find(os.environ.get(ENV_FFMPEG))
