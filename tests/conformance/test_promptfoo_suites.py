"""promptfoo suites go through Blueprint and back, and promptfoo's own runner agrees.

Each suite is run with the echo provider as it is, then imported into a Blueprint set,
exported back to a promptfoo config beside the original (so that the paths it names still
resolve), and run again. Every test must have the same result both times: the same pass,
fail or error, and the same score. The suites are promptfoo's own examples and smoke-test
configs, other public projects' suites (tests/fixtures/native/promptfoo/public, each folder
naming its source) and a suite of ours that loads them (tests/fixtures/native/promptfoo/suite).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import promptfoo, promptfoo_eval, quiet_vendors

from blueprint.convert import ConvertOptions, convert, roundtrip
from blueprint.formats.promptfoo import dump_yaml, read_yaml

pytestmark = pytest.mark.conformance

NATIVE = Path(__file__).parents[1] / "fixtures" / "native" / "promptfoo"
EXAMPLE = Path(__file__).parents[2] / "examples" / "promptfoo"
SUITES = [
    "suite/promptfooconfig.yaml",
    "promptfooconfig.yaml",
    "public/simple-test/promptfooconfig.yaml",
    "public/external-defaulttest/promptfooconfig.yaml",
    "public/assertion-scoring-override/promptfooconfig.yaml",
    "public/store-and-reuse-outputs/promptfooconfig.yaml",
    "public/openai-tools-call/promptfooconfig.yaml",
    "public/separate-test-configs/promptfooconfig.yaml",
    "public/multiple-translations/promptfooconfig.yaml",
    "public/csv-metadata/promptfooconfig.yaml",
    "public/self-grading/promptfooconfig.yaml",
    "public/rag-eval/promptfooconfig.yaml",
    "public/g-eval/promptfooconfig.yaml",
    "public/openai-eval-factuality/promptfooconfig.yaml",
    "public/quality-gate-model-comparison/config/promptfoo/evaluations/01_model_comparison.yaml",
    "public/newer-assertions/examples/normalized-tools/promptfooconfig.yaml",
    "public/newer-assertions/examples/word-count-assertion/promptfooconfig.yaml",
    *(
        f"public/smoke-fixtures/configs/{name}"
        for name in (
            "assertions.yaml",
            "contains-all-assertion.yaml",
            "contains-any-assertion.yaml",
            "contains-json-assertion.yaml",
            "csv-tests.yaml",
            "default-test.yaml",
            "file-ref-vars.yaml",
            "json-tests.yaml",
            "jsonl-tests.yaml",
            "levenshtein-assertion.yaml",
            "multi-assertion.yaml",
        )
    ),
]


def with_echo(config: Path) -> Path:
    """A copy of a config beside it that runs every prompt with the echo provider."""
    data = read_yaml(config)
    data["providers"] = ["echo"]
    patched = config.with_name(f".echo-{config.name}")
    patched.write_bytes(dump_yaml(data))
    return patched


#: vars a suite's transformVars sets differently on every run (external-defaulttest's
#: defaultTest adds a random testId and the time)
VOLATILE_VARS = frozenset({"testId", "timestamp"})


def run(promptfoo: str, config: Path, *, files: bool = False) -> list[tuple[Any, ...]]:
    """Each test's result, in order: index, prompt, vars, pass, failure reason, score.
    ``files``: a var naming a file (file://) is the file it names, and the prompt as the
    model got it (the echo provider's output) is compared too."""

    def named(value: Any) -> Any:
        if not files or not isinstance(value, str) or not value.startswith("file://"):
            return value
        return os.path.normpath(config.parent / value.removeprefix("file://"))

    rows = promptfoo_eval(promptfoo, config)["results"]
    return sorted(
        (
            row["testIdx"],
            row["promptIdx"],
            json.dumps(
                {k: named(v) for k, v in (row.get("vars") or {}).items() if k not in VOLATILE_VARS},
                sort_keys=True,
            ),
            row["success"],
            row.get("failureReason"),
            round(row.get("score") or 0, 6),
            *([(row.get("response") or {}).get("output")] if files else []),
        )
        for row in rows
    )


@pytest.fixture
def suites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "promptfoo"
    shutil.copytree(NATIVE, copy)
    # our suite includes tests of the public ones beside it, as a monorepo keeps shared
    # tests: run from the root, whose files references may then lead to
    monkeypatch.chdir(copy)
    return copy


@pytest.mark.parametrize("suite", SUITES)
def test_promptfoo_gives_the_same_results_after_a_round_trip(
    promptfoo: str, suites: Path, suite: str
) -> None:
    same_results_after_a_round_trip(promptfoo, suites / suite)


def test_the_shipped_example_gives_the_same_results_after_a_round_trip(
    promptfoo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/promptfoo, the README's suite, is one promptfoo runs, and runs the same back."""
    copy = tmp_path / "promptfoo"
    shutil.copytree(EXAMPLE, copy)
    monkeypatch.chdir(copy)
    same_results_after_a_round_trip(promptfoo, copy / "promptfooconfig.yaml")


def same_results_after_a_round_trip(promptfoo: str, original: Path) -> None:
    before = run(promptfoo, with_echo(original))
    imported = original.with_name(".imported.json")
    convert(original, imported, ConvertOptions(source_format="promptfoo"))
    exported = original.with_name(f".exported-{original.name}")
    convert(imported, exported, ConvertOptions(target_format="promptfoo"))
    after = run(promptfoo, with_echo(exported))
    assert after == before
    assert before, "the suite ran no test"


#: suites that name files (tests, prompts, vars, a defaultTest) by relative names
MOVED = [
    "suite/promptfooconfig.yaml",
    "public/separate-test-configs/promptfooconfig.yaml",
    "public/external-defaulttest/promptfooconfig.yaml",
    "public/multiple-translations/promptfooconfig.yaml",
    "public/smoke-fixtures/configs/file-ref-vars.yaml",
    "public/smoke-fixtures/configs/jsonl-tests.yaml",
    "public/smoke-fixtures/configs/csv-tests.yaml",
]


@pytest.mark.parametrize("suite", MOVED)
def test_a_config_written_in_another_folder_gives_the_same_results(
    promptfoo: str, suites: Path, suite: str
) -> None:
    """Imported into a set in one folder and written back in another, a config names the
    same files from there: promptfoo gives every test the same result, and the config keeps
    its comments."""
    original = suites / suite
    before = run(promptfoo, with_echo(original), files=True)
    imported = suites / ".sets" / "imported.json"
    imported.parent.mkdir()
    convert(original, imported, ConvertOptions(source_format="promptfoo"))
    exported = suites / ".elsewhere" / "deeper" / original.name
    exported.parent.mkdir(parents=True)
    convert(imported, exported, ConvertOptions(target_format="promptfoo"))
    after = run(promptfoo, with_echo(exported), files=True)
    assert after == before
    assert before, "the suite ran no test"
    assert _comments(exported) == _comments(original)


def test_the_shipped_example_written_in_another_folder_gives_the_same_results(
    promptfoo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's suite, imported and written in another folder: its tests stay in the
    file it names, its defaultTest's file:// var names the same file, and promptfoo agrees."""
    copy = tmp_path / "promptfoo"
    shutil.copytree(EXAMPLE, copy)
    monkeypatch.chdir(tmp_path)
    original = copy / "promptfooconfig.yaml"
    before = run(promptfoo, with_echo(original), files=True)
    convert(original, tmp_path / "suite.json", ConvertOptions())
    exported = tmp_path / "out" / "promptfooconfig.yaml"
    exported.parent.mkdir()
    convert(tmp_path / "suite.json", exported, ConvertOptions(target_format="promptfoo"))
    text = exported.read_text(encoding="utf-8")
    assert "tests: file://../promptfoo/tests.yaml" in text
    assert "policy: file://../promptfoo/policy.md" in text
    assert text.replace("../promptfoo/", "") == original.read_text(encoding="utf-8")
    assert run(promptfoo, with_echo(exported), files=True) == before


def _comments(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip().startswith("#")]


def test_the_conformance_suite_is_rich(suites: Path) -> None:
    """The suite of ours covers what the acceptance asks: at least 15 assertion types,
    inline and file:// tests, a defaultTest and vars from files left unresolved."""
    from blueprint.formats.promptfoo import load
    from blueprint.formats.promptfoo.assertions import _flat

    loaded = load(suites / "suite" / "promptfooconfig.yaml")
    kinds = {
        str(item.get("type"))
        for _, test in loaded.tests
        for item in _flat(test.get("assert") or [])
    }
    assert len(kinds) >= 15, sorted(kinds)
    assert loaded.suite.defaults.get("assert")
    raw = read_yaml(suites / "suite" / "promptfooconfig.yaml")
    assert any(isinstance(entry, str) for entry in raw["tests"])
    assert any(isinstance(entry, dict) for entry in raw["tests"])


@pytest.mark.parametrize("suite", SUITES)
def test_a_promptfoo_suite_round_trips_exactly_in_blueprint(suites: Path, suite: str) -> None:
    result = roundtrip(suites / suite, "promptfoo", source_format="promptfoo")
    assert result.exact, (result.undeclared, result.unobserved, result.vendor_changes)


def test_blueprint_rows_in_a_promptfoo_suite_keep_their_own_grading(
    promptfoo: str, suites: Path
) -> None:
    """A row added in Blueprint to an imported suite is graded by Blueprint's assertion;
    an imported row whose expected answer was edited is graded by the edited answer."""
    original = suites / "suite" / "promptfooconfig.yaml"
    imported = original.with_name(".imported.json")
    convert(original, imported, ConvertOptions(source_format="promptfoo"))
    document = json.loads(imported.read_text(encoding="utf-8"))
    edited = next(
        row
        for row in document["rows"]
        if row["metadata"]["case"]["expectedBehavior"] == "an answer that differs"
    )
    assert edited["expected"] == "Paris"
    edited["expected"] = "Lyon"  # the echo answers Lyon: now it passes
    imported.write_text(json.dumps(document), encoding="utf-8")
    exported = original.with_name(".edited.yaml")
    result = convert(imported, exported, ConvertOptions(target_format="promptfoo"))
    assert any(edited["id"] in note for note in result.export.notes)
    outcome = {vars_: success for _, _, vars_, success, *_ in run(promptfoo, with_echo(exported))}
    assert outcome[json.dumps({"greeting": "hello", "input": "Lyon"}, sort_keys=True)] is True
