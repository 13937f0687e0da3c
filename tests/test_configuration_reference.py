"""The configuration reference in docs/ is written from the settings' declarations, and is current."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from site_builder.config import ApiDocsSource, Config, EntryOverrides, load_config
from site_builder.config.reference import reference_markdown
from site_builder.errors import UsageError

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "configuration.md"


def test_the_reference_in_docs_is_current() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == reference_markdown(), (
        "docs/reference/configuration.md is out of date: run "
        "`python -m site_builder.config.reference docs/reference/configuration.md`")


def test_every_setting_is_declared_with_help_and_documented() -> None:
    text = reference_markdown()
    for cls, prefix in ((Config, ""), (EntryOverrides, "entries.NAME."), (ApiDocsSource, "api_docs.PACKAGE.")):
        for field in dataclasses.fields(cls):
            if field.name in ("root", "package"):  # where the project is and the table's key: no settings
                continue
            declaration = field.metadata.get("setting")
            assert declaration is not None and declaration.help, f"{cls.__name__}.{field.name} is not declared"
            assert f"### `{prefix}{field.name}`" in text


def test_the_unknown_key_message_lists_every_setting(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.site_builder]\ntitel = 'x'\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_config(tmp_path)
    known = str(caught.value).split("(known: ")[1].rstrip(")").split(", ")
    assert known == sorted(f.name for f in dataclasses.fields(Config) if f.name != "root")


def test_the_module_writes_the_reference(tmp_path: Path) -> None:
    out = tmp_path / "configuration.md"
    subprocess.run([sys.executable, "-m", "site_builder.config.reference", str(out)], check=True)
    assert out.read_text(encoding="utf-8") == reference_markdown()
