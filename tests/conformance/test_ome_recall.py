"""ome's own recall eval (``ome eval recall --suite``, npm package oh-my-experience) grades
our exports offline, and passes exactly the cases the canonical acceptable sets pass.

``BLUEPRINT_OME`` names the ``ome`` executable (else it is looked up on PATH).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import QUIET_ENV, required

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.formats import REGISTRY
from blueprint.formats.ome import forbidden_card, forbidden_text
from blueprint.grading.semantics import Recorded, grade_row
from conftest import FIXTURES, document, row, write_json

SUITES = FIXTURES / "native" / "ome" / "public" / "ome-tests-fixtures-eval"

#: prompts of ome's held-out suite, and the one card (or none) ome recalls for each
INVOICE = "财务需要导出本月发票台账，给运营下载逗号分隔文件，不是只看页面汇总。"
NO_HIT = (
    "Summarize the quarterly revenue forecast for the board and explain the assumptions"
    " behind next year's growth target."
)


@pytest.fixture
def ome() -> str:
    executable = os.environ.get("BLUEPRINT_OME") or shutil.which("ome")
    if not executable or not Path(executable).exists():
        if required():
            pytest.fail("ome is not installed but conformance tests are required")
        pytest.skip("ome is not installed (npm package oh-my-experience; set BLUEPRINT_OME)")
    return str(executable)


def recall(ome: str, suite: Path) -> dict[str, Any]:
    """ome's report for a suite, run offline in a scratch home and temporary folder."""
    scratch = suite.parent / ".ome-home"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, **QUIET_ENV, "HOME": str(scratch), "TMPDIR": str(scratch)}
    completed = subprocess.run(
        [ome, "eval", "recall", "--suite", str(suite), "--json"],
        cwd=suite.parent,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    output = completed.stdout[-3000:] + completed.stderr[-3000:]
    assert completed.returncode in (0, 1), output
    report = json.loads(completed.stdout)
    assert report["isolated"] is True, output  # the cards came from the suite's file
    return report


def graded_pass(data: dict[str, Any], returned: list[str]) -> bool:
    """Whether ``blueprint grade`` passes a row whose output is the cards ome returned."""
    verdict = grade_row(data, Recorded(id=data["id"], output=returned, has_output=True))
    assert verdict.verdict in ("pass", "fail"), verdict
    return verdict.verdict == "pass"


def canonical_pass(data: dict[str, Any], returned: list[str]) -> bool:
    """Whether a row accepts the cards ome returned: grade's verdict for a set defined by a
    check (an imported case's items check); for a set of card lists, the returned cards, in
    any order, are one acceptable answer; and none of them is forbidden."""
    expected = data["expected"]
    behaviours = data["metadata"]["case"].get("unacceptableBehavior") or []
    forbidden = {card for text in behaviours if (card := forbidden_card(text))}
    if set(returned) & forbidden:
        return False
    if isinstance(expected, dict) and "satisfies" in expected:
        return graded_pass(data, returned)
    answers = expected["acceptable"] if isinstance(expected, dict) else [expected]
    sets = [{answer} if isinstance(answer, str) else set(answer) for answer in answers]
    return set(returned) in sets


def test_ome_passes_its_own_suite_written_back_by_us(ome: str, tmp_path: Path) -> None:
    canonical, suite = tmp_path / "set.json", tmp_path / "held-out.json"
    convert(SUITES / "held-out.json", canonical)
    convert(canonical, suite, ConvertOptions(target_format="ome"))
    shutil.copy(SUITES / "held-out.cards.json", tmp_path / "held-out.cards.json")
    report = recall(ome, suite)
    assert report["ok"] is True
    rows = {data["id"]: data for data in data_rows(REGISTRY["json"].open(canonical))}
    for case in report["cases"]:
        assert canonical_pass(rows[case["id"]], case["returnedCards"]) is case["passed"]


def test_grade_passes_the_cases_ome_passes_in_any_order(ome: str, tmp_path: Path) -> None:
    """An imported case is ome's rule as an items check: grade gives ome's verdict on the
    cards ome returned, in ome's order and reversed, for cases that pass and fail, with up
    to a dozen allowed extra cards."""
    invoice, payroll = "invoice-csv-export", "payroll-cutoff-lock"
    extras = [invoice, *(f"unused-{n}" for n in range(11))]
    cases = [
        {"id": "exact", "prompt": INVOICE, "expectedCards": [invoice]},
        {"id": "wide", "prompt": INVOICE, "expectedCards": [], "allowedExtraCards": extras},
        {"id": "missing", "prompt": INVOICE, "expectedCards": [invoice, payroll]},
        {"id": "extra", "prompt": INVOICE, "expectedCards": []},
        {"id": "forbidden", "prompt": INVOICE, "allowedExtraCards": [invoice],
         "unexpectedCards": [invoice]},
        {"id": "abstain", "prompt": NO_HIT, "expectedCards": [], "expectNoMatches": True},
    ]  # fmt: skip
    suite = write_json(
        tmp_path / "suite.json",
        {"name": "any-order", "experiencesFile": "./held-out.cards.json", "cases": cases},
    )
    shutil.copy(SUITES / "held-out.cards.json", tmp_path / "held-out.cards.json")
    report = recall(ome, suite)
    rows = {data["id"]: data for data in data_rows(REGISTRY["ome"].open(suite))}
    assert len(rows["wide"]["expected"]["satisfies"]["allowed"]) == len(extras)
    verdicts = {}
    for case in report["cases"]:
        returned = case["returnedCards"]
        assert graded_pass(rows[case["id"]], returned) is case["passed"]
        assert graded_pass(rows[case["id"]], returned[::-1]) is case["passed"]
        verdicts[case["id"]] = case["passed"]
    assert verdicts == {
        "exact": True,
        "wide": True,
        "missing": False,
        "extra": False,
        "forbidden": False,
        "abstain": True,
    }


def test_ome_grades_our_cards_as_the_acceptable_sets_say(ome: str, tmp_path: Path) -> None:
    invoice = "invoice-csv-export"

    def case(row_id: str, prompt: str, expected: Any, oracle: str = "acceptable-set", **more):
        data = row(row_id, oracle, expected=expected, **more)
        data["input"] = prompt
        return data

    rows = [
        case("exact", INVOICE, {"acceptable": [[invoice]]}),
        case("missing-one", INVOICE, {"acceptable": [[invoice, "payroll-cutoff-lock"]]}),
        case("optional-only", INVOICE, {"acceptable": [[], [invoice]]}),
        case("required-absent", INVOICE, {"acceptable": [["payroll-cutoff-lock"]]}),
        case(
            "extra-allowed",
            INVOICE,
            {"acceptable": [["payroll-cutoff-lock"], ["payroll-cutoff-lock", invoice]]},
        ),
        case("abstain-but-hit", INVOICE, {"acceptable": [[]]}),
        case("reference", INVOICE, [invoice], "reference-answer"),
        case("one-card-answer", INVOICE, {"acceptable": [invoice]}),
        case(
            "optional-but-forbidden",
            INVOICE,
            {"acceptable": [[], [invoice]]},
            unacceptableBehavior=[forbidden_text(invoice)],
        ),
        case("abstain", NO_HIT, {"acceptable": [[]]}),
        case("expects-a-card", NO_HIT, {"acceptable": [["refund-approval-audit"]]}),
        case("optional-absent", NO_HIT, {"acceptable": [[], ["refund-approval-audit"]]}),
        case("reference-none", NO_HIT, [], "reference-answer"),
    ]
    source = write_json(tmp_path / "set.json", document(*rows, name="held-out"))
    suite = tmp_path / "suite.json"
    result = convert(source, suite, ConvertOptions(target_format="ome"))
    assert result.export.rows == len(rows)
    shutil.copy(SUITES / "held-out.cards.json", tmp_path / "held-out.cards.json")
    report = recall(ome, suite)
    by_id = {data["id"]: data for data in rows}
    passed = {}
    for graded in report["cases"]:
        assert canonical_pass(by_id[graded["id"]], graded["returnedCards"]) is graded["passed"]
        passed[graded["id"]] = graded["passed"]
    assert {row_id for row_id, ok in passed.items() if ok} == {
        "exact",
        "optional-only",
        "reference",
        "one-card-answer",
        "abstain",
        "optional-absent",
        "reference-none",
    }
