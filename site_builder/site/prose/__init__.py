"""Prose: the text of docstrings, comments, Markdown cells and MyST, as safe HTML.

``html`` is the one entry point (Markdown or reST -> sanitised HTML); ``rst`` renders reST
with docutils, Sphinx-only constructs degraded; ``myst`` MyST Markdown's constructs for
Python-Markdown, with ``myst_scan`` reading its block structure; ``links`` says where
roles and inline code lead (API inventories, other entries); ``mathml`` their TeX as
MathML; ``labels`` the site-wide labels and one page's prose context, ``label_ids`` the ids
labels get (never one of the page's own); ``images`` the one rule for the files prose may
publish as images. Imports ``safety``, ``run``, ``source``, ``apidocs`` and the shared bottom.
"""
