"""IPython syntax in a notebook's code cells (``%magic``, ``%%magic``, ``!cmd``, ``obj?``), read as Python.

The cells run through IPython itself (``run/child/shell.py``), which transforms them as
Jupyter does; here, at parse time, a cell only needs to be read as Python to find what it
imports (the page's requirements, the fork server's preloads).  IPython's own input
transformer does it, imported only when a cell looks like IPython syntax.
"""

from __future__ import annotations

import re

# A cheap test before IPython is imported: a line that opens with % or ! (IPython reads them
# at the start of a line, or after "x ="), or that ends with ? (help). *+: linear.
_LOOKS_LIKE_IPYTHON = re.compile(r"^[ \t]*+(?:[%!]|[\w., ]+=[ \t]*[%!])|\?[ \t]*$", re.MULTILINE)


def looks_like_ipython(source: str) -> bool:
    """True when ``source`` may hold IPython syntax (it may still be plain Python)."""
    return _LOOKS_LIKE_IPYTHON.search(source) is not None


def as_python(source: str) -> str:
    """The cell ``source`` as the Python IPython runs (magics become ``get_ipython()`` calls)."""
    if not looks_like_ipython(source):
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return str(TransformerManager().transform_cell(source))
    except Exception:  # IPython cannot read it either: the cell fails at its turn
        return source
