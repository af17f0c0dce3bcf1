"""Judge validation: how far an LLM judge agrees with human labels on a set's own cases.

The spec admits ``llm-judge`` for reference-answer, acceptable-set and rubric cases only if
the judge is validated against human labels on a sample of the task's own cases. This module
reads such labels, computes the agreement statistics per case family (percent agreement,
Cohen's kappa, Krippendorff's alpha across the human raters, the judge's bias, bootstrap
confidence intervals), gives a verdict against thresholds, and, once a set points at a
passing report, tells the validator which families' ``conditional-evaluator`` warnings the
report settles (see :func:`settle_judge_conditions` and :func:`judge_status`).

The statistics libraries (numpy, scikit-learn, scipy, krippendorff) are imported inside the
functions that use them: ``blueprint --help`` and ``blueprint validate`` never load them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from blueprint import jsonvalues, limits
from blueprint.errors import BlueprintError, ParseError
from blueprint.formats import SourceRow, UnreadableRow, refuse_special_file, resolve_codec
from blueprint.issues import Issue, ValidationReport, make_issue

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from blueprint.formats import Codec

REPORT_VERSION: Final = "blueprint.judge-report/v1"
#: the set-level and case-family field that points at judge-validation reports
JUDGE_VALIDATION_FIELD: Final = "judgeValidation"
#: the rater name that stands for the judge in the long layout (caseId, rater, label)
JUDGE_RATER: Final = "judge"
HUMAN_COLUMN: Final = "human"
JUDGE_EVALUATOR: Final = "llm-judge"
#: how many unknown case ids a refusal names before it says "and N more"
ID_PREVIEW: Final = 10

ScaleKind = Literal["pass-fail", "ordinal"]
FamilyVerdict = Literal["pass", "fail", "insufficient"]
Status = Literal["validated", "stale", "insufficient", "failed", "unreadable", "missing"]


class LabelsError(BlueprintError, ValueError):
    """A labels file (or the set it labels) cannot be used; names the file and line."""


# --- thresholds and options -----------------------------------------------------------------


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


@dataclass(frozen=True)
class BootstrapOptions:
    """The percentile bootstrap over cases: resamples, confidence level and seed."""

    resamples: int = 2000
    confidence: float = 0.95
    seed: int = 0

    def __post_init__(self) -> None:
        if self.resamples < 100:
            raise LabelsError(f"--resamples must be at least 100, not {self.resamples}")
        if not 0 < self.confidence < 1:
            raise LabelsError(f"--confidence must be between 0 and 1, not {self.confidence}")

    def to_json(self) -> dict[str, Any]:
        return {
            "method": "percentile",
            "resamples": self.resamples,
            "confidence": self.confidence,
            "seed": self.seed,
        }


# --- the labels file ------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """The labels' scale: pass/fail (fail 0, pass 1) or integer scores from low to high."""

    kind: ScaleKind
    low: int
    high: int

    @property
    def values(self) -> list[int]:
        return list(range(self.low, self.high + 1))

    @property
    def span(self) -> int:
        return max(1, self.high - self.low)

    def name(self, value: int) -> str:
        if self.kind == "pass-fail":
            return "pass" if value else "fail"
        return str(value)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "values": [self.name(value) for value in self.values]}


PASS_FAIL: Final = Scale("pass-fail", 0, 1)


@dataclass(frozen=True)
class LabelledCase:
    """One case's labels: each human rater's and the judge's."""

    case_id: str
    line: int | None
    humans: dict[str, int]
    judge: int

    def reference(self) -> int:
        """The humans' label the judge is compared with: the lower median of their labels
        (the majority for an odd number of pass/fail raters; a tie counts as the stricter
        label)."""
        ordered = sorted(self.humans.values())
        return ordered[(len(ordered) - 1) // 2]


@dataclass(frozen=True)
class Labels:
    """A labels file as read: its scale, its human raters and one entry per case."""

    path: Path
    scale: Scale
    raters: tuple[str, ...]
    cases: tuple[LabelledCase, ...]
    layout: Literal["wide", "long"]


@dataclass
class _RawCase:
    case_id: str
    line: int | None
    humans: dict[str, Any] = field(default_factory=dict)
    judge: Any = None
    judge_given: bool = False


def read_labels(path: Path, *, scale: tuple[int, int] | None = None) -> Labels:
    """Read a labels file: CSV (``.csv``) or JSON Lines (``.jsonl``), wide or long layout.

    Wide: a ``caseId`` column, a ``judge`` column and either one ``human`` column or one
    ``human.<rater>`` column per human rater (other columns are ignored). Long: ``caseId``,
    ``rater`` and ``label``, where the rater ``judge`` is the judge. Labels are ``pass`` /
    ``fail`` or integer scores; ``scale`` fixes the score range (else the scores seen).
    """
    path = Path(path)
    try:
        refuse_special_file(path)
        size = path.stat().st_size
    except FileNotFoundError:
        raise LabelsError(f"{path}: no such labels file") from None
    except ParseError as error:
        raise LabelsError(str(error)) from None
    except OSError as error:
        raise LabelsError(f"{path}: cannot read it: {error.strerror or error}") from None
    if limits.exceeded("max_file_bytes", size):
        raise LabelsError(
            f"{path}: {size} bytes is over the limit of {limits.current().max_file_bytes};"
            f" {limits.hint('max_file_bytes')}"
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise LabelsError(f"{path}: not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise LabelsError(f"{path}: cannot read it: {error.strerror or error}") from None
    suffix = path.suffix.lower()
    if suffix == ".csv":
        records = _csv_records(path, text)
    elif suffix in (".jsonl", ".ndjson"):
        records = _jsonl_records(path, text)
    else:
        raise LabelsError(f"{path}: a labels file is .csv or .jsonl, not {suffix or 'no suffix'}")
    raws, layout = _collect(path, records)
    if not raws:
        raise LabelsError(f"{path}: no labels in the file")
    chosen = _scale(path, raws, scale)
    cases = tuple(_decode_case(path, raw, chosen) for raw in raws)
    raters = sorted({rater for case in cases for rater in case.humans})
    return Labels(path, chosen, tuple(raters), cases, layout)


#: one record of a labels file: its line and its keys (column names) with their values
_Record = tuple[int | None, dict[str, Any]]


def _csv_records(path: Path, text: str) -> Iterator[_Record]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            return
        header = [name.strip() for name in header]
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                raise LabelsError(
                    f"{path}:{reader.line_num}: {len(cells)} cells, but the header has"
                    f" {len(header)} columns"
                )
            yield reader.line_num, dict(zip(header, cells, strict=True))
    except csv.Error as error:
        raise LabelsError(f"{path}:{reader.line_num}: not valid CSV: {error}") from None


def _jsonl_records(path: Path, text: str) -> Iterator[_Record]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = jsonvalues.loads(line)
        except ValueError as error:
            raise LabelsError(f"{path}:{number}: not valid JSON: {error}") from None
        if not isinstance(value, dict):
            raise LabelsError(f"{path}:{number}: each line must be a JSON object")
        flat: dict[str, Any] = {}
        for key, item in value.items():
            if key == HUMAN_COLUMN and isinstance(item, dict):
                flat.update({f"{HUMAN_COLUMN}.{rater}": label for rater, label in item.items()})
            else:
                flat[key] = item
        yield number, flat


def _collect(
    path: Path, records: Iterable[_Record]
) -> tuple[list[_RawCase], Literal["wide", "long"]]:
    cases: dict[str, _RawCase] = {}
    layout: Literal["wide", "long"] | None = None
    for line, record in records:
        where = f"{path}:{line}" if line is not None else str(path)
        case_id = record.get("caseId")
        if isinstance(case_id, str):
            case_id = case_id.strip()
        if not isinstance(case_id, str) or not case_id:
            raise LabelsError(f"{where}: no caseId")
        long = "rater" in record and "label" in record
        if layout is None:
            layout = "long" if long else "wide"
            if layout == "wide" and JUDGE_RATER not in record:
                raise LabelsError(
                    f"{where}: no judge column; a labels file has caseId, judge and human (or"
                    " human.<rater>) columns, or caseId, rater and label"
                )
        case = cases.get(case_id)
        if layout == "long":
            rater = record.get("rater")
            rater = rater.strip() if isinstance(rater, str) else rater
            if not isinstance(rater, str) or not rater:
                raise LabelsError(f"{where}: no rater")
            if case is None:
                case = cases[case_id] = _RawCase(case_id, line)
            if (rater == JUDGE_RATER and case.judge_given) or rater in case.humans:
                raise LabelsError(f"{where}: a second label by {rater!r} for case {case_id!r}")
            if rater == JUDGE_RATER:
                case.judge, case.judge_given = record["label"], True
            else:
                case.humans[rater] = record["label"]
            continue
        if case is not None:
            raise LabelsError(f"{where}: case {case_id!r} is labelled twice (line {case.line})")
        case = cases[case_id] = _RawCase(case_id, line)
        if JUDGE_RATER in record:
            case.judge, case.judge_given = record[JUDGE_RATER], True
        for key, value in record.items():
            if key == HUMAN_COLUMN:
                case.humans[HUMAN_COLUMN] = value
            elif key.startswith(HUMAN_COLUMN + ".") and len(key) > len(HUMAN_COLUMN) + 1:
                case.humans[key[len(HUMAN_COLUMN) + 1 :]] = value
    if layout == "wide" and cases and not any(case.humans for case in cases.values()):
        raise LabelsError(f"{path}: no human column (human, or human.<rater> for each rater)")
    return list(cases.values()), layout or "wide"


def _token(value: Any) -> str | int | None:
    """A label as the scale sees it: "pass", "fail", an integer score, or None (missing)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in ("pass", "fail"):
            return text
        if text.lstrip("+-").isdigit() and text.lstrip("+-").isascii():
            return int(text)
    raise ValueError(value)


def _scale(path: Path, raws: list[_RawCase], fixed: tuple[int, int] | None) -> Scale:
    kinds: set[str] = set()
    scores: list[int] = []
    for raw in raws:
        for rater, value in [*raw.humans.items(), (JUDGE_RATER, raw.judge)]:
            try:
                token = _token(value)
            except ValueError:
                where = f"{path}:{raw.line}" if raw.line is not None else str(path)
                raise LabelsError(
                    f"{where}: {rater}'s label {value!r} for case {raw.case_id!r} is neither"
                    " pass/fail nor an integer score"
                ) from None
            if isinstance(token, int):
                kinds.add("ordinal")
                scores.append(token)
            elif token is not None:
                kinds.add("pass-fail")
    if kinds == {"pass-fail", "ordinal"}:
        raise LabelsError(f"{path}: the labels mix pass/fail and scores; use one scale")
    if kinds != {"ordinal"}:
        if fixed is not None:
            raise LabelsError(f"{path}: --scale is for scores, and the labels are pass/fail")
        return PASS_FAIL
    low, high = fixed if fixed is not None else (min(scores), max(scores))
    outside = sorted({score for score in scores if not low <= score <= high})
    if outside:
        raise LabelsError(f"{path}: scores {outside} are outside the scale {low}-{high}")
    return Scale("ordinal", low, high)


def _decode_case(path: Path, raw: _RawCase, scale: Scale) -> LabelledCase:
    where = f"{path}:{raw.line}" if raw.line is not None else str(path)

    def decode(value: Any) -> int | None:
        token = _token(value)
        if token is None:
            return None
        if isinstance(token, str):
            return 1 if token == "pass" else 0
        return token

    judge = decode(raw.judge)
    if judge is None:
        raise LabelsError(f"{where}: case {raw.case_id!r} has no judge label")
    humans = {
        rater: label for rater, value in raw.humans.items() if (label := decode(value)) is not None
    }
    if not humans:
        raise LabelsError(f"{where}: case {raw.case_id!r} has no human label")
    return LabelledCase(raw.case_id, raw.line, humans, judge)


def parse_scale(text: str) -> tuple[int, int]:
    """A score range written ``LOW-HIGH`` (``1-5``)."""
    low, separator, high = text.partition("-")
    try:
        bounds = (int(low), int(high))
    except ValueError:
        bounds = None
    if not separator or bounds is None or bounds[0] >= bounds[1]:
        raise LabelsError(f"--scale takes LOW-HIGH with LOW < HIGH (such as 1-5), not {text!r}")
    return bounds


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
                where = f"{path}:{item.line}" if item.line is not None else str(path)
                raise LabelsError(f"{where}: row {item.index} cannot be read: {item.reason}")
            yield item.data

    return index_families(source.header, rows())


# --- the statistics -------------------------------------------------------------------------


def _kappa_weights(scale: Scale) -> str | None:
    return "quadratic" if scale.kind == "ordinal" else None


def cohen_kappa(human: Sequence[int], judge: Sequence[int], scale: Scale) -> float | None:
    """Cohen's kappa of judge against humans (quadratic-weighted on an ordinal scale), from
    scikit-learn; None when it is undefined (every label the same on both sides)."""
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(
            list(human), list(judge), labels=scale.values, weights=_kappa_weights(scale)
        )
    return None if math.isnan(value) else float(value)


def krippendorff_alpha(
    ratings: Sequence[Mapping[str, int]], raters: Sequence[str], scale: Scale
) -> float | None:
    """Krippendorff's alpha across human raters (nominal for pass/fail, ordinal for scores),
    from the ``krippendorff`` package; None when it is undefined (fewer than two raters on
    every case, or a single value throughout)."""
    import numpy as np

    matrix = np.array(
        [[case.get(rater, np.nan) for case in ratings] for rater in raters], dtype=float
    )
    return _alpha_of(matrix, scale)


def _alpha_of(matrix: NDArray[np.float64], scale: Scale) -> float | None:
    import krippendorff
    import numpy as np

    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    if matrix.shape[0] < 2 or not pairable.any():
        return None
    values = matrix[:, pairable]
    if len(np.unique(values[~np.isnan(values)])) < 2:
        return None
    level: Literal["nominal", "ordinal"] = "nominal" if scale.kind == "pass-fail" else "ordinal"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = krippendorff.alpha(
            reliability_data=matrix, level_of_measurement=level, value_domain=scale.values
        )
    return None if math.isnan(value) else float(value)


def _vectorized_kappa(
    human: NDArray[np.int64], judge: NDArray[np.int64], scale: Scale
) -> NDArray[np.float64]:
    """Kappa for many resamples at once (the rows of ``human`` and ``judge``): the formula
    scikit-learn's ``cohen_kappa_score`` computes, vectorized, because its input checks cost
    milliseconds a call and the bootstrap makes thousands. Tests hold the two equal."""
    import numpy as np

    size = len(scale.values)
    h = human - scale.low
    j = judge - scale.low
    observed = (
        np.stack(
            [((h == a) & (j == b)).sum(axis=-1) for a in range(size) for b in range(size)], axis=-1
        )
        .reshape(*h.shape[:-1], size, size)
        .astype(float)
    )
    observed /= h.shape[-1]
    expected = observed.sum(axis=-1)[..., :, None] * observed.sum(axis=-2)[..., None, :]
    grid = np.arange(size)
    if scale.kind == "ordinal":
        weights = (grid[:, None] - grid[None, :]).astype(float) ** 2
    else:
        weights = (grid[:, None] != grid[None, :]).astype(float)
    disagreement = (weights * observed).sum(axis=(-2, -1))
    chance = (weights * expected).sum(axis=(-2, -1))
    # a resample in which both sides give one and the same label throughout agrees perfectly
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance > 0, 1 - disagreement / np.where(chance > 0, chance, 1), 1.0)


@dataclass(frozen=True)
class _Sample:
    """The labelled cases of one group, as arrays."""

    scale: Scale
    raters: tuple[str, ...]
    case_ids: list[str]
    human: list[int]
    judge: list[int]
    ratings: list[dict[str, int]]


def _interval(
    statistic: Callable[[Any], Any], size: int, options: BootstrapOptions, vectorized: bool
) -> list[float] | None:
    import numpy as np
    from scipy.stats import bootstrap

    if size < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bootstrap(
            (np.arange(size),),
            statistic,
            n_resamples=options.resamples,
            confidence_level=options.confidence,
            method="percentile",
            vectorized=vectorized,
            rng=np.random.default_rng(options.seed),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):
        return None
    return [_round(low), _round(high)]


def _round(value: float) -> float:
    # six decimals: stable across platforms' last-bit differences, and more than any reader needs
    return round(value, 6) + 0.0


def agreement_statistics(sample: _Sample, options: BootstrapOptions) -> dict[str, Any]:
    """Agreement, kappa, bias, the confusion matrix and (with several raters) alpha, each
    with its bootstrap interval, for one group of labelled cases."""
    import numpy as np
    from sklearn.metrics import confusion_matrix

    scale = sample.scale
    human = np.array(sample.human, dtype=np.int64)
    judge = np.array(sample.judge, dtype=np.int64)
    size = len(human)

    def agreement(index: Any, axis: int = -1) -> Any:
        return (human[index] == judge[index]).mean(axis=axis)

    def kappa(index: Any, axis: int = -1) -> Any:
        return _vectorized_kappa(human[index], judge[index], scale)

    def bias(index: Any, axis: int = -1) -> Any:
        return (judge[index].mean(axis=axis) - human[index].mean(axis=axis)) / scale.span

    kappa_value = cohen_kappa(sample.human, sample.judge, scale)
    bias_value = float((judge.mean() - human.mean()) / scale.span)
    statistics: dict[str, Any] = {
        "labelled": size,
        "agreement": {
            "value": _round(float(agreement(slice(None)))),
            "ci": _interval(agreement, size, options, vectorized=True),
        },
        "kappa": {
            "value": None if kappa_value is None else _round(kappa_value),
            "weights": _kappa_weights(scale),
            "ci": _interval(kappa, size, options, vectorized=True),
        },
        "bias": {
            "value": _round(bias_value),
            "ci": _interval(bias, size, options, vectorized=True),
            "direction": "lenient" if bias_value > 0 else "harsh" if bias_value < 0 else "none",
            "humanMean": _round(float(human.mean())),
            "judgeMean": _round(float(judge.mean())),
        },
        "confusion": {
            "labels": [scale.name(value) for value in scale.values],
            "rows": "human",
            "columns": "judge",
            "matrix": confusion_matrix(human, judge, labels=scale.values).tolist(),
        },
        "alpha": None,
    }
    if len(sample.raters) >= 2:
        matrix = np.array(
            [[case.get(rater, np.nan) for case in sample.ratings] for rater in sample.raters],
            dtype=float,
        )
        value = _alpha_of(matrix, scale)

        def alpha(index: Any) -> float:
            # as for kappa, a resample in which the raters give one label throughout agrees
            # perfectly (alpha itself is undefined there)
            found = _alpha_of(matrix[:, index], scale)
            return 1.0 if found is None else found

        statistics["alpha"] = {
            "value": None if value is None else _round(value),
            "level": "nominal" if scale.kind == "pass-fail" else "ordinal",
            "raters": list(sample.raters),
            "ci": None if value is None else _interval(alpha, size, options, vectorized=False),
        }
    return statistics


# --- the report -----------------------------------------------------------------------------


def _reasons(statistics: Mapping[str, Any], thresholds: Thresholds) -> list[str]:
    reasons: list[str] = []
    agreement = statistics["agreement"]["value"]
    if agreement < thresholds.min_agreement:
        reasons.append(f"agreement {agreement:.3f} is below {thresholds.min_agreement}")
    kappa = statistics["kappa"]["value"]
    if kappa is None:
        reasons.append(
            "kappa is undefined: every label is the same, so the sample cannot show that the"
            " judge tells the labels apart"
        )
    elif kappa < thresholds.min_kappa:
        reasons.append(f"kappa {kappa:.3f} is below {thresholds.min_kappa}")
    alpha = statistics["alpha"]
    if alpha is not None and alpha["value"] is not None and alpha["value"] < thresholds.min_alpha:
        reasons.append(
            f"the human raters agree too little among themselves (alpha {alpha['value']:.3f}"
            f" is below {thresholds.min_alpha}), so their labels are no reference yet"
        )
    bias = statistics["bias"]["value"]
    if abs(bias) > thresholds.max_bias:
        direction = "lenient" if bias > 0 else "harsh"
        reasons.append(
            f"the judge is too {direction} (bias {bias:+.3f}, at most {thresholds.max_bias})"
        )
    return reasons


def build_report(
    labels: Labels,
    families: SetFamilies,
    *,
    set_path: str,
    labels_path: str,
    thresholds: Thresholds | None = None,
    bootstrap: BootstrapOptions | None = None,
) -> dict[str, Any]:
    """The judge-validation report (JSON data) for labels of a set's cases.

    Unknown case ids make the labels unusable (:class:`LabelsError`, exit 2): a label for a
    case the set does not hold is a typo or a label for another version of the set.
    """
    thresholds = thresholds or Thresholds()
    bootstrap = bootstrap or BootstrapOptions()
    unknown = [case.case_id for case in labels.cases if case.case_id not in families.cases]
    if unknown:
        more = f" and {len(unknown) - ID_PREVIEW} more" if len(unknown) > ID_PREVIEW else ""
        raise LabelsError(
            f"{labels.path}: {len(unknown)} labelled case(s) are not in {set_path}:"
            f" {', '.join(unknown[:ID_PREVIEW])}{more}"
        )
    grouped: dict[str | None, list[LabelledCase]] = {}
    for case in labels.cases:
        grouped.setdefault(families.cases[case.case_id][0], []).append(case)
    hashes = families.hashes()
    entries = []
    for name in sorted(grouped, key=lambda key: (key is not None, key or "")):
        cases = sorted(grouped[name], key=lambda case: case.case_id)
        rows = families.families[name]
        statistics = agreement_statistics(_sample(labels, cases), bootstrap)
        required = thresholds.required(rows.rows)
        reasons = _reasons(statistics, thresholds)
        verdict: FamilyVerdict = "pass" if not reasons else "fail"
        if len(cases) < required:
            verdict = "insufficient"
            reasons.insert(0, f"{len(cases)} labelled case(s), and the family needs {required}")
        entries.append(
            {
                "family": name,
                "rows": rows.rows,
                "judgeRows": rows.judge_rows,
                "required": required,
                "rowsHash": hashes[name],
                "caseIds": [case.case_id for case in cases],
                **statistics,
                "verdict": verdict,
                "reasons": reasons,
            }
        )
    labelled = {name for name in grouped}
    unlabelled = [
        {"family": name, "rows": rows.rows, "judgeRows": rows.judge_rows}
        for name, rows in sorted(
            families.families.items(), key=lambda item: (item[0] is not None, item[0] or "")
        )
        if rows.judge_rows and name not in labelled
    ]
    not_judged = sorted(
        case.case_id for case in labels.cases if not families.cases[case.case_id][1]
    )
    overall = agreement_statistics(
        _sample(labels, sorted(labels.cases, key=lambda case: case.case_id)), bootstrap
    )
    header = families.header or {}
    return {
        "reportVersion": REPORT_VERSION,
        "set": set_path,
        "setName": header.get("name"),
        "labels": labels_path,
        "layout": labels.layout,
        "scale": labels.scale.to_json(),
        "raters": list(labels.raters),
        "reference": "lower median of the human labels" if len(labels.raters) > 1 else "human",
        "thresholds": thresholds.to_json(),
        "bootstrap": bootstrap.to_json(),
        "verdict": "pass" if all(entry["verdict"] == "pass" for entry in entries) else "fail",
        "families": entries,
        "overall": overall,
        "unlabelledFamilies": unlabelled,
        "notJudgeRows": not_judged,
    }


def _sample(labels: Labels, cases: Sequence[LabelledCase]) -> _Sample:
    raters = tuple(rater for rater in labels.raters if any(rater in case.humans for case in cases))
    return _Sample(
        scale=labels.scale,
        raters=raters,
        case_ids=[case.case_id for case in cases],
        human=[case.reference() for case in cases],
        judge=[case.judge for case in cases],
        ratings=[case.humans for case in cases],
    )


def report_passed(report: Mapping[str, Any]) -> bool:
    return report.get("verdict") == "pass"


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
    if entry.get("rowsHash") != current_hash:
        return JudgeStatus(status="stale", **common)  # type: ignore[arg-type]
    if entry.get("verdict") == "insufficient" or labelled < required:
        reasons = tuple(entry.get("reasons") or ())
        return JudgeStatus(status="insufficient", reasons=reasons, **common)  # type: ignore[arg-type]
    if entry.get("verdict") != "pass":
        reasons = tuple(entry.get("reasons") or ())
        return JudgeStatus(status="failed", reasons=reasons, **common)  # type: ignore[arg-type]
    return JudgeStatus(status="validated", **common)  # type: ignore[arg-type]


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
) -> None:
    """After the validator's pass: turn the ``conditional-evaluator`` warnings of families a
    passing judge-validation report covers into ``judge-validated`` infos, and report
    references that are stale, too small, failing or unreadable. Does nothing (reads nothing)
    when the set points at no report."""
    refs = references(path, header, extra_reports)
    if not refs:
        return
    try:
        source = codec.open(path)
        families = index_families(
            header,
            (item.data if isinstance(item, SourceRow) else None for item in source.rows),
        )
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


def with_report_paths(report: dict[str, Any], output: Path | None) -> dict[str, Any]:
    """The report with its set and labels paths relative to the folder it is written to, so
    that a reference to it still finds the set when the folder moves."""
    if output is None:
        return report
    import os

    folder = output.resolve().parent
    changed = dict(report)
    for key in ("set", "labels"):
        try:
            changed[key] = Path(os.path.relpath(Path(report[key]).resolve(), folder)).as_posix()
        except ValueError:  # another drive on Windows
            changed[key] = Path(report[key]).resolve().as_posix()
    return changed


def family_label(family: str | None) -> str:
    return family if family is not None else "(no case family)"


__all__ = [
    "REPORT_VERSION",
    "BootstrapOptions",
    "JudgeStatus",
    "Labels",
    "LabelsError",
    "Thresholds",
    "build_report",
    "judge_status",
    "read_labels",
    "read_set_families",
    "settle_judge_conditions",
]
