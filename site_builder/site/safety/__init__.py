"""Safety: every sanitiser between untrusted text and a page.

``html`` cleans HTML from prose and values (nh3), ``text`` keeps control characters off every page, ``css`` the CSS a value's HTML carries
(tinycss2, scoped to its box), written by ``css_syntax`` (tokens that read back as written)
and read back by ``css_check`` before it is published; ``svg`` makes published SVG inert. Imports only the
shared bottom; every room of ``site`` that shows untrusted markup goes through here.
"""
