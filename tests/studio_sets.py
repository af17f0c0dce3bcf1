"""Sets and judge results the studio tests share: something in every review queue, a judged
family of 30 rows, and hostile strings that must stay text."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from conftest import document, row, write_json

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>{{ 7*7 }}'
JUDGED = 30


def judged_rows() -> list[dict[str, Any]]:
    rows = []
    for number in range(1, JUDGED + 1):
        item = row(
            f"tone-{number:02d}",
            "rubric",
            caseFamily="tone",
            evaluator="llm-judge",
            evaluationCriteria=["apologises", "offers a next step"],
        )
        item["input"] = f"Customer message {number}: my parcel is late again."
        rows.append(item)
    return rows


def studio_rows() -> list[dict[str, Any]]:
    starter = row("starter-1", provenance="starter-example", caseFamily="lookup")
    imported = row("imported-1", provenance="imported", caseFamily="lookup")
    imported["metadata"]["case"]["extensions"] = {
        "blueprint-import": {
            "format": "braintrust",
            "derived": {"metadata.case.oracleType": "inferred from the shape of expected"},
        }
    }
    behaviour = row(
        "behaviour-1",
        "expected-behavior-only",
        evaluator="human-expert",
        reviewerExpertise="clinician",
    )
    hostile = row("hostile-1", caseFamily="lookup")
    hostile["input"] = HOSTILE
    hostile["metadata"]["case"]["scenario"] = HOSTILE
    multiline = row("multiline-1", actor="a customer\nwho writes twice")
    # a textarea drops a newline right after its tag: the editor must keep this one
    multiline["input"] = "\nLine one\n  Line two\n"
    return [
        row("lookup-1", caseFamily="lookup", expected="30 days"),
        multiline,
        starter,
        imported,
        behaviour,
        hostile,
        *judged_rows(),
    ]


FAMILIES = [
    {
        "id": "lookup",
        "title": "Policy lookup",
        "oracleType": "reference-answer",
        "evaluator": "exact-or-programmatic",
        "severity": "major",
    },
    {"id": "tone", "oracleType": "rubric", "evaluator": "llm-judge", "severity": "minor"},
]


def studio_set(folder: Path, name: str = "studio.json") -> Path:
    return write_json(
        folder / name, document(*studio_rows(), name="studio-set", caseFamilies=FAMILIES)
    )


def judge_label(number: int) -> str:
    """The judge's verdict on the output of tone-NN: it passes the even ones."""
    return "pass" if number % 2 == 0 else "fail"


def judge_results(folder: Path, name: str = "judged.csv") -> Path:
    path = folder / name
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["caseId", "output", "judge"])
        for number in range(1, JUDGED + 1):
            writer.writerow(
                [
                    f"tone-{number:02d}",
                    f"Sorry about parcel {number}. "
                    + ("We will resend it." if number % 2 == 0 else ""),
                    judge_label(number),
                ]
            )
    return path
