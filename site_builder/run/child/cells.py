"""Compile and run one block in the demo's namespace, as a script would run it, with
the block's last expression kept apart as its value (as IPython does)."""

from __future__ import annotations

import __future__
import ast
import copy
import sys
import warnings
from types import CodeType
from typing import Any, Callable

from .errors import describe_error
from .files import Paths
from .protocol import CellRun, DisplayPayload, Outcome

FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
HIDE_VALUE_TAG = "hide-value"
# The line tables _moved_table reads and writes (3.13 also keeps a class's first line among its constants)
_MOVABLE_CODE = (3, 11) <= sys.version_info[:2] <= (3, 12)


def compile_cell(text: str, first_line: int, rel_path: str, flags: int, with_value: bool) -> tuple[Any, Any]:
    """(statements, last expression or None): the last expression is compiled apart, as IPython does."""
    code, expression, _tree = compile_parts(text, first_line, rel_path, flags, with_value)
    return code, expression


def compile_parts(text: str, first_line: int, rel_path: str, flags: int, with_value: bool
                  ) -> tuple[Any, Any, ast.Module | None]:
    """compile_cell's code, and the cell's tree with the cell's own line numbers (the name
    resolver reads that tree rather than parsing the cell again; None where it cannot).

    The tree is compiled as it is and the code objects moved to the script's lines after
    (``ast.increment_lineno`` walks the tree in Python: about as slow as parsing it again).
    When the compiler warns or refuses the code, the moved tree is compiled as before, so its
    warnings and errors name the script's lines under the demo's own warning filters."""
    offset = first_line - 1
    code = expression = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree = _parsed(text, offset, rel_path, flags)
        parsed = len(caught)
        if _MOVABLE_CODE or not offset:
            try:
                code, expression = _compiled(tree, rel_path, flags, with_value)
            except SyntaxError:
                code = None
            if len(caught) > parsed:
                code = None
    for caught_warning in caught[:parsed]:  # the parser's own (an invalid escape...), at the script's
        line = caught_warning.lineno + offset  # line, as compiling the whole script would have said them
        try:
            warnings.warn_explicit(caught_warning.message, caught_warning.category, caught_warning.filename, line)
        except SyntaxWarning as exc:  # the demo's filters make it an error: the compiler's SyntaxError
            raise SyntaxError(str(exc), (rel_path, line, None, None)) from None
    if code is None:
        if not _MOVABLE_CODE:  # the tree itself is moved: the resolver parses the cell again
            return (*_compiled(ast.increment_lineno(tree, offset), rel_path, flags, with_value), None)
        code, expression = _compiled(ast.increment_lineno(copy.deepcopy(tree), offset), rel_path, flags, with_value)
        return code, expression, tree
    if not offset:
        return code, expression, tree
    return _moved(code, offset), _moved(expression, offset) if expression is not None else None, tree


def _parsed(text: str, offset: int, rel_path: str, flags: int) -> ast.Module:
    """The cell's tree, its own line numbers; a syntax error names the script's line."""
    try:
        return compile(text + "\n", rel_path, "exec", flags=flags | ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        exc.lineno = exc.lineno + offset if exc.lineno else exc.lineno
        exc.end_lineno = exc.end_lineno + offset if exc.end_lineno else exc.end_lineno
        raise


def _compiled(tree: ast.Module, rel_path: str, flags: int, with_value: bool) -> tuple[Any, Any]:
    last = tree.body[-1] if tree.body and with_value else None
    # A bare string is a docstring or a comment in a script (Sphinx-Gallery's text blocks), not a result.
    is_text = isinstance(last, ast.Expr) and isinstance(last.value, ast.Constant) and isinstance(last.value.value, str)
    if not isinstance(last, ast.Expr) or is_text:
        return compile(tree, rel_path, "exec", flags=flags, dont_inherit=True), None
    body = ast.Module(body=tree.body[:-1], type_ignores=tree.type_ignores)
    expression = ast.Expression(body=last.value)
    return (compile(body, rel_path, "exec", flags=flags, dont_inherit=True),
            compile(expression, rel_path, "eval", flags=flags, dont_inherit=True))


def _moved(code: CodeType, offset: int, top: bool = True) -> CodeType:
    """``code`` as compiling the tree moved ``offset`` lines down gives it: a nested code object
    (function, class, comprehension) has its ``co_firstlineno`` moved (its line table counts
    from it); the cell's own keeps line 1 and its start (line 0), the rest of its table moved."""
    consts = tuple(_moved(c, offset, False) if isinstance(c, CodeType) else c for c in code.co_consts)
    if not top:
        return code.replace(co_firstlineno=code.co_firstlineno + offset, co_consts=consts)
    return code.replace(co_consts=consts, co_linetable=_moved_table(code.co_linetable, code.co_firstlineno, offset))


def _moved_table(table: bytes, first: int, offset: int) -> bytes:
    """A line table (the format of Python 3.11 to 3.13, Objects/locations.md) with every line but
    0 moved ``offset`` down, each entry written again in the long form."""
    out = bytearray()
    i, line, moved_line = 0, first, first
    while i < len(table):
        head = table[i]
        kind, length = (head >> 3) & 15, (head & 7) + 1
        i += 1
        if kind == 15:  # no location
            out.append(head)
            continue
        end_delta, col, end_col = 0, -1, -1
        if kind == 14:
            delta, i = _svarint(table, i)
            end_delta, i = _varint(table, i)
            col, i = _varint(table, i)
            end_col, i = _varint(table, i)
            col, end_col = col - 1, end_col - 1
        elif kind == 13:
            delta, i = _svarint(table, i)
        elif kind >= 10:
            delta, col, end_col, i = kind - 10, table[i], table[i + 1], i + 2
        else:
            delta, second, i = 0, table[i], i + 1
            col = kind * 8 + (second >> 4)
            end_col = col + (second & 15)
        line += delta
        new_line = line + offset if line else 0
        if kind == 13:
            out.append(0x80 | (13 << 3) | (length - 1))
            _put_svarint(out, new_line - moved_line)
        else:
            out.append(0x80 | (14 << 3) | (length - 1))
            _put_svarint(out, new_line - moved_line)
            _put_varint(out, end_delta)
            _put_varint(out, col + 1)
            _put_varint(out, end_col + 1)
        moved_line = new_line
    return bytes(out)


def _varint(table: bytes, i: int) -> tuple[int, int]:
    byte = table[i]
    value, shift, i = byte & 63, 0, i + 1
    while byte & 64:
        byte = table[i]
        shift += 6
        value, i = value | (byte & 63) << shift, i + 1
    return value, i


def _svarint(table: bytes, i: int) -> tuple[int, int]:
    value, i = _varint(table, i)
    return (-(value >> 1) if value & 1 else value >> 1), i


def _put_varint(out: bytearray, value: int) -> None:
    while value >= 64:
        out.append(64 | (value & 63))
        value >>= 6
    out.append(value)


def _put_svarint(out: bytearray, value: int) -> None:
    _put_varint(out, (-value << 1) | 1 if value < 0 else value << 1)


def run_cell(cell: dict[str, Any], ns: dict[str, Any], rel_path: str, paths: Paths, flags: int,
             describe: Callable[[Any], DisplayPayload | None],
             ) -> tuple[CellRun, int]:
    """Run one cell; return how it went and the future flags for later cells.

    ``describe`` turns the value of the cell's last expression into its record (or None)."""
    ran, flags, _tree = run_parsed_cell(cell, ns, rel_path, paths, flags, describe)
    return ran, flags


def run_parsed_cell(cell: dict[str, Any], ns: dict[str, Any], rel_path: str, paths: Paths, flags: int,
                    describe: Callable[[Any], DisplayPayload | None],
                    ) -> tuple[CellRun, int, ast.Module | None]:
    """run_cell's, and the cell's tree (compile_parts; None when it did not parse)."""
    shown = tree = None
    try:
        with_value = HIDE_VALUE_TAG not in cell["tags"]
        code, expression, tree = compile_parts(cell["text"], cell["first_line"], rel_path, flags, with_value)
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
            return CellRun(Outcome.OK, err, stop=True), flags, tree
        if isinstance(status, int):
            err["message"] = f"exit status {status}"
        else:
            sys.stderr.write(f"{status}\n")  # as the interpreter would print it
            first = str(status).strip().splitlines()
            err["message"] = "exit status 1" + (f": {first[0]}" if first else "")
        return CellRun(Outcome.EXITED, err, stop=True), flags, tree
    except BaseException as exc:
        err = describe_error(exc, rel_path, paths)
        if cell.get("raises"):  # tagged raises-exception (or #| error: true)
            return CellRun(Outcome.EXPECTED_ERROR, err), flags, tree
        return CellRun(Outcome.RAISED, err, stop=True), flags, tree
    return CellRun(Outcome.OK, value=shown), flags, tree
