"""Publishing: put the rendered site in place and serve it.

``swap`` writes the staged site and swaps it in atomically; ``search`` indexes it with
Pagefind before the swap; ``housekeeping`` removes what killed builds and deleted entries
left; ``preview_http`` serves the newest built site with live reload (``serve``). Imports
the other rooms of ``site``, ``run``, ``project`` and the shared bottom.
"""
