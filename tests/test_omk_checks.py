"""omk's deterministic assertions as checks of the vocabulary, both ways: a sample checked only
by code is an acceptable set defined by its checks, one with a rubric (or an answer) has them
as its gate, and a row's checks go to omk as the assertions that say the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.formats.omk.checks import assertion_of, check_of
from blueprint.grading.semantics import Recorded, grade_row
from conftest import row

CODEC = REGISTRY["omk"]
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "checks"}

SAMPLES = [
    {
        "sample_id": "coded",
        "prompt": "List the steps",
        "assertions": [
            {"type": "contains_all", "values": ["Backup", "restore"]},
            {"type": "regex", "pattern": "^step \\d"},
        ],
    },
    {
        "sample_id": "judged",
        "prompt": "Explain",
        "rubric": {"clarity": {"criterion": "Is it clear?", "weight": 1}},
        "assertions": [
            {"type": "max_length", "value": 40},
            {"type": "contains", "value": "sorry", "not": True},
            {"type": "rouge_n_min", "reference": "a b", "threshold": 0.5},
        ],
    },
    {
        "sample_id": "nested",
        "prompt": "Answer",
        "assertions": [
            {
                "type": "assert-set",
                "mode": "any",
                "children": [
                    {"type": "starts_with", "value": "Yes"},
                    {
                        "type": "assert-set",
                        "children": [{"type": "json_valid"}, {"type": "not_equals", "value": "{}"}],
                    },
                ],
            }
        ],
    },
    {
        "sample_id": "answer",
        "prompt": "Capital of France?",
        "assertions": [
            {"type": "equals", "value": "Paris"},
            {"type": "word_count_max", "value": 3},
        ],
    },
]


def suite(tmp_path: Path, samples: list[dict[str, Any]]) -> Path:
    path = tmp_path / "eval-samples.json"
    document = {"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


def passes(data: dict[str, Any], output: str) -> bool:
    verdict = grade_row(data, Recorded(id=data["id"], output=output, has_output=True))
    return verdict.verdict == "pass"


def test_assertions_import_as_checks(tmp_path: Path) -> None:
    rows = {data["id"]: data for data in data_rows(CODEC.open(suite(tmp_path, SAMPLES)))}
    coded = rows["coded"]
    case = coded["metadata"]["case"]
    assert case["oracleType"] == "acceptable-set"
    assert case["evaluator"] == "exact-or-programmatic"
    assert coded["expected"] == {
        "satisfies": {
            "type": "all",
            "checks": [
                {
                    "type": "contains-all",
                    "values": ["Backup", "restore"],
                    "normalize": ["lowercase"],
                },
                {"type": "regex", "pattern": "^step \\d", "flags": "i"},
            ],
        }
    }
    assert passes(coded, "STEP 1: backup, then RESTORE")  # omk lowercases, and reads flags i
    assert not passes(coded, "step 1: backup")
    judged = rows["judged"]["metadata"]["case"]
    assert judged["oracleType"] == "rubric"
    assert judged["checks"] == [
        {"type": "length", "unit": "characters", "max": 40},
        {
            "type": "not",
            "check": {"type": "contains", "value": "sorry", "normalize": ["lowercase"]},
        },
    ]  # rouge_n_min has no check: it stays as written
    assert rows["nested"]["expected"]["satisfies"] == {
        "type": "any",
        "checks": [
            {"type": "starts-with", "value": "Yes", "normalize": ["lowercase"]},
            {
                "type": "all",
                "checks": [
                    {"type": "is-json"},
                    {
                        "type": "not",
                        "check": {"type": "equals", "value": "{}", "normalize": ["trim"]},
                    },
                ],
            },
        ],
    }
    answer = rows["answer"]
    assert answer["expected"] == "Paris"
    assert answer["metadata"]["case"]["checks"] == [{"type": "length", "unit": "words", "max": 3}]


def test_a_sample_set_with_checks_goes_back_as_it_came(tmp_path: Path) -> None:
    path = suite(tmp_path, SAMPLES)
    canonical, back = tmp_path / "set.json", tmp_path / "back" / "eval-samples.json"
    back.parent.mkdir()
    convert(path, canonical, ConvertOptions(source_format="omk"))
    convert(canonical, back, ConvertOptions(target_format="omk"))
    assert json.loads(back.read_text("utf-8")) == json.loads(path.read_text("utf-8"))


def test_checks_no_longer_vanish_from_other_exports(tmp_path: Path) -> None:
    canonical = tmp_path / "set.json"
    convert(suite(tmp_path, SAMPLES), canonical, ConvertOptions(source_format="omk"))
    result = convert(canonical, tmp_path / "inspect.jsonl", ConvertOptions(target_format="inspect"))
    weakened = {
        item.field: set(item.row_ids) for item in result.export.lossy if item.kind == "weakened"
    }
    assert {"coded", "nested"} <= weakened["expected.satisfies"]
    assert {"judged", "answer"} <= weakened["metadata.case.checks"]


def test_checks_export_as_the_omk_assertions_that_say_the_same(tmp_path: Path) -> None:
    rows = [
        row(
            "cased",
            "acceptable-set",
            expected={"satisfies": {"type": "contains", "value": "v1.2 (beta)"}},
        ),
        row(
            "gated",
            "reference-answer",
            expected="Paris",
            checks=[
                {"type": "contains", "value": "par", "normalize": ["lowercase"]},
                {"type": "number", "value": 3},
            ],
        ),
        row(
            "counted", "acceptable-set", expected={"satisfies": {"type": "items", "required": [1]}}
        ),
    ]
    path = tmp_path / "eval-samples.json"
    result = CODEC.write(HEADER, iter(rows), path, WriteOptions(force=True))
    samples = {s["sample_id"]: s for s in json.loads(path.read_text("utf-8"))["samples"]}
    assert samples["cased"]["assertions"] == [
        {"type": "regex", "pattern": "v1\\.2 \\(beta\\)", "flags": "g"}
    ]
    assert samples["gated"]["assertions"] == [
        {"type": "equals", "value": "Paris"},
        {"type": "contains", "value": "par"},
    ]
    assert "counted" not in samples
    weakened = {item.field: set(item.row_ids) for item in result.lossy if item.kind == "weakened"}
    assert weakened.get("metadata.case.checks") == {"gated"}
    assert "expected.satisfies" not in weakened


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "contains", "value": "a"},
        {"type": "contains_any", "values": ["a", "b"]},
        {"type": "ends_with", "value": "z", "not": True},
        {"type": "equals", "value": "x"},
        {"type": "regex", "pattern": "a.b", "flags": "ms"},
        {"type": "min_length", "value": 2},
        {"type": "word_count_min", "value": 2},
        {"type": "json_valid"},
        {"type": "json_schema", "schema": {"type": "object", "required": ["id"]}},
        {"type": "levenshtein_max", "value": 2, "reference": "Paris"},
        {"type": "assert-set", "mode": "all", "children": [{"type": "json_valid"}]},
    ],
)
def test_each_deterministic_assertion_goes_both_ways(assertion: dict[str, Any]) -> None:
    check = check_of(assertion)
    assert check is not None
    assert assertion_of(check) == assertion


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "regex", "pattern": "a", "flags": "u"},
        {"type": "regex", "pattern": "(?<name>a)"},
        {"type": "json_schema", "schema": {"type": "array", "items": [{"type": "string"}]}},
        {"type": "rouge_n_min", "reference": "a", "threshold": 0.5},
        {"type": "tools_called", "values": ["Read"]},
        {"type": "cost_max", "value": 1},
        {"type": "assert-set", "children": []},
    ],
)
def test_assertions_no_check_says_are_not_read_as_checks(assertion: dict[str, Any]) -> None:
    assert check_of(assertion) is None
