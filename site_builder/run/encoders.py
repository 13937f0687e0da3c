"""Which encoder the child uses for Matplotlib animations: ffmpeg when one is found, else Pillow.

ffmpeg comes from ``SITE_BUILDER_FFMPEG`` (a path, or ``none`` to use Pillow), else the
``imageio-ffmpeg`` package (the ``animations`` extra: a static build with H.264), else the
``ffmpeg`` on ``PATH``.  The last two are looked up by the child, when a demo first animates
(``child/outputs/animations.py``): imageio-ffmpeg checks its binary by running it, about 15 ms
of CPU that a build whose demos never animate (most) does not pay.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil

log = logging.getLogger(__name__)
ENV_FFMPEG = "SITE_BUILDER_FFMPEG"


@functools.lru_cache(maxsize=4)
def _named(setting: str) -> str | None:
    if setting.strip().lower() in ("", "0", "none", "off", "no"):
        return None
    found = shutil.which(setting)
    if found is None:
        log.warning("%s=%s: no such program; animations are encoded with Pillow", ENV_FFMPEG, setting)
    return found


def ffmpeg_choice() -> dict[str, str | bool | None]:
    """What a job says of ffmpeg: ``{"ffmpeg": PATH or None}`` when ``SITE_BUILDER_FFMPEG`` names
    it (None: Pillow), else ``{"find_ffmpeg": True}``: the child looks for one when it needs it."""
    setting = os.environ.get(ENV_FFMPEG)
    return {"ffmpeg": _named(setting)} if setting is not None else {"find_ffmpeg": True}
