"""The table of recorded results every runner's scorer must grade as ``blueprint grade`` does:
each rule of the bundled example set broken once, and kept once."""

from __future__ import annotations

import json
from typing import Any

from blueprint.grading import GradingOptions, Recorded, RowVerdict, grade_row
from conftest import EXAMPLES

EXAMPLE = json.loads((EXAMPLES / "support-refunds.json").read_text(encoding="utf-8"))
ROWS = {row["id"]: row for row in EXAMPLE["rows"]}
FAMILIES = {family["id"]: family.get("evaluator") for family in EXAMPLE["caseFamilies"]}


def graded(
    row_id: str, result: dict[str, Any], options: GradingOptions | None = None
) -> RowVerdict:
    """What ``blueprint grade`` gives a recorded result (in the results file's shape) for a
    row of the example set."""
    row = ROWS[row_id]
    recorded = Recorded(
        id=row_id,
        output=result.get("output"),
        has_output="output" in result,
        tool_calls=result.get("toolCalls"),
        final_state=result.get("finalState"),
        judge=result.get("judge"),
    )
    family = FAMILIES.get(row["metadata"]["case"].get("caseFamily"))
    return grade_row(row, recorded, options, family_evaluator=family)


REFUND = [
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

#: the world after a compliant run of cs-refund-ledger-entry
LEDGER = {
    "records": {
        "SELECT status FROM orders WHERE id = 'A-3310'": "refunded",
        "SELECT count(*) FROM refunds WHERE order_id = 'A-3310'": 1,
    },
    "commands": {"pytest tests/test_no_store_credit.py -q": 0},
}

#: (row, recorded result, verdict): each rule broken once, and kept once
TABLE: list[tuple[str, dict[str, Any], str]] = [
    ("cs-refund-issue-valid", {"toolCalls": REFUND}, "pass"),
    ("cs-refund-issue-valid", {"toolCalls": [*REFUND, {"name": "issue_store_credit"}]}, "fail"),
    ("cs-refund-issue-valid", {"toolCalls": list(reversed(REFUND))}, "fail"),
    (
        "cs-refund-issue-valid",
        {"toolCalls": [REFUND[0], {"name": "issue_refund", "arguments": {"order_id": "A-2201"}}]},
        "fail",
    ),
    ("cs-refund-issue-valid", {"toolCalls": [REFUND[0], {"name": "log"}, REFUND[1]]}, "pass"),
    # a trajectory with no call is graded: the expected calls were not made
    ("cs-refund-issue-valid", {"toolCalls": []}, "fail"),
    ("cs-refund-ledger-entry", {"finalState": LEDGER}, "pass"),
    (
        "cs-refund-ledger-entry",
        {"finalState": {**LEDGER, "commands": {"pytest tests/test_no_store_credit.py -q": 1}}},
        "fail",
    ),
    # records were recorded, and the refund's count is not among them: that check fails
    (
        "cs-refund-ledger-entry",
        {
            "finalState": {
                **LEDGER,
                "records": {"SELECT status FROM orders WHERE id = 'A-3310'": "refunded"},
            }
        },
        "fail",
    ),
    ("cs-eligibility-late-return", {"output": "not eligible: outside the 30-day window"}, "pass"),
    ("cs-eligibility-late-return", {"output": "eligible"}, "fail"),
    ("cs-eligibility-partial-damage", {"output": "replacement set"}, "pass"),
    # the row declares passThreshold 0.7: the member graded 0.7 passes without a flag
    ("cs-eligibility-partial-damage", {"output": "full refund"}, "pass"),
    ("cs-eligibility-partial-damage", {"output": "store credit"}, "fail"),
    (
        "cs-refund-final-sale",
        {"output": '{"alternative":"store credit if damaged on arrival","refundable":false}'},
        "pass",
    ),
    (
        "cs-refund-window-quote",
        {"output": "You can return online purchases within 30 days of delivery. Anything else?"},
        "fail",
    ),
    ("cs-refund-window-quote", {"output": ROWS["cs-refund-window-quote"]["expected"]}, "pass"),
    ("cs-escalate-chargeback-threat", {"output": "I will escalate this."}, "needs-human"),
    ("cs-tone-angry-repeat-contact", {"output": "Sorry.", "judge": {"pass": True}}, "needs-human"),
]
