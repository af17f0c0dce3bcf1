"""Judge results read for labelling, and the labelling session: labels written as
judge-report reads them, refused labels and rater names, and labels taken up again."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprint.core.errors import UsageError
from blueprint.reports.judging import LabelsError, read_labels
from blueprint.reports.judging.judged import read_judge_results
from blueprint.reports.judging.labels import read_judged_outputs
from blueprint.studio.labelling import LabellingSession
from conftest import FIXTURES
from studio_sets import judge_results, studio_set


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_judge_results_need_no_human_labels(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", 'caseId,output,judge\na,"hi, there",pass\nb,,4\n')
    with pytest.raises(LabelsError):  # pass/fail and a score: one scale per file
        read_judged_outputs(path)
    path = write(
        tmp_path / "r.csv", 'caseId,output,judge,human.ann\na,"hi, there",pass,fail\nb,,fail,\n'
    )
    found = {item.case_id: item for item in read_judged_outputs(path)}
    assert found["a"].output == "hi, there" and found["a"].humans == {"ann": "fail"}
    assert found["b"].judge == "fail" and found["b"].humans == {}


@pytest.mark.parametrize(
    "text",
    [
        "caseId,output\na,hi\n",  # no judge column
        "caseId,output,judge\na,hi,\n",  # no judge label
        "caseId,output,judge\na,hi,maybe\n",  # not a label
        "caseId,output,judge\na,hi,pass\na,again,fail\n",  # labelled twice
        "caseId,output,judge\n",  # nothing to label
    ],
)
def test_unusable_judge_results_are_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(LabelsError):
        read_judged_outputs(write(tmp_path / "r.csv", text))


def test_a_promptfoo_results_file_without_model_grading_is_refused(tmp_path: Path) -> None:
    results = FIXTURES / "results" / "promptfoo-judged" / "results.json"
    assert [item.judge for item in read_judge_results(results)] == ["pass", "fail", "pass"]
    plain = write(tmp_path / "plain.json", '{"results": {"results": []}}')
    with pytest.raises(LabelsError):
        read_judge_results(plain)


def test_labels_go_where_judge_report_reads_them(tmp_path: Path) -> None:
    set_path = studio_set(tmp_path)
    session = LabellingSession.open(set_path, judge_results(tmp_path))
    session.give("tone-01", "ann", "fail")
    session.give("tone-02", "bob", "pass")
    session.give("tone-02", "ann", "fail")
    read = read_labels(session.labels_path)
    assert read.raters == ("ann", "bob")
    assert {case.case_id: case.humans for case in read.cases} == {
        "tone-01": {"ann": 0},
        "tone-02": {"ann": 0, "bob": 1},
    }
    session.give("tone-01", "ann", None)  # withdrawn: no one has labelled it now
    assert [case.case_id for case in read_labels(session.labels_path).cases] == ["tone-02"]
    assert session.next_for("ann") == 0 and session.next_for("ann", 0) == 2
    report = session.report()
    assert isinstance(report, dict) and report["families"][0]["verdict"] == "insufficient"


def test_labels_and_raters_are_checked(tmp_path: Path) -> None:
    session = LabellingSession.open(studio_set(tmp_path), judge_results(tmp_path))
    for rater in ("", "judge", "a,b", 'say "hi"'):
        with pytest.raises(UsageError):
            session.give("tone-01", rater, "pass")
    with pytest.raises(UsageError):
        session.give("tone-01", "ann", 3)  # a score on a pass/fail scale
    with pytest.raises(UsageError):
        session.give("no-such-case", "ann", "pass")
    assert not session.labels_path.exists()


def test_an_existing_file_that_is_not_labels_is_never_overwritten(tmp_path: Path) -> None:
    set_path = studio_set(tmp_path)
    results = judge_results(tmp_path)
    other = write(tmp_path / "notes.csv", "just,some\nnotes,here\n")
    with pytest.raises(UsageError):
        LabellingSession.open(set_path, results, other)
    assert other.read_text(encoding="utf-8") == "just,some\nnotes,here\n"
    with pytest.raises(UsageError):
        LabellingSession.open(set_path, results, results)  # the results file itself


def test_scores_are_labelled_on_their_scale(tmp_path: Path) -> None:
    set_path = studio_set(tmp_path)
    results = write(
        tmp_path / "scored.jsonl",
        '{"caseId": "tone-01", "judge": 4}\n{"caseId": "tone-02", "judge": 2}\n',
    )
    session = LabellingSession.open(set_path, results, scale=(1, 5))
    assert session.choices() == (1, 2, 3, 4, 5)
    session.give("tone-01", "ann", 5)
    assert read_labels(session.labels_path, scale=(1, 5)).scale.kind == "ordinal"


@pytest.mark.parametrize(
    "earlier",
    [
        "caseId,judge,human.ann,notes\ntone-01,fail,pass,checked twice\n",  # a column
        "caseId,judge,human.ann\ntone-99,fail,pass\n",  # a case these results lack
        "caseId,judge,human.ann\ntone-01,pass,pass\n",  # another judge label (tone-01 fails)
        "caseId,rater,label\ntone-01,judge,fail\ntone-01,ann,pass\n",  # the long layout
    ],
)
def test_labels_that_writing_would_lose_are_refused(tmp_path: Path, earlier: str) -> None:
    labels = write(tmp_path / "labels.csv", earlier)
    with pytest.raises(UsageError):
        LabellingSession.open(studio_set(tmp_path), judge_results(tmp_path), labels)
    assert labels.read_text(encoding="utf-8") == earlier


def test_earlier_labels_are_kept_and_added_to(tmp_path: Path) -> None:
    labels = write(tmp_path / "labels.csv", "caseId,judge,human.ann\ntone-01,fail,pass\n")
    session = LabellingSession.open(studio_set(tmp_path), judge_results(tmp_path), labels)
    session.give("tone-02", "bob", "pass")
    read = {case.case_id: case.humans for case in read_labels(labels).cases}
    assert read == {"tone-01": {"ann": 1}, "tone-02": {"bob": 1}}


def test_json_lines_labels_are_written_as_json_lines(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    session = LabellingSession.open(studio_set(tmp_path), judge_results(tmp_path), labels)
    session.give("tone-02", "ann", "pass")
    session.give("tone-03", "ann", "fail")
    read = read_labels(labels)
    assert [(case.case_id, case.humans, case.judge) for case in read.cases] == [
        ("tone-02", {"ann": 1}, 1),
        ("tone-03", {"ann": 0}, 0),
    ]
    again = LabellingSession.open(studio_set(tmp_path), judge_results(tmp_path), labels)
    assert again.labelled_by("ann") == 2
    with pytest.raises(UsageError):
        LabellingSession.open(studio_set(tmp_path), judge_results(tmp_path), tmp_path / "l.txt")
