"""Where prose's cross-references lead: API roles and inline code to the packages' documentation
(through the inventories, see apidocs), Sphinx-Gallery labels and ``:doc:`` paths to the
site's own entry pages.

Prose is resolved statically: a script's ``import`` statements (read with ``ast``) say what
``np`` or ``SVC`` stands for in its prose.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from site_builder.apidocs.inventory import ApiDocs, ApiTarget
from site_builder.names import stem_of

# The inventory roles each Sphinx role names (Sphinx's python domain's object types).
ROLE_TARGETS: dict[str, tuple[str, ...]] = {
    "func": ("py:function", "py:method", "py:classmethod", "py:staticmethod"),
    "class": ("py:class", "py:exception"),
    "exc": ("py:exception", "py:class"),
    "meth": ("py:method", "py:classmethod", "py:staticmethod", "py:function"),
    "attr": ("py:attribute", "py:property", "py:data"),
    "data": ("py:data", "py:attribute"),
    "const": ("py:data", "py:attribute"),
    "mod": ("py:module",),
}
ANY_TARGET_ROLES = frozenset({"obj", "any"})  # any Python object
# What projects conventionally import these as, when a script's imports do not say otherwise.
CONVENTIONAL_ALIASES = {"np": "numpy", "pd": "pandas", "plt": "matplotlib.pyplot", "mpl": "matplotlib"}
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
GALLERY_LABEL = re.compile(r"sphx_glr_(?:download_)?(?P<path>\w+?)(?:\.py)?")


def api_role(name: str) -> str | None:
    """The bare role of a Python-domain role name (``py:func`` -> ``func``), None for others."""
    domain, _, role = name.lower().rpartition(":")
    if domain not in ("", "py") or (role not in ROLE_TARGETS and role not in ANY_TARGET_ROLES):
        return None
    return role


@functools.lru_cache(maxsize=256)
def imported_names(source: str) -> Mapping[str, str]:
    """What each name a script imports stands for: ``np`` -> ``numpy``, ``SVC`` -> ``sklearn.svm.SVC``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:  # `import os.path` binds `os`
                    top = alias.name.partition(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


@dataclass(frozen=True)
class SiteEntry:
    """An entry of the site, as a cross-reference from another entry's prose sees it."""

    name: str  # "section/stem"
    title: Callable[[], str]  # its page title as plain text (computed when referred to)


@dataclass(frozen=True)
class ProseLinks:
    """What prose on one page may link to: API documentation and the site's other entries."""

    api_docs: ApiDocs = field(default_factory=ApiDocs)
    aliases: Mapping[str, str] = field(default_factory=dict)  # the script's imports (imported_names)
    entries: tuple[SiteEntry, ...] = ()
    root: str = ""  # the site's root from this page, e.g. "../"

    def api(self, target: str, role: str | None = None) -> ApiTarget | None:
        """The documentation page of ``target`` (a full or imported dotted name) for the Sphinx
        ``role`` ("func", "class", ...; None: any Python object), or None."""
        if not self.api_docs:
            return None
        target = target.strip().lstrip("~!").removesuffix("()")
        relative = target.startswith(".")  # Sphinx's ".Axes.plot": any object whose name ends so
        target = target.lstrip(".")
        if not _DOTTED.fullmatch(target):
            return None
        wanted = ROLE_TARGETS.get(role or "")
        if relative:
            return ((self.api_docs.lookup_suffix(target, wanted) if wanted else None)
                    or self.api_docs.lookup_suffix(target))
        for name in self._full_names(target):
            # the role's own object types first; then any (Sphinx projects write :func: for methods)
            found = (self.api_docs.lookup(name, wanted) if wanted else None) or self.api_docs.lookup(name)
            if found is not None and found.role.startswith("py:"):
                return found
        return None

    def _full_names(self, target: str) -> Iterable[str]:
        head, dot, rest = target.partition(".")
        full = self.aliases.get(head) or (CONVENTIONAL_ALIASES.get(head) if head not in self.aliases else None)
        if full:
            yield f"{full}{dot}{rest}"
        yield target

    def example(self, target: str, role: str) -> tuple[SiteEntry | None, str]:
        """The site entry a ``:ref:`` label or ``:doc:`` path names (or None), and the text to show
        when it is not in the site: the example's name, never Sphinx-Gallery's raw label."""
        target = target.strip()
        if role.endswith("doc"):
            parts = [p for p in target.removesuffix(".py").removesuffix(".rst").split("/") if p not in ("", ".", "..")]
            return self._by_path(parts), parts[-1] if parts else target
        match = GALLERY_LABEL.fullmatch(target)
        if match is None:
            return None, target
        label = match.group("path")
        found = self._by_label(label)
        start = label.rfind("plot_")  # Sphinx-Gallery's convention names examples plot_*
        return found, label[start:] if start > 0 and label[start - 1] == "_" else label.rsplit("_", 1)[-1]

    def href(self, entry: SiteEntry) -> str:
        """The relative URL of ``entry``'s page from this page."""
        return f"{self.root}{quote(entry.name)}/index.html"

    def _by_path(self, parts: list[str]) -> SiteEntry | None:
        if not parts:
            return None
        full = [e for e in self.entries if parts[-e.name.count("/") - 1:] == e.name.split("/")]
        if len(full) == 1:
            return full[0]
        stems = [e for e in self.entries if stem_of(e.name) == parts[-1]]
        return stems[0] if len(stems) == 1 else None

    def _by_label(self, label: str) -> SiteEntry | None:
        """The entry whose section path and file name end the label (``..._model_selection_plot_roc``),
        else the only one whose file name does."""
        best: list[SiteEntry] = []
        length = 0
        for entry in self.entries:
            key = entry.name.replace("/", "_")
            if label == key or label.endswith("_" + key):
                if len(key) > length:
                    best, length = [entry], len(key)
                elif len(key) == length:
                    best.append(entry)
        if len(best) == 1:
            return best[0]
        stems = [e for e in self.entries if label == stem_of(e.name) or label.endswith("_" + stem_of(e.name))]
        return stems[0] if len(stems) == 1 and not best else None
