"""The child side's outputs: what a block shows besides its text.

``values`` (a value's MIME bundle), ``displays`` (the records of values and ``display()``
outputs, IPython's display hook), ``plotly_show`` (Plotly figures as bundles, on import),
``figures`` (Matplotlib figures) with ``animations``, ``inline`` (a notebook's figures as
Jupyter's inline backend shows them), ``quoted`` (the prose's inline expressions evaluated, and
MyST-NB's ``glue()`` kept). Standard library only, under the rules of ``child/``
(see its ``__init__``).
"""
