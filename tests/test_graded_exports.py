"""convert --graders blueprint: an export graded by Blueprint's scorer in its runner reports
weakened only what a judge must still decide, and carries every row whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert
from blueprint.formats.vendor.codec import SCORED_FORMATS
from blueprint.grading.records import row_from_record
from conftest import EXAMPLES, FIXTURES, document, row, write_json

runner = CliRunner()
EXAMPLE = EXAMPLES / "support-refunds.json"
NAMES = {
    "promptfoo": "tests.json",
    "deepeval": "goldens.json",
    "langsmith": "examples.jsonl",
    "braintrust": "records.jsonl",
    "inspect": "samples.jsonl",
    "openai-evals": "samples.jsonl",
}


def export(source: Path, target: Path, fmt: str, *extra: str) -> dict[str, Any]:
    done = runner.invoke(
        app,
        ["convert", str(source), str(target), "--to", fmt, "--report", "json", "--force", *extra],
    )
    assert done.exit_code == 0, done.output
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def weakened(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in report["lossy"] if item["kind"] == "weakened"]


def records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    found: list[dict[str, Any]] = (
        json.loads(text)
        if path.suffix == ".json"
        else [json.loads(line) for line in text.split("\n") if line]
    )
    return found


@pytest.mark.parametrize("fmt", SCORED_FORMATS)
def test_blueprint_graders_leave_nothing_weakened_that_the_scorer_enforces(
    fmt: str, tmp_path: Path
) -> None:
    stock = export(EXAMPLE, tmp_path / NAMES[fmt], fmt)
    assert weakened(stock)  # the runner's stock graders leave rules unenforced
    graded = export(EXAMPLE, tmp_path / NAMES[fmt], fmt, "--graders", "blueprint")
    assert weakened(graded) == []
    assert any("blueprint.integrations" in note for note in graded["notes"])


@pytest.mark.parametrize("fmt", SCORED_FORMATS)
def test_a_judged_row_goes_to_the_runners_judge(fmt: str, tmp_path: Path) -> None:
    rubric = row("tone", "rubric", evaluator="llm-judge", evaluationCriteria=["apologises once"])
    person = row("person", "rubric", evaluator="rubric-human", evaluationCriteria=["kind"])
    answer = row("answer", expected="42")
    source = write_json(tmp_path / "set.json", document(answer, rubric, person, name="judged"))
    report = export(
        source, tmp_path / NAMES[fmt], fmt, "--graders", "blueprint", "--include-human-review"
    )
    assert weakened(report) == []
    (note,) = [note for note in report["notes"] if "judge" in note and "(tone)" in note]
    assert note.startswith("1 row(s) (tone)")


@pytest.mark.parametrize("fmt", SCORED_FORMATS)
def test_every_record_carries_its_whole_row(fmt: str, tmp_path: Path) -> None:
    # a set that came from the runner's own format, written back: the scorer still needs the
    # whole row in the record's metadata, not the compact bookkeeping
    native = {
        "promptfoo": FIXTURES / "native" / "promptfoo" / "more-tests.yaml",
        "deepeval": FIXTURES / "native" / "deepeval" / "goldens.json",
        "langsmith": FIXTURES / "native" / "langsmith" / "unknown-keys.jsonl",
        "braintrust": FIXTURES / "native" / "braintrust" / "unknown-keys.jsonl",
        "openai-evals": FIXTURES
        / "native"
        / "openai-evals"
        / "public"
        / "evals-registry-readme-samples"
        / "test_match.jsonl",
        "inspect": FIXTURES
        / "native"
        / "inspect"
        / "public"
        / "inspect-test-datasets"
        / "samples.jsonl",
    }[fmt]
    imported = tmp_path / "set.json"
    convert(native, imported, ConvertOptions(source_format=fmt, allow_invalid=True))
    target = tmp_path / NAMES[fmt]
    options = ConvertOptions(target_format=fmt, graders="blueprint", include_human_review=True)
    convert(imported, target, options)
    rows = {item["id"]: item for item in json.loads(imported.read_text("utf-8"))["rows"]}
    for record in records(target):
        metadata = record.get("additional_metadata") or record.get("metadata")
        payload = metadata["blueprint"]
        payload = json.loads(payload) if isinstance(payload, str) else payload
        assert "case" in payload
        # read alone, as a scorer reads it, the record is its row
        alone = row_from_record(fmt, record)
        assert alone["metadata"]["case"] == rows[alone["id"]]["metadata"]["case"]


def test_graders_blueprint_is_refused_where_no_scorer_exists(tmp_path: Path) -> None:
    done = runner.invoke(
        app,
        ["convert", str(EXAMPLE), str(tmp_path / "s.yaml"), "--to", "omk", "--graders",
         "blueprint"],
    )  # fmt: skip
    assert done.exit_code == 2
    assert not (tmp_path / "s.yaml").exists()
