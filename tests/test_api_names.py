"""What a block's names denoted when it ran (run/child/api_names.py), block by block, in-process."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from site_builder.run.child.api_names import MAX_REFS, NameResolver

# A package of our own with a private implementation module re-exported at the top, as
# scikit-learn does (sklearn.svm._classes.SVC is sklearn.svm.SVC).
IMPL = '''
class Base:
    LIMIT = 3

    def fit(self):
        return self

    def score(self):
        return 1.0

    @staticmethod
    def check(value):
        return value


class Model(Base):
    def fit(self):  # overrides Base.fit
        return self

    @classmethod
    def from_config(cls, config):
        return cls()

    @property
    def state(self):
        raise RuntimeError("a property with a side effect must never run while resolving")


def make():
    return Model()
'''


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The package ``shop`` (``shop._impl`` re-exported by ``shop``), importable for this module's tests."""
    root = tmp_path_factory.mktemp("pkg")
    (root / "shop").mkdir()
    (root / "shop" / "__init__.py").write_text("from ._impl import Base, Model, make\nVERSION = '1.0'\n")
    (root / "shop" / "_impl.py").write_text(IMPL)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("shop")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "shop" or n.startswith("shop.")]:
            del sys.modules[name]


class Hostile:
    """An object whose attribute lookups fail loudly: resolving must look at nothing of it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError("resolving must not call __getattr__")

    @property
    def __dict__(self) -> Any:  # type: ignore[override]
        raise AssertionError("resolving must not call a property")


def run_blocks(*blocks: str, watch: bool = False) -> list[dict[str, list[str]]]:
    """Run ``blocks`` in one namespace as the runner does; per block, each chain's text -> its names.

    A text met twice in a block keeps its first names, unless written ``text@line``.
    ``watch``: the functions' calls are watched, and their parameters' names added at the end.
    """
    resolver, ns, line, found = NameResolver(), {"__name__": "__main__"}, 1, []
    if watch:
        resolver.watch_calls("<demo>")
    texts = []
    for block in blocks:
        text = textwrap.dedent(block).strip("\n")
        before = dict(ns)
        exec(compile("\n" * (line - 1) + text, "<demo>", "exec"), ns)
        texts.append((text, line))
        found.append({})
        _add_names(found[-1], text, line, resolver.resolve(text, line, before, ns))
        line += len(text.split("\n"))
    for index, refs in resolver.parameter_names().items():
        _add_names(found[int(index)], *texts[int(index)], refs)
    return found


def _add_names(names: dict[str, list[str]], text: str, line: int, refs: list[list[Any]]) -> None:
    lines = text.split("\n")
    for at, col, end, candidates, _explicit in refs:
        chain = lines[at - line][col:end]
        names.setdefault(chain, candidates)
        names[f"{chain}@{at - line + 1}"] = candidates


def test_aliases_and_from_import_as() -> None:
    (names,) = run_blocks("""
        import numpy as np
        import matplotlib.pyplot as plt
        from matplotlib.figure import Figure as F
        x = np.linspace(0, 1, 5)
        fig = plt.figure()
        isinstance(fig, F)
        plt.close("all")
    """)
    assert names["np.linspace"] == ["numpy.linspace"]
    assert names["np"] == ["numpy"]
    assert names["plt.figure"] == ["matplotlib.pyplot.figure"]
    assert names["F"] == ["matplotlib.figure.Figure"]
    assert names["x"] == ["numpy.ndarray"]  # a variable: its type
    assert names["fig"] == ["matplotlib.figure.Figure"]
    assert names["matplotlib.pyplot"] == ["matplotlib.pyplot"]  # the import statement itself
    assert names["Figure"] == ["matplotlib.figure.Figure"]


def test_shadowing_a_module_name_by_a_local_value() -> None:
    first, second = run_blocks("import numpy as np\nnp.zeros(2)", "np = [1, 2]\nnp.append(3)")
    assert first["np.zeros"] == ["numpy.zeros"]
    assert second["np"] == ["list"] and second["np.append"] == ["list.append"]


def test_a_variable_reassigned_to_another_type_between_blocks() -> None:
    blocks = run_blocks(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2])",
        "fig, ax = plt.subplots(1, 2)\nax[0].plot([1, 2])\nplt.close('all')",
    )
    assert blocks[0]["ax"][:2] == ["matplotlib.axes._axes.Axes", "matplotlib.axes.Axes"]
    assert "matplotlib.axes.Axes.plot" in blocks[0]["ax.plot"]
    assert blocks[1]["ax"] == ["numpy.ndarray"]  # what the second block made, not the first's Axes


def test_a_name_read_before_the_block_rebinds_it_has_its_earlier_value() -> None:
    _, second = run_blocks("import numpy as np\nx = np.arange(3)", "total = x.sum()\nx = 'done'")
    assert second["x@1"] == ["numpy.ndarray"] and second["x.sum"] == ["numpy.ndarray.sum"]
    assert second["x@2"] == ["str"]


def test_methods_inherited_overridden_classmethods_and_re_exports(shop: Any) -> None:
    (names,) = run_blocks("""
        import shop
        model = shop.make()
        model.fit()
        model.score()
        shop.Model.from_config({})
        model.check(1)
        model.state if False else None
        model.LIMIT
        shop.VERSION
    """)
    # The class the object is, under its public name first-hand re-exported by the package.
    assert names["model"] == ["shop._impl.Model", "shop.Model"]
    assert names["model.fit"][:2] == ["shop._impl.Model.fit", "shop.Model.fit"]  # overridden: Model's own
    assert "shop.Base.fit" not in names["model.fit"]
    # Inherited: tried as the instance's class first, then the class defining it.
    assert names["model.score"] == ["shop._impl.Model.score", "shop.Model.score",
                                    "shop._impl.Base.score", "shop.Base.score"]
    assert names["shop.Model.from_config"][:2] == ["shop._impl.Model.from_config", "shop.Model.from_config"]
    assert "shop.Base.check" in names["model.check"]  # a staticmethod, inherited
    assert names["model.state"][:2] == ["shop._impl.Model.state", "shop.Model.state"]  # never run
    assert "shop.Base.LIMIT" in names["model.LIMIT"]
    assert names["shop.make"] == ["shop.make", "shop._impl.make"]  # as written, then where defined
    assert names["shop.VERSION"] == ["shop.VERSION", "str"]  # an attribute of a module


def test_attributes_of_modules_and_from_imported_data() -> None:
    (names,) = run_blocks("import numpy as np\nfrom numpy import pi\narea = np.pi * 2\npi\nnp.linalg.norm([1.0])")
    assert names["np.pi"][0] == "numpy.pi"
    assert names["pi@4"][0] == "numpy.pi"
    assert names["np.linalg"] == ["numpy.linalg"]
    assert names["np.linalg.norm"] == ["numpy.linalg.norm"]


def test_names_local_to_a_function_are_not_the_modules() -> None:
    (names,) = run_blocks("""
        import numpy as np
        def double(np):
            return np * 2
        squares = [np for np in range(3)]
        lam = lambda np: np
        np.ones(1)
    """)
    # `np` inside the function, the comprehension and the lambda is theirs; only the last line's is numpy.
    assert [k for k in names if k.startswith("np@")] == ["np@6"]
    assert names["np.ones"] == ["numpy.ones"]


def test_positions_count_characters_and_cover_the_chain() -> None:
    resolver = NameResolver()
    ns: dict[str, Any] = {}
    text = 'import numpy as np\nlabel = "é" + str(np.e)'
    exec(text, ns)
    found = {tuple(item[:3]): item[3] for item in resolver.resolve(text, 10, {}, ns)}
    line = text.split("\n")[1]
    col = line.index("np.e")
    assert found[(11, col, col + len("np.e"))][0] == "numpy.e"


def test_resolution_is_bounded_and_never_fails_the_block() -> None:
    text = "\n".join(f"v{i} = {i}" for i in range(MAX_REFS + 500))
    ns: dict[str, Any] = {}
    exec(text, ns)
    assert len(NameResolver().resolve(text, 1, {}, ns)) == MAX_REFS
    assert NameResolver().resolve("this is not python", 1, {}, {}) == []
    # Code symtable refuses (though it parses): the top level still resolves, nested scopes stay plain.
    found = NameResolver().resolve("nonlocal q\nnp.pi\nf = lambda: np.e", 1, {}, {"np": importlib.import_module("numpy")})
    assert [item[3][0] for item in found] == ["numpy", "numpy.pi"]
    found = NameResolver().resolve("h.anything.deeper", 1, {}, {"h": Hostile()})
    assert [item[3] for item in found] == [[f"{__name__}.Hostile"]]  # h's type; nothing of h ran


def test_a_demos_own_functions_and_classes_link_to_nothing(tmp_path: Path) -> None:
    (names,) = run_blocks("class Local:\n    pass\n\nthing = Local()\ndef helper():\n    pass\nhelper()")
    assert "thing" not in names and "Local" not in names and "helper" not in names


def test_a_functions_globals_link_its_parameters_and_locals_stay_plain() -> None:
    (names,) = run_blocks("""
        import numpy as np
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        def draw(values, fig):
            total = np.linalg.norm(values)
            ax.plot(values)
            fig.suptitle(total)
            total.real
            return plt.gca()
        draw(np.ones(2), fig)
        plt.close("all")
    """)
    assert names["np.linalg.norm@5"] == ["numpy.linalg.norm"]  # a global read in a function body
    assert "matplotlib.axes.Axes.plot" in names["ax.plot@6"]  # a global instance: its type's method
    assert names["plt.gca@9"] == ["matplotlib.pyplot.gca"]
    # A parameter named like a global (fig) and a local (total) are the function's: never guessed.
    assert "fig@7" not in names and "fig.suptitle" not in names
    assert "total@8" not in names and "total.real" not in names and "values@6" not in names


def test_a_global_assigned_in_a_function_is_the_modules() -> None:
    (names,) = run_blocks("""
        import numpy as np
        def setup():
            global grid
            grid = np.zeros(3)
            grid.sum()
        setup()
        grid.mean()
    """)
    assert names["grid@4"] == ["numpy.ndarray"] and names["grid.sum"] == ["numpy.ndarray.sum"]
    assert names["grid.mean"] == ["numpy.ndarray.mean"]


def test_an_enclosing_functions_variable_stays_plain_in_a_nested_function() -> None:
    (names,) = run_blocks("""
        import numpy as np
        def outer():
            np = [1]
            def inner():
                return np.append, np.copy
            return inner
        outer()()
        np.ones(1)
    """)
    # `np` in inner is outer's list (a free variable), not the module's numpy.
    assert [k for k in names if k.startswith("np@")] == ["np@8"]
    assert "np.copy" not in names and "np.append" not in names


def test_lambdas_and_comprehensions_inside_a_function() -> None:
    (names,) = run_blocks("""
        import numpy as np
        def f(values):
            key = lambda v: np.abs(v)
            squares = [np.sqrt(v) for v in values if v]
            return sorted(values, key=key), {v: np.pi for v in values}, squares
        f([1.0, 4.0])
    """)
    assert names["np.abs@3"][0] == "numpy.abs" and names["np.sqrt@4"] == ["numpy.sqrt"]
    assert names["np.pi@5"][0] == "numpy.pi" and names["sorted@5"] == ["sorted"]
    assert not [k for k in names if k.startswith("v@") or k.startswith("values@")]


def test_a_methods_body_sees_the_modules_globals_not_the_class_attributes() -> None:
    (names,) = run_blocks("""
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        class Plotter:
            ax = None
            limit = plt.rcParams
            def draw(self, data):
                ax.plot(data)
                return self.ax, limit
        limit = 3
        Plotter().draw([1, 2])
        plt.close("all")
    """)
    assert "matplotlib.axes.Axes.plot" in names["ax.plot@7"]  # the module's ax: methods skip the class scope
    assert "ax@4" not in names  # a class attribute, not the module's ax
    assert names["plt.rcParams@5"][0] == "matplotlib.pyplot.rcParams"  # a class body runs where it stands
    assert names["limit@8"] == ["int"]  # the module's limit, not the class attribute
    assert "self.ax" not in names


def test_a_function_body_reads_the_globals_as_they_are_after_its_block() -> None:
    _, second = run_blocks(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(1, 2)",
        "def draw():\n    ax.plot([1, 2])\nfig, ax = plt.subplots()\ndraw()\nplt.close('all')",
    )
    # draw runs after the block rebinds ax to one Axes: the array of the block before is not what it sees.
    assert "matplotlib.axes.Axes.plot" in second["ax.plot@2"]


def test_annotations_and_defaults_are_read_where_the_function_is_defined() -> None:
    (names,) = run_blocks("""
        import numpy as np
        def scale(x: np.ndarray, factor=np.pi) -> np.ndarray:
            return x * factor
        scale(np.ones(2))
    """)
    assert names["np.ndarray@2"] == ["numpy.ndarray"] and names["np.pi@2"][0] == "numpy.pi"


def test_a_method_with_name_mangled_parameters_still_links_its_globals() -> None:
    (names,) = run_blocks("""
        import numpy as np
        class Grid:
            def __init__(self, __size):
                self.cells = np.zeros(__size)
        Grid(3)
    """)
    # Python spells the parameter _Grid__size: the method's scope is matched all the same.
    assert names["np.zeros"] == ["numpy.zeros"] and "__size" not in names


needs_monitoring = pytest.mark.skipif(sys.version_info < (3, 12),
                                      reason="parameters are watched with sys.monitoring (Python 3.12+)")


@needs_monitoring
def test_a_parameter_links_to_what_every_call_passed() -> None:
    first, _ = run_blocks("""
        import numpy as np
        import matplotlib.pyplot as plt
        def draw(ax, values, scale):
            ax.plot(values)
            return values.sum(), scale
        def rebinds(values):
            values = list(values)
            return values
        def mixed(value):
            return value
        def never(ax):
            return ax.plot
        helper = lambda arr: arr.mean()
    """, """
        fig, ax = plt.subplots()
        draw(ax, np.ones(3), 2)
        draw(ax, np.zeros(2), 2.5)
        rebinds(np.ones(2))
        mixed(1), mixed("one")
        helper(np.ones(2))
        plt.close("all")
    """, watch=True)
    # Known once the script has ended, and filed under the block defining the function.
    assert "matplotlib.axes.Axes.plot" in first["ax.plot@4"]
    assert first["values@4"] == ["numpy.ndarray"] and first["values.sum"] == ["numpy.ndarray.sum"]
    assert "scale@5" not in first  # an int in one call, a float in the other: plain
    assert "values@7" not in first and "values@8" not in first  # rebound in its function
    assert "value@10" not in first  # an int, then a str
    assert "ax@12" not in first  # never called: nothing is known
    assert first["arr.mean"] == ["numpy.ndarray.mean"]  # a lambda's parameter
    assert first["values@3"] == ["numpy.ndarray"] and "scale@3" not in first  # in the signature too


@needs_monitoring
def test_watching_calls_leaves_the_demos_own_monitoring_tools_alone() -> None:
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    taken = [t for t in (3, 4) if monitoring.get_tool(t) is None]
    for tool in taken:
        monitoring.use_tool_id(tool, "the demo's")
    try:
        (names,) = run_blocks("import numpy as np\ndef f(x):\n    return x.sum()\nf(np.ones(2))", watch=True)
        assert "x.sum" not in names and names["np.ones"] == ["numpy.ones"]  # no free tool id: plain
        assert all(monitoring.get_tool(t) == "the demo's" for t in taken)
    finally:
        for tool in taken:
            monitoring.free_tool_id(tool)
    (names,) = run_blocks("import numpy as np\ndef f(x):\n    return x.sum()\nf(np.ones(2))", watch=True)
    assert names["x.sum"] == ["numpy.ndarray.sum"] and monitoring.get_tool(4) is None  # given back
