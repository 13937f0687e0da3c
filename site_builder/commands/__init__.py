"""Commands: what ``python -m site_builder`` does, one module per command.

``build`` strings the stages together (discover, parse, execute, render, write) and
reports to ``progress``; ``check`` re-runs demos against their records; ``serve`` rebuilds
on save behind ``preview_http``; ``new`` writes a demo; ``shard`` splits the entries for
CI; ``junit`` and ``annotations`` report to CI systems; ``housekeeping`` removes what killed
builds and deleted entries left. May import every stage below it (``site``, ``run``, ``source``, the shared bottom).
"""
