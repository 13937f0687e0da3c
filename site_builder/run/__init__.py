"""Run stage: execute each demo in a child process of its own and keep the results.

``execute`` drives one demo block by block (``RunResult`` and the other dataclasses of
``results``; ``capture`` keeps a block's output, ``encoders`` finds ffmpeg); ``runner`` and
``fork_server`` run inside the child (standard library only, started by path), ``runner``
with the modules of ``child/``; ``demo_process`` starts that child, ``preload`` says what the
fork server imports first; ``records/`` is the execution cache; ``shards`` splits the entries
into cost-balanced shares for CI; ``name_refs`` holds what a block's names denoted (for the
links to API documentation); ``quoting`` sends the prose's inline expressions to the child and
reads back their values and what ``glue()`` kept. Imports ``source``, ``project`` and the shared bottom, never ``site``,
``reports`` or ``commands``.
"""
