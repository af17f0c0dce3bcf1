"""Writing a dataset folder: the card Blueprint writes, the data format, interleaved splits."""

from __future__ import annotations

from typing import Any, Final

from blueprint.formats.huggingface.card import _CARD_KEYS, CARD_FORMAT, dump_front_matter
from blueprint.formats.huggingface.columns import _Table
from blueprint.formats.huggingface.layout import DATA_FOLDER, DEFAULT_SPLIT
from blueprint.formats.mapping import NAMESPACE
from blueprint.formats.vendor import ExportTally

#: the payload key saying where a row stood in the set, when splits interleave
_POSITION: Final = "at"


def _recorded_format(header: dict[str, Any]) -> str | None:
    """The data format of the folder a set was imported from, if it says."""
    extensions = header.get("extensions")
    ours = extensions.get("huggingface") if isinstance(extensions, dict) else None
    value = ours.get("dataFormat") if isinstance(ours, dict) else None
    return value if isinstance(value, str) else None


def _card_text(
    header: dict[str, Any],
    own: dict[str, Any],
    table: _Table,
    data_format: str,
    tally: ExportTally,
) -> str:
    extensions = header.get("extensions")
    ours = extensions.get("huggingface") if isinstance(extensions, dict) else None
    ours = ours if isinstance(ours, dict) else {}
    kept_card = ours.get("card")
    meta: dict[str, Any] = (
        {k: v for k, v in kept_card.items() if k not in _CARD_KEYS}
        if isinstance(kept_card, dict)
        else {}
    )
    name = header.get("name")
    if isinstance(name, str) and "pretty_name" not in meta:
        meta["pretty_name"] = name
    files = table.files(data_format)
    meta["configs"] = [
        {
            "config_name": "default",
            "data_files": [
                {"split": split, "path": f"{DATA_FOLDER}/{file_name}"}
                for split, file_name in files.items()
            ],
        }
    ]
    features = table.features()
    if features is not None:
        meta["dataset_info"] = {"features": features}
    meta[NAMESPACE] = {
        "format": CARD_FORMAT,
        "defaultSplit": DEFAULT_SPLIT,
        "jsonColumns": table.json,
        "set": own,
    }
    body = ours.get("body") if isinstance(ours.get("body"), str) else None
    if body is None:
        body = _card_body(header, table, files)
    return "---\n" + dump_front_matter(meta) + "---\n" + body


def _card_body(header: dict[str, Any], table: _Table, files: dict[str, str]) -> str:
    name = header.get("name") if isinstance(header.get("name"), str) else "golden set"
    lines = [f"# {name}", ""]
    description = header.get("description")
    if isinstance(description, str) and description.strip():
        lines += [description.strip(), ""]
    lines += [
        "A golden set: evaluation cases for an LLM application or agent. Every row declares",
        "its oracle type (the form of its expected answer), which decides how it may be graded.",
        "",
        "## Splits",
        "",
        "| split | rows | file |",
        "|---|---|---|",
    ]
    lines += [
        f"| {split} | {table.sizes[split]} | {DATA_FOLDER}/{file_name} |"
        for split, file_name in files.items()
    ]
    counts = table.oracle_types
    starters = table.starters
    if counts:
        lines += ["", "## Oracle types", "", "| oracle type | rows |", "|---|---|"]
        lines += [f"| {oracle} | {count} |" for oracle, count in sorted(counts.items())]
    lines += [
        "",
        "## Columns",
        "",
        "- `id`: the case's id; `input`: what the system under test receives; `expected`: the",
        "  expected answer, whose shape the oracle type fixes (empty for rubric and",
        "  behaviour-only cases).",
        "- `oracle_type`, `expected_behavior`, `provenance`, `case_family`, `evaluator`: the",
        "  case profile's main fields, to filter on.",
        "- `starter_example`: true for rows that are examples to adapt, not validated gold.",
        "- `human_review`: true for rows no automated grader may score.",
        "- `metadata`: the row's other metadata, as JSON text.",
        "- `blueprint`: the whole case profile (and what the other columns cannot say), as JSON",
        "  text; Blueprint reads it back to restore each row exactly.",
    ]
    if table.json:
        listed = ", ".join(f"`{name}`" for name in table.json)
        lines += [
            "",
            f"Columns holding JSON text (decode them with `json.loads`): {listed}. Arrow needs",
            "one type per column, so values whose types vary travel as JSON text.",
        ]
    if starters:
        lines += [
            "",
            f"**{starters} row(s) are starter examples**, not validated gold: review them before",
            "relying on a score.",
        ]
    lines += [
        "",
        "## Loading",
        "",
        "```python",
        "import json",
        "from datasets import load_dataset",
        "",
        'cases = load_dataset("path/to/this/folder")',
        "for row in cases[next(iter(cases))]:",
        '    case = json.loads(row["blueprint"])["case"]',
        '    print(row["id"], row["oracle_type"], case["expectedBehavior"])',
        "```",
        "",
    ]
    return "\n".join(lines)
