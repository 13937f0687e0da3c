"""The syntaxes inside an entry's text, each read by its library or a bounded pattern.

``markdown`` the one Markdown parser (CommonMark, GitHub's extensions, MyST: markdown-it),
``citations`` Pandoc's ``[@key]`` citations in it, ``pandoc_blocks`` Pandoc's grid tables
(docutils' parser), multi-line labelled math, raw inline code and attribute blocks, ``ipython`` IPython's magics and shell
lines rewritten as Python, ``yaml_guard`` front matter's YAML read safely.  Imports only
``errors`` and the libraries named, which each imports on first use.
"""
