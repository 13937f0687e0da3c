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
import sys
import types
from typing import Any

from .api_calls import CallRecorder
from .api_scopes import MAX_REFS, Collector

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


class NameResolver:
    """Resolves the blocks of one run in turn; remembers what it learned about objects."""

    def __init__(self) -> None:
        self._names: dict[int, tuple[Any, list[str]]] = {}  # id(obj) -> (obj kept alive, its names)
        self._data_aliases: dict[str, tuple[str, Any]] = {}  # `from numpy import pi`: pi -> ("numpy.pi", value)
        self._blocks = 0  # blocks resolved so far: the index of the next one
        self._calls: CallRecorder | None = None
        # Chains rooted at a function's parameter, known once the run has ended: (block index,
        # (code name, script line), parameter, attributes, script line, root col, end col per part).
        self._param_chains: list[tuple[int, tuple[str, int], str, list[str], int, int, list[int]]] = []

    def watch_calls(self, filename: str) -> None:
        """Watch the calls of the functions of the script compiled as ``filename`` (Python 3.12+),
        so that their parameters link too (:meth:`parameter_names`); call before it runs."""
        recorder = CallRecorder(filename)
        try:
            if recorder.start():
                self._calls = recorder
        except Exception:  # never at the cost of the run
            recorder.stop()

    def parameter_names(self) -> dict[str, list[list[Any]]]:
        """Once the script has ended (watching stops): block index -> the ``[line, col, end_col,
        [names], explicit]`` of its functions' parameters, as :meth:`resolve` gives its chains.

        A parameter links only when nothing in its function rebinds it, the function ran, each
        of its calls (at most ``api_calls.MAX_CALLS``) was seen, and all of them passed a value
        of the same type (the very same object, for a module, class or function): then it held
        that for its whole life in every call, which is exact.  Otherwise it stays plain."""
        recorder, self._calls = self._calls, None
        if recorder is None:
            return {}
        found: dict[str, list[list[Any]]] = {}
        try:
            recorder.stop()
            for block, function, param, attrs, line, col, ends in self._param_chains:
                calls = recorder.calls_of(*function)
                if calls is None or param not in calls.first:
                    continue
                value = calls.first[param]
                nameable = isinstance(value, (type, types.ModuleType)) or self._routine_names(value) is not None
                if not (calls.same_object[param] if nameable else calls.same_type[param]):
                    continue
                for end, names, explicit in self._chain_names(param, attrs, {param: value}, by_type=True):
                    if names and ends[end] >= 0:
                        found.setdefault(str(block), []).append(
                            [line, col, ends[end], names[:MAX_NAMES], min(explicit, MAX_NAMES)])
        except Exception:  # an odd object must never cost the demo its run
            return {}
        return found

    def block_names(self, cell: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> list[list[Any]]:
        """:meth:`resolve` for one of the job's cells; [] when that cannot be told."""
        index = self._blocks
        try:
            return self.resolve(cell["text"], cell["first_line"], before, after)
        except Exception:  # a demo's odd object must never cost it its run
            return []
        finally:
            self._blocks = index + 1  # the next cell's index, whether this one could be read or not

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
            collector = Collector(text)
            collector.visit_module(tree)
        except RecursionError:
            return []
        self._remember_aliases(tree, after)
        block, self._blocks = self._blocks, self._blocks + 1
        lines = text.split("\n")
        for chain, function in collector.param_chains if self._calls is not None else ():
            root = chain[0]
            if collector.functions.get(function) == 1:  # two lambdas on one line: which ran is unknown
                text_line = lines[root.lineno - 1]
                ends = [_chars(text_line, n.end_col_offset) if n.end_lineno == root.lineno else -1 for n in chain]
                self._param_chains.append((block, (function[0], function[1] + first_line - 1), root.id,
                                           [n.attr for n in chain[1:]], root.lineno + first_line - 1,
                                           _chars(text_line, root.col_offset), ends))
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

    def _chain_names(self, root: str, attrs: list[str], namespace: dict[str, Any], by_type: bool = False
                     ) -> list[tuple[int, list[str], int]]:
        """(index of the chain's part, names, how many of them name the object itself rather
        than its type) for the root and each attribute after it.  ``by_type``: the root stands
        for any value of its type (a parameter), so an attribute of the instance's own stops."""
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
            if by_type and k == 1 and not isinstance(value, (type, types.ModuleType)) and attr in _instance_dict(value):
                break
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
