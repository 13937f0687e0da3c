"""The index's "Download all" archives: every script, every notebook, as reproducible zips.

The same scripts and notebooks give the same bytes: entries in name order, one fixed
timestamp (``SOURCE_DATE_EPOCH`` when set, else 1980-01-01, the earliest a zip can hold),
fixed permissions (0644) and compression level, no extra fields.
"""

from __future__ import annotations

import io
import os
import time
import zipfile
from pathlib import Path

from site_builder.site.sitefiles import EntryBuild, SiteFile, script_download

ARCHIVE_DIR = "_downloads"  # in the site; never an entry name (names start with a letter or digit)
SCRIPTS_ZIP = f"{ARCHIVE_DIR}/scripts.zip"
NOTEBOOKS_ZIP = f"{ARCHIVE_DIR}/notebooks.zip"
_EARLIEST = 315532800  # 1980-01-01 00:00:00 UTC: zip timestamps start there
_LATEST = 4354819198  # 2107-12-31 23:59:58 UTC: and end there


def _timestamp() -> tuple[int, int, int, int, int, int]:
    try:
        epoch = min(max(int(os.environ.get("SOURCE_DATE_EPOCH", "")), _EARLIEST), _LATEST)
    except ValueError:
        epoch = _EARLIEST
    return time.gmtime(epoch)[:6]


def reproducible_zip(members: dict[str, bytes]) -> bytes:
    """A zip of ``members`` (archive path -> bytes) that depends on nothing else."""
    stamp = _timestamp()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.create_system = 3  # Unix, whatever builds it
            info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, members[name], compresslevel=9)
    return out.getvalue()


def _data(file: SiteFile) -> bytes:
    return file.data if file.data is not None else Path(file.source or "").read_bytes()


def archive_files(builds: list[EntryBuild], files: list[SiteFile]) -> list[SiteFile]:
    """The two archives, from the entries' scripts and the notebooks among the site's ``files``.

    Members keep the demos folder's layout: ``plot.py``, ``basics/plot.py``, ``basics/plot.ipynb``.
    """
    by_path = {f.path: f for f in files}
    scripts = {f"{b.entry.name}.py": script_download(b.entry) for b in builds}
    notebooks = {}
    for build in builds:
        notebook = by_path.get(f"{build.entry.name}/{build.entry.stem}.ipynb")
        if notebook is not None:
            notebooks[f"{build.entry.name}.ipynb"] = _data(notebook)
    return [SiteFile(SCRIPTS_ZIP, data=reproducible_zip(scripts)),
            SiteFile(NOTEBOOKS_ZIP, data=reproducible_zip(notebooks))]
