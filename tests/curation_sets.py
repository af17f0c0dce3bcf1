"""A small set with something for every curation command, written in any canonical format."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from blueprint.formats import REGISTRY, WriteOptions
from conftest import row

SUFFIXES = (".json", ".jsonl", ".csv")

FAMILIES = [
    {
        "id": "lookup",
        "title": "Lookup",
        "oracleType": "reference-answer",
        "evaluator": "exact-or-programmatic",
        "severity": "major",
    },
    {"id": "tone", "oracleType": "rubric", "evaluator": "rubric-human", "severity": "minor"},
    {"id": "spare", "oracleType": "acceptable-set"},  # a family with no rows
]


def imported_row(row_id: str) -> dict[str, Any]:
    """A row as a vendor import leaves it: provenance imported, derived values recorded."""
    data = row(row_id, provenance="imported")
    data["metadata"]["case"]["extensions"] = {
        "blueprint-import": {
            "format": "braintrust",
            "derived": {
                "metadata.case.oracleType": "inferred from the shape of expected",
                "metadata.case.expectedBehavior": "Braintrust records carry no behaviour",
            },
        }
    }
    return data


def curation_rows() -> list[dict[str, Any]]:
    rows = [
        row("a", caseFamily="lookup", evaluator="exact-or-programmatic"),
        row("b", caseFamily="lookup"),  # inherits the family's evaluator
        row("c", "rubric", caseFamily="tone", evaluator="rubric-human", evaluationCriteria=["x"]),
        row("d", provenance="starter-example"),
        imported_row("e"),
    ]
    rows[0]["metadata"]["source"] = "log"
    return rows


def header(**fields: Any) -> dict[str, Any]:
    return {
        "schemaVersion": "blueprint.eval-set/v1",
        "name": "curation",
        "caseFamilies": FAMILIES,
        **fields,
    }


def write_set(
    path: Path, rows: list[dict[str, Any]], set_header: dict[str, Any] | None = None
) -> Path:
    codec = REGISTRY[path.suffix.lstrip(".")]
    codec.write(set_header or header(), iter(rows), path, WriteOptions(force=True))
    return path


def curation_set(folder: Path, suffix: str, name: str = "set") -> Path:
    """The set, in the format ``suffix`` names; a CSV with its columns in an order a person
    chose in a spreadsheet (metadata first, provenance before the id)."""
    path = write_set(folder / f"{name}{suffix}", curation_rows())
    if suffix == ".csv":
        reorder_columns(path, ["metadata.source", "case.provenance"])
    return path


def reorder_columns(path: Path, first: list[str]) -> None:
    records = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    names = records[0]
    order = [names.index(name) for name in first] + [
        i for i, name in enumerate(names) if name not in first
    ]
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows([[r[i] for i in order] for r in records])
    path.write_text(out.getvalue(), encoding="utf-8", newline="")


def rows_of(path: Path) -> dict[str, dict[str, Any]]:
    codec = REGISTRY[path.suffix.lstrip(".")]
    return {item.data["id"]: item.data for item in codec.open(path).rows}


def header_of(path: Path) -> dict[str, Any] | None:
    return REGISTRY[path.suffix.lstrip(".")].open(path).header


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in the folder, hidden ones included, byte for byte."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
