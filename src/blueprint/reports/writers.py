"""Rendering a validation report as JSON, JUnit XML or GitHub workflow annotations.

The human table lives in the CLI (it needs a terminal); these renderings are plain text for
machines and CI dashboards.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from json.encoder import encode_basestring
from typing import Final
from xml.etree import ElementTree

from blueprint.core.issues import Issue, ValidationReport

REPORT_KINDS: Final = ("text", "json", "junit", "github")


def render_json(report: ValidationReport) -> str:
    return "".join(json_pieces(report))


#: findings written out per piece of the streamed JSON report
_FINDINGS_PER_PIECE: Final = 1000


def json_pieces(report: ValidationReport) -> Iterator[str]:
    """The JSON report in pieces, a thousand findings at a time: the text
    ``json.dumps(report.to_json(), indent=2, ensure_ascii=False)`` gives, without holding a
    broken file's hundreds of thousands of findings as one document and one string."""

    def dumps(value: object) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False)

    document = report.to_json(with_issues=False)
    head = dumps({key: document[key] for key in ("valid", "rows", "counts")})
    tail = dumps({key: document[key] for key in ("source", "format")})
    if not report.issues:
        yield head[:-2] + ',\n  "issues": [],' + tail[1:]
        return
    yield head[:-2] + ',\n  "issues": ['
    issues = report.issues
    for start in range(0, len(issues), _FINDINGS_PER_PIECE):
        yield ",".join(map(_issue_json, issues[start : start + _FINDINGS_PER_PIECE])) + (
            "," if start + _FINDINGS_PER_PIECE < len(issues) else ""
        )
    yield "\n  ]," + tail[1:]


def _issue_json(issue: Issue) -> str:
    """One finding as ``json.dumps`` writes it at its depth in the report, spelled out: a
    finding has the same seven fields every time (and ``file`` after ``line`` when its line
    is in another file), and this is several times faster."""
    text = encode_basestring

    def number(value: int | None) -> str:
        return "null" if value is None else str(value)

    return (
        f'\n    {{\n      "code": {text(issue.code)},\n      "severity": {text(issue.severity)},'
        f'\n      "rowIndex": {number(issue.row_index)},'
        f'\n      "rowId": {"null" if issue.row_id is None else text(issue.row_id)},'
        f'\n      "path": {text(issue.path)},\n      "line": {number(issue.line)},'
        + ("" if issue.file is None else f'\n      "file": {text(issue.file)},')
        + f'\n      "message": {text(issue.message)}\n    }}'
    )


# characters XML 1.0 cannot hold at all, even escaped
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def render_junit(report: ValidationReport) -> str:
    """One test case per row (plus one for the set-level fields); errors fail it."""
    return junit_document("blueprint validate", [validation_suite(report)])


def render_junit_many(reports: Sequence[ValidationReport]) -> str:
    """One test suite per file."""
    return junit_document("blueprint validate", [validation_suite(report) for report in reports])


def junit_document(name: str, suites: list[ElementTree.Element]) -> str:
    root = ElementTree.Element("testsuites", name=name)
    root.set("tests", str(sum(int(suite.get("tests", "0")) for suite in suites)))
    root.set("failures", str(sum(int(suite.get("failures", "0")) for suite in suites)))
    root.extend(suites)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, "unicode")


def validation_suite(report: ValidationReport, name: str | None = None) -> ElementTree.Element:
    """A test suite for one validated file: a test case per row, errors failing it."""
    by_row: dict[int | None, list[Issue]] = defaultdict(list)
    for issue in report.issues:
        by_row[issue.row_index].append(issue)
    suite = ElementTree.Element("testsuite", name=xml_text(name or report.source))
    cases = [(None, "set-level fields")] + [
        (index, xml_text(f"row {index}: {row_id}" if row_id is not None else f"row {index}"))
        for index, row_id in enumerate(report.row_ids)
    ]
    failures = 0
    for index, case_name in cases:
        case = ElementTree.SubElement(
            suite, "testcase", classname=xml_text(report.source), name=case_name
        )
        found = by_row.get(index, [])
        errors = [issue for issue in found if issue.severity == "error"]
        if errors:
            failures += 1
            failure = ElementTree.SubElement(
                case,
                "failure",
                type=errors[0].code,
                message=f"{len(errors)} error(s): " + ", ".join(sorted({e.code for e in errors})),
            )
            failure.text = xml_text("\n".join(_line(issue) for issue in errors))
        others = [issue for issue in found if issue.severity != "error"]
        if others:
            out = ElementTree.SubElement(case, "system-out")
            out.text = xml_text("\n".join(_line(issue) for issue in others))
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    return suite


def _line(issue: Issue) -> str:
    where = f"line {issue.line}, " if issue.line is not None else ""
    if issue.file is not None:
        where = f"{issue.file} {where}" if where else f"{issue.file}, "
    return f"[{issue.code}] {where}{issue.path}: {issue.message}"


_GITHUB_LEVEL: Final = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: ValidationReport) -> str:
    """GitHub Actions workflow commands, one annotation per issue."""
    return "\n".join(github_annotation(report.source, issue) for issue in report.issues)


def github_annotation(source: str, issue: Issue) -> str:
    """The annotation of one finding, on its file (the one its line is in) and line."""
    properties = [f"file={_escape_property(issue.file or source)}"]
    if issue.line is not None:
        properties.append(f"line={issue.line}")
    properties.append(f"title={_escape_property(f'{issue.code} at {issue.path}')}")
    level = _GITHUB_LEVEL[issue.severity]
    return f"::{level} {','.join(properties)}::{_escape_data(issue.message)}"


def github_command(level: str, source: str, title: str, message: str) -> str:
    """A workflow annotation on a whole file (a failed round-trip, an export out of date)."""
    properties = f"file={_escape_property(source)},title={_escape_property(title)}"
    return f"::{level} {properties}::{_escape_data(message)}"
