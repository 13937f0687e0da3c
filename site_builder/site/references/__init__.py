"""References: citations, terms, and who refers to whom across the site.

``bibtex`` reads BibTeX (pybtex, LaTeX decoded by pylatexenc) and CSL-JSON, ``bibliography``
the project's files (and a notebook's front matter ``bibliography:``), ``styles`` formats with
citeproc-py and a CSL style, ``citations`` turns each citation syntax into what a page shows
and its References list; ``terms`` holds the site's terms (entries' names, titles, aliases,
glossaries) and links mentions (``link_terms``); ``scan`` reads what every page cites and
refers to before any page renders, ``site`` connects the pages ("Referred to by", the works
cited, the rebuild's keys), ``page`` keeps one page's citations in its prose context, and
``roles`` is the prose registry's plugin: citation roles, Pandoc's ``[@key]``, ``{term}``,
``{glossary}``. Imports ``prose``, ``rebuild.state``, ``sitefiles``, ``source`` and the shared
bottom; the pages that list works and terms are in ``pages.reference_pages``.
"""
