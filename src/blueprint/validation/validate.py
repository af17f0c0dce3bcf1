"""The validator: one streaming pass over a set, every finding collected as an issue.

Memory stays bounded by the per-set index (row ids and case families); rows are checked as
they are read and then let go. Validation never stops at the first problem, and a row that
cannot be decoded is reported and skipped while the rest of the file is still checked.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from blueprint.core.errors import ParseError
from blueprint.core.issues import ValidationReport
from blueprint.formats import (
    REGISTRY,
    Codec,
    SetSource,
    SourceRow,
    StrPath,
    UnreadableRow,
    resolve_codec,
)
from blueprint.formats.shards import Shards, find_shards, open_shards
from blueprint.validation.stream import (
    StreamValidator,
    ValidationOptions,
    parse_issue,
)

if TYPE_CHECKING:
    from blueprint.validation.parallel import Engine


def validate_file(
    path: StrPath,
    *,
    format: str | None = None,
    options: ValidationOptions | None = None,
    judge_reports: Sequence[Path] = (),
    jobs: int = 1,
) -> ValidationReport:
    """Validate a set file of any readable format; ``judge_reports`` are judge-validation
    reports the project configuration names, beside those the set points at.

    With ``jobs`` above 1 (0: one per core), a large JSON Lines file or JSON document is
    validated by that many worker processes; the report is the same as with one.
    """
    path = Path(path)
    options = options or ValidationOptions()
    try:
        codec = resolve_codec(path, format, reading=True)
    except ParseError as error:  # not a file that can be read at all (a pipe, a device)
        return unreadable_report(path, format or "a golden set", error.reason, options)
    if codec.name == "shards":  # a folder or a glob of files, which the pool reads as spans
        return validate_shards([path], options=options, judge_reports=judge_reports, jobs=jobs)
    try:
        # rows that fit the published schema decode straight into typed rows, where the
        # format offers it (canonical JSON Lines and JSON documents)
        opener = getattr(codec, "open_typed", codec.open)
        source = opener(path)
    except ParseError as error:
        reason = error.reason
        if error.path != path:  # the set file beside the data, not the data itself
            reason = f"{error.path.name}: {reason}"
        return unreadable_report(path, codec.name, reason, options, error.line, error.column)
    return validate_opened(path, codec, source, options, judge_reports=judge_reports, jobs=jobs)


def validate_opened(
    path: Path,
    codec: Codec,
    source: SetSource,
    options: ValidationOptions,
    *,
    judge_reports: Sequence[Path] = (),
    jobs: int = 1,
    observe: Callable[[SourceRow | UnreadableRow], None] | None = None,
) -> ValidationReport:
    """Validate a set ``codec`` has opened (see :func:`validate_file`). ``observe`` sees each
    row as the pass reads it, for a caller that keeps what it reads (the studio); the pass
    then runs in this process."""
    report = ValidationReport(source=str(path), format=codec.name)
    _validate_source(source, options, report, 1 if observe is not None else jobs, observe)
    # after the pass, not in it: reads the rows again only when a report is referenced
    if judge_reports or _names_judge_reports(source.header):
        from blueprint.validation.judge_status import settle_judge_conditions

        settle_judge_conditions(report, path, codec, source.header, options.wants, judge_reports)
    return report


def validate_shards(
    paths: Sequence[StrPath],
    *,
    options: ValidationOptions | None = None,
    judge_reports: Sequence[Path] = (),
    jobs: int = 1,
    engine: Engine | None = None,
) -> ValidationReport:
    """Validate a set kept in shards (:mod:`blueprint.formats.shards`): the JSON Lines and
    Parquet files the paths name, read as one set. Each finding names its shard.

    With ``jobs`` above 1 (0: one per core) and shards of 32 MiB or more, worker processes
    read them; with an ``engine`` (a cluster, :mod:`blueprint.validation.engines`), its
    workers do, whatever the size. The report is the same either way."""
    options = options or ValidationOptions()
    shards = find_shards(paths)
    try:
        source = open_shards(shards)
    except ParseError as error:
        report = unreadable_report(
            error.path, shards.format, error.reason, options, error.line, error.column
        )
        return replace(report, source=str(shards.source))
    report = ValidationReport(source=str(shards.source), format=shards.format)
    _validate_source(source, options, report, jobs, shards=shards, engine=engine)
    if judge_reports or _names_judge_reports(source.header):
        from blueprint.validation.judge_status import settle_judge_conditions

        again = open_shards(shards, typed=False).rows
        settle_judge_conditions(
            report,
            shards.folder,
            REGISTRY["jsonl"],
            source.header,
            options.wants,
            judge_reports,
            rows=(item.data if isinstance(item, SourceRow) else None for item in again),
        )
    return report


def _names_judge_reports(header: Mapping[str, Any] | None) -> bool:
    """Whether the set-level fields point at a judge-validation report (the set's own field or
    a case family's): only then are the reports read, and the rows read again."""
    if not header:
        return False
    families = header.get("caseFamilies")
    return bool(header.get("judgeValidation")) or (
        isinstance(families, list)
        and any(isinstance(family, dict) and family.get("judgeValidation") for family in families)
    )


def unreadable_report(
    path: Path,
    format_name: str,
    reason: str,
    options: ValidationOptions,
    line: int | None = None,
    column: int | None = None,
) -> ValidationReport:
    """The report on a file that cannot be read: one ``parse`` finding saying why."""
    report = ValidationReport(source=str(path), format=format_name, unreadable=True)
    if options.wants("parse"):
        report.issues.append(parse_issue(format_name, reason, line, column))
    return report


def validate_document(
    document: dict[str, Any], *, options: ValidationOptions | None = None, source: str = "<memory>"
) -> ValidationReport:
    """Validate a canonical set held in memory as JSON data (a dict with ``rows``)."""
    options = options or ValidationOptions()
    rows = document.get("rows", [])
    source_set = SetSource(
        path=Path(source),
        format="json",
        header={key: value for key, value in document.items() if key != "rows"},
        rows=iter(
            SourceRow(index, None, row)
            for index, row in enumerate(rows if isinstance(rows, list) else [])
        ),
    )
    report = ValidationReport(source=source, format="json")
    _validate_source(source_set, options, report)
    return report


def _validate_source(
    source: SetSource,
    options: ValidationOptions,
    report: ValidationReport,
    jobs: int = 1,
    observe: Callable[[SourceRow | UnreadableRow], None] | None = None,
    *,
    shards: Shards | None = None,
    engine: Engine | None = None,
) -> None:
    validator = StreamValidator(report, options)
    validator.check_header(source.header, source.notes)
    validator.follow(source)
    # the sets the pool reads: JSON Lines, a JSON document's rows, shards
    if engine is not None or (
        jobs != 1 and (shards is not None or source.format in ("jsonl", "json"))
    ):
        from blueprint.validation import parallel

        jobs = jobs or parallel.default_jobs()
        if engine is not None or parallel.worth_a_pool(source, jobs, shards):
            with few_collections():
                parallel.validate_with_pool(validator, source, jobs, shards=shards, engine=engine)
            validator.report_reading()
            return
    notes, check_row = source.reading_notes, validator.check_row
    with few_collections():
        for item in source.rows:
            if observe is not None:
                observe(item)
            if len(notes) != validator.reading_notes_seen:
                validator.report_reading()
            # a row read without its line (a JSON document's) gets it after its findings
            start = len(report.issues) if item.line is None else -1
            found = check_row(item, source.format)
            if found and start >= 0 and isinstance(item, SourceRow):
                line = source.line_of(item.index)
                if line is not None:
                    report.issues[start:] = [
                        replace(issue, line=line) for issue in report.issues[start:]
                    ]
    validator.report_reading()


#: how many container allocations the cyclic garbage collector waits for while a set is read
_BULK_THRESHOLD: Final = 200_000


@contextmanager
def few_collections() -> Iterator[None]:
    """Rows are freed by reference counting; what the cyclic collector would find while a
    large set is read (validated, or converted) is its own scans of the same long-lived
    objects (the per-set index, the modules, a batch of rows on its way to the writer), so
    those are frozen and young collections made rare."""
    thresholds = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0  # a caller's own frozen objects stay as they were
    if freezing:
        gc.freeze()
    gc.set_threshold(max(thresholds[0], _BULK_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freezing:
            gc.unfreeze()
