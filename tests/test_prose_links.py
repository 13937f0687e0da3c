"""Prose links to API documentation and between entries: reST roles, Markdown inline code,
Sphinx-Gallery labels and :doc: paths; unresolved ones read as before; all of it sanitised."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from site_builder.apidocs.inventory import ApiDocs, load_api_docs
from site_builder.config import ApiDocsSource
from site_builder.site.prose import html as prose
from site_builder.site.prose.markdown.context import PageContext as PageProse
from site_builder.site.prose.links import ProseLinks, SiteEntry, imported_names
from site_builder.site.safety.html import clean_html
from tests.conftest import run_cli, write_demo
from tests.inventory_support import write_inventory

NP = "https://numpy.org/doc/stable/"
SK = "https://scikit-learn.org/stable/"
PY = "https://docs.python.org/3/"
NUMPY = [
    ("numpy", "py:module", "index.html#module-$"),
    ("numpy.linalg.norm", "py:function", "reference/generated/numpy.linalg.norm.html#$"),
    ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html#$"),
    ("numpy.ndarray.shape", "py:attribute", "reference/generated/numpy.ndarray.shape.html#$"),
    ("numpy.pi", "py:data", "reference/constants.html#$"),
    ("numpy.AxisError", "py:exception", "reference/generated/numpy.AxisError.html#$"),
]
SKLEARN = [
    ("sklearn.pipeline.Pipeline", "py:class", "modules/generated/sklearn.pipeline.Pipeline.html#$"),
    ("sklearn.svm.SVC", "py:class", "modules/generated/sklearn.svm.SVC.html#$"),
    ("sklearn.svm.SVC.fit", "py:method", "modules/generated/sklearn.svm.SVC.html#$"),
]
MATPLOTLIB = [
    ("matplotlib.axes.Axes", "py:class", "api/_as_gen/matplotlib.axes.Axes.html#$"),
    ("matplotlib.axes.Axes.plot", "py:method", "api/_as_gen/matplotlib.axes.Axes.plot.html#$"),
    ("matplotlib.figure.Figure", "py:class", "api/figure_api.html#$"),
    ("matplotlib.figure.Figure.plot", "py:attribute", "api/figure_api.html#$"),  # (made up: a longer twin)
    ("mpl_toolkits.mplot3d.axes3d.Axes3D.plot", "py:method", "api/axes3d.html#$"),
]
MPL = "https://matplotlib.org/stable/"
PYTHON = [("print", "py:function", "library/functions.html#$"), ("os.path.join", "py:function", "library/os.path.html#$")]


@pytest.fixture(scope="module")
def api_docs(tmp_path_factory: pytest.TempPathFactory) -> ApiDocs:
    root = tmp_path_factory.mktemp("inventories")
    write_inventory(root / "np.inv", NUMPY)
    write_inventory(root / "sk.inv", SKLEARN)
    write_inventory(root / "py.inv", PYTHON)
    write_inventory(root / "mpl.inv", MATPLOTLIB)
    docs, warnings = load_api_docs([ApiDocsSource("numpy", NP, "np.inv"), ApiDocsSource("sklearn", SK, "sk.inv"),
                                    ApiDocsSource("python", PY, "py.inv"), ApiDocsSource("matplotlib", MPL, "mpl.inv")],
                                   root, root / "_freeze", frozen=False)
    assert warnings == []
    return docs


def links_for(api_docs: ApiDocs, imports: str = "import numpy as np\n", entries: tuple[SiteEntry, ...] = (),
              root: str = "../") -> ProseLinks:
    return ProseLinks(api_docs, imported_names(imports), entries, root)


def linked(html: str) -> list[tuple[str, str, str]]:
    """(href, title, text) of each link in ``html``."""
    found = []
    for attrs, text in re.findall(r"<a ([^>]*)>(.*?)</a>", html):
        href = re.search(r'href="([^"]*)"', attrs)
        title = re.search(r'title="([^"]*)"', attrs)
        found.append((href.group(1) if href else "", title.group(1) if title else "", re.sub(r"<[^>]+>", "", text)))
    return found


def rst(text: str, links: ProseLinks) -> str:
    html = prose.render(text, "rst", page=PageProse(links=links))
    assert clean_html(html) == html  # what reaches the page is what the sanitiser lets through
    return html


def md(text: str, links: ProseLinks) -> str:
    html = prose.render(text, "markdown", page=PageProse(links=links))
    assert clean_html(html) == html
    return html


NORM = f"{NP}reference/generated/numpy.linalg.norm.html#numpy.linalg.norm"


@pytest.mark.parametrize(("role", "shown", "href"), [
    (":func:`numpy.linalg.norm`", "numpy.linalg.norm()", NORM),
    (":py:func:`numpy.linalg.norm`", "numpy.linalg.norm()", NORM),
    (":func:`~numpy.linalg.norm`", "norm()", NORM),
    (":func:`the norm <numpy.linalg.norm>`", "the norm", NORM),
    (":func:`np.linalg.norm`", "np.linalg.norm()", NORM),  # the script imports numpy as np
    (":class:`~sklearn.pipeline.Pipeline`", "Pipeline", f"{SK}modules/generated/sklearn.pipeline.Pipeline.html"
                                                         "#sklearn.pipeline.Pipeline"),
    (":meth:`sklearn.svm.SVC.fit`", "sklearn.svm.SVC.fit()", f"{SK}modules/generated/sklearn.svm.SVC.html#sklearn.svm.SVC.fit"),
    (":py:meth:`SVC.fit`", "SVC.fit()", f"{SK}modules/generated/sklearn.svm.SVC.html#sklearn.svm.SVC.fit"),
    (":mod:`numpy`", "numpy", f"{NP}index.html#module-numpy"),
    (":attr:`numpy.ndarray.shape`", "numpy.ndarray.shape", f"{NP}reference/generated/numpy.ndarray.shape.html"
                                                         "#numpy.ndarray.shape"),
    (":data:`numpy.pi`", "numpy.pi", f"{NP}reference/constants.html#numpy.pi"),
    (":obj:`numpy.pi`", "numpy.pi", f"{NP}reference/constants.html#numpy.pi"),
    (":exc:`numpy.AxisError`", "numpy.AxisError", f"{NP}reference/generated/numpy.AxisError.html#numpy.AxisError"),
    (":func:`print`", "print()", f"{PY}library/functions.html#print"),
    (":func:`os.path.join`", "os.path.join()", f"{PY}library/os.path.html#os.path.join"),
    ("`numpy.ndarray`", "numpy.ndarray", f"{NP}reference/generated/numpy.ndarray.html#numpy.ndarray"),  # default role
    # Sphinx's ".name": the object whose full name ends so (Matplotlib's galleries use it all along)
    ("`.Figure`", "Figure", f"{MPL}api/figure_api.html#matplotlib.figure.Figure"),
    ("`~.axes.Axes.plot`", "plot", f"{MPL}api/_as_gen/matplotlib.axes.Axes.plot.html#matplotlib.axes.Axes.plot"),
    (":meth:`.Axes.plot`", "Axes.plot()", f"{MPL}api/_as_gen/matplotlib.axes.Axes.plot.html#matplotlib.axes.Axes.plot"),
    (":meth:`~.plot`", "plot()", f"{MPL}api/_as_gen/matplotlib.axes.Axes.plot.html#matplotlib.axes.Axes.plot"),
    (":attr:`~.plot`", "plot", f"{MPL}api/figure_api.html#matplotlib.figure.Figure.plot"),  # the role decides
])
def test_rest_roles_link_through_the_inventories(api_docs: ApiDocs, role: str, shown: str, href: str) -> None:
    html = rst(f"See {role} here.", links_for(api_docs, "import numpy as np\nfrom sklearn.svm import SVC\n"))
    [(url, title, text)] = linked(html)
    assert (url, text) == (href, shown)
    assert title == href.rpartition("#")[2].removeprefix("module-")  # the full name as tooltip
    # it still reads as inline code: the literal inside the link
    assert re.search(r'<a [^>]*class="[^"]*api-link[^"]*"[^>]*><span class="docutils literal">', html)


@pytest.mark.parametrize("role", [
    ":func:`scipy.stats.norm`", ":func:`numpy.linalg.nope`", ":func:`!numpy.linalg.norm`", ":class:`norm`",
    ":func:`xp.linalg.norm`",  # no such import
])
def test_unresolved_roles_read_as_code_as_before(api_docs: ApiDocs, role: str) -> None:
    html = rst(f"See {role}.", links_for(api_docs))
    assert linked(html) == [] and '<span class="docutils literal">' in html
    assert html == prose.render(f"See {role}.", "rst")  # exactly what a site without inventories shows


def test_aliases_come_from_the_scripts_imports(api_docs: ApiDocs) -> None:
    text = "Uses `xp.linalg.norm`, `np.linalg.norm` and `LinearSVC`."
    # `import numpy as xp`: xp is numpy; np is not imported, read as numpy by convention
    html = md(text, links_for(api_docs, "import numpy as xp\nfrom sklearn.svm import SVC as LinearSVC\n"))
    assert [t for _, t, _ in linked(html)] == ["numpy.linalg.norm", "numpy.linalg.norm", "sklearn.svm.SVC"]
    # a script whose np is another package: its np.linalg.norm is not numpy's
    html = md(text, links_for(api_docs, "import jax.numpy as np\nimport numpy as xp\n"))
    assert [t for _, t, _ in linked(html)] == ["numpy.linalg.norm"]


def test_markdown_inline_code_naming_an_object_links(api_docs: ApiDocs) -> None:
    html = md("Call `np.linalg.norm`, `numpy.linalg.norm()` or `x`; `list` and `norm` stay code.\n\n"
              "    np.linalg.norm(x)\n\n[`numpy.pi`](https://example.org/) keeps its own link.\n",
              links_for(api_docs))
    assert linked(html) == [(NORM, "numpy.linalg.norm", "np.linalg.norm"), (NORM, "numpy.linalg.norm", "numpy.linalg.norm()"),
                            ("https://example.org/", "", "numpy.pi")]
    assert f'<a class="api-link" href="{NORM}" title="numpy.linalg.norm" rel="noopener noreferrer">' \
           '<code>np.linalg.norm</code></a>' in html
    assert "<pre><code>np.linalg.norm(x)\n</code></pre>" in html  # code blocks are not prose


def test_without_inventories_nothing_changes(api_docs: ApiDocs) -> None:
    for language, text in (("rst", "See :func:`numpy.linalg.norm`."), ("markdown", "See `np.linalg.norm`.")):
        assert prose.render(text, language, page=PageProse(links=links_for(ApiDocs()))) == prose.render(text, language)


ROC = SiteEntry("model_selection/plot_roc_crossval", lambda: "Receiver Operating Characteristic with cross validation")
OTHER = SiteEntry("plot_other", lambda: "Other example")


@pytest.mark.parametrize(("ref", "expected"), [
    (":ref:`sphx_glr_auto_examples_model_selection_plot_roc_crossval.py`",
     ("../../model_selection/plot_roc_crossval/index.html", "Receiver Operating Characteristic with cross validation")),
    (":ref:`sphx_glr_download_auto_examples_model_selection_plot_roc_crossval.py`",
     ("../../model_selection/plot_roc_crossval/index.html", "Receiver Operating Characteristic with cross validation")),
    (":ref:`this example <sphx_glr_auto_examples_model_selection_plot_roc_crossval.py>`",
     ("../../model_selection/plot_roc_crossval/index.html", "this example")),
    (":doc:`/auto_examples/model_selection/plot_roc_crossval`",
     ("../../model_selection/plot_roc_crossval/index.html", "Receiver Operating Characteristic with cross validation")),
    (":doc:`../plot_other`", ("../../plot_other/index.html", "Other example")),
    (":ref:`sphx_glr_gallery_plot_other.py`", ("../../plot_other/index.html", "Other example")),
])
def test_references_to_examples_in_the_site_link_to_their_page(api_docs: ApiDocs, ref: str,
                                                                expected: tuple[str, str]) -> None:
    html = rst(f"See {ref} for an extension.", links_for(api_docs, entries=(ROC, OTHER), root="../../"))
    [(href, _title, text)] = linked(html)
    assert (href, text) == expected


@pytest.mark.parametrize(("ref", "shown"), [
    (":ref:`sphx_glr_auto_examples_model_selection_plot_roc_crossval.py`", "plot_roc_crossval"),
    (":ref:`sphx_glr_download_auto_examples_model_selection_plot_roc_crossval.py`", "plot_roc_crossval"),
    (":ref:`sphx_glr_auto_examples_miscellaneous_compare.py`", "compare"),
    (":doc:`/auto_examples/model_selection/plot_roc_crossval`", "plot_roc_crossval"),
    (":ref:`the User Guide <cross_validation>`", "the User Guide"),
    (":ref:`cross_validation`", "cross_validation"),
])
def test_references_to_examples_elsewhere_read_as_their_name(api_docs: ApiDocs, ref: str, shown: str) -> None:
    for links in (links_for(api_docs, entries=(OTHER,)), None):
        html = prose.render(f"See {ref} for an extension.", "rst", page=PageProse(links=links))
        assert linked(html) == [] and f"See {shown} for an extension." in re.sub(r"<[^>]+>", "", html)
        assert "sphx_glr" not in html


def test_an_ambiguous_file_name_links_nowhere(api_docs: ApiDocs) -> None:
    twins = (SiteEntry("a/plot_x", lambda: "A"), SiteEntry("b/plot_x", lambda: "B"))
    html = rst(":ref:`sphx_glr_auto_examples_c_plot_x.py`", links_for(api_docs, entries=twins))
    assert linked(html) == [] and "plot_x" in html
    html = rst(":ref:`sphx_glr_auto_examples_b_plot_x.py`", links_for(api_docs, entries=twins))
    assert [t for _, _, t in linked(html)] == ["B"]


def test_imports_are_read_without_running_anything() -> None:
    names = imported_names("import os.path\nimport numpy as np\nfrom a.b import c as d, e\nfrom . import f\n"
                           "from g import *\ntry:\n    import matplotlib.pyplot as plt\nexcept ImportError:\n    pass\n")
    assert names == {"os": "os", "np": "numpy", "d": "a.b.c", "e": "a.b.e", "plt": "matplotlib.pyplot"}
    assert imported_names("def broken(:\n") == {}


# ---------------------------------------------------------------- whole builds

GALLERY_DEMO = '''"""
Cross-validated ROC
===================

Fits a :class:`~sklearn.svm.SVC` and measures with :func:`numpy.linalg.norm`; see
:ref:`sphx_glr_auto_examples_basics_plot_norms.py` and :ref:`sphx_glr_auto_examples_plot_gone.py`.
"""
import numpy as np

# %%
# The :func:`np.linalg.norm` of a vector, and :meth:`scipy.optimize.minimize` (no inventory).
print(np.linalg.norm([3.0, 4.0]))
'''
MARKDOWN_DEMO = '''"""Norms

Markdown prose: `np.linalg.norm` links, `x` does not.
"""
import numpy as np

# %%
# The norm with `np.linalg.norm`, a `numpy.ndarray` too.
x = np.arange(3.0)
print(np.linalg.norm(x))
'''


@pytest.fixture(scope="module")
def gallery_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("numpy", reason="the demos of these builds import numpy")
    project = tmp_path_factory.mktemp("api-site")
    write_demo(project, "model_selection/plot_roc_crossval", GALLERY_DEMO)
    write_demo(project, "basics/plot_norms", MARKDOWN_DEMO)
    (project / "demos" / "basics" / "README.txt").write_text(
        "Basics\n======\n\nNorms with :func:`numpy.linalg.norm`; see :ref:`sphx_glr_auto_examples_basics_plot_norms.py`.\n")
    write_inventory(project / "docs" / "numpy.inv", NUMPY)
    write_inventory(project / "docs" / "sklearn.inv", SKLEARN)
    (project / "pyproject.toml").write_text(
        "[tool.site_builder]\ntitle = \"API\"\n[tool.site_builder.entries.\"basics/plot_norms\"]\nprose = \"markdown\"\n"
        "[tool.site_builder.api_docs]\n"
        f'numpy = {{ url = "{NP}", inventory = "docs/numpy.inv" }}\n'
        f'sklearn = {{ url = "{SK}", inventory = "docs/sklearn.inv" }}\n'
        f'scipy = {{ url = "https://docs.scipy.org/doc/scipy/", inventory = "docs/missing.inv" }}\n',
        encoding="utf-8")
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "api_docs scipy: the inventory docs/missing.inv: it is missing; pages do not link" in result.stderr
    return project


def _page(project: Path, name: str) -> str:
    return (project / "build" / name / "index.html").read_text(encoding="utf-8")


def test_a_built_page_links_roles_and_other_entries(gallery_site: Path) -> None:
    page = _page(gallery_site, "model_selection/plot_roc_crossval")
    links = linked(page)
    assert (f"{SK}modules/generated/sklearn.svm.SVC.html#sklearn.svm.SVC", "sklearn.svm.SVC", "SVC") in links
    assert (NORM, "numpy.linalg.norm", "numpy.linalg.norm()") in links
    assert (NORM, "numpy.linalg.norm", "np.linalg.norm()") in links  # in a prose cell
    # (a Markdown docstring has no title: the entry's name, as the index shows it)
    assert ("../../basics/plot_norms/index.html", "basics/plot_norms", "basics/plot_norms") in links
    text = re.sub(r"<[^>]+>", "", page[page.index("<h1"):page.index("The script, block by block")])
    assert "sphx_glr" not in text and "see basics/plot_norms and plot_gone." in " ".join(text.split())
    assert "scipy.optimize.minimize()" in re.sub(r"<[^>]+>", "", page)  # no inventory: code, as before
    markdown = linked(_page(gallery_site, "basics/plot_norms"))
    assert (NORM, "numpy.linalg.norm", "np.linalg.norm") in markdown
    assert (f"{NP}reference/generated/numpy.ndarray.html#numpy.ndarray", "numpy.ndarray", "numpy.ndarray") in markdown


def test_section_headers_on_the_index_link_too(gallery_site: Path) -> None:
    index = (gallery_site / "build" / "index.html").read_text(encoding="utf-8")
    links = linked(index)
    assert (NORM, "numpy.linalg.norm", "numpy.linalg.norm()") in links
    assert ("basics/plot_norms/index.html", "basics/plot_norms", "basics/plot_norms") in links


def test_frozen_rebuilds_link_the_same_and_inventory_changes_reach_the_pages(gallery_site: Path,
                                                                            tmp_path: Path) -> None:
    project = tmp_path / "copy"
    shutil.copytree(gallery_site, project, symlinks=True)
    before = _page(project, "model_selection/plot_roc_crossval")
    shutil.rmtree(project / "build")  # rendered afresh from the records
    result = run_cli("build", "--frozen", cwd=project)
    assert result.returncode == 0, result.stderr
    assert _page(project, "model_selection/plot_roc_crossval") == before
    # a new version of the inventory: the pages change, though nothing else did
    write_inventory(project / "docs" / "sklearn.inv", [(n, r, u.replace("generated/", "gen/")) for n, r, u in SKLEARN])
    result = run_cli("build", "--frozen", cwd=project)
    assert result.returncode == 0, result.stderr
    after = _page(project, "model_selection/plot_roc_crossval")
    assert f"{SK}modules/gen/sklearn.svm.SVC.html#sklearn.svm.SVC" in after
    # the entry it refers to is gone: the link reads as the example's name
    shutil.rmtree(project / "demos" / "basics")
    result = run_cli("build", "--frozen", cwd=project)
    assert result.returncode == 0, result.stderr
    page = _page(project, "model_selection/plot_roc_crossval")
    intro = page[page.index("<h1"):page.index("The script, block by block")]
    assert "basics/plot_norms/index.html" not in page
    assert "see plot_norms and plot_gone." in " ".join(re.sub(r"<[^>]+>", "", intro).split())
