"""Inline expressions: the run's values quoted in prose, found before anything runs.

``places`` finds MyST's ``{eval}`expr```, reST's ``:eval:`expr``` and Quarto's
``` `{python} expr` ``` in every prose text of a demo, each with its place (the code cell it
is evaluated after) and line, plus the names an entry exports; ``spec`` splits a format spec
from the expression. The child evaluates them (``run/child/outputs/quoted.py``).
"""
