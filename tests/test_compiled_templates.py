"""Compiled templates kept between builds (site/templates.py): never served for a changed
template, a damaged file is compiled again, and nothing is kept in the project."""

from __future__ import annotations

import os
from pathlib import Path

import jinja2

from site_builder.site.templates import CompiledTemplates, jinja_environment


def environment(templates: Path, cache: Path) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(templates), auto_reload=True,
                              bytecode_cache=CompiledTemplates("test", str(cache)))


def test_a_changed_or_damaged_compiled_template_is_compiled_again(tmp_path: Path) -> None:
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    cache.mkdir()
    (templates / "page.html").write_text("one {{ x }}")
    assert environment(templates, cache).get_template("page.html").render(x=1) == "one 1"
    kept = list(cache.iterdir())
    assert len(kept) == 1 and jinja2.__version__ in kept[0].name
    assert environment(templates, cache).get_template("page.html").render(x=2) == "one 2"  # from the cache

    (templates / "page.html").write_text("two {{ x }}")  # a changed template: never the old code
    assert environment(templates, cache).get_template("page.html").render(x=3) == "two 3"

    for damaged in (b"", b"j2 not a compiled template", kept[0].read_bytes()[:40]):
        kept[0].write_bytes(damaged)
        assert environment(templates, cache).get_template("page.html").render(x=4) == "two 4"


def test_the_sites_templates_are_kept_outside_the_project(tmp_path: Path) -> None:
    cache = jinja_environment().bytecode_cache
    assert isinstance(cache, CompiledTemplates)
    folder = Path(cache.directory)
    assert folder.stat().st_uid == os.getuid() and folder.stat().st_mode & 0o777 == 0o700
    assert not folder.is_symlink()
    assert jinja_environment().get_template("404.html") is not None
    assert any(name.startswith(f"site_builder-{jinja2.__version__}-html-") for name in os.listdir(folder))
