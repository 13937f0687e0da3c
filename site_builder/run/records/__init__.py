"""Run records: the execution cache, in a folder authors can commit (``_freeze/``).

``store`` keeps and finds records (``RecordStore``, ``store_dir``); ``record_json`` is a
record's ``record.json`` layout, made from a ``RunResult`` and read back; ``schema`` the shape
it is checked against (records are untrusted data); ``inputs`` the cache key of a run,
fingerprinted; ``drift`` compares a new run with its record (``check``), ``verdict`` keeps what
``check`` found in it (the evidence for "reproduces exactly"). Imports the rest of
``run``, ``source`` and the shared bottom.
"""
