"""blueprint dedupe, split and sample: exit codes, stdout for findings and machine output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from conftest import document, row, write_json

runner = CliRunner()

KETTLE = "How many days do I have to return a kettle bought online from your shop?"
KETTLE_NEAR = "How many days do I have to return a kettle I bought online from your shop?"
BLENDER = "Can I get my money back for a blender that arrived broken last week?"


def run(*args: Any):
    return runner.invoke(app, [str(a) for a in args])


def case_row(row_id: str, value: Any, split: str | None = None, family: str | None = None):
    data = row(row_id)
    data["input"] = value
    if split is not None:
        data["metadata"]["split"] = split
    if family is not None:
        data["metadata"]["case"]["caseFamily"] = family
    return data


@pytest.fixture
def dev_and_test(tmp_path: Path) -> tuple[Path, Path]:
    dev = write_json(
        tmp_path / "dev.json",
        document(case_row("d1", KETTLE, "dev"), case_row("d2", BLENDER, "dev")),
    )
    test = write_json(
        tmp_path / "test.json",
        document(case_row("t1", KETTLE.lower(), "test"), case_row("t2", KETTLE_NEAR, "test")),
    )
    return dev, test


def test_help_lists_the_hygiene_commands() -> None:
    result = run("--help")
    for command in ("dedupe", "split", "sample"):
        assert command in result.stdout


def test_dedupe_exits_1_with_a_table_on_stdout(dev_and_test: tuple[Path, Path]) -> None:
    result = run("dedupe", *dev_and_test)
    assert result.exit_code == 1
    assert "exact" in result.stdout and "near" in result.stdout
    assert "across splits" in result.stdout and "straddle splits" in result.stdout
    assert "Traceback" not in result.output


def test_dedupe_json_report(dev_and_test: tuple[Path, Path]) -> None:
    result = run("dedupe", *dev_and_test, "--report", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["duplicates"] is True
    assert report["counts"]["exactGroups"] == 1 and report["counts"]["acrossSplits"] == 2
    assert [r["id"] for r in report["exact"][0]["rows"]] == ["d1", "t1"]
    assert report["near"][0]["matches"][0]["id"] == "t2"
    assert (
        json.loads(run("dedupe", *dev_and_test, "--report", "json", "--exact-only").stdout)["near"]
        == []
    )


def test_dedupe_exits_0_without_duplicates(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json", document(case_row("a", KETTLE), case_row("b", BLENDER)))
    result = run("dedupe", path)
    assert result.exit_code == 0
    assert "no duplicates" in result.stdout
    assert json.loads(run("dedupe", path, "--report", "json").stdout)["duplicates"] is False


def test_dedupe_threshold(dev_and_test: tuple[Path, Path]) -> None:
    strict = json.loads(
        run("dedupe", *dev_and_test, "--threshold", "0.99", "--report", "json").stdout
    )
    assert strict["near"] == [] and strict["threshold"] == 0.99
    assert run("dedupe", *dev_and_test, "--threshold", "0").exit_code == 2
    assert run("dedupe", *dev_and_test, "--threshold", "1.5").exit_code == 2


def test_dedupe_unreadable_file_exits_2_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a"}\n{oops\n', encoding="utf-8")
    result = run("dedupe", broken)
    assert result.exit_code == 2
    assert "broken.jsonl" in result.stderr and "Traceback" not in result.output
    missing = run("dedupe", tmp_path / "missing.json", "--report", "json")
    assert missing.exit_code == 2
    assert json.loads(missing.stdout)["exitCode"] == 2


def test_dedupe_output_removes_exact_repeats_and_says_so(
    tmp_path: Path, dev_and_test: tuple[Path, Path]
) -> None:
    dev, test = dev_and_test
    out = tmp_path / "test-clean.jsonl"
    result = run("dedupe", dev, test, "-o", out)
    assert result.exit_code == 1  # the inputs had duplicates; the output was still written
    assert "removed" in result.stderr and "t1" in result.stderr
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["t2"]
    again = run("dedupe", dev, test, "-o", out)
    assert again.exit_code == 2 and "--force" in again.stderr
    data = json.loads(run("dedupe", dev, test, "-o", out, "--force", "--report", "json").stdout)
    assert [r["id"] for r in data["written"]["removed"]] == ["t1"]


def _policy_set(tmp_path: Path, name: str = "s.json", count: int = 10) -> Path:
    families = [
        {"id": "policy", "title": "P", "oracleType": "reference-answer", "severity": "major"}
    ]
    rows = [
        case_row(f"r{n}", f"question {n} about the policy", family="policy") for n in range(count)
    ]
    return write_json(tmp_path / name, document(*rows, caseFamilies=families))


def test_split_writes_and_reports_strata(tmp_path: Path) -> None:
    source = _policy_set(tmp_path)
    out = tmp_path / "split.jsonl"
    result = run("split", source, "--ratios", "train=0.8,test=0.2", "--seed", "3", "-o", out)
    assert result.exit_code == 0, result.output
    assert "policy" in result.stdout and "train" in result.stdout
    assert "wrote" in result.stderr
    splits = [json.loads(line)["metadata"]["split"] for line in out.read_text().splitlines()]
    assert sorted(splits) == ["test"] * 2 + ["train"] * 8
    data = json.loads(
        run(
            "split",
            source,
            "--ratios",
            "train=0.8,test=0.2",
            "--seed",
            "3",
            "-o",
            out,
            "--force",
            "--report",
            "json",
        ).stdout
    )
    assert data["splits"] == {"train": 8, "test": 2}
    assert data["strata"][0]["caseFamily"] == "policy"


def test_split_refusals_and_usage_errors(tmp_path: Path) -> None:
    source = _policy_set(tmp_path)
    ratios = ("--ratios", "dev=0.5,test=0.5", "--seed", "1")
    assert run("split", source, *ratios).exit_code == 2  # neither -o nor --in-place
    assert run("split", source, *ratios, "--in-place", "-o", tmp_path / "x.json").exit_code == 2
    assert (
        run("split", source, "--ratios", "dev=0.5,test=0.6", "--seed", "1", "--in-place").exit_code
        == 2
    )
    assert run("split", source, "--ratios", "dev=0.5,test=0.5", "--in-place").exit_code == 2
    assert run("split", source, *ratios, "--in-place").exit_code == 0
    before = source.read_bytes()
    refused = run("split", source, *ratios, "--in-place")
    assert refused.exit_code == 1 and "--reassign" in refused.stderr
    assert source.read_bytes() == before
    assert run("split", source, *ratios, "--in-place", "--reassign").exit_code == 0
    vendor = tmp_path / "tests.yaml"
    vendor.write_text("- vars: {q: hello}\n  assert: [{type: equals, value: hi}]\n")
    assert run("split", vendor, *ratios, "--in-place").exit_code == 1
    assert run("split", vendor, *ratios, "-o", tmp_path / "out.yaml").exit_code == 2
    assert run("split", vendor, *ratios, "-o", tmp_path / "out.json").exit_code == 0


def test_sample(tmp_path: Path) -> None:
    source = _policy_set(tmp_path, count=20)
    out = tmp_path / "sample.csv"
    result = run("sample", source, 5, "--seed", "4", "-o", out)
    assert result.exit_code == 0, result.output
    assert "sampled" in result.stdout and "wrote" in result.stderr
    assert (tmp_path / "sample.csv.set.json").is_file()
    data = json.loads(
        run("sample", source, 5, "--seed", "4", "-o", out, "--force", "--report", "json").stdout
    )
    assert data["sampled"] == 5 and data["strata"][0]["sampled"] == 5
    assert run("sample", source, 5, "--seed", "4", "-o", out).exit_code == 2  # exists
    assert run("sample", source, 50, "--seed", "4", "-o", tmp_path / "big.json").exit_code == 2
    assert run("sample", source, 5, "-o", tmp_path / "noseed.json").exit_code == 2
