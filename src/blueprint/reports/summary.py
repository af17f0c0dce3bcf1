"""A set at a glance: what its rows are, where they came from, what they cover, what exports drop.

One streaming pass over the rows fills counters (by oracle type, evaluator, case family,
provenance, split), the linked-concern coverage, the action-risk matrix, the rows of each case
family a grader may score (for its power) and the list of retired cases; memory stays bounded
by those counters and a few capped lists (retired cases, and the rows a rendered page shows of
each family). The rows that each vendor export would leave out
are what :func:`blueprint.convert.convert` itself reports, written to a scratch folder and
thrown away, so the summary never disagrees with ``blueprint convert``.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from blueprint.convert import ConvertOptions, complete_header, convert, open_set
from blueprint.core.errors import BlueprintError, EveryRowExcluded
from blueprint.core.issues import ERROR_CODES, ValidationReport
from blueprint.core.model import EVALUATOR_TYPES, ORACLE_TYPES, PROVENANCES, STARTER_PROVENANCES
from blueprint.formats import FOLDER, REGISTRY, LossyField, SourceRow, StrPath
from blueprint.grading.semantics import grade_row
from blueprint.reports.power import BASELINE_RATE, PowerTable, check_power_options, power_table
from blueprint.reports.risk import RiskMatrix
from blueprint.validation.checks import RowView, SetState, effective_evaluator
from blueprint.validation.inputtext import canonical_text, split_of
from blueprint.validation.stream import StreamValidator, ValidationOptions

#: the label of a row that does not say (no split, no evaluator, no case family)
NONE: Final = "(none)"
#: where a promotion records who reviewed a row (see blueprint.authoring.curate.promote)
REVIEW_EXTENSION: Final = "blueprint-review"
IMPORT_EXTENSION: Final = "blueprint-import"

#: how much of a row a rendered page shows
INPUT_EXCERPT: Final = 200
BEHAVIOUR_EXCERPT: Final = 300
#: how many rows of each case family a rendered page lists by default
ROWS_PER_FAMILY: Final = 20
#: how many retired cases the summary keeps by id (the count is always exact)
RETIRED_LIMIT: Final = 1000

#: how the provenance mix groups the seven provenances
ProvenanceGroup = Literal["gold", "starter", "imported"]


def provenance_group(provenance: Any) -> ProvenanceGroup:
    """Starter material, an import nobody has reviewed, or gold (every other provenance)."""
    if provenance in STARTER_PROVENANCES:
        return "starter"
    if provenance == "imported":
        return "imported"
    return "gold"


# --- judge validation: the seam where judge-report's statuses come in -------------------------

JudgeState = Literal["validated", "stale", "insufficient", "failed", "missing"]
#: the status of a family none of whose rows an LLM judge grades
NOT_NEEDED: Final = "not-needed"

#: what a reader sees for each status
JUDGE_LABELS: Final[dict[str, str]] = {
    "validated": "validated",
    "stale": "stale: the family changed after the report",
    "insufficient": "too few labelled cases",
    "failed": "failed validation",
    "missing": "not validated",
    NOT_NEEDED: "not needed",
}


class JudgeStatusLike(Protocol):
    """What the summary reads of a family's judge-validation status."""

    @property
    def status(self) -> str: ...


# --- what one pass collects --------------------------------------------------------------------


@dataclass(frozen=True)
class RowExcerpt:
    """What a rendered page shows of one row."""

    id: str | None
    input: str
    expected_behavior: str
    provenance: str | None
    starter: bool
    retired: bool


@dataclass
class FamilySummary:
    """One case family (declared or only named by rows), or the rows in none."""

    #: None for the rows that name no case family
    id: str | None
    declared: bool
    title: str | None = None
    description: str | None = None
    oracle_type: str | None = None
    evaluator: str | None = None
    severity: str | None = None
    linked_concerns: list[str] = field(default_factory=list)
    rows: int = 0
    starter_rows: int = 0
    #: rows a grader may score: not a starter example, not barred, not graded by a person
    scored_rows: int = 0
    by_evaluator: Counter[str] = field(default_factory=Counter)
    excerpts: list[RowExcerpt] = field(default_factory=list)
    judge_status: str = NOT_NEEDED

    @property
    def judged(self) -> bool:
        """Whether an LLM judge grades any of its rows."""
        return self.by_evaluator.get("llm-judge", 0) > 0 or self.evaluator == "llm-judge"

    @property
    def judge_label(self) -> str:
        return JUDGE_LABELS.get(self.judge_status, self.judge_status)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "declared": self.declared,
            "title": self.title,
            "oracleType": self.oracle_type,
            "evaluator": self.evaluator,
            "severity": self.severity,
            "linkedConcerns": self.linked_concerns,
            "rows": self.rows,
            "starterRows": self.starter_rows,
            "byEvaluator": _ordered(self.by_evaluator, EVALUATOR_TYPES),
            "judgeValidation": {"status": self.judge_status, "label": self.judge_label},
        }


@dataclass(frozen=True)
class Retired:
    id: str | None
    family: str | None
    condition: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "family": self.family, "condition": self.condition}


@dataclass(frozen=True)
class ConcernCoverage:
    concern: str
    #: rows that name the concern in their own linkedConcerns
    rows: int
    #: case families that name it
    families: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"concern": self.concern, "rows": self.rows, "families": list(self.families)}


@dataclass
class ExportCheck:
    """What ``blueprint convert`` to one vendor format would leave out, or why it refuses."""

    format: str
    written: int | None = None
    excluded: list[LossyField] = field(default_factory=list)
    refused: str | None = None

    @property
    def left_out(self) -> int:
        return sum(item.count for item in self.excluded)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "written": self.written,
            "leftOut": self.left_out,
            "excluded": [
                {"reason": item.reason, "count": item.count, "rowIds": list(item.row_ids)}
                for item in self.excluded
            ],
            "refused": self.refused,
        }


@dataclass(frozen=True)
class SummaryOptions:
    source_format: str | None = None
    #: work out what each vendor export leaves out (one conversion per vendor format)
    exports: bool = True
    #: how many rows of each family to keep for a rendered page
    rows_per_family: int = ROWS_PER_FAMILY
    #: the judge-validation status of each case family, by id; a family an LLM judge grades
    #: that is not here is "missing". None: worked out from the reports the set points at
    #: and ``judge_reports``
    judge_status: Mapping[str | None, JudgeStatusLike] | None = None
    #: judge-validation reports the project configuration names for this set
    judge_reports: tuple[Path, ...] = ()
    #: the pass rate each family's power is worked out at (one half: where it varies most)
    baseline_rate: float = BASELINE_RATE
    #: a change in pass rate to report the rows each family needs for (None: not asked)
    detect: float | None = None


@dataclass
class SetSummary:
    source: str
    format: str
    name: Any = None
    version: Any = None
    description: Any = None
    rows: int = 0
    unreadable: int = 0
    errors: int = 0
    by_oracle_type: Counter[str] = field(default_factory=Counter)
    by_evaluator: Counter[str] = field(default_factory=Counter)
    by_family: Counter[str] = field(default_factory=Counter)
    by_provenance: Counter[str] = field(default_factory=Counter)
    by_group: Counter[str] = field(default_factory=Counter)
    by_split: Counter[str] = field(default_factory=Counter)
    #: rows a person promoted (they carry a review record)
    reviewed: int = 0
    #: rows that still have values an import derived and nobody confirmed
    derived_to_confirm: int = 0
    families: list[FamilySummary] = field(default_factory=list)
    concerns: list[ConcernCoverage] = field(default_factory=list)
    retired: list[Retired] = field(default_factory=list)
    retired_count: int = 0
    risk: RiskMatrix = field(default_factory=RiskMatrix)
    exports: list[ExportCheck] = field(default_factory=list)
    exports_checked: bool = False
    rows_per_family: int = ROWS_PER_FAMILY
    power: PowerTable = field(default_factory=PowerTable)

    @property
    def valid(self) -> bool:
        return self.errors == 0

    @property
    def uncovered(self) -> list[ConcernCoverage]:
        """Concerns a case family names that no row names."""
        return [item for item in self.concerns if item.rows == 0]

    @property
    def starter_rows(self) -> int:
        return self.by_group.get("starter", 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "name": self.name,
            "version": self.version,
            "rows": self.rows,
            "valid": self.valid,
            "errors": self.errors,
            "byOracleType": _ordered(self.by_oracle_type, ORACLE_TYPES),
            "byEvaluator": _ordered(self.by_evaluator, EVALUATOR_TYPES),
            "byFamily": _ordered(self.by_family, [f.id for f in self.families if f.id]),
            "byProvenance": _ordered(self.by_provenance, PROVENANCES),
            "provenanceMix": {group: self.by_group.get(group, 0) for group in _GROUPS},
            "reviewed": self.reviewed,
            "derivedToConfirm": self.derived_to_confirm,
            "bySplit": _ordered(self.by_split, ()),
            "families": [family.to_json() for family in self.families],
            "concerns": [item.to_json() for item in self.concerns],
            "uncoveredConcerns": [item.concern for item in self.uncovered],
            "exports": (
                {check.format: check.to_json() for check in self.exports}
                if self.exports_checked
                else None
            ),
            "retired": {
                "count": self.retired_count,
                "rows": [item.to_json() for item in self.retired],
            },
            "risk": self.risk.to_json(),
            "power": self.power.to_json(),
        }


_GROUPS: Final[tuple[ProvenanceGroup, ...]] = ("gold", "starter", "imported")


def _ordered(counter: Mapping[str, int], canonical: Iterable[str | None]) -> dict[str, int]:
    """Counts in the canonical order of their keys, others by name after them, (none) last."""
    known = [key for key in canonical if key is not None and counter.get(key)]
    others = sorted(key for key in counter if key not in known and key != NONE and counter[key])
    result = {key: counter[key] for key in known + others}
    if counter.get(NONE):
        result[NONE] = counter[NONE]
    return result


def _excerpt(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _label(value: Any) -> str:
    return value if isinstance(value, str) and value else NONE


# --- the pass ----------------------------------------------------------------------------------


def _judge_statuses(
    path: Path, options: SummaryOptions, header: Mapping[str, Any], summary: SetSummary
) -> Mapping[str | None, JudgeStatusLike]:
    """The judge-validation status of each family from the reports the set (or the project
    configuration) points at; the rows are read a second time only when there are some."""
    from blueprint.reports import judging

    if not any(family.judged for family in summary.families):
        return {}
    if not judging.references(path, header, options.judge_reports):
        return {}
    source = open_set(path, options.source_format)
    rows = (item.data for item in source.rows if isinstance(item, SourceRow))
    return judging.judge_status(path, header, rows, options.judge_reports)


def summarize(path: StrPath, options: SummaryOptions | None = None) -> SetSummary:
    """Summarize a set file of any readable format, reading its rows once."""
    path = Path(path)
    options = options or SummaryOptions()
    check_power_options(options.baseline_rate, options.detect)
    source = open_set(path, options.source_format)
    header, _ = complete_header(source)
    summary = SetSummary(str(path), source.format, rows_per_family=options.rows_per_family)
    summary.name = header.get("name")
    summary.version = header.get("version")
    summary.description = header.get("description")

    # errors only: whether the set is valid decides whether a vendor export writes it
    report = ValidationReport(source=str(path), format=source.format)
    # no row ids kept: the report has no line a row, and memory stays flat
    validator = StreamValidator(report, ValidationOptions(select=ERROR_CODES, row_ids=False))
    validator.check_header(header, source.notes)
    validator.follow(source)
    state = SetState.from_header(header)

    families: dict[str | None, FamilySummary] = {}
    for declared in (state.families or {}).values():
        family = FamilySummary(
            declared["id"],
            declared=True,
            title=declared.get("title") if isinstance(declared.get("title"), str) else None,
            description=declared.get("description")
            if isinstance(declared.get("description"), str)
            else None,
            oracle_type=declared.get("oracleType")
            if declared.get("oracleType") in ORACLE_TYPES
            else None,
            evaluator=declared.get("evaluator")
            if declared.get("evaluator") in EVALUATOR_TYPES
            else None,
            severity=declared.get("severity")
            if isinstance(declared.get("severity"), str)
            else None,
            linked_concerns=_strings(declared.get("linkedConcerns")),
        )
        families[family.id] = family
    concern_rows: Counter[str] = Counter()

    for item in source.rows:
        validator.report_reading()
        validator.check_row(item, source.format)
        summary.rows += 1
        if not isinstance(item, SourceRow):
            summary.unreadable += 1
            continue
        row = RowView(item.index, item.data, item.line)
        case = row.case
        evaluator = effective_evaluator(row, state)
        family_name = case.get("caseFamily") if isinstance(case.get("caseFamily"), str) else None
        provenance = case.get("provenance") if case.get("provenance") in PROVENANCES else None
        summary.by_oracle_type[_label(row.oracle_type)] += 1
        summary.by_evaluator[_label(evaluator)] += 1
        summary.by_family[_label(family_name)] += 1
        summary.by_provenance[_label(provenance)] += 1
        summary.by_split[_label(split_of(item.data))] += 1
        group = provenance_group(provenance)
        summary.by_group[group] += 1
        extensions = case.get("extensions")
        if isinstance(extensions, dict) and isinstance(extensions.get(REVIEW_EXTENSION), dict):
            summary.reviewed += 1
        if row.imported().get("derived"):
            summary.derived_to_confirm += 1
        for concern in dict.fromkeys(_strings(case.get("linkedConcerns"))):
            concern_rows[concern] += 1
        summary.risk.add(row.id, case, evaluator, family_name)

        if family_name not in families:
            families[family_name] = FamilySummary(family_name, declared=False)
        family = families[family_name]
        family.rows += 1
        family.by_evaluator[_label(evaluator)] += 1
        starter = group == "starter"
        family.starter_rows += starter
        family.scored_rows += not starter and _scorable(item.data, state.family_of(row))
        condition = case.get("retirementCondition")
        retired = isinstance(condition, str) and bool(condition.strip())
        if retired:
            summary.retired_count += 1
            if len(summary.retired) < RETIRED_LIMIT:
                summary.retired.append(Retired(row.id, family_name, str(condition)))
        if len(family.excerpts) < options.rows_per_family:
            behaviour = case.get("expectedBehavior")
            family.excerpts.append(
                RowExcerpt(
                    row.id,
                    _excerpt(canonical_text(row.data.get("input")), INPUT_EXCERPT),
                    _excerpt(behaviour, BEHAVIOUR_EXCERPT) if isinstance(behaviour, str) else "",
                    provenance,
                    starter,
                    retired,
                )
            )
    validator.report_reading()
    summary.errors = report.counts().get("error", 0)

    # declared families first, in the set's order; then families rows name but the set does
    # not define; then the rows in none
    summary.families = sorted(
        families.values(), key=lambda f: (not f.declared, f.id is None, 0 if f.declared else f.id)
    )
    statuses = (
        options.judge_status
        if options.judge_status is not None
        else _judge_statuses(path, options, header, summary)
    )
    for family in summary.families:
        if family.judged:
            given = statuses.get(family.id) if family.id is not None else None
            family.judge_status = given.status if given is not None else "missing"
    named_by: dict[str, list[str]] = {}
    for family in summary.families:
        for concern in family.linked_concerns:
            named_by.setdefault(concern, []).append(str(family.id))
    summary.concerns = [
        ConcernCoverage(concern, concern_rows.get(concern, 0), tuple(named_by.get(concern, ())))
        for concern in sorted(set(concern_rows) | set(named_by))
    ]
    summary.power = power_table(
        ((family.id, family.rows, family.scored_rows) for family in summary.families),
        options.baseline_rate,
        options.detect,
    )
    if options.exports:
        summary.exports_checked = True
        if summary.valid:
            summary.exports = check_exports(path, options.source_format)
        else:
            why = (
                f"the set is not valid ({summary.errors} error(s)); blueprint convert writes"
                " nothing until it is (blueprint validate lists the errors)"
            )
            summary.exports = [ExportCheck(name, refused=why) for name in _vendor_formats()]
    return summary


def _scorable(data: Any, family: Mapping[str, Any] | None) -> bool:
    """Whether a grader may score the row: what ``blueprint grade`` makes of it with no result
    is "not-run" (a person's row is "needs-human", a barred one "invalid"; a row that is not
    an object, grade skips)."""
    if not isinstance(data, dict):
        return False
    evaluator = family.get("evaluator") if family is not None else None
    return grade_row(data, None, family_evaluator=evaluator).verdict == "not-run"


def scored_row(data: Any, family: Mapping[str, Any] | None) -> bool:
    """Whether a row counts among its family's scored rows: a grader may score it, and it
    is not a starter example."""
    if not isinstance(data, dict):
        return False
    evaluator = family.get("evaluator") if family is not None else None
    verdict = grade_row(data, None, family_evaluator=evaluator)
    return verdict.verdict == "not-run" and not verdict.starter


def _vendor_formats() -> list[str]:
    return [name for name, codec in REGISTRY.items() if not codec.lossless and codec.can_write]


def check_exports(path: StrPath, source_format: str | None = None) -> list[ExportCheck]:
    """What ``blueprint convert`` with its default options would leave out of each vendor
    format, found by converting into a scratch folder that is then removed."""
    checks = []
    with tempfile.TemporaryDirectory(prefix="blueprint-summary-") as folder:
        for name in _vendor_formats():
            codec = REGISTRY[name]
            extension = codec.extensions[0] if codec.extensions else FOLDER
            target = Path(folder) / name / f"export{extension}"
            target.parent.mkdir()
            check = ExportCheck(name)
            try:
                result = convert(
                    path, target, ConvertOptions(source_format=source_format, target_format=name)
                )
            except EveryRowExcluded as error:
                # convert writes nothing then, but what it would leave out is the answer here
                check.written = 0
                check.excluded = [item for item in error.lossy if item.kind == "excluded"]
            except BlueprintError as error:
                check.refused = str(error).replace(str(target), f"the {name} file")
            else:
                check.written = result.export.rows
                check.excluded = [item for item in result.export.lossy if item.kind == "excluded"]
            checks.append(check)
    return checks
