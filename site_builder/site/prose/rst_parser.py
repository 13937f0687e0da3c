"""docutils' reST parser, its top-level state machine handed from one finished parse to the next.

Making a state machine makes its 15 states and their transition tables: about a third of a
short text's publish, and a gallery's pages and notebooks publish a few hundred short texts
(337 for Matplotlib's 41 ``lines_bars_and_markers`` scripts). A machine resets its states
at the start of every run (docutils itself reruns its nested machines, across documents),
so a machine whose run ended is run again instead of a new one being made.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers import rst
from docutils.parsers.rst import roles, states
from docutils.statemachine import string2lines

# Machines no parse is running, by (state classes, initial state). A parse takes one off
# the list and puts it back when its run ends: a role that publishes while a parse runs
# (a title read by its label) gets another machine.
_SPARE: dict[tuple[tuple[type, ...], str], list[states.RSTStateMachine]] = {}


class ReusingParser(rst.Parser):
    """``rst.Parser`` whose parse runs a spare state machine when one is there."""

    def parse(self, inputstring: str, document: nodes.document) -> None:
        """Parse ``inputstring`` into ``document``, as docutils' parse does."""
        self.setup_parse(inputstring, document)
        settings = document.settings
        settings.setdefault("tab_width", 8)
        settings.setdefault("syntax_highlight", "long")
        lines = string2lines(inputstring, tab_width=settings.tab_width, convert_whitespace=True)
        too_long = next((n for n, line in enumerate(lines, 1) if len(line) > settings.line_length_limit), None)
        if too_long is None:
            self._run(lines, document)
        else:  # docutils' own refusal, word for word
            document.append(document.reporter.error(f"Line {too_long} exceeds the line-length-limit."))
        roles._roles.pop("", None)  # a default-role directive's role ends with its document (as in docutils)
        self.finish_parse()

    def _run(self, lines: list[str], document: nodes.document) -> None:
        debug = document.reporter.debug_flag
        spare = _SPARE.setdefault((tuple(self.state_classes), self.initial_state), [])
        machine = spare.pop() if spare and not debug else states.RSTStateMachine(
            state_classes=self.state_classes, initial_state=self.initial_state, debug=debug)
        self.statemachine = machine
        machine.run(lines, document, inliner=self.inliner)
        # Only a run that ended is handed on: one that raised may have left its states mid-way.
        # (A run that ends drops its observers, this document's among them.)
        if not debug:
            spare.append(machine)
