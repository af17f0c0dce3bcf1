"""The OpenAI Evals codec: registry samples JSONL ({"input", "ideal"}), written and read back."""

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
from blueprint.formats import REGISTRY, WriteOptions, resolve_codec
from blueprint.formats.mapping import load_mapping
from blueprint.validation.validate import validate_file
from conftest import EXAMPLES, FIXTURES, row
from strategies import _with_extras, awkward_text, extra_objects, json_values

CODEC = REGISTRY["openai-evals"]
PUBLIC = FIXTURES / "native" / "openai-evals" / "public"
AWKWARD = FIXTURES / "awkward" / "awkward.json"
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "t"}
NATIVE_RECORD = {"input": "q", "ideal": "x"}
EXCLUDED = load_mapping("openai-evals").excluded


def awkward_rows() -> list[dict[str, Any]]:
    return list(data_rows(REGISTRY["json"].open(AWKWARD)))


def write(path: Path, rows: list[dict[str, Any]], **options: Any) -> Any:
    return CODEC.write(HEADER, iter(rows), path, WriteOptions(**options))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def left_out(result: Any) -> dict[str, set[str]]:
    kinds = {reason: kind for kind, reason in EXCLUDED.items()}
    return {
        kinds[lossy.reason]: set(lossy.row_ids)
        for lossy in result.lossy
        if lossy.kind == "excluded"
    }


def test_each_oracle_type_lands_where_the_registry_evals_read_it(tmp_path: Path) -> None:
    target = tmp_path / "samples.jsonl"
    result = write(target, awkward_rows(), include_human_review=True)
    samples = {s["metadata"]["blueprint"]["id"]: s for s in lines(target)}
    assert samples["ref-pipes-and-quotes"]["ideal"] == "a | b"
    assert samples["ref-number-vs-string"]["ideal"] == "1"  # Match needs text
    assert samples["acc-enumerated"]["ideal"] == ["Paris", "paris", "", "null", "1"]
    assert samples["acc-graded"]["ideal"] == ["-5"]
    rubric = next(r for r in awkward_rows() if r["id"] == "rubric-criteria")
    assert samples["rubric-criteria"]["criteria"] == "\n".join(
        rubric["metadata"]["case"]["evaluationCriteria"]
    )
    assert "ideal" not in samples["rubric-criteria"]
    # chat messages go as they are; an object input as its JSON text
    assert isinstance(samples["rubric-criteria"]["input"], list)
    assert isinstance(samples["ref-json-looking"]["input"], str)
    assert left_out(result)["no-basic-eval"] == {"tools-order", "state-checks"}


def test_the_report_says_match_is_a_prefix_check_and_includes_a_substring_check(
    tmp_path: Path,
) -> None:
    rows = [row("answer", expected="Paris"), row("empty", expected="")]
    result = write(tmp_path / "samples.jsonl", rows)
    weakened = {
        lossy.reason: set(lossy.row_ids) for lossy in result.lossy if lossy.kind == "weakened"
    }
    prefix = next(reason for reason in weakened if "prefix check" in reason)
    assert "substring check" in prefix and weakened[prefix] == {"answer"}
    assert any("pass anything" in r and ids == {"empty"} for r, ids in weakened.items())


def test_rubric_rows_carry_criteria_and_need_them(tmp_path: Path) -> None:
    rows = [
        row(
            "judged",
            "rubric",
            evaluator="llm-judge",
            evaluationCriteria=["Polite", "Cites the policy"],
        ),
        row("no-criteria", "rubric", evaluator="llm-judge"),
    ]
    target = tmp_path / "samples.jsonl"
    result = write(target, rows)
    [sample] = lines(target)
    assert sample["criteria"] == "Polite\nCites the policy"
    assert "ideal" not in sample
    assert left_out(result) == {"no-criteria": {"no-criteria"}}
    assert [r["id"] for r in (item.data for item in CODEC.open(target).rows)] == ["judged"]


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_other_forms_are_refused_with_the_reason(suffix: str, tmp_path: Path) -> None:
    target = tmp_path / f"samples{suffix}"
    result = CliRunner().invoke(
        app,
        ["convert", str(EXAMPLES / "support-refunds.json"), str(target), "--to", "openai-evals"],
    )
    assert result.exit_code == 2 and "write .jsonl" in result.stderr
    assert not target.exists()


def test_the_shared_sets_round_trip_exactly_what_they_declare(tmp_path: Path) -> None:
    for source in (
        AWKWARD,
        EXAMPLES / "support-refunds.json",
        FIXTURES / "awkward" / "awkward.csv",
    ):
        result = roundtrip(source, "openai-evals")
        assert result.exact, (result.undeclared, result.unobserved)


# --- reading registry samples ------------------------------------------------------------------

PUBLIC_FILES = sorted(PUBLIC.rglob("*.jsonl"))


@pytest.mark.parametrize("path", PUBLIC_FILES, ids=lambda p: str(p.relative_to(PUBLIC)))
def test_registry_samples_are_detected_and_go_back_as_they_came(path: Path, tmp_path: Path) -> None:
    assert resolve_codec(path, None, reading=True).name == "openai-evals"
    result = roundtrip(path, "openai-evals", source_format="openai-evals")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []
    imported = tmp_path / "imported.json"
    convert(path, imported, ConvertOptions(source_format="openai-evals"))
    report = validate_file(imported)
    assert report.valid
    assert "derived-value" in {issue.code for issue in report.issues}
    # written back through Blueprint, the samples are the registry's, key for key
    exported = tmp_path / "exported.jsonl"
    convert(imported, exported, ConvertOptions(target_format="openai-evals"))
    assert [CODEC.without_payload(s) for s in lines(exported)] == lines(path)


def test_import_infers_the_oracle_type(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    records = [
        {"input": "2+2=", "ideal": "4"},
        {"input": [{"role": "user", "content": "Capital?"}], "ideal": ["Paris", "paris"]},
        {"input": "Write politely", "criteria": "Is it polite?", "completion": "Hi"},
        {"input": "Anything", "note": "no answer"},
        {"input": "Count", "ideal": 3},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    rows = [item.data for item in CODEC.open(path).rows]
    assert [r["id"] for r in rows] == [f"sample-{n}" for n in range(1, 6)]
    assert [r["metadata"]["case"]["oracleType"] for r in rows] == [
        "reference-answer",
        "acceptable-set",
        "rubric",
        "expected-behavior-only",
        "reference-answer",
    ]
    assert rows[1]["expected"] == {"acceptable": ["Paris", "paris"]}
    assert rows[2]["metadata"]["case"]["evaluationCriteria"] == ["Is it polite?"]
    assert rows[2]["metadata"]["case"]["extensions"]["openai-evals"]["record"] == {
        "completion": "Hi"
    }
    assert rows[4]["expected"] == 3
    derived = rows[4]["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]
    assert "expected" in derived


def test_a_bad_line_is_unreadable_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text('{"input": "a", "ideal": "b"}\n{"input": \n[1]\n', "utf-8")
    items = list(CODEC.open(path).rows)
    assert [getattr(item, "line", None) for item in items] == [1, 2, 3]
    assert [type(item).__name__ for item in items] == [
        "SourceRow",
        "UnreadableRow",
        "UnreadableRow",
    ]
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2


samples = _with_extras(
    st.fixed_dictionaries(
        {"input": st.one_of(awkward_text, json_values)},
        optional={
            "ideal": st.one_of(awkward_text, st.lists(awkward_text, max_size=3), json_values),
            "criteria": awkward_text,
            "metadata": st.one_of(st.none(), extra_objects),
            "completion": awkward_text,
        },
    )
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(records=st.lists(samples, min_size=1, max_size=4))
def test_any_native_samples_go_back_as_they_came(
    records: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    result = roundtrip(path, "openai-evals", source_format="openai-evals")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []


# --- what every vendor codec promises ------------------------------------------------------------


def test_rows_inherit_their_family_evaluator(tmp_path: Path) -> None:
    header = {
        **HEADER,
        "caseFamilies": [
            {"id": "expert", "oracleType": "reference-answer", "evaluator": "human-expert"},
            {"id": "exact", "oracleType": "reference-answer", "evaluator": "exact-or-programmatic"},
        ],
    }
    rows = [row("judged", caseFamily="expert"), row("checked", caseFamily="exact")]
    target = tmp_path / "out.jsonl"
    result = CODEC.write(header, iter(rows), target, WriteOptions())
    assert {i for lossy in result.lossy if lossy.field == "*" for i in lossy.row_ids} == {"judged"}
    assert result.rows == 1
    included = CODEC.write(
        header, iter(rows), target, WriteOptions(force=True, include_human_review=True)
    )
    assert included.rows == 2


def test_an_inherited_evaluator_travels_on_the_row(tmp_path: Path) -> None:
    from conftest import document, write_json

    family = {"id": "judged", "oracleType": "rubric", "evaluator": "llm-judge"}
    data = row("r", "rubric", caseFamily="judged", evaluationCriteria=["polite"])
    source = write_json(tmp_path / "s.json", document(data, caseFamilies=[family]))
    result = roundtrip(source, CODEC.name)
    assert result.exact, (result.undeclared, result.unobserved)
    moved = [i for i in result.export.lossy if i.field == "metadata.case.evaluator"]
    assert moved and moved[0].row_ids == ("r",)


def test_criteria_outside_rubric_rows_are_reported_weakened(tmp_path: Path) -> None:
    judged = row("r1", evaluator="llm-judge", evaluationCriteria=["must show working"])
    listed = row("r2", "acceptable-set", expected={"acceptable": ["a"]}, evaluationCriteria=["x"])
    result = CODEC.write(HEADER, iter([judged, listed]), tmp_path / "o.jsonl", WriteOptions())
    weakened = {
        i
        for lossy in result.lossy
        if lossy.field == "metadata.case.evaluationCriteria"
        for i in lossy.row_ids
    }
    assert weakened == {"r1", "r2"}


def test_an_expected_value_of_the_wrong_shape_stops_the_export(tmp_path: Path) -> None:
    from blueprint.formats.vendor import InvalidRowForExport

    bad = row("t", "expected-tool-calls", expected={"calls": [{"name": "refund"}]})
    with pytest.raises(InvalidRowForExport):
        CODEC.write(HEADER, iter([bad]), tmp_path / "o.jsonl", WriteOptions())
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("metadata", ["free text", 5, ["a"], {"case": "x"}, {"blueprint": 1}])
def test_vendor_metadata_of_any_shape_goes_back_as_it_came(tmp_path: Path, metadata: Any) -> None:
    record = {**NATIVE_RECORD, "metadata": metadata}
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = roundtrip(path, CODEC.name, source_format=CODEC.name)
    assert result.exact and result.vendor_changes == [], (result.undeclared, result.vendor_changes)
    imported = tmp_path / "set.json"
    convert(path, imported, ConvertOptions(source_format=CODEC.name))
    assert validate_file(imported).valid


# --- the registry YAML that runs a samples file ----------------------------------------------


def _registry(tmp_path: Path, specs: dict[str, dict[str, Any]], ideals: list[Any]) -> Path:
    """A samples file under a registry's data folder, and the given YAML files in evals."""
    samples = tmp_path / "registry" / "data" / "capitals" / "samples.jsonl"
    samples.parent.mkdir(parents=True)
    samples.write_text(
        "".join(json.dumps({"input": f"q{n}", "ideal": i}) + "\n" for n, i in enumerate(ideals)),
        "utf-8",
    )
    evals = tmp_path / "registry" / "evals"
    evals.mkdir()
    for name, spec in specs.items():
        (evals / name).write_text(json.dumps(spec), "utf-8")
    return samples


def _spec(eval_class: str, **args: Any) -> dict[str, Any]:
    return {
        "capitals": {"id": "capitals.dev.v0"},
        "capitals.dev.v0": {
            "class": f"evals.elsuite.basic.{eval_class}",
            "args": {"samples_jsonl": "capitals/samples.jsonl", **args},
        },
    }


def test_samples_the_registry_runs_with_match_or_includes_import_as_their_checks(
    tmp_path: Path,
) -> None:
    samples = _registry(
        tmp_path, {"capitals.yaml": _spec("match:Match")}, ["Paris", ["Yes", "Sure"], 3, []]
    )
    rows = [item.data for item in CODEC.open(samples).rows]
    assert [row["expected"] for row in rows[:2]] == [
        {"satisfies": {"type": "starts-with", "value": "Paris"}},
        {
            "satisfies": {
                "type": "any",
                "checks": [
                    {"type": "starts-with", "value": "Yes"},
                    {"type": "starts-with", "value": "Sure"},
                ],
            }
        },
    ]
    assert {row["metadata"]["case"]["oracleType"] for row in rows[:2]} == {"acceptable-set"}
    derived = rows[0]["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]
    assert "capitals.yaml" in derived["metadata.case.oracleType"]
    # an ideal Match does not read as text keeps today's reading
    assert rows[2]["expected"] == 3 and "expected" not in rows[3]
    # the samples go back as they came, through the canonical set too
    result = roundtrip(samples, "openai-evals", source_format="openai-evals")
    assert result.exact, (result.undeclared, result.unobserved)
    imported = tmp_path / "imported.json"
    convert(samples, imported, ConvertOptions(source_format="openai-evals"))
    assert validate_file(imported).valid
    exported = tmp_path / "exported.jsonl"
    convert(imported, exported, ConvertOptions(target_format="openai-evals"))
    assert [CODEC.without_payload(s) for s in lines(exported)] == lines(samples)
    # read again outside the registry, the rows are what Blueprint wrote
    again = [item.data for item in CODEC.open(exported).rows]
    assert [r["expected"] for r in again[:2]] == [r["expected"] for r in rows[:2]]


def test_includes_with_ignore_case_imports_as_a_lowercased_contains(tmp_path: Path) -> None:
    spec = _spec("includes:Includes", ignore_case=True)
    samples = _registry(tmp_path, {"capitals.yml": spec}, ["Paris"])
    [item] = CODEC.open(samples).rows
    assert item.data["expected"] == {
        "satisfies": {"type": "contains", "value": "Paris", "normalize": ["lowercase"]}
    }


@pytest.mark.parametrize(
    "specs",
    [
        # FuzzyMatch strips punctuation and articles, which no check does
        {"capitals.yaml": _spec("fuzzy_match:FuzzyMatch")},
        # two entries run the file with classes that disagree
        {"a.yaml": _spec("match:Match"), "b.yaml": _spec("includes:Includes")},
        # the entry names another file
        {"other.yaml": {"x": {"class": "evals.elsuite.basic.match:Match", "args": {}}}},
        {},
    ],
)
def test_samples_with_no_one_exact_class_import_as_before(
    tmp_path: Path, specs: dict[str, Any]
) -> None:
    samples = _registry(tmp_path, specs, ["Paris", ["Yes", "Sure"]])
    rows = [item.data for item in CODEC.open(samples).rows]
    assert [row["expected"] for row in rows] == ["Paris", {"acceptable": ["Yes", "Sure"]}]


@pytest.mark.parametrize(
    ("satisfies", "ideal", "named"),
    [
        ({"type": "starts-with", "value": "Yes"}, "Yes", "Match"),
        ({"type": "contains", "value": "grub"}, "grub", "Includes"),
        (
            {"type": "contains", "value": "grub", "normalize": ["lowercase"]},
            "grub",
            "Includes (ignore_case)",
        ),
        (
            {"type": "any", "checks": [{"type": "starts-with", "value": v} for v in "ab"]},
            ["a", "b"],
            "Match",
        ),
        # what no class decides exactly: an empty ideal list, as before
        ({"type": "starts-with", "value": "Yes", "normalize": ["trim"]}, [], None),
        ({"type": "ends-with", "value": "."}, [], None),
        (
            {
                "type": "any",
                "checks": [
                    {"type": "starts-with", "value": "a"},
                    {"type": "contains", "value": "b"},
                ],
            },
            [],
            None,
        ),
    ],
)
def test_an_acceptable_set_by_a_check_a_class_decides_exports_its_texts(
    tmp_path: Path, satisfies: dict[str, Any], ideal: Any, named: str | None
) -> None:
    written = row("by-check", "acceptable-set", expected={"satisfies": satisfies})
    target = tmp_path / "samples.jsonl"
    header = {"schemaVersion": "blueprint.eval-set/v1", "name": "checks"}
    result = CODEC.write(header, iter([written]), target, WriteOptions())
    [sample] = lines(target)
    assert sample["ideal"] == ideal
    [weakened] = [item for item in result.lossy if item.field == "expected.satisfies"]
    assert (named is not None and f"which {named} decides" in weakened.reason) or (
        named is None and "no OpenAI Evals class applies" in weakened.reason
    )
