"""apollia-os eval suites: strict TOML in, strict TOML out, and suites that come back the same."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert, data_rows, roundtrip
from blueprint.core.errors import EveryRowExcluded, ParseError, UnknownFormatError
from blueprint.formats import REGISTRY, UnreadableRow, WriteOptions, resolve_codec
from blueprint.formats.apollia_checks import answer_of, any_of_pattern, exact_pattern
from blueprint.formats.vendor import InvalidRowForExport
from blueprint.validation.validate import validate_file
from conftest import EXAMPLES, FIXTURES, document, row, write_json
from strategies import awkward_text, eval_sets, nonempty_text

CODEC = REGISTRY["apollia"]
SEED = FIXTURES / "native" / "apollia" / "my-validation-suite.toml"
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "suite"}

# what the apollia-os schema page lists, and nothing else
SUITE_KEYS = {"name", "tasks"}
TASK_KEYS = {"id", "prompt", "runs", "agent", "assertions"}
ASSERTION_KEYS = {
    "exit_code": {"type", "equals"},
    "file_exists": {"type", "path"},
    "regex": {"type", "on", "pattern"},
    "llm_judge": {"type", "rubric"},
}

runner = CliRunner()


def assert_strict_suite(text: str) -> dict[str, Any]:
    """The suite parses with a strict TOML reader and holds only what apollia-os accepts."""
    suite = tomllib.loads(text)
    assert set(suite) <= SUITE_KEYS and isinstance(suite["name"], str)
    for task in suite.get("tasks", []):
        assert set(task) <= TASK_KEYS, task
        assert isinstance(task["id"], str) and isinstance(task["prompt"], str)
        if "runs" in task:
            assert type(task["runs"]) is int and 0 <= task["runs"] < 2**32
        if "agent" in task:
            assert isinstance(task["agent"], str)
        for assertion in task.get("assertions", []):
            assert set(assertion) == ASSERTION_KEYS[assertion["type"]], assertion
            if assertion["type"] == "exit_code":
                assert type(assertion["equals"]) is int and -(2**31) <= assertion["equals"] < 2**31
            if assertion["type"] == "regex":
                assert assertion["on"] in ("stdout", "result")
            for key in ("path", "pattern", "rubric"):
                if key in assertion:
                    assert isinstance(assertion[key], str)
    return suite


def export(rows: list[dict[str, Any]], path: Path, **options: Any) -> Any:
    return CODEC.write(HEADER, iter(rows), path, WriteOptions(force=True, **options))


def read_rows(path: Path) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in data_rows(CODEC.open(path))}


def write_suite(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def again(path: Path, tmp_path: Path) -> dict[str, Any]:
    """Import a suite and export it again; the suite written, parsed."""
    canonical = tmp_path / "imported.json"
    convert(path, canonical, ConvertOptions(source_format="apollia", force=True))
    back = tmp_path / "again.toml"
    convert(canonical, back, ConvertOptions(target_format="apollia", force=True))
    return assert_strict_suite(back.read_text(encoding="utf-8"))


# --- the seed's own example -------------------------------------------------------------------


def test_seed_example_reads_as_a_final_state_task_with_every_assertion_kept() -> None:
    rows = read_rows(SEED)
    task = rows["summarize-text"]
    case = task["metadata"]["case"]
    assert case["oracleType"] == "expected-final-state"
    assert case["provenance"] == "imported"
    assert task["input"] == "Summarize this text in three sentences: [...]"
    assert task["expected"]["checks"] == [
        {"kind": "record", "description": "the run's exit code", "query": "exit_code", "equals": 0},
        {"kind": "file_exists", "path": "output/summary.txt"},
    ]
    kept = case["extensions"]["apollia"]
    assert kept["record"] == {"runs": 3}
    assert [a["type"] for a in kept["native"]["assertions"]["value"]] == [
        "exit_code",
        "file_exists",
        "regex",
        "llm_judge",
    ]
    derived = case["extensions"]["blueprint-import"]["derived"]
    assert {"metadata.case.oracleType", "expected", "metadata.case.expectedBehavior"} <= set(
        derived
    )


def test_seed_example_comes_back_as_the_same_suite(tmp_path: Path) -> None:
    original = tomllib.loads(SEED.read_text(encoding="utf-8"))
    assert again(SEED, tmp_path) == original
    result = roundtrip(SEED, "apollia")
    assert result.exact and result.vendor_changes == [] and result.export.lossy == []


def test_seed_example_import_is_a_valid_set(tmp_path: Path) -> None:
    target = tmp_path / "set.json"
    convert(SEED, target)  # the .toml extension and its content say apollia
    report = validate_file(target)
    assert report.valid, report.flatten(("code", "path", "message"))
    assert report.counts_by_code()["derived-value"] >= 3


def test_seed_export_notes_the_judge_warning(tmp_path: Path) -> None:
    target = tmp_path / "set.json"
    convert(SEED, target)
    result = convert(target, tmp_path / "out.toml", ConvertOptions(target_format="apollia"))
    assert any("no judge router" in note for note in result.export.notes)


# --- suites written by hand: both layouts, mixed assertions, defaults ------------------------

HAND_WRITTEN = {
    "tables": """
name = "hand"

[[tasks]]
id = "capital"
prompt = "Capital of France?"
runs = 5
agent = "geo-agent"

  [[tasks.assertions]]
  type = "regex"
  on = "result"
  pattern = "^Paris$"

[[tasks]]
id = "colour"
prompt = '''
Name a primary colour.
One word.'''

  [[tasks.assertions]]
  type = "regex"
  on = "result"
  pattern = "^(?:red|blue|yellow)$"

  [[tasks.assertions]]
  type = "exit_code"
  equals = 0

[[tasks]]
id = "essay"
prompt = "Write a haiku"
runs = 0

  [[tasks.assertions]]
  type = "llm_judge"
  rubric = "Three lines, 5-7-5 syllables."

  [[tasks.assertions]]
  type = "llm_judge"
  rubric = "About autumn."

[[tasks]]
id = "no-checks"
prompt = "Say hi"

[[tasks]]
id = "empty-checks"
prompt = "Say hi"
assertions = []

[[tasks]]
id = "stdout-only"
prompt = "Print a summary"

  [[tasks.assertions]]
  type = "regex"
  on = "stdout"
  pattern = "\\\\b(summary|synthesis)\\\\b"
""",
    "inline": """
name = "inline"
tasks = [
  { id = "a.b", prompt = "2+2?", assertions = [
      { type = "regex", on = "result", pattern = "^4\\\\.0$" }] },
  { prompt = "first", id = "dup", agent = "x", assertions = [
      { type = "file_exists", path = "out/a.txt" },
      { type = "exit_code", equals = 3 },
  ] },
  { id = "dup", prompt = "second", runs = 4294967295 },
  { id = "escapes", prompt = "q", assertions = [
      { on = "result", type = "regex", pattern = "^line1\\\\nline2 \\\\$5 \\\\(net\\\\)$" },
      { type = "regex", on = "result", pattern = "(?i)^paris$" },
  ] },
]
""",
}


@pytest.mark.parametrize("layout", list(HAND_WRITTEN))
def test_hand_written_suites_come_back_the_same(layout: str, tmp_path: Path) -> None:
    path = write_suite(tmp_path / f"{layout}.toml", HAND_WRITTEN[layout])
    original = tomllib.loads(HAND_WRITTEN[layout])
    assert again(path, tmp_path) == original
    result = roundtrip(path, "apollia")
    assert result.exact and result.vendor_changes == [], result.diff.to_json()


def test_hand_written_inference(tmp_path: Path) -> None:
    rows = read_rows(write_suite(tmp_path / "s.toml", HAND_WRITTEN["tables"]))
    oracle = {key: value["metadata"]["case"]["oracleType"] for key, value in rows.items()}
    assert oracle == {
        "capital": "reference-answer",
        "colour": "acceptable-set",
        "essay": "rubric",
        "no-checks": "expected-behavior-only",
        "empty-checks": "expected-behavior-only",
        "stdout-only": "expected-behavior-only",
    }
    assert rows["capital"]["expected"] == "Paris"
    assert rows["colour"]["expected"] == {"acceptable": ["red", "blue", "yellow"]}
    assert rows["colour"]["input"] == "Name a primary colour.\nOne word."
    essay = rows["essay"]["metadata"]["case"]
    assert essay["evaluationCriteria"] == ["Three lines, 5-7-5 syllables.", "About autumn."]
    assert essay["evaluator"] == "llm-judge" and "expected" not in rows["essay"]
    assert rows["capital"]["metadata"]["case"]["extensions"]["apollia"]["record"] == {
        "runs": 5,
        "agent": "geo-agent",
    }


def test_inline_layout_inference_and_repeated_ids(tmp_path: Path) -> None:
    rows = read_rows(write_suite(tmp_path / "s.toml", HAND_WRITTEN["inline"]))
    assert rows["a.b"]["expected"] == "4.0"
    assert rows["escapes"]["expected"] == "line1\nline2 $5 (net)"
    assert rows["dup"]["expected"] == {
        "checks": [
            {"kind": "file_exists", "path": "out/a.txt"},
            {
                "kind": "record",
                "description": "the run's exit code",
                "query": "exit_code",
                "equals": 3,
            },
        ]
    }
    renamed = rows["dup-2"]["metadata"]["case"]
    assert renamed["caseId"] == "dup-2"
    assert "id" in renamed["extensions"]["blueprint-import"]["derived"]


def test_a_task_edited_in_blueprint_is_written_from_the_row(tmp_path: Path) -> None:
    rows = read_rows(write_suite(tmp_path / "s.toml", HAND_WRITTEN["tables"]))
    rows["capital"]["expected"] = "Paris, France"
    result = export(list(rows.values()), tmp_path / "out.toml", llm_judge=True)
    suite = assert_strict_suite((tmp_path / "out.toml").read_text(encoding="utf-8"))
    capital = next(task for task in suite["tasks"] if task["id"] == "capital")
    assert capital["assertions"] == [
        {"type": "regex", "on": "result", "pattern": "^Paris, France$"}
    ]
    assert capital["runs"] == 5 and capital["agent"] == "geo-agent"  # kept
    assert any("regenerated" in note for note in result.notes)


# --- export: strict, and only the keys apollia-os accepts -------------------------------------


@pytest.mark.parametrize(
    "source", [FIXTURES / "awkward" / "awkward.json", EXAMPLES / "support-refunds.json"]
)
@pytest.mark.parametrize("judge", [False, True])
def test_exports_of_the_shared_fixtures_are_strict_suites(
    source: Path, judge: bool, tmp_path: Path
) -> None:
    target = tmp_path / "out.toml"
    options = ConvertOptions(target_format="apollia", llm_judge=judge, include_human_review=judge)
    result = convert(source, target, options)
    suite = assert_strict_suite(target.read_text(encoding="utf-8"))
    assert suite["name"] == tomllib.loads(target.read_text(encoding="utf-8"))["name"]
    assert len(suite.get("tasks", [])) == result.export.rows


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(doc=eval_sets(), judge=st.booleans())
def test_any_valid_set_exports_to_a_strict_suite(
    doc: dict[str, Any], judge: bool, tmp_path: Path
) -> None:
    header = {key: value for key, value in doc.items() if key != "rows"}
    target = tmp_path / "out.toml"
    options = WriteOptions(force=True, llm_judge=judge, include_human_review=judge)
    try:
        result = CODEC.write(header, iter(doc["rows"]), target, options)
    except InvalidRowForExport:
        return  # an inadmissible pairing never reaches a vendor
    except EveryRowExcluded as refused:  # nothing written: a suite of no task is no export
        assert doc["rows"]
        assert _left_out(refused) == {r["id"] for r in doc["rows"]}
        return
    suite = assert_strict_suite(target.read_text(encoding="utf-8"))
    assert suite["name"] == doc["name"]
    assert [task["id"] for task in suite.get("tasks", [])] == [
        r["id"] for r in doc["rows"] if r["id"] not in _left_out(result)
    ]


def _left_out(result: Any) -> set[str]:
    return {i for lossy in result.lossy if lossy.kind == "excluded" for i in lossy.row_ids}


def test_rubric_rows_are_left_out_unless_asked_for(tmp_path: Path) -> None:
    rubric = row("judged", "rubric", evaluator="llm-judge", evaluationCriteria=["polite", "short"])
    answer = row("answer", expected="yes")
    result = export([rubric, answer], tmp_path / "out.toml")
    excluded = [lossy for lossy in result.lossy if lossy.kind == "excluded"]
    assert [lossy.row_ids for lossy in excluded] == [("judged",)]
    assert "fails every llm_judge" in excluded[0].reason and "--llm-judge" in excluded[0].reason
    suite = assert_strict_suite((tmp_path / "out.toml").read_text(encoding="utf-8"))
    assert [task["id"] for task in suite["tasks"]] == ["answer"]
    assert not any("llm_judge" in note for note in result.notes)

    asked = export([rubric, answer], tmp_path / "out.toml", llm_judge=True)
    suite = assert_strict_suite((tmp_path / "out.toml").read_text(encoding="utf-8"))
    judged = suite["tasks"][0]
    assert judged["assertions"] == [
        {"type": "llm_judge", "rubric": "polite"},
        {"type": "llm_judge", "rubric": "short"},
    ]
    assert not [lossy for lossy in asked.lossy if lossy.kind == "excluded"]
    assert any("no judge router" in note for note in asked.notes)
    weakened = [lossy for lossy in asked.lossy if lossy.kind == "weakened"]
    assert [(w.field, w.row_ids) for w in weakened] == [
        ("metadata.case.evaluationCriteria", ("judged",))
    ]


def test_cli_llm_judge_flag(tmp_path: Path) -> None:
    source = write_json(
        tmp_path / "set.json",
        document(row("judged", "rubric", evaluator="llm-judge", evaluationCriteria=["polite"])),
    )
    target = tmp_path / "out.toml"
    left = runner.invoke(app, ["convert", str(source), str(target), "--to", "apollia"])
    # its one row left out: nothing is written, and the refusal names the flag
    assert left.exit_code == 1, left.output
    assert "--llm-judge" in left.output and not target.exists()
    written = runner.invoke(
        app, ["convert", str(source), str(target), "--to", "apollia", "--llm-judge", "--force"]
    )
    assert written.exit_code == 0, written.output
    assert tomllib.loads(target.read_text(encoding="utf-8"))["tasks"][0]["assertions"] == [
        {"type": "llm_judge", "rubric": "polite"}
    ]
    strict_target = str(tmp_path / "strict.toml")
    strict = runner.invoke(
        app, ["convert", str(source), strict_target, "--to", "apollia", "--llm-judge", "--strict"]
    )
    assert strict.exit_code == 1  # a weakened rule (the judge) refuses a strict export
    assert not (tmp_path / "strict.toml").exists()


def test_final_state_checks_map_to_exit_code_and_file_exists(tmp_path: Path) -> None:
    checks = [
        {"kind": "file_exists", "path": "out/report.md"},
        {"kind": "command", "run": "pytest -q", "exitCode": 0},
        {"kind": "record", "description": "exit", "query": "exit_code", "equals": 2},
        {"kind": "record", "description": "row written", "equals": None},
    ]
    state = row("state", "expected-final-state", expected={"checks": checks})
    only_command = row(
        "command-only",
        "expected-final-state",
        expected={"checks": [{"kind": "command", "run": "make", "exitCode": 0}]},
    )
    tools = row("tools", "expected-tool-calls", expected={"calls": []})
    result = export([state, only_command, tools], tmp_path / "out.toml")
    suite = assert_strict_suite((tmp_path / "out.toml").read_text(encoding="utf-8"))
    assert suite["tasks"] == [
        {
            "id": "state",
            "prompt": "question for state",
            "assertions": [
                {"type": "file_exists", "path": "out/report.md"},
                {"type": "exit_code", "equals": 2},
            ],
        }
    ]
    excluded = {lossy.row_ids: lossy.reason for lossy in result.lossy if lossy.kind == "excluded"}
    assert set(excluded) == {("command-only",), ("tools",)}
    dropped = {lossy.field for lossy in result.lossy if lossy.kind == "dropped"}
    assert "expected" in dropped


def test_answers_become_anchored_escaped_patterns(tmp_path: Path) -> None:
    rows = [
        row("text", expected="a.b (c) $5 ^x | y\nz"),
        row("number", expected=12),
        row("set", "acceptable-set", expected={"acceptable": ["yes", "y|n", 1]}),
        row(
            "graded",
            "acceptable-set",
            expected={"graded": [{"value": "full", "grade": 1}, {"value": "no", "grade": 0}]},
        ),
    ]
    result = export(rows, tmp_path / "out.toml")
    suite = assert_strict_suite((tmp_path / "out.toml").read_text(encoding="utf-8"))
    patterns = {task["id"]: task["assertions"][0]["pattern"] for task in suite["tasks"]}
    assert patterns == {
        "text": "^a\\.b \\(c\\) \\$5 \\^x \\| y\nz$",
        "number": "^12$",
        "set": "^(?:yes|y\\|n|1)$",
        "graded": "^(?:full)$",
    }
    back = read_rows(tmp_path / "out.toml")
    assert back["text"]["expected"] == "a.b (c) $5 ^x | y\nz"
    assert back["number"]["expected"] == "12"
    assert back["set"]["expected"] == {"acceptable": ["yes", "y|n", "1"]}
    assert back["graded"]["expected"] == {"acceptable": ["full"]}
    declared = {i for lossy in result.lossy if lossy.field == "expected" for i in lossy.row_ids}
    assert declared == {"number", "set", "graded"}


@given(text=awkward_text)
def test_exact_patterns_match_only_their_text(text: str) -> None:
    pattern = exact_pattern(text)
    assert answer_of(pattern) == ("reference-answer", text)
    # for an escaped literal, Python's re reads the body as Rust's regex does
    body = pattern[1:-1]
    assert re.fullmatch(body, text)
    assert not re.fullmatch(body, text + "\n")
    assert not re.fullmatch(body, " " + text)


@given(texts=st.lists(awkward_text, min_size=1, max_size=4))
def test_alternation_patterns_give_their_members_back(texts: list[str]) -> None:
    pattern = any_of_pattern(texts)
    assert answer_of(pattern) == ("acceptable-set", texts)
    for text in texts:
        assert re.fullmatch(pattern[1:-1], text)


@pytest.mark.parametrize(
    "pattern", ["^a.b$", "a", "^a", "(?i)^a$", "^a\\$", "^(?:a)|(?:b)$", "^[ab]$", "^a\\d$", "^$x"]
)
def test_other_patterns_say_no_answer(pattern: str) -> None:
    assert answer_of(pattern) is None


def test_human_review_rows_go_as_judged_behaviour_when_asked(tmp_path: Path) -> None:
    behaviour = row("behaviour", "expected-behavior-only", evaluator="human-expert")
    result = export([behaviour], tmp_path / "out.toml", include_human_review=True)
    suite = assert_strict_suite((tmp_path / "out.toml").read_text(encoding="utf-8"))
    assert suite["tasks"][0]["assertions"] == [
        {"type": "llm_judge", "rubric": "answers with the published policy"}
    ]
    assert any("no judge router" in note for note in result.notes)
    dropped = {lossy.field for lossy in result.lossy if lossy.kind == "dropped"}
    assert "metadata.case.oracleType" in dropped


def test_the_case_profile_is_declared_dropped_field_by_field(tmp_path: Path) -> None:
    full = row(
        "full",
        expected="yes",
        scenario="s",
        actor="a",
        provenance="starter-example",
        passLogic="exact",
        reversibility="R1",
        caseFamily="answers",
        extensions={"acme": {"ticket": 1}},
    )
    full["metadata"]["team"] = "support"
    full["metadata"]["odd key"] = 1
    result = export([full], tmp_path / "out.toml")
    dropped = {lossy.field: lossy.reason for lossy in result.lossy if lossy.kind == "dropped"}
    assert set(dropped) == {
        "metadata.case.scenario",
        "metadata.case.actor",
        "metadata.case.provenance",
        "metadata.case.passLogic",
        "metadata.case.reversibility",
        "metadata.case.caseFamily",
        "metadata.case.expectedBehavior",
        "metadata.case.extensions",
        "metadata.team",
        "metadata['odd key']",
    }
    assert dropped["metadata.team"] == dropped["metadata['odd key']"]
    assert any("starter" in note for note in result.notes)


def test_an_edited_extension_that_apollia_would_refuse_stops_the_export(tmp_path: Path) -> None:
    rows = read_rows(write_suite(tmp_path / "s.toml", HAND_WRITTEN["tables"]))
    rows["capital"]["metadata"]["case"]["extensions"]["apollia"]["record"]["runs"] = "five"
    target = tmp_path / "out.toml"
    with pytest.raises(InvalidRowForExport, match="runs"):
        export(list(rows.values()), target)
    assert not target.exists()


# --- strict reading: file, line and key -------------------------------------------------------

#: (suite text, line of the problem, what the message names, whether the whole file is refused)
BAD_SUITES = {
    "unknown-suite-key": ('name = "s"\ndescription = "d"\n', 2, "'description'", True),
    "no-name": ('[[tasks]]\nid = "a"\nprompt = "p"\n', 1, "no name", True),
    "name-not-text": ("name = 3\n", 1, "name is an integer", True),
    "tasks-not-array": ('name = "s"\n[tasks]\nid = "a"\n', 2, "tasks is a table", True),
    "syntax": ('name = "s"\n[[tasks]\n', 2, "TOML", True),
    "unknown-task-key": (
        'name = "s"\n\n[[tasks]]\nid = "a"\nprompt = "p"\n\n[[tasks]]\nid = "b"\npromt = "p"\n',
        9,
        "'promt'",
        False,
    ),
    "missing-prompt": ('name = "s"\n[[tasks]]\nid = "a"\n', 2, "no prompt", False),
    "runs-negative": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\nruns = -1\n',
        5,
        "u32",
        False,
    ),
    "runs-too-big": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\nruns = 4294967296\n',
        5,
        "u32",
        False,
    ),
    "runs-float": ('name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\nruns = 3.0\n', 5, "runs", False),
    "runs-text": ('name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\nruns = "3"\n', 5, "runs", False),
    "runs-boolean": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\nruns = true\n',
        5,
        "runs",
        False,
    ),
    "agent-not-text": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\nagent = 1\n',
        5,
        "agent",
        False,
    ),
    "prompt-not-text": ('name = "s"\n[[tasks]]\nid = "a"\nprompt = ["p"]\n', 4, "prompt", False),
    "unknown-type": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\n\n  [[tasks.assertions]]\n'
        '  type = "contains"\n  value = "x"\n',
        7,
        "'contains'",
        False,
    ),
    "unknown-assertion-key": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\n\n  [[tasks.assertions]]\n'
        '  type = "llm_judge"\n  rubric = "r"\n  expected = "x"\n',
        9,
        "'expected'",
        False,
    ),
    "unknown-channel": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\n[[tasks.assertions]]\n'
        'type = "regex"\non = "stderr"\npattern = "x"\n',
        7,
        "'stderr'",
        False,
    ),
    "missing-pattern": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\n[[tasks.assertions]]\n'
        'type = "regex"\non = "result"\n',
        5,
        "pattern",
        False,
    ),
    "equals-not-integer": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\n[[tasks.assertions]]\n'
        'type = "exit_code"\nequals = "0"\n',
        7,
        "equals",
        False,
    ),
    "equals-out-of-range": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\n[[tasks.assertions]]\n'
        'type = "exit_code"\nequals = 2147483648\n',
        7,
        "32-bit",
        False,
    ),
    "no-type": (
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\n[[tasks.assertions]]\npath = "x"\n',
        5,
        "no type",
        False,
    ),
    "inline-unknown-key": (
        'name = "s"\ntasks = [\n  { id = "a", prompt = "p" },\n'
        '  { id = "b", prompt = "p", assertions = [\n'
        '      { type = "file_exists", path = "x" },\n'
        '      { type = "regex", on = "result", pattern = "x", flags = "i" },\n  ] },\n]\n',
        6,
        "'flags'",
        False,
    ),
    "inline-task-not-table": ('name = "s"\ntasks = [\n  "a",\n]\n', 3, "a task is a table", False),
    "inline-missing-id": ('name = "s"\ntasks = [{ prompt = "p" }]\n', 2, "no id", False),
    "quoted-keys": (
        'name = "s"\n[[tasks]]\n"id" = "a"\nprompt = """x\n\n"""\n\'run s\' = 1\n',
        7,
        "'run s'",
        False,
    ),
}


@pytest.mark.parametrize("name", list(BAD_SUITES))
def test_strict_reading_names_file_line_and_key(name: str, tmp_path: Path) -> None:
    text, line, key, whole = BAD_SUITES[name]
    path = write_suite(tmp_path / f"{name}.toml", text)
    if whole:
        with pytest.raises(ParseError) as caught:
            CODEC.open(path)
        error = caught.value
        assert error.line == line and key in error.reason, (error.line, error.reason)
        assert str(path) in str(error)
    else:
        bad = [item for item in CODEC.open(path).rows if isinstance(item, UnreadableRow)]
        assert len(bad) == 1
        assert bad[0].line == line and key in bad[0].reason, (bad[0].line, bad[0].reason)
        with pytest.raises(ParseError) as caught:  # a conversion stops on it, with the file
            list(data_rows(CODEC.open(path)))
        assert f"{path}:{line}:" in str(caught.value)


@pytest.mark.parametrize("name", ["unknown-suite-key", "unknown-task-key", "inline-unknown-key"])
@pytest.mark.parametrize("command", ["validate", "convert"])
def test_cli_exit_code_for_an_unreadable_suite(name: str, command: str, tmp_path: Path) -> None:
    text, line, key, _ = BAD_SUITES[name]
    path = write_suite(tmp_path / "suite.toml", text)
    args = [command, str(path)] + ([str(tmp_path / "out.json")] if command == "convert" else [])
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert key in result.output and f"{line}" in result.output
    assert not (tmp_path / "out.json").exists()


def test_other_tasks_are_still_read_beside_a_bad_one(tmp_path: Path) -> None:
    text = BAD_SUITES["unknown-task-key"][0]
    items = list(CODEC.open(write_suite(tmp_path / "s.toml", text)).rows)
    assert [type(item).__name__ for item in items] == ["SourceRow", "UnreadableRow"]


# --- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'name = "s"\n',
        '# a suite\n\n[[tasks]]\nid = "a"\nprompt = "p"\n',
        'tasks = [{ id = "a", prompt = "p" }]\nname = "s"\n',
    ],
)
def test_toml_suites_are_detected(text: str, tmp_path: Path) -> None:
    path = write_suite(tmp_path / "suite.toml", text)
    assert resolve_codec(path, None, reading=True).name == "apollia"


def test_other_toml_files_are_not_taken_for_suites(tmp_path: Path) -> None:
    path = write_suite(tmp_path / "pyproject.toml", '[project]\nname = "x"\n[tool.x]\na = 1\n')
    with pytest.raises(UnknownFormatError) as caught:
        resolve_codec(path, None, reading=True)
    assert "apollia" in str(caught.value)


def test_a_toml_output_means_apollia(tmp_path: Path) -> None:
    assert resolve_codec(tmp_path / "out.toml", None, reading=False).name == "apollia"


# --- native suites of any shape come back the same --------------------------------------------

assertions = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("exit_code"), "equals": st.integers(-(2**31), 2**31 - 1)}
    ),
    st.fixed_dictionaries({"type": st.just("file_exists"), "path": awkward_text}),
    st.fixed_dictionaries(
        {
            "type": st.just("regex"),
            "on": st.sampled_from(["stdout", "result"]),
            "pattern": st.one_of(
                awkward_text.map(exact_pattern),
                st.lists(awkward_text, min_size=1, max_size=3).map(any_of_pattern),
                awkward_text,
            ),
        }
    ),
    st.fixed_dictionaries({"type": st.just("llm_judge"), "rubric": awkward_text}),
)
tasks = st.fixed_dictionaries(
    {"id": nonempty_text, "prompt": awkward_text},
    optional={
        "runs": st.integers(0, 2**32 - 1),
        "agent": awkward_text,
        "assertions": st.lists(assertions, max_size=4),
    },
)
suites = st.fixed_dictionaries(
    {"name": awkward_text}, optional={"tasks": st.lists(tasks, max_size=4)}
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=80)
@given(suite=suites)
def test_any_native_suite_comes_back_the_same(suite: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(tomlkit.dumps(suite), encoding="utf-8")
    rows = list(data_rows(CODEC.open(path)))
    header = {"schemaVersion": "blueprint.eval-set/v1", "name": suite["name"] or "unnamed"}
    target = tmp_path / "again.toml"
    result = CODEC.write(header, iter(rows), target, WriteOptions(force=True))
    back = assert_strict_suite(target.read_text(encoding="utf-8"))
    expected = {**suite, "name": header["name"]}
    if not suite.get("tasks"):
        expected.pop("tasks", None)
    assert back == expected
    assert [lossy for lossy in result.lossy if lossy.scope == "row"] == []


# --- real suites from apollia-os's repository -------------------------------------------------

PUBLIC_ROOT = FIXTURES / "native" / "apollia" / "public"
PUBLIC = PUBLIC_ROOT / "apollia-os-oria-agent-loop" / "agent-loop.toml"
OFFLINE = PUBLIC_ROOT / "apollia-os-native-tools-offline" / "native-tools-offline.toml"


@pytest.mark.parametrize("path", [PUBLIC, OFFLINE], ids=lambda p: p.stem)
def test_public_suites_come_back_the_same(path: Path, tmp_path: Path) -> None:
    original = tomllib.loads(path.read_text(encoding="utf-8"))
    assert again(path, tmp_path) == original
    result = roundtrip(path, "apollia")
    assert result.exact and result.vendor_changes == [] and result.export.lossy == []


def test_public_suite_with_agents_keeps_them() -> None:
    rows = read_rows(OFFLINE)
    assert len(rows) == 15
    kept = rows["file_write"]["metadata"]["case"]["extensions"]["apollia"]["record"]
    assert kept == {"agent": "eval-tools-probe", "runs": 1}
    assert {row["metadata"]["case"]["oracleType"] for row in rows.values()} == {
        "expected-final-state"
    }


def test_public_suite_inference(tmp_path: Path) -> None:
    rows = read_rows(PUBLIC)
    assert len(rows) == 10
    oracle = {key: value["metadata"]["case"]["oracleType"] for key, value in rows.items()}
    assert oracle["03-surgical-edit"] == "expected-final-state"
    assert oracle["07-budget-stops-and-says-why"] == "expected-behavior-only"
    checks = rows["03-surgical-edit"]["expected"]["checks"]
    assert [check["kind"] for check in checks] == ["record", "file_exists"]
    target = tmp_path / "set.json"
    convert(PUBLIC, target)
    report = validate_file(target)
    assert report.valid, report.flatten(("code", "path", "message"))


def test_a_number_too_long_to_read_is_a_parse_error(tmp_path: Path) -> None:
    # Python refuses to convert an integer of more than 4,300 digits; the suite is unreadable
    path = tmp_path / "suite.toml"
    path.write_text(
        f'name = "x"\n[[tasks]]\nid = "a"\nprompt = "p"\nruns = {"9" * 5000}\n', encoding="utf-8"
    )
    done = CliRunner().invoke(app, ["validate", str(path), "--from", "apollia"])
    assert done.exit_code == 2, done.output


@settings(max_examples=40, deadline=None)
@given(doc=eval_sets(max_rows=4))
def test_a_suite_written_task_by_task_is_the_whole_document(doc: dict[str, Any]) -> None:
    """The export streams: the name, then each [[tasks]] table as it stands in the whole
    suite. Read back, the file is exactly what writing that suite at once gives."""
    import tempfile

    from blueprint.formats.apollia import _suite

    header = {key: value for key, value in doc.items() if key != "rows"}
    options = WriteOptions(force=True, llm_judge=True, include_human_review=True, allow_empty=True)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "out.toml"
        try:
            CODEC.write(header, iter(doc["rows"]), target, options)
        except (InvalidRowForExport, EveryRowExcluded):
            assert not target.exists()  # refused: nothing half-written
            return
        written = target.read_text(encoding="utf-8")
    suite = tomllib.loads(written)
    # a starter row's task has a comment under its header, which reading leaves out
    comment = "# starter example, not validated gold\n"
    assert written.replace(comment, "") == tomlkit.dumps(
        _suite(suite["name"], suite.get("tasks", []))
    )


def test_a_suite_without_a_name_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    target = tmp_path / "out.toml"
    with pytest.raises(InvalidRowForExport, match="name"):
        CODEC.write(
            {"schemaVersion": "blueprint.eval-set/v1"}, iter([row("a")]), target, WriteOptions()
        )
    assert not target.exists()


# --- the direct task writer ---------------------------------------------------------------------

_TRICKY_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list('ab "\\\n\r\t\x00\x08\x0c\x1b\x7f\u00e9\u2028')), st.characters()
    ),
    max_size=12,
)
_TASK_KEYS = st.one_of(
    st.sampled_from(["id", "prompt", "runs", "agent", "type", "on", "x-y", "_1", "9"]),
    st.text(max_size=4),
)
_TASK_VALUES = st.one_of(
    _TRICKY_TEXT,
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
)


@st.composite
def _tasks(draw: st.DrawFn, values: st.SearchStrategy[Any] = _TASK_VALUES) -> dict[str, Any]:
    record = draw(st.dictionaries(_TASK_KEYS, values, max_size=4))
    if draw(st.booleans()):
        assertion = st.dictionaries(_TASK_KEYS, values, max_size=3)
        record["assertions"] = draw(st.lists(assertion, max_size=3))
        if draw(st.booleans()):  # a key after the assertions
            record[draw(_TASK_KEYS.filter(lambda key: key != "assertions"))] = draw(values)
    return record


@given(record=_tasks())
def test_a_task_written_directly_is_what_tomlkit_writes(record: dict[str, Any]) -> None:
    from blueprint.formats.apollia import task_text, task_text_by_tomlkit

    text = task_text(record)
    if text is not None:
        assert text == task_text_by_tomlkit(record)
        assert tomllib.loads(text) == {"tasks": [record]}


@given(record=_tasks(st.one_of(_TRICKY_TEXT, st.integers(0, 9), st.booleans())))
def test_tasks_of_text_numbers_and_booleans_are_written_directly(record: dict[str, Any]) -> None:
    from blueprint.formats.apollia import task_text

    keys = list(record)
    simple = all(re.fullmatch(r"[A-Za-z0-9_-]+", key) for key in keys) and (
        "assertions" not in record
        or (keys[-1] == "assertions" and len(keys) > 1 and bool(record["assertions"]))
    )
    assert (task_text(record) is not None) == (
        simple
        and all(
            assertion and all(re.fullmatch(r"[A-Za-z0-9_-]+", key) for key in assertion)
            for assertion in record.get("assertions", [])
        )
    )
