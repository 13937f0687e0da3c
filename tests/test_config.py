"""Configuration from pyproject.toml: defaults, overrides, bad keys and types."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_builder.config import DEFAULT_TITLE, load_config, with_overrides
from site_builder.errors import UsageError


def write_pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text(body, encoding="utf-8")


def test_defaults_without_pyproject(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.title == DEFAULT_TITLE
    assert config.site_url is None
    assert config.demos == tmp_path.resolve() / "demos"
    assert config.output == tmp_path.resolve() / "build"
    assert config.timeout == 600.0


def test_values_and_entry_overrides(tmp_path: Path) -> None:
    write_pyproject(
        tmp_path,
        '[tool.site_builder]\ntitle = "My dictionary"\nsite_url = "https://example.org/d/"\n'
        'demos = "examples"\ntimeout = 30\n[tool.site_builder.entries.slow]\ntimeout = 900\n',
    )
    config = load_config(tmp_path)
    assert config.title == "My dictionary"
    assert config.demos == tmp_path.resolve() / "examples"
    assert config.timeout_for("slow") == 900
    assert config.timeout_for("other") == 30


def test_command_line_overrides_file(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.site_builder]\ntimeout = 30\n")
    config = with_overrides(load_config(tmp_path), timeout=5.0, output=Path("elsewhere"))
    assert config.timeout == 5.0
    assert config.output == tmp_path.resolve() / "elsewhere"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[tool.site_builder]\ntitel = 'x'\n", "unknown key 'titel'"),
        ("[tool.site_builder]\ntimeout = 'long'\n", "timeout must be a number of seconds"),
        ("[tool.site_builder]\ntimeout = true\n", "timeout must be a number of seconds"),
        ("[tool.site_builder]\ntimeout = -1\n", "timeout must be positive"),
        ("[tool.site_builder]\ntitle = 3\n", "title must be a string"),
        ("[tool.site_builder.entries.x]\ntimout = 3\n", "unknown key entries.x.timout"),
        ("[tool.site_builder\n", "not valid TOML"),
    ],
)
def test_bad_configuration_names_the_key(tmp_path: Path, body: str, message: str) -> None:
    write_pyproject(tmp_path, body)
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        load_config(tmp_path)
