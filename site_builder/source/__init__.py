"""Source stage: what the demos are, before anything runs.

``entries`` discovers the demo scripts (``Entry``); ``blocks`` parses a script into its
cells (``Script``); ``docstring`` reads the module docstring's parts. Imports only the
shared bottom (``config``, ``errors``, ``fs``, ``names``).
"""
