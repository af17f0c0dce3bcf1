"""apollia-os regex assertions on the result as regex checks, and checks as regex assertions:
only the patterns Rust's regex crate and Blueprint's dialect read the same cross."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.core.regex import compile_regex
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.formats.apollia_checks import check_patterns, regex_check, translate
from blueprint.grading.semantics import Recorded, grade_row
from conftest import row

CODEC = REGISTRY["apollia"]
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "suite"}

SUITE = """name = "checks"

[[tasks]]
id = "order-number"
prompt = "Place the order"

  [[tasks.assertions]]
  type = "regex"
  on = "result"
  pattern = "^order [A-Z]-[0-9]+$"

  [[tasks.assertions]]
  type = "regex"
  on = "result"
  pattern = "thanks"

[[tasks]]
id = "answer-and-gate"
prompt = "Say it"

  [[tasks.assertions]]
  type = "regex"
  on = "result"
  pattern = "^done$"

  [[tasks.assertions]]
  type = "regex"
  on = "result"
  pattern = "(?:done|finished)"

[[tasks]]
id = "any-char"
prompt = "Two letters"

  [[tasks.assertions]]
  type = "regex"
  on = "result"
  pattern = "^a.b$"

[[tasks]]
id = "unicode-digit"
prompt = "A number"

  [[tasks.assertions]]
  type = "regex"
  on = "result"
  pattern = "\\\\d+"

  [[tasks.assertions]]
  type = "regex"
  on = "stdout"
  pattern = "ok"
"""


def rows_of(path: Path) -> dict[str, dict[str, Any]]:
    return {data["id"]: data for data in data_rows(CODEC.open(path))}


def passes(data: dict[str, Any], output: str) -> bool:
    verdict = grade_row(data, Recorded(id=data["id"], output=output, has_output=True))
    assert verdict.verdict in ("pass", "fail"), verdict
    return verdict.verdict == "pass"


def test_regex_assertions_on_the_result_import_as_checks(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE, encoding="utf-8")
    rows = rows_of(path)
    order = rows["order-number"]
    assert order["metadata"]["case"]["oracleType"] == "acceptable-set"
    assert order["expected"] == {
        "satisfies": {
            "type": "all",
            "checks": [
                {"type": "regex", "pattern": "^order [A-Z]-[0-9]+$"},
                {"type": "regex", "pattern": "thanks"},
            ],
        }
    }
    assert passes(order, "order B-12") is False  # no thanks, so apollia-os fails it too
    gated = rows["answer-and-gate"]
    assert gated["expected"] == "done"
    gate = [{"type": "regex", "pattern": "(?:done|finished)"}]
    assert gated["metadata"]["case"]["checks"] == gate
    # Rust's . matches a carriage return, JavaScript's does not: the check says Rust's
    any_char = rows["any-char"]
    assert any_char["expected"] == {"satisfies": {"type": "regex", "pattern": "^a[^\\n]b$"}}
    assert passes(any_char, "a\rb") and not passes(any_char, "a\nb")
    # Rust's \d is any Unicode digit, Blueprint's ASCII: kept as written, not a check
    digit = rows["unicode-digit"]
    assert digit["metadata"]["case"]["oracleType"] == "expected-behavior-only"
    assert "checks" not in digit["metadata"]["case"]


def test_a_suite_with_checks_goes_back_as_it_came(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE, encoding="utf-8")
    canonical, back = tmp_path / "set.json", tmp_path / "back.toml"
    convert(path, canonical, ConvertOptions(source_format="apollia"))
    convert(canonical, back, ConvertOptions(target_format="apollia"))
    assert back.read_text(encoding="utf-8") == SUITE


def test_checks_export_as_regex_assertions_on_the_result(tmp_path: Path) -> None:
    def acceptable(row_id: str, check: dict[str, Any], **case: Any) -> dict[str, Any]:
        return row(row_id, "acceptable-set", expected={"satisfies": check}, **case)

    rows = [
        acceptable("regex", {"type": "regex", "pattern": "^\\d{3}-\\w+$"}),
        acceptable("dotall", {"type": "regex", "pattern": "a.b", "flags": "s"}),
        acceptable("contains", {"type": "contains", "value": "1.5 (net)"}),
        acceptable("both", {"type": "contains-all", "values": ["a", "b"]}),
        acceptable("ignoring-case", {"type": "regex", "pattern": "yes", "flags": "i"}),
        acceptable(
            "partly",
            {
                "type": "all",
                "checks": [
                    {"type": "starts-with", "value": "Dear"},
                    {"type": "not", "check": {"type": "contains", "value": "sorry"}},
                ],
            },
        ),
        row(
            "gated",
            "reference-answer",
            expected="done",
            checks=[
                {"type": "ends-with", "value": "done"},
                {"type": "length", "max": 10},
            ],
        ),
    ]
    path = tmp_path / "out.toml"
    result = CODEC.write(HEADER, iter(rows), path, WriteOptions(force=True))
    tasks = {task["id"]: task for task in tomllib.loads(path.read_text("utf-8"))["tasks"]}

    def patterns(task_id: str) -> list[str]:
        assert all(a["on"] == "result" for a in tasks[task_id]["assertions"])
        return [assertion["pattern"] for assertion in tasks[task_id]["assertions"]]

    assert patterns("regex") == ["^[0-9]{3}-[0-9A-Za-z_]+$"]
    assert patterns("dotall") == ["a(?s:.)b"]
    assert patterns("contains") == ["1\\.5 \\(net\\)"]
    assert patterns("both") == ["a", "b"]
    assert patterns("partly") == ["^Dear"]
    assert patterns("gated") == ["^done$", "done$"]
    assert "ignoring-case" not in tasks  # Rust's (?i) folds case otherwise: left out
    weakened: dict[str, set[str]] = {}
    for item in result.lossy:
        if item.kind == "weakened":
            weakened.setdefault(item.field, set()).update(item.row_ids)
    assert weakened.get("expected.satisfies") == {"partly"}
    assert weakened.get("metadata.case.checks") == {"gated"}


@pytest.mark.parametrize(
    "pattern",
    [
        "^order [A-Z]-[0-9]+$",
        "a+?b*c{2,3}",
        "(x|y)z",
        "[^a-c\\-]",
        "\\$\\.\\^",
        "colou?r\\n",
    ],
)
def test_shared_patterns_read_the_same_both_ways(pattern: str) -> None:
    assert translate(pattern, "rust") == pattern
    assert translate(pattern, "js") == pattern
    compile_regex(pattern)  # and Blueprint runs it


@pytest.mark.parametrize(
    "pattern",
    ["\\d", "\\w+", "\\bword\\b", "(?i)yes", "(?P<n>a)", "[a[b]]", "[a&&b]", "\\pL", "a{,3}"],
)
def test_rust_patterns_read_otherwise_are_not_checks(pattern: str) -> None:
    assert regex_check(pattern) is None


@pytest.mark.parametrize(
    "check",
    [
        {"type": "regex", "pattern": "a", "flags": "m"},
        {"type": "regex", "pattern": "\\s"},
        {"type": "regex", "pattern": "[\\w-x]"},
        {"type": "equals", "value": "a", "normalize": ["trim"]},
        {"type": "not", "check": {"type": "contains", "value": "a"}},
        {"type": "length", "max": 3},
        {"type": "any", "checks": [{"type": "contains", "value": "a"}]},
    ],
)
def test_checks_with_no_shared_pattern_have_none(check: dict[str, Any]) -> None:
    assert check_patterns(check) is None
