"""blueprint.reports.summary: one pass of counters, concern coverage, retired cases, exclusions."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from blueprint.convert import ConvertOptions, convert
from blueprint.core.errors import EveryRowExcluded
from blueprint.formats import REGISTRY
from blueprint.reports.summary import NONE, SummaryOptions, summarize
from conftest import EXAMPLES, document, row, write_json

VENDORS = [name for name, codec in REGISTRY.items() if not codec.lossless and codec.can_write]


def families(*specs: tuple[str, str, str | None]) -> list[dict[str, object]]:
    return [
        {"id": name, "oracleType": oracle, **({"evaluator": evaluator} if evaluator else {})}
        for name, oracle, evaluator in specs
    ]


def test_the_bundled_example_is_counted_by_every_dimension() -> None:
    data = summarize(EXAMPLES / "support-refunds.json", SummaryOptions(exports=False)).to_json()
    assert data["rows"] == 8 and data["valid"]
    assert data["byOracleType"] == {
        "reference-answer": 2,
        "acceptable-set": 2,
        "rubric": 1,
        "expected-tool-calls": 1,
        "expected-final-state": 1,
        "expected-behavior-only": 1,
    }
    assert sum(data["byEvaluator"].values()) == 8
    assert data["byEvaluator"]["exact-or-programmatic"] == 4
    assert data["byFamily"]["policy-lookup"] == 2
    assert data["bySplit"] == {NONE: 8}
    assert data["provenanceMix"] == {"gold": 8, "starter": 0, "imported": 0}
    assert data["retired"]["count"] == 1
    assert [item["id"] for item in data["retired"]["rows"]] == ["cs-escalate-chargeback-threat"]
    assert data["uncoveredConcerns"] == ["customer-harm", "missed-escalation"]
    coverage = {item["concern"]: item["rows"] for item in data["concerns"]}
    assert coverage["policy-drift"] == 1
    assert data["exports"] is None


def test_splits_and_the_evaluator_a_family_gives(tmp_path: Path) -> None:
    rows = [
        row("a", caseFamily="lookup"),
        row("b", caseFamily="lookup", evaluator="llm-judge"),
        row("c"),
    ]
    rows[0]["metadata"]["split"] = "dev"
    rows[1]["metadata"]["split"] = "test"
    header = {"caseFamilies": families(("lookup", "reference-answer", "exact-or-programmatic"))}
    path = write_json(tmp_path / "set.json", document(*rows, **header))
    summary = summarize(path, SummaryOptions(exports=False))
    data = summary.to_json()
    assert data["bySplit"] == {"dev": 1, "test": 1, NONE: 1}
    # a: inherits its family's; b: its own; c: none named
    assert data["byEvaluator"] == {"exact-or-programmatic": 1, "llm-judge": 1, NONE: 1}
    assert data["byFamily"] == {"lookup": 2, NONE: 1}
    assert [f["id"] for f in data["families"]] == ["lookup", None]


def test_provenance_mix_reviewed_and_derived(tmp_path: Path) -> None:
    reviewed = row("r", extensions={"blueprint-review": {"reviewer": "A. Reviewer"}})
    derived = row(
        "d",
        provenance="imported",
        extensions={"blueprint-import": {"format": "promptfoo", "derived": {"oracleType": "x"}}},
    )
    rows = [row("s", provenance="starter-example"), reviewed, derived]
    rows.append(row("o", provenance="overlay-starter-needs-expert-validation"))
    path = write_json(tmp_path / "set.json", document(*rows))
    data = summarize(path, SummaryOptions(exports=False)).to_json()
    assert data["provenanceMix"] == {"gold": 1, "starter": 2, "imported": 1}
    assert data["reviewed"] == 1
    assert data["derivedToConfirm"] == 1
    assert data["byProvenance"]["starter-example"] == 1


def test_concerns_named_by_a_family_and_covered_by_rows(tmp_path: Path) -> None:
    header = {"caseFamilies": [{"id": "f", "oracleType": "rubric", "linkedConcerns": ["tone"]}]}
    rows = [
        row("a", "rubric", caseFamily="f", linkedConcerns=["harm", "harm"]),
        row("b", linkedConcerns=["harm"]),
    ]
    path = write_json(tmp_path / "set.json", document(*rows, **header))
    data = summarize(path, SummaryOptions(exports=False)).to_json()
    assert data["concerns"] == [
        {"concern": "harm", "rows": 2, "families": []},
        {"concern": "tone", "rows": 0, "families": ["f"]},
    ]
    assert data["uncoveredConcerns"] == ["tone"]


def test_rows_of_a_family_the_set_does_not_define(tmp_path: Path) -> None:
    header = {"caseFamilies": families(("known", "reference-answer", None))}
    rows = [row("a", caseFamily="known"), row("b", caseFamily="stray")]
    path = write_json(tmp_path / "set.json", document(*rows, **header))
    summary = summarize(path, SummaryOptions(exports=False))
    assert [(f.id, f.declared, f.rows) for f in summary.families] == [
        ("known", True, 1),
        ("stray", False, 1),
    ]
    assert not summary.valid  # unknown-case-family is an error


@pytest.mark.parametrize("example", ["support-refunds", "refunds-dev", "refunds-test"])
def test_exclusions_are_what_convert_reports(example: str, tmp_path: Path) -> None:
    source = EXAMPLES / f"{example}.json"
    summary = summarize(source)
    checks = {check.format: check for check in summary.exports}
    assert sorted(checks) == sorted(VENDORS)
    for name in VENDORS:
        extension = REGISTRY[name].extensions[0] if REGISTRY[name].extensions else ""
        try:
            result = convert(
                source, tmp_path / f"{name}{extension}", ConvertOptions(target_format=name)
            )
        except EveryRowExcluded as refused:  # convert writes nothing, and says what it left out
            lossy, written = refused.lossy, 0
        else:
            lossy, written = result.export.lossy, result.export.rows
        excluded = [item for item in lossy if item.kind == "excluded"]
        assert checks[name].refused is None
        assert checks[name].excluded == excluded, name
        assert checks[name].written == written


def test_an_invalid_set_has_every_export_refused() -> None:
    summary = summarize(EXAMPLES / "broken.json")
    assert not summary.valid and summary.errors == 4
    assert all(check.refused and check.written is None for check in summary.exports)


@dataclass(frozen=True)
class Status:
    status: str


def test_judge_status_is_a_seam_defaulting_to_missing(tmp_path: Path) -> None:
    header = {
        "caseFamilies": families(
            ("judged", "rubric", "llm-judge"),
            ("also-judged", "reference-answer", None),
            ("exact", "reference-answer", "exact-or-programmatic"),
        )
    }
    rows = [
        row("a", "rubric", caseFamily="judged", evaluator="llm-judge"),
        row("b", caseFamily="also-judged", evaluator="llm-judge"),
        row("c", caseFamily="exact"),
    ]
    path = write_json(tmp_path / "set.json", document(*rows, **header))
    plain = summarize(path, SummaryOptions(exports=False))
    assert [(f.id, f.judge_status, f.judge_label) for f in plain.families] == [
        ("judged", "missing", "not validated"),
        ("also-judged", "missing", "not validated"),
        ("exact", "not-needed", "not needed"),
    ]
    given = summarize(
        path, SummaryOptions(exports=False, judge_status={"judged": Status("validated")})
    )
    assert [f.judge_status for f in given.families] == ["validated", "missing", "not-needed"]
    assert given.to_json()["families"][0]["judgeValidation"]["status"] == "validated"


def test_judge_status_comes_from_the_reports_the_set_points_at(tmp_path: Path) -> None:
    for name in ("support-judged.json", "support-judged.judge.json"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    summary = summarize(tmp_path / "support-judged.json", SummaryOptions(exports=False))
    assert {f.id: f.judge_status for f in summary.families} == {
        "policy-explanations": "validated",
        "tone-under-pressure": "failed",
    }
    # the same report named by the project configuration instead of the set
    set_path = tmp_path / "support-judged.json"
    document_ = json.loads(set_path.read_text(encoding="utf-8"))
    document_.pop("judgeValidation", None)
    for family in document_.get("caseFamilies", []):
        family.pop("judgeValidation", None)
    set_path.write_text(json.dumps(document_), encoding="utf-8")
    unreferenced = summarize(set_path, SummaryOptions(exports=False))
    assert {f.judge_status for f in unreferenced.families} == {"missing"}
    configured = summarize(
        set_path,
        SummaryOptions(exports=False, judge_reports=(tmp_path / "support-judged.judge.json",)),
    )
    assert {f.id: f.judge_status for f in configured.families} == {
        "policy-explanations": "validated",
        "tone-under-pressure": "failed",
    }


def test_rows_kept_for_a_page_are_capped_per_family(tmp_path: Path) -> None:
    header = {"caseFamilies": families(("f", "reference-answer", None))}
    rows = [row(f"r{i}", caseFamily="f") for i in range(7)]
    path = write_json(tmp_path / "set.json", document(*rows, **header))
    summary = summarize(path, SummaryOptions(exports=False, rows_per_family=3))
    family = summary.families[0]
    assert family.rows == 7
    assert [excerpt.id for excerpt in family.excerpts] == ["r0", "r1", "r2"]


def test_rows_that_break_the_schema_are_still_counted(tmp_path: Path) -> None:
    rows = [row("a"), {"id": 3, "metadata": "nope"}, "not an object"]
    path = write_json(tmp_path / "set.json", document(*rows))
    data = summarize(path, SummaryOptions(exports=False)).to_json()
    assert data["rows"] == 3 and not data["valid"]
    assert sum(data["byOracleType"].values()) == 3
    assert data["byOracleType"][NONE] == 2


@pytest.mark.parametrize("extension", [".csv", ".jsonl"])
def test_every_canonical_format_gives_the_same_summary(extension: str, tmp_path: Path) -> None:
    source = EXAMPLES / "support-refunds.json"
    copy = tmp_path / f"set{extension}"
    convert(source, copy)
    first = summarize(source, SummaryOptions(exports=False)).to_json()
    again = summarize(copy, SummaryOptions(exports=False)).to_json()
    for data in (first, again):
        data.pop("source")
        data.pop("format")
    assert again == first


def test_exports_that_would_leave_out_every_row_still_list_what_they_leave_out(
    tmp_path: Path,
) -> None:
    human = [
        row("behaviour-only", "expected-behavior-only"),
        row("expert", evaluator="human-expert", reviewerExpertise="refund policy"),
    ]
    summary = summarize(write_json(tmp_path / "set.json", document(*human)))
    assert sorted(check.format for check in summary.exports) == sorted(VENDORS)
    for check in summary.exports:
        assert check.refused is None, check.format
        assert (check.written, check.left_out) == (0, 2), check.format
