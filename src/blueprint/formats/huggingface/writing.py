"""Writing a dataset folder: the card Blueprint writes, the data format, interleaved splits."""

from __future__ import annotations

from typing import Any, Final

from blueprint.formats.huggingface.card import _CARD_KEYS, CARD_FORMAT, dump_front_matter
from blueprint.formats.huggingface.columns import _Table
from blueprint.formats.huggingface.layout import DEFAULT_SPLIT
from blueprint.formats.mapping import NAMESPACE

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
    tables: dict[str, _Table],
    placed: dict[str, dict[str, str]],
    default: str,
) -> str:
    """The card: what the set's card said, the configs (one, or each subset the rows are
    in, the default first marked so) with their splits and features, and the set."""
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
    several = len(tables) > 1
    meta["configs"] = []
    for config, files in placed.items():
        entry: dict[str, Any] = {
            "config_name": config,
            "data_files": [{"split": split, "path": path} for split, path in files.items()],
        }
        if several and config == default:
            entry["default"] = True
        meta["configs"].append(entry)
    features = {config: table.features() for config, table in tables.items()}
    if not several:
        (only,) = features.values()
        if only is not None:
            meta["dataset_info"] = {"features": only}
    elif all(found is not None for found in features.values()):
        meta["dataset_info"] = [
            {"config_name": config, "features": found} for config, found in features.items()
        ]
    json_columns: Any = (
        next(iter(tables.values())).json
        if not several
        else {config: table.json for config, table in tables.items()}
    )
    meta[NAMESPACE] = {
        "format": CARD_FORMAT,
        "defaultSplit": DEFAULT_SPLIT,
        "jsonColumns": json_columns,
        "set": own,
    }
    body = ours.get("body") if isinstance(ours.get("body"), str) else None
    if body is None:
        body = _card_body(header, tables, placed)
    return "---\n" + dump_front_matter(meta) + "---\n" + body


def _card_body(
    header: dict[str, Any], tables: dict[str, _Table], placed: dict[str, dict[str, str]]
) -> str:
    name = header.get("name") if isinstance(header.get("name"), str) else "golden set"
    several = len(tables) > 1
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
        "| config | split | rows | file |" if several else "| split | rows | file |",
        "|---|---|---|---|" if several else "|---|---|---|",
    ]
    for config, table in tables.items():
        lines += [
            f"| {config} | {split} | {table.sizes[split]} | {path} |"
            if several
            else f"| {split} | {table.sizes[split]} | {path} |"
            for split, path in placed[config].items()
        ]
    counts: dict[str, int] = {}
    for table in tables.values():
        for oracle, count in table.oracle_types.items():
            counts[oracle] = counts.get(oracle, 0) + count
    starters = sum(table.starters for table in tables.values())
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
    json_columns = list(dict.fromkeys(n for table in tables.values() for n in table.json))
    if json_columns:
        listed = ", ".join(f"`{name}`" for name in json_columns)
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
        'cases = load_dataset("path/to/this/folder")'
        + ("  # the default config; name another as the second argument" if several else ""),
        "for row in cases[next(iter(cases))]:",
        '    case = json.loads(row["blueprint"])["case"]',
        '    print(row["id"], row["oracle_type"], case["expectedBehavior"])',
        "```",
        "",
    ]
    return "\n".join(lines)
