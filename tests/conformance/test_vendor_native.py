"""Vendor files go through Blueprint and back, and the vendor's own loader sees the same data.

Real public files (tests/fixtures/native/*/public, each folder naming its source) and files
full of unknown keys are imported, exported back to their own format, and loaded with the
vendor's SDK on both sides: every golden, example or record must load to the same object.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors, vendor

from blueprint.convert import ConvertOptions, convert

pytestmark = [
    pytest.mark.conformance,
    # langsmith warns that outputs is deprecated for reference_outputs; both are read
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

NATIVE = Path(__file__).parents[1] / "fixtures" / "native"


def back_through_blueprint(path: Path, fmt: str, folder: Path) -> Path:
    imported = folder / "imported.json"
    convert(path, imported, ConvertOptions(source_format=fmt))
    exported = folder / f"exported{path.suffix}"
    convert(imported, exported, ConvertOptions(target_format=fmt))
    return exported


def files(fmt: str, *suffixes: str) -> list[Path]:
    return [
        path
        for path in sorted((NATIVE / fmt).rglob("*"))
        if path.suffix in suffixes and path.is_file()
    ]


# --- DeepEval ----------------------------------------------------------------------------------


def deepeval_goldens(path: Path) -> list[dict[str, Any]]:
    dataset_module = vendor("deepeval.dataset")
    dataset = dataset_module.EvaluationDataset()
    loader = {
        ".json": dataset.add_goldens_from_json_file,
        ".jsonl": dataset.add_goldens_from_jsonl_file,
        ".csv": dataset.add_goldens_from_csv_file,
    }[path.suffix]
    loader(str(path))
    goldens = dataset.goldens or getattr(dataset, "conversational_goldens", [])
    found = []
    for golden in goldens:
        data = golden.model_dump(mode="json")
        metadata = data.get("additional_metadata")
        if isinstance(metadata, dict):
            # Blueprint's payload rides along in additional_metadata; the vendor's data is
            # everything else
            metadata.pop("blueprint", None)
            data["additional_metadata"] = metadata or None
        found.append(data)
    return found


#: DeepEval's own example of records answered under Braintrust's `expected`, which DeepEval's
#: loader drops: named as DeepEval, Blueprint refuses it rather than lose the answers
FOREIGN_ANSWERS = NATIVE / "deepeval" / "public" / "deepeval-example-chatbot-evaluation"


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in files("deepeval", ".json")
        if "legacy" not in str(p) and not p.is_relative_to(FOREIGN_ANSWERS)
    ],
    ids=lambda p: str(p.relative_to(NATIVE)),
)
def test_deepeval_loads_the_same_goldens_after_a_round_trip(path: Path, tmp_path: Path) -> None:
    before = deepeval_goldens(path)
    after = deepeval_goldens(back_through_blueprint(path, "deepeval", tmp_path))
    assert after == before


def test_answers_deepeval_would_drop_are_not_read_as_deepeval(tmp_path: Path) -> None:
    from blueprint.core.errors import UnknownFormatError

    path = FOREIGN_ANSWERS / "dataset.json"
    dropped = [golden for golden in deepeval_goldens(path) if golden.get("expected_output")]
    assert dropped == []  # DeepEval's loader keeps none of the answers
    with pytest.raises(UnknownFormatError):
        convert(path, tmp_path / "set.json", ConvertOptions(source_format="deepeval"))
    result = convert(path, tmp_path / "set.json", ConvertOptions(source_format="braintrust"))
    assert result.export.rows == len(json.loads(path.read_text(encoding="utf-8")))


def test_deepeval_jsonl_export_loads_with_lists_intact(tmp_path: Path) -> None:
    source = NATIVE / "deepeval" / "public" / "deepeval-test-confident-goldens" / "goldens.json"
    imported = tmp_path / "imported.json"
    convert(source, imported, ConvertOptions(source_format="deepeval"))
    exported = tmp_path / "goldens.jsonl"
    convert(imported, exported, ConvertOptions(target_format="deepeval"))
    assert deepeval_goldens(exported) == deepeval_goldens(source)


# --- LangSmith ---------------------------------------------------------------------------------


def langsmith_examples(path: Path) -> list[dict[str, Any]]:
    schemas = vendor("langsmith.schemas")
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    else:
        document = json.loads(path.read_text(encoding="utf-8"))
        records = document["examples"] if isinstance(document, dict) else document
    found = []
    for record in records:
        data = schemas.ExampleCreate.model_validate(record).model_dump(mode="json")
        data.pop("created_at", None) if "created_at" not in record else None
        metadata = data.get("metadata")
        if isinstance(metadata, dict):
            metadata.pop("blueprint", None)
            data["metadata"] = metadata or None
        found.append(data)
    return found


@pytest.mark.parametrize(
    "path", files("langsmith", ".json", ".jsonl"), ids=lambda p: str(p.relative_to(NATIVE))
)
def test_langsmith_reads_the_same_examples_after_a_round_trip(path: Path, tmp_path: Path) -> None:
    before = langsmith_examples(path)
    after = langsmith_examples(back_through_blueprint(path, "langsmith", tmp_path))
    assert after == before


# --- Braintrust --------------------------------------------------------------------------------

#: fields of a stored record that EvalCase does not take (Braintrust's server adds them)
SERVER_ONLY = {
    "project_id",
    "dataset_id",
    "span_id",
    "root_span_id",
    "is_root",
    "_pagination_key",
    "comments",
    "audit_data",
    "facets",
    "classifications",
}


def braintrust_cases(path: Path) -> list[Any]:
    braintrust = vendor("braintrust")
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    else:
        records = json.loads(path.read_text(encoding="utf-8"))
    cases = []
    for record in records:
        record = {k: v for k, v in record.items() if k not in SERVER_ONLY}
        if "output" in record and "expected" not in record:
            record["expected"] = record.pop("output")
        record = {k: v for k, v in record.items() if not k.startswith("future")}
        metadata = record.get("metadata")
        if isinstance(metadata, dict):
            metadata = {
                k: v for k, v in metadata.items() if k != "blueprint" or not isinstance(v, dict)
            }
            record["metadata"] = metadata or None
        case = braintrust.EvalCase(**record)
        cases.append((case.input, case.expected, case.metadata, case.tags, case.id))
    return cases


@pytest.mark.parametrize(
    "path",
    [p for p in files("braintrust", ".json", ".jsonl") if "unknown-keys" not in p.name],
    ids=lambda p: str(p.relative_to(NATIVE)),
)
def test_braintrust_builds_the_same_cases_after_a_round_trip(path: Path, tmp_path: Path) -> None:
    before = braintrust_cases(path)
    after = braintrust_cases(back_through_blueprint(path, "braintrust", tmp_path))
    assert after == before
