"""Prose: the text of docstrings, comments, Markdown cells and MyST, as safe HTML.

``html`` is the one entry point (Markdown or reST -> sanitised HTML); ``markdown`` renders
Markdown (CommonMark, GitHub's extensions, MyST: roles and directives in a registry, see
its docstring); ``rst`` renders reST with docutils, Sphinx-only constructs degraded;
``links`` says where roles and inline code lead (API inventories, other entries);
``mathml`` their TeX as MathML; ``rst_refs`` reST's citations, cross-references, terms and
numbered figures; ``labels`` the site-wide labels, one page's prose context
and solutions spanning cells, ``label_ids`` the ids labels get (never one of the page's
own); ``images`` the one rule for the files prose may publish as images; ``quoting`` the run's
values in prose (``{eval}``, ``:eval:``, Quarto's inline code, MyST-NB's glue). Imports
``safety``, ``run``, ``source``, ``apidocs`` and the shared bottom (the registry's
plugins reach ``references``, whose roles reST's share).
"""
