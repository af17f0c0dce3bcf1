"""The check vocabulary exported to promptfoo (its default export: Blueprint's javascript,
no Python) gives each output the verdict ``blueprint grade`` gives, with promptfoo's own eval
running the echo provider over the recorded outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import promptfoo, promptfoo_eval

from blueprint.convert import ConvertOptions, convert
from blueprint.formats.promptfoo import dump_yaml, read_yaml
from blueprint.grading import Recorded, grade_row
from check_table import CASES

pytestmark = pytest.mark.conformance

#: rows that compare under declared rules: (normalize, tolerance, expected, output)
COMPARED: list[tuple[dict[str, Any], Any, str]] = [
    ({"normalize": ["trim", "lowercase"]}, "Paris", " PARIS\n"),
    ({"normalize": ["nfc"]}, "caf\u00e9", "cafe\u0301"),
    ({}, "caf\u00e9", "cafe\u0301"),
    ({"normalize": ["collapse-whitespace"]}, "a b", "a \t b"),
    ({"tolerance": 0.01}, 3.14, "3.15"),
    ({"tolerance": 0.01}, 3.14, "3.16"),
    ({}, "Paris", "Paris\n"),
]


def _row(number: int, oracle: str, expected: Any, **case: Any) -> dict[str, Any]:
    row_id = f"row-{number}"
    return {
        "id": row_id,
        "input": row_id,
        "expected": expected,
        "metadata": {
            "case": {
                "caseId": row_id,
                "oracleType": oracle,
                "expectedBehavior": "b",
                "provenance": "expert-authored",
                "evaluator": "exact-or-programmatic",
                **case,
            }
        },
    }


def test_promptfoo_gives_the_verdicts_grade_gives(promptfoo: str, tmp_path: Path) -> None:
    rows, outputs = [], []
    for check, output, _ in CASES:
        if isinstance(output, str) and check["type"] != "json-schema":
            rows.append(_row(len(rows), "acceptable-set", {"satisfies": check}))
            outputs.append(output)
    for case, expected, output in COMPARED:
        rows.append(_row(len(rows), "reference-answer", expected, **case))
        outputs.append(output)
    gate = [{"type": "not", "check": {"type": "contains", "value": "sorry"}}]
    rows.append(_row(len(rows), "reference-answer", "ok", checks=gate))
    outputs.append("ok")
    rows.append(_row(len(rows), "reference-answer", "sorry", checks=gate))
    outputs.append("sorry")
    source = tmp_path / "set.json"
    source.write_text(
        json.dumps({"schemaVersion": "blueprint.eval-set/v1", "name": "checks", "rows": rows})
    )
    target = tmp_path / "tests.yaml"
    convert(source, target, ConvertOptions(target_format="promptfoo"))
    tests = read_yaml(target)
    assert len(tests) == len(rows)
    for test, output in zip(tests, outputs, strict=True):
        # promptfoo trims vars, so the echo provider cannot return a trailing newline: the
        # output the assertions see is the recorded text itself, as JSON through a transform
        test["vars"] = {**test["vars"], "recorded": json.dumps(output)}
        test["options"] = {
            **test.get("options", {}),
            "transform": "JSON.parse(context.vars.recorded)",
        }
    config = tmp_path / "promptfooconfig.yaml"
    config.write_bytes(
        dump_yaml({"prompts": ["{{recorded}}"], "providers": ["echo"], "tests": tests})
    )
    results = {item["testIdx"]: item for item in promptfoo_eval(promptfoo, config)["results"]}
    assert len(results) == len(rows)
    for index, (row, output) in enumerate(zip(rows, outputs, strict=True)):
        verdict = grade_row(row, Recorded(id=row["id"], output=output, has_output=True))
        found = results[index]
        where = (row["expected"], row["metadata"]["case"], output, found.get("gradingResult"))
        assert found["success"] == (verdict.verdict == "pass"), where
