"""The project's own places that every command shares, below every stage: its folders
(``folders.Folders``, made once by ``commands/`` from the settings) and the builder's cache
inside the records folder (``folders``), the one-build-at-a-time lock (``lock``) and what
builds that died left behind (``leftovers``). Imports only the shared bottom (``errors``,
``fs``, ``names``), never the settings: it is handed the values it uses.
"""
