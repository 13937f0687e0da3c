"""Pages: the site's HTML pages, rendered in memory from the build's entries.

``render`` makes every page (Jinja2 over ``templates/``, reading ``views``); ``early``
renders an entry's page as its demo finishes; ``toc`` the "On this page" list; ``timings``
what the pages say about time and the timings page; ``theme`` the code colours;
``code_links`` where the code's names link and ``api_index`` the page of where each API is
used. Imports the other rooms of ``site``, ``run``, ``source``, ``apidocs`` and the shared bottom.
"""
