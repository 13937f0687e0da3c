"""Child side: what each name and attribute chain of a block denoted when the block ran.

After a block ran, every ``Name`` and dotted chain of its code (``np``, ``np.linalg.norm``,
``ax.plot``, ``fig``) is looked up in the demo's namespace and described by the full names
it may be documented under, most exact first: a module by its name; a class or function by
its module and qualified name, then the public packages above it that re-export that very
object (``sklearn.svm._classes.SVC`` -> ``sklearn.svm.SVC``); a method or attribute by each
class of the MRO from the object's type up to the one defining it; any other value by its
type.  The site picks the first name an inventory lists.

Standard library only (loaded by the runner, see ``child/__init__``), and
nothing the demo does not already run: values are looked up statically (class and instance
dictionaries, never a property, ``__getattr__`` or descriptor of the demo's objects).
"""

from __future__ import annotations

import ast
import builtins
import symtable
import sys
import types
from dataclasses import dataclass
from typing import Any

MAX_REFS = 1500  # chains recorded per block: a generated block of thousands of names is cut short
MAX_SOURCE = 200_000  # characters: a larger block (data pasted into the code) is not resolved
MAX_NAMES = 6  # candidate full names kept per chain
_MISSING = object()
_ROUTINE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                  types.MethodDescriptorType, types.WrapperDescriptorType,
                  types.ClassMethodDescriptorType, types.MethodWrapperType)
_C_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType)
_TYPE_MRO = type.__dict__["__mro__"]
_TYPE_MODULE = type.__dict__["__module__"]
_TYPE_QUALNAME = type.__dict__["__qualname__"]
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class NameResolver:
    """Resolves the blocks of one run in turn; remembers what it learned about objects."""

    def __init__(self) -> None:
        self._names: dict[int, tuple[Any, list[str]]] = {}  # id(obj) -> (obj kept alive, its names)
        self._data_aliases: dict[str, tuple[str, Any]] = {}  # `from numpy import pi`: pi -> ("numpy.pi", value)

    def block_names(self, cell: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> list[list[Any]]:
        """:meth:`resolve` for one of the job's cells; [] when that cannot be told."""
        try:
            return self.resolve(cell["text"], cell["first_line"], before, after)
        except Exception:  # a demo's odd object must never cost it its run
            return []

    def resolve(self, text: str, first_line: int, before: dict[str, Any], after: dict[str, Any]
                ) -> list[list[Any]]:
        """``[line, col, end_col, [full names...], explicit]`` for each chain of the block ``text`` (script
        lines from ``first_line``) that denotes something nameable; ``before``/``after``: the
        namespace before the block (a copy) and after it.  Columns count characters; the first
        ``explicit`` names name the object itself, the others its type (``x`` -> numpy.ndarray)."""
        if len(text) > MAX_SOURCE:
            return []
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return []
        try:
            collector = _Collector(text)
            collector.visit_module(tree)
        except RecursionError:
            return []
        self._remember_aliases(tree, after)
        lines = text.split("\n")
        found: list[list[Any]] = self._import_names(collector.imports, lines, first_line, after)
        for chain, stored, deferred in collector.chains:
            if len(found) >= MAX_REFS:
                break
            root = chain[0]
            line = root.lineno
            point = collector.store_points.get(root.id)
            # Code at the block's top level reads a name rebound later in the block as it was
            # before.  A function's body reads the module's globals when it is called: taken
            # as they are after the block defining it.  That is what it sees when called later
            # in the block or in a later one, unless the global is rebound in between (a
            # helper using `ax` after a later block's `fig, ax = plt.subplots(1, 2)`), or a
            # `global` it assigns is still unset after the block (then it stays plain).  In
            # gallery scripts those globals are the imports (`np`, `plt`) and objects set up
            # before the helper, so this is exact in practice; locals stay plain, never guessed.
            use_before = (not deferred and not stored and point is not None
                          and (line, root.col_offset) < point and root.id in before)
            namespace = before if use_before else after
            for end, names, explicit in self._chain_names(root.id, [n.attr for n in chain[1:]], namespace):
                target = chain[end]
                if names and target.end_lineno == line:
                    found.append([line + first_line - 1, _chars(lines[line - 1], root.col_offset),
                                  _chars(lines[line - 1], target.end_col_offset), names[:MAX_NAMES],
                                  min(explicit, MAX_NAMES)])
        return found

    def _import_names(self, imports: list[Any], lines: list[str], first_line: int, after: dict[str, Any]
                      ) -> list[list[Any]]:
        """The module and object names of the block's import statements (``import numpy as np``)."""
        found: list[list[Any]] = []
        for statement in imports:
            line = lines[statement.lineno - 1] if statement.lineno == statement.end_lineno else ""
            spans: list[tuple[int, str, Any, str]] = []  # (char col, text there, value, full name written)
            if isinstance(statement, ast.ImportFrom):
                at = _chars(line, statement.col_offset)
                module_at = line.find(statement.module or "\0", at)
                module = sys.modules.get(statement.module or "")
                if statement.level or module is None:
                    continue
                spans.append((module_at, statement.module or "", module, statement.module or ""))
            for alias in statement.names:
                if alias.name == "*" or alias.lineno != statement.lineno:
                    continue
                col = _chars(line, alias.col_offset)
                if isinstance(statement, ast.ImportFrom):
                    value = after.get(alias.asname or alias.name, _MISSING)
                    written = f"{statement.module}.{alias.name}"
                else:
                    value, written = sys.modules.get(alias.name, _MISSING), alias.name
                if value is not _MISSING:
                    spans.append((col, alias.name, value, written))
            for col, literal, value, written in spans:
                end = col + len(literal)
                if col < 0 or line[col:end] != literal:  # `import a . b`: not where ast says
                    continue
                names, explicit = self._value_names(value, written)
                if names:
                    found.append([statement.lineno + first_line - 1, col, end, names[:MAX_NAMES],
                                  min(explicit, MAX_NAMES)])
        return found

    # ------------------------------------------------------------ chains

    def _chain_names(self, root: str, attrs: list[str], namespace: dict[str, Any]
                     ) -> list[tuple[int, list[str], int]]:
        """(index of the chain's part, names, how many of them name the object itself rather
        than its type) for the root and each attribute after it."""
        value = namespace.get(root, _MISSING)
        if value is _MISSING:
            value = vars(builtins).get(root, _MISSING)
            if value is _MISSING:
                return []
        written: str | None = None
        alias = self._data_aliases.get(root)
        if alias is not None and alias[1] is value:
            written = alias[0]
        elif isinstance(value, types.ModuleType):
            written = _str(vars(value).get("__name__"))
        results = [(0, *self._value_names(value, written))]
        for k, attr in enumerate(attrs, start=1):
            step = _lookup(value, attr)
            if step is None:
                break
            # The name as written holds only through modules (``np.linalg.norm``, ``np.pi``).
            through_module = isinstance(value, types.ModuleType)
            owners, value, known = step
            written = f"{written}.{attr}" if written and through_module else None
            if isinstance(value, types.ModuleType):  # plt.cm is matplotlib.cm, wherever it was reached from
                written = _str(vars(value).get("__name__")) or written
            names = [] if owners is None else [f"{n}.{attr}" for klass in owners for n in self._class_names(klass)]
            explicit = len(names)
            if known:
                more, own = self._value_names(value, written)
                explicit += len([n for n in more[:own] if n not in names])
                names += [n for n in more if n not in names]
            results.append((k, names, explicit))
            if not known:
                break
        return results

    def _value_names(self, value: Any, written: str | None) -> tuple[list[str], int]:
        """The names of a module, class or function; of anything else, its type's (after ``written``);
        and how many of them name the value itself."""
        first = [written] if written else []
        if isinstance(value, types.ModuleType):
            return first, len(first)
        if isinstance(value, type):
            names = first + [n for n in self._class_names(value) if n != written]
            return names, len(names)
        routine = self._routine_names(value)
        if routine is not None:
            names = first + [n for n in routine if n != written]
            return names, len(names)
        return first + [n for n in self._class_names(type(value)) if n != written], len(first)

    def _class_names(self, klass: type) -> list[str]:
        cached = self._names.get(id(klass))
        if cached is not None and cached[0] is klass:
            return cached[1]
        try:
            names = _public_names(_str(_TYPE_MODULE.__get__(klass, type)),
                                  _str(_TYPE_QUALNAME.__get__(klass, type)), klass)
        except Exception:
            names = []
        self._names[id(klass)] = (klass, names)
        return names

    def _routine_names(self, value: Any) -> list[str] | None:
        """A function's names; None when ``value`` is not a named function-like object."""
        cached = self._names.get(id(value))
        if cached is not None and cached[0] is value:
            return cached[1]
        if not callable(value):
            return None
        module, qualname = _own_attr(value, "__module__"), _own_attr(value, "__qualname__")
        if not isinstance(value, _ROUTINE_TYPES) and qualname is None:
            return None
        if module is None:  # a method descriptor (ndarray.sum): the class it belongs to
            owner = _own_attr(value, "__objclass__")
            if not isinstance(owner, type):
                return None
            names = [f"{n}.{_own_attr(value, '__name__')}" for n in self._class_names(owner)]
        else:
            names = _public_names(module, qualname or "", value)
        self._names[id(value)] = (value, names)
        return names

    def _remember_aliases(self, tree: ast.Module, after: dict[str, Any]) -> None:
        """``from numpy import pi``: ``pi`` keeps the name it was imported under while it holds that value."""
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
                for alias in statement.names:
                    bound = alias.asname or alias.name
                    if bound in after and alias.name != "*":
                        self._data_aliases[bound] = (f"{statement.module}.{alias.name}", after[bound])


# ---------------------------------------------------------------- static lookups


def _lookup(value: Any, attr: str) -> tuple[list[type] | None, Any, bool] | None:
    """``value.attr`` found without running the demo's code: (classes of the MRO from the
    object's type to the one defining it, or None for a module's or an instance's own
    attribute; the value found; whether that value is what ``value.attr`` gives)."""
    if isinstance(value, types.ModuleType):
        found = _instance_dict(value).get(attr, _MISSING)
        return None if found is _MISSING else (None, found, True)
    klass = value if isinstance(value, type) else type(value)
    mro = _mro(klass)
    owners: list[type] = []
    raw = _MISSING
    for base in mro:
        owners.append(base)
        raw = base.__dict__.get(attr, _MISSING) if isinstance(base.__dict__, types.MappingProxyType) else _MISSING
        if raw is not _MISSING:
            break
    if not isinstance(value, type):
        own = _instance_dict(value).get(attr, _MISSING)
        data_descriptor = raw is not _MISSING and hasattr(type(raw), "__set__")
        if own is not _MISSING and not data_descriptor:
            return [klass], own, True
    if raw is _MISSING:
        return None
    if isinstance(raw, (classmethod, staticmethod)):
        return owners, raw.__func__, True
    if isinstance(raw, type) or not hasattr(type(raw), "__get__"):
        return owners, raw, True  # a plain class attribute (a constant, a nested class)
    return owners, raw, isinstance(raw, (types.FunctionType, types.BuiltinFunctionType))


def _mro(klass: type) -> tuple[type, ...]:
    try:
        mro = _TYPE_MRO.__get__(klass, type)
    except Exception:
        return ()
    return mro if isinstance(mro, tuple) else ()


def _instance_dict(value: Any) -> dict[str, Any]:
    try:
        found = object.__getattribute__(value, "__dict__")
    except Exception:
        return {}
    return found if isinstance(found, dict) else {}


def _own_attr(value: Any, name: str) -> Any:
    """``value.name`` from its own dictionary or a C-level descriptor of its type (never Python code)."""
    own = _instance_dict(value).get(name, _MISSING)
    if own is not _MISSING:
        return own if isinstance(own, (str, type)) else None
    for base in _mro(type(value)):
        raw = base.__dict__.get(name, _MISSING)
        if raw is _MISSING:
            continue
        if isinstance(raw, _C_DESCRIPTORS):
            try:
                got = raw.__get__(value, type(value))
            except Exception:
                return None
            return got if isinstance(got, (str, type)) else None
        return None
    return None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _public_names(module: str, qualname: str, obj: Any) -> list[str]:
    """``module.qualname``, then each package above ``module`` whose namespace holds the very
    same object under the first part of ``qualname`` (a public re-export)."""
    if not module or not qualname or "<" in qualname or module == "__main__":
        return []
    if module == "builtins":
        return [qualname]
    names = [f"{module}.{qualname}"]
    head = qualname.split(".")[0]
    parts = module.split(".")
    here = sys.modules.get(module)
    root = _instance_dict(here).get(head, _MISSING) if here is not None else _MISSING
    if root is _MISSING:
        root = obj if "." not in qualname else _MISSING
    if root is _MISSING:
        return names
    for k in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:k])
        package = sys.modules.get(prefix)
        if package is not None and _instance_dict(package).get(head, _MISSING) is root:
            names.append(f"{prefix}.{qualname}")
    return names


def _chars(line: str, byte_col: int) -> int:
    """ast's UTF-8 byte column as a character column."""
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


# ---------------------------------------------------------------- the block's code

_SCOPE_TABLE_NAMES = {ast.Lambda: "lambda", ast.ListComp: "listcomp", ast.SetComp: "setcomp",
                      ast.DictComp: "dictcomp", ast.GeneratorExp: "genexpr"}


@dataclass
class _Scope:
    """One scope of the block's code while it is walked: its symbol table, and when its code runs."""

    table: symtable.SymbolTable | None  # None: the module's (every name global) when symtable failed
    children: list[symtable.SymbolTable]  # its nested scopes' tables not yet matched to their nodes
    module: bool  # the block's own top level: names bind module globals in code order
    deferred: bool  # a function's or lambda's body (and what nests in it): runs when called, not here
    private: str = ""  # the innermost enclosing class: `__x` there is `_Class__x` (name mangling)

    def is_global(self, name: str) -> bool:
        """Whether ``name`` here is the module's global (Python's own scoping, compiled by symtable)."""
        if self.module:
            return True
        if _mangle(name, self.private) != name:
            return False  # a mangled global (`__x` in a class): looked up as `_Class__x`, left plain
        try:
            return self.table is not None and self.table.lookup(name).is_global()
        except KeyError:
            return False


class _Collector:
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
        try:
            table: symtable.SymbolTable | None = symtable.symtable(text, "<block>", "exec")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            table = None  # (`await` at the top, say): nested scopes are left out, their names plain
        self._top = _Scope(table, list(table.get_children()) if table is not None else [], True, False)

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
            elif scope.is_global(base.id):
                chain.append(base)
                chain.reverse()
                self.chains.append((chain, False, scope.deferred))
            return
        if isinstance(node, ast.Name):
            if scope.is_global(node.id):
                stored = isinstance(node.ctx, ast.Store)
                if not isinstance(node.ctx, ast.Del):
                    self.chains.append(([node], stored, scope.deferred))
                if stored and statement is not None:
                    self._note_store(node.id, statement)
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
            for child in [node.body] if isinstance(node, ast.Lambda) else node.body:
                self._visit(child, inner, None)

    def _enter(self, scope: _Scope, node: Any, name: str, deferred: bool, private: str | None = None
               ) -> _Scope | None:
        """The scope of ``node`` (a def, lambda, class or comprehension), its symbol table matched
        by name and line (and, for a function, its parameters); None when none matches."""
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
            return _Scope(table, list(table.get_children()), False, deferred,
                          scope.private if private is None else private)
        return None

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
