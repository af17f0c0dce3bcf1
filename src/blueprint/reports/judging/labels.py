"""Reading a labels file: human raters' (and the judge's) labels on a set's cases."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from blueprint.core.errors import ParseError
from blueprint.formats import refuse_special_file
from blueprint.io import jsonvalues, limits
from blueprint.validation.judge_status import LabelsError

#: the rater name that stands for the judge in the long layout (caseId, rater, label)
JUDGE_RATER: Final = "judge"
HUMAN_COLUMN: Final = "human"
#: the columns (keys) that name the judge that gave the judge's labels: its model and its
#: Blueprint judge template (``<oracle-type>@<digest>``); in the long layout, on the judge's lines
JUDGE_MODEL_COLUMN: Final = "judgeModel"
JUDGE_TEMPLATE_COLUMN: Final = "judgeTemplate"
#: how many unknown case ids a refusal names before it says "and N more"
ID_PREVIEW: Final = 10

ScaleKind = Literal["pass-fail", "ordinal"]


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
    #: the judge that gave the judge's label, where the file names it: (model, template)
    judge_model: str | None = None
    judge_template: str | None = None

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
    judge_model: str | None = None
    judge_template: str | None = None


def read_labels(
    path: Path,
    *,
    scale: tuple[int, int] | None = None,
    judged: Sequence[JudgedOutput] | None = None,
    judged_path: Path | None = None,
) -> Labels:
    """Read a labels file: CSV (``.csv``) or JSON Lines (``.jsonl``), wide or long layout.

    Wide: a ``caseId`` column, a ``judge`` column and either one ``human`` column or one
    ``human.<rater>`` column per human rater (other columns are ignored). Long: ``caseId``,
    ``rater`` and ``label``, where the rater ``judge`` is the judge. Labels are ``pass`` /
    ``fail`` or integer scores; ``scale`` fixes the score range (else the scores seen).

    ``judged`` (read from ``judged_path``, a runner's results) gives the judge's label and
    identity of every case instead: the file then needs no judge column, and a judge label
    it does hold must be the results' one.
    """
    path = Path(path)
    records = _records(path)
    raws, layout = _collect(path, records, judge_needed=judged is None)
    if judged is not None:
        _take_judged(path, raws, judged, judged_path or path)
    if not raws:
        raise LabelsError(f"{path}: no labels in the file")
    chosen = _scale(path, raws, scale)
    cases = tuple(_decode_case(path, raw, chosen) for raw in raws)
    raters = sorted({rater for case in cases for rater in case.humans})
    return Labels(path, chosen, tuple(raters), cases, layout)


@dataclass(frozen=True)
class JudgedOutput:
    """One case of a file of judge results, to be labelled by people: the output the judge
    saw (None when the file has none), the judge's label and the human labels given so far
    (``"pass"``/``"fail"`` or an integer score)."""

    case_id: str
    line: int | None
    output: Any
    judge: str | int
    humans: dict[str, str | int]
    judge_model: str | None = None
    judge_template: str | None = None


def read_judged_outputs(path: Path) -> list[JudgedOutput]:
    """Read judge results to label: a labels file (either layout) whose human labels may be
    missing, with an ``output`` column (key) beside ``caseId`` and ``judge``. Every case needs
    a judge label; the labels are checked as :func:`read_labels` checks them."""
    path = Path(path)
    records = list(_records(path))
    outputs = {str(record.get("caseId", "")).strip(): record.get("output") for _, record in records}
    raws, _ = _collect(path, records, humans_needed=False)
    if not raws:
        raise LabelsError(f"{path}: no judge results in the file")
    _scale(path, raws, None)  # one scale, every label readable
    judged: list[JudgedOutput] = []
    for raw in raws:
        judge = _token(raw.judge)
        if judge is None:
            where = f"{path}:{raw.line}" if raw.line is not None else str(path)
            raise LabelsError(f"{where}: case {raw.case_id!r} has no judge label")
        humans = {
            rater: token
            for rater, value in raw.humans.items()
            if (token := _token(value)) is not None
        }
        judged.append(
            JudgedOutput(
                raw.case_id,
                raw.line,
                outputs.get(raw.case_id),
                judge,
                humans,
                raw.judge_model,
                raw.judge_template,
            )
        )
    return judged


def label_columns(path: Path) -> set[str]:
    """Every column (CSV) or key (JSON Lines, with ``human.<rater>`` for each rater of a
    ``human`` object) a labels file holds."""
    return {key for _, record in _records(Path(path)) for key in record}


#: one record of a labels file: its line and its keys (column names) with their values
_Record = tuple[int | None, dict[str, Any]]


def _records(path: Path) -> Iterator[_Record]:
    """The records of a labels file, CSV or JSON Lines by its extension."""
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
        return _csv_records(path, text)
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl_records(path, text)
    raise LabelsError(f"{path}: a labels file is .csv or .jsonl, not {suffix or 'no suffix'}")


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


def _take_judged(
    path: Path, raws: list[_RawCase], judged: Sequence[JudgedOutput], source: Path
) -> None:
    """Each case's judge label and identity from the judge's results."""
    verdicts = {item.case_id: item for item in judged}
    for raw in raws:
        where = f"{path}:{raw.line}" if raw.line is not None else str(path)
        verdict = verdicts.get(raw.case_id)
        if verdict is None:
            raise LabelsError(f"{where}: case {raw.case_id!r} has no judge verdict in {source}")
        try:
            given = _token(raw.judge) if raw.judge_given else None
        except ValueError:
            given = raw.judge  # not a label at all: not the results' one either
        if given not in (None, verdict.judge):
            raise LabelsError(
                f"{where}: case {raw.case_id!r} has the judge label {raw.judge!r}, and {source}"
                f" says {verdict.judge!r}: the labels were given for other verdicts"
            )
        raw.judge, raw.judge_given = verdict.judge, True
        raw.judge_model, raw.judge_template = verdict.judge_model, verdict.judge_template


def _collect(
    path: Path,
    records: Iterable[_Record],
    *,
    humans_needed: bool = True,
    judge_needed: bool = True,
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
            if layout == "wide" and judge_needed and JUDGE_RATER not in record:
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
                _take_identity(where, case, record)
            else:
                case.humans[rater] = record["label"]
            continue
        if case is not None:
            raise LabelsError(f"{where}: case {case_id!r} is labelled twice (line {case.line})")
        case = cases[case_id] = _RawCase(case_id, line)
        if JUDGE_RATER in record:
            case.judge, case.judge_given = record[JUDGE_RATER], True
        _take_identity(where, case, record)
        for key, value in record.items():
            if key == HUMAN_COLUMN:
                case.humans[HUMAN_COLUMN] = value
            elif key.startswith(HUMAN_COLUMN + ".") and len(key) > len(HUMAN_COLUMN) + 1:
                case.humans[key[len(HUMAN_COLUMN) + 1 :]] = value
    if (
        humans_needed
        and layout == "wide"
        and cases
        and not any(case.humans for case in cases.values())
    ):
        raise LabelsError(f"{path}: no human column (human, or human.<rater> for each rater)")
    return list(cases.values()), layout or "wide"


def _take_identity(where: str, case: _RawCase, record: dict[str, Any]) -> None:
    """The judge's model and template a record names (text; an empty cell names none)."""
    for column, name in (
        (JUDGE_MODEL_COLUMN, "judge_model"),
        (JUDGE_TEMPLATE_COLUMN, "judge_template"),
    ):
        value = record.get(column)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise LabelsError(f"{where}: {column} is text, not {jsonvalues.json_type(value)}")
        setattr(case, name, value.strip() or None)


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
    return LabelledCase(raw.case_id, raw.line, humans, judge, raw.judge_model, raw.judge_template)


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
