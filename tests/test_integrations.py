"""The CI integrations: the pre-commit hooks (run with the real pre-commit) and the GitHub
Action's script (run locally, as the action runs it)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from blueprint.convert import convert
from conftest import EXAMPLES, git

ROOT = Path(__file__).parent.parent
EXAMPLE = EXAMPLES / "support-refunds.json"
BLUEPRINT = Path(sys.executable).parent / "blueprint"


def break_set(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"reference-answer"', '"reference-answr"', 1), encoding="utf-8")


def make_repo(folder: Path, config: str | None = None) -> Path:
    (folder / "evals").mkdir(parents=True)
    convert(EXAMPLE, folder / "evals" / "refunds.json")
    convert(EXAMPLE, folder / "evals" / "support.csv")
    (folder / "package.json").write_text('{"name": "web", "scripts": {}}', encoding="utf-8")
    if config is not None:
        (folder / "blueprint.toml").write_text(config, encoding="utf-8")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "sets")
    return folder


# --- the GitHub Action -------------------------------------------------------------------------


def test_action_declares_its_inputs_and_runs_its_script() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    script = next(step for step in steps if step.get("id") == "check")
    assert ".github/action/run.sh" in script["run"]
    assert (ROOT / ".github" / "action" / "run.sh").is_file()
    used = {name.removeprefix("INPUT_").lower() for name in script["env"]}
    assert used <= set(action["inputs"])


def run_action(repo: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    summary = repo.parent / "summary.md"
    summary.write_text("", encoding="utf-8")
    environment = {
        **os.environ,
        "BLUEPRINT": str(BLUEPRINT),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(repo.parent / "output.txt"),
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }
    return subprocess.run(
        ["bash", str(ROOT / ".github" / "action" / "run.sh")],
        cwd=repo,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.skipif(not BLUEPRINT.exists(), reason="the blueprint script is not installed")
def test_action_script_annotates_and_posts_the_review(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", 'include = ["evals/*.json", "evals/*.csv"]\n')
    done = run_action(repo, against="HEAD")
    assert done.returncode == 0, done.stderr
    assert "result=passed" in (tmp_path / "output.txt").read_text(encoding="utf-8")
    assert "No golden set changed" in (tmp_path / "summary.md").read_text(encoding="utf-8")

    break_set(repo / "evals" / "refunds.json")
    git(repo, "commit", "-qam", "break a row")
    done = run_action(repo, against="HEAD~1")
    assert done.returncode == 1
    assert "::error file=evals/refunds.json,line=" in done.stdout
    assert "result=failed" in (tmp_path / "output.txt").read_text(encoding="utf-8")
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "### `evals/refunds.json`" in summary and "oracleType" in summary


@pytest.mark.skipif(not BLUEPRINT.exists(), reason="the blueprint script is not installed")
def test_action_script_checks_only_the_paths_given(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", 'include = ["evals/*.json", "evals/*.csv"]\n')
    break_set(repo / "evals" / "refunds.json")
    done = run_action(repo, paths="evals/support.csv", review="false")
    assert done.returncode == 0, done.stdout + done.stderr


# --- pre-commit --------------------------------------------------------------------------------

HOOK_FILES = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml")
HOOK_FOLDERS = ("src", "packs", "exporters", "schemas")


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout's hooks as pre-commit sees a hook repository: a git repository of the
    working tree (not of the last commit), so the test runs the code under test."""
    folder = tmp_path_factory.mktemp("hooks") / "blueprint"
    folder.mkdir()
    for name in HOOK_FILES:
        shutil.copy2(ROOT / name, folder / name)
    for name in HOOK_FOLDERS:
        shutil.copytree(
            ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "hooks")
    return folder, git(folder, "rev-parse", "HEAD")


def pre_commit(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=repo,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed"
)
def test_pre_commit_hooks_fail_on_an_invalid_set_and_pass_on_a_valid_one(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hook_repository
) -> None:
    hooks, revision = hook_repository
    repo = make_repo(tmp_path / "repo", 'include = ["evals/*.json", "evals/*.csv"]\n')
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {hooks}\n"
        f"    rev: {revision}\n"
        "    hooks:\n"
        "      - id: blueprint-validate\n"
        "        files: ^evals/\n"
        "      - id: blueprint-check\n",
        encoding="utf-8",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hooks")
    home = tmp_path_factory.mktemp("pre-commit-home")
    done = pre_commit(repo, home, "run", "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("Passed") == 2

    break_set(repo / "evals" / "refunds.json")
    done = pre_commit(repo, home, "run", "--all-files")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.count("Failed") == 2
    assert "evals/refunds.json" in done.stdout
