"""Plotly figures as Jupyter shows them: a value, or ``fig.show()``, is the figure's JSON
(``application/vnd.plotly.v1+json``), published like a ``display()`` output; no browser opens.

Set up when the demo imports plotly (``plotly.io._renderers``, where its renderers live),
never before: a demo that does not use plotly does not pay for it.  The default renderer
becomes Plotly's own MIME renderer (what JupyterLab uses), so a figure's
``_repr_mimebundle_`` gives its JSON; ``plotly.io.show``, which would open a browser outside
IPython, publishes that bundle instead.
"""

from __future__ import annotations

import sys
from typing import Any

from .displays import Displays, when_imported

RENDERERS_MODULE = "plotly.io._renderers"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
MIME_RENDERER = "plotly_mimetype"


def hook_plotly(displays: Displays) -> None:
    """Capture Plotly's figures for ``displays``: now if plotly is loaded (preloaded), else on import."""
    module = sys.modules.get(RENDERERS_MODULE)
    if module is not None:
        _configure(module, displays)
    else:
        when_imported(RENDERERS_MODULE, lambda loaded: _configure(loaded, displays))


def _configure(renderers_module: Any, displays: Displays) -> None:
    try:
        renderers = renderers_module.renderers
        renderers.default = MIME_RENDERER
        mime_renderer = renderers[MIME_RENDERER]
        coerce = renderers_module.validate_coerce_fig_to_dict
    except Exception as exc:  # another plotly than the one this was written for: show() as it is
        sys.stderr.write(f"site_builder: Plotly figures are not captured: {type(exc).__name__}: {exc}\n")
        return

    def show(fig: Any, renderer: Any = None, validate: bool = True, **kwargs: Any) -> None:
        fig_dict = coerce(fig, validate)
        bundle = dict(mime_renderer.to_mimebundle(fig_dict))
        title = (fig_dict.get("layout") or {}).get("title") or {}
        text = title.get("text") if isinstance(title, dict) else title
        bundle["text/plain"] = f"Plotly figure: {text}" if isinstance(text, str) and text else "Plotly figure"
        displays.show(bundle, raw=True)

    show.__doc__ = "plotly.io.show(), as the site builder captures it: the figure shows under its block."
    renderers_module.show = show
