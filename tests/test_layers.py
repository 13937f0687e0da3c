"""The package's stages import only downward: commands -> reports -> site -> run -> source -> project -> shared bottom.

Read with ``ast`` (nothing is imported), so a new upward import fails here before it
tangles the layers; lazy imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "site_builder"

# Lower rank = deeper layer. A module may import modules of its own rank or below.
RANKS = {
    "errors": 0, "fs": 0, "names": 0, "ansi": 0, "config": 0, "patterns": 0, "json_text": 0,
    "apidocs": 0.5,  # Sphinx inventories: on the shared bottom only; site and commands use it
    "project": 0.7,  # the project's cache folder and build lock, shared by every command
    "source": 1,
    "run": 2,
    "site": 3,
    "reports": 3.5,  # what a build tells people and CI: progress, JUnit, annotations
    "commands": 4,
    "cli": 5, "__main__": 5, "__init__": 5,
}
# Imports allowed to go upward, each with its reason. Empty: none is needed today.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}
# Run in a demo's process, found by path: the standard library only.
STDLIB_ONLY = ("run/runner.py", "run/fork_server.py",
               *sorted(p.relative_to(PACKAGE).as_posix() for p in (PACKAGE / "run" / "child").rglob("*.py")))


def _layer(module: str) -> str:
    """'site_builder.site.pages.render' -> 'site'; 'site_builder.fs' -> 'fs'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            # `from site_builder import fs` names a module in the alias
            if node.module == "site_builder":
                found += [f"site_builder.{alias.name}" for alias in node.names]
    return found


def _modules() -> list[tuple[str, Path]]:
    return [(path.relative_to(PACKAGE).as_posix(), path) for path in sorted(PACKAGE.rglob("*.py"))]


def test_every_module_belongs_to_a_known_layer() -> None:
    for rel, _ in _modules():
        assert rel.split("/")[0].removesuffix(".py") in RANKS, f"{rel}: add its folder to RANKS"


def test_imports_run_only_downward() -> None:
    upward = []
    for rel, path in _modules():
        own = rel.split("/")[0].removesuffix(".py")
        for imported in _imports(path):
            if not imported.startswith("site_builder.") or imported == "site_builder.__version__":
                continue
            target = _layer(imported)
            if RANKS[target] > RANKS[own] and (rel, imported) not in ALLOWED_UPWARD:
                upward.append(f"{rel} imports {imported}")
    assert not upward, "imports against the stages:\n" + "\n".join(upward)


# The one exception to STDLIB_ONLY: a notebook's cells run in IPython (run/child/shell.py), which
# imports IPython (and traitlets, its configuration) inside its functions only, so that a
# script's process never loads them. Nothing else of the child side may.
NOTEBOOK_SHELL = "run/child/shell.py"
NOTEBOOK_SHELL_PACKAGES = frozenset({"IPython", "traitlets"})


def _outside_stdlib(names: list[str]) -> list[str]:
    import sys

    return [name for name in names if name.split(".")[0] not in sys.stdlib_module_names and name != "__future__"]


def test_runner_and_fork_server_use_the_standard_library_only() -> None:
    for rel in STDLIB_ONLY:
        outside = _outside_stdlib(_imports(PACKAGE / rel))
        if rel == NOTEBOOK_SHELL:
            outside = [name for name in outside if name.split(".")[0] not in NOTEBOOK_SHELL_PACKAGES]
        assert not outside, f"{rel} imports {outside}"


def test_the_notebook_shell_imports_ipython_only_inside_its_functions() -> None:
    tree = ast.parse((PACKAGE / NOTEBOOK_SHELL).read_text(encoding="utf-8"))
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    lazy = {id(node) for function in functions for node in ast.walk(function)}
    found = []
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        for name in _outside_stdlib(names):
            found.append(name)
            assert id(node) in lazy, f"{NOTEBOOK_SHELL}:{node.lineno} imports {name} at its top"
    assert {name.split(".")[0] for name in found} == NOTEBOOK_SHELL_PACKAGES


def test_child_modules_import_each_other_only_at_their_top() -> None:
    # runner.py takes their private package out of sys.modules once they are loaded (the
    # demo must not see it): an import run later, inside a function, would fail then.
    import sys

    child = PACKAGE / "run" / "child"
    late = []
    for path in sorted(child.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        top |= {id(n) for node in tree.body if isinstance(node, ast.If) for n in node.body}  # TYPE_CHECKING
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level and id(node) not in top:
                late.append(f"{path.name}:{node.lineno}")
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            late += [f"{path.name}:{node.lineno} imports {n}" for n in names
                     if n.split(".")[0] not in sys.stdlib_module_names and n != "__future__"
                     and not (path.name == "shell.py" and n.split(".")[0] in NOTEBOOK_SHELL_PACKAGES)]
    assert not late, late
    assert len(list(child.glob("*.py"))) > 5


def test_each_stage_says_what_it_does() -> None:
    for folder in ("commands", "site", "run", "source", "apidocs"):
        doc = ast.get_docstring(ast.parse((PACKAGE / folder / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "import" in doc.lower(), f"{folder}/__init__.py should say what the stage does and may import"


def test_importing_the_build_command_loads_no_rendering_library() -> None:
    import subprocess
    import sys

    # A fresh interpreter: this test process has imported them already.
    probe = (
        "import sys, site_builder.commands.build, site_builder.cli;"
        "print([m for m in ('jinja2', 'pygments', 'markdown_it', 'nbformat', 'docutils', 'numpy', 'matplotlib')"
        " if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------- no circles

BENCHMARKS = PACKAGE.parent / "benchmarks"


def _module_name(path: Path, root: Path, package: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts]) if package else ".".join(parts)


def _every_import(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` (module ``name``) imports anywhere: at its top,
    inside functions (lazy), under ``if TYPE_CHECKING:``, relatively or absolutely."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + is_package]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in known:  # a name inside a module: the module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def _import_graph(root: Path, package: str) -> dict[str, set[str]]:
    files = {_module_name(path, root, package): path for path in sorted(root.rglob("*.py"))}
    known = set(files)
    # A package's __init__ imports its modules to re-export them: it is where names are
    # found, not a step of a circle (a module importing its own package's __init__ is).
    return {name: {t for t in _every_import(path, name, known) if not name.startswith(t + ".")}
            for name, path in files.items()}


def test_no_import_circles_counting_lazy_and_type_checking_imports() -> None:
    graph = _import_graph(PACKAGE, "site_builder")
    graph.update(_import_graph(BENCHMARKS, "")) if BENCHMARKS.is_dir() else None
    circles = _circles(graph)
    assert not circles, "import circles (lazy and TYPE_CHECKING imports count):\n" + "\n".join(
        " <-> ".join(group) for group in circles)


def test_the_circle_finder_sees_a_lazy_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


# ---------------------------------------------------------------- the settings go down as values

# Where the whole settings (``Config``) may travel: config/ defines and loads them; commands/
# (and the command line above) make from them the values each stage below takes (the project's
# folders, run options, what a rebuild compares: commands/build/options.py).
SETTINGS_HOLDERS = frozenset({"config", "commands", "cli", "__main__", "__init__"})
# "module.py:function" below the commands that may still take the whole Config, with the reason.
# Empty: every stage below takes the values it uses.
SETTINGS_ALLOWED: dict[str, str] = {}


def _names_config(annotation: ast.expr | None) -> bool:
    for node in ast.walk(annotation) if annotation is not None else ():
        if (isinstance(node, ast.Name) and node.id == "Config") or (
                isinstance(node, ast.Attribute) and node.attr == "Config") or (
                isinstance(node, ast.Constant) and isinstance(node.value, str) and "Config" in node.value.split("[")):
            return True
    return False


def _takes_the_settings(source: str) -> list[tuple[str, str]]:
    """Where ``source`` imports the settings' Config, or a function (or a class field) takes it: a
    parameter named ``config`` or annotated ``Config``; each as (function or "", what is wrong)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("site_builder.config"):
            found += [("", f"line {node.lineno} imports Config") for a in node.names if a.name == "Config"]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                        *filter(None, (arguments.vararg, arguments.kwarg))]:
                if arg.arg == "config" or _names_config(arg.annotation):
                    name = getattr(node, "name", "lambda")
                    found.append((name, f"line {node.lineno} {name}({arg.arg})"))
        elif isinstance(node, ast.AnnAssign) and _names_config(node.annotation):
            found.append(("", f"line {node.lineno} holds a Config"))
    return found


def test_stages_below_the_commands_take_values_not_the_whole_settings() -> None:
    found = []
    for rel, path in _modules():
        if rel.split("/")[0].removesuffix(".py") in SETTINGS_HOLDERS:
            continue
        found += [f"{rel}: {what}" for function, what in _takes_the_settings(path.read_text(encoding="utf-8"))
                  if f"{rel}:{function}" not in SETTINGS_ALLOWED]
    assert not found, ("a stage below commands/ takes the whole settings: hand it the values it uses "
                       "(made in commands/build/options.py):\n" + "\n".join(found))


def test_the_settings_finder_sees_a_function_taking_the_settings() -> None:
    source = ("from site_builder.config import Config\n"
              "def a(config): pass\n"
              "def b(settings: 'Config', n: int) -> None: pass\n"
              "class C:\n    held: Config | None = None\n"
              "def d(records, root): pass\n")
    assert [what for _, what in _takes_the_settings(source)] == [
        "line 1 imports Config", "line 2 a(config)", "line 3 b(settings)", "line 5 holds a Config"]
