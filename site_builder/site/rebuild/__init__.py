"""Rebuilds: what a build can reuse from the published site instead of redoing it.

``lend`` says what the published site can lend before anything runs (parses, trusted
records, an unchanged site); ``state`` keeps the state file it compares with; ``plan`` reuses
the published site's pages when little changed. Imports ``run``, ``source``, ``project`` and
the shared bottom.
"""
