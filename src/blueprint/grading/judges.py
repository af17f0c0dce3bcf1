"""Whether the judge behind each judged verdict is validated: the spec's second condition on
``llm-judge``, checked for the verdicts ``blueprint grade`` gives.

A judged row's verdict counts as a validated judge's only when the set points at a
judge-validation report that passes for the row's case family, the family's rows are those
the report was made on, and the report validated this judge: the model and the judge template
the verdict names are the ones the report's labels named. Anything else is said as it is:

- ``missing``: no report the set points at covers the family;
- ``stale``: the family's rows changed since, the template changed, or the verdict comes
  from another model or template than the report validated;
- ``insufficient`` / ``failed`` / ``unreadable``: the report's own status;
- ``unconfirmed``: the report passes, but it or the verdict does not name the judge (model
  and template), so nothing shows that this verdict's judge is the one it validated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from blueprint.core.errors import BlueprintError
from blueprint.grading.semantics import RowVerdict
from blueprint.validation.judge_status import (
    LabelsError,
    read_set_families,
    references,
    report_templates,
    statuses_for,
)

JudgeValidation = Literal[
    "validated", "unconfirmed", "stale", "insufficient", "failed", "unreadable", "missing"
]
#: the statuses in the order a summary shows them
JUDGE_STATUSES: Final[tuple[JudgeValidation, ...]] = (
    "validated",
    "unconfirmed",
    "stale",
    "insufficient",
    "failed",
    "unreadable",
    "missing",
)
_IDENTITY: Final = ("model", "template")


@dataclass(frozen=True)
class JudgeCheck:
    """The validation status of the judge behind one judged verdict."""

    status: JudgeValidation
    reason: str
    report: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "report": self.report, "reason": self.reason}


def check_judges(
    set_path: Path,
    header: Mapping[str, Any] | None,
    verdicts: Iterable[RowVerdict],
    judged_ids: set[str],
    *,
    source_format: str | None = None,
) -> dict[str, JudgeCheck]:
    """The judge check of every judged row that got a pass or a fail, by row id. Reads the
    reports the set points at, and the set once more to hash its families, only when there
    is such a verdict and a report to check it against."""
    if not judged_ids:
        return {}  # no row a judge grades: nothing to read
    targets = [v for v in verdicts if v.id in judged_ids and v.verdict in ("pass", "fail")]
    if not targets:
        return {}
    refs = references(set_path, header)
    if not refs:
        missing = JudgeCheck(
            "missing",
            "the set points at no judge-validation report (judgeValidation); see"
            " docs/judge-validation.md",
        )
        return {verdict.id: missing for verdict in targets}
    try:
        families = read_set_families(set_path, format=source_format)
    except (LabelsError, BlueprintError) as error:
        unreadable = JudgeCheck("unreadable", f"the set's case families do not read: {error}")
        return {verdict.id: unreadable for verdict in targets}
    statuses, _ = statuses_for(set_path, families, refs)
    found = {}
    for verdict in targets:
        status = statuses.get(verdict.case_family)
        if status is None:
            found[verdict.id] = JudgeCheck(
                "missing", "no judge-validation report the set points at covers the family"
            )
        elif status.status != "validated":
            reason = "; ".join(status.reasons) or f"the report's status is {status.status}"
            found[verdict.id] = JudgeCheck(status.status, reason, status.report)
        else:
            found[verdict.id] = _same_judge(verdict, status.judge, status.report)
    return found


def _same_judge(
    verdict: RowVerdict, validated: Mapping[str, Any] | None, report: str | None
) -> JudgeCheck:
    """Whether the verdict's judge is the judge a passing report validated: the same model,
    and a template the report's labels came from."""
    given = verdict.judge or {}
    validated = validated or {}
    model, templates = validated.get("model"), report_templates(validated)
    differs = []
    if "model" in given and isinstance(model, str) and given["model"] != model:
        differs.append(f"model {given['model']} (the report validated {model})")
    if "template" in given and templates and given["template"] not in templates:
        differs.append(
            f"template {given['template']} (the report validated {', '.join(templates)})"
        )
    if differs:
        return JudgeCheck("stale", f"judged by another judge: {', '.join(differs)}", report)
    unnamed = [
        name
        for name, named in (("model", isinstance(model, str)), ("template", bool(templates)))
        if not named
    ]
    if unnamed:
        return JudgeCheck(
            "unconfirmed",
            f"the report's labels do not name the judge's {' or '.join(unnamed)}, so it cannot"
            " show that this verdict's judge is the one it validated",
            report,
        )
    unsaid = [key for key in _IDENTITY if key not in given]
    if unsaid:
        return JudgeCheck(
            "unconfirmed",
            f"the verdict does not name its judge's {' or '.join(unsaid)}, so it cannot be"
            " matched with the judge the report validated",
            report,
        )
    return JudgeCheck("validated", "a passing report validated this judge", report)


def judge_counts(checks: Mapping[str, JudgeCheck]) -> dict[str, int]:
    """How many judged verdicts have each status."""
    counts: dict[str, int] = dict.fromkeys(JUDGE_STATUSES, 0)
    for check in checks.values():
        counts[check.status] += 1
    return counts
