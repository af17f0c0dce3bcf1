"""blueprint judge-report: how far an LLM judge agrees with human labels, and the verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Final

import typer

from blueprint.authoring.editing import EditOptions
from blueprint.cli._common import (
    ConfigOption,
    Force,
    FromFormat,
    Report,
    SimpleReport,
    boundary,
    err,
    escape,
    print_json,
    print_listing,
    refuse_output_over_inputs,
    value_of,
)
from blueprint.core.errors import UsageError
from blueprint.io.atomic import AtomicOutputs
from blueprint.project.config import load_project

#: what each output extension writes
OUTPUT_KINDS: Final = {".json": "json", ".md": "markdown", ".html": "html", ".htm": "html"}


def _threshold(flag: str, help: str) -> Any:
    return typer.Option(flag, help=help, show_default=False)


@boundary
def judge_report_command(
    labels: Annotated[
        Path,
        typer.Argument(
            help="Labels: CSV or JSON Lines with caseId, judge and human (or human.<rater>)"
            " columns, or caseId, rater and label.",
            show_default=False,
        ),
    ],
    set_path: Annotated[
        Path, typer.Option("--set", help="The set the labels are for.", show_default=False)
    ],
    judge_results: Annotated[
        Path | None,
        typer.Option(
            "--judge-results",
            help="The runner's results the judge gave (what blueprint grade reads): each"
            " case's judge label, model and template come from them, and LABELS needs only"
            " the human labels.",
            show_default=False,
        ),
    ] = None,
    from_format: FromFormat = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="Write the report: .json (machine, what a set points at), .md or .html.",
            show_default=False,
        ),
    ] = None,
    force: Force = False,
    report: Report = SimpleReport.text,
    scale: Annotated[
        str | None,
        typer.Option(
            "--scale",
            help="The score range LOW-HIGH (default: the scores seen).",
            show_default=False,
        ),
    ] = None,
    min_labels: Annotated[
        int | None, _threshold("--min-labels", "Labelled cases a family needs (default 30).")
    ] = None,
    min_fraction: Annotated[
        float | None,
        _threshold("--min-fraction", "And this fraction of its rows (default 0)."),
    ] = None,
    min_agreement: Annotated[
        float | None, _threshold("--min-agreement", "Least percent agreement (default 0.8).")
    ] = None,
    min_kappa: Annotated[
        float | None, _threshold("--min-kappa", "Least Cohen's kappa (default 0.6).")
    ] = None,
    min_alpha: Annotated[
        float | None,
        _threshold("--min-alpha", "Least Krippendorff's alpha among humans (default 0.667)."),
    ] = None,
    max_bias: Annotated[
        float | None, _threshold("--max-bias", "Largest bias either way (default 0.1).")
    ] = None,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.")] = 2000,
    confidence: Annotated[
        float, typer.Option("--confidence", help="Confidence level of the intervals.")
    ] = 0.95,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    config: ConfigOption = None,
    point: Annotated[
        bool,
        typer.Option(
            "--point",
            help="Also point the set at the report written with -o X.json (its"
            " judgeValidation), so validate reads it.",
        ),
    ] = False,
) -> None:
    """Measure an LLM judge against human labels on a set's own cases, per case family.

    The judge's labels come from LABELS, or from a runner's results with --judge-results;
    where they name the judge (model and template), the report records the judge it
    validated, and grade later matches each judged verdict with it.

    Exit 0 when every labelled family passes, 1 when one fails, 2 for unusable input.
    """
    # the statistics libraries load only when a report is asked for
    from blueprint.reports import judgepages, judging

    kind = None
    if output is not None:
        kind = OUTPUT_KINDS.get(output.suffix.lower())
        if kind is None:
            raise UsageError(
                f"{output}: the report is written as .json, .md or .html, chosen by the extension"
            )
    if point and kind != "json":
        raise UsageError("--point needs the report written as JSON: -o REPORT.json")
    refuse_output_over_inputs(output, labels, set_path, judge_results)
    project = load_project(config)
    given = project.config.judge_thresholds.given()
    flags = {
        "min_labels": min_labels,
        "min_fraction": min_fraction,
        "min_agreement": min_agreement,
        "min_kappa": min_kappa,
        "min_alpha": min_alpha,
        "max_bias": max_bias,
    }
    given.update({name: value for name, value in flags.items() if value is not None})
    thresholds = judging.Thresholds(**given)
    bootstrap = judging.BootstrapOptions(resamples=resamples, confidence=confidence, seed=seed)
    parsed_scale = judging.parse_scale(scale) if scale is not None else None
    judged = None
    if judge_results is not None:
        from blueprint.reports.judging.judged import read_judge_results

        judged = read_judge_results(judge_results)
    read = judging.read_labels(labels, scale=parsed_scale, judged=judged, judged_path=judge_results)
    families = judging.read_set_families(set_path, format=value_of(from_format))
    built = judging.build_report(
        read,
        families,
        set_path=str(set_path),
        labels_path=str(labels),
        thresholds=thresholds,
        bootstrap=bootstrap,
    )
    if output is not None:
        built = judging.with_report_paths(built, output)
        if kind == "json":
            from blueprint.io import jsonvalues

            text = jsonvalues.dumps_text(built, indent=True) + "\n"
        elif kind == "markdown":
            text = judgepages.render_markdown(built)
        else:
            text = judgepages.render_html(built)
        with AtomicOutputs([output], force=force) as outputs:
            outputs.open(output).write(text)
        err.print(f"wrote {escape(str(output))}: verdict {built['verdict']}")
        if point:
            from blueprint.authoring.rowedit import point_at_judge_report

            pointed = point_at_judge_report(
                set_path, output, options=EditOptions(format=value_of(from_format))
            )
            if pointed.already:
                err.print(f"{escape(str(set_path))} already names {escape(pointed.reference)}")
            else:
                err.print(f"{escape(str(set_path))} now names {escape(pointed.reference)}")
    if report is SimpleReport.json:
        print_json(built)
    elif output is None:
        print_listing(escape(judgepages.render_text(built).rstrip("\n")))
    raise typer.Exit(0 if judging.report_passed(built) else 1)
