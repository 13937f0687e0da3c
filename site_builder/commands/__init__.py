"""Commands: what ``python -m site_builder`` does, one module (or package) per command.

``build`` strings the stages together (discover, parse, execute, render, write; its demos run in ``build.demos``); ``check``
re-runs demos against their records; ``serve`` rebuilds on save and serves the site with
live reload; ``new`` writes a demo. Nothing else lives here: what they report is in
``reports``, the project's lock and cache in ``project``, the scheduler in ``run.shards``.
May import every layer below it.
"""
