"""The project's own places that every command shares, below every stage: the builder's
cache folder inside the records folder (``folders``), the one-build-at-a-time lock
(``lock``) and what builds that died left behind (``leftovers``). Imports only the shared bottom (``config``, ``errors``, ``fs``, ``names``).
"""
