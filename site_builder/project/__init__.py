"""The project's own places that every command shares, below every stage: the builder's
cache folder inside the records folder (``folders``) and the one-build-at-a-time lock
(``lock``). Imports only the shared bottom (``config``, ``errors``, ``fs``, ``names``).
"""
