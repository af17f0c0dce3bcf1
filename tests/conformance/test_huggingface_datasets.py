"""The real ``datasets`` library loads our Hugging Face folders, offline, as the card says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors, vendor

from blueprint.formats import REGISTRY, WriteOptions

pytestmark = pytest.mark.conformance

ROOT = Path(__file__).parents[2]
PUBLIC = ROOT / "tests" / "fixtures" / "native" / "huggingface" / "public"

#: loads a folder with datasets.load_dataset and prints every split's features and rows
LOADER = """
import json, sys
import datasets
loaded = datasets.load_dataset(sys.argv[1])
print(json.dumps({
    name: {"features": split.features.to_dict(), "rows": split.to_list()}
    for name, split in loaded.items()
}, default=str))
"""


#: loads every config of a folder and prints each one's splits and rows
EVERY_CONFIG = """
import json, sys
import datasets
print(json.dumps({
    config: {name: split.to_list() for name, split in datasets.load_dataset(
        sys.argv[1], config
    ).items()}
    for config in datasets.get_dataset_config_names(sys.argv[1])
}, default=str))
"""


def load(folder: Path, home: Path, loader: str = LOADER) -> dict[str, Any]:
    """What datasets.load_dataset(folder) gives, run offline with an empty cache."""
    vendor("datasets")
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(home),
        "HF_DATASETS_CACHE": str(home / "datasets"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", loader, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def profile(row_id: str, oracle: str, **more: Any) -> dict[str, Any]:
    return {
        "caseId": row_id,
        "oracleType": oracle,
        "expectedBehavior": f"behaves as {row_id} says",
        "provenance": "expert-authored",
        **more,
    }


def row(row_id: str, oracle: str, value: Any, expected: Any = None, **metadata: Any) -> dict:
    data: dict[str, Any] = {"id": row_id, "input": value}
    if expected is not None:
        data["expected"] = expected
    data["metadata"] = {"case": profile(row_id, oracle), **metadata}
    return data


ROWS = [
    row("text", "reference-answer", "What is 2+2?", "4", split="train"),
    row("object", "reference-answer", {"question": "refund?", "order": 42}, {"ok": True}),
    row("number", "reference-answer", "How many?", 3, split="dev", source=["a", 1]),
    row("null-answer", "reference-answer", [{"role": "user", "content": "hi"}], None),
    row("set", "acceptable-set", "yes or no?", {"acceptable": ["yes", 1, None]}, split="train"),
    row(
        "graded",
        "acceptable-set",
        "grade me",
        {"graded": [{"value": "a", "grade": 1}, {"value": "b", "grade": 0.5}]},
        split="hold-out 2",
    ),
    {
        "id": "rubric",
        "input": "write kindly",
        "metadata": {
            "case": profile("rubric", "rubric", evaluationCriteria=["kind", "short"]),
            "split": "dev",
        },
    },
    row(
        "tools",
        "expected-tool-calls",
        "refund order 7",
        {
            "calls": [{"name": "refund", "arguments": {"order": 7}}],
            "order": "any",
            "forbidden": [{"name": "delete"}],
        },
    ),
    row(
        "state",
        "expected-final-state",
        "make the file",
        {
            "checks": [
                {"kind": "file_exists", "path": "out.txt"},
                {"kind": "command", "run": "true", "exitCode": 0},
            ]
        },
        split="train",
    ),
    {
        "id": "behaviour",
        "input": "say nothing harmful",
        "metadata": {
            "case": profile("behaviour", "expected-behavior-only", provenance="starter-example"),
        },
    },
]
# the null answer is a reference answer of JSON null
ROWS[3]["expected"] = None
HEADER = {
    "schemaVersion": "blueprint.eval-set/v1",
    "name": "hf-conformance",
    "description": "every oracle type, values of every type",
}
SPLITS = {"train", "test", "dev", "hold_out_2"}


def export(folder: Path, data_format: str) -> Any:
    return REGISTRY["huggingface"].write(
        HEADER,
        iter(ROWS),
        folder,
        WriteOptions(include_human_review=True, data_format=data_format),
    )


def split_of(data: dict[str, Any]) -> str:
    split = data["metadata"].get("split", "test")
    return {"hold-out 2": "hold_out_2"}.get(split, split)


@pytest.mark.parametrize("data_format", ["jsonl", "parquet"])
def test_datasets_loads_every_split_with_the_declared_features(
    data_format: str, tmp_path: Path
) -> None:
    if data_format == "parquet":
        vendor("pyarrow")
    folder = tmp_path / "golden"
    result = export(folder, data_format)
    assert result.rows == len(ROWS)
    loaded = load(folder, tmp_path / "hf-home")
    assert set(loaded) == SPLITS
    expected_counts = {split: sum(split_of(r) == split for r in ROWS) for split in SPLITS}
    assert {name: len(split["rows"]) for name, split in loaded.items()} == expected_counts
    for split in loaded.values():
        features = split["features"]
        assert {name: spec["dtype"] for name, spec in features.items()} == {
            "id": "string",
            "input": "string",
            "expected": "string",
            "oracle_type": "string",
            "expected_behavior": "string",
            "provenance": "string",
            "case_family": "string",
            "evaluator": "string",
            "starter_example": "bool",
            "human_review": "bool",
            "metadata": "string",
            "blueprint": "string",
        }
    by_id = {r["id"]: (name, r) for name, split in loaded.items() for r in split["rows"]}
    for original in ROWS:
        split, got = by_id[original["id"]]
        assert split == split_of(original)
        # input and expected vary in type, so both travel as JSON text
        assert json.loads(got["input"]) == original["input"]
        if "expected" in original:
            assert json.loads(got["expected"]) == original["expected"]
        else:
            assert got["expected"] is None
        case = original["metadata"]["case"]
        assert got["oracle_type"] == case["oracleType"]
        assert json.loads(got["blueprint"])["case"] == case
        assert got["starter_example"] is (case["provenance"] == "starter-example")
        assert got["human_review"] is (case["oracleType"] == "expected-behavior-only")
    assert json.loads(by_id["number"][1]["metadata"]) == {"source": ["a", 1]}


def test_text_columns_stay_text_when_every_value_is_text(tmp_path: Path) -> None:
    rows = [r for r in ROWS if isinstance(r["input"], str) and isinstance(r.get("expected"), str)]
    folder = tmp_path / "plain"
    REGISTRY["huggingface"].write(HEADER, iter(rows), folder, WriteOptions())
    loaded = load(folder, tmp_path / "hf-home")
    got = loaded["train"]["rows"][0]
    assert (got["input"], got["expected"]) == ("What is 2+2?", "4")


@pytest.mark.parametrize("data_format", ["jsonl", "parquet"])
def test_a_public_dataset_reexported_loads_as_the_original(
    data_format: str, tmp_path: Path
) -> None:
    """A folder someone published, imported and exported again: datasets reads the same
    splits, columns and values (plus the blueprint column)."""
    if data_format == "parquet":
        vendor("pyarrow")
    for source in sorted(path for path in PUBLIC.iterdir() if path.is_dir()):
        codec = REGISTRY["huggingface"]
        opened = codec.open(source)
        rows = [item.data for item in opened.rows]
        target = tmp_path / f"{source.name}-{data_format}"
        codec.write(
            opened.header or {"name": source.name},
            iter(rows),
            target,
            WriteOptions(include_human_review=True, data_format=data_format),
        )
        before = load(source, tmp_path / "hf-home")
        after = load(target, tmp_path / "hf-home")
        assert list(after) == list(before), source.name
        for name, split in before.items():
            again = [{k: v for k, v in r.items() if k != "blueprint"} for r in after[name]["rows"]]
            assert again == split["rows"], (source.name, name)


@pytest.mark.parametrize("folder", sorted(p for p in PUBLIC.iterdir() if p.is_dir()), ids=str)
def test_every_config_is_read_and_written_back_as_datasets_loads_it(
    folder: Path, tmp_path: Path
) -> None:
    """Every record of every config datasets finds is a row (none skipped unsaid), and the
    export holds the same configs, with the same rows in each."""
    codec = REGISTRY["huggingface"]
    opened = codec.open(folder)
    rows = [item.data for item in opened.rows]
    before = load(folder, tmp_path / "hf-home", EVERY_CONFIG)
    held = sum(len(split) for splits in before.values() for split in splits.values())
    assert opened.records is not None
    assert opened.records.read == opened.records.rows == len(rows) == held
    target = tmp_path / folder.name
    codec.write(opened.header or {"name": folder.name}, iter(rows), target, WriteOptions())
    after = load(target, tmp_path / "hf-home", EVERY_CONFIG)
    if len(before) == 1:  # one config: written as datasets' default, whatever it was named
        before, after = list(before.values()), list(after.values())
    else:
        assert list(after) == list(before)
        before, after = list(before.values()), list(after.values())
    for was, now in zip(before, after, strict=True):
        assert list(now) == list(was)
        for name, split in was.items():
            again = [{k: v for k, v in r.items() if k != "blueprint"} for r in now[name]]
            assert again == split, (folder.name, name)
