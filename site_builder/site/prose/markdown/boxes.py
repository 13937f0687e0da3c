"""sphinx-exercise and sphinx-proof: numbered boxes ("Exercise 2 (Limits)", "Theorem 1"),
solutions folded under "Solution to Exercise 2", proofs titled "Proof.".

A ``{solution-start}`` ... ``{solution-end}`` pair in one text reads as one ``{solution}``
(see resolve.py); a start whose end is in a later cell is split off by site/prose/labels.py,
which folds the cells between with ``exercise_title`` and ``solution_title``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from markupsafe import Markup

from site_builder.site.prose.markdown.macros import macro
from site_builder.site.prose.markdown.registry import Directive, DirectiveCall, Registry, register_all, registers

if TYPE_CHECKING:
    from site_builder.site.prose.markdown.context import PageContext
    from site_builder.site.prose.markdown.registry import Output

PROOF_KINDS = ("theorem", "lemma", "definition", "example", "corollary", "proposition", "conjecture",
               "remark", "axiom", "criterion", "algorithm", "observation", "property", "assumption",
               "notation")


def exercise_title(kind: str, argument: str, options: dict[str, str], page: PageContext) -> tuple[str, str]:
    """The box title ("Exercise 2 (Limits)") and the label text ("Exercise 2"), numbering it."""
    word = kind.removeprefix("prf:").capitalize()
    suffix = f" ({argument})" if argument else ""
    if "nonumber" in options:
        return word + suffix, word
    number = page.number(kind.removeprefix("prf:"))
    return f"{word} {number}{suffix}", f"{word} {number}"


def solution_title(argument: str, page: PageContext) -> str:
    """"Solution to Exercise 2" for the exercise the solution names, else "Solution"."""
    target = page.find(argument.strip())
    return f"Solution to {target.text}" if target else "Solution"


def solution_of(argument: str, page: PageContext) -> Markup:
    """The solution's first line: a link to the exercise it solves (sphinx-exercise and mystmd
    link its title; a link inside a <summary> is a control in a control, so it stands below)."""
    target = page.find(argument.strip())
    if target is None:
        return Markup("")
    kind = "internal" if target.entry == page.entry else "entry"
    return macro("solution_of", macro("xref", page.href(target), target.text, kind))


@registers("exercise", *(f"prf:{kind}" for kind in PROOF_KINDS))
class NumberedBox(Directive):
    """An exercise, theorem, lemma...: a box numbered through the page, its label "Exercise 2"."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        title, text = exercise_title(call.name, call.argument, call.options, page)
        call.data["title"] = title
        if call.label:
            call.data["anchor"] = page.define(call.label, text, text.rsplit(" ", 1)[-1])

    def render(self, call: DirectiveCall, out: Output) -> str:
        return out.macro("box", call.name.replace(":", "-"), out.inline(call.data["title"], call.line),
                         out.body(call), call.anchor)


@registers("prf:proof")
class Proof(Directive):
    def render(self, call: DirectiveCall, out: Output) -> str:
        return out.macro("box", "prf-proof", "Proof.", out.body(call), call.anchor)


@registers("solution")
class Solution(Directive):
    """A solution, folded (a native <details>), titled by the exercise it solves."""

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        call.data["title"] = solution_title(call.argument, page)

    def render(self, call: DirectiveCall, out: Output) -> str:
        return out.macro("solution", call.data["title"], solution_of(call.argument, out.page) + out.body(call),
                         call.anchor)


@registers("exercise-start", "solution-start")
class GateStart(Directive):
    """A start whose end is nowhere after it in the same text: its title only."""

    content = False

    def resolve(self, call: DirectiveCall, page: PageContext) -> None:
        if call.name == "exercise-start":
            title, text = exercise_title("exercise", call.argument, call.options, page)
            if call.label:
                call.data["anchor"] = page.define(call.label, text, text.rsplit(" ", 1)[-1])
        else:
            title = solution_title(call.argument, page)
        call.data["title"] = title

    def render(self, call: DirectiveCall, out: Output) -> str:
        title = out.macro("gated_title", out.inline(call.data["title"], call.line))
        return title + solution_of(call.argument, out.page) if call.name == "solution-start" else title


def register(registry: Registry) -> None:
    register_all(registry, NumberedBox, Proof, Solution, GateStart)
