"""Full-text search: index the staged site folder with Pagefind before it is swapped in.

The index lands in ``pagefind/`` inside the site, so it is published atomically with the
pages it describes.  Without the Pagefind binary the site is still built (with a warning);
the search box then says search is unavailable.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

SEARCH_DIR = "pagefind"
INDEX_TIMEOUT = 120.0  # seconds; Pagefind indexes thousands of pages per second
# Line numbers are the script's, not words of the entry.
EXCLUDE_SELECTORS = ".linenos"


def _pagefind_binary() -> Path | None:
    try:
        import pagefind_bin  # the binary ships in the PyPI package "pagefind[bin]"

        return pagefind_bin.get_executable()
    except (ImportError, FileNotFoundError):
        return None


def index_site(site_dir: Path) -> str | None:
    """Write the Pagefind index into ``site_dir/pagefind``; a one-line warning when it could not."""
    binary = _pagefind_binary()
    if binary is None:
        return "search index not built: the Pagefind binary is not installed (pip install 'pagefind[bin]')"
    command = [
        str(binary),
        "--site", str(site_dir),
        "--output-subdir", SEARCH_DIR,
        "--exclude-selectors", EXCLUDE_SELECTORS,
        "--keep-index-url",  # result links then work on hosts that do not serve folder indexes
        "--silent",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INDEX_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"search index not built: Pagefind did not run ({type(exc).__name__})"
    if done.returncode != 0:
        # Pagefind's messages name files by their staged (absolute) path: keep the last line only.
        last = (done.stderr.strip().splitlines() or ["no message"])[-1].replace(str(site_dir), "<site>")
        return f"search index not built: Pagefind failed ({last})"
    log.debug("search index written to %s/", SEARCH_DIR)
    return None
