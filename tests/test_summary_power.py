"""The power of each case family in blueprint summary: scored rows, the smallest detectable
change and the rows needed, in the JSON, text and Markdown reports, against scipy."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.reports.summary import SummaryOptions, summarize
from conftest import EXAMPLES, document, row, write_json

runner = CliRunner()
EXAMPLE = EXAMPLES / "support-refunds.json"


def run(*args: Any):
    return runner.invoke(app, [str(a) for a in args])


def main_tail_power(n: int, p1: float, p2: Any) -> Any:
    """The power of the two-sided 5% pooled two-proportion z-test at n rows a run, from the
    tail the change moves toward (the other tail is what the formula leaves out); p2 may be
    an array."""
    pooled = (p1 + p2) / 2
    null = np.sqrt(2 * pooled * (1 - pooled) / n)
    alternative = np.sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / n)
    return stats.norm.cdf((np.abs(p2 - p1) - stats.norm.ppf(0.975) * null) / alternative)


def reference_detectable(n: int, baseline: float) -> float | None:
    """The smallest change toward one half, on a grid of 1e-6, that reaches 80% power."""
    sign = 1 if baseline <= 0.5 else -1
    grid = np.arange(1, round(max(baseline, 1 - baseline) * 1_000_000) + 1) / 1_000_000
    reached = np.nonzero(main_tail_power(n, baseline, baseline + sign * grid) >= 0.8)[0]
    return float(grid[reached[0]]) if len(reached) else None


def reference_needed(baseline: float, difference: float) -> int:
    other = baseline + difference if baseline <= 0.5 else baseline - difference
    pooled = (baseline + other) / 2
    spread = stats.norm.ppf(0.975) * math.sqrt(2 * pooled * (1 - pooled)) + stats.norm.ppf(
        0.8
    ) * math.sqrt(baseline * (1 - baseline) + other * (1 - other))
    return math.ceil(spread**2 / difference**2)


def mixed_set(folder: Path) -> Path:
    """A family of 60 graded rows with 5 starter examples and 2 a person grades; a family a
    person grades whole; a family a judge grades; 30 rows in no family; an empty family."""
    rows = [row(f"big-{i}", caseFamily="big") for i in range(60)]
    rows += [row(f"starter-{i}", caseFamily="big", provenance="starter-example") for i in range(5)]
    rows += [row(f"person-{i}", caseFamily="big", evaluator="human-expert") for i in range(2)]
    rows += [row(f"people-{i}", "expected-behavior-only", caseFamily="people") for i in range(4)]
    rows += [row(f"judged-{i}", "rubric", caseFamily="judged") for i in range(12)]
    rows += [row(f"loose-{i}") for i in range(30)]
    header = {
        "caseFamilies": [
            {"id": "big", "oracleType": "reference-answer", "evaluator": "exact-or-programmatic"},
            {"id": "people", "oracleType": "expected-behavior-only", "evaluator": "human-expert"},
            {"id": "judged", "oracleType": "rubric", "evaluator": "llm-judge"},
            {"id": "empty", "oracleType": "reference-answer"},
        ]
    }
    return write_json(folder / "set.json", document(*rows, **header))


def power_of(path: Path, **options: Any) -> dict[str, Any]:
    return summarize(path, SummaryOptions(exports=False, **options)).to_json()["power"]


def test_only_rows_a_grader_may_score_count(tmp_path: Path) -> None:
    power = power_of(mixed_set(tmp_path))
    counts = {item["id"]: (item["rows"], item["scoredRows"]) for item in power["families"]}
    assert counts == {
        "big": (67, 60),
        "people": (4, 0),
        "judged": (12, 12),
        "empty": (0, 0),
        None: (30, 30),
    }


def test_a_row_the_set_bars_is_not_scored(tmp_path: Path) -> None:
    rows = [
        row("ok", caseFamily="f"),
        row("barred", caseFamily="f", evaluator="pairwise-preference"),
    ]
    rows.append(row("not-an-oracle", "no-such-oracle", caseFamily="f"))
    header = {"caseFamilies": [{"id": "f", "oracleType": "reference-answer"}]}
    path = write_json(tmp_path / "set.json", document(*rows, **header))
    (family,) = power_of(path)["families"]
    assert (family["rows"], family["scoredRows"]) == (3, 1)


def test_a_family_evaluator_a_person_uses_keeps_its_rows_unscored(tmp_path: Path) -> None:
    rows = [row(f"r{i}", caseFamily="f") for i in range(3)]
    rows.append(row("own", caseFamily="f", evaluator="exact-or-programmatic"))
    header = {
        "caseFamilies": [{"id": "f", "oracleType": "reference-answer", "evaluator": "rubric-human"}]
    }
    path = write_json(tmp_path / "set.json", document(*rows, **header))
    (family,) = power_of(path)["families"]
    assert (family["rows"], family["scoredRows"]) == (4, 1)


@pytest.mark.parametrize("baseline", [0.5, 0.8, 0.1])
def test_detectable_changes_and_rows_needed_match_scipy(tmp_path: Path, baseline: float) -> None:
    power = power_of(mixed_set(tmp_path), baseline_rate=baseline, detect=0.1)
    assert (power["baselineRate"], power["power"], power["alpha"]) == (baseline, 0.8, 0.05)
    needed = reference_needed(baseline, 0.1)
    assert power["detect"] == 0.1 and power["rowsNeeded"] == needed
    for family in power["families"]:
        expected = (
            reference_detectable(family["scoredRows"], baseline) if family["scoredRows"] else None
        )
        if expected is None:
            assert family["detectableDifference"] is None
        else:
            assert family["detectableDifference"] == pytest.approx(expected, abs=1e-4)
        assert family["moreNeeded"] == max(0, needed - family["scoredRows"])


def test_a_baseline_far_from_one_half_detects_a_smaller_change(tmp_path: Path) -> None:
    path = mixed_set(tmp_path)
    half = {f["id"]: f["detectableDifference"] for f in power_of(path)["families"]}
    assert half["big"] == pytest.approx(reference_detectable(60, 0.5), abs=1e-4)
    for rate in (0.1, 0.9, 0.95):
        families = power_of(path, baseline_rate=rate)["families"]
        other = {f["id"]: f["detectableDifference"] for f in families}
        assert other["big"] < half["big"]


def test_a_family_with_enough_rows_needs_no_more(tmp_path: Path) -> None:
    power = power_of(mixed_set(tmp_path), detect=0.4)
    assert power["rowsNeeded"] == reference_needed(0.5, 0.4) == 20
    more = {f["id"]: f["moreNeeded"] for f in power["families"]}
    assert more == {"big": 0, "people": 20, "judged": 8, "empty": 20, None: 0}


def test_without_detect_no_rows_are_asked_for() -> None:
    power = power_of(EXAMPLE)
    assert power["detect"] is None and power["rowsNeeded"] is None
    assert {f["moreNeeded"] for f in power["families"]} == {None}
    # no family of the example has the 11 scored rows a change from one half needs
    assert {f["detectableDifference"] for f in power["families"]} == {None}


TEXT_ROW = re.compile(r"^ (\S.*?)\s{2,}(\d+ of \d+)\s+(none \(.*?\)|\d\.\d{3})\s+(\d+)$")


def text_rows(text: str) -> dict[str, list[str]]:
    section = text.split("power: ", 1)[1].split("\n\n", 2)[1]
    found = [TEXT_ROW.match(line) for line in section.splitlines()]
    return {match[1]: list(match.groups()[1:]) for match in found if match}


def markdown_rows(markdown: str) -> dict[str, list[str]]:
    section = markdown.split("## Power", 1)[1].split("## Provenance", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")][1:]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return {row[0]: row[1:] for row in cells}


def test_the_three_reports_agree(tmp_path: Path) -> None:
    path = mixed_set(tmp_path)
    args = ("--detect", "0.1", "--baseline-rate", "0.3", "--no-exports")
    data = json.loads(run("summary", path, "--report", "json", *args).stdout)["power"]
    text = run("summary", path, *args).stdout
    markdown = run("summary", path, "--report", "markdown", *args).stdout
    needed = reference_needed(0.3, 0.1)
    assert data["rowsNeeded"] == needed
    assert f"a change of 0.1 needs {needed} scored rows in a family" in text
    assert f"A change of 0.1 needs {needed} scored rows in a family." in markdown
    expected_text, expected_markdown = {}, {}
    for family in data["families"]:
        change = family["detectableDifference"]
        shown = f"{change:.3f}" if change is not None else "none (too few rows)"
        if not family["scoredRows"]:
            shown = "none (no scored rows)"
        cells = [f"{family['scoredRows']} of {family['rows']}", shown, str(family["moreNeeded"])]
        expected_text[family["id"] or "(no family)"] = cells
        expected_markdown[family["id"] or "(rows in no family)"] = cells
    assert text_rows(text) == expected_text
    assert markdown_rows(markdown) == expected_markdown
    assert data["families"][0]["detectableDifference"] == pytest.approx(
        reference_detectable(60, 0.3), abs=1e-4
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--baseline-rate", "0"),
        ("--baseline-rate", "1.5"),
        ("--detect", "0"),
        ("--detect", "-0.1"),
        ("--detect", "0.6"),
        ("--baseline-rate", "0.9", "--detect", "0.95"),
    ],
)
def test_out_of_range_options_exit_2(args: tuple[str, ...]) -> None:
    done = run("summary", EXAMPLE, "--report", "json", "--no-exports", *args)
    assert done.exit_code == 2
    assert json.loads(done.stdout)["exitCode"] == 2


def test_the_summary_function_refuses_out_of_range_options_before_reading() -> None:
    with pytest.raises(ValueError):
        summarize(Path("no-such-file.json"), SummaryOptions(baseline_rate=1.0))
    with pytest.raises(ValueError):
        summarize(Path("no-such-file.json"), SummaryOptions(detect=0.0))
