"""The judge-validation report: each case family's statistics against the thresholds, and a
verdict with its reasons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from blueprint.reports.judging.labels import ID_PREVIEW, LabelledCase, Labels
from blueprint.reports.judging.statistics import BootstrapOptions, Sample, agreement_statistics
from blueprint.validation.judge_status import (
    REPORT_VERSION,
    LabelsError,
    SetFamilies,
    Thresholds,
)

FamilyVerdict = Literal["pass", "fail", "insufficient"]


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
        judge = _judge_of(labels, name, cases)
        entries.append(
            {
                "family": name,
                "rows": rows.rows,
                "judgeRows": rows.judge_rows,
                "required": required,
                "rowsHash": hashes[name],
                "caseIds": [case.case_id for case in cases],
                **({"judge": judge} if judge else {}),
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


def _judge_of(
    labels: Labels, family: str | None, cases: Sequence[LabelledCase]
) -> dict[str, Any] | None:
    """The judge whose labels a family's cases hold: its model and its template (one per
    oracle type: ``templates`` when the family's rows are of several), where the labels name
    them. LabelsError when they come from more than one judge (two models, two templates for
    one oracle type, or some cases naming the judge and others not), for a report speaks for
    one judge only."""
    models = {case.judge_model for case in cases}
    templates = {case.judge_template for case in cases}
    by_oracle: dict[str, set[str]] = {}
    for template in templates - {None}:
        assert template is not None
        by_oracle.setdefault(template.split("@", 1)[0], set()).add(template)
    mixed = len(models) > 1 or (None in templates and len(templates) > 1)
    if mixed or any(len(found) > 1 for found in by_oracle.values()):
        shown = "; ".join(
            f"model {model or '(unnamed)'}, template {template or '(unnamed)'}"
            for model, template in sorted(
                {(case.judge_model, case.judge_template) for case in cases},
                key=lambda pair: (pair[0] or "", pair[1] or ""),
            )
        )
        raise LabelsError(
            f"{labels.path}: the judge labels of case family {family_label(family)!r} come from"
            f" more than one judge ({shown}); a report validates one judge: label each"
            " judge's verdicts in a file of their own"
        )
    found: dict[str, Any] = {}
    (model,) = models
    if model:
        found["model"] = model
    named = sorted(template for template in templates if template)
    if len(named) == 1:
        found["template"] = named[0]
    elif named:
        found["templates"] = named
    return found or None


def _sample(labels: Labels, cases: Sequence[LabelledCase]) -> Sample:
    raters = tuple(rater for rater in labels.raters if any(rater in case.humans for case in cases))
    return Sample(
        scale=labels.scale,
        raters=raters,
        case_ids=[case.case_id for case in cases],
        human=[case.reference() for case in cases],
        judge=[case.judge for case in cases],
        ratings=[case.humans for case in cases],
    )


def report_passed(report: Mapping[str, Any]) -> bool:
    return report.get("verdict") == "pass"


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
