"""blueprint.reports.risk: the high-risk rule, the matrix's cells, unguarded high-risk cases."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from blueprint.reports.risk import (
    BLAST_RADII,
    ESCALATION,
    EXPERT_REVIEWER,
    NOT_STATED,
    REVERSIBILITY,
    RiskMatrix,
    is_high_risk,
    missing_safeguards,
)

LEVELS_R = [*REVERSIBILITY, NOT_STATED]
LEVELS_B = [*BLAST_RADII, NOT_STATED]


def test_the_high_risk_cells() -> None:
    high = {(r, b) for r in LEVELS_R for b in LEVELS_B if is_high_risk(r, b)}
    expected = {("R3", b) for b in LEVELS_B} | {(r, "B3") for r in LEVELS_R}
    expected |= {("R2", "B2")}
    assert high == expected


@given(st.sampled_from(LEVELS_R), st.sampled_from(LEVELS_B), st.sampled_from(LEVELS_R))
def test_more_reversibility_risk_never_makes_a_case_less_risky(r: str, b: str, other: str) -> None:
    # "not stated" sits apart: order only the stated levels
    if NOT_STATED in (r, other):
        return
    worse = max(r, other)
    assert not is_high_risk(r, b) or is_high_risk(worse, b)


def test_safeguards() -> None:
    assert missing_safeguards({}, None) == [ESCALATION, EXPERT_REVIEWER]
    assert missing_safeguards({"escalationExpectation": "  "}, None) == [
        ESCALATION,
        EXPERT_REVIEWER,
    ]
    assert missing_safeguards({"escalationExpectation": "hand off"}, "human-expert") == []
    assert missing_safeguards({"reviewerExpertise": "payments"}, "llm-judge") == [ESCALATION]


def test_the_matrix_counts_cells_and_keeps_gaps() -> None:
    matrix = RiskMatrix()
    matrix.add("a", {"reversibility": "R3", "blastRadius": "B0"}, None, "f")
    matrix.add(
        "b",
        {
            "reversibility": "R2",
            "blastRadius": "B2",
            "escalationExpectation": "x",
            "reviewerExpertise": "y",
        },
        None,
        None,
    )
    matrix.add("c", {"reversibility": "R1"}, None, None)
    matrix.add("d", {"blastRadius": "B9"}, None, None)
    data = matrix.to_json()
    assert data["cells"]["R3"]["B0"] == 1
    assert data["cells"]["R2"]["B2"] == 1
    assert data["cells"]["R1"][NOT_STATED] == 1
    assert data["cells"][NOT_STATED][NOT_STATED] == 1
    assert data["rows"] == 4 and data["rowTotals"]["R3"] == 1 and data["columnTotals"]["B0"] == 1
    assert data["highRisk"] == 2 and data["gapCount"] == 1
    assert data["gaps"] == [
        {
            "id": "a",
            "family": "f",
            "reversibility": "R3",
            "blastRadius": "B0",
            "missing": [ESCALATION, EXPERT_REVIEWER],
        }
    ]
