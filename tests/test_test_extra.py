"""The test extra installs every package the tests import, so that the README's test command
(`pip install -e ".[test]" && pytest`) runs them all on a fresh clone; only the conformance
tests, under tests/conformance, need the vendor tools of the conformance extra."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import runpy
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
#: modules of the repository itself that the tests import by name
LOCAL = {
    "blueprint",
    "bench_core",
    *(path.stem for path in TESTS.glob("*.py")),
}


def _conformance(node: ast.AST) -> bool:
    """A test function marked conformance: it runs only with the vendor tools installed."""
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
        isinstance(mark, ast.Attribute) and mark.attr == "conformance"
        for decorator in node.decorator_list
        for mark in ast.walk(decorator)
    )


def _imported(tree: ast.AST) -> set[str]:
    """The top-level modules a test file imports outside its conformance tests: import
    statements, and the names it hands to importlib.import_module or pytest.importorskip."""
    names: set[str] = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        if _conformance(node):
            continue
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("import_module", "importorskip")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return {name.split(".")[0] for name in names}


def _third_party_imports() -> dict[str, list[str]]:
    """Each third-party module the tests outside tests/conformance import, with its files."""
    found: dict[str, list[str]] = {}
    for path in sorted(TESTS.glob("*.py")):
        for name in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            if name not in sys.stdlib_module_names and name not in LOCAL:
                found.setdefault(name, []).append(path.name)
    return found


def _declared() -> set[str]:
    """The distributions the project's dependencies and its test extra bring, with theirs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pending = [Requirement(text) for text in project["dependencies"]]
    pending += [Requirement(text) for text in project["optional-dependencies"]["test"]]
    seen: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: what it brings cannot be known, only its own name
        for text in requires:
            needed = Requirement(text)
            if needed.marker is None or needed.marker.evaluate({"extra": ""}):
                pending.append(needed)
    return seen


def test_every_package_the_tests_import_comes_with_the_test_extra() -> None:
    providers = importlib.metadata.packages_distributions()
    declared = _declared()
    missing = {}
    for module, files in _third_party_imports().items():
        distributions = {canonicalize_name(name) for name in providers.get(module, [module])}
        if not distributions & declared:
            missing[module] = files
    assert missing == {}, "add these to the test extra in pyproject.toml"


def test_the_studio_tests_client_imports() -> None:
    """starlette.testclient needs httpx2 (starlette 1.x) or httpx, which no import names."""
    import starlette.testclient

    assert starlette.testclient.TestClient


def test_the_readme_set_up_is_the_two_commands_ci_runs() -> None:
    """.ci/run runs the README's two set-up commands as written, read by .ci/readme_setup.py."""
    setup = runpy.run_path(str(ROOT / ".ci" / "readme_setup.py"))
    commands = setup["setup_commands"]((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2
    assert re.search(r"pip install -e \. ", commands[0])
    assert 'pip install -e ".[test]"' in commands[1] and "-m pytest" in commands[1]
