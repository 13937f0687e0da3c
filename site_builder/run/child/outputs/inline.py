"""A notebook's figures as Jupyter's inline backend shows them (notebook entries only).

``plt.show()`` shows the open figures at once and closes them (what the cell draws next is a
new figure); a Figure given as a cell's value shows as a figure of the cell; ``display(fig)``
shows its PNG.  The figures are saved by ``figures`` as every figure is, numbered through the
cell.  Percent scripts keep Agg's ``show()``, which does nothing, as under ``python demos/x.py``.
Standard library only, under the rules of ``child/`` (see its ``__init__``).
"""

from __future__ import annotations

import sys
from typing import Any

from .displays import when_imported
from .figures import png_bytes, save_figures


class InlineFigures:
    """The running cell's figures: saved at ``plt.show()``, at its end, and given as its value."""

    def __init__(self, namespace: dict[str, Any], builder_dir: str, scale: float,
                 animations: dict[str, Any] | None) -> None:
        self.namespace = namespace  # the notebook's (its animations are found by their global names)
        self.builder_dir, self.scale, self.animations = builder_dir, scale, animations
        self.cell_name = ""  # "" between cells
        self.saved: list[dict[str, Any]] = []  # the artifacts of the running cell's figures so far
        self.values: list[Any] = []  # figures given as its value that pyplot does not hold
        loaded = sys.modules.get("matplotlib.pyplot")
        if loaded is not None:
            self._hook_show(loaded)
        else:  # patched as the notebook imports it (never imported for a notebook that does not)
            when_imported("matplotlib.pyplot", self._hook_show)

    def begin(self, cell_name: str) -> None:
        self.cell_name, self.saved, self.values = cell_name, [], []

    def took_value(self, value: Any) -> bool:
        """Whether ``value`` is a Figure, then shown as a figure of the cell (once: a figure pyplot
        still holds is saved after the cell anyway, where Jupyter would show it twice)."""
        module = sys.modules.get("matplotlib.figure")
        if module is None or not isinstance(value, module.Figure):
            return False
        if not _held_by_pyplot(value):
            self.values.append(value)
        return True

    def end(self) -> list[dict[str, Any]]:
        """The artifacts of the cell's figures: those ``plt.show()`` saved, then those left open
        and those given as its value (saved now)."""
        values, self.values = self.values, []
        self._save(values)
        saved, self.saved, self.cell_name = self.saved, [], ""
        return saved

    def png(self, fig: Any) -> tuple[bytes, dict[str, int]] | None:
        """A figure as ``display()`` shows it (IPython's image/png formatter): the PNG every figure
        of the cell is, at its size (metadata, as a retina PNG carries it)."""
        try:
            data = png_bytes(fig, self.scale * fig.dpi)
        except Exception:
            return None  # as IPython's own formatter: the figure shows as text
        if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
            return data, {}
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        return data, {"width": round(width / self.scale), "height": round(height / self.scale)}

    def _save(self, values: list[Any] | None = None) -> None:
        first = 1 + sum(1 for a in self.saved if a["kind"] == "figure")
        self.saved += save_figures(self.cell_name, self.builder_dir, self.scale, self.namespace, self.animations,
                                   values, first=first)

    def _hook_show(self, pyplot: Any) -> None:
        def show(*args: Any, **kwargs: Any) -> None:
            if self.cell_name:  # not between cells (an atexit hook)
                self._save()

        show.__doc__ = "pyplot.show(), as a notebook's inline backend: the open figures show under the cell now."
        pyplot.show = show


def _held_by_pyplot(fig: Any) -> bool:
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    try:
        return helpers is not None and any(m.canvas.figure is fig for m in helpers.Gcf.get_all_fig_managers())
    except Exception:
        return False
