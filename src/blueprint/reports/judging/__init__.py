"""Judge validation: how far an LLM judge agrees with human labels on a set's own cases.

The spec admits ``llm-judge`` for reference-answer, acceptable-set and rubric cases only if
the judge is validated against human labels on a sample of the task's own cases. This package
reads such labels (:mod:`.labels`), computes the agreement statistics per case family
(:mod:`.statistics`) and gives a verdict against thresholds in a report (:mod:`.verdicts`).
Reading a report back for the validator, once a set points at one, is
:mod:`blueprint.validation.judge_status`'s work.
"""

from __future__ import annotations

from blueprint.reports.judging.labels import (
    HUMAN_COLUMN,
    ID_PREVIEW,
    JUDGE_RATER,
    PASS_FAIL,
    LabelledCase,
    Labels,
    Scale,
    parse_scale,
    read_labels,
)
from blueprint.reports.judging.statistics import (
    BootstrapOptions,
    agreement_statistics,
    cohen_kappa,
    krippendorff_alpha,
)
from blueprint.reports.judging.verdicts import (
    build_report,
    family_label,
    report_passed,
    with_report_paths,
)
from blueprint.validation.judge_status import (
    JUDGE_EVALUATOR,
    JUDGE_VALIDATION_FIELD,
    REPORT_VERSION,
    JudgeStatus,
    LabelsError,
    ReportReference,
    SetFamilies,
    Thresholds,
    index_families,
    judge_status,
    load_report,
    read_set_families,
    references,
    settle_judge_conditions,
    statuses_for,
)

__all__ = [
    "HUMAN_COLUMN",
    "ID_PREVIEW",
    "JUDGE_EVALUATOR",
    "JUDGE_RATER",
    "JUDGE_VALIDATION_FIELD",
    "PASS_FAIL",
    "REPORT_VERSION",
    "BootstrapOptions",
    "JudgeStatus",
    "LabelledCase",
    "Labels",
    "LabelsError",
    "ReportReference",
    "Scale",
    "SetFamilies",
    "Thresholds",
    "agreement_statistics",
    "build_report",
    "cohen_kappa",
    "family_label",
    "index_families",
    "judge_status",
    "krippendorff_alpha",
    "load_report",
    "parse_scale",
    "read_labels",
    "read_set_families",
    "references",
    "report_passed",
    "settle_judge_conditions",
    "statuses_for",
    "with_report_paths",
]
