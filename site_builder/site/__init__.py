"""Site stage: turn parsed scripts and run results into the site's files, then write them.

Rooms by concern: ``pages`` (render the HTML pages), ``prose`` (docstrings, comments and
Markdown as HTML), ``outputs`` (what a block's run shows), ``safety`` (the sanitisers),
``downloads`` (notebooks, archives), ``references`` (citations, terms, who refers to whom),
``rebuild`` (what a build reuses), ``publish`` (write, index, swap, serve). ``sitefiles`` holds the plain dataclasses passed from the pipeline to
render and write; ``formatting`` small formatters shared with the reports. Imports ``run``,
``source``, ``apidocs``, ``project`` and the shared bottom, never ``reports`` or ``commands``.
"""
