"""Site stage: turn parsed scripts and run results into the site's files, then write them.

``render`` (Jinja2, Pygments, Markdown) with ``notebook``, ``outcomes``, ``cell_display``,
``displays`` (values and display() outputs), ``timings`` and ``theme`` makes the files in
memory (``sitefiles``), the templates reading ``views``; ``early_pages`` renders each entry's
page as its demo finishes, while others still run; ``prose`` renders prose
(``prose_rst`` reST, ``prose_myst`` and ``myst_scan`` MyST Markdown, ``prose_math`` their
math, ``prose_pages`` the site's labels, ``label_ids`` the ids they get, ``prose_images`` the
images prose may publish), and ``prose_links`` says where its roles and inline code lead
(``apidocs``' inventories, the other entries); ``code_links`` where the code's names link, ``api_index``
where each API is used; ``page_toc`` makes the "On this page" list, ``rst_markdown`` the
notebooks' Markdown; ``rebuild`` says what the published site can lend before anything runs
(parses, trusted records, an unchanged site), ``rebuild_state`` keeps the state file it compares
with, ``rebuild_plan`` reuses the published site's pages when little changed; ``search``
indexes it with Pagefind; ``output`` swaps it in atomically. Imports ``run``, ``source``,
``apidocs`` and the shared bottom, never ``commands``.
"""
