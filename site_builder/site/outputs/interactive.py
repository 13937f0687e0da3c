"""Interactive figures (Plotly), offline: plotly.js from the installed package, data files per figure.

The page's CSP runs scripts of its own origin only, none inline, and ``fetch()`` fails from
``file://``; so each figure's JSON is a small script file beside the page that registers it
(``plotly-N.js``), and ``static/figures.js`` draws the registered figures with the plotly.js
the site copied once from the ``plotly`` package (``static/plotly.min.js``), loaded only by
pages that show a figure.  The JSON comes from a record (untrusted): it is parsed and
written again, so what the file holds is a JSON value and nothing else.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

from site_builder.run.results import RunResult
from site_builder.site.sitefiles import TEMPLATES_DIR, SiteFile

log = logging.getLogger(__name__)

PLOTLY_MIME = "application/vnd.plotly.v1+json"
PLOTLY_JS = "static/plotly.min.js"
FIGURES_JS = "static/figures.js"
MAX_FIGURE_BYTES = 50_000_000  # of one figure's JSON (the display limit comes first)


def plotly_js() -> Path | None:
    """plotly.min.js of the installed ``plotly`` package (found, not imported), or None."""
    try:
        spec = importlib.util.find_spec("plotly")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "package_data" / "plotly.min.js"
        if path.is_file():
            return path
    return None


def plotly_figure(figure_id: str, text: str) -> bytes | None:
    """The data file registering one figure (``text``: its JSON), or None when it is not a figure."""
    if len(text) > MAX_FIGURE_BYTES:
        return None
    try:
        figure = json.loads(text)
    except ValueError:
        return None
    if not isinstance(figure, dict) or not isinstance(figure.get("data", []), list):
        return None
    # ensure_ascii: no U+2028 or "</script>" tricks; the file is a script of its own anyway.
    value = json.dumps({"id": figure_id, "figure": figure}, ensure_ascii=True, allow_nan=False,
                       separators=(",", ":"))
    return f"(window.siteFigures = window.siteFigures || []).push({value});\n".encode("ascii")


def records_plotly(result: RunResult) -> bool:
    """True when a block of ``result`` shows a Plotly figure (as its value or a display() output)."""
    for block in result.blocks:
        shown = [block.value, *(chunk.display for chunk in block.output)]
        if any(d is not None and PLOTLY_MIME in d.data for d in shown):
            return True
    return False


def plotly_files() -> list[SiteFile]:
    """The site's copy of plotly.js and the script that draws the figures; none without plotly."""
    source = plotly_js()
    if source is None:
        log.warning("a demo shows a Plotly figure, but the plotly package is not installed here: "
                    "its figures show as text (pip install plotly)")
        return []
    return [SiteFile(PLOTLY_JS, source=source, root=source.parent),
            SiteFile(FIGURES_JS, (TEMPLATES_DIR / FIGURES_JS).read_bytes())]
