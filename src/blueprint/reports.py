"""Rendering a validation report as JSON, JUnit XML or GitHub workflow annotations.

The human table lives in the CLI (it needs a terminal); these renderings are plain text for
machines and CI dashboards.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Final
from xml.etree import ElementTree

from blueprint.issues import Issue, ValidationReport

REPORT_KINDS: Final = ("text", "json", "junit", "github")


def render_json(report: ValidationReport) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False)


# characters XML 1.0 cannot hold at all, even escaped
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def render_junit(report: ValidationReport) -> str:
    """One test case per row (plus one for the set-level fields); errors fail it."""
    by_row: dict[int | None, list[Issue]] = defaultdict(list)
    for issue in report.issues:
        by_row[issue.row_index].append(issue)
    suite = ElementTree.Element("testsuite", name=_xml_text(report.source))
    cases = [(None, "set-level fields")] + [
        (index, _xml_text(f"row {index}: {row_id}" if row_id is not None else f"row {index}"))
        for index, row_id in enumerate(report.row_ids)
    ]
    failures = 0
    for index, name in cases:
        case = ElementTree.SubElement(
            suite, "testcase", classname=_xml_text(report.source), name=name
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
            failure.text = _xml_text("\n".join(_line(issue) for issue in errors))
        others = [issue for issue in found if issue.severity != "error"]
        if others:
            out = ElementTree.SubElement(case, "system-out")
            out.text = _xml_text("\n".join(_line(issue) for issue in others))
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    root = ElementTree.Element("testsuites", name="blueprint validate")
    root.set("tests", str(len(cases)))
    root.set("failures", str(failures))
    root.append(suite)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, "unicode")


def _line(issue: Issue) -> str:
    where = f"line {issue.line}, " if issue.line is not None else ""
    return f"[{issue.code}] {where}{issue.path}: {issue.message}"


_GITHUB_LEVEL: Final = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: ValidationReport) -> str:
    """GitHub Actions workflow commands, one annotation per issue."""
    lines = []
    for issue in report.issues:
        properties = [f"file={_escape_property(report.source)}"]
        if issue.line is not None:
            properties.append(f"line={issue.line}")
        properties.append(f"title={_escape_property(f'{issue.code} at {issue.path}')}")
        level = _GITHUB_LEVEL[issue.severity]
        lines.append(f"::{level} {','.join(properties)}::{_escape_data(issue.message)}")
    return "\n".join(lines)
