"""Reports: what a build or a check tells people and CI systems.

``build_report`` is what a build did (``BuildReport``); ``progress`` shows it on stderr as it
happens, then sums it up; ``junit`` writes it as JUnit XML; ``annotations`` as GitHub Actions
workflow commands. Imports ``site``, ``run``, ``source`` and the shared bottom, never
``commands``.
"""
