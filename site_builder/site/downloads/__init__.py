"""Downloads: what readers take away besides the pages.

``notebook`` writes an entry as a Jupyter notebook (``rst_markdown`` turning its reST prose
into Markdown cells); ``archives`` the index's "Download all" zips, reproducibly; ``values`` the
run's quoted and exported values as JSON and LaTeX macros, for the printed entry. Imports
the other rooms of ``site``, ``run``, ``source`` and the shared bottom.
"""
