"""The child side, by concern: what ``runner.py`` runs inside the demo's process.

``process`` (subreaper, killing the tree, orphan check, ``os._exit``), ``streams`` (events
pipe, output capture), ``files`` (project paths, reads, written files), ``errors``
(tracebacks), ``cells`` (compile and run a block), ``shell`` (a notebook's cells through
IPython: the one module importing something outside the standard library, inside its
functions only), ``outputs/`` (values, ``display()``,
figures, animations, Plotly), ``environment`` (Python, packages), ``api_names`` (what each name of a block's code
denoted, for the links to API documentation) with ``api_scopes`` (which names are the
module's, by Python's scoping) and ``api_calls`` (what the functions' parameters held).

Standard library only (``shell`` aside: IPython, in a notebook's process only), and never
``import site_builder``: ``runner.py`` loads these (and
those of ``outputs/``) by path
under a private package name and takes it out of ``sys.modules`` once they are loaded, so
the demo's ``sys.modules`` and ``sys.path`` are those of ``python demos/x.py``.  Hence the
rule for these modules: import a sibling at the top of the module only (a relative import
inside a function would fail once the package has left ``sys.modules``).  The parent side
may import them normally (``site_builder.run.child.process.kill_tree``).
"""
