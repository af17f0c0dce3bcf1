"""Judge validation: labels files, the statistics against published worked examples, the
verdict, and how a report settles (or fails to settle) the llm-judge condition."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from blueprint.reports import judging
from blueprint.reports.judging import (
    PASS_FAIL,
    BootstrapOptions,
    JudgeStatus,
    LabelsError,
    Scale,
    Thresholds,
    build_report,
    cohen_kappa,
    index_families,
    judge_status,
    krippendorff_alpha,
    read_labels,
    read_set_families,
    statistics,
)
from blueprint.validation.validate import validate_file
from conftest import document, row, write_json

FAST = BootstrapOptions(resamples=200)


# --- published worked examples -----------------------------------------------------------


def test_cohen_kappa_textbook_yes_no_example() -> None:
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15: po 0.7, pe 0.5
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert round(cohen_kappa(a, b, PASS_FAIL) or 0, 3) == 0.400


def test_quadratic_weighted_kappa_published_examples() -> None:
    # Maple's EssayTools QuadraticWeightedKappa examples (scores 1..10): 0.758620..., 0.438095...
    scale = Scale("ordinal", 1, 10)
    first = [9, 7, 8, 7, 6, 8, 3, 5, 10]
    assert round(cohen_kappa(first, [8, 8, 6, 6, 7, 6, 1, 4, 8], scale) or 0, 3) == 0.759
    assert round(cohen_kappa(first, [3, 5, 6, 6, 7, 6, 1, 4, 8], scale) or 0, 3) == 0.438


#: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
#: observers, twelve units, missing values as None
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _units() -> list[dict[str, int]]:
    return [
        {rater: values[unit] for rater, values in KRIPPENDORFF_2011.items() if values[unit]}
        for unit in range(12)
    ]


def test_krippendorff_alpha_worked_example() -> None:
    raters = list(KRIPPENDORFF_2011)
    nominal = krippendorff_alpha(_units(), raters, Scale("pass-fail", 1, 5))
    ordinal = krippendorff_alpha(_units(), raters, Scale("ordinal", 1, 5))
    assert round(nominal or 0, 3) == 0.743
    assert round(ordinal or 0, 3) == 0.815


def test_krippendorff_worked_example_data_gives_the_interval_value_too() -> None:
    # the transcription of the data is right: the library's interval alpha is the paper's
    import krippendorff

    data = [[math.nan if v is None else v for v in values] for values in KRIPPENDORFF_2011.values()]
    assert (
        round(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), 3)
        == 0.849
    )


@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=2, max_size=40),
    st.booleans(),
)
def test_vectorized_kappa_equals_scikit_learn(pairs: list[tuple[int, int]], ordinal: bool) -> None:
    scale = Scale("ordinal", 1, 5) if ordinal else Scale("pass-fail", 1, 5)
    human = np.array([[a for a, _ in pairs]])
    judge = np.array([[b for _, b in pairs]])
    expected = cohen_kappa_score(
        human[0], judge[0], labels=scale.values, weights="quadratic" if ordinal else None
    )
    found = statistics._vectorized_kappa(human, judge, scale)[0]
    single = statistics.cohen_kappa(list(human[0]), list(judge[0]), scale)
    if math.isnan(expected):
        assert found == 1.0  # one label throughout on both sides
        assert single is None  # and kappa itself is undefined
    else:
        assert found == pytest.approx(expected, abs=1e-9)
        assert single == pytest.approx(expected, abs=1e-9)
    assert statistics.confusion(list(human[0]), list(judge[0]), scale) == (
        confusion_matrix(human[0], judge[0], labels=scale.values).tolist()
    )


# --- labels files ----------------------------------------------------------------------------


def test_wide_csv_with_raters(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("caseId,human.alice,human.bob,judge,notes\na,pass,fail,pass,x\nb,fail,,FAIL,\n")
    labels = read_labels(path)
    assert labels.scale == PASS_FAIL and labels.raters == ("alice", "bob")
    assert [(c.case_id, c.humans, c.judge, c.line) for c in labels.cases] == [
        ("a", {"alice": 1, "bob": 0}, 1, 2),
        ("b", {"alice": 0}, 0, 3),
    ]
    # two raters split: the lower median, the stricter label
    assert labels.cases[0].reference() == 0


def test_long_csv_and_jsonl_layouts(tmp_path: Path) -> None:
    long = tmp_path / "long.csv"
    long.write_text("caseId,rater,label\na,alice,4\na,judge,5\nb,alice,2\nb,bob,3\nb,judge,2\n")
    labels = read_labels(long)
    assert labels.layout == "long" and labels.scale == Scale("ordinal", 2, 5)
    assert labels.cases[1].humans == {"alice": 2, "bob": 3}
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(
        '{"caseId": "a", "human": {"alice": true, "bob": false}, "judge": "pass"}\n'
        '{"caseId": "b", "human": {"alice": false}, "judge": false}\n'
    )
    labels = read_labels(jsonl)
    assert [(c.humans, c.judge) for c in labels.cases] == [
        ({"alice": 1, "bob": 0}, 1),
        ({"alice": 0}, 0),
    ]
    assert read_labels(long, scale=(1, 5)).scale == Scale("ordinal", 1, 5)


@pytest.mark.parametrize(
    "text",
    [
        "caseId,human,judge\na,pass,4\n",  # mixed scales
        "caseId,human,judge\na,pass,\n",  # no judge label
        "caseId,human,judge\na,,pass\n",  # no human label
        "caseId,human,judge\na,pass,pass\na,fail,fail\n",  # labelled twice
        "caseId,human,judge\na,maybe,pass\n",  # not a label
        "caseId,human\na,pass\n",  # no judge column
        "caseId,judge\na,pass\n",  # no human column
        "caseId,rater,label\na,judge,pass\na,judge,fail\n",  # the judge twice
        "caseId,human,judge\n",  # nothing
    ],
)
def test_unusable_labels_are_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(LabelsError) as refused:
        read_labels(path)
    assert refused.value.exit_code == 2 and str(path) in str(refused.value)


def test_scale_outside_range_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("caseId,human,judge\na,6,5\n")
    with pytest.raises(LabelsError):
        read_labels(path, scale=(1, 5))


# --- the report and its verdict --------------------------------------------------------------


def judged_set(size: int = 40, family: str = "tone", **header: Any) -> dict[str, Any]:
    rows = [
        row(
            f"t{n:02d}",
            "rubric",
            evaluator="llm-judge",
            caseFamily=family,
            evaluationCriteria=["polite"],
        )
        for n in range(size)
    ]
    rows.append(row("ref", "reference-answer", evaluator="exact-or-programmatic"))
    families = [{"id": family, "oracleType": "rubric", "evaluator": "llm-judge"}]
    return document(*rows, caseFamilies=families, **header)


def labels_csv(path: Path, size: int, disagree: int, ids: list[str] | None = None) -> Path:
    """Humans alternate pass and fail; the judge flips ``disagree`` labels, half each way."""
    lines = ["caseId,human,judge"]
    ids = ids or [f"t{n:02d}" for n in range(size)]
    for n, case_id in enumerate(ids):
        human = "pass" if n % 2 else "fail"
        flipped = n < disagree
        judge = ("fail" if human == "pass" else "pass") if flipped else human
        lines.append(f"{case_id},{human},{judge}")
    path.write_text("\n".join(lines) + "\n")
    return path


def report_for(
    tmp_path: Path, set_doc: dict[str, Any], disagree: int, size: int = 40, **kw: Any
) -> dict[str, Any]:
    set_path = write_json(tmp_path / "set.json", set_doc)
    labels = read_labels(labels_csv(tmp_path / "labels.csv", size, disagree))
    return build_report(
        labels,
        read_set_families(set_path),
        set_path=str(set_path),
        labels_path="labels.csv",
        bootstrap=FAST,
        **kw,
    )


def test_95_percent_agreement_passes(tmp_path: Path) -> None:
    report = report_for(tmp_path, judged_set(), disagree=2)
    (entry,) = report["families"]
    assert entry["family"] == "tone" and entry["rows"] == 40 and entry["labelled"] == 40
    assert entry["agreement"]["value"] == 0.95
    assert entry["kappa"]["value"] == 0.9
    assert entry["bias"]["value"] == 0.0
    assert entry["confusion"]["matrix"] == [[19, 1], [1, 19]]
    low, high = entry["agreement"]["ci"]
    assert low <= 0.95 <= high
    assert entry["verdict"] == "pass" and report["verdict"] == "pass"
    assert entry["caseIds"] == [f"t{n:02d}" for n in range(40)]
    assert entry["rowsHash"].startswith("sha256:")


def test_60_percent_agreement_fails(tmp_path: Path) -> None:
    report = report_for(tmp_path, judged_set(), disagree=16)
    (entry,) = report["families"]
    assert entry["agreement"]["value"] == 0.6
    assert entry["kappa"]["value"] == pytest.approx(0.2)
    assert entry["verdict"] == "fail" and report["verdict"] == "fail"


def test_too_few_labels_is_insufficient(tmp_path: Path) -> None:
    report = report_for(tmp_path, judged_set(), disagree=0, size=20)
    (entry,) = report["families"]
    assert (entry["labelled"], entry["required"], entry["verdict"]) == (20, 30, "insufficient")
    # a family smaller than the minimum needs every row labelled, and no more
    small = report_for(tmp_path, judged_set(size=12), disagree=0, size=12)
    assert small["families"][0]["required"] == 12
    assert small["verdict"] == "pass"
    fraction = report_for(
        tmp_path, judged_set(), disagree=0, size=40, thresholds=Thresholds(min_fraction=1.0)
    )
    assert fraction["families"][0]["verdict"] == "pass"


def test_bias_direction_and_threshold(tmp_path: Path) -> None:
    lines = ["caseId,human,judge"] + [
        f"t{n:02d},{'pass' if n % 2 else 'fail'},{'pass' if n % 2 or n < 8 else 'fail'}"
        for n in range(40)
    ]
    (tmp_path / "labels.csv").write_text("\n".join(lines) + "\n")
    set_path = write_json(tmp_path / "set.json", judged_set())
    report = build_report(
        read_labels(tmp_path / "labels.csv"),
        read_set_families(set_path),
        set_path="set.json",
        labels_path="labels.csv",
        bootstrap=FAST,
    )
    bias = report["families"][0]["bias"]
    assert (bias["value"], bias["direction"]) == (0.1, "lenient")
    assert report["families"][0]["verdict"] == "pass"  # at most 0.1 either way


def test_unknown_case_ids_make_the_labels_unusable(tmp_path: Path) -> None:
    set_path = write_json(tmp_path / "set.json", judged_set())
    ids = [f"t{n:02d}" for n in range(39)] + ["nope"]
    labels = read_labels(labels_csv(tmp_path / "labels.csv", 40, 0, ids))
    with pytest.raises(LabelsError, match="nope"):
        build_report(
            labels, read_set_families(set_path), set_path="s", labels_path="l", bootstrap=FAST
        )


def test_rows_not_graded_by_the_judge_are_listed(tmp_path: Path) -> None:
    set_path = write_json(tmp_path / "set.json", judged_set())
    ids = [f"t{n:02d}" for n in range(39)] + ["ref"]
    labels = read_labels(labels_csv(tmp_path / "labels.csv", 40, 0, ids))
    report = build_report(
        labels, read_set_families(set_path), set_path="s", labels_path="l", bootstrap=FAST
    )
    assert report["notJudgeRows"] == ["ref"]
    assert [entry["family"] for entry in report["families"]] == [None, "tone"]


def test_reports_are_reproducible(tmp_path: Path) -> None:
    first = report_for(tmp_path, judged_set(), disagree=5)
    second = report_for(tmp_path, judged_set(), disagree=5)
    assert first == second


def test_several_raters_give_alpha_and_a_low_alpha_fails(tmp_path: Path) -> None:
    set_path = write_json(tmp_path / "set.json", judged_set())
    lines = ["caseId,human.alice,human.bob,judge"]
    for n in range(40):
        alice = "pass" if n % 2 else "fail"
        bob = alice if n % 3 else ("fail" if alice == "pass" else "pass")
        lines.append(f"t{n:02d},{alice},{bob},{alice}")
    (tmp_path / "labels.csv").write_text("\n".join(lines) + "\n")
    report = build_report(
        read_labels(tmp_path / "labels.csv"),
        read_set_families(set_path),
        set_path="s",
        labels_path="l",
        bootstrap=FAST,
    )
    alpha = report["families"][0]["alpha"]
    assert alpha["raters"] == ["alice", "bob"] and alpha["level"] == "nominal"
    assert alpha["value"] < 0.667
    assert report["families"][0]["verdict"] == "fail"


# --- closing the condition -------------------------------------------------------------------


def write_report(tmp_path: Path, set_doc: dict[str, Any], disagree: int, size: int = 40) -> Path:
    report = report_for(tmp_path, set_doc, disagree, size)
    return write_json(tmp_path / "judge.json", report)


def codes(path: Path, **kw: Any) -> dict[str, int]:
    return validate_file(path, **kw).counts_by_code()


def test_a_passing_report_settles_the_condition(tmp_path: Path) -> None:
    write_report(tmp_path, judged_set(), disagree=2)
    set_path = write_json(tmp_path / "set.json", judged_set(judgeValidation="judge.json"))
    # the header gained a field; the family's rows are what the report hashed
    assert codes(set_path) == {"judge-validated": 41}  # 40 rows and the family declaration
    status = judge_status(
        set_path, json.loads(set_path.read_text()), json.loads(set_path.read_text())["rows"]
    )
    assert status["tone"].status == "validated" and status["tone"].agreement == 0.95


def test_a_failing_report_keeps_the_warning(tmp_path: Path) -> None:
    write_report(tmp_path, judged_set(), disagree=16)
    set_path = write_json(tmp_path / "set.json", judged_set(judgeValidation="judge.json"))
    assert codes(set_path) == {"conditional-evaluator": 41, "judge-report-failed": 1}


def test_editing_a_row_makes_the_report_stale(tmp_path: Path) -> None:
    write_report(tmp_path, judged_set(), disagree=2)
    edited = judged_set(judgeValidation="judge.json")
    edited["rows"][3]["input"] = "a different question"
    set_path = write_json(tmp_path / "set.json", edited)
    assert codes(set_path) == {"conditional-evaluator": 41, "judge-report-stale": 1}
    rows = edited["rows"]
    assert judge_status(set_path, edited, rows)["tone"].status == "stale"


def test_family_reference_and_configured_reports(tmp_path: Path) -> None:
    write_report(tmp_path, judged_set(), disagree=2)
    doc = judged_set()
    doc["caseFamilies"][0]["judgeValidation"] = ["judge.json"]
    set_path = write_json(tmp_path / "set.json", doc)
    assert codes(set_path) == {"judge-validated": 41}
    plain = write_json(tmp_path / "set.json", judged_set())
    assert codes(plain, judge_reports=[tmp_path / "judge.json"]) == {"judge-validated": 41}


def test_a_report_too_small_for_the_grown_family(tmp_path: Path) -> None:
    write_report(tmp_path, judged_set(size=12), disagree=0, size=12)
    set_path = write_json(tmp_path / "set.json", judged_set(size=12, judgeValidation="judge.json"))
    assert codes(set_path) == {"judge-validated": 13}
    report = json.loads((tmp_path / "judge.json").read_text())
    # the family grew: recompute its hash as if the new rows were labelled too, but not the count
    grown = judged_set(size=40, judgeValidation="judge.json")
    report["families"][0]["rowsHash"] = index_families(grown, grown["rows"]).hashes()["tone"]
    write_json(tmp_path / "judge.json", report)
    set_path = write_json(tmp_path / "set.json", grown)
    assert codes(set_path) == {"conditional-evaluator": 41, "judge-report-insufficient": 1}


def test_unreadable_report_is_flagged(tmp_path: Path) -> None:
    (tmp_path / "judge.json").write_text("{}")
    set_path = write_json(tmp_path / "set.json", judged_set(judgeValidation="judge.json"))
    assert codes(set_path) == {"conditional-evaluator": 41, "judge-report-unreadable": 1}
    missing = write_json(tmp_path / "set.json", judged_set(judgeValidation="nowhere.json"))
    assert codes(missing)["judge-report-unreadable"] == 1


def test_no_reference_reads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_path = write_json(tmp_path / "set.json", judged_set())

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read the set twice")

    monkeypatch.setattr(judging, "index_families", refuse)
    assert codes(set_path) == {"conditional-evaluator": 41}


def test_status_of_families_without_reports_is_missing(tmp_path: Path) -> None:
    doc = judged_set()
    status = judge_status(tmp_path / "set.json", doc, doc["rows"])
    assert status == {"tone": JudgeStatus("tone", "missing", 40, 40)}
    assert status["tone"].to_json()["status"] == "missing"
