"""The command line: wiring, exit codes, and machine output on stdout."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from conftest import EXAMPLES, FIXTURES, document, row, write_json

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support-refunds.json")
BROKEN = str(EXAMPLES / "broken.json")


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_help_lists_the_commands() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in ("validate", "convert", "diff", "roundtrip", "formats", "evaluators", "schema"):
        assert command in result.stdout


def test_validate_valid_example_exits_0() -> None:
    result = run("validate", EXAMPLE)
    assert result.exit_code == 0
    assert result.stdout == ""


def test_validate_broken_example_json_report() -> None:
    result = run("validate", BROKEN, "--report", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False
    found = {(i["code"], i["rowId"], i["path"]) for i in report["issues"]}
    assert {
        ("inadmissible-evaluator", "faq-apology-quality", "$.rows[1].metadata.case.evaluator"),
        ("case-id-mismatch", "faq-returns-label", "$.rows[2].metadata.case.caseId"),
        ("omitted-field", "faq-returns-label", "$.rows[2].metadata.case.difficulty"),
    } <= found
    assert set(report) >= {"valid", "rows", "counts", "issues"}
    assert report["counts"]["error"] == len(
        [i for i in report["issues"] if i["severity"] == "error"]
    )


def test_validate_select_ignore() -> None:
    result = run(
        "validate", BROKEN, "--report", "json", "--select", "case-id-mismatch,omitted-field"
    )
    codes = {i["code"] for i in json.loads(result.stdout)["issues"]}
    assert codes == {"case-id-mismatch", "omitted-field"}
    result = run(
        "validate",
        BROKEN,
        "--report",
        "json",
        "--ignore",
        "case-id-mismatch",
        "--ignore",
        "omitted-field",
    )
    codes = {i["code"] for i in json.loads(result.stdout)["issues"]}
    assert "case-id-mismatch" not in codes and "omitted-field" not in codes
    assert run("validate", BROKEN, "--select", "no-such-code").exit_code == 2


def test_validate_fail_on_warning(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json", document(row("a", provenance="starter-example")))
    assert run("validate", path).exit_code == 0
    assert run("validate", path, "--fail-on", "warning").exit_code == 1


def test_validate_junit_report() -> None:
    result = run("validate", BROKEN, "--report", "junit")
    assert result.exit_code == 1
    root = ElementTree.fromstring(result.stdout)
    cases = root.findall(".//testcase")
    assert len(cases) == 4  # set-level fields + 3 rows
    failed = [case.get("name") for case in cases if case.find("failure") is not None]
    assert failed == ["row 1: faq-apology-quality", "row 2: faq-returns-label"]


def test_validate_github_annotations() -> None:
    result = run("validate", BROKEN, "--report", "github")
    lines = result.stdout.strip().splitlines()
    assert all(line.startswith("::error file=") for line in lines)
    assert any(",line=" in line and "case-id-mismatch" in line for line in lines)


@pytest.mark.parametrize(
    ("content", "name"),
    [
        (b'{"id": "a"}\n' * 6 + b'{"id": \n', "bad.jsonl"),
        (b"id,input\r\na,b,c\r\n", "bad.csv"),
        (b'{"name": "\xff"}', "bad.json"),
    ],
)
def test_unreadable_input_exits_2_without_traceback(
    tmp_path: Path, content: bytes, name: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = run("validate", path, "--report", "json")
    assert result.exit_code == 2
    parse = [i for i in json.loads(result.stdout)["issues"] if i["code"] == "parse"]
    assert parse and parse[0]["line"] is not None
    assert "Traceback" not in result.output


def test_jsonl_line_7_message_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "a"}\n' * 6 + b'{"id": \n')
    result = run("validate", path)
    assert result.exit_code == 2
    assert "bad.jsonl:7:" in result.stdout and "parse" in result.stdout


def test_convert_and_diff_round_trip(tmp_path: Path) -> None:
    csv_path, jsonl_path, json_path = tmp_path / "s.csv", tmp_path / "s.jsonl", tmp_path / "s.json"
    source = FIXTURES / "awkward" / "awkward.json"
    assert run("convert", source, csv_path).exit_code == 0
    assert run("convert", csv_path, jsonl_path).exit_code == 0
    assert run("convert", jsonl_path, "-o", json_path).exit_code == 0
    result = run("diff", source, json_path, "--report", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["identical"] is True


def test_convert_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_text("precious", encoding="utf-8")
    result = run("convert", EXAMPLE, target)
    assert result.exit_code == 2
    assert target.read_text(encoding="utf-8") == "precious"
    assert run("convert", EXAMPLE, target, "--force").exit_code == 0


def test_convert_json_report(tmp_path: Path) -> None:
    result = run("convert", EXAMPLE, tmp_path / "s.csv", "--report", "json")
    data = json.loads(result.stdout)
    assert data["format"] == "csv" and data["rows"] == 8 and data["lossy"] == []


def test_convert_usage_errors(tmp_path: Path) -> None:
    assert run("convert", EXAMPLE).exit_code == 2
    assert run("convert", EXAMPLE, tmp_path / "a.csv", "-o", tmp_path / "b.csv").exit_code == 2
    assert run("convert", EXAMPLE, tmp_path / "a.xlsx").exit_code == 2
    assert run("convert", EXAMPLE, tmp_path / "a.out", "--to", "nope").exit_code == 2
    assert run("convert", tmp_path / "missing.json", tmp_path / "a.csv").exit_code == 2


def test_diff_exit_codes(tmp_path: Path) -> None:
    assert run("diff", EXAMPLE, EXAMPLE).exit_code == 0
    result = run("diff", EXAMPLE, BROKEN, "--report", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["identical"] is False


@pytest.mark.parametrize("via", ["json", "jsonl", "csv"])
def test_roundtrip_canonical(via: str) -> None:
    result = run("roundtrip", EXAMPLE, "--via", via, "--report", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["exact"] is True


def test_formats_lists_the_registry() -> None:
    data = json.loads(run("formats", "--report", "json").stdout)
    from blueprint.formats import REGISTRY

    assert [entry["name"] for entry in data] == list(REGISTRY)
    assert {entry["name"] for entry in data} == {
        *("json", "jsonl", "csv"),
        *("promptfoo", "deepeval", "langsmith", "braintrust"),
        *("inspect", "openai-evals", "huggingface", "omk", "apollia", "ome"),
        "shards",
    }
    one = json.loads(run("formats", "csv", "--report", "json").stdout)
    assert one["lossless"] is True and one["extensions"] == [".csv"]
    assert run("formats").exit_code == 0


def test_evaluators_table_and_json() -> None:
    data = json.loads(run("evaluators", "rubric", "--report", "json").stdout)
    assert data["admits"] == ["rubric-human", "human-expert"]
    assert [c["evaluator"] for c in data["admitsWithConditions"]] == ["llm-judge"]
    assert {b["evaluator"] for b in data["bars"]} == {
        "exact-or-programmatic",
        "pairwise-preference",
        "trajectory-or-state-check",
    }
    every = json.loads(run("evaluators", "--report", "json").stdout)
    assert len(every) == 6
    assert run("evaluators").exit_code == 0
    assert run("evaluators", "golden").exit_code == 2


def test_schema_print_write_check(tmp_path: Path) -> None:
    printed = json.loads(run("schema", "row").stdout)
    assert printed["$id"] == "urn:blueprint:schema:row:v1"
    assert run("schema", "--check", tmp_path).exit_code == 1
    assert run("schema", "--write", tmp_path).exit_code == 0
    assert run("schema", "--check", tmp_path).exit_code == 0
    from blueprint.core.schema import SCHEMA_FILES

    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SCHEMA_FILES)


def test_internal_errors_exit_3_without_traceback(monkeypatch) -> None:
    import blueprint.cli.validate as module

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(module, "validate_file", explode)
    result = run("validate", EXAMPLE)
    assert result.exit_code == 3
    assert "Traceback" not in result.output
    assert "boom" in result.stderr


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.startswith("blueprint ")


def test_schema_write_refuses_to_replace_edited_files(tmp_path: Path) -> None:
    assert run("schema", "--write", tmp_path).exit_code == 0
    edited = tmp_path / "row.schema.json"
    edited.write_text("{}", encoding="utf-8")
    assert run("schema", "--write", tmp_path).exit_code == 2
    assert edited.read_text(encoding="utf-8") == "{}"
    assert run("schema", "--write", tmp_path, "--force").exit_code == 0
    assert run("schema", "--check", tmp_path).exit_code == 0
    assert run("schema", "--check", tmp_path / "nowhere").exit_code == 2
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    assert run("schema", "--write", a_file).exit_code == 2


def test_ignoring_parse_still_exits_2(tmp_path: Path) -> None:
    result = run("validate", tmp_path / "missing.json", "--ignore", "parse", "--report", "json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["valid"] is False


@pytest.mark.parametrize(
    "target",
    ["plainfile/out.json", "folder.json", "missing-dir/out.csv"],
)
def test_unwritable_outputs_exit_2(tmp_path: Path, target: str) -> None:
    (tmp_path / "plainfile").write_text("x", encoding="utf-8")
    (tmp_path / "folder.json").mkdir()
    result = run("convert", EXAMPLE, tmp_path / target, "--force")
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.stderr
    assert not list((tmp_path).glob("**/*.partial"))


def test_vendor_convert_reports_every_dropped_field(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    result = run("convert", EXAMPLE, target, "--to", "promptfoo", "--report", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    dropped = {(item["field"], item["scope"]): item for item in data["lossy"]}
    assert ("caseFamilies", "set") in dropped
    rows = [item for item in data["lossy"] if item["field"] == "*"]
    assert rows and all(item["count"] == len(item["rowIds"]) and item["reason"] for item in rows)
    assert "dropped" in result.stderr


def test_strict_vendor_convert_refuses_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    result = run("convert", EXAMPLE, target, "--to", "promptfoo", "--strict")
    assert result.exit_code == 1
    assert not target.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("via", ["promptfoo", "deepeval", "langsmith", "braintrust"])
def test_roundtrip_through_each_vendor_is_exact(via: str) -> None:
    result = run("roundtrip", EXAMPLE, "--via", via, "--report", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["exact"] is True


def test_formats_detail_comes_from_the_mapping_file() -> None:
    data = json.loads(run("formats", "langsmith", "--report", "json").stdout)
    assert data["mapping"]["format"] == "langsmith"
    assert {entry["field"] for entry in data["mapping"]["set"]} >= {"name", "caseFamilies"}


def test_errors_are_json_on_stdout_with_report_json(tmp_path: Path) -> None:
    result = run("convert", tmp_path / "missing.json", tmp_path / "out.csv", "--report", "json")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "error": f"{tmp_path / 'missing.json'}: no such file",
        "exitCode": 2,
    }
    plain = run("convert", tmp_path / "missing.json", tmp_path / "out.csv")
    assert plain.stdout == ""


def test_command_line_errors_are_json_too_when_asked(tmp_path: Path) -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", "blueprint", "convert", EXAMPLE, str(tmp_path / "x.json")]
    completed = subprocess.run(
        [*command, "--to", "nope", "--report", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 2
    error = json.loads(completed.stdout)
    assert error["exitCode"] == 2 and "nope" in error["error"]
    assert "Traceback" not in completed.stderr


def test_validate_several_files_folders_and_globs(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    good = write_json(tmp_path / "evals" / "good.json", document(row("a")))
    bad = write_json(tmp_path / "evals" / "bad.json", document(row("b", caseId="c")))
    result = run("validate", good, bad, "--report", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["files"] == 2 and data["valid"] is False
    assert [r["valid"] for r in data["reports"]] == [True, False]
    assert {s["code"] for s in data["statistics"]} == {"case-id-mismatch"}
    # a folder is walked; a glob the shell did not expand is expanded
    assert json.loads(run("validate", tmp_path / "evals", "--report", "json").stdout)["files"] == 2
    result = run("validate", str(tmp_path / "evals" / "g*.json"), "--report", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["valid"] is True
    assert run("validate", str(tmp_path / "evals" / "*.csv")).exit_code == 2


def test_validate_statistics_counts_by_code(tmp_path: Path) -> None:
    bad = write_json(tmp_path / "bad.json", document(row("b", caseId="c"), row("d", caseId="e")))
    result = run("validate", bad, "--statistics")
    assert result.exit_code == 1
    assert "case-id-mismatch" in result.stdout and "bad.json:" not in result.stdout


def test_fail_on_warning_says_failed(tmp_path: Path) -> None:
    path = write_json(tmp_path / "w.json", document(row("a", provenance="starter-example")))
    result = run("validate", path, "--fail-on", "warning")
    assert result.exit_code == 1
    assert result.stderr.startswith("failed:")
    assert run("validate", path).stderr.startswith("valid:")


def test_findings_keep_identifiers_whole_when_piped(tmp_path: Path) -> None:
    long_id = "a-very-long-row-identifier-" * 6
    path = write_json(tmp_path / "x.json", document(row(long_id, caseId="other")))
    result = run("validate", path)
    lines = [line for line in result.stdout.splitlines() if "case-id-mismatch" in line]
    assert len(lines) == 1 and long_id in lines[0] and "$.rows[0].metadata.case.caseId" in lines[0]


def test_validate_prefix_selectors(tmp_path: Path) -> None:
    bad = write_json(tmp_path / "bad.json", document(row("b", caseId="c", difficulty=1)))
    result = run("validate", bad, "--select", "case", "--report", "json")
    assert {i["code"] for i in json.loads(result.stdout)["issues"]} == {"case-id-mismatch"}
    assert run("validate", bad, "--select", "cas").exit_code == 2


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{missing}"],
        ["convert", "{missing}", "{tmp}/out.json"],
        ["diff", EXAMPLE, "{missing}"],
        ["roundtrip", "{missing}", "--via", "csv"],
        ["summary", "{missing}"],
        ["dedupe", "{missing}"],
        ["oracle", "{missing}", "r", "rubric"],
        ["render", "{missing}", "-o", "{tmp}/page.html"],
    ],
)
@pytest.mark.parametrize("name", ["evals", "evals/", "notes.txt"])
def test_a_missing_folder_or_file_is_named_missing(
    tmp_path: Path, command: list[str], name: str
) -> None:
    """A path that is not there says so, not that its extension names no format."""
    missing = str(tmp_path / name) + ("/" if name.endswith("/") else "")
    arguments = [part.format(missing=missing, tmp=tmp_path) for part in command]
    result = run(*arguments)
    assert result.exit_code == 2, result.output
    assert "no such file or folder" in result.output
    assert "cannot tell the format" not in result.output
