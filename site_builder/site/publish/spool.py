"""Rendered files kept on disk from their rendering until the site is staged, not in memory.

A build that renders every page of a large site held every page and notebook until the end
(about 60 MB at 10,000 entries); each is now written, as it is rendered, into a scratch
folder beside the output and linked from there into the staged site.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from site_builder.fs import make_dirs, make_temp_dir, write_failure, write_new
from site_builder.site.sitefiles import SiteFile

# A file smaller than this costs more as a file of its own than it saves in memory.
SPOOLED_BYTES = 4096


class Spool:
    """A scratch folder (``.NAME.tmp-PID-spool-XXXX`` beside the output ``NAME``: a killed
    build's is removed by the next, see remove_dead_temporaries) holding rendered files."""

    def __init__(self, output: Path, shown: str) -> None:
        self.shown = shown  # the output folder as messages show it
        try:
            make_dirs(output.parent)
            self.folder = make_temp_dir(output.parent, f".{output.name}.tmp-{os.getpid()}-spool-")
        except OSError as exc:
            raise write_failure(exc, "making a scratch folder for the rendered pages", shown) from None
        self._numbers = itertools.count(1)

    def keep(self, file: SiteFile) -> SiteFile:
        """``file`` as a file in the spool (``rendered``: this build's bytes), when it is large."""
        if file.data is None or len(file.data) < SPOOLED_BYTES:
            return file
        return self.write(file.path, (file.data,))

    def write(self, path: str, parts: Iterable[bytes]) -> SiteFile:
        """The site's file ``path`` holding ``parts``, written into the spool as they come."""
        spooled = f"{self.folder}/{next(self._numbers)}"
        try:
            write_new(Path(spooled), parts)
        except OSError as exc:
            raise write_failure(exc, "writing a rendered page", self.shown) from None
        return SiteFile(path, source=spooled, rendered=True)

    def close(self) -> None:
        """Remove the spool (the staged or published site keeps its own links to the files)."""
        shutil.rmtree(self.folder, ignore_errors=True)
