"""Two runs compared on rows, and the gates: a blocker family's pass-to-fail, a family's
drop beyond noise, too few rows scored, and a high-risk cell's claim."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.grading.compare import ChangeList, _aligned, _by_id, _by_place, compare_runs
from blueprint.grading.gates import GateOptions, claim_needs, risk_cell, run_gates
from blueprint.grading.semantics import RowVerdict
from blueprint.grading.statistics import paired_difference


def verdict(
    row_id: str,
    outcome: str,
    family: str = "f",
    oracle: str = "reference-answer",
    starter: bool = False,
) -> RowVerdict:
    score = {"pass": 1.0, "fail": 0.0}.get(outcome)
    return RowVerdict(row_id, outcome, score, "", oracle, family, starter=starter)  # type: ignore[arg-type]


def test_rows_are_paired_and_the_unpaired_are_listed() -> None:
    old = [
        verdict("a", "pass"),
        verdict("b", "fail"),
        verdict("c", "pass"),
        verdict("gone", "pass"),
    ]
    new = [
        verdict("a", "fail"),
        verdict("b", "pass"),
        verdict("c", "needs-judge"),
        verdict("x", "pass"),
    ]
    comparison = compare_runs(new, old)
    changes = {row.id: row.change for row in comparison.rows}
    assert changes == {
        "a": "pass->fail",
        "b": "fail->pass",
        "c": "unscored",
        "x": "new-only",
        "gone": "baseline-only",
    }
    group = comparison.by_case_family["f"]
    assert (group.paired, group.pass_to_fail, group.fail_to_pass) == (2, 1, 1)
    assert group.difference == 0.0 and group.mcnemar_p == 1.0


def test_starter_rows_are_in_no_comparison() -> None:
    comparison = compare_runs([verdict("s", "fail", starter=True)], [verdict("s", "pass")])
    assert [row.change for row in comparison.rows] == ["baseline-only"]


def test_one_blocker_row_that_regresses_fails_the_gate_by_name() -> None:
    old = [verdict(f"r{i}", "pass", family="refunds") for i in range(20)]
    new = [verdict("r0", "fail", family="refunds"), *old[1:]]
    comparison = compare_runs(new, old)
    failures = run_gates(
        new, GateOptions(), comparison=comparison, severities={"refunds": "blocker"}
    )
    assert [(failure.gate, failure.rows) for failure in failures] == [
        ("blocker-regression", ("r0",))
    ]
    # the same change in a minor family is within noise: no gate fails, the interval shows it
    minor = run_gates(new, GateOptions(), comparison=comparison, severities={"refunds": "minor"})
    assert minor == []
    low, high = comparison.by_case_family["refunds"].interval or (0, 0)
    assert low < 0 < high


def test_a_family_that_drops_beyond_noise_fails() -> None:
    old = [verdict(f"r{i}", "pass") for i in range(30)]
    new = [verdict(f"r{i}", "fail" if i < 12 else "pass") for i in range(30)]
    failures = run_gates(new, GateOptions(), comparison=compare_runs(new, old))
    assert [failure.gate for failure in failures] == ["family-drop"]
    assert len(failures[0].rows) == 12


def test_too_few_scored_rows_fail_the_share_gate() -> None:
    rows = [verdict("a", "pass"), verdict("b", "needs-human"), verdict("c", "not-run")]
    assert [f.gate for f in run_gates(rows, GateOptions(min_scored_share=0.5))] == [
        "too-few-scored"
    ]
    assert run_gates(rows, GateOptions(min_scored_share=0.3)) == []


def test_the_claim_a_high_risk_cell_can_make() -> None:
    assert claim_needs(0.1) == 29  # 1 - 0.05 ** (1 / 29) < 0.1 <= 1 - 0.05 ** (1 / 28)
    assert 1 - 0.05 ** (1 / 29) <= 0.1 < 1 - 0.05 ** (1 / 28)
    assert risk_cell("R3", "B0") == "R3/B0" and risk_cell("R1", "B1") is None
    rows = [replace(verdict(f"r{i}", "pass"), risk="R3/B2") for i in range(12)]
    (failure,) = run_gates(rows, GateOptions(claim=0.1))
    assert failure.gate == "risk-claim" and failure.subject == "R3/B2"
    many = [replace(verdict(f"r{i}", "pass"), risk="R3/B2") for i in range(29)]
    assert run_gates(many, GateOptions(claim=0.1)) == []


@pytest.mark.parametrize("options", [{"min_scored_share": 2}, {"claim": 0}, {"confidence": 1}])
def test_unusable_gate_options_are_refused(options: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        GateOptions(**options)  # type: ignore[arg-type]


def test_a_family_of_one_paired_row_has_a_difference_and_no_interval() -> None:
    comparison = compare_runs([verdict("a", "fail")], [verdict("a", "pass")])
    group = comparison.by_case_family["f"]
    assert group.difference == -1.0 and group.interval is None and not group.dropped


outcomes = st.sampled_from(["pass", "fail", "needs-human", "not-run", "invalid"])


@given(
    st.lists(
        st.tuples(outcomes, outcomes, st.sampled_from("fgh"), st.booleans()),
        min_size=1,
        max_size=40,
    )
)
def test_two_runs_of_one_set_are_paired_by_place_as_by_id(
    rows: list[tuple[str, str, str, bool]],
) -> None:
    """Runs of the same rows in the same order (unique ids) pair by place exactly as by id."""
    new = [verdict(f"r{n}", now, fam, starter=s) for n, (_, now, fam, s) in enumerate(rows)]
    old = [verdict(f"r{n}", was, fam, starter=s) for n, (was, _, fam, s) in enumerate(rows)]
    assert _aligned(new, old)
    assert list(_by_place(new, old)) == list(_by_id(new, old))
    if len(new) > 1:  # another order is paired on ids
        assert not _aligned(new[::-1], old)


def test_a_repeated_id_is_paired_with_its_own_row() -> None:
    old = [verdict("a", "pass"), verdict("a", "fail")]
    new = [verdict("a", "pass"), verdict("a", "pass")]
    comparison = compare_runs(new, old)
    assert [row.change for row in comparison.rows] == ["same", "fail->pass"]


def test_a_large_comparison_keeps_its_rows_on_disk_and_its_figures_exact() -> None:
    """Thousands of rows: the changes wait in a scratch file, and each group's paired
    figures are those of its scores held whole."""
    count = 9000
    old = [verdict(f"r{n}", "pass" if n % 3 else "fail", family="fg"[n % 2]) for n in range(count)]
    new = [verdict(f"r{n}", "pass" if n % 5 else "fail", family="fg"[n % 2]) for n in range(count)]
    comparison = compare_runs(new, old)
    assert isinstance(comparison.rows, ChangeList) and comparison.rows._chunks  # spilled
    assert len(comparison.rows) == count
    for family in "fg":
        members = [n for n in range(count) if "fg"[n % 2] == family]
        before = [old[n].score or 0.0 for n in members]
        after = [new[n].score or 0.0 for n in members]
        group = comparison.by_case_family[family]
        assert group.paired == len(members)
        assert group.baseline_rate == sum(before) / len(before)
        assert (group.difference, *group.interval) == paired_difference(before, after)
