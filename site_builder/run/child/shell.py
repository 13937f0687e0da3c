"""A notebook's cells run through IPython's own machinery, as Jupyter runs them.

Notebook entries only (``.ipynb``, MyST ``.md``): the runner makes one ``NotebookShell`` per
run, an IPython ``InteractiveShell`` in the demo's own fresh process, on the notebook's
``__main__``, and each cell goes through its ``run_cell``: the input transformers (magics,
``!cmd``, ``obj?``), every magic IPython ships, the display formatters, display publisher and
displayhook (``_``, ``__``, ``Out``), ``get_ipython()``.  Percent scripts never come here:
they keep what ``python demos/x.py`` gives them.

The one module of ``child/`` that uses a package outside the standard library: IPython,
imported inside ``NotebookShell`` and the functions it calls, never at the top (the rule
tests/test_layers.py checks), so a script's process never loads it.  Where the builder
differs from a kernel, and why:

- Outputs go where a script's go: printed text through the fd-level capture, ``display()``
  and values as the block's display outputs and value, figures as the inline backend shows
  them (``outputs/inline.py``: at ``plt.show()``, after the cell, a Figure value); every
  ``%matplotlib`` backend is taken for ``inline``.
- Cells compile under the notebook's path at their own lines, so tracebacks, warnings and
  ``??`` quote the notebook, never a temporary cell file (``<ipython-input-N-...>``).  The
  cell's own error is the block's error (not printed); one IPython shows without failing the
  cell (``%run`` of a failing script, inside ``%%capture``) prints as a traceback of the
  project's and the run folder's frames only, as every traceback on a page.
- Nobody answers: ``input()``, ``getpass``, ``%debug`` and ``%pdb`` raise
  StdinNotImplementedError, as in a kernel whose frontend sends no input requests (nbclient's).
- Help (``obj?``, ``%pinfo2``, ``%psource``) prints what Jupyter's pager shows, its ``File:``
  relative to the project or the run folder (left out elsewhere); ``!cmd`` runs in /bin/sh
  on the cell's own standard streams.
- The profile folder is the builder's (``ipython_dir``), not ``~/.ipython``: no user
  configuration or startup file is read, and history stays in memory.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import linecache
import os
import sys
import traceback
import warnings
from collections.abc import Iterator
from typing import Any

from .errors import describe_error
from .files import Paths, inside
from .outputs.displays import Displays, when_imported
from .outputs.inline import InlineFigures
from .protocol import CellRun, DisplayPayload, Outcome

HIDE_VALUE_TAG = "hide-value"
NO_ANSWER = ("{what} was called, but nobody answers a notebook the site builder runs "
             "(this frontend does not support input requests)")
NO_DEBUGGER = ("the debugger needs someone to type its commands, and nobody answers a notebook "
               "the site builder runs: {what}")
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"  # what a kernel's %matplotlib names
# The IPython functions whose show*() call reports the running cell's own error.
_CELL_RUNNERS = frozenset({"run_code", "run_ast_nodes", "run_cell_async", "_run_cell"})


class NotebookShell:
    """One notebook's IPython shell; :meth:`run_cell` runs a cell of the runner's job."""

    def __init__(self, module: Any, rel_path: str, paths: Paths, displays: Displays, ipython_dir: str,
                 builder_dir: str, figure_scale: float = 2.0, animations: dict[str, Any] | None = None) -> None:
        from traitlets.config import Config

        self.rel_path, self.paths, self.displays, self.ipython_dir = rel_path, paths, displays, ipython_dir
        self.figures = InlineFigures(module.__dict__, builder_dir, figure_scale, animations)
        self.errors = sys.stderr  # the runner's: shown errors are the cell's stderr even in %%capture
        self.depth = 0  # run_cell calls under way: 1 for a cell, more inside %%capture
        self.offset = 0  # the notebook line before the running cell's first
        self.value: DisplayPayload | None = None  # the running cell's value, as recorded
        self.unparsed: BaseException | None = None  # the cell's SyntaxError, at lines counted in the cell
        config = Config()
        config.HistoryManager.enabled = False  # no SQLite file and no thread: In and Out stay in memory
        self.shell = _shell_type().instance(config=config, ipython_dir=ipython_dir, user_module=module)
        self.shell.builder = self
        self.shell.compile.code_name = rel_path
        self.shell.ast_transformers.insert(0, _AtNotebookLines(self))
        self.shell.set_hook("show_in_pager", _print_page)
        self.shell.display_formatter.formatters["image/png"].for_type_by_name(
            "matplotlib.figure", "Figure", self.figures.png)
        _refuse_input()
        warnings.filterwarnings("ignore", message="To exit: use 'exit', 'quit', or Ctrl-D.")

    def run_cell(self, cell: dict[str, Any]) -> CellRun:
        """Run one cell; how it went, as cells.run_cell says it."""
        text = cell["text"]
        lines = text.split("\n")
        blank = next((i for i, line in enumerate(lines) if line.strip()), 0)  # IPython drops them
        self.offset = cell["first_line"] - 1 + blank
        self.value, self.unparsed = None, None
        self.figures.begin(cell["name"])
        shell = self.shell
        interactivity = shell.ast_node_interactivity
        if HIDE_VALUE_TAG in cell["tags"]:
            shell.ast_node_interactivity = "none"  # the value is never even computed
        try:
            with _figure_size(cell.get("figure_size") or ()):
                result = shell.run_cell(text, store_history=True)
        finally:
            shell.ast_node_interactivity = interactivity
        error = result.error_before_exec or result.error_in_exec
        if error is None:
            return CellRun(Outcome.OK, value=self.value)
        if error is self.unparsed and isinstance(error, SyntaxError):
            _at_notebook_line(error, self.offset, self.rel_path)  # parsed at the cell's lines 1, 2, ...
        described = describe_error(error, self.rel_path, self.paths)
        return CellRun(Outcome.EXPECTED_ERROR, described) if cell.get("raises") else CellRun(
            Outcome.RAISED, described, stop=True)

    def block_names(self, resolver: Any, cell: dict[str, Any], before: dict[str, Any]) -> list[list[Any]]:
        """What the names of the cell's code denoted (api_names), read from the Python IPython
        ran; none on the lines IPython rewrote (their calls are not the code the page shows)."""
        text = cell["text"]
        raw = text.split("\n")
        blank = next((i for i, line in enumerate(raw) if line.strip()), 0)
        try:
            ran = [""] * blank + self.shell.transform_cell(text).rstrip("\n").split("\n")
        except Exception:
            return []
        if len(ran) != len(raw):  # lines joined (a continued magic): none is where the page shows it
            return []
        found = resolver.block_names({**cell, "text": "\n".join(ran)}, before, self.shell.user_ns)
        first = cell["first_line"]
        return [ref for ref in found if 0 <= ref[0] - first < len(raw) and ran[ref[0] - first] == raw[ref[0] - first]]

    def cell_figures(self) -> list[dict[str, Any]]:
        """The artifacts of the cell's figures (see InlineFigures.end)."""
        return self.figures.end()

    def close(self) -> None:
        """Remove the profile folder IPython made (the builder's; the parent removes it too)."""
        import shutil  # here: a script's fork server never loads it for the shell

        shutil.rmtree(self.ipython_dir, ignore_errors=True)

    # ---------------------------------------------------------------- called by the shell

    def is_the_cells_error(self, caller: Any, exc: BaseException | None) -> bool:
        """Whether a show*() call made by ``caller`` (a frame) reports the running cell's own
        error ``exc``, which the page shows as the block's error, rather than one it only prints."""
        if not (self.depth == 1 and caller.f_code.co_name in _CELL_RUNNERS
                and caller.f_globals.get("__name__") == "IPython.core.interactiveshell"):
            return False
        if caller.f_code.co_name == "run_cell_async":  # before its AST went to the notebook's lines
            self.unparsed = exc
        return True

    def print_error(self, exc: BaseException | None) -> None:
        """An error IPython shows without failing the cell, as a page shows tracebacks."""
        if exc is None:
            return
        described = describe_error(exc, self.rel_path, self.paths)
        text = described["traceback"] or f"{described['type']}: {described['message']}\n"
        self.errors.write(text if text.endswith("\n") else text + "\n")
        self.errors.flush()

    def took_value(self, value: Any) -> dict[str, Any]:
        """Keep the cell's value (the displayhook's); its formatted bundle, for IPython's history."""
        if self.figures.took_value(value):
            return {}
        data, metadata = self.shell.display_formatter.format(value)
        record = self.displays.formatted_value(value, data, metadata)
        if record is not None:
            if self.value is not None:  # a second value in one cell (ast_node_interactivity = "all")
                self.displays.sink.display(self.value)
            self.value = record
        return data

    def shown_path(self, path: str) -> str | None:
        """A file's path as help shows it: relative to the run folder or the project, else None."""
        full = os.path.abspath(os.path.expanduser(path))
        if full.endswith(os.sep + self.rel_path) and not os.path.exists(full):
            return self.rel_path  # a cell's own function (compiled as the notebook, relative to the cwd)
        real = os.path.realpath(full)
        if inside(real, self.paths.files_dir):
            return os.path.relpath(real, self.paths.files_dir).replace(os.sep, "/")
        return self.paths.project_rel(full)


class _AtNotebookLines(ast.NodeTransformer):
    """An AST transformer putting the cell's code at its lines in the notebook."""

    def __init__(self, owner: NotebookShell) -> None:
        self.owner = owner

    def visit(self, node: ast.AST) -> ast.AST:
        # A cell inside a cell magic (%%capture) starts a line below the magic's.
        return ast.increment_lineno(node, self.owner.offset + (self.owner.depth > 1))


def _at_notebook_line(error: SyntaxError, offset: int, rel_path: str) -> None:
    """A SyntaxError of a cell parsed alone, moved to the cell's place in the notebook (the
    line it quotes too: Python read it from the file its filename found, at the wrong line)."""
    for name in ("lineno", "end_lineno"):
        value = getattr(error, name, None)
        if isinstance(value, int):
            setattr(error, name, value + offset)
    error.filename = rel_path
    if isinstance(error.lineno, int):
        error.text = linecache.getline(rel_path, error.lineno) or error.text


def _print_page(shell: Any, data: Any, start: int = 0, screen_lines: int = 0) -> None:
    """IPython's pager, as Jupyter shows its page: the text, in the cell's output."""
    text = data.get("text/plain", "") if isinstance(data, dict) else str(data)
    print("\n".join(text.split("\n")[max(0, start):]).rstrip("\n"))


def _refuse_input() -> None:
    """``input()`` and ``getpass`` raise at once, as a kernel without input requests makes them."""
    import getpass

    from IPython.core.error import StdinNotImplementedError

    def refuse(what: str) -> Any:
        def no_answer(*args: Any, **kwargs: Any) -> Any:
            raise StdinNotImplementedError(NO_ANSWER.format(what=what))
        return no_answer

    builtins.input = refuse("input")
    getpass.getpass = refuse("getpass")


_SHELL_TYPE: list[type] = []


def _shell_type() -> type:
    """IPython's InteractiveShell with the builder's parts (made once, importing IPython)."""
    if _SHELL_TYPE:
        return _SHELL_TYPE[0]
    from IPython.core.compilerop import CachingCompiler
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.error import StdinNotImplementedError
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.oinspect import Inspector
    from traitlets import Type

    class Compiler(CachingCompiler):  # type: ignore[misc]
        code_name = ""

        def cache(self, transformed_code: str, number: int = 0, raw_code: str | None = None) -> str:
            if not self.code_name:
                return str(super().cache(transformed_code, number, raw_code))
            self._filename_map[self.code_name] = number
            return self.code_name  # linecache keeps the notebook's text under that name

    class Hook(DisplayHook):  # type: ignore[misc]
        def __call__(self, result: Any = None) -> None:
            self.check_for_underscore()
            if result is None or self.quiet():
                return
            data = self.shell.builder.took_value(result)
            self.update_user_ns(result)
            self.fill_exec_result(result)
            if data:
                self.log_output(data)

    class Publisher(DisplayPublisher):  # type: ignore[misc]
        def publish(self, data: Any, metadata: Any = None, source: Any = None, *, transient: Any = None,
                    update: bool = False, **kwargs: Any) -> None:
            if not update:  # an update of a display id: the output stays as first shown
                self.shell.builder.displays.publish(data, metadata)

        def clear_output(self, wait: bool = False) -> None:
            pass  # what a cell showed stays shown

    class NotebookInspector(Inspector):  # type: ignore[misc]
        def info(self, obj: Any, oname: str = "", info: Any = None, detail_level: int = 0) -> Any:
            found = super().info(obj, oname=oname, info=info, detail_level=detail_level)
            if found.get("file"):
                found["file"] = self.parent.builder.shown_path(found["file"])
            return found

    class Shell(InteractiveShell):  # type: ignore[misc]
        displayhook_class = Type(Hook)
        display_pub_class = Type(Publisher)
        compiler_class = Type(Compiler)
        inspector_class = Type(NotebookInspector, klass=Inspector)
        builder: Any = None

        def run_cell(self, *args: Any, **kwargs: Any) -> Any:
            self.builder.depth += 1
            try:
                return super().run_cell(*args, **kwargs)
            finally:
                self.builder.depth -= 1

        def showtraceback(self, exc_tuple: Any = None, *args: Any, **kwargs: Any) -> None:
            try:
                exc = self._get_exc_info(exc_tuple)[1]
            except ValueError:
                return
            if not self.builder.is_the_cells_error(sys._getframe(1), exc):
                self.builder.print_error(exc)
            elif self.call_pdb and not isinstance(exc, (SyntaxError, StdinNotImplementedError)):
                self.builder.errors.write(f"%pdb is on: {NO_DEBUGGER.format(what='not started')}\n")

        def showsyntaxerror(self, filename: str | None = None, running_compiled_code: bool = False) -> None:
            if not self.builder.is_the_cells_error(sys._getframe(1), sys.exc_info()[1]):
                self.builder.print_error(sys.exc_info()[1])

        def showindentationerror(self) -> None:
            if not self.builder.is_the_cells_error(sys._getframe(1), sys.exc_info()[1]):
                self.builder.print_error(sys.exc_info()[1])

        def _format_exception_for_storage(self, exception: BaseException, *args: Any, **kwargs: Any) -> Any:
            # What %notebook exports; IPython's own formats a whole traceback (stack_data: 0.5 s)
            lines = traceback.format_exception_only(type(exception), exception)
            return {"ename": type(exception).__name__, "evalue": str(exception), "traceback": lines}

        def debugger(self, force: bool = False) -> None:
            if force or self.call_pdb:
                raise StdinNotImplementedError(NO_DEBUGGER.format(what="%debug"))

        def enable_matplotlib(self, gui: str | None = None) -> tuple[str, str]:
            return gui or "inline", INLINE_BACKEND  # the builder's figure capture is the inline backend

        def system(self, cmd: str) -> None:
            if cmd.rstrip().endswith("&"):
                raise OSError("Background processes not supported.")  # as IPython's own
            import subprocess  # here: a script's fork server never loads it for the shell

            command = self.var_expand(cmd, depth=1)
            sys.stdout.flush()
            sys.stderr.flush()
            code = subprocess.call(command, shell=True)  # the cell's streams: captured with its output
            self.user_ns["_exit_code"] = code
            if self.system_raise_on_error and code != 0:
                raise subprocess.CalledProcessError(code, cmd)

    _SHELL_TYPE.append(Shell)
    return Shell


@contextlib.contextmanager
def _figure_size(size: list[float | None] | tuple[()]) -> Iterator[None]:
    """Matplotlib's figure size while a cell runs (Quarto's ``#| fig-width`` and ``fig-height``, in
    inches), as Quarto sets it; matplotlib is never imported for it (the cell may import it)."""
    if not any(size):
        yield
        return
    saved: list[Any] = []  # the size before, once set
    running = [True]

    def apply(module: Any) -> None:
        if running[0] and not saved:
            width, height = saved.append(module.rcParams["figure.figsize"]) or saved[0]
            module.rcParams["figure.figsize"] = (size[0] or width, size[1] or height)

    if "matplotlib" in sys.modules:
        apply(sys.modules["matplotlib"])
    else:
        when_imported("matplotlib", apply)
    try:
        yield
    finally:
        running[0] = False
        if saved and "matplotlib" in sys.modules:
            sys.modules["matplotlib"].rcParams["figure.figsize"] = saved[0]
