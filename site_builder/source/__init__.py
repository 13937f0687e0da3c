"""Source stage: what the demos are, before anything runs.

``entries`` discovers the demo scripts and notebooks (``Entry``); ``blocks`` is the one
parser: it dispatches on the entry's format to ``scripts`` (a Python script's cells) or
``notebooks`` (jupytext; ``notebook_input`` reads the file, ``markdown_head`` its title and
summary), each making a ``Script`` of ``Cell``s (``parsed``); ``cell_options`` reads the
cells' tags and ``#|`` options; ``gallery`` Sphinx-Gallery's conventions inside code (hidden
lines, string text blocks); ``docstring`` reads the module docstring's parts; ``syntax``
the syntaxes inside the text (Markdown, citations, IPython, YAML); ``expressions/`` finds
the values the prose quotes (inline expressions) with their places. Imports only the
shared bottom (``config``, ``errors``, ``fs``, ``names``).
"""
