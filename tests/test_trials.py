"""Repeated trials in ``blueprint grade``: the estimators against enumeration, a results file
of five trials a row against figures worked out by hand (per row and per oracle type),
several files as trials, promptfoo's repeats and Inspect's epochs read as trials, and every
way two results for one row and trial are refused."""

from __future__ import annotations

import ast
import itertools
import json
import math
import random
from fractions import Fraction
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.core.errors import ParseError, UsageError
from blueprint.grading import grade_row, grade_set, read_results
from blueprint.grading.results import read_trials
from blueprint.grading.semantics import Recorded
from blueprint.grading.streamed import GRADED_CASE_FIELDS, MAX_TRIALS, graded_part
from blueprint.grading.trials import RowTrials, pass_at_k, pass_hat_k
from conftest import EXAMPLES, FIXTURES

runner = CliRunner()
SET = EXAMPLES / "support-refunds.json"
RESULTS = FIXTURES / "results"
SEMANTICS = Path(__file__).parent.parent / "src" / "blueprint" / "grading" / "semantics.py"

WINDOW = "You can return online purchases within 30 days of delivery."
FINAL_SALE = '{"alternative": "store credit if damaged on arrival", "refundable": false}'
CALLS = [
    {"name": "get_order", "arguments": {"order_id": "A-2201"}},
    {
        "name": "issue_refund",
        "arguments": {
            "order_id": "A-2201",
            "amount": "39.90",
            "currency": "EUR",
            "method": "original",
        },
    },
]
STATE = {
    "records": {
        "SELECT status FROM orders WHERE id = 'A-3310'": "refunded",
        "SELECT count(*) FROM refunds WHERE order_id = 'A-3310'": 1,
    },
    "commands": {"pytest tests/test_no_store_credit.py -q": 0},
}
#: a passing and a failing result of each row a grader scores, by row
ANSWERS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "cs-refund-window-quote": ({"output": WINDOW}, {"output": "30 days"}),
    "cs-refund-final-sale": ({"output": FINAL_SALE}, {"output": '{"refundable": true}'}),
    "cs-eligibility-late-return": ({"output": "ineligible"}, {"output": "eligible"}),
    "cs-eligibility-partial-damage": ({"output": "replacement set"}, {"output": "a hug"}),
    "cs-refund-issue-valid": (
        {"toolCalls": CALLS},
        {"toolCalls": [*CALLS, {"name": "issue_store_credit", "arguments": {}}]},
    ),
    "cs-refund-ledger-entry": ({"finalState": STATE}, {"finalState": {**STATE, "records": {}}}),
}
#: each row's five trials: P passes, F fails, - no result
TRIALS = {
    "cs-refund-window-quote": "PPPPP",
    "cs-refund-final-sale": "PFPFP",
    "cs-eligibility-late-return": "FFFFF",
    "cs-eligibility-partial-damage": "PPPPF",
    "cs-refund-issue-valid": "PF-PP",
    "cs-refund-ledger-entry": "PPPPP",
}


def five_trials(**extra: Any) -> list[dict[str, Any]]:
    """Every result of the five trials, trial after trial, each naming its trial."""
    found = []
    for trial in range(5):
        for row_id, letters in TRIALS.items():
            if letters[trial] == "-":
                continue
            passing, failing = ANSWERS[row_id]
            answer = passing if letters[trial] == "P" else failing
            found.append({"id": row_id, "trial": trial + 1, **answer, **extra})
    # a person's rows get a result too: it changes nothing
    found.append({"id": "cs-tone-angry-repeat-contact", "trial": 1, "output": "Sorry."})
    return found


def write(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def grade(*args: Any) -> Any:
    return runner.invoke(app, ["grade", *map(str, args)])


def report_json(*args: Any) -> dict[str, Any]:
    done = grade(*args, "--report", "json")
    assert done.exit_code in (0, 1), done.output
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in report["rows"]}


def letters(report: dict[str, Any]) -> dict[str, str]:
    codes = {"pass": "P", "fail": "F", "not-run": "-", "needs-human": "H"}
    return {
        row["id"]: "".join(codes[verdict] for verdict in row["trials"]["verdicts"])
        for row in report["rows"]
    }


# --- the estimators ---------------------------------------------------------------------------


def enumerated(n: int, c: int, k: int) -> tuple[Fraction, Fraction]:
    """pass@k and pass^k by brute force: every k of the n trials drawn, c of them passing."""
    trials = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(trials, k))
    any_pass = sum(any(draw) for draw in draws)
    all_pass = sum(all(draw) for draw in draws)
    return Fraction(any_pass, len(draws)), Fraction(all_pass, len(draws))


@given(st.integers(1, 11).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))), st.data())
def test_the_estimators_are_the_shares_of_every_draw(nc: tuple[int, int], data: Any) -> None:
    n, c = nc
    k = data.draw(st.integers(1, n))
    at, hat = enumerated(n, c, k)
    # each estimator is the exact share rounded once: equal to the float of the fraction
    assert pass_at_k(n, c, k) == float(at)
    assert pass_hat_k(n, c, k) == float(hat)


def test_the_estimators_at_their_edges_and_for_large_n() -> None:
    assert pass_at_k(5, 0, 3) == 0.0 and pass_hat_k(5, 5, 3) == 1.0
    assert pass_at_k(5, 3, 1) == pass_hat_k(5, 3, 1) == 0.6  # both are c/n at k = 1
    assert pass_at_k(5, 1, 5) == 1.0 and pass_hat_k(5, 4, 5) == 0.0
    # C(100000, 50000) has more than 30,000 digits: no float overflows
    assert pass_at_k(100_000, 1, 1) == 1e-5
    assert pass_hat_k(100_000, 50_000, 2) == pytest.approx(0.25, abs=1e-5)
    assert 0.0 < pass_hat_k(100_000, 99_999, 50_000) < 1.0
    assert pass_at_k(100_000, 99_999, 50_000) == 1.0


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1)])
def test_the_estimators_refuse_what_is_not_a_draw(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_the_estimators_take_whole_numbers_only() -> None:
    with pytest.raises(TypeError):
        pass_at_k(3.0, 1, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pass_hat_k(3, True, 1)


def test_a_row_counts_its_scored_trials_only() -> None:
    trials = RowTrials(bytes([1, 2, 5, 1, 3]))  # pass, fail, not-run, pass, needs-judge
    assert trials.verdicts == ("pass", "fail", "not-run", "pass", "needs-judge")
    assert (trials.scored, trials.passed, trials.share_passed) == (3, 2, 2 / 3)
    assert trials.pass_at(3) == 1.0 and trials.pass_hat(3) == 0.0
    assert trials.pass_at(4) is None  # fewer than 4 scored trials
    assert trials.letters() == "PF-PJ"


# --- five trials a row, worked out by hand ------------------------------------------------------

#: per row: (n, c, pass@1, pass@5, pass^5, pass@2, pass^2), by hand from TRIALS
BY_ROW = {
    "cs-refund-window-quote": (5, 5, 1.0, 1.0, 1.0, 1.0, 1.0),
    # C(2,2)/C(5,2) = 1/10 of pairs fail both; C(3,2)/C(5,2) = 3/10 pass both
    "cs-refund-final-sale": (5, 3, 0.6, 1.0, 0.0, 0.9, 0.3),
    "cs-eligibility-late-return": (5, 0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "cs-eligibility-partial-damage": (5, 4, 0.8, 1.0, 0.0, 1.0, 0.6),
    # trial 3 has no result: four scored trials, so nothing at k = 5
    "cs-refund-issue-valid": (4, 3, 0.75, None, None, 1.0, 0.5),
    "cs-refund-ledger-entry": (5, 5, 1.0, 1.0, 1.0, 1.0, 1.0),
}


def test_five_trials_give_each_row_its_figures(tmp_path: Path) -> None:
    path = write(tmp_path / "results.jsonl", five_trials())
    report = report_json(SET, path, "--k", "2")
    rows = by_id(report)
    assert report["trials"]["count"] == 5 and report["trials"]["k"] == 2
    assert [trial["label"] for trial in report["trials"]["trials"]] == ["1", "2", "3", "4", "5"]
    for row_id, (n, c, at1, at5, hat5, at2, hat2) in BY_ROW.items():
        trials = rows[row_id]["trials"]
        assert (trials["scored"], trials["passed"]) == (n, c), row_id
        assert trials["sharePassed"] == pytest.approx(at1)
        assert trials["passAt"]["1"] == pytest.approx(at1)
        assert trials["passAt"]["2"] == pytest.approx(at2)
        assert trials["passHat"]["2"] == pytest.approx(hat2)
        if at5 is None:
            assert "5" not in trials["passAt"] and trials["passAt"]["4"] == 1.0
        else:
            assert trials["passAt"]["5"] == pytest.approx(at5)
            assert trials["passHat"]["5"] == pytest.approx(hat5)
    assert letters(report)["cs-refund-issue-valid"] == "PF-PP"
    assert letters(report)["cs-tone-angry-repeat-contact"] == "HHHHH"
    # a row passes only when every scored trial passes, scored by their mean score
    assert rows["cs-refund-window-quote"]["verdict"] == "pass"
    assert rows["cs-eligibility-partial-damage"]["verdict"] == "fail"
    assert rows["cs-refund-final-sale"]["score"] == pytest.approx(0.6)
    assert rows["cs-tone-angry-repeat-contact"]["verdict"] == "needs-human"
    assert rows["cs-tone-angry-repeat-contact"]["score"] is None


def test_five_trials_give_each_oracle_type_the_mean_over_its_rows(tmp_path: Path) -> None:
    path = write(tmp_path / "results.jsonl", five_trials())
    summary = report_json(SET, path)["summary"]
    by_type = {name: group["trials"] for name, group in summary["byOracleType"].items()}
    # reference-answer: rows 5/5 and 3/5
    assert by_type["reference-answer"] == {
        "rows": 2,
        "sharePassed": pytest.approx(0.8),
        "passAt": {"1": pytest.approx(0.8), "5": pytest.approx(1.0)},
        "passHat": {"1": pytest.approx(0.8), "5": pytest.approx(0.5)},
        "rowsAt": {"1": 2, "5": 2},
    }
    # acceptable-set: rows 0/5 and 4/5
    assert by_type["acceptable-set"]["sharePassed"] == pytest.approx(0.4)
    assert by_type["acceptable-set"]["passAt"]["5"] == pytest.approx(0.5)
    assert by_type["acceptable-set"]["passHat"]["5"] == 0.0
    # expected-tool-calls: one row of 4 scored trials, so none at k = 5
    assert by_type["expected-tool-calls"]["sharePassed"] == pytest.approx(0.75)
    assert by_type["expected-tool-calls"]["passAt"]["5"] is None
    assert by_type["expected-tool-calls"]["rowsAt"] == {"1": 1, "5": 0}
    # a person's rows: no figure at all
    assert by_type["expected-behavior-only"]["rows"] == 0
    assert by_type["expected-behavior-only"]["sharePassed"] is None
    # the oracle types' row verdicts are pass^n: only rows that pass every trial pass
    assert summary["verdicts"]["pass"] == 2 and summary["verdicts"]["fail"] == 4
    assert "trials" not in summary  # never one figure over mixed oracle types
    family = summary["byCaseFamily"]["policy-lookup"]["trials"]
    assert family["passHat"]["5"] == pytest.approx(0.5)


def test_the_order_of_the_results_does_not_matter(tmp_path: Path) -> None:
    items = five_trials()
    in_order = report_json(SET, write(tmp_path / "a.jsonl", items))
    shuffled = items[:]
    random.Random(7).shuffle(shuffled)
    by_row = sorted(items, key=lambda item: (item["id"], item["trial"]))
    for name, reordered in (("b.jsonl", shuffled), ("c.jsonl", by_row)):
        found = report_json(SET, write(tmp_path / name, reordered))
        assert found["rows"] == in_order["rows"] and found["summary"] == in_order["summary"]


# --- several files -------------------------------------------------------------------------------


def test_several_files_are_several_trials(tmp_path: Path) -> None:
    items = five_trials()
    paths = []
    for trial in range(1, 6):
        mine = [{k: v for k, v in item.items() if k != "trial"} for item in items]
        mine = [item for item, whole in zip(mine, items, strict=True) if whole["trial"] == trial]
        paths.append(write(tmp_path / f"run-{trial}.jsonl", mine))
    found = report_json(SET, *paths)
    one_file = report_json(SET, write(tmp_path / "all.jsonl", items))
    assert found["rows"] == one_file["rows"] and found["summary"] == one_file["summary"]
    assert found["results"] == [str(path) for path in paths]
    assert [trial["file"] for trial in found["trials"]["trials"]] == [str(p) for p in paths]
    assert {trial["trial"] for trial in found["trials"]["trials"]} == {None}


def test_a_file_of_several_trials_among_files_is_numbered_within_it(tmp_path: Path) -> None:
    rows = ("cs-refund-window-quote", "cs-refund-final-sale")
    first = write(
        tmp_path / "first.jsonl",
        [{"id": row_id, "trial": trial, "output": WINDOW} for row_id in rows for trial in "ab"],
    )
    second = write(tmp_path / "second.jsonl", [{"id": rows[0], "output": "no"}])
    empty = write(tmp_path / "empty.jsonl", [])
    report = report_json(SET, first, second, empty)
    assert [trial["label"] for trial in report["trials"]["trials"]] == ["1.a", "1.b", "2", "3"]
    found = letters(report)
    assert found["cs-refund-window-quote"] == "PPF-"
    assert found["cs-refund-final-sale"] == "FF--"


def test_a_csv_trial_column_names_the_trials(tmp_path: Path) -> None:
    items = five_trials()
    lines = ["id,output,toolCalls,finalState,trial"]
    for item in items:
        cells = [
            item["id"],
            item.get("output", ""),
            json.dumps(item["toolCalls"]) if "toolCalls" in item else "",
            json.dumps(item["finalState"]) if "finalState" in item else "",
            str(item["trial"]),
        ]
        lines.append(",".join('"' + cell.replace('"', '""') + '"' for cell in cells))
    path = tmp_path / "results.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from_csv = report_json(SET, path)
    from_lines = report_json(SET, write(tmp_path / "results.jsonl", items))
    assert from_csv["rows"] == from_lines["rows"]
    assert from_csv["summary"] == from_lines["summary"]


def test_one_trial_named_or_not_is_reported_as_today(tmp_path: Path) -> None:
    plain = [{"id": row_id, **ANSWERS[row_id][0]} for row_id in ANSWERS]
    named = [{**item, "trial": 1} for item in plain]
    without = report_json(SET, write(tmp_path / "plain.jsonl", plain))
    found = report_json(SET, write(tmp_path / "named.jsonl", named))
    assert "trials" not in without and "trials" not in found
    assert found["rows"] == without["rows"] and found["summary"] == without["summary"]
    assert all("trials" not in row for row in found["rows"])


# --- refusals -------------------------------------------------------------------------------------


def test_a_row_twice_in_one_trial_is_refused_naming_both_lines(tmp_path: Path) -> None:
    items = five_trials()
    path = write(tmp_path / "results.jsonl", [*items, items[1]])
    with pytest.raises(ParseError) as refused:
        grade_set(SET, path)
    assert refused.value.line == len(items) + 1
    assert "line 2)" in refused.value.reason and "trial 1" in refused.value.reason
    assert grade(SET, path).exit_code == 2


def test_a_row_twice_with_no_trial_named_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "results.jsonl", [{"id": "cs-refund-window-quote"}] * 2)
    with pytest.raises(ParseError) as refused:
        grade_set(SET, path)
    assert refused.value.line == 2 and "line 1)" in refused.value.reason
    with pytest.raises(ParseError):
        read_results(path)


def test_a_file_whose_results_name_their_trial_only_sometimes_is_refused(tmp_path: Path) -> None:
    rows = [{"id": "cs-refund-window-quote", "trial": 1}, {"id": "cs-refund-final-sale"}]
    for items in (rows, rows[::-1]):
        path = write(tmp_path / "results.jsonl", items)
        with pytest.raises(ParseError) as refused:
            list(read_trials(path))
        assert refused.value.line == 2


@pytest.mark.parametrize("trial", [0, -1, True, 1.5, [1], {"n": 1}, " "])
def test_a_trial_is_a_whole_number_from_1_or_a_name(tmp_path: Path, trial: Any) -> None:
    path = write(tmp_path / "results.jsonl", [{"id": "cs-refund-window-quote", "trial": trial}])
    with pytest.raises(ParseError) as refused:
        list(read_trials(path))
    assert refused.value.line == 1 and refused.value.reason.startswith("trial:")


def test_2_and_the_text_2_are_one_trial(tmp_path: Path) -> None:
    rows = [{"id": "cs-refund-window-quote", "trial": 2}, {"id": "cs-refund-window-quote"}]
    rows[1]["trial"] = "2"
    with pytest.raises(ParseError):
        grade_set(SET, write(tmp_path / "results.jsonl", rows))


def test_reading_one_result_a_row_refuses_several_trials(tmp_path: Path) -> None:
    path = write(tmp_path / "results.jsonl", five_trials())
    with pytest.raises(ParseError) as refused:
        read_results(path)
    assert refused.value.reason.startswith("trial:")


def test_a_trial_named_per_result_is_refused_past_the_most_trials(tmp_path: Path) -> None:
    items = [{"id": "cs-refund-window-quote", "trial": f"run-{n}"} for n in range(MAX_TRIALS + 1)]
    with pytest.raises(ParseError) as refused:
        grade_set(SET, write(tmp_path / "results.jsonl", items))
    assert refused.value.line == MAX_TRIALS + 1


def test_k_is_at_most_the_number_of_trials(tmp_path: Path) -> None:
    path = write(tmp_path / "results.jsonl", five_trials())
    with pytest.raises(UsageError):
        grade_set(SET, path, k=6)
    assert grade(SET, path, "--k", "6").exit_code == 2
    assert grade(SET, path, "--k", "0").exit_code == 2


def test_grade_needs_a_results_file_and_writes_over_none(tmp_path: Path) -> None:
    assert grade(SET).exit_code == 2
    first = write(tmp_path / "first.jsonl", [{"id": "cs-refund-window-quote"}])
    second = write(tmp_path / "second.jsonl", [{"id": "cs-refund-window-quote"}])
    done = grade(SET, first, second, "-o", second, "--force")
    assert done.exit_code == 2
    assert second.read_text(encoding="utf-8").startswith('{"id"')


def test_a_result_for_a_row_the_set_lacks_names_its_file(tmp_path: Path) -> None:
    good = write(tmp_path / "good.jsonl", [{"id": "cs-refund-window-quote"}])
    bad = write(tmp_path / "bad.jsonl", [{"id": "no-such-row"}])
    done = grade(SET, good, bad)
    assert done.exit_code == 2 and "bad.jsonl" in done.output


# --- runners that repeat ------------------------------------------------------------------------

#: the verdicts the fixtures' repeats give, by row (see each fixture's README)
PROMPTFOO_REPEATS = {
    "cs-refund-window-quote": "PPP",
    "cs-refund-final-sale": "PFP",
    "cs-eligibility-late-return": "PFF",
    "cs-eligibility-partial-damage": "PPP",
    "cs-tone-angry-repeat-contact": "HHH",
    "cs-refund-issue-valid": "PF-",
    "cs-refund-ledger-entry": "PPF",
    "cs-escalate-chargeback-threat": "HHH",
}
INSPECT_EPOCHS = {
    **PROMPTFOO_REPEATS,
    "cs-eligibility-late-return": "PFP",
    "cs-refund-issue-valid": "PPF",
    "cs-refund-ledger-entry": "---",  # the log records no final state
}


def test_promptfoo_repeats_are_trials() -> None:
    report = report_json(SET, RESULTS / "promptfoo-repeat" / "results.json")
    assert letters(report) == PROMPTFOO_REPEATS
    assert [trial["trial"] for trial in report["trials"]["trials"]] == ["1", "2", "3"]
    issue = by_id(report)["cs-refund-issue-valid"]["trials"]
    assert (issue["scored"], issue["passed"]) == (2, 1)


def promptfoo_document() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        (RESULTS / "promptfoo-repeat" / "results.json").read_text(encoding="utf-8")
    )
    return found


def test_promptfoo_results_of_two_tests_for_a_row_are_refused(tmp_path: Path) -> None:
    document = promptfoo_document()
    entries = document["results"]["results"]
    entries.append({**entries[0], "testIdx": 100})
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ParseError) as refused:
        grade_set(SET, path)
    assert "cs-refund-window-quote" in refused.value.reason


def test_promptfoo_results_of_two_providers_are_refused(tmp_path: Path) -> None:
    document = promptfoo_document()
    entries = document["results"]["results"]
    entries[0] = {**entries[0], "provider": {"id": "another"}}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ParseError) as refused:
        grade_set(SET, path)
    assert "providers" in refused.value.reason


def test_promptfoo_repeats_of_tests_without_ids_are_numbered_by_position(tmp_path: Path) -> None:
    document = promptfoo_document()
    for entry in document["results"]["results"]:
        del entry["testCase"]["metadata"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    found = [(trial, recorded.id) for trial, recorded in read_trials(path)]
    assert found[:4] == [("1", "test-1"), ("2", "test-1"), ("3", "test-1"), ("1", "test-2")]


def test_a_promptfoo_run_without_repeats_names_no_trial() -> None:
    path = RESULTS / "promptfoo-judged" / "results.json"
    assert {trial for trial, _ in read_trials(path)} == {None}


@pytest.mark.parametrize("name", ["epochs.eval", "epochs.json"])
def test_inspect_epochs_are_trials(name: str) -> None:
    report = report_json(SET, RESULTS / "inspect-epochs" / name)
    assert letters(report) == INSPECT_EPOCHS
    figures = report["summary"]["byOracleType"]["reference-answer"]["trials"]
    assert figures["passHat"]["3"] == pytest.approx(0.5)  # 3/3 and 2/3 of the trials


def test_inspect_logs_of_one_epoch_name_no_trial() -> None:
    path = RESULTS / "inspect-judged" / "judged.eval"
    assert {trial for trial, _ in read_trials(path)} == {None}


# --- the command line -------------------------------------------------------------------------


def test_the_text_report_shows_each_rows_trials_and_the_groups_figures(tmp_path: Path) -> None:
    done = grade(SET, write(tmp_path / "results.jsonl", five_trials()))
    assert done.exit_code == 1  # rows fail in some trial
    lines = done.stdout.splitlines()
    final_sale = next(line for line in lines if "cs-refund-final-sale" in line)
    assert final_sale.startswith("fail") and "trials PFPFP" in final_sale and "3/5" in final_sale
    reference = next(line for line in lines if line.startswith("  reference-answer: share"))
    assert "pass@1 80%" in reference and "pass@5 100%" in reference and "pass^5 50%" in reference


def test_the_junit_report_fails_a_row_that_fails_a_trial(tmp_path: Path) -> None:
    done = grade(SET, write(tmp_path / "results.jsonl", five_trials()), "--report", "junit")
    suite = ElementTree.fromstring(done.stdout)
    assert suite.get("failures") == "4"
    case = next(
        case for case in suite.iter("testcase") if case.get("name") == "cs-refund-final-sale"
    )
    assert case.find("failure") is not None
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["trials"] == "PFPFP" and properties["passHat5"] == "0.00"
    run = suite.find("properties")
    assert run is not None
    assert {p.get("name"): p.get("value") for p in run}["trials"] == "5"


def test_the_markdown_report_has_the_trials_tables(tmp_path: Path) -> None:
    done = grade(SET, write(tmp_path / "results.jsonl", five_trials()), "--report", "markdown")
    text = done.stdout
    assert "| Oracle type | rows scored | share passed | pass@1 | pass@5 | pass^5 |" in text
    assert "| reference-answer | 2 | 80% | 80% | 100% | 50% | 2 |" in text
    assert "`PFPFP` (3/5)" in text


def test_one_trial_gives_the_same_report_in_every_form(tmp_path: Path) -> None:
    plain = write(tmp_path / "plain.jsonl", [{"id": r, **ANSWERS[r][0]} for r in ANSWERS])
    named = write(
        tmp_path / "named.jsonl", [{"id": r, "trial": "x", **ANSWERS[r][0]} for r in ANSWERS]
    )
    for form in ("text", "junit", "markdown"):
        without = grade(SET, plain, "--report", form).stdout
        found = grade(SET, named, "--report", form).stdout
        assert found == without.replace("plain.jsonl", "named.jsonl")


# --- grading reads the graded part of a row only ----------------------------------------------


def test_semantics_reads_no_case_field_the_index_drops() -> None:
    """The index keeps GRADED_CASE_FIELDS of each case profile: every field grading reads."""
    read = set()
    for node in ast.walk(ast.parse(SEMANTICS.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "case"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            read.add(node.args[0].value)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "case"
            and isinstance(node.slice, ast.Constant)
        ):
            read.add(node.slice.value)
    assert read and read <= set(GRADED_CASE_FIELDS)


def test_the_graded_part_of_a_row_gets_the_rows_verdict() -> None:
    rows = json.loads(SET.read_text(encoding="utf-8"))["rows"]
    judged = json.loads((FIXTURES / "judged" / "judged-set.json").read_text(encoding="utf-8"))
    answers = [
        Recorded(id="x", output=value, has_output=True)
        for value in (WINDOW, "ineligible", "replacement set", "no", FINAL_SALE)
    ] + [
        Recorded(id="x", tool_calls=CALLS),
        Recorded(id="x", final_state=STATE),
        Recorded(id="x", judge={"pass": True, "score": 0.8, "model": "m", "template": "t"}),
        Recorded(id="x", judge={"score": 0.4}),
        Recorded(id="x", output="x", has_output=True, judge={"pass": False}),
    ]
    for row in [*rows, *judged["rows"]]:
        for result in [None, *answers]:
            assert grade_row(graded_part(row), result) == grade_row(row, result)


@given(st.lists(st.floats(0, 1) | st.sampled_from([0.1, 0.2, 0.3, 1e-16, 1 / 3]), max_size=60))
def test_a_mean_taken_one_number_at_a_time_is_the_exact_one(values: list[float]) -> None:
    from blueprint.grading.trials import ExactMean

    mean = ExactMean()
    for value in values:
        mean.add(value)
    assert mean.mean() == (math.fsum(values) / len(values) if values else None)
