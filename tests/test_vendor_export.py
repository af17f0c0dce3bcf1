"""What each vendor export puts where: native fields, escapes, markers for starter rows."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert
from blueprint.core.admissibility import admissible_evaluators
from blueprint.core.errors import BlueprintError, EmptyExportRefused, EveryRowExcluded
from blueprint.core.model import EVALUATOR_TYPES, ORACLE_TYPES
from blueprint.formats import REGISTRY, WriteOptions, promptfoo
from blueprint.formats.langsmith import example_id
from blueprint.formats.mapping import load_mapping
from blueprint.formats.vendor import ExportRow
from blueprint.formats.vendor.exporting import ExportTally
from conftest import document, row, write_json
from strategies import rows

HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "t"}


def export(fmt: str, rows: list[dict], tmp_path: Path, **options: Any) -> tuple[Any, Any]:
    target = tmp_path / f"out{REGISTRY[fmt].extensions[0]}"
    result = REGISTRY[fmt].write(HEADER, iter(rows), target, WriteOptions(**options))
    text = target.read_text(encoding="utf-8")
    if fmt == "promptfoo":
        return result, yaml.safe_load(text)
    if fmt == "deepeval":
        return result, json.loads(text)
    return result, [json.loads(line) for line in text.splitlines()]


def test_promptfoo_keeps_template_text_literal(tmp_path: Path) -> None:
    data = row("t", expected="{{7*7}}")
    data["input"] = "Is {% if %} valid?"
    _, (test,) = export("promptfoo", [data], tmp_path)
    assert test["vars"]["input"] == 'Is {{ "{" }}% if %} valid?'
    assert test["assert"] == [{"type": "equals", "value": '{{ "{" }}{7*7}}'}]


def test_promptfoo_writes_javascript_and_texts_of_several_lines_as_literal_blocks(
    tmp_path: Path,
) -> None:
    chosen = row("a", "acceptable-set", expected={"acceptable": ["yes", "oui"]})
    chosen["input"] = "line one\nline two"
    _, (test,) = export("promptfoo", [chosen], tmp_path)
    text = (tmp_path / "out.yaml").read_text(encoding="utf-8")
    assert "    input: |-\n      line one\n      line two\n" in text
    assert "    value: |\n      const acceptable = " in text
    assert test["vars"]["input"] == "line one\nline two"
    assert test["assert"][0]["value"].startswith("const acceptable = ")


def test_promptfoo_never_loads_file_references(tmp_path: Path) -> None:
    data = row("f", expected="file://answer.txt")
    data["input"] = "package:left-pad"
    data["metadata"]["source"] = "file://notes.md"
    _, (test,) = export("promptfoo", [data], tmp_path)
    assert test["vars"]["input"] == '{{ "" }}package:left-pad'
    assert test["assert"][0]["value"] == '{{ "" }}file://answer.txt'
    assert isinstance(test["metadata"]["blueprint"], str)  # JSON text: promptfoo leaves it


def test_promptfoo_rows_without_an_assertion_are_left_out(tmp_path: Path) -> None:
    rubric = row("r", "rubric", evaluationCriteria=["x"])  # no evaluator: nothing to assert
    human = row("h", evaluator="human-expert", reviewerExpertise="x")
    result, tests = export("promptfoo", [rubric, human], tmp_path, include_human_review=True)
    assert [t["metadata"]["id"] for t in tests] == ["h"]
    assert "assert" not in tests[0]  # marked for review, never auto-graded
    assert [(item.field, item.row_ids) for item in result.lossy if item.scope == "row"] == [
        ("*", ("r",))
    ]


def test_promptfoo_vars_never_null_and_lists_do_not_multiply(tmp_path: Path) -> None:
    data = row("v")
    data["input"] = {"question": "q", "context": ["a", "b"], "missing": None}
    _, (test,) = export("promptfoo", [data], tmp_path)
    assert test["vars"] == {"question": "q", "context": ["a", "b"]}
    assert test["options"] == {"disableVarExpansion": True}
    assert test["metadata"]["blueprint"]["input"] == data["input"]


def test_promptfoo_id_description_and_starter_marks(tmp_path: Path) -> None:
    _, (test,) = export("promptfoo", [row("cs-1", provenance="starter-example")], tmp_path)
    assert test["description"].startswith("[cs-1] (starter example, not validated gold)")
    assert test["metadata"]["id"] == "cs-1"
    assert test["metadata"]["starterExample"]


def test_promptfoo_assertions_follow_the_oracle_and_evaluator(tmp_path: Path) -> None:
    rows = [
        row("ref", evaluator="exact-or-programmatic", expected="Paris"),
        row("judged", evaluator="llm-judge", expected="Paris"),
        row("obj", expected={"a": 1}),
        row("rub", "rubric", evaluator="llm-judge", evaluationCriteria=["cites the policy"]),
        row("acc", "acceptable-set", expected={"acceptable": ["a", "b"]}),
        row("tools", "expected-tool-calls", expected={"calls": []}),
        row(
            "state",
            "expected-final-state",
            expected={"checks": [{"kind": "file_exists", "path": "x"}]},
        ),
    ]
    result, tests = export("promptfoo", rows, tmp_path)
    kinds = {t["metadata"]["id"]: [a["type"] for a in t["assert"]] for t in tests}
    assert kinds == {
        "ref": ["equals"],
        "judged": ["factuality"],
        "obj": ["equals"],
        "rub": ["llm-rubric"],
        "acc": ["javascript"],
        "tools": ["javascript"],
    }
    assert "cites the policy" in tests[3]["assert"][0]["value"]
    dropped = [(item.field, item.row_ids) for item in result.lossy if item.scope == "row"]
    assert dropped == [("*", ("state",))]


def test_deepeval_fields(tmp_path: Path) -> None:
    tools = row(
        "tools", "expected-tool-calls", expected={"calls": [{"name": "f", "arguments": {"x": 1}}]}
    )
    rag = row("rag", provenance="starter-example")
    rag["metadata"]["context"] = ["passage one", "passage | two"]
    rag["input"] = {"q": 1}
    _, goldens = export("deepeval", [tools, rag], tmp_path)
    assert goldens[0]["name"] == "tools"
    assert goldens[0]["expected_tools"] == [
        {"name": "f", "type": "FUNCTION", "inputParameters": {"x": 1}}
    ]
    assert goldens[1]["input"] == '{"q":1}'
    assert goldens[1]["context"] == ["passage one", "passage | two"]
    assert goldens[1]["comments"].startswith("starter example, not validated gold")
    assert goldens[1]["additional_metadata"]["blueprint"]["input"] == {"q": 1}


def test_langsmith_ids_are_stable_uuids_and_splits_are_native(tmp_path: Path) -> None:
    data = row("row-1")
    data["metadata"]["split"] = ["test", "smoke"]
    rubric = row("rub", "rubric", evaluationCriteria=["polite", "brief"], evaluator="llm-judge")
    _, examples = export("langsmith", [data, rubric], tmp_path)
    assert examples[0]["id"] == example_id("row-1", "t") == str(uuid.UUID(examples[0]["id"]))
    assert example_id("row-1", "t") != example_id("row-1", "another set")
    assert examples[0]["split"] == ["test", "smoke"]
    assert examples[0]["inputs"] == {"input": "question for row-1"}
    assert examples[0]["outputs"] == {"output": "yes"}
    assert examples[0]["metadata"]["blueprint"]["id"] == "row-1"
    assert examples[1]["outputs"]["assertions"][1] == {"key": "criterion-2", "comment": "brief"}


def test_braintrust_tags_are_unique_and_mark_starters(tmp_path: Path) -> None:
    data = row("b-1", provenance="starter-example", caseFamily="lookup")
    _, (record,) = export("braintrust", [data], tmp_path)
    assert record["id"] == "b-1"
    assert len(record["tags"]) == len(set(record["tags"]))
    assert "starter-example" in record["tags"] and "family:lookup" in record["tags"]
    assert record["metadata"]["starterExample"] is True


def test_vendor_exports_refuse_invalid_rows(tmp_path: Path) -> None:
    import pytest

    from blueprint.formats.vendor import InvalidRowForExport

    bad = row("x")
    bad["metadata"]["case"]["oracleType"] = "golden"
    for fmt in ("promptfoo", "deepeval", "langsmith", "braintrust"):
        with pytest.raises(InvalidRowForExport):
            export(fmt, [bad], tmp_path)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("fmt", ["promptfoo", "deepeval", "langsmith", "braintrust"])
def test_rows_inherit_their_family_evaluator_in_exports(fmt: str, tmp_path: Path) -> None:
    """A row of a human-expert family that names no evaluator is for human review."""
    header = {
        **HEADER,
        "caseFamilies": [
            {"id": "expert", "oracleType": "reference-answer", "evaluator": "human-expert"},
            {"id": "exact", "oracleType": "reference-answer", "evaluator": "exact-or-programmatic"},
        ],
    }
    rows = [row("judged", caseFamily="expert"), row("checked", caseFamily="exact")]
    target = tmp_path / f"out{REGISTRY[fmt].extensions[0]}"
    result = REGISTRY[fmt].write(header, iter(rows), target, WriteOptions())
    excluded = {i for lossy in result.lossy if lossy.field == "*" for i in lossy.row_ids}
    assert excluded == {"judged"}
    assert result.rows == 1
    included = REGISTRY[fmt].write(
        header, iter(rows), target, WriteOptions(force=True, include_human_review=True)
    )
    assert included.rows == 2
    if fmt == "promptfoo":
        tests = yaml.safe_load(target.read_text(encoding="utf-8"))
        judged = next(t for t in tests if t["metadata"]["id"] == "judged")
        assert "assert" not in judged and judged["metadata"]["humanReview"] is True


def test_a_family_evaluator_the_oracle_bars_stops_the_export(tmp_path: Path) -> None:
    from blueprint.formats.vendor import InvalidRowForExport

    header = {
        **HEADER,
        "caseFamilies": [{"id": "f", "oracleType": "rubric", "evaluator": "exact-or-programmatic"}],
    }
    with pytest.raises(InvalidRowForExport, match="inherits"):
        REGISTRY["braintrust"].write(
            header, iter([row("r", "rubric", caseFamily="f")]), tmp_path / "o.jsonl", WriteOptions()
        )


@pytest.mark.parametrize("oracle_type", ORACLE_TYPES)
@pytest.mark.parametrize("evaluator", [None, *EVALUATOR_TYPES])
def test_promptfoo_knows_which_rows_get_assertions_without_building_them(
    oracle_type: str, evaluator: str | None
) -> None:
    expected = {
        "acceptable-set": {"acceptable": ["a"]},
        "expected-tool-calls": {"calls": []},
        "expected-final-state": {"checks": []},
    }.get(oracle_type, "yes")
    data = row("r", oracle_type, expected=expected)
    if evaluator is not None:
        data["metadata"]["case"]["evaluator"] = evaluator
    exported = ExportRow.of(data)
    assert promptfoo.asserted(exported) == bool(promptfoo.assertions_for(exported))


def test_blueprint_rows_in_a_promptfoo_config_are_told_of_its_default_test(tmp_path: Path) -> None:
    config = {"prompts": ["{{input}}"], "defaultTest": {"assert": [{"type": "is-json"}]}}
    header = {**HEADER, "extensions": {"promptfoo": {"config": config}}}
    target = tmp_path / "promptfooconfig.yaml"
    result = REGISTRY["promptfoo"].write(header, iter([row("mine")]), target, WriteOptions())
    assert any("defaultTest" in note for note in result.notes)
    written = yaml.safe_load(target.read_text(encoding="utf-8"))
    assert written["defaultTest"] == config["defaultTest"] and len(written["tests"]) == 1


@pytest.mark.parametrize("fmt", ["promptfoo", "deepeval", "langsmith", "braintrust"])
def test_criteria_outside_rubric_rows_are_reported_weakened(fmt: str, tmp_path: Path) -> None:
    judged = row("r1", evaluator="llm-judge", evaluationCriteria=["must show working"])
    listed = row("r2", "acceptable-set", expected={"acceptable": ["a"]}, evaluationCriteria=["x"])
    result, _ = export(fmt, [judged, listed], tmp_path)
    weakened = {
        i
        for lossy in result.lossy
        if lossy.field == "metadata.case.evaluationCriteria"
        for i in lossy.row_ids
    }
    assert weakened == {"r1", "r2"}


def test_a_conversational_golden_edited_to_have_an_answer_says_deepeval_never_sees_it(
    tmp_path: Path,
) -> None:
    from blueprint.convert import ConvertOptions, convert, data_rows

    source = tmp_path / "convo.json"
    source.write_text(
        json.dumps(
            [
                {
                    "scenario": "refund",
                    "turns": [{"role": "user", "content": "hi"}],
                    "expected_outcome": "a refund label",
                    "name": "c1",
                }
            ]
        ),
        encoding="utf-8",
    )
    imported = tmp_path / "set.json"
    convert(source, imported, ConvertOptions(source_format="deepeval"))
    document = json.loads(imported.read_text(encoding="utf-8"))
    case = document["rows"][0]["metadata"]["case"]
    case["oracleType"], case["evaluator"] = "reference-answer", "exact-or-programmatic"
    document["rows"][0]["expected"] = "refund issued"
    imported.write_text(json.dumps(document), encoding="utf-8")
    result = convert(imported, tmp_path / "out.json", ConvertOptions(target_format="deepeval"))
    weakened = [i for i in result.export.lossy if i.kind == "weakened"]
    assert [(i.field, i.row_ids) for i in weakened] == [("expected", ("c1",))]
    assert "conversational" in weakened[0].reason
    (golden,) = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert "scenario" in golden and "expected_output" not in golden
    assert not any("regenerated" in note for note in result.export.notes)
    (back,) = data_rows(REGISTRY["deepeval"].open(tmp_path / "out.json"))
    assert back["expected"] == "refund issued"  # the payload keeps it


@pytest.mark.parametrize("fmt", ["promptfoo", "deepeval", "langsmith", "braintrust"])
def test_an_inherited_evaluator_travels_on_the_row(fmt: str, tmp_path: Path) -> None:
    from blueprint.convert import roundtrip
    from conftest import document, write_json

    family = {"id": "judged", "oracleType": "rubric", "evaluator": "llm-judge"}
    data = row("r", "rubric", caseFamily="judged", evaluationCriteria=["polite"])
    source = write_json(tmp_path / "s.json", document(data, caseFamilies=[family]))
    result = roundtrip(source, fmt)
    assert result.exact, (result.undeclared, result.unobserved)
    moved = [i for i in result.export.lossy if i.field == "metadata.case.evaluator"]
    assert moved and moved[0].row_ids == ("r",)
    back = next(iter(result.diff.changed))
    assert [c.path for c in back.changes] == ["$.metadata.case.evaluator"]


def test_changed_fields_names_top_level_metadata_and_case_profile_fields() -> None:
    from blueprint.formats.vendor import changed_fields

    before = row("a", expected="x", evaluator="exact-or-programmatic")
    before["metadata"]["team"] = "support"
    after = json.loads(json.dumps(before))
    assert changed_fields(before, after) == []
    after["expected"] = "y"
    after["metadata"]["case"]["provenance"] = "imported"
    del after["metadata"]["case"]["evaluator"]
    del after["metadata"]["team"]
    after["metadata"]["origin"] = "file"
    assert sorted(changed_fields(before, after)) == [
        "expected",
        "metadata.case.evaluator",
        "metadata.case.provenance",
        "metadata.origin",
        "metadata.team",
    ]
    after["metadata"]["case"] = "damaged"
    assert "metadata.case" in changed_fields(before, after)


def _outcome(fmt: str, data: list[dict[str, Any]], folder: Path) -> Any:
    target = folder / f"out{REGISTRY[fmt].extensions[0]}"
    try:
        result = REGISTRY[fmt].write(HEADER, iter(data), target, WriteOptions(force=True))
    except BlueprintError as error:  # the same refusal either way is the same outcome
        return type(error).__name__
    return sorted((loss.field, loss.reason, loss.row_ids) for loss in result.lossy)


@pytest.mark.parametrize("fmt", ["omk", "apollia", "ome"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(
    data=st.lists(rows(), min_size=3, max_size=6),
    kept_by=st.sampled_from([None, "other", "own"]),
)
def test_a_record_read_back_without_its_keeping_declares_the_same_losses(
    fmt: str,
    data: list[dict[str, Any]],
    kept_by: str | None,
    tmp_path: Path,
) -> None:
    """A format with no free-form place reads each record back to find what it lost; for a
    row with no extension of that format's own, what it would keep of the record is not
    worked out, and the losses declared are the same as when it is (rows read from the
    format have one, and lose nothing more when exported again)."""
    from blueprint.formats.vendor import VendorCodec

    for index, item in enumerate(data):
        case = item["metadata"]["case"]
        item["id"] = case["caseId"] = f"r{index}"
        # an evaluator the oracle admits, so that most sets are exported rather than refused
        case["evaluator"] = admissible_evaluators(case["oracleType"])[0]
        case.pop("judgeValidation", None)
        if kept_by == "other":
            case["extensions"] = {"other": {"keys": ["x"]}}
    if kept_by == "own":  # rows read from the format, which keep what their records held
        if not isinstance(_outcome(fmt, data, tmp_path), list):
            return
        source = REGISTRY[fmt].open(tmp_path / f"out{REGISTRY[fmt].extensions[0]}")
        data = [item.data for item in source.rows]
    quick = _outcome(fmt, data, tmp_path)

    def read_back_whole(
        self: VendorCodec, row: ExportRow, record: Any, position: int, ids: Any, context: Any
    ) -> Any:
        return self.inferred_row(record, position, ids, context.suite)

    with pytest.MonkeyPatch.context() as patch:  # undone for the next example
        patch.setattr(VendorCodec, "read_back", read_back_whole)
        whole = _outcome(fmt, data, tmp_path)
    assert whole == quick


def test_a_lost_row_field_takes_the_reason_of_its_nearest_mapped_field() -> None:
    from blueprint.formats.mapping import load_mapping

    mapping = load_mapping("deepeval").model_copy(deep=True)
    mapping.rows = [
        type(mapping.rows[0])(field="metadata.case", dropped="no place for the profile"),
        type(mapping.rows[0])(field="metadata.case.provenance", dropped="three values only"),
    ]
    assert mapping.row_loss_reason("metadata.case.provenance") == "three values only"
    assert mapping.row_loss_reason("metadata.case.severity") == "no place for the profile"
    assert "deepeval" in mapping.row_loss_reason("metadata.team")


# --- an export that would leave out every row ------------------------------------------------

VENDORS = sorted(name for name, codec in REGISTRY.items() if not codec.lossless and codec.can_write)


def human_review_rows() -> list[dict[str, Any]]:
    """Rows no automated grader may score: every vendor mapping leaves them out by default."""
    return [
        row("behaviour-only", "expected-behavior-only"),
        row("expert", evaluator="human-expert", reviewerExpertise="refund policy"),
    ]


def vendor_target(folder: Path, fmt: str) -> Path:
    extensions = REGISTRY[fmt].extensions
    return folder / f"out{extensions[0] if extensions else ''}"


@pytest.mark.parametrize("fmt", VENDORS)
def test_an_export_that_leaves_out_every_row_writes_nothing(fmt: str, tmp_path: Path) -> None:
    assert "human-review" in load_mapping(fmt).excluded  # what makes every row left out
    source = write_json(tmp_path / "set.json", document(*human_review_rows()))
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(EveryRowExcluded) as raised:
        convert(source, vendor_target(folder, fmt), ConvertOptions(target_format=fmt))
    assert raised.value.exit_code == 1
    assert isinstance(raised.value, EmptyExportRefused)
    excluded = [item for item in raised.value.lossy if item.kind == "excluded"]
    assert sorted(i for item in excluded for i in item.row_ids) == ["behaviour-only", "expert"]
    assert list(folder.iterdir()) == []  # no file, no partial, no set file


@pytest.mark.parametrize("fmt", VENDORS)
def test_an_empty_set_is_still_exported_as_an_empty_file(fmt: str, tmp_path: Path) -> None:
    source = write_json(tmp_path / "set.json", document())
    target = vendor_target(tmp_path, fmt)
    try:
        result = convert(source, target, ConvertOptions(target_format=fmt))
    except EmptyExportRefused as refused:
        # omk's loader refuses an empty sample set, so omk alone refuses: not as left out
        assert fmt == "omk" and not isinstance(refused, EveryRowExcluded)
        return
    assert result.export.rows == 0 and target.exists()


def test_the_cli_refuses_an_export_of_no_rows_naming_the_flag(tmp_path: Path) -> None:
    source = write_json(tmp_path / "set.json", document(*human_review_rows()))
    target = tmp_path / "out.json"
    result = CliRunner().invoke(app, ["convert", str(source), str(target), "--to", "deepeval"])
    assert result.exit_code == 1
    assert "--include-human-review" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set.json"]
    included = CliRunner().invoke(
        app,
        ["convert", str(source), str(target), "--to", "deepeval", "--include-human-review"],
    )
    assert included.exit_code == 0 and len(json.loads(target.read_text())) == 2


def test_a_promptfoo_csv_without_assertions_is_not_exported_as_nothing(tmp_path: Path) -> None:
    source = tmp_path / "tests.csv"
    source.write_text("question,__description\nWhat is 2+2?,sum\nCapital of France?,capital\n")
    result = CliRunner().invoke(
        app, ["convert", str(source), str(tmp_path / "out.json"), "--to", "deepeval"]
    )
    assert result.exit_code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tests.csv"]


def test_a_partial_export_succeeds_with_its_report_and_strict_refuses_it(tmp_path: Path) -> None:
    graded = row("graded", evaluator="exact-or-programmatic", expected="Paris")
    source = write_json(tmp_path / "set.json", document(graded, *human_review_rows()))
    target = tmp_path / "out.json"
    result = convert(source, target, ConvertOptions(target_format="deepeval"))
    assert result.export.rows == 1
    excluded = [item for item in result.export.lossy if item.kind == "excluded"]
    assert [item.count for item in excluded] == [2]
    target.unlink()
    strict = CliRunner().invoke(
        app, ["convert", str(source), str(target), "--to", "deepeval", "--strict"]
    )
    assert strict.exit_code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set.json"]


@settings(max_examples=60, deadline=None)
@given(
    losses=st.lists(
        st.tuples(
            st.sampled_from(["reference-answer", "rubric"]),
            st.lists(
                st.sampled_from(["input", "metadata.case.version", "metadata.x"]), unique=True
            ),
        ),
        max_size=12,
    )
)
def test_fields_dropped_together_are_tallied_as_dropped_one_by_one(
    losses: list[tuple[str, list[str]]],
) -> None:
    together, one_by_one = (ExportTally(load_mapping("omk")) for _ in range(2))
    for number, (oracle_type, paths) in enumerate(losses):
        lost = ExportRow.of(row(f"r{number}", oracle_type))
        together.drop_fields(paths, lost)
        for path in paths:
            one_by_one.drop(path, one_by_one.mapping.row_loss_reason(path, oracle_type), lost)
    assert together.dropped == one_by_one.dropped
    assert list(together.dropped) == list(one_by_one.dropped)  # the report's order


# --- images, audio, video and documents in an input --------------------------------------------

IMAGE = {"type": "image", "image": "https://example.com/receipt.png"}
AUDIO = {"type": "audio", "audio": "data:audio/wav;base64,UklGRg==", "format": "wav"}


def media_rows() -> list[dict[str, Any]]:
    # the expected value names a card, so that ome (which checks cards) writes every row
    chat = row("chat-image", expected=["receipt-card"])
    chat["input"] = [
        {"role": "user", "content": [{"type": "text", "text": "What is the total?"}, IMAGE]}
    ]
    named = row("named-audio-document", expected=["receipt-card"])
    named["input"] = {
        "question": "Does the call match the contract?",
        "call": AUDIO,
        "contract": {"type": "document", "document": "contract.pdf"},
    }
    plain = row("plain", expected=["receipt-card"])
    plain["input"] = {"question": "no media here", "kind": {"type": "image"}}  # no image in it
    return [chat, named, plain]


#: what each export says of them: the formats whose model takes text only report every media
#: row; the ones that carry the input as it is report none; Inspect carries chat messages with
#: content parts (its own) and reports the rest
MEDIA_WEAKENED = {
    "promptfoo": {"chat-image": "image", "named-audio-document": "audio and document"},
    "deepeval": {"chat-image": "image", "named-audio-document": "audio and document"},
    "openai-evals": {"chat-image": "image", "named-audio-document": "audio and document"},
    "omk": {"chat-image": "image", "named-audio-document": "audio and document"},
    "ome": {"chat-image": "image", "named-audio-document": "audio and document"},
    "apollia": {"chat-image": "image", "named-audio-document": "audio and document"},
    "inspect": {"named-audio-document": "audio and document"},
    "langsmith": {},
    "braintrust": {},
    "huggingface": {},
}


def test_every_vendor_format_says_what_it_does_with_media() -> None:
    assert set(MEDIA_WEAKENED) == set(VENDORS)


@pytest.mark.parametrize("fmt", VENDORS)
def test_media_a_text_only_model_cannot_take_is_reported_weakened(fmt: str, tmp_path: Path) -> None:
    source = write_json(tmp_path / "set.json", document(*media_rows()))
    result = convert(source, vendor_target(tmp_path, fmt), ConvertOptions(target_format=fmt))
    media = {
        row_id: item.reason.split(" content in the input: ")[0]
        for item in result.export.lossy
        if item.kind == "weakened"
        and item.field == "input"
        and "content in the input" in item.reason
        for row_id in item.row_ids
    }
    excluded = {i for item in result.export.lossy if item.kind == "excluded" for i in item.row_ids}
    expected = {k: v for k, v in MEDIA_WEAKENED[fmt].items() if k not in excluded}
    assert media == expected
    if expected:
        reason = next(i.reason for i in result.export.lossy if "content in the input" in i.reason)
        assert reason.endswith(load_mapping(fmt).media or "")


def test_inspect_gives_the_model_chat_content_parts_as_they_are(tmp_path: Path) -> None:
    source = write_json(tmp_path / "set.json", document(*media_rows()))
    for suffix in (".jsonl", ".csv"):
        target = tmp_path / f"samples{suffix}"
        result = convert(source, target, ConvertOptions(target_format="inspect"))
        weakened = {
            i
            for item in result.export.lossy
            if item.kind == "weakened" and "content in the input" in item.reason
            for i in item.row_ids
        }
        if suffix == ".jsonl":
            first = json.loads(target.read_text(encoding="utf-8").splitlines()[0])
            assert first["input"] == media_rows()[0]["input"]  # the message, not its JSON text
            assert weakened == {"named-audio-document"}
        else:  # a cell holds text: the chat row is left out, the other's media go as text
            excluded = {
                i for item in result.export.lossy if item.kind == "excluded" for i in item.row_ids
            }
            assert "chat-image" in excluded and weakened == {"named-audio-document"}


# --- starter rows say they are examples in every format ---------------------------------------

#: a file name for each vendor format, and, for the rows it writes, the text of each row's
#: record (its line, its test, its table); omk's JSON has no place (see below)
STARTER_TARGETS = {
    "promptfoo": "tests.yaml",
    "deepeval": "goldens.json",
    "langsmith": "examples.jsonl",
    "braintrust": "records.jsonl",
    "inspect": "samples.jsonl",
    "openai-evals": "samples.jsonl",
    "huggingface": "dataset",
    "omk": "eval-samples.yaml",
    "apollia": "suite.toml",
}


def _record_texts(fmt: str, target: Path) -> dict[str, str]:
    """Each written record's text, by the id of its row."""
    if fmt == "huggingface":
        target = target / "data" / "test.jsonl"
    text = target.read_text(encoding="utf-8")
    if fmt == "deepeval":
        return {golden["input"]: json.dumps(golden) for golden in json.loads(text)}
    if target.suffix == ".jsonl":
        # a Hugging Face row says whether it is a starter in a column every row has
        return {line: line.replace('"starter_example":false', "") for line in text.splitlines()}
    header = {"yaml": "- ", "toml": "[[tasks]]"}[target.suffix.lstrip(".")[:4]]
    parts = text.split("\n" + header) if fmt != "apollia" else text.split(header)
    return {str(number): part for number, part in enumerate(parts[1:])}


@pytest.mark.parametrize("fmt", list(STARTER_TARGETS))
def test_a_starter_row_is_marked_as_an_example_in_the_written_file(
    fmt: str, tmp_path: Path
) -> None:
    source = write_json(
        tmp_path / "set.json",
        document(row("gold", expected="yes"), row("example", provenance="starter-example")),
    )
    target = tmp_path / STARTER_TARGETS[fmt]
    convert(source, target, ConvertOptions(target_format=fmt))
    texts = _record_texts(fmt, target)
    assert len(texts) == 2, texts
    marked = [key for key, text in texts.items() if "starter" in text.lower()]
    assert len(marked) == 1, texts  # the starter row's record, and only it


def test_an_omk_json_file_has_no_place_and_the_export_says_so(tmp_path: Path) -> None:
    source = write_json(
        tmp_path / "set.json", document(row("example", provenance="starter-example"))
    )
    result = convert(source, tmp_path / "eval-samples.json", ConvertOptions(target_format="omk"))
    assert "starter" not in (tmp_path / "eval-samples.json").read_text(encoding="utf-8")
    (note,) = [note for note in result.export.notes if "starter" in note]
    assert "example" in note and "no field" in note
    result = convert(source, tmp_path / "eval-samples.yaml", ConvertOptions(target_format="omk"))
    assert any("comment" in note for note in result.export.notes if "starter" in note)
