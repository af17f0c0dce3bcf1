"""Grading a set against results read one at a time, in one trial or several.

The set's rows are indexed by id first, each kept as the compact bytes of the part grading
reads (:func:`graded_part`: its id, ``expected`` and case profile); a row whose verdict no
result can change (one only a person grades) keeps nothing. Then every results file is read
a result at a time, and each result is graded the moment it is read: what is kept of it is
one byte, its verdict, in its trial's column (a row's place in a ``bytearray``), with its
score added to the row's sum. One verdict a row stands for the row in reports: the first
failing trial's, else the first passing trial's, else the first that needs something. So
memory grows with the set and with the trials (a byte a row and trial), never with the
results' content, and every result costs the same whatever the number of trials; a results
file sorted by id or not reads the same.

Several results files are several trials: a file whose results name no trial is one trial;
a file's own trials (``trial``, an Inspect log's epochs, promptfoo's repeats) are numbered
within it. Labels: with one file, a trial is labelled as its results name it (``1`` when
they name none); with several, a file that holds one trial is labelled by its place among
the files (``2``), and a trial of a file that holds several by both (``2.3``: file 2's
trial 3).
"""

from __future__ import annotations

import dataclasses
import functools
import marshal
import math
import sys
from array import array
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError, UsageError
from blueprint.core.issues import Issue
from blueprint.core.judgeprompt import judged
from blueprint.grading.gates import HIGH_RISK, risk_cell
from blueprint.grading.results import read_trials, repeated
from blueprint.grading.semantics import SCORED, GradingOptions, Recorded, RowVerdict, grade_row
from blueprint.grading.trials import CODES, RowTrials, TrialLabel, TrialRun

#: the most trials one run may hold (a row and trial cost a byte; a trial named per result
#: by mistake is refused at once rather than filling memory)
MAX_TRIALS: Final = 1000
#: which trial's verdict and reason stand for a row: a failure first, then a pass, then a
#: verdict that needs a judge, then a row not run; the first trial of the kind in the run's
#: order (so the order the results come in changes nothing)
_RANK: Final = {"fail": 0, "pass": 1, "needs-judge": 2, "not-run": 3}
_LAST_RANK: Final = 4
_NO_RANK: Final = 255
_INVALID: Final = CODES["invalid"]
_NO_SCORE: Final = float("nan")


class UnknownResultIds(UsageError):
    """Results name rows the set does not have: the results belong to another set (or an
    older version of it), and no verdict is given on a mismatch."""

    def __init__(self, results: Path, ids: list[str]) -> None:
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        super().__init__(
            f"{results}: {len(ids)} result(s) name rows the set does not have: {shown}"
        )
        self.ids = ids


#: the fields of a case profile :func:`grade_row` reads (tests/test_trials.py checks that
#: blueprint.grading.semantics reads no other)
GRADED_CASE_FIELDS: Final = (
    "oracleType",
    "evaluator",
    "caseFamily",
    "provenance",
    "passThreshold",
    "checks",
    "normalize",
    "tolerance",
)
#: the fields whose few values many rows share: one copy of each value is kept
_SHARED_FIELDS: Final = ("oracleType", "evaluator", "caseFamily", "provenance")


def graded_part(row: dict[str, Any]) -> dict[str, Any]:
    """The part of a row :func:`grade_row` reads: its id, its ``expected`` and the fields of
    its case profile that grading reads (:data:`GRADED_CASE_FIELDS`); the input, the other
    metadata and the case's prose are never read to grade, so the part gets the verdict the
    whole row gets."""
    metadata = row.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if isinstance(case, dict):
        case = {name: case[name] for name in GRADED_CASE_FIELDS if name in case}
        for name in _SHARED_FIELDS:
            value = case.get(name)
            if isinstance(value, str):
                case[name] = sys.intern(value)
    part: dict[str, Any] = {"id": row.get("id"), "metadata": {"case": case}}
    if "expected" in row:
        part["expected"] = row["expected"]
    return part


def _packed(part: dict[str, Any]) -> bytes | dict[str, Any]:
    """A row's graded part as compact bytes (marshal: exact for every JSON value, read only
    by this process, and giving back the one copy of a shared value); a value marshal does
    not write stays as it is."""
    try:
        return marshal.dumps(part)
    except ValueError:
        return part


@dataclass
class GradedRows:
    """Every row's verdict in the set's order, and the trials (None for a run of one
    trial)."""

    rows: Sequence[RowVerdict]
    trials: TrialRun | None


#: what the index keeps of a row: its verdict when no result comes, its graded part packed
#: (None: no result changes its verdict), its case family's evaluator, its id (when a text),
#: its high-risk cell (reversibility, blast radius; None when not high-risk), and whether a
#: judge grades it
IndexEntry = tuple[
    RowVerdict,
    bytes | dict[str, Any] | None,
    str | None,
    str | None,
    tuple[str | None, str | None] | None,
    bool,
]


def index_entry(
    row: dict[str, Any], families: dict[str, Any], options: GradingOptions
) -> IndexEntry:
    """What the index keeps of a row (see :data:`IndexEntry`)."""
    metadata = row.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    family = case.get("caseFamily") if isinstance(case, dict) else None
    evaluator = families.get(family) if isinstance(family, str) else None
    part = graded_part(row)
    verdict = grade_row(part, None, options, family_evaluator=evaluator)
    row_id = row.get("id")
    # a row only a person grades gets the same verdict whatever its result says
    fixed = verdict.verdict == "needs-human" or not isinstance(row_id, str)
    cell = None
    if isinstance(case, dict):
        found = (_text(case.get("reversibility")), _text(case.get("blastRadius")))
        if found[0] in HIGH_RISK or found[1] in HIGH_RISK:
            cell = found
    return (
        verdict,
        None if fixed else _packed(part),
        evaluator,
        row_id if isinstance(row_id, str) else None,
        cell,
        judged(part, evaluator),
    )


class RowIndex:
    """The set's rows by id, each with its verdict when no result comes."""

    def __init__(
        self, rows: Iterable[Any], families: dict[str, Any], options: GradingOptions
    ) -> None:
        self.absent: list[RowVerdict | None] = []
        self.packed: list[bytes | dict[str, Any] | None] = []
        self.evaluators: list[str | None] = []
        self.positions: dict[str, int] = {}
        self.more: dict[str, list[int]] = {}
        #: whether a judge grades each row, by place
        self.judged = bytearray()
        #: the high-risk cell of each row that has one, by place (its verdict carries it)
        self.cells: dict[int, str] = {}
        for row in rows:
            if isinstance(row, dict):
                self.keep(index_entry(row, families, options))

    def keep(self, entry: IndexEntry) -> None:
        """Add a row, as :func:`index_entry` gave it, after the others."""
        verdict, packed, evaluator, row_id, cell, is_judged = entry
        position = len(self.absent)
        self.judged.append(is_judged)
        self.absent.append(verdict)
        self.evaluators.append(evaluator)
        self.packed.append(packed)
        if row_id is None:
            return
        found = risk_cell(*cell) if cell is not None else None
        if found is not None:
            self.cells[position] = found
        if row_id in self.positions:
            self.more.setdefault(row_id, []).append(position)
        else:
            self.positions[row_id] = position

    def lookup(self, row_id: str) -> list[int] | None:
        position = self.positions.get(row_id)
        if position is None:
            return None
        return [position, *self.more[row_id]] if row_id in self.more else [position]

    def __len__(self) -> int:
        return len(self.absent)


class Trials:
    """The trials of a run, numbered in the order first met, with each one's place in the
    run's order (its file, then its number or name), which labels them."""

    def __init__(self) -> None:
        #: (file number, file, trial named) of each trial, in the order first met
        self.sources: list[tuple[int, Path, str | None]] = []
        self.numbers: dict[tuple[int, str | None], int] = {}
        self.places: list[tuple[int, int, int, str]] = []

    def __len__(self) -> int:
        return len(self.sources)

    def number(self, file_number: int, path: Path, key: str | None) -> tuple[int, bool]:
        """The trial's number, and whether it is met here for the first time."""
        found = self.numbers.get((file_number, key))
        if found is not None:
            return found, False
        number = len(self.sources)
        self.numbers[(file_number, key)] = number
        self.sources.append((file_number, path, key))
        if key is None:
            self.places.append((file_number, 0, 0, ""))
        elif key.isascii() and key.isdigit():
            self.places.append((file_number, 0, int(key), key))
        else:
            self.places.append((file_number, 1, 0, key))
        return number, True

    def labels(self) -> tuple[list[int], list[TrialLabel]]:
        """The trials in the run's order (by file; within a file, numbered trials by
        number, then named ones by name), with their labels."""
        order = sorted(range(len(self.sources)), key=self.places.__getitem__)
        per_file: dict[int, int] = {}
        for file_number, _, _ in self.sources:
            per_file[file_number] = per_file.get(file_number, 0) + 1
        labels = []
        for trial in order:
            file_number, path, key = self.sources[trial]
            if len(per_file) == 1 and file_number == 1:
                label = key or "1"
            elif per_file[file_number] == 1:
                label = str(file_number)
            else:
                label = f"{file_number}.{key}"
            labels.append(TrialLabel(label, str(path), key))
        return order, labels


def too_many_trials(path: Path, key: str | None, line: int | None) -> ParseError:
    return ParseError(
        path,
        f"trial {key}: more than {MAX_TRIALS} trials in one run (a trial is one run"
        " over the set: name it the same in every result of the run)",
        line=line,
    )


class Tally:
    """Each row's verdict in each trial as results are read, a byte a row and trial."""

    def __init__(self, index: RowIndex, options: GradingOptions) -> None:
        self.index = index
        self.options = options
        size = len(index)
        self.trials = Trials()
        self.columns: list[bytearray] = []
        #: each trial's score of each row (NaN: none)
        self.scores: list[array[float]] = []
        self.best: list[RowVerdict | None] = [None] * size
        self.best_rank = bytearray([_NO_RANK]) * size
        self.best_trial = array("i", [-1]) * size
        self._cached: tuple[int, dict[str, Any] | None] = (-1, None)

    def tallied(self) -> Tallied:
        """What reading the results left, for :func:`run_verdicts`."""
        index = self.index
        return Tallied(
            index.absent,
            self.best,
            self.best_trial,
            self.columns,
            self.scores,
            self.trials,
            index.positions,
            index.judged,
            index.cells,
        )

    def read(self, file_number: int, path: Path) -> None:
        self.read_items(file_number, path, read_trials(path))

    def read_items(
        self,
        file_number: int,
        path: Path,
        items: Iterable[tuple[str | None, Recorded]],
        *,
        first_line: Callable[[str, str | None], int | None] | None = None,
        empty_is_a_trial: bool = True,
    ) -> None:
        """Grade a file's results (``items``, in its order). ``first_line`` finds the line
        of a row's first result in a trial when a second one is refused (reading the file
        again when None); a file with no result is a trial in which nothing ran, unless
        ``empty_is_a_trial`` is off (a bucket's share of a file may hold none)."""
        unknown: set[str] = set()
        read_any = False
        for key, recorded in items:
            read_any = True
            positions = self.index.lookup(recorded.id)
            if positions is None:
                unknown.add(recorded.id)
                continue
            trial = self.trial(file_number, path, key, recorded.line)
            column = self.columns[trial]
            for position in positions:
                if column[position]:
                    earlier = (first_line or functools.partial(_first_line, path))(recorded.id, key)
                    raise ParseError(path, repeated(recorded.id, key, earlier), line=recorded.line)
                self._add(position, trial, column, recorded)
        if unknown:
            raise UnknownResultIds(path, sorted(unknown))
        if not read_any and empty_is_a_trial:
            self.trial(file_number, path, None, None)

    def trial(self, file_number: int, path: Path, key: str | None, line: int | None) -> int:
        """The trial's number, its columns made when it is new (a ParseError past
        ``MAX_TRIALS``)."""
        found = self.trials.numbers.get((file_number, key))
        if found is not None:
            return found
        if len(self.trials) >= MAX_TRIALS:
            raise too_many_trials(path, key, line)
        number, _ = self.trials.number(file_number, path, key)
        self.columns.append(bytearray(len(self.index)))
        self.scores.append(array("d", [_NO_SCORE]) * len(self.index))
        return number

    def _add(self, position: int, trial: int, column: bytearray, recorded: Recorded) -> None:
        verdict = self._grade(position, recorded)
        column[position] = CODES[verdict.verdict]
        if verdict.verdict in SCORED and verdict.score is not None:
            self.scores[trial][position] = verdict.score
        rank = _RANK.get(verdict.verdict, _LAST_RANK)
        best = self.best_rank[position]
        places = self.trials.places
        if rank < best or (rank == best and places[trial] < places[self.best_trial[position]]):
            self.best[position] = verdict
            self.best_rank[position] = rank
            self.best_trial[position] = trial

    def _grade(self, position: int, recorded: Recorded) -> RowVerdict:
        packed = self.index.packed[position]
        if packed is None:
            absent = self.index.absent[position]
            assert absent is not None
            return absent
        cached_at, row = self._cached
        if cached_at != position or row is None:
            row = marshal.loads(packed) if isinstance(packed, bytes) else packed
            self._cached = (position, row)
        evaluator = self.index.evaluators[position]
        return grade_row(row, recorded, self.options, family_evaluator=evaluator)


def _first_line(path: Path, row_id: str, key: str | None) -> int | None:
    """The line of a file's first result for a row in a trial (read again: only a refusal
    needs it)."""
    for trial, recorded in read_trials(path):
        if recorded.id == row_id and trial == key:
            return recorded.line
    return None


def grade_rows(
    rows: Iterable[Any],
    families: dict[str, Any],
    errors: Iterable[Issue],
    results: Sequence[Path],
    options: GradingOptions,
    *,
    k: int | None = None,
) -> GradedRows:
    """Grade the set's rows (as read, in its order) against every results file: each file
    a trial, or the trials it names. ``errors`` are the validator's error findings on the
    set's rows (a row with one is ``invalid`` in every trial, as is every row with its id);
    ``k`` the k of the summary's pass@k and pass^k (the number of trials when None;
    UsageError past it)."""
    index = RowIndex(rows, families, options)
    tally = Tally(index, options)
    for file_number, path in enumerate(results, start=1):
        tally.read(file_number, path)
    index.packed = []  # every result is graded: the rows are not needed again
    return run_verdicts(tally.tallied(), errors_by_id(errors), k)


def errors_by_id(errors: Iterable[Issue]) -> dict[str, list[Issue]]:
    """The validator's error findings on rows, by the row's id (a finding of no row has
    none: the set is refused before grading)."""
    found: dict[str, list[Issue]] = {}
    for issue in errors:
        assert issue.row_id is not None
        found.setdefault(issue.row_id, []).append(issue)
    return found


@dataclass
class Tallied:
    """What reading the results leaves, a value a row (in the set's order) or a column a
    trial: what :func:`run_verdicts` makes each row's verdict of."""

    #: each row's verdict when no result comes
    absent: list[RowVerdict | None]
    #: the verdict standing for the row among those its results got, and its trial
    best: list[RowVerdict | None]
    best_trial: array[int]
    #: a trial's verdict codes and scores of each row, by trial number
    columns: list[bytearray]
    scores: list[array[float]]
    trials: Trials
    #: the ids of the rows that have one (a text)
    ids: Container[str]
    #: whether a judge grades each row, by place
    judged: bytearray
    #: the high-risk cell of each row that has one, by place
    cells: dict[int, str]


def run_verdicts(tallied: Tallied, errors: dict[str, list[Issue]], k: int | None) -> GradedRows:
    """Each row's verdict over its trials, with the validator's errors obeyed (see
    :func:`grade_rows`)."""
    order, labels = tallied.trials.labels()
    count = len(order)
    if k is not None and not 1 <= k <= max(count, 1):
        raise UsageError(f"k = {k}: from 1 to the run's {count} trial(s)")
    columns = [tallied.columns[trial] for trial in order]
    scores = [tallied.scores[trial] for trial in order]
    place = {trial: number for number, trial in enumerate(order)}
    verdicts: list[RowVerdict] = []
    figures: list[RowTrials] = []
    size = len(tallied.absent)
    # each row's verdict in each trial, a tuple of bytes a row (none when nothing was read)
    by_row: Iterable[tuple[int, ...]] = (
        zip(*columns, strict=True) if columns else (() for _ in range(size))
    )
    for position, codes in enumerate(by_row):
        absent = tallied.absent[position]
        best = tallied.best[position] or absent
        assert absent is not None and best is not None
        # each row's verdicts are let go as its own is made, so they are not all held twice
        tallied.absent[position] = tallied.best[position] = None
        found = errors.get(absent.id) if absent.id in tallied.ids else None
        if count > 1:
            given = array("d", [column[position] for column in scores])
            trials = _trials(bytes(codes), given, absent, bool(found))
            trial = tallied.best_trial[position]
            label = labels[place[trial]].label if trial >= 0 else None
            best = _overall(best, trials, label)
            figures.append(trials)
        verdict = _invalid(best, found) if found else best
        cell = tallied.cells.get(position)
        if cell is not None or tallied.judged[position]:
            verdict = dataclasses.replace(verdict, risk=cell, judged=bool(tallied.judged[position]))
        verdicts.append(verdict)
    run = TrialRun(labels, figures, k or count) if count > 1 else None
    return GradedRows(verdicts, run)


def _trials(codes: bytes, scores: array[float], absent: RowVerdict, invalid: bool) -> RowTrials:
    """A row's verdict and score in each trial: the one its result got, the one no result
    leaves in a trial without one, and invalid throughout where the set forbids grading the
    row."""
    if invalid:
        return RowTrials(bytes([_INVALID]) * len(codes))
    return RowTrials(codes.replace(b"\0", bytes([CODES[absent.verdict]])), scores.tobytes())


def _overall(best: RowVerdict, trials: RowTrials, label: str | None) -> RowVerdict:
    """The row's verdict over its trials: pass when every scored trial passes (pass^n),
    fail when one fails, with the mean score of its scored trials; with no scored trial,
    the verdict that stands for it, and no score."""
    n, c = trials.scored, trials.passed
    unscored = len(trials.codes) - n
    where = f"; trial {label}: {best.reason}" if label is not None else f"; {best.reason}"
    if n:
        others = f", {unscored} trial(s) without a score" if unscored else ""
        if c == n:
            head = f"passes in every scored trial ({n} of {n}{others})"
        else:
            head = (
                f"fails in {n - c} of {n} scored trials{others}; a row passes only when every"
                " scored trial passes"
            )
        given = [score for score in trials.scores if score is not None]
        return dataclasses.replace(
            best,
            verdict="pass" if c == n else "fail",
            score=math.fsum(given) / len(given) if given else None,
            reason=head + where,
        )
    if len(set(trials.codes)) <= 1:
        return best  # the same verdict in every trial: its reason says why
    counts: dict[str, int] = {}
    for verdict in trials.verdicts:
        counts[verdict] = counts.get(verdict, 0) + 1
    shown = ", ".join(f"{number} {verdict}" for verdict, number in counts.items())
    return dataclasses.replace(best, reason=f"no trial gives a score ({shown}){where}")


def _invalid(verdict: RowVerdict, issues: Iterable[Issue]) -> RowVerdict:
    """A verdict replaced by the set's own errors for the row: no number, the codes named."""
    if verdict.verdict == "invalid":
        return verdict  # the evaluator's bar already says why, in the validator's words too
    listed = list(issues)
    codes = ", ".join(dict.fromkeys(issue.code for issue in listed))
    return dataclasses.replace(
        verdict,
        verdict="invalid",
        score=None,
        reason=f"the set is not valid here ({codes}): {listed[0].message}; no verdict is given",
    )


__all__ = ["MAX_TRIALS", "GradedRows", "UnknownResultIds", "grade_rows", "graded_part"]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
