"""The package's wings: the folders, the layering contract and docs/architecture.md agree, an
upward import breaks the contract, and the module paths from before the wings still import."""

from __future__ import annotations

import ast
import importlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import blueprint

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "blueprint"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: the transport modules that sit at the top of the package beside the wings
TRANSPORT = {"convert", "diff", "sets", "frames"}
#: a module longer than this says why in its docstring
MAX_LINES = 800
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _wings() -> set[str]:
    return {
        path.name
        for path in PACKAGE.iterdir()
        if path.is_dir() and (path / "__init__.py").is_file()
    }


def _contracts() -> dict[str, dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {contract["id"]: contract for contract in config["tool"]["importlinter"]["contracts"]}


def _layer_names() -> set[str]:
    layers = _contracts()["wings"]["layers"]
    assert isinstance(layers, list)
    return {name.strip().strip("()") for layer in layers for name in re.split(r"[|:]", str(layer))}


def test_the_top_of_the_package_holds_the_wings_and_the_transport_alone() -> None:
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    assert modules == {"__init__", "__main__", *TRANSPORT}


@pytest.mark.parametrize("wing", sorted(_wings()))
def test_every_wing_has_its_place_in_the_contract_and_the_docs(wing: str) -> None:
    assert wing in _layer_names(), f"add {wing} to the wings contract in pyproject.toml"
    table = ARCHITECTURE.read_text(encoding="utf-8")
    assert f"| `{wing}/` |" in table, f"add a row for {wing}/ to docs/architecture.md"
    docstring = ast.get_docstring(ast.parse((PACKAGE / wing / "__init__.py").read_text()))
    assert docstring, f"{wing}/__init__.py needs a docstring saying what the wing is for"


def test_every_layer_of_the_contract_exists_or_is_planned() -> None:
    layers = _contracts()["wings"]["layers"]
    assert isinstance(layers, list)
    planned = {
        name.strip()[1:-1]
        for layer in layers
        for name in re.split(r"[|:]", str(layer))
        if name.strip().startswith("(")
    }
    existing = _wings() | TRANSPORT
    assert _layer_names() - planned <= existing
    assert not planned & existing, "a wing that exists is no longer optional in the contract"


def test_no_module_is_over_the_limit_without_saying_why() -> None:
    long = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_LINES:
            docstring = ast.get_docstring(ast.parse(text)) or ""
            if f"over {MAX_LINES} lines" not in docstring:
                long.append(f"{path.relative_to(PACKAGE)}: {text.count(chr(10))} lines")
    assert not long, f"split these, or say in the docstring why they are over {MAX_LINES} lines"


def _lint_imports(src: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(ROOT / "pyproject.toml")],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


needs_lint_imports = pytest.mark.skipif(
    not LINT_IMPORTS.is_file(), reason="import-linter is not installed (the test extra)"
)


@needs_lint_imports
def test_the_package_keeps_its_contracts(tmp_path: Path) -> None:
    result = _lint_imports(ROOT / "src", tmp_path)
    assert result.returncode == 0, result.stdout


@needs_lint_imports
@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        ("core/model.py", "from blueprint.cli import app", "Each wing imports only"),
        ("formats/base.py", "import blueprint.validation.checks", "Each wing imports only"),
        (
            "io/atomic.py",
            "def _later():\n    from blueprint.reports import summary",
            "Each wing imports only",
        ),
        ("reports/risk.py", "from blueprint.authoring import builder", "does not edit it"),
        ("formats/deepeval.py", "from blueprint.formats import langsmith", "another vendor"),
        ("validation/parallel.py", "from blueprint.validation import validate", "circle"),
    ],
)
def test_a_forbidden_import_breaks_the_build(
    tmp_path: Path, module: str, statement: str, contract: str
) -> None:
    copy = tmp_path / "src" / "blueprint"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n\n{statement}\n", "utf-8")
    result = _lint_imports(tmp_path / "src", tmp_path)
    assert result.returncode == 1, result.stdout
    broken = result.stdout.split("Broken contracts")[-1]
    assert contract in broken, result.stdout


def test_every_old_module_path_still_imports_with_a_warning() -> None:
    moved = blueprint._MOVED
    assert moved, "the table of moved modules is empty"
    for old, new in moved.items():
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match=re.escape(new)):
            module = importlib.import_module(old)
        assert module is importlib.import_module(new), old
        assert module.__spec__ is not None and module.__spec__.name == new


def test_the_documented_old_paths_give_the_same_objects() -> None:
    from blueprint.authoring.splits import parse_ratios as current

    sys.modules.pop("blueprint.splits", None)
    with pytest.warns(DeprecationWarning):
        from blueprint.splits import parse_ratios  # type: ignore[import-not-found]
    assert parse_ratios is current


def test_the_old_reports_module_names_still_resolve() -> None:
    from blueprint.reports.writers import render_json

    with pytest.warns(DeprecationWarning, match="blueprint.reports.writers"):
        from blueprint.reports import render_json as old  # type: ignore[attr-defined]
    assert old is render_json
    with pytest.raises(ImportError):
        from blueprint.reports import no_such_name  # type: ignore[attr-defined]  # noqa: F401


def test_python_m_on_an_old_path_runs_the_new_module() -> None:
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-m", "blueprint.docgen", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1 and "DeprecationWarning" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "blueprint.docgen", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "blueprint.cli.docgen" in result.stdout


def test_the_new_paths_import_without_a_warning() -> None:
    code = "import blueprint.validation.validate, blueprint.core.model, blueprint.reports.judging"
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
