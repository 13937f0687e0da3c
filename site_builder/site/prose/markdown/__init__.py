"""Markdown prose (CommonMark, GitHub's extensions, MyST) as HTML: parse, resolve, render.

``source.syntax.markdown`` parses (markdown-it-py and mdit-py-plugins); here ``resolve``
gives every role, directive, target, equation and heading its handler, number, label and
id (the same pass collects the site's labels before any page renders), and ``renderer``
turns the tokens into HTML, one method per token type, markup from the macros of
templates/_prose_myst.html (``macros``). ``context.PageContext`` is one page's state:
the site's labels, the page's numbering, its ids, its warnings with their lines.

Extension points (citations, cross-references, inline values, Pandoc syntax plug in here):

- a role or directive: a ``registry.Role``/``registry.Directive`` subclass with
  ``resolve(call, page)`` (number, ``page.define`` labels, note what it uses in
  ``page.extensions``) and ``render(call, out)`` (``out.macro``, ``out.body``,
  ``out.markdown``, ``out.warn``), registered by a module's ``register(registry)``
  listed in ``registry.PLUGINS``;
- a token type a new markdown-it plugin makes: its plugin in
  ``source.syntax.markdown.markdown_parser``, a method named after the token type on
  ``renderer.ProseRenderer`` (and a step in ``resolve.resolve`` if it numbers or labels);
- the markup: a macro in templates/_prose_myst.html.

Built in: ``directives`` (admonitions, math, code, figures, list-table, layout, vanishing
ones), ``boxes`` (sphinx-exercise, sphinx-proof), ``roles``, ``xrefs`` (``{ref}``, ``{numref}``,
``{eq}``, ``{doc}``, links to labels and pages), ``quarto`` (Quarto's ``{#sec-x}``, ``{#fig-x}``,
``{#eq-x}``, ``{#tbl-x}`` labels), ``math`` (TeX -> MathML); the references room's plugin adds
citations (MyST's roles and Pandoc's ``[@key]``), ``{term}`` and ``{glossary}``.
Imports ``prose.links``, ``prose.rst`` (for ``{eval-rst}`` and Sphinx's role text), ``sitefiles``
(the templates' folder), ``source`` and the shared bottom.
"""
