"""The judge's verdicts to be labelled, or to be compared with people's labels: a labels
file, or a runner's own results (anything ``blueprint grade`` reads), whose judge verdicts
give the judge's label and name the judge (model and template) where the file does."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.grading.results import read_results
from blueprint.reports.judging.labels import JudgedOutput, label_columns, read_judged_outputs
from blueprint.validation.judge_status import LabelsError

#: the extensions of a labels file
LABEL_SUFFIXES: Final = (".csv", ".jsonl", ".ndjson")


def read_judge_results(path: Path) -> list[JudgedOutput]:
    """The judged outputs of a results file (see the module's docstring): a labels file
    (``caseId`` and ``judge``), else any results file ``blueprint grade`` reads (a runner's
    own results, Blueprint's JSON Lines or CSV), whose judge verdicts give the judge's label
    and name the judge (model and template) where the file does."""
    if path.suffix.lower() in LABEL_SUFFIXES and "caseId" in label_columns(path):
        return read_judged_outputs(path)
    try:
        recorded = read_results(path)
    except ParseError as error:
        raise LabelsError(str(error)) from None
    judged = [
        JudgedOutput(
            item.id,
            item.line,
            item.output,
            "pass" if item.judge["pass"] else "fail",
            {},
            _text(item.judge.get("model")),
            _text(item.judge.get("template")),
        )
        for item in recorded.values()
        if isinstance(item.judge, dict) and isinstance(item.judge.get("pass"), bool)
    ]
    if not judged:
        raise LabelsError(
            f"{path}: no judge verdicts in it (a runner's results give them where a model"
            " graded the output: promptfoo's llm-rubric, Blueprint's scorer with a judge)"
        )
    return judged


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
