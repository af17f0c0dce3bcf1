"""ome recall suites: cases as acceptable sets defined by ome's rule (an items check on the
returned cards), card lists written as cases, and suites that go back to ome as they came."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert, data_rows, roundtrip
from blueprint.core.errors import LossyExportRefused, ParseError
from blueprint.formats import REGISTRY, WriteOptions, resolve_codec
from blueprint.formats.base import UnreadableRow
from blueprint.formats.mapping import load_mapping
from blueprint.formats.ome import (
    MAX_OPTIONAL_CARDS,
    PASS_LOGIC,
    default_experiences_file,
    forbidden_card,
    forbidden_text,
    render_suite,
)
from blueprint.grading.semantics import Recorded, grade_row
from blueprint.validation.validate import validate_file
from conftest import EXAMPLES, FIXTURES, document, row, write_json

OME = REGISTRY["ome"]
NATIVE = FIXTURES / "native"
PUBLIC = NATIVE / "ome" / "public"
SEED = PUBLIC / "ome-docs-eval-fixtures" / "core.json"
UNKNOWN_KEYS = NATIVE / "ome" / "unknown-keys.json"
#: ome's own suites (the experiences files beside them hold cards, not cases)
SUITES = [
    *sorted(path for path in PUBLIC.rglob("*.json") if not path.name.endswith(".cards.json")),
    UNKNOWN_KEYS,
]
MAPPING = load_mapping("ome")
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "recall"}

runner = CliRunner()


def run(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def rows_of(path: Path) -> list[dict[str, Any]]:
    return list(data_rows(OME.open(path)))


def card_row(row_id: str, expected: Any, oracle: str = "acceptable-set", **case: Any) -> Any:
    return row(row_id, oracle, expected=expected, **case)


def export(rows: list[dict[str, Any]], path: Path, header: dict[str, Any] | None = None, **opts):
    result = OME.write(header or HEADER, iter(rows), path, WriteOptions(force=True, **opts))
    return result, json.loads(path.read_text(encoding="utf-8"))


def lost(result: Any, kind: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for item in result.lossy:
        if item.kind == kind:
            found.setdefault(item.field, set()).update(item.row_ids)
    return found


# --- reading ome's own suites ------------------------------------------------------------------


@pytest.mark.parametrize("path", SUITES, ids=lambda p: str(p.relative_to(NATIVE)))
def test_ome_suites_round_trip_exactly_and_go_back_byte_for_byte(
    path: Path, tmp_path: Path
) -> None:
    result = roundtrip(path, "ome", source_format="ome")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []
    assert result.export.lossy == []
    canonical, back = tmp_path / "set.json", tmp_path / path.name
    convert(path, canonical, ConvertOptions(source_format="ome"))
    assert validate_file(canonical).valid
    convert(canonical, back, ConvertOptions(target_format="ome"))
    assert back.read_bytes() == path.read_bytes()


def test_the_documented_example_maps_onto_an_items_check() -> None:
    strict, abstain = rows_of(SEED)
    assert strict["id"] == "frontend-browser-validation"
    assert strict["input"] == "After fixing the UI, validate it in the browser"
    assert strict["expected"] == {
        "satisfies": {"type": "items", "required": ["browser-validation"]}
    }
    case = strict["metadata"]["case"]
    assert case["oracleType"] == "acceptable-set"
    assert case["provenance"] == "imported"
    assert case["unacceptableBehavior"] == ['returns the card "git-commit-safety"']
    assert case["passLogic"] == PASS_LOGIC
    kept = case["extensions"]["ome"]
    assert kept["record"] == {"difficulty": "easy", "tags": ["frontend", "en"]}
    assert kept["native"]["allowedExtraCards"]["value"] == []  # written as it came: []
    assert kept["keys"][:3] == ["id", "difficulty", "prompt"]
    # the one answer: no card
    assert abstain["expected"] == {"satisfies": {"type": "items", "required": []}}
    assert abstain["metadata"]["case"]["extensions"]["ome"]["record"] == {
        "difficulty": "hard",
        "tags": ["negative", "held-out"],
    }
    assert "difficulty" not in abstain["metadata"]  # never a row field: the schema omits it


def test_the_suite_name_is_the_set_name_and_its_other_keys_are_kept() -> None:
    source = OME.open(PUBLIC / "ome-tests-fixtures-eval" / "held-out.json")
    assert source.header is not None
    assert source.header["name"] == "held-out-generic-business"
    # not ./held-out-generic-business.cards.json, so the suite keeps the file it names
    assert source.header["extensions"]["ome"] == {
        "suite": {"experiencesFile": "./held-out.cards.json"}
    }
    seed = OME.open(SEED).header
    assert seed == {"schemaVersion": "blueprint.eval-set/v1", "name": "core"}


def test_import_keeps_every_key_it_does_not_map(tmp_path: Path) -> None:
    original = json.loads(UNKNOWN_KEYS.read_text(encoding="utf-8"))
    source = OME.open(UNKNOWN_KEYS)
    rows = list(data_rows(source))
    assert source.header is not None
    suite = source.header["extensions"]["ome"]["suite"]
    assert suite["owner"] == original["owner"]
    assert suite["experiences"] == original["experiences"]
    mapped = {"id", "prompt", "cwd", "expectedCards", "allowedExtraCards", "unexpectedCards"}
    mapped |= {"expectNoMatches"}
    for data, case in zip(rows, original["cases"], strict=True):
        kept = data["metadata"]["case"]["extensions"]["ome"]
        assert kept["keys"] == list(case)
        assert kept.get("record", {}) == {k: v for k, v in case.items() if k not in mapped}
    first = rows[0]
    assert first["input"] == {
        "prompt": original["cases"][0]["prompt"],
        "cwd": "/work/projects/shop",
    }
    assert first["metadata"]["case"]["extensions"]["ome"]["record"]["threshold"] == 35.5
    # release-notes may come back; deploy-window is required, changelog forbidden
    assert first["expected"] == {
        "satisfies": {"type": "items", "required": ["deploy-window"], "allowed": ["release-notes"]}
    }
    assert rows[1]["id"] == "friday-release-2"  # a repeated id is renamed, and flagged
    # expectNoMatches wins, as in ome
    assert rows[2]["expected"] == {"satisfies": {"type": "items", "required": []}}
    assert rows[4]["id"] == "case-5"
    assert rows[5]["expected"] == {
        "satisfies": {"type": "items", "required": [], "allowed": ["release-notes"]}
    }
    imported = tmp_path / "imported.json"
    convert(UNKNOWN_KEYS, imported, ConvertOptions(source_format="ome"))
    assert validate_file(imported).valid


def test_a_layout_is_kept_and_ome_style_is_the_default() -> None:
    suite = {"name": "s", "cases": [{"id": "a", "expectedCards": ["x", "y"], "tags": []}]}
    assert '"expectedCards": ["x", "y"]' in render_suite(suite)
    assert '"expectedCards": [\n' in render_suite(suite, expanded=True)
    core = OME.open(PUBLIC / "ome-tests-fixtures-eval" / "core.json").header
    assert core is not None and core["extensions"]["ome"] == {"layout": "expanded"}


# --- writing Blueprint rows as recall cases ----------------------------------------------------


def test_rows_naming_cards_become_recall_cases(tmp_path: Path) -> None:
    rows = [
        card_row(
            "strict",
            {"acceptable": [["browser-validation"]]},
            unacceptableBehavior=[forbidden_text("git-commit-safety"), "leaks a secret"],
        ),
        card_row("optional", {"acceptable": [["a", "b"], ["a", "b", "x"]]}),
        card_row("two-optional", {"acceptable": [["a"], ["a", "y"], ["a", "x"], ["a", "x", "y"]]}),
        card_row("abstain", {"acceptable": [[]]}),
        card_row("one-card", {"acceptable": ["solo"]}),
        card_row("reference", ["c", "d"], "reference-answer"),
        card_row("reference-none", [], "reference-answer"),
    ]
    rows[1]["input"] = {"prompt": "scoped", "cwd": "/repo/app"}
    result, suite = export(rows, tmp_path / "recall.json")
    assert list(suite) == ["name", "experiencesFile", "cases"]
    assert suite["name"] == "recall"
    assert suite["experiencesFile"] == "./recall.cards.json"
    cases = {case["id"]: case for case in suite["cases"]}
    assert cases["strict"] == {
        "id": "strict",
        "prompt": "question for strict",
        "expectedCards": ["browser-validation"],
        "unexpectedCards": ["git-commit-safety"],
    }
    assert cases["optional"]["cwd"] == "/repo/app"
    assert cases["optional"]["expectedCards"] == ["a", "b"]
    assert cases["optional"]["allowedExtraCards"] == ["x"]
    assert cases["two-optional"]["allowedExtraCards"] == ["y", "x"]
    assert cases["abstain"]["expectedCards"] == []
    assert cases["abstain"]["expectNoMatches"] is True
    assert cases["one-card"]["expectedCards"] == ["solo"]
    assert cases["reference"] == {"id": "reference", "prompt": "question for reference"} | {
        "expectedCards": ["c", "d"]
    }
    assert cases["reference-none"]["expectNoMatches"] is True
    dropped = lost(result, "dropped")
    # the behaviour that names no card is not written; nothing else of its case is lost
    # beyond what every Blueprint row loses in ome (its profile is inferred again)
    assert "strict" in dropped["metadata.case.unacceptableBehavior"]
    assert {"reference", "reference-none"} <= dropped["metadata.case.oracleType"]
    assert "optional" not in dropped.get("input", set())
    # a list of cards comes back as ome's rule, an items check
    assert {"strict", "optional", "abstain", "reference"} <= dropped["expected"]
    weakened = lost(result, "weakened")
    assert {"strict", "optional", "abstain"} <= weakened["expected.acceptable"]
    assert "reference" in weakened["expected"]


def test_rows_that_name_no_cards_are_left_out_with_the_reason(tmp_path: Path) -> None:
    rows = [
        card_row("text-answer", "You can return it within 30 days.", "reference-answer"),
        card_row("alternatives", {"acceptable": [["a"], ["b"]]}),
        card_row("graded", {"graded": [{"value": ["a"], "grade": 1}]}),
        card_row("path-like", {"acceptable": [["docs/a.md"]]}),
        card_row(
            "tools",
            {"calls": [{"name": "search", "arguments": {}}]},
            "expected-tool-calls",
        ),
        row("rubric", "rubric", evaluationCriteria=["polite"], evaluator="rubric-human"),
        row("behaviour", "expected-behavior-only"),
        card_row("kept", {"acceptable": [["a"]]}),
    ]
    result, suite = export(rows, tmp_path / "recall.json")
    assert [case["id"] for case in suite["cases"]] == ["kept"]
    excluded = {
        (item.reason, frozenset(item.row_ids)) for item in result.lossy if item.kind == "excluded"
    }
    assert excluded == {
        (MAPPING.excluded["no-cards"], frozenset({"text-answer", "path-like", "tools"})),
        (MAPPING.excluded["alternatives"], frozenset({"alternatives"})),
        (MAPPING.excluded["graded"], frozenset({"graded"})),
        (MAPPING.excluded["human-review"], frozenset({"rubric", "behaviour"})),
    }
    with pytest.raises(LossyExportRefused):
        OME.write(HEADER, iter(rows), tmp_path / "strict.json", WriteOptions(strict=True))
    assert not (tmp_path / "strict.json").exists()


def test_human_review_rows_are_written_only_when_asked_and_tagged(tmp_path: Path) -> None:
    rows = [
        row("rubric", "rubric", evaluator="rubric-human"),
        card_row("kept", ["a"], "reference-answer"),
    ]
    result, suite = export(rows, tmp_path / "recall.json", include_human_review=True)
    rubric = suite["cases"][0]
    assert rubric["tags"] == ["human-review"] and rubric["expectedCards"] == []
    assert any("human-review" in note for note in result.notes)


def test_starter_rows_are_tagged_as_examples(tmp_path: Path) -> None:
    starter = card_row("starter", {"acceptable": [["a"]]}, provenance="starter-example")
    _, suite = export([starter], tmp_path / "recall.json")
    assert suite["cases"][0]["tags"] == ["starter-example"]


def test_forbidden_cards_travel_as_unacceptable_behaviours() -> None:
    for card in ("git-commit-safety", 'odd "quoted" id', "ünï"):
        assert forbidden_card(forbidden_text(card)) == card
    assert forbidden_card("returns the card git-commit-safety") is None
    assert forbidden_card("leaks a secret") is None


# --- the experiences file ----------------------------------------------------------------------


def test_the_export_says_which_experiences_file_the_suite_expects(tmp_path: Path) -> None:
    rows = [card_row("a", {"acceptable": [["a"]]})]
    header = {**HEADER, "name": "team recall/v2"}
    result, suite = export(rows, tmp_path / "suite.json", header)
    expected = default_experiences_file("team recall/v2")
    assert expected == "./team-recall-v2.cards.json"
    assert suite["experiencesFile"] == expected
    (note,) = result.notes
    assert expected in note and "ome eval recall --suite suite.json" in note
    assert "does not exist" in note
    (tmp_path / "team-recall-v2.cards.json").write_text('{"experiences": []}', encoding="utf-8")
    result, _ = export(rows, tmp_path / "suite.json", header)
    assert "it exists" in result.notes[0]


def test_an_imported_suite_expects_the_file_it_named(tmp_path: Path) -> None:
    canonical, target = tmp_path / "set.json", tmp_path / "out.json"
    convert(PUBLIC / "ome-tests-fixtures-eval" / "pairwise.json", canonical)
    result = convert(canonical, target, ConvertOptions(target_format="ome"))
    assert json.loads(target.read_text(encoding="utf-8"))["experiencesFile"] == (
        "./pairwise.cards.json"
    )
    assert "./pairwise.cards.json" in " ".join(result.notes + result.export.notes)


def test_a_set_whose_name_was_made_up_names_no_experiences_file(tmp_path: Path) -> None:
    rows = [card_row("a", {"acceptable": [["a"]]})]
    options = WriteOptions(force=True, derived_fields=frozenset({"name"}))
    target = tmp_path / "suite.json"
    result = OME.write(HEADER, iter(rows), target, options)
    assert list(json.loads(target.read_text(encoding="utf-8"))) == ["cases"]
    assert "--experiences" in result.notes[0]


# --- telling an ome suite from other JSON ------------------------------------------------------


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.name)
def test_ome_suites_are_recognised_by_their_content(path: Path) -> None:
    assert resolve_codec(path, None, reading=True).name == "ome"


@pytest.mark.parametrize(
    "path",
    [
        EXAMPLES / "support-refunds.json",
        NATIVE / "deepeval" / "goldens.json",
        NATIVE
        / "langsmith"
        / "public"
        / "agent-lifecycle-workshop-baseline"
        / "baseline_dataset.json",
        NATIVE / "braintrust" / "public" / "autoevals-coqa-factuality" / "coqa-factuality.json",
        NATIVE / "promptfoo" / "public" / "smoke-fixtures" / "configs" / "tests.json",
    ],
    ids=lambda p: p.name,
)
def test_other_json_files_are_not_claimed(path: Path) -> None:
    assert not OME.sniff(path, path.read_bytes()).ok


def test_a_cases_object_of_another_tool_is_not_claimed(tmp_path: Path) -> None:
    other = write_json(
        tmp_path / "dataset.json",
        {"cases": [{"name": "q1", "inputs": "What?", "expected_output": "That."}]},
    )
    assert not OME.sniff(other, other.read_bytes()).ok
    bare = write_json(
        tmp_path / "bare.json", {"cases": [{"id": "a", "prompt": "p", "expectedCards": ["k"]}]}
    )
    assert OME.sniff(bare, bare.read_bytes()).ok  # no experiencesFile, but ome's case keys


# --- bad input ---------------------------------------------------------------------------------


def _suite_text(*cases: str) -> str:
    return '{\n  "name": "s",\n  "cases": [\n' + ",\n".join(cases) + "\n  ]\n}\n"


@pytest.mark.parametrize(
    ("case", "field"),
    [
        ('    {"id": "a", "prompt": 5}', "prompt"),
        ('    {"id": "a", "expectedCards": ["k"]}', "prompt"),
        ('    {"id": "a", "prompt": "p", "expectedCards": "k"}', "expectedCards"),
        ('    {"id": "a", "prompt": "p", "unexpectedCards": [1]}', "unexpectedCards"),
        ('    {"id": "a", "prompt": "p", "expectNoMatches": "false"}', "expectNoMatches"),
        ('    {"id": "a", "prompt": "p", "threshold": "40"}', "threshold"),
        ('    {"id": "a", "prompt": "p", "threshold": true}', "threshold"),
        ('    {"id": "a", "prompt": "p", "cwd": 1}', "cwd"),
        ("    3", "JSON object"),
    ],
)
def test_a_bad_case_is_named_by_line_and_field(case: str, field: str, tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    path.write_text(_suite_text('    {"id": "ok", "prompt": "p"}', case), encoding="utf-8")
    items = list(OME.open(path).rows)
    bad = [item for item in items if isinstance(item, UnreadableRow)]
    assert len(bad) == 1 and bad[0].line == 5 and field in bad[0].reason
    result = run("convert", path, tmp_path / "out.json", "--from", "ome")
    assert result.exit_code == 2
    assert f"{path}:5" in result.output and field in result.output


def _graded(data: dict[str, Any], returned: list[str]) -> bool:
    """Whether ``blueprint grade`` passes a row when ome returns these cards, in this order."""
    verdict = grade_row(data, Recorded(id=data["id"], output=returned, has_output=True))
    assert verdict.verdict in ("pass", "fail"), verdict
    return verdict.verdict == "pass"


def test_grade_passes_a_recall_in_any_order_as_ome_does(tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    cases = [
        '    {"id": "two", "prompt": "p", "expectedCards": ["a", "b"],'
        ' "allowedExtraCards": ["x", "z"], "unexpectedCards": ["z"]}',
        '    {"id": "none", "prompt": "p", "expectedCards": ["a"], "expectNoMatches": true}',
    ]
    path.write_text(_suite_text(*cases), encoding="utf-8")
    two, none = rows_of(path)
    assert two["expected"] == {
        "satisfies": {"type": "items", "required": ["a", "b"], "allowed": ["x"]}
    }
    assert _graded(two, ["b", "a"]) and _graded(two, ["x", "b", "a"])
    assert not _graded(two, ["a"])  # a required card missing
    assert not _graded(two, ["a", "b", "z"])  # allowed, but forbidden too: ome fails it
    assert not _graded(two, ["a", "b", "y"])  # no other card
    assert _graded(none, []) and not _graded(none, ["a"])  # expectNoMatches: no card at all


def test_many_optional_cards_import_and_grade(tmp_path: Path) -> None:
    extras = [f"card-{n}" for n in range(MAX_OPTIONAL_CARDS + 4)]
    path = tmp_path / "suite.json"
    suite = {"name": "s", "cases": [{"id": "wide", "prompt": "p", "allowedExtraCards": extras}]}
    path.write_text(render_suite(suite), encoding="utf-8")
    (data,) = rows_of(path)
    assert data["expected"] == {"satisfies": {"type": "items", "required": [], "allowed": extras}}
    assert _graded(data, extras[::-1]) and _graded(data, []) and _graded(data, extras[5:7])
    assert not _graded(data, ["card-x"])
    canonical, back = tmp_path / "set.json", tmp_path / "back.json"
    convert(path, canonical, ConvertOptions(source_format="ome"))
    assert validate_file(canonical).valid
    convert(canonical, back, ConvertOptions(target_format="ome"))
    assert back.read_bytes() == path.read_bytes()


def test_items_checks_are_written_as_card_lists(tmp_path: Path) -> None:
    def items(required: list[str], allowed: list[str] | None = None) -> dict[str, Any]:
        check: dict[str, Any] = {"type": "items", "required": required}
        return {"satisfies": check if allowed is None else {**check, "allowed": allowed}}

    rows = [
        card_row("pair", items(["b", "a"], ["x", "a"])),
        card_row("none", items([])),
        card_row("wide", items(["a"], [f"c{n}" for n in range(12)])),
        card_row("twice", items(["a", "a"])),
        card_row("paths", items(["docs/a.md"])),
        card_row("other", {"satisfies": {"type": "contains", "value": "a"}}),
    ]
    result, suite = export(rows, tmp_path / "suite.json")
    cases = {case["id"]: case for case in suite["cases"]}
    assert cases["pair"]["expectedCards"] == ["b", "a"]
    assert cases["pair"]["allowedExtraCards"] == ["x"]  # a required card is not an extra
    assert "expectNoMatches" not in cases["pair"]
    assert cases["none"]["expectNoMatches"] is True and cases["none"]["expectedCards"] == []
    assert cases["wide"]["allowedExtraCards"] == [f"c{n}" for n in range(12)]
    assert set(cases) == {"pair", "none", "wide"}
    excluded = {
        (item.reason, frozenset(item.row_ids)) for item in result.lossy if item.kind == "excluded"
    }
    assert excluded == {(MAPPING.excluded["no-cards"], frozenset({"twice", "paths", "other"}))}
    assert "expected.satisfies" not in lost(result, "weakened")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"name": "s", "cases": [}', 1),
        ("[]", None),
        ('{"name": "s"}', None),
        ('{"name": "s", "cases": {}}', None),
    ],
)
def test_a_broken_suite_is_refused_with_where(text: str, line: int | None, tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        OME.open(path)
    assert caught.value.line == line
    assert run("validate", path, "--from", "ome").exit_code == 2


# --- the command line --------------------------------------------------------------------------


def test_the_command_line_reads_and_writes_suites(tmp_path: Path) -> None:
    imported = tmp_path / "core.json"
    assert run("convert", SEED, imported, "--to", "json").exit_code == 0
    back = tmp_path / "suite.json"
    result = run("convert", imported, back, "--to", "ome", "--report", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["format"] == "ome" and report["lossy"] == []
    assert back.read_bytes() == SEED.read_bytes()
    assert any("./core.cards.json" in note for note in report["notes"])
    assert run("roundtrip", SEED, "--via", "ome").exit_code == 0
    listed = json.loads(run("formats", "ome", "--report", "json").stdout)
    assert listed["mapping"]["format"] == "ome"
    refused = run("convert", imported, tmp_path / "suite.yaml", "--to", "ome")
    assert refused.exit_code == 2


def test_strict_refuses_a_lossy_export_and_writes_nothing(tmp_path: Path) -> None:
    source = write_json(tmp_path / "set.json", document(card_row("a", {"acceptable": [["a"]]})))
    result = run("convert", source, tmp_path / "suite.json", "--to", "ome", "--strict")
    assert result.exit_code == 1
    assert not (tmp_path / "suite.json").exists()


# --- any rows, any suites ----------------------------------------------------------------------

card_ids = st.sampled_from(["a", "b", "c", "browser-validation", "ünï", 'q"uote', "x y"])
card_lists = st.lists(card_ids, max_size=4)


@st.composite
def card_rows(draw: st.DrawFn, index: int) -> dict[str, Any]:
    row_id = f"r{index}"
    kind = draw(st.sampled_from(["cube", "reference", "any-lists", "strings"]))
    if kind == "cube":
        required = draw(st.lists(card_ids, max_size=3, unique=True))
        optional = draw(
            st.lists(card_ids.filter(lambda c: c not in required), max_size=2, unique=True)
        )
        answers = [
            required + [c for i, c in enumerate(optional) if n >> i & 1]
            for n in range(1 << len(optional))
        ]
        expected: Any = {"acceptable": draw(st.permutations(answers))}
        data = card_row(row_id, expected)
    elif kind == "reference":
        data = card_row(row_id, draw(card_lists), "reference-answer")
    elif kind == "any-lists":
        data = card_row(row_id, {"acceptable": draw(st.lists(card_lists, min_size=1, max_size=3))})
    else:
        data = card_row(row_id, {"acceptable": draw(st.lists(card_ids, min_size=1, max_size=3))})
    forbidden = draw(st.lists(card_ids, max_size=2))
    behaviours = [forbidden_text(card) for card in forbidden]
    behaviours += draw(
        st.lists(st.sampled_from(["leaks a secret", "returns the card a"]), max_size=1)
    )
    if behaviours:
        data["metadata"]["case"]["unacceptableBehavior"] = behaviours
    data["input"] = draw(
        st.one_of(
            st.text(max_size=8),
            st.builds(
                lambda p, c: {"prompt": p, "cwd": c}, st.text(max_size=5), st.text(max_size=5)
            ),
            st.builds(lambda p: {"prompt": p}, st.text(max_size=5)),
            st.lists(st.integers(), max_size=2),
        )
    )
    if draw(st.booleans()):
        data["metadata"]["case"]["passLogic"] = draw(st.sampled_from([PASS_LOGIC, "any order"]))
    return data


@st.composite
def card_sets(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(min_value=1, max_value=5))
    return document(*(draw(card_rows(index)) for index in range(count)))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=80)
@given(doc=card_sets())
def test_declared_loss_is_actual_loss_for_any_rows_naming_cards(
    doc: dict[str, Any], tmp_path: Path
) -> None:
    result = roundtrip(write_json(tmp_path / "set.json", doc), "ome")
    assert result.exact, (result.undeclared, result.unobserved)


ome_cases = st.fixed_dictionaries(
    {"prompt": st.text(min_size=1, max_size=10)},
    optional={
        "id": st.one_of(st.sampled_from(["a", "b", "a"]), st.integers()),
        "difficulty": st.sampled_from(["easy", "hard", 3]),
        "expectedCards": st.one_of(st.none(), card_lists),
        "allowedExtraCards": st.one_of(st.none(), st.lists(card_ids, max_size=3)),
        "unexpectedCards": st.one_of(st.none(), card_lists),
        "expectNoMatches": st.one_of(st.none(), st.booleans()),
        "threshold": st.one_of(st.none(), st.integers(0, 100), st.floats(0, 100)),
        "cwd": st.one_of(st.none(), st.text(max_size=6)),
        "tags": st.lists(st.text(max_size=4), max_size=2),
        "extra": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    },
)
suites = st.fixed_dictionaries(
    {"cases": st.lists(ome_cases, max_size=4)},
    optional={
        "name": st.one_of(st.sampled_from(["core", "held out"]), st.integers()),
        "experiencesFile": st.sampled_from(["./core.cards.json", "cards.json"]),
        "owner": st.text(max_size=4),
    },
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=80)
@given(suite=suites, expanded=st.booleans())
def test_any_ome_suite_goes_back_as_it_came(
    suite: dict[str, Any], expanded: bool, tmp_path: Path
) -> None:
    path = tmp_path / "suite.json"
    path.write_text(render_suite(suite, expanded=expanded), encoding="utf-8")
    result = roundtrip(path, "ome", source_format="ome")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []
    canonical, back = tmp_path / "set.json", tmp_path / "back.json"
    convert(path, canonical, ConvertOptions(source_format="ome", force=True))
    convert(canonical, back, ConvertOptions(target_format="ome", force=True))
    assert json.loads(back.read_text(encoding="utf-8")) == suite
    assert back.read_bytes() == path.read_bytes()
