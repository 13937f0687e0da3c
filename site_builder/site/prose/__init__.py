"""Prose: the text of docstrings, comments, Markdown cells and MyST, as safe HTML.

``html`` is the one entry point (Markdown or reST -> sanitised HTML); ``rst`` renders reST
with docutils, Sphinx-only constructs degraded; ``myst`` MyST Markdown's constructs for
Python-Markdown, with ``myst_scan`` reading its block structure; ``links`` says where
roles and inline code lead (API inventories, other entries); ``labels`` the site-wide
labels and one page's prose context. Imports ``safety``, ``run``, ``source``, ``apidocs``
and the shared bottom.
"""
