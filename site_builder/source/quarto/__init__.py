"""Quarto documents (``.qmd``) read into the cells and Script a notebook becomes.

``document`` splits a ``.qmd`` into prose and ```` ```{python} ```` cells with the one
Markdown parser (source.syntax.markdown: markdown-it-py and mdit-py-plugins), its ``#|``
options over the document's ``execute:`` defaults; ``front`` reads the YAML front matter
(title, subtitle, authors, date, abstract, execute defaults, engine); ``includes`` expands
``{{< include >}}`` shortcodes; ``notebook`` gives the nbformat notebook of a document (its
downloads). Quarto itself is never called: Jupytext reads ``.qmd`` only through it.
"""
