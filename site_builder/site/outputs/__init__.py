"""Outputs: what a block's run shows on its page.

``outcomes`` turns output text into styled spans (``ansi``) and says why a block did not
run; ``shown`` applies a cell's options (tags, ``#|``) to what is shown and captions its
figures; ``displays`` renders values and ``display()`` outputs in their richest safe form,
``value_html`` a value's HTML with its scoped CSS, ``interactive`` Plotly figures offline;
``thumbnails`` the index's images; ``quoted`` what a page's prose quotes from the run (values by
place, glued values by entry). Imports ``safety``, ``run``, ``source`` and the shared bottom.
"""
