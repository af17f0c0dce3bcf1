"""omk eval-sample sets: export to omk's published v2 schema and its runtime rules, import of
files omk users wrote (keeping every key), the validator's rules one by one, and the CLI."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert, data_rows, roundtrip
from blueprint.core.errors import ConversionRefused, EmptyExportRefused, EveryRowExcluded
from blueprint.formats import REGISTRY, WriteOptions, resolve_codec
from blueprint.formats.omk import (
    SCHEMA_VERSION,
    EmptySampleSet,
    argument_text,
    blank,
    check_document,
    check_file,
    equal_weights,
    read_document,
)
from blueprint.formats.promptfoo import Yaml12Loader, dump_yaml
from blueprint.formats.vendor import InvalidRowForExport
from blueprint.io import firstseen
from blueprint.validation.validate import validate_file
from conftest import FIXTURES, document, row, write_json
from strategies import eval_sets

OMK = FIXTURES / "native" / "omk"
SCHEMA = json.loads((OMK / "schema" / "eval-sample-set.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
NATIVE_FILES = sorted(
    path
    for folder in ("seed", "public")
    for path in (OMK / folder).rglob("*")
    if path.suffix in (".json", ".yaml", ".yml")
)
CODEC = REGISTRY["omk"]
runner = CliRunner()


def schema_errors(doc: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in VALIDATOR.iter_errors(doc)
    ]


def assert_omk_accepts(doc: Any) -> None:
    """What omk's loader checks: the published schema, and the runtime rules beyond it."""
    assert schema_errors(doc) == []
    assert check_document(doc) == []
    for sample in doc["samples"]:
        weights = [dimension["weight"] for dimension in sample.get("rubric", {}).values()]
        if weights:
            assert all(0 < weight <= 1 for weight in weights)
            total = 0.0
            for weight in weights:  # summed left to right, as omk sums them
                total += weight
            assert abs(total - 1) <= 1e-9


def every_oracle_type() -> dict[str, Any]:
    return document(
        row("ref", expected="30 days", caseFamily="policy-lookup"),
        row("ref-number", expected=42, provenance="production-sample"),
        row("ref-object", expected={"refund": True, "days": 30}),
        row("set", "acceptable-set", expected={"acceptable": ["yes", "yes, within 30 days", 1]}),
        row(
            "graded",
            "acceptable-set",
            expected={"graded": [{"value": "full", "grade": 1}, {"value": "no", "grade": 0}]},
        ),
        row(
            "rubric",
            "rubric",
            evaluationCriteria=["cites the policy", "  ", "offers the next step", "is polite"],
        ),
        row("rubric-from-behaviour", "rubric"),
        row(
            "tools",
            "expected-tool-calls",
            expected={
                "calls": [
                    {"name": "lookup_order", "arguments": {"id": "A1"}},
                    {"name": "refund", "arguments": {}},
                ],
                "order": "exact",
                "forbidden": [
                    {"name": "delete_account"},
                    {"name": "refund", "arguments": {"x": 1}},
                ],
            },
        ),
        row(
            "state",
            "expected-final-state",
            expected={"checks": [{"kind": "file_exists", "path": "out.txt"}]},
        ),
        row("behaviour", "expected-behavior-only", evaluator="human-expert"),
    )


# --- export ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_an_export_of_every_oracle_type_passes_omk_schema_and_rules(
    suffix: str, tmp_path: Path
) -> None:
    source = write_json(tmp_path / "set.json", every_oracle_type())
    target = tmp_path / f"eval-samples{suffix}"
    result = convert(source, target, ConvertOptions(target_format="omk"))
    doc = read_document(target)
    assert doc["schemaVersion"] == SCHEMA_VERSION
    assert_omk_accepts(doc)
    samples = {sample["sample_id"]: sample for sample in doc["samples"]}
    assert samples["ref"]["assertions"] == [{"type": "equals", "value": "30 days"}]
    assert samples["ref"]["capability"] == ["policy-lookup"]
    assert samples["ref"]["provenance"] == "human"
    assert samples["ref-number"]["assertions"][0]["value"] == 42
    assert samples["ref-number"]["provenance"] == "production-trace"
    assert json.loads(samples["ref-object"]["assertions"][0]["value"]) == {
        "refund": True,
        "days": 30,
    }
    (any_of,) = samples["set"]["assertions"]
    assert any_of["type"] == "assert-set" and any_of["mode"] == "any"
    assert [child["value"] for child in any_of["children"]] == ["yes", "yes, within 30 days", 1]
    assert [c["value"] for c in samples["graded"]["assertions"][0]["children"]] == ["full"]
    rubric = samples["rubric"]["rubric"]
    assert [d["criterion"] for d in rubric.values()] == [
        "cites the policy",
        "offers the next step",
        "is polite",
    ]
    (only,) = samples["rubric-from-behaviour"]["rubric"].values()
    assert only == {"criterion": "answers with the published policy", "weight": 1}
    assert samples["tools"]["assertions"] == [
        {"type": "tools_called", "values": ["lookup_order", "refund"]},
        {"type": "tool_input_contains", "value": 'lookup_order:"id":"A1"'},
        {"type": "tools_not_called", "values": ["delete_account"]},
    ]
    assert "state" not in samples and "behaviour" not in samples
    left_out = {
        i for lossy in result.export.lossy if lossy.kind == "excluded" for i in lossy.row_ids
    }
    assert left_out == {"state", "behaviour"}


def test_human_review_rows_export_when_asked_and_still_pass(tmp_path: Path) -> None:
    source = write_json(tmp_path / "set.json", every_oracle_type())
    target = tmp_path / "eval-samples.json"
    convert(source, target, ConvertOptions(target_format="omk", include_human_review=True))
    doc = read_document(target)
    assert_omk_accepts(doc)
    behaviour = next(s for s in doc["samples"] if s["sample_id"] == "behaviour")
    assert not {"rubric", "assertions"} & set(behaviour)  # no checks: omk leaves it unscored


def test_the_lossy_report_names_what_omk_cannot_say(tmp_path: Path) -> None:
    source = write_json(tmp_path / "set.json", every_oracle_type())
    result = convert(source, tmp_path / "out.json", ConvertOptions(target_format="omk"))
    lossy: dict[tuple[str, str], set[str]] = {}
    for item in result.export.lossy:
        lossy.setdefault((item.kind, item.field), set()).update(item.row_ids)
    assert lossy[("excluded", "*")] >= {"state", "behaviour"}
    assert "ref" in lossy[("dropped", "metadata.case.provenance")]
    assert "ref" in lossy[("dropped", "metadata.case.expectedBehavior")]
    assert {"ref-object", "graded", "tools"} <= lossy[("dropped", "expected")]
    assert "ref" not in lossy[("dropped", "expected")]
    assert "tools" in lossy[("weakened", "expected.order")]
    assert "tools" in lossy[("weakened", "expected.forbidden")]
    assert "ref" in lossy[("weakened", "expected")]
    assert "graded" in lossy[("weakened", "expected.graded")]
    reasons = {item.field: item.reason for item in result.export.lossy if item.kind == "dropped"}
    assert "three provenances" in reasons["metadata.case.provenance"]


@pytest.mark.parametrize("count", range(1, 60))
def test_equal_weights_sum_to_exactly_one(count: int) -> None:
    weights = equal_weights(count)
    assert len(weights) == count
    assert all(0 < weight <= 1 for weight in weights)
    total = 0.0
    for weight in weights:
        total += weight
    assert total == 1.0
    assert math.isclose(weights[0], 1 / count)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=80)
@given(doc=eval_sets())
def test_any_export_passes_omk_schema_and_rules(
    suffix: str, doc: dict[str, Any], tmp_path: Path
) -> None:
    header = {key: value for key, value in doc.items() if key != "rows"}
    target = tmp_path / f"eval-samples{suffix}"
    for include in (False, True):
        target.unlink(missing_ok=True)
        try:
            CODEC.write(
                header,
                iter(doc["rows"]),
                target,
                WriteOptions(force=True, include_human_review=include),
            )
        except (InvalidRowForExport, EmptyExportRefused):
            assert not target.exists()
            continue
        written = read_document(target)
        assert_omk_accepts(written)
        if suffix == ".yaml":
            # quoted where YAML 1.1 or 1.2 readers could misread a string
            assert yaml.load(target.read_text(encoding="utf-8"), Loader=yaml.SafeLoader) == written


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(doc=eval_sets())
def test_yaml_and_json_exports_read_back_the_same_rows(doc: dict[str, Any], tmp_path: Path) -> None:
    header = {key: value for key, value in doc.items() if key != "rows"}
    seen = []
    for suffix in (".json", ".yaml"):
        target = tmp_path / f"out{suffix}"
        try:
            result = CODEC.write(header, iter(doc["rows"]), target, WriteOptions(force=True))
        except (InvalidRowForExport, EmptyExportRefused):
            return
        back = list(data_rows(CODEC.open(target)))
        lossy = [item.to_json() for item in result.lossy]
        seen.append(json.dumps([back, lossy], sort_keys=True, ensure_ascii=False))
    assert seen[0] == seen[1]


def test_an_export_with_nothing_omk_can_hold_writes_nothing(tmp_path: Path) -> None:
    doc = document(
        row(
            "state",
            "expected-final-state",
            expected={"checks": [{"kind": "file_exists", "path": "a"}]},
        )
    )
    source = write_json(tmp_path / "set.json", doc)
    target = tmp_path / "eval-samples.json"
    with pytest.raises(EveryRowExcluded):
        convert(source, target, ConvertOptions(target_format="omk"))
    assert not target.exists()
    result = runner.invoke(app, ["convert", str(source), str(target), "--to", "omk"])
    assert result.exit_code == 1
    assert not target.exists()
    # a set of no rows is refused too: omk's loader refuses an empty sample set
    empty = write_json(tmp_path / "empty.json", document())
    with pytest.raises(EmptySampleSet):
        convert(empty, target, ConvertOptions(target_format="omk"))


def test_an_empty_prompt_is_left_out(tmp_path: Path) -> None:
    empty = row("empty")
    empty["input"] = ""
    source = write_json(tmp_path / "set.json", document(empty, row("ok")))
    with pytest.raises(ConversionRefused):  # a row without input is not valid
        convert(source, tmp_path / "o.json", ConvertOptions(target_format="omk"))
    options = ConvertOptions(target_format="omk", allow_invalid=True)
    result = convert(source, tmp_path / "o.json", options)
    assert [s["sample_id"] for s in read_document(tmp_path / "o.json")["samples"]] == ["ok"]
    assert any(x.kind == "excluded" and x.row_ids == ("empty",) for x in result.export.lossy)


# --- import ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", NATIVE_FILES, ids=lambda p: str(p.relative_to(OMK)))
def test_omk_files_import_and_export_to_the_same_document(path: Path, tmp_path: Path) -> None:
    result = roundtrip(path, "omk", source_format="omk")
    assert result.exact, (result.undeclared, result.unobserved, result.vendor_changes)
    assert result.vendor_changes == []
    # and through a Blueprint file: omk -> json -> omk
    middle = tmp_path / "set.json"
    convert(path, middle, ConvertOptions(source_format="omk"))
    assert validate_file(middle).valid
    back = tmp_path / f"eval-samples{path.suffix}"
    convert(middle, back, ConvertOptions(target_format="omk"))
    assert read_document(back) == read_document(path)
    assert check_file(path) == []


def test_the_published_examples_are_detected_and_valid_omk() -> None:
    for path in NATIVE_FILES:
        assert resolve_codec(path, None, reading=True).name == "omk", path
        assert schema_errors(read_document(path)) == []


FULL = {
    "schemaVersion": SCHEMA_VERSION,
    "requires": {"tools": ["git"], "env": ["API_TOKEN"], "preflight": ["node --version"]},
    "samples": [
        {
            "sample_id": "deploy-check",
            "prompt": "Is the release safe to ship?",
            "context": "CHANGELOG: ...",
            "cwd": "./workspace",
            "rubric": {
                "risk": {"criterion": "Names the riskiest change", "weight": 0.7},
                "rollback": {"criterion": "Gives a rollback plan", "weight": 0.3},
            },
            "assertions": [
                {"type": "contains", "value": "rollback", "weight": 2},
                {"type": "mock_hit", "value": "Bash:1", "threshold": 1},
            ],
            "capability": ["release-review", "risk"],
            "difficulty": "hard",
            "construct": "quality",
            "provenance": "production-trace",
            "covers": [{"targetKind": "workflow", "ref": "release"}],
            "tripwire": True,
            "mocks": [{"tool": "Bash", "match": {"command_glob": "git log*"}, "return": "abc"}],
            "mocksStrict": False,
            "environment": {"cli_available": ["git"], "notes": "offline"},
            "allowedTools": ["Bash", "Read"],
        },
        {
            "sample_id": "answer",
            "prompt": "What is the refund window?",
            "assertions": [{"type": "equals", "value": "30 days", "weight": 0.5}],
            "difficulty": "easy",
        },
        {
            "sample_id": "either",
            "prompt": "Say yes.",
            "assertions": [
                {
                    "type": "assert-set",
                    "mode": "any",
                    "children": [
                        {"type": "equals", "value": "yes"},
                        {"type": "equals", "value": 1},
                    ],
                }
            ],
        },
        {
            "sample_id": "tools",
            "prompt": "Refund order A1.",
            "assertions": [
                {"type": "tools_called", "values": ["Read", "refund"]},
                {"type": "tool_input_contains", "value": 'refund:"order":"A1"'},
                {"type": "tool_input_contains", "value": "Read:notes.md"},
                {"type": "tools_not_called", "values": ["delete"]},
                {"type": "tools_count_max", "value": 4},
            ],
        },
        {
            "sample_id": "judged",
            "prompt": "Summarise the context.",
            "context": "The sky is blue.",
            "assertions": [{"type": "faithfulness", "threshold": 4}],
        },
    ],
}


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_import_keeps_every_omk_key_and_writes_it_back(suffix: str, tmp_path: Path) -> None:
    assert check_document(FULL) == [] and schema_errors(FULL) == []
    path = tmp_path / f"eval-samples{suffix}"
    if suffix == ".json":
        write_json(path, FULL)
    else:
        path.write_text(yaml.safe_dump(FULL, sort_keys=False), encoding="utf-8")
    source = CODEC.open(path)
    assert source.header is not None
    # a YAML file's text is kept too, so writing the set back edits it in place
    kept_text = source.header["extensions"]["omk"].pop("source", None)
    assert kept_text == (
        None if suffix == ".json" else {"file": path.name, "text": path.read_text("utf-8")}
    )
    assert source.header == {
        "schemaVersion": "blueprint.eval-set/v1",
        "name": "eval-samples",
        "extensions": {"omk": {"requires": FULL["requires"]}},
    }
    rows = {r["id"]: r for r in data_rows(source)}
    deploy = rows["deploy-check"]["metadata"]["case"]
    assert deploy["oracleType"] == "rubric"
    assert deploy["provenance"] == "imported"
    assert deploy["evaluationCriteria"] == ["Names the riskiest change", "Gives a rollback plan"]
    kept = deploy["extensions"]["omk"]
    assert set(kept["record"]) == {
        "context",
        "cwd",
        "difficulty",
        "construct",
        "covers",
        "tripwire",
        "mocks",
        "mocksStrict",
        "environment",
        "allowedTools",
    }
    assert kept["native"]["rubric"]["value"] == FULL["samples"][0]["rubric"]
    assert kept["native"]["assertions"]["value"] == FULL["samples"][0]["assertions"]
    assert kept["native"]["provenance"]["value"] == "production-trace"
    assert kept["native"]["capability"]["value"] == ["release-review", "risk"]
    derived = deploy["extensions"]["blueprint-import"]["derived"]
    assert {"metadata.case.oracleType", "metadata.case.expectedBehavior"} <= set(derived)

    answer = rows["answer"]
    assert answer["expected"] == "30 days"
    assert answer["metadata"]["case"]["oracleType"] == "reference-answer"
    assert answer["metadata"]["case"]["extensions"]["omk"]["record"] == {"difficulty": "easy"}
    assert rows["either"]["expected"] == {"acceptable": ["yes", 1]}
    assert rows["tools"]["expected"] == {
        "calls": [
            {"name": "Read", "arguments": {}},  # "notes.md" is not an argument's JSON text
            {"name": "refund", "arguments": {"order": "A1"}},
        ],
        "order": "any",
        "forbidden": [{"name": "delete"}],
    }
    assert rows["judged"]["metadata"]["case"]["oracleType"] == "expected-behavior-only"

    middle = tmp_path / "set.json"
    convert(path, middle, ConvertOptions(source_format="omk"))
    back = tmp_path / f"back{suffix}"
    result = convert(middle, back, ConvertOptions(target_format="omk"))
    assert read_document(back) == FULL
    assert [item for item in result.export.lossy if item.scope == "row"] == []


def test_tool_call_arguments_travel_as_tool_input_contains(tmp_path: Path) -> None:
    calls = {
        "calls": [
            {"name": "search", "arguments": {"q": "refund policy", "limit": 5}},
            {"name": "search", "arguments": {"q": "returns"}},
            {"name": "ns:tool", "arguments": {"x": 1}},
        ],
        "order": "any",
    }
    source = write_json(
        tmp_path / "set.json", document(row("t", "expected-tool-calls", expected=calls))
    )
    target = tmp_path / "eval-samples.json"
    result = convert(source, target, ConvertOptions(target_format="omk"))
    (sample,) = read_document(target)["samples"]
    assert [a["value"] for a in sample["assertions"] if a["type"] == "tool_input_contains"] == [
        'search:"q":"refund policy"',
        'search:"limit":5',
        'search:"q":"returns"',
    ]
    assert_omk_accepts(read_document(target))
    (back,) = data_rows(CODEC.open(target))
    assert back["expected"]["calls"][:2] == calls["calls"][:2]
    assert back["expected"]["calls"][2] == {"name": "ns:tool", "arguments": {}}
    dropped = {item.field for item in result.export.lossy if item.kind == "dropped"}
    weakened = {item.field for item in result.export.lossy if item.kind == "weakened"}
    assert "expected" in dropped  # the colon in ns:tool
    assert "expected.calls[*].arguments" in weakened


def test_an_edit_in_blueprint_reaches_the_omk_file(tmp_path: Path) -> None:
    path = write_json(tmp_path / "eval-samples.json", FULL)
    middle = tmp_path / "set.json"
    convert(path, middle, ConvertOptions(source_format="omk"))
    doc = json.loads(middle.read_text(encoding="utf-8"))
    answer = next(r for r in doc["rows"] if r["id"] == "answer")
    answer["expected"] = "thirty days"
    write_json(middle, doc)
    back = tmp_path / "back.json"
    convert(middle, back, ConvertOptions(target_format="omk"))
    sample = next(s for s in read_document(back)["samples"] if s["sample_id"] == "answer")
    assert sample["assertions"] == [{"type": "equals", "value": "thirty days"}]
    assert sample["difficulty"] == "easy"  # what the row does not hold still goes back


OMK_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@st.composite
def omk_samples(draw: st.DrawFn, sample_id: str) -> dict[str, Any]:
    sample: dict[str, Any] = {"sample_id": sample_id, "prompt": draw(OMK_TEXT)}
    kind = draw(st.sampled_from(["equals", "set", "tools", "rubric", "other", "none"]))
    if kind == "equals":
        value = draw(st.one_of(OMK_TEXT, st.integers(-(2**53) + 1, 2**53 - 1)))
        assertion: dict[str, Any] = {"type": "equals", "value": value}
        if draw(st.booleans()):
            assertion["weight"] = draw(st.floats(0.1, 5))
        sample["assertions"] = [assertion]
    elif kind == "set":
        children = [
            {"type": "equals", "value": v} for v in draw(st.lists(OMK_TEXT, min_size=1, max_size=3))
        ]
        sample["assertions"] = [{"type": "assert-set", "mode": "any", "children": children}]
    elif kind == "tools":
        names = draw(st.lists(OMK_TEXT, min_size=1, max_size=3))
        sample["assertions"] = [{"type": "tools_called", "values": names}]
        plain = [name for name in names if ":" not in name]  # omk's tool name ends at a colon
        for name in draw(st.lists(st.sampled_from(plain), max_size=3)) if plain else []:
            key, value = draw(OMK_TEXT), draw(st.one_of(OMK_TEXT, st.integers(), st.booleans()))
            needle = draw(st.sampled_from([argument_text(key, value), key]))
            sample["assertions"].append(
                {"type": "tool_input_contains", "value": f"{name}:{needle}"}
            )
    elif kind == "rubric":
        names = draw(
            st.lists(OMK_TEXT.filter(lambda t: not blank(t)), min_size=1, max_size=3, unique=True)
        )
        weights = equal_weights(len(names))
        sample["rubric"] = {
            name: {"criterion": draw(OMK_TEXT.filter(lambda t: not blank(t))), "weight": weight}
            for name, weight in zip(names, weights, strict=True)
        }
    elif kind == "other":
        sample["assertions"] = [{"type": "contains", "value": draw(OMK_TEXT), "not": True}]
    optional = {
        "difficulty": st.sampled_from(["easy", "medium", "hard"]),
        "tripwire": st.booleans(),
        "provenance": st.sampled_from(["human", "llm-generated", "production-trace"]),
        "capability": st.lists(OMK_TEXT, min_size=1, max_size=2),
        "context": OMK_TEXT,
        "construct": OMK_TEXT,
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            sample[key] = draw(strategy)
    return sample


@st.composite
def omk_documents(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(OMK_TEXT, min_size=1, max_size=4, unique=True))
    doc: dict[str, Any] = {"schemaVersion": SCHEMA_VERSION}
    if draw(st.booleans()):
        doc["requires"] = {"tools": draw(st.lists(OMK_TEXT, min_size=1, max_size=2))}
    doc["samples"] = [draw(omk_samples(sample_id)) for sample_id in ids]
    return doc


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(doc=omk_documents())
def test_any_omk_file_goes_back_as_it_came(
    suffix: str, doc: dict[str, Any], tmp_path: Path
) -> None:
    assert schema_errors(doc) == [] and check_document(doc) == []
    path = tmp_path / f"samples{suffix}"
    if suffix == ".json":
        write_json(path, doc)
    else:
        # written as omk's YAML 1.2 reader reads it (PyYAML's 1.1 dumper leaves 0E0 plain,
        # which 1.2 reads as a number)
        path.write_bytes(dump_yaml(doc))
    result = roundtrip(path, "omk", source_format="omk")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []


# --- the validator -----------------------------------------------------------------------------

BASE = {
    "schemaVersion": SCHEMA_VERSION,
    "samples": [
        {
            "sample_id": "a",
            "prompt": "p",
            "rubric": {
                "x": {"criterion": "c", "weight": 0.5},
                "y": {"criterion": "d", "weight": 0.5},
            },
            "mocks": [{"tool": "Bash", "return": "ok"}],
            "assertions": [{"type": "mock_hit", "value": "Bash:1"}],
        }
    ],
}


def _mutate(path: list[Any], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    holder: Any = doc
    for part in path[:-1]:
        holder = holder[part]
    if value is _DELETE:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return doc


_DELETE = object()
S0 = ["samples", 0]


@pytest.mark.parametrize(
    ("where", "value", "rule", "at"),
    [
        (["name"], "x", "unknown-field", "$.name"),
        ([*S0, "notes"], "x", "unknown-field", "$.samples[0].notes"),
        ([*S0, "assertions", 0, "why"], "x", "unknown-field", "$.samples[0].assertions[0].why"),
        ([*S0, "mocks", 0, "delay"], 1, "unknown-field", "$.samples[0].mocks[0].delay"),
        ([*S0, "rubric", "x", "hint"], "h", "unknown-field", "$.samples[0].rubric.x.hint"),
        (["requires"], {"os": ["linux"]}, "unknown-field", "$.requires.os"),
        (["schemaVersion"], "omk.eval-sample-set/v1", "schema-version", "$.schemaVersion"),
        (["schemaVersion"], _DELETE, "required", "$.schemaVersion"),
        (["samples"], [], "empty", "$.samples"),
        ([*S0, "prompt"], _DELETE, "required", "$.samples[0].prompt"),
        ([*S0, "prompt"], "", "empty", "$.samples[0].prompt"),
        ([*S0, "rubric", "x", "weight"], 0.6, "weight-sum", "$.samples[0].rubric"),
        ([*S0, "rubric", "x", "weight"], 0.5 + 2e-9, "weight-sum", "$.samples[0].rubric"),
        ([*S0, "rubric", "x", "weight"], 0, "weight-range", "$.samples[0].rubric.x.weight"),
        ([*S0, "rubric", "x", "weight"], 1.5, "weight-range", "$.samples[0].rubric.x.weight"),
        ([*S0, "rubric", "x", "criterion"], "  ", "blank", "$.samples[0].rubric.x.criterion"),
        ([*S0, "rubric"], {}, "empty", "$.samples[0].rubric"),
        (
            [*S0, "rubric"],
            {" ": {"criterion": "c", "weight": 1}},
            "blank",
            "$.samples[0].rubric[' ']",
        ),
        ([*S0, "assertions", 0, "value"], "Bash:2", "mock-hit", "$.samples[0].assertions[0].value"),
        ([*S0, "assertions", 0, "value"], "Read:1", "mock-hit", "$.samples[0].assertions[0].value"),
        ([*S0, "assertions", 0, "value"], "Bash", "mock-hit", "$.samples[0].assertions[0].value"),
        (
            [*S0, "assertions", 0],
            {"type": "contains"},
            "required-value",
            "$.samples[0].assertions[0].value",
        ),
        (
            [*S0, "assertions", 0],
            {"type": "regex"},
            "required-value",
            "$.samples[0].assertions[0].pattern",
        ),
        (
            [*S0, "assertions", 0],
            {"type": "tools_called", "values": []},
            "required-value",
            "$.samples[0].assertions[0].values",
        ),
        (
            [*S0, "assertions", 0],
            {"type": "tool_input_contains", "value": "Bash"},
            "required-value",
            "$.samples[0].assertions[0].value",
        ),
        (
            [*S0, "assertions", 0],
            {"type": "custom"},
            "required-value",
            "$.samples[0].assertions[0].fn",
        ),
        (
            [*S0, "assertions", 0],
            {"type": "max_length", "value": "9"},
            "required-value",
            "$.samples[0].assertions[0].value",
        ),
        (
            [*S0, "assertions", 0],
            {"type": "assert-set", "children": [{"type": "semantic_similarity", "reference": "r"}]},
            "async-nested",
            "$.samples[0].assertions[0].children[0].type",
        ),
        (
            [*S0, "assertions", 0],
            {
                "type": "assert-set",
                "children": [
                    {"type": "assert-set", "children": [{"type": "custom", "fn": "a.mjs"}]}
                ],
            },
            "async-nested",
            "$.samples[0].assertions[0].children[0].children[0].type",
        ),
        (
            [*S0, "assertions", 0],
            {"type": "assert-set", "children": []},
            "required-value",
            "$.samples[0].assertions[0].children",
        ),
        ([*S0, "assertions", 0], {"type": "like"}, "enum", "$.samples[0].assertions[0].type"),
        ([*S0, "difficulty"], "trivial", "enum", "$.samples[0].difficulty"),
        ([*S0, "provenance"], "imported", "enum", "$.samples[0].provenance"),
        ([*S0, "tripwire"], "yes", "type", "$.samples[0].tripwire"),
        ([*S0, "mocks", 0, "return_file"], "f.txt", "mock-return", "$.samples[0].mocks[0]"),
        (
            [*S0, "covers"],
            [{"targetKind": "module", "ref": "x"}],
            "enum",
            "$.samples[0].covers[0].targetKind",
        ),
    ],
)
def test_each_omk_rule_is_reported_with_its_path(
    where: list[Any], value: Any, rule: str, at: str
) -> None:
    assert check_document(BASE) == []
    problems = check_document(_mutate(where, value))
    assert (rule, at) in [(p.rule, p.path) for p in problems], problems


def test_a_repeated_sample_id_and_a_legacy_array_are_reported() -> None:
    doc = copy.deepcopy(BASE)
    doc["samples"].append(copy.deepcopy(doc["samples"][0]))
    assert [(p.rule, p.path) for p in check_document(doc)] == [
        ("duplicate-sample-id", "$.samples[1].sample_id")
    ]
    assert [p.rule for p in check_document(BASE["samples"])] == ["legacy-array"]


def test_repeated_sample_ids_are_found_with_the_ids_on_disk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(firstseen, "TABLE_BYTES", 48)  # a few ids in memory, the rest on disk
    doc = copy.deepcopy(BASE)
    first = doc["samples"][0]
    doc["samples"] = [{**first, "sample_id": f"s{number % 50}"} for number in range(120)]
    found = [(p.rule, p.path) for p in check_document(doc)]
    assert found == [
        ("duplicate-sample-id", f"$.samples[{number}].sample_id") for number in range(50, 120)
    ]


def test_json_beside_yaml_is_ambiguous(tmp_path: Path) -> None:
    json_path = write_json(tmp_path / "eval-samples.json", BASE)
    assert check_file(json_path) == []
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump(BASE), encoding="utf-8")
    for path in (json_path, tmp_path / "eval-samples.yaml"):
        assert [p.rule for p in check_file(path)] == ["ambiguous-samples"]
    # writing one beside the other says so
    source = write_json(tmp_path / "set.json", document(row("r")))
    result = convert(
        source, tmp_path / "eval-samples.json", ConvertOptions(target_format="omk", force=True)
    )
    assert any("eval-samples.yaml" in note for note in result.export.notes)
    # other names are not discovered by omk, so they are not ambiguous
    write_json(tmp_path / "other.json", BASE)
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(BASE), encoding="utf-8")
    assert check_file(tmp_path / "other.json") == []


def test_validate_reports_omk_problems_with_file_line_and_path(tmp_path: Path) -> None:
    path = tmp_path / "eval-samples.yaml"
    path.write_text(
        "schemaVersion: omk.eval-sample-set/v2\n"
        "samples:\n"
        "  - sample_id: a\n"
        "    prompt: p\n"
        "    rubric:\n"
        "      x: {criterion: c, weight: 0.4}\n"
        "    assertions:\n"
        "      - {type: contains, value: SQL, colour: red}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["validate", str(path), "--report", "json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    found = {
        (i["rowId"], i["path"], i["line"]) for i in report["issues"] if i["code"] == "vendor-format"
    }
    assert found == {
        ("a", "$.samples[0].rubric", 5),
        ("a", "$.samples[0].assertions[0].colour", 8),
    }
    json_path = write_json(tmp_path / "bad.json", _mutate([*S0, "oops"], 1))
    report = validate_file(json_path)
    (issue,) = [i for i in report.issues if i.code == "vendor-format"]
    assert issue.path == "$.samples[0].oops" and issue.line == 4


def test_a_file_omk_refuses_is_converted_only_when_asked(tmp_path: Path) -> None:
    path = write_json(tmp_path / "eval-samples.json", _mutate([*S0, "oops"], 1))
    result = runner.invoke(app, ["convert", str(path), str(tmp_path / "o.json"), "--from", "omk"])
    assert result.exit_code == 1
    assert not (tmp_path / "o.json").exists()
    back = tmp_path / "back.json"
    convert(path, tmp_path / "o.json", ConvertOptions(source_format="omk", allow_invalid=True))
    written = convert(
        tmp_path / "o.json", back, ConvertOptions(target_format="omk", allow_invalid=True)
    )
    assert read_document(back) == read_document(path)  # kept as it came, and said so
    assert any("omk's loader will refuse" in note for note in written.export.notes)


@pytest.mark.parametrize(
    "legacy",
    [BASE["samples"], {"samples": BASE["samples"]}],
    ids=["array", "no-schema-version"],
)
@pytest.mark.parametrize("via", ["omk", "json"])
def test_a_round_trip_refuses_a_legacy_file_as_convert_does(
    tmp_path: Path, legacy: Any, via: str
) -> None:
    # omk no longer reads it, so no round trip of it is exact: both commands say so alike
    path = write_json(tmp_path / "eval-samples.json", legacy)
    converted = runner.invoke(
        app, ["convert", str(path), str(tmp_path / "o.json"), "--from", "omk"]
    )
    tripped = runner.invoke(app, ["roundtrip", str(path), "--from", "omk", "--via", via])
    assert converted.exit_code == tripped.exit_code == 1
    for result in (converted, tripped):
        assert "vendor-format" in result.output and "exact" not in result.output
    finding = converted.output.split("not valid (")[1].split(");")[0]
    assert finding in tripped.output.replace("\n", "")
    assert "not round-tripped" in tripped.output and "--allow-invalid" not in tripped.output


# --- detection and the CLI ---------------------------------------------------------------------


def test_only_omk_documents_are_detected_as_omk(tmp_path: Path) -> None:
    omk_json = write_json(tmp_path / "a.json", BASE)
    blueprint_json = write_json(tmp_path / "b.json", document(row("r")))
    other_version = write_json(
        tmp_path / "c.json", {**BASE, "schemaVersion": "omk.eval-sample-set/v3"}
    )
    omk_yaml = tmp_path / "a.yaml"
    omk_yaml.write_text(yaml.safe_dump(BASE, sort_keys=False), encoding="utf-8")
    promptfoo_yaml = tmp_path / "tests.yaml"
    promptfoo_yaml.write_text("- vars: {q: hi}\n  assert:\n    - {type: equals, value: x}\n")
    assert resolve_codec(omk_json, None, reading=True).name == "omk"
    assert resolve_codec(omk_yaml, None, reading=True).name == "omk"
    assert resolve_codec(blueprint_json, None, reading=True).name == "json"
    assert resolve_codec(promptfoo_yaml, None, reading=True).name == "promptfoo"
    with pytest.raises(LookupError):
        resolve_codec(other_version, None, reading=True)
    assert REGISTRY["omk"].sniff(other_version, other_version.read_bytes()).ok is False


def test_cli_lists_omk_and_converts_both_ways(tmp_path: Path) -> None:
    listing = runner.invoke(app, ["formats", "--report", "json"])
    assert listing.exit_code == 0 and "omk" in [
        entry["name"] for entry in json.loads(listing.stdout)
    ]
    detail = json.loads(runner.invoke(app, ["formats", "omk", "--report", "json"]).stdout)
    assert detail["mapping"]["format"] == "omk"
    assert {"human-review", "final-state"} <= set(detail["mapping"]["excluded"])
    source = write_json(tmp_path / "set.json", every_oracle_type())
    out = tmp_path / "eval-samples.yaml"
    result = runner.invoke(app, ["convert", str(source), str(out), "--to", "omk"])
    assert result.exit_code == 0, result.output
    assert_omk_accepts(yaml.load(out.read_text(encoding="utf-8"), Loader=Yaml12Loader))
    back = tmp_path / "back.json"
    result = runner.invoke(app, ["convert", str(out), str(back)])
    assert result.exit_code == 0, result.output
    assert {r["id"] for r in json.loads(back.read_text(encoding="utf-8"))["rows"]} == {
        s["sample_id"] for s in read_document(out)["samples"]
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eval_sets())
def test_a_sample_set_written_sample_by_sample_is_the_whole_document(data: dict) -> None:
    """The export streams: the root keys, then each sample as it stands in the whole
    document. Read back, the file is exactly what writing that document at once gives."""
    import tempfile

    from blueprint.io import jsonvalues

    header = {key: value for key, value in data.items() if key != "rows"}
    with tempfile.TemporaryDirectory() as folder:
        for name in ("eval-samples.json", "eval-samples.yaml"):
            target = Path(folder) / name
            try:
                CODEC.write(
                    header,
                    iter(data["rows"]),
                    target,
                    WriteOptions(force=True, include_human_review=True, allow_empty=True),
                )
            except (EmptyExportRefused, EveryRowExcluded, InvalidRowForExport):
                assert not target.exists()
                continue
            written = target.read_bytes()
            whole = read_document(target)
            if name.endswith(".json"):
                assert written == jsonvalues.dumps(whole, indent=True) + b"\n"
            else:
                # a starter row's sample has a comment above it, which reading leaves out
                assert written.replace(b"# starter example, not validated gold\n", b"") == (
                    dump_yaml(whole)
                )
