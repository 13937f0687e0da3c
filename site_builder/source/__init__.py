"""Source stage: what the demos are, before anything runs.

``entries`` discovers the demo scripts and notebooks (``Entry``); ``blocks`` parses a script
into its cells (``Script``), ``notebooks`` a notebook (jupytext), with ``ipython_syntax``
rewriting its magics; ``cell_options`` reads the cells' tags and ``#|`` options;
``gallery`` Sphinx-Gallery's conventions inside code (hidden lines, string text blocks);
``markdown_syntax`` the one Markdown parser (CommonMark, GitHub's extensions, MyST: markdown-it),
``markdown_head`` a notebook's title and summary;
``docstring`` reads the module docstring's parts; ``expressions/`` finds the values the prose
quotes (inline expressions) with their places. Imports only the
shared bottom (``config``, ``errors``, ``fs``, ``names``).
"""
