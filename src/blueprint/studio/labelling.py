"""Labelling an LLM judge's verdicts: people give their own label to each judged output, the
labels go to the file ``blueprint judge-report`` reads, and the report is made from that
file as the command makes it, so the numbers on the page are the command's.

The judge results are a labels file without (or with some) human labels and with an
``output`` column (CSV or JSON Lines), or promptfoo's results file, whose model-graded
assertions (``llm-rubric`` and the like) give the judge's verdict. The labels file is written
whole after every label (atomically), in the wide layout: ``caseId``, ``judge``, then one
``human.<rater>`` column per rater; a case no one has labelled yet is not in it.
"""

from __future__ import annotations

import csv
import io
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import BlueprintError, UsageError
from blueprint.io import jsonvalues
from blueprint.io.atomic import AtomicOutputs
from blueprint.reports.judging import (
    BootstrapOptions,
    LabelsError,
    Thresholds,
    build_report,
    read_labels,
    read_set_families,
    with_report_paths,
)
from blueprint.reports.judging.judged import LABEL_SUFFIXES, read_judge_results
from blueprint.reports.judging.labels import (
    JUDGE_MODEL_COLUMN,
    JUDGE_TEMPLATE_COLUMN,
    JudgedOutput,
    label_columns,
    read_judged_outputs,
)

Label = str | int
PASS_FAIL_LABELS: Final = ("pass", "fail")
#: the columns that name the judge, written when the results name it
IDENTITY_COLUMNS: Final = (JUDGE_MODEL_COLUMN, JUDGE_TEMPLATE_COLUMN)


def _identity(item: JudgedOutput) -> tuple[str | None, str | None]:
    return item.judge_model, item.judge_template


def _named(item: JudgedOutput) -> dict[str, str | None]:
    return dict(zip(IDENTITY_COLUMNS, _identity(item), strict=True))


def check_rater(name: str) -> str:
    """A rater's name as a labels file can hold it: a column ``human.<name>``."""
    name = name.strip()
    if not name or name == "judge" or any(ch in name for ch in ',"') or not name.isprintable():
        raise UsageError(
            "a rater's name is a short name, not 'judge', without commas, quotes or line breaks"
        )
    return name


def default_labels_path(results: Path) -> Path:
    return results.with_name(results.stem + ".labels.csv")


def default_report_path(set_path: Path) -> Path:
    return set_path.with_name(set_path.stem + ".judge.json")


@dataclass
class LabellingSession:
    """Judged outputs of one set, the labels people gave so far, and where they go."""

    set_path: Path
    results_path: Path
    labels_path: Path
    items: list[JudgedOutput]
    #: case id -> rater -> label
    labels: dict[str, dict[str, Label]] = field(default_factory=dict)
    thresholds: Thresholds = field(default_factory=Thresholds)
    scale: tuple[int, int] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _report: tuple[bytes, dict[str, Any] | str] | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        set_path: Path,
        results_path: Path,
        labels_path: Path | None = None,
        *,
        thresholds: Thresholds | None = None,
        scale: tuple[int, int] | None = None,
    ) -> LabellingSession:
        """Read the judge results; labels already in the labels file are taken up again."""
        labels_path = labels_path or default_labels_path(results_path)
        if labels_path.resolve() == results_path.resolve():
            raise UsageError(
                f"{labels_path}: is the judge results file itself; write the labels elsewhere"
            )
        items = read_judge_results(results_path)
        session = cls(
            set_path,
            results_path,
            labels_path,
            items,
            thresholds=thresholds or Thresholds(),
            scale=scale,
        )
        for item in items:
            if item.humans:
                session.labels[item.case_id] = dict(item.humans)
        if labels_path.suffix.lower() not in LABEL_SUFFIXES:
            raise UsageError(
                f"{labels_path}: a labels file is .csv or .jsonl, as judge-report reads it"
            )
        if labels_path.exists():
            session._take_up(labels_path)
        return session

    def _take_up(self, path: Path) -> None:
        """Take up the labels of an existing labels file, which every label rewrites: refused
        unless writing it again keeps all it holds (the same cases and judge labels, and no
        column the studio does not write)."""

        def refuse(why: str) -> UsageError:
            return UsageError(
                f"{path}: is there, and writing labels into it would {why}; name another"
                " file with --labels (or merge the two by hand)"
            )

        try:
            earlier = read_judged_outputs(path)
            columns = label_columns(path)
        except LabelsError as error:
            raise refuse(f"replace what it holds ({error})") from None
        other = sorted(
            column
            for column in columns
            if column not in ("caseId", "output", "judge", *IDENTITY_COLUMNS)
            and not column.startswith("human.")
        )
        if other:
            raise refuse(f"drop its column(s) {', '.join(other)}")
        judged = {item.case_id: item.judge for item in self.items}
        unknown = [item.case_id for item in earlier if item.case_id not in judged]
        if unknown:
            raise refuse(f"drop labels of cases these results do not hold ({unknown[0]}, ...)")
        judges = {item.case_id: _identity(item) for item in self.items}
        changed = [
            item.case_id
            for item in earlier
            if judged[item.case_id] != item.judge or judges[item.case_id] != _identity(item)
        ]
        if changed:
            raise refuse(f"change the judge's label of {changed[0]} to these results' one")
        for item in earlier:
            if item.humans:
                self.labels.setdefault(item.case_id, {}).update(item.humans)

    @property
    def ordinal(self) -> bool:
        return any(isinstance(item.judge, int) for item in self.items)

    def choices(self) -> tuple[Label, ...]:
        """The labels a rater can give: pass and fail, or the scores of the scale."""
        if not self.ordinal:
            return PASS_FAIL_LABELS
        low, high = self.scale or self._score_range()
        return tuple(range(low, high + 1))

    def _score_range(self) -> tuple[int, int]:
        scores = [item.judge for item in self.items if isinstance(item.judge, int)]
        scores += [
            v for given in self.labels.values() for v in given.values() if isinstance(v, int)
        ]
        return min(scores), max(scores)

    def index_of(self, case_id: str) -> int | None:
        for index, item in enumerate(self.items):
            if item.case_id == case_id:
                return index
        return None

    def next_for(self, rater: str, after: int = -1) -> int | None:
        """The first case after position ``after`` that ``rater`` has not labelled (wrapping
        round once); None when they have labelled every case."""
        count = len(self.items)
        for step in range(1, count + 1):
            index = (after + step) % count
            if rater not in self.labels.get(self.items[index].case_id, {}):
                return index
        return None

    def labelled_by(self, rater: str) -> int:
        return sum(1 for given in self.labels.values() if rater in given)

    def raters(self) -> list[str]:
        return sorted({rater for given in self.labels.values() for rater in given})

    def give(self, case_id: str, rater: str, label: Label | None) -> None:
        """Record (or, with None, withdraw) one rater's label, and write the labels file."""
        rater = check_rater(rater)
        if self.index_of(case_id) is None:
            raise UsageError(f"{case_id!r} is not among the judged outputs")
        if label is not None and label not in self.choices():
            raise UsageError(
                f"{label!r} is not a label here ({', '.join(map(str, self.choices()))})"
            )
        with self._lock:
            given = self.labels.setdefault(case_id, {})
            if label is None:
                given.pop(rater, None)
            else:
                given[rater] = label
            self._write()

    def labels_text(self) -> str:
        """The labels file: every case someone labelled, in the results' order, with the
        output the judge saw. CSV in the wide layout (``caseId``, ``output``, ``judge``, then
        ``human.<rater>``), or JSON Lines (``human`` an object of the raters' labels)."""
        labelled = [item for item in self.items if self.labels.get(item.case_id)]
        named = any(item.judge_model or item.judge_template for item in self.items)
        if self.labels_path.suffix.lower() != ".csv":
            return "".join(
                jsonvalues.dumps_text(
                    {
                        "caseId": item.case_id,
                        "output": item.output,
                        "judge": item.judge,
                        **(
                            dict(zip(IDENTITY_COLUMNS, _identity(item), strict=True))
                            if named
                            else {}
                        ),
                        "human": self.labels[item.case_id],
                    }
                )
                + "\n"
                for item in labelled
            )
        raters = self.raters()
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        identity = list(IDENTITY_COLUMNS) if named else []
        writer.writerow(
            ["caseId", "output", "judge", *identity, *[f"human.{rater}" for rater in raters]]
        )
        for item in labelled:
            given = self.labels[item.case_id]
            output = item.output
            shown = output if isinstance(output, str) else jsonvalues.dumps_text(output)
            writer.writerow(
                [
                    item.case_id,
                    "" if output is None else shown,
                    item.judge,
                    *([value or "" for value in _identity(item)] if named else []),
                    *[given.get(rater, "") for rater in raters],
                ]
            )
        return out.getvalue()

    def _write(self) -> None:
        with AtomicOutputs([self.labels_path], force=True) as outputs:
            outputs.open(self.labels_path).write(self.labels_text())

    def report(self, bootstrap: BootstrapOptions | None = None) -> dict[str, Any] | str | None:
        """The judge report on the labels file as it is (what ``blueprint judge-report`` gives
        for it), or why there is none; None before the first label."""
        if not any(self.labels.values()):
            return None
        text = self.labels_text().encode()
        with self._lock:
            if self._report is not None and self._report[0] == text:
                return self._report[1]
        try:
            labels = read_labels(self.labels_path, scale=self.scale)
            families = read_set_families(self.set_path)
            built: dict[str, Any] | str = build_report(
                labels,
                families,
                set_path=str(self.set_path),
                labels_path=str(self.labels_path),
                thresholds=self.thresholds,
                bootstrap=bootstrap,
            )
        except (LabelsError, BlueprintError) as error:
            built = str(error)
        with self._lock:
            self._report = (text, built)
        return built

    def write_report(self, output: Path, *, force: bool) -> dict[str, Any]:
        """Write the report as ``blueprint judge-report -o OUTPUT.json`` writes it."""
        built = self.report()
        if not isinstance(built, dict):
            raise UsageError(built or "label some outputs first: there is no report yet")
        placed = with_report_paths(dict(built), output)
        with AtomicOutputs([output], force=force) as outputs:
            outputs.open(output).write(jsonvalues.dumps_text(placed, indent=True) + "\n")
        return placed
