"""Compile and run one block in the demo's namespace, as a script would run it, with
the block's last expression kept apart as its value (as IPython does)."""

from __future__ import annotations

import __future__
import ast
import sys
import warnings
from typing import Any, Callable

from .errors import describe_error
from .files import Paths
from .protocol import CellRun, DisplayPayload, Outcome

FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
HIDE_VALUE_TAG = "hide-value"
# Blank lines a cell is parsed behind, at most: the parser skips them at ~0.02 us a line, where
# moving a parsed tree (ast.increment_lineno, a walk in Python) costs more than parsing it.
PAD_LINES = 2000


def parse_cell(text: str, first_line: int, rel_path: str, flags: int) -> ast.Module:
    """The cell's tree, its line numbers the script's. Up to PAD_LINES down the script the cell is
    parsed behind as many blank lines; further down, or when it does not parse, it is parsed alone
    and its tree moved (padding every cell with the lines before it made running a long notebook
    quadratic in its cells; a syntax error's message counts lines from the cell, as it always has)."""
    offset = first_line - 1
    flags |= ast.PyCF_ONLY_AST
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree, shift = None, offset  # shift: what the parser's line numbers lack
        if offset <= PAD_LINES:
            try:
                tree, shift = compile("\n" * offset + text + "\n", rel_path, "exec", flags=flags, dont_inherit=True), 0
            except SyntaxError:
                caught.clear()  # the parse below says them again
        if tree is None:
            try:
                tree = compile(text + "\n", rel_path, "exec", flags=flags, dont_inherit=True)
            except SyntaxError as exc:
                exc.lineno = exc.lineno + offset if exc.lineno else exc.lineno
                exc.end_lineno = exc.end_lineno + offset if exc.end_lineno else exc.end_lineno
                raise
    for caught_warning in caught:  # the parser's own (an invalid escape...), at the script's line, as
        line = caught_warning.lineno + shift  # compiling the whole script would have said them
        try:
            warnings.warn_explicit(caught_warning.message, caught_warning.category, caught_warning.filename, line)
        except SyntaxWarning as exc:  # the demo's filters make it an error: the compiler's SyntaxError
            raise SyntaxError(str(exc), (rel_path, line, None, None)) from None
    return ast.increment_lineno(tree, shift) if shift else tree


def compile_cell(text: str, first_line: int, rel_path: str, flags: int, with_value: bool) -> tuple[Any, Any]:
    """(statements, last expression or None): the last expression is compiled apart, as IPython does."""
    tree = parse_cell(text, first_line, rel_path, flags)
    last = tree.body[-1] if tree.body and with_value else None
    # A bare string is a docstring or a comment in a script (Sphinx-Gallery's text blocks), not a result.
    is_text = isinstance(last, ast.Expr) and isinstance(last.value, ast.Constant) and isinstance(last.value.value, str)
    if not isinstance(last, ast.Expr) or is_text:
        return compile(tree, rel_path, "exec", flags=flags, dont_inherit=True), None
    body = ast.Module(body=tree.body[:-1], type_ignores=tree.type_ignores)
    expression = ast.Expression(body=last.value)
    return (compile(body, rel_path, "exec", flags=flags, dont_inherit=True),
            compile(expression, rel_path, "eval", flags=flags, dont_inherit=True))


def run_cell(cell: dict[str, Any], ns: dict[str, Any], rel_path: str, paths: Paths, flags: int,
             describe: Callable[[Any], DisplayPayload | None],
             ) -> tuple[CellRun, int]:
    """Run one cell; return how it went and the future flags for later cells.

    ``describe`` turns the value of the cell's last expression into its record (or None)."""
    shown = None
    try:
        with_value = HIDE_VALUE_TAG not in cell["tags"]
        code, expression = compile_cell(cell["text"], cell["first_line"], rel_path, flags, with_value)
        flags |= code.co_flags & FUTURE_FLAGS  # `from __future__` in setup covers later cells
        exec(code, ns)
        if expression is not None:
            shown = describe(eval(expression, ns))
    except SystemExit as exc:
        status = exc.code
        err = describe_error(exc, rel_path, paths)
        if status is None or status is False or status == 0:
            # A clean end of the script: not a failure, but the page says where it ended.
            err["message"] = f"sys.exit({status!r})" if status is not None else "sys.exit()"
            err["traceback"] = ""
            return CellRun(Outcome.OK, err, stop=True), flags
        if isinstance(status, int):
            err["message"] = f"exit status {status}"
        else:
            sys.stderr.write(f"{status}\n")  # as the interpreter would print it
            first = str(status).strip().splitlines()
            err["message"] = "exit status 1" + (f": {first[0]}" if first else "")
        return CellRun(Outcome.EXITED, err, stop=True), flags
    except BaseException as exc:
        err = describe_error(exc, rel_path, paths)
        if cell.get("raises"):  # tagged raises-exception (or #| error: true)
            return CellRun(Outcome.EXPECTED_ERROR, err), flags
        return CellRun(Outcome.RAISED, err, stop=True), flags
    return CellRun(Outcome.OK, value=shown), flags
