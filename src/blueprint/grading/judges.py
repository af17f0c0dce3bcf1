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


class JudgeChecks:
    """The judge check of each judged verdict, worked out when first asked for: the set's
    judge-validation reports are read, and the set once more to hash its families, only
    when a judged row got a pass or a fail; a check depends on the row's case family and the
    judge its verdict names, so it is worked out once for each (a run of a million judged
    rows keeps a few)."""

    def __init__(
        self, set_path: Path, header: Mapping[str, Any] | None, source_format: str | None
    ) -> None:
        self.set_path = set_path
        self.header = header
        self.source_format = source_format
        self._statuses: dict[str | None, Any] | JudgeCheck | None = None
        self._found: dict[tuple[Any, ...], JudgeCheck] = {}

    def check(self, verdict: RowVerdict) -> JudgeCheck | None:
        """The check of a verdict that counts (a pass or a fail of a judged row that is not
        a starter example); None for any other."""
        if not verdict.judged or verdict.starter or verdict.verdict not in ("pass", "fail"):
            return None
        judge = verdict.judge or {}
        key = (verdict.case_family, *sorted(judge.items()))
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = self._worked_out(verdict)
        return found

    def _worked_out(self, verdict: RowVerdict) -> JudgeCheck:
        statuses = self._read()
        if isinstance(statuses, JudgeCheck):
            return statuses
        status = statuses.get(verdict.case_family)
        if status is None:
            return JudgeCheck(
                "missing", "no judge-validation report the set points at covers the family"
            )
        if status.status != "validated":
            reason = "; ".join(status.reasons) or f"the report's status is {status.status}"
            return JudgeCheck(status.status, reason, status.report)
        return _same_judge(verdict, status.judge, status.report)

    def _read(self) -> dict[str | None, Any] | JudgeCheck:
        """Each family's report status, or the check every verdict gets when there is
        none to read."""
        if self._statuses is not None:
            return self._statuses
        refs = references(self.set_path, self.header)
        if not refs:
            self._statuses = JudgeCheck(
                "missing",
                "the set points at no judge-validation report (judgeValidation); see"
                " docs/judge-validation.md",
            )
            return self._statuses
        try:
            families = read_set_families(self.set_path, format=self.source_format)
        except (LabelsError, BlueprintError) as error:
            self._statuses = JudgeCheck(
                "unreadable", f"the set's case families do not read: {error}"
            )
            return self._statuses
        self._statuses = dict(statuses_for(self.set_path, families, refs)[0])
        return self._statuses


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


def judge_counts(checks: Iterable[JudgeCheck]) -> dict[str, int]:
    """How many judged verdicts have each status."""
    counts: dict[str, int] = dict.fromkeys(JUDGE_STATUSES, 0)
    for check in checks:
        counts[check.status] += 1
    return counts
