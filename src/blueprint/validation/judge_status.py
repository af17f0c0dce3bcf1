"""Whether a case family's LLM judge is validated: the judge-validation reports a set points
at, read against the family's rows as they are now.

The validator asks this after its pass (``settle_judge_conditions``): a current, passing report
turns the family's ``conditional-evaluator`` warnings into ``judge-validated`` infos. Making
a report from human labels (the statistics) is :mod:`blueprint.reports.judging`'s work; this
module only reads reports, so ``blueprint validate`` never loads the statistics libraries.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from blueprint.core.errors import BlueprintError, ParseError
from blueprint.core.issues import Issue, ValidationReport, make_issue
from blueprint.core.judgeprompt import current_template, template_id
from blueprint.formats import SourceRow, UnreadableRow, refuse_special_file, resolve_codec
from blueprint.io import jsonvalues, limits

if TYPE_CHECKING:
    from blueprint.formats import Codec

REPORT_VERSION: Final = "blueprint.judge-report/v1"
#: the set-level and case-family field that points at judge-validation reports
JUDGE_VALIDATION_FIELD: Final = "judgeValidation"
JUDGE_EVALUATOR: Final = "llm-judge"

Status = Literal["validated", "stale", "insufficient", "failed", "unreadable", "missing"]


class LabelsError(BlueprintError, ValueError):
    """A labels file, a judge report, or the set they speak of cannot be used; names the file
    and line."""


# --- thresholds -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """What a case family's labels must show for the judge to count as validated there.

    The defaults and their sources are documented in docs/judge-validation.md.
    """

    #: labelled cases a family needs (all of them when the family has fewer rows)
    min_labels: int = 30
    #: and at least this fraction of the family's rows (0: the count alone decides)
    min_fraction: float = 0.0
    #: share of cases where judge and humans give the same label
    min_agreement: float = 0.8
    #: Cohen's kappa (quadratic-weighted for ordinal scores); 0.6 is the lower edge of
    #: Landis and Koch's "substantial" band
    min_kappa: float = 0.6
    #: Krippendorff's alpha among the human raters, when there are several; Krippendorff's
    #: lowest limit for tentative conclusions
    min_alpha: float = 0.667
    #: the judge's bias (judge minus humans, as a fraction of the scale) in either direction
    max_bias: float = 0.1

    def __post_init__(self) -> None:
        if self.min_labels < 1:
            raise LabelsError("min-labels must be at least 1")
        for name in ("min_fraction", "min_agreement", "min_alpha", "max_bias"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise LabelsError(f"{name.replace('_', '-')} must be between 0 and 1, not {value}")
        if not -1 <= self.min_kappa <= 1:
            raise LabelsError(f"min-kappa must be between -1 and 1, not {self.min_kappa}")

    def required(self, rows: int) -> int:
        """Labelled cases a family of ``rows`` rows needs."""
        return min(rows, max(self.min_labels, math.ceil(self.min_fraction * rows)))

    def to_json(self) -> dict[str, Any]:
        return {_camel(item.name): getattr(self, item.name) for item in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Thresholds:
        names = {_camel(item.name): item.name for item in fields(cls)}
        return cls(**{names[key]: value for key, value in data.items() if key in names})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# --- the set's case families ----------------------------------------------------------------


@dataclass
class FamilyRows:
    """What the judge-validation step needs of one case family's rows."""

    family: str | None
    rows: int = 0
    judge_rows: int = 0
    #: (id, canonical JSON) of every row, hashed in id order once all are read
    serialized: list[tuple[str, int, bytes]] = field(default_factory=list)

    def content_hash(self) -> str:
        digest = hashlib.sha256()
        for _, _, data in sorted(self.serialized):
            digest.update(data)
            digest.update(b"\n")
        return "sha256:" + digest.hexdigest()


@dataclass
class SetFamilies:
    """A set's rows grouped by case family (None: rows that name none)."""

    header: dict[str, Any] | None
    families: dict[str | None, FamilyRows]
    #: each case id's family and whether an LLM judge grades it
    cases: dict[str, tuple[str | None, bool]]
    #: the family of each row, by position, for issues that name a row index
    family_at: list[str | None]

    def hashes(self) -> dict[str | None, str]:
        return {name: rows.content_hash() for name, rows in self.families.items()}


def index_families(header: Mapping[str, Any] | None, rows: Iterable[Any]) -> SetFamilies:
    """Group a set's rows (canonical JSON data) by case family, with the family hashes."""
    declared: dict[str, Mapping[str, Any]] = {}
    for family in (header or {}).get("caseFamilies") or []:
        if isinstance(family, Mapping) and isinstance(family.get("id"), str):
            declared.setdefault(family["id"], family)
    families: dict[str | None, FamilyRows] = {}
    cases: dict[str, tuple[str | None, bool]] = {}
    family_at: list[str | None] = []
    for index, row in enumerate(rows):
        data = row if isinstance(row, Mapping) else {}
        metadata = data.get("metadata")
        case = metadata.get("case") if isinstance(metadata, Mapping) else None
        case = case if isinstance(case, Mapping) else {}
        name = case.get("caseFamily")
        name = name if isinstance(name, str) else None
        evaluator = case.get("evaluator")
        if "evaluator" not in case and name in declared:
            evaluator = declared[name].get("evaluator")
        judged = evaluator == JUDGE_EVALUATOR
        group = families.get(name)
        if group is None:
            group = families[name] = FamilyRows(name)
        group.rows += 1
        group.judge_rows += judged
        row_id = data.get("id")
        row_id = row_id if isinstance(row_id, str) else ""
        group.serialized.append((row_id, index, jsonvalues.dumps(row, sort_keys=True)))
        if row_id:
            cases.setdefault(row_id, (name, judged))
        family_at.append(name)
    return SetFamilies(dict(header) if header is not None else None, families, cases, family_at)


def read_set_families(path: Path, *, format: str | None = None) -> SetFamilies:
    """Read a set through its codec and group its rows by case family; a set with rows that
    cannot be read is refused."""
    codec = resolve_codec(path, format, reading=True)
    source = codec.open(path)
    source.require_structure()

    def rows() -> Iterator[Any]:
        for item in source.rows:
            if isinstance(item, UnreadableRow):
                file = item.file or path  # a dataset folder's row names its data file
                where = f"{file}:{item.line}" if item.line is not None else str(file)
                raise LabelsError(f"{where}: row {item.index} cannot be read: {item.reason}")
            yield item.data

    return index_families(source.header, rows())


# --- closing the condition ------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeStatus:
    """Whether a case family's LLM judge is validated, and by which report.

    ``status`` is ``validated`` (a passing report covers the family's current rows),
    ``stale`` (the family's rows changed after the report was made), ``insufficient`` (too
    few labelled cases for the family as it is now), ``failed`` (the report's verdict for the
    family fails), ``unreadable`` (a referenced report cannot be read) or ``missing`` (no
    referenced report covers the family).
    """

    family: str | None
    status: Status
    rows: int
    judge_rows: int
    report: str | None = None
    agreement: float | None = None
    kappa: float | None = None
    labelled: int | None = None
    required: int | None = None
    reasons: tuple[str, ...] = ()
    #: the judge the report validated (``model``, and ``template`` or ``templates`` for a
    #: family of several oracle types), where its labels named it
    judge: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "status": self.status,
            "rows": self.rows,
            "judgeRows": self.judge_rows,
            "report": self.report,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "labelled": self.labelled,
            "required": self.required,
            "reasons": list(self.reasons),
            "judge": self.judge,
        }


#: which status speaks for a family when several reports cover it: the best one
_PRIORITY: Final[dict[str, int]] = {
    "validated": 0,
    "stale": 1,
    "insufficient": 2,
    "failed": 3,
    "unreadable": 4,
    "missing": 5,
}


@dataclass(frozen=True)
class ReportReference:
    """A judge-validation report a set points at: where, as written, and for which families
    (None: every family the report covers)."""

    path: Path
    written: str
    families: frozenset[str] | None
    #: JSON path of the reference, for issues about it
    where: str
    #: a report named by the project configuration applies only to the set it was made for
    from_config: bool = False


def references(
    set_path: Path, header: Mapping[str, Any] | None, extra: Sequence[Path] = ()
) -> list[ReportReference]:
    """The reports a set points at: its own ``judgeValidation``, its case families', and
    those the project configuration names (``extra``, already resolved)."""
    folder = Path(set_path).parent
    found: list[ReportReference] = []

    def add(value: Any, families: frozenset[str] | None, where: str) -> None:
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item:
                found.append(ReportReference(folder / item, item, families, where))

    header = header or {}
    add(header.get(JUDGE_VALIDATION_FIELD), None, f"$.{JUDGE_VALIDATION_FIELD}")
    for index, family in enumerate(header.get("caseFamilies") or []):
        if isinstance(family, Mapping) and isinstance(family.get("id"), str):
            add(
                family.get(JUDGE_VALIDATION_FIELD),
                frozenset({family["id"]}),
                f"$.caseFamilies[{index}].{JUDGE_VALIDATION_FIELD}",
            )
    for path in extra:
        found.append(ReportReference(Path(path), str(path), None, "$", from_config=True))
    return found


def load_report(path: Path) -> dict[str, Any]:
    """A judge-validation report's JSON; :class:`LabelsError` when it is not one."""
    try:
        refuse_special_file(path)
        data = path.read_bytes()
    except FileNotFoundError:
        raise LabelsError(f"{path}: no such report") from None
    except (OSError, ParseError) as error:
        raise LabelsError(f"{path}: cannot read it: {error}") from None
    if limits.exceeded("max_file_bytes", len(data)):
        raise LabelsError(f"{path}: over the size limit; {limits.hint('max_file_bytes')}")
    try:
        report = jsonvalues.loads(data)
    except ValueError as error:
        raise LabelsError(f"{path}: not valid JSON: {error}") from None
    if (
        not isinstance(report, dict)
        or report.get("reportVersion") != REPORT_VERSION
        or not isinstance(report.get("families"), list)
        or not all(isinstance(entry, dict) for entry in report["families"])
    ):
        raise LabelsError(f"{path}: not a judge-validation report ({REPORT_VERSION})")
    return report


def _applies(
    reference: ReportReference, report: Mapping[str, Any], set_path: Path, name: Any
) -> bool:
    if not reference.from_config:
        return True
    made_for = report.get("set")
    if isinstance(made_for, str):
        for candidate in (reference.path.parent / made_for, Path(made_for)):
            try:
                if candidate.resolve() == Path(set_path).resolve():
                    return True
            except OSError:
                continue
    return name is not None and report.get("setName") == name


def _family_status(
    entry: Mapping[str, Any], rows: FamilyRows, current_hash: str, written: str
) -> JudgeStatus:
    thresholds = Thresholds.from_json(entry.get("_thresholds") or {})
    labelled = len(entry.get("caseIds") or [])
    required = thresholds.required(rows.rows)
    agreement = (entry.get("agreement") or {}).get("value")
    kappa = (entry.get("kappa") or {}).get("value")
    common = {
        "family": rows.family,
        "rows": rows.rows,
        "judge_rows": rows.judge_rows,
        "report": written,
        "agreement": agreement,
        "kappa": kappa,
        "labelled": labelled,
        "required": required,
    }
    judge = entry.get("judge")
    if isinstance(judge, dict):
        common["judge"] = dict(judge)
    if entry.get("rowsHash") != current_hash:
        changed = ("its rows changed after the report was made",)
        return JudgeStatus(status="stale", reasons=changed, **common)  # type: ignore[arg-type]
    old = [template for template in report_templates(judge) if not current_template(template)]
    if old:
        reasons: tuple[str, ...] = tuple(
            f"the judge template changed after the report was made (the report validated"
            f" {template}; Blueprint renders {_now(template)} now)"
            for template in old
        )
        return JudgeStatus(status="stale", reasons=reasons, **common)  # type: ignore[arg-type]
    if entry.get("verdict") == "insufficient" or labelled < required:
        reasons = tuple(entry.get("reasons") or ())
        return JudgeStatus(status="insufficient", reasons=reasons, **common)  # type: ignore[arg-type]
    if entry.get("verdict") != "pass":
        reasons = tuple(entry.get("reasons") or ())
        return JudgeStatus(status="failed", reasons=reasons, **common)  # type: ignore[arg-type]
    return JudgeStatus(status="validated", **common)  # type: ignore[arg-type]


def report_templates(judge: Any) -> list[str]:
    """The judge templates a report's family entry names (``template`` or ``templates``)."""
    if not isinstance(judge, Mapping):
        return []
    found = judge.get("templates")
    if not isinstance(found, list):
        found = [judge.get("template")]
    return [template for template in found if isinstance(template, str)]


def _now(template: Any) -> str:
    """The template Blueprint renders today for the oracle type a template id names."""
    oracle = str(template).split("@", 1)[0]
    try:
        return template_id(oracle)
    except KeyError:
        return f"no template for {oracle!r}"


def statuses_for(
    set_path: Path, families: SetFamilies, refs: Sequence[ReportReference]
) -> tuple[dict[str | None, JudgeStatus], dict[str | None, ReportReference]]:
    """Each judged family's status under the given references, and the reference that
    decided it (absent for ``missing``)."""
    loaded: dict[Path, dict[str, Any] | str] = {}
    best: dict[str | None, JudgeStatus] = {}
    deciding: dict[str | None, ReportReference] = {}
    hashes = families.hashes()
    name = (families.header or {}).get("name")
    for reference in refs:
        if reference.path not in loaded:
            try:
                loaded[reference.path] = load_report(reference.path)
            except LabelsError as error:
                loaded[reference.path] = str(error)
        report = loaded[reference.path]
        for family, rows in families.families.items():
            if not rows.judge_rows:
                continue
            if reference.families is not None and family not in reference.families:
                continue
            if isinstance(report, str):
                if reference.families is None and reference.from_config:
                    continue  # an unreadable project-wide report is no set's own problem
                status = JudgeStatus(
                    family,
                    "unreadable",
                    rows.rows,
                    rows.judge_rows,
                    reference.written,
                    reasons=(report,),
                )
            else:
                if not _applies(reference, report, set_path, name):
                    continue
                entry = next(
                    (item for item in report["families"] if item.get("family") == family), None
                )
                if entry is None:
                    continue
                entry = {**entry, "_thresholds": report.get("thresholds") or {}}
                status = _family_status(entry, rows, hashes[family], reference.written)
            current = best.get(family)
            if current is None or _PRIORITY[status.status] < _PRIORITY[current.status]:
                best[family] = status
                deciding[family] = reference
    for family, rows in families.families.items():
        if rows.judge_rows and family not in best:
            best[family] = JudgeStatus(family, "missing", rows.rows, rows.judge_rows)
    return best, deciding


def judge_status(
    set_path: Path,
    header: Mapping[str, Any] | None,
    rows: Iterable[Any],
    extra_reports: Sequence[Path] = (),
) -> dict[str | None, JudgeStatus]:
    """The judge-validation status of every case family with ``llm-judge`` rows.

    ``header`` is the set's set-level fields (``SetSource.header``), ``rows`` its rows as
    canonical JSON data (read once), ``extra_reports`` the reports the project
    configuration names (``SetSettings.judge_reports``), already resolved. Keys are family
    ids, None for rows that name no family; families without LLM-judge rows have no entry
    (they need no validation). Each value says ``validated``, ``stale``, ``insufficient``,
    ``failed``, ``unreadable`` or ``missing``, with the deciding report, its agreement and
    kappa, and the labelled and required sample sizes. Reading the reports costs nothing when
    the set points at none.
    """
    families = index_families(header, rows)
    refs = references(set_path, header, extra_reports)
    return statuses_for(set_path, families, refs)[0]


_MISSING: Final = object()
_FAMILY_PATH: Final = re.compile(r"^\$\.caseFamilies\[(\d+)\]")

_STATUS_CODES: Final[dict[str, str]] = {
    "stale": "judge-report-stale",
    "insufficient": "judge-report-insufficient",
    "failed": "judge-report-failed",
    "unreadable": "judge-report-unreadable",
}


def settle_judge_conditions(
    report: ValidationReport,
    path: Path,
    codec: Codec,
    header: Mapping[str, Any] | None,
    wants: Callable[[str], bool],
    extra_reports: Sequence[Path] = (),
    rows: Iterable[Any] | None = None,
) -> None:
    """After the validator's pass: turn the ``conditional-evaluator`` warnings of families a
    passing judge-validation report covers into ``judge-validated`` infos, and report
    references that are stale, too small, failing or unreadable. Does nothing (reads nothing)
    when the set points at no report. ``rows`` are the rows validated, where they are not
    the file's (a row edited but not saved); else the file is read again."""
    refs = references(path, header, extra_reports)
    if not refs:
        return
    try:
        if rows is None:
            source = codec.open(path)
            rows = (item.data if isinstance(item, SourceRow) else None for item in source.rows)
        families = index_families(header, rows)
    except BlueprintError:
        return  # the validator's own pass has reported why the set cannot be read
    statuses, deciding = statuses_for(path, families, refs)
    settled: list[Issue] = []
    declared = [
        family.get("id") if isinstance(family, Mapping) else None
        for family in (header or {}).get("caseFamilies") or []
    ]
    for issue in report.issues:
        family: Any = _MISSING
        if issue.code == "conditional-evaluator" and issue.row_index is not None:
            if issue.row_index < len(families.family_at):
                family = families.family_at[issue.row_index]
        elif (
            issue.code == "conditional-evaluator"
            and (match := _FAMILY_PATH.match(issue.path))
            and int(match.group(1)) < len(declared)
        ):
            # the finding on the family's own declaration ($.caseFamilies[1].evaluator)
            family = declared[int(match.group(1))]
        if family is not _MISSING:
            status = statuses.get(family)
            if status is not None and status.status == "validated":
                if wants("judge-validated"):
                    settled.append(
                        make_issue(
                            "judge-validated",
                            path=issue.path,
                            row_index=issue.row_index,
                            row_id=issue.row_id,
                            line=issue.line,
                            report=status.report,
                            agreement=_shown(status.agreement),
                            kappa=_shown(status.kappa),
                        )
                    )
                continue
        settled.append(issue)
    for family, status in statuses.items():
        code = _STATUS_CODES.get(status.status)
        if code is None or not wants(code):
            continue
        reference = deciding[family]
        settled.append(
            make_issue(
                code,
                path=reference.where,
                report=status.report,
                family=family if family is not None else "(rows without a case family)",
                labelled=status.labelled,
                required=status.required,
                rows=status.rows,
                reason="; ".join(status.reasons) or "the verdict fails",
            )
        )
    report.issues[:] = settled


def _shown(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"
