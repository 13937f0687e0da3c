"""Configuration from pyproject.toml: defaults, overrides, bad keys and types."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from site_builder.config import load_config, with_overrides
from site_builder.errors import UsageError
from tests.conftest import run_cli, write_demo


def write_pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text(body, encoding="utf-8")


def test_defaults_without_pyproject(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.title == tmp_path.resolve().name  # no pyproject.toml: the folder's name
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
        ("[tool.site_builder]\ntitle = ' '\n", "title must not be empty"),
        ("[tool.site_builder]\nsite_url = 'example.org/d/'\n", "site_url must be an http(s) URL ending in '/'"),
        ("[tool.site_builder]\nsite_url = 'https://example.org/d'\n", "site_url must be an http(s) URL ending in '/'"),
        ("[tool.site_builder]\nsite_url = 'javascript:alert(1)//'\n", "site_url must be an http(s) URL"),
        ("[tool.site_builder]\nsite_url = 'https:///d/'\n", "site_url must be an http(s) URL"),
        ("[tool.site_builder]\noutput = ''\n", "output must not be empty"),
        ("[tool.site_builder]\noutput = '.'\n", "output folder (output / --out) is the project folder"),
        ("[tool.site_builder]\noutput = 'demos'\n", "output folder (output / --out) is the demos folder"),
        ("[tool.site_builder]\ndemos = 'site/demos'\noutput = 'site'\n", "contains the demos folder"),
        ("[tool.site_builder.entries.Attention]\ntimeout = 3\n", "entries.Attention] names no possible entry"),
        ("[tool.site_builder]\nfigure_scale = 0.5\n", "figure_scale must be a number from 1 to 4"),
        ("[tool.site_builder]\nfigure_scale = 8\n", "figure_scale must be a number from 1 to 4"),
        ("[tool.site_builder]\nfigure_scale = 'retina'\n", "figure_scale must be a number from 1 to 4"),
        ("[tool.site_builder]\nfigure_scale = nan\n", "figure_scale must be a finite number"),
        ("[tool.site_builder]\ndisplay_limit = 0\n", "display_limit must be positive"),
        ("[tool.site_builder]\ndisplay_limit = '5 MB'\n", "display_limit must be a number of bytes"),
        ("[tool.site_builder]\nanimation_frames = 2.5\n", "animation_frames must be a number of frames"),
        ("[tool.site_builder]\nanimation_size = -1\n", "animation_size must be positive"),
    ],
)
def test_bad_configuration_names_the_key(tmp_path: Path, body: str, message: str) -> None:
    write_pyproject(tmp_path, body)
    with pytest.raises(UsageError, match=re.escape(message)):
        load_config(tmp_path)


def test_site_url_accepts_http_and_https_folders(tmp_path: Path) -> None:
    for url in ("https://example.org/", "http://localhost:8000/dictionary/"):
        write_pyproject(tmp_path, f"[tool.site_builder]\nsite_url = '{url}'\n")
        assert load_config(tmp_path).site_url == url


def test_command_line_output_is_checked_too(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is the demos folder"):
        with_overrides(load_config(tmp_path), output=Path("demos"))


def test_title_and_timeouts_reach_the_build(project: Path) -> None:
    write_pyproject(
        project,
        '[tool.site_builder]\ntitle = "Glossary <of> ML"\ntimeout = 30\n'
        "[tool.site_builder.entries.slow]\ntimeout = 0.5\n",
    )
    write_demo(project, "slow", "import time\ntime.sleep(5)\n")
    write_demo(project, "quick", "print('done')\n")
    result = run_cli("build", "-j", "2", cwd=project)
    assert result.returncode == 1
    assert "slow" in result.stderr and "0.5" in result.stderr  # the entry's own timeout
    assert "quick" not in "".join(line for line in result.stderr.splitlines() if line.startswith("error:"))
    assert "entries.slow] names no entry" not in result.stderr
    index = (project / "build.failed" / "index.html").read_text(encoding="utf-8")
    assert "<title>Glossary &lt;of&gt; ML</title>" in index
    assert "Glossary <of>" not in index


def test_command_line_timeout_overrides_the_file(project: Path) -> None:
    write_pyproject(project, "[tool.site_builder]\ntimeout = 0.1\n")
    write_demo(project, "pause", "import time\ntime.sleep(0.3)\n")
    assert run_cli("build", "--timeout", "30", cwd=project).returncode == 0


def test_override_for_a_missing_entry_is_a_warning(project: Path) -> None:
    write_pyproject(project, "[tool.site_builder.entries.atention]\ntimeout = 900\n")
    write_demo(project, "attention", "print('hi')\n")
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "pyproject.toml: [tool.site_builder.entries.atention] names no entry in the demos folder" in result.stderr
