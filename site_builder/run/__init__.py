"""Run stage: execute each demo in a child process of its own and keep the results.

``execute`` drives one demo block by block (``RunResult`` and the other dataclasses of
``results``; ``capture`` keeps a block's output, ``encoders`` finds ffmpeg); ``runner`` and ``fork_server``
run inside the child (standard library only, started by path), ``runner`` with the
modules of ``child/`` (streams, values, figures, files, process tree...); ``demo_process`` starts
that child; ``records`` is the execution cache in ``_freeze/`` (``record_file`` a record's
JSON layout, written and read back; ``record_inputs`` its cache key, fingerprinted;
``record_schema`` the shape it is checked against); ``drift`` compares a new run with its
record; ``name_refs`` holds what a block's names denoted (for the links to API documentation). Imports ``source`` and the shared bottom, never ``site`` or ``commands``.
"""
