"""Child side: which names of a block's code are the module's globals, read with Python's own
scoping rules (:mod:`symtable`, the compiler's scope analysis), and which are parameters of
its functions that nothing rebinds (what those held is learnt from the calls, ``api_calls``).

Standard library only (loaded by the runner, see ``child/__init__``).
"""

from __future__ import annotations

import ast
import symtable
import sys
from typing import Any

MAX_REFS = 1500  # chains recorded per block: a generated block of thousands of names is cut short
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPE_TABLE_NAMES = {ast.Lambda: "lambda", ast.ListComp: "listcomp", ast.SetComp: "setcomp",
                      ast.DictComp: "dictcomp", ast.GeneratorExp: "genexpr"}


class _Scope:
    """One scope of the block's code while it is walked: its symbol table, and when its code runs.
    (A plain class: dataclasses would import inspect and dis into every fork server, ~5 ms of CPU.)"""

    def __init__(self, table: symtable.SymbolTable | None, children: list[symtable.SymbolTable], module: bool,
                 deferred: bool, private: str = "", hidden: frozenset[str] = frozenset()) -> None:
        self.table = table  # None: the module's (every name global) when symtable failed
        self.children = children  # its nested scopes' tables not yet matched to their nodes
        self.module = module  # the block's own top level: names bind module globals in code order
        self.deferred = deferred  # a function's or lambda's body (and what nests in it): runs when called, not here
        self.private = private  # the innermost enclosing class: `__x` there is `_Class__x` (name mangling)
        self.function: tuple[str, int] | None = None  # a function's own scope: (code name, block line its code starts)
        self.params: frozenset[str] = frozenset()  # its parameters never rebound: each call's argument throughout
        self.hidden = hidden  # an inlined comprehension's own variables (Python 3.12+)

    def hiding(self, names: set[str]) -> _Scope:
        """This scope with ``names`` hidden too (an inlined comprehension's variables)."""
        inner = _Scope(self.table, self.children, self.module, self.deferred, self.private, self.hidden | names)
        inner.function, inner.params = self.function, self.params
        return inner

    def is_global(self, name: str) -> bool:
        """Whether ``name`` here is the module's global (Python's own scoping, compiled by symtable)."""
        if name in self.hidden:
            return False
        if self.module:
            return True
        if _mangle(name, self.private) != name:
            return False  # a mangled global (`__x` in a class): looked up as `_Class__x`, left plain
        try:
            return self.table is not None and self.table.lookup(name).is_global()
        except KeyError:
            return False

    def is_param(self, name: str) -> bool:
        """Whether ``name`` here is one of its function's parameters that nothing rebinds."""
        return self.function is not None and name in self.params and name not in self.hidden


class Collector:
    """The block's chains rooted at a module global, and where each global name is first bound.

    Which names are global comes from :mod:`symtable`, the compiler's own scope analysis: in a
    function, lambda, comprehension or class body, a name that is a parameter, is bound there
    (assigned, imported, deleted, a ``for``/``with``/``except`` target, a nested ``def``), or
    is the enclosing function's (free) is not the module's and stays plain; a ``global`` one is.
    """

    def __init__(self, text: str) -> None:
        self.chains: list[tuple[list[Any], bool, bool]] = []  # ([Name, Attribute...], is a store, runs later)
        self.store_points: dict[str, tuple[int, int]] = {}  # name -> (line, col) from which the new value holds
        self.imports: list[ast.Import | ast.ImportFrom] = []  # the block's own (not its functions')
        self.param_chains: list[tuple[list[Any], tuple[str, int]]] = []  # rooted at a function's parameter
        self.functions: dict[tuple[str, int], int] = {}  # (code name, line) -> how many functions have it
        self._text = text
        # Its table is made when a nested scope is first entered: at the top every name is
        # global, and most blocks of a small demo define no function, class or comprehension.
        self._top = _Scope(None, [], True, False)
        self._tabled = False

    def _top_table(self) -> None:
        """The block's symbol table, on the top scope (its nested scopes' tables as its children)."""
        self._tabled = True
        try:
            table: symtable.SymbolTable | None = symtable.symtable(self._text, "<block>", "exec")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            table = None  # (`await` at the top, say): nested scopes are left out, their names plain
        self._top.table = table
        self._top.children = list(table.get_children()) if table is not None else []

    def visit_module(self, tree: ast.Module) -> None:
        for statement in tree.body:
            self._visit(statement, self._top, statement)

    def _visit(self, node: ast.AST, scope: _Scope, statement: ast.AST | None) -> None:
        if len(self.chains) >= MAX_REFS:
            return
        if isinstance(node, ast.Attribute):
            chain: list[Any] = []
            base: ast.AST = node
            while isinstance(base, ast.Attribute):
                chain.append(base)
                base = base.value
            if not isinstance(base, ast.Name):
                self._visit(base, scope, statement)
            elif scope.is_global(base.id) or scope.is_param(base.id):
                chain.append(base)
                chain.reverse()
                self._add(chain, False, scope)
            return
        if isinstance(node, ast.Name):
            if scope.is_global(node.id):
                stored = isinstance(node.ctx, ast.Store)
                if not isinstance(node.ctx, ast.Del):
                    self._add([node], stored, scope)
                if stored and statement is not None:
                    self._note_store(node.id, statement)
            elif scope.is_param(node.id):
                self._add([node], False, scope)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self._visit_function(node, scope, statement)
            return
        if isinstance(node, ast.ClassDef):
            for part in [*node.decorator_list, *node.bases, *node.keywords]:
                self._visit(part, scope, statement)
            if statement is not None:
                self._note_store(node.name, node)
            inner = self._enter(scope, node, node.name, deferred=scope.deferred, private=node.name)
            if inner is not None:  # a class body runs when the class statement does; it binds no globals
                for child in node.body:
                    self._visit(child, inner, None)
            return
        if isinstance(node, _COMPREHENSIONS):
            # The first iterable is evaluated in the enclosing scope, the rest in the comprehension's.
            self._visit(node.generators[0].iter, scope, None)
            inner = self._enter(scope, node, _SCOPE_TABLE_NAMES[type(node)], deferred=scope.deferred)
            if inner is None and scope.table is not None and sys.version_info >= (3, 12):
                # symtable inlines comprehensions since 3.12 (PEP 709): the enclosing scope's
                # table, its nested scopes' tables included, less the comprehension's variables.
                targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
                inner = scope.hiding(targets)
            if inner is not None:
                for child in ast.iter_child_nodes(node):
                    if child is node.generators[0]:
                        for part in [child.target, *child.ifs]:
                            self._visit(part, inner, None)
                    else:
                        self._visit(child, inner, None)
            return
        if statement is not None and isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imports.append(node)
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound != "*":
                    self._note_store(bound, node)
        if isinstance(node, ast.ExceptHandler) and node.name and statement is not None:
            self._note_store(node.name, node)
        for child in ast.iter_child_nodes(node):
            inner_statement = statement
            if statement is not None:
                if isinstance(child, ast.stmt):
                    inner_statement = child
                elif child is getattr(node, "target", None) and isinstance(node, (ast.For, ast.AsyncFor)):
                    inner_statement = child  # the loop's body sees each new value
                elif isinstance(node, ast.withitem) and child is node.optional_vars:
                    inner_statement = child
                elif isinstance(node, ast.NamedExpr):
                    inner_statement = node
            self._visit(child, scope, inner_statement)

    def _visit_function(self, node: Any, scope: _Scope, statement: ast.AST | None) -> None:
        # Defaults, decorators and annotations are evaluated where the function is defined.
        args = node.args
        evaluated_here: list[Any] = [*args.defaults, *args.kw_defaults]
        if not isinstance(node, ast.Lambda):
            every_arg = [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
            evaluated_here += [*node.decorator_list, *(a.annotation for a in every_arg if a is not None), node.returns]
        for part in evaluated_here:
            if part is not None:
                self._visit(part, scope, statement)
        if not isinstance(node, ast.Lambda) and statement is not None:
            self._note_store(node.name, node)
        inner = self._enter(scope, node, "lambda" if isinstance(node, ast.Lambda) else node.name, deferred=True)
        if inner is not None:
            # Each parameter where the signature names it too (`def scatter_hist(x, y, ax):`).
            for arg in [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]:
                if arg is not None and inner.is_param(arg.arg):
                    self._add([ast.Name(id=arg.arg, ctx=ast.Load(), lineno=arg.lineno, col_offset=arg.col_offset,
                                        end_lineno=arg.lineno,
                                        end_col_offset=arg.col_offset + len(arg.arg.encode("utf-8")))], False, inner)
            for child in [node.body] if isinstance(node, ast.Lambda) else node.body:
                self._visit(child, inner, None)

    def _enter(self, scope: _Scope, node: Any, name: str, deferred: bool, private: str | None = None
               ) -> _Scope | None:
        """The scope of ``node`` (a def, lambda, class or comprehension), its symbol table matched
        by name and line (and, for a function, its parameters); None when none matches."""
        if not self._tabled:
            self._top_table()
        params = None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            params = {_mangle(a.arg, scope.private)
                      for a in [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
                      if a is not None}
        for k, table in enumerate(scope.children):
            if table.get_name() != name or table.get_lineno() != node.lineno:
                continue
            if params is not None and (not isinstance(table, symtable.Function)
                                       or set(table.get_parameters()) != params):
                continue
            del scope.children[k]
            inner = _Scope(table, list(table.get_children()), False, deferred,
                           scope.private if private is None else private)
            if params is not None:
                decorators = getattr(node, "decorator_list", None) or [node]
                inner.function = (getattr(node, "name", "<lambda>"), min(d.lineno for d in [node, *decorators]))
                inner.params = _unchanging_params(table)
                self.functions[inner.function] = self.functions.get(inner.function, 0) + 1
            return inner
        return None

    def _add(self, chain: list[Any], stored: bool, scope: _Scope) -> None:
        if scope.is_param(chain[0].id):
            self.param_chains.append((chain, scope.function))
        else:
            self.chains.append((chain, stored, scope.deferred))

    def _note_store(self, name: str, statement: ast.AST) -> None:
        # The new value holds after the statement binding it (its right-hand side reads the old one).
        point = (getattr(statement, "end_lineno", 0) or 0, getattr(statement, "end_col_offset", 0) or 0)
        if name not in self.store_points or point < self.store_points[name]:
            self.store_points[name] = point


def _mangle(name: str, private: str) -> str:
    """``name`` as Python spells it inside class ``private``: ``__x`` is ``_Class__x``."""
    stripped = private.lstrip("_")
    if not stripped or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    return f"_{stripped}{name}"


def _unchanging_params(table: symtable.SymbolTable) -> frozenset[str]:
    """A function's parameters that nothing rebinds: not assigned, deleted or a loop target in
    it, nor declared ``nonlocal`` by a function nested in it."""
    params = {p for p in table.get_parameters()
              if not (table.lookup(p).is_assigned() or table.lookup(p).is_imported())}
    nested = list(table.get_children())
    while nested and params:
        child = nested.pop()
        params -= {s.get_name() for s in child.get_symbols() if s.is_nonlocal()}
        nested.extend(child.get_children())
    return frozenset(params)
