"""Site stage: turn parsed scripts and run results into the site's files, then write them.

``render`` (Jinja2, Pygments, Markdown) with ``notebook``, ``outcomes``, ``displays`` (values and
display() outputs), ``timings`` and
``theme`` makes the files in memory (``sitefiles``); ``rebuild`` reuses the published site
when little changed; ``search`` indexes it with Pagefind; ``output`` swaps it in
atomically. Imports ``run``, ``source`` and the shared bottom, never ``commands``.
"""
