"""The mapping of checks to tools (docs/reference/checks.md) names every check type and every
tool, and each tool's kind is what its export of a row with a check does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from blueprint.convert import ConvertOptions, convert
from blueprint.core.checks import check_problem
from blueprint.core.model import CHECK_TYPES, Check
from blueprint.formats import REGISTRY
from blueprint.formats.checkmap import EXAMPLES, LEFT_OUT, PARTLY, TOOLS, table
from blueprint.formats.vendor.codec import SCORED_FORMATS

#: the tools a set is exported to for a runner, as the docs list them
RUNNERS = ("promptfoo", "deepeval", "langsmith", "braintrust", "inspect", "openai-evals")
OTHERS = ("omk", "apollia", "ome")
#: where each tool's export is written
TARGETS = {name: f"out-{name}.json" for name in ("deepeval", "ome")} | {
    "promptfoo": "tests.yaml",
    "langsmith": "examples.jsonl",
    "braintrust": "records.jsonl",
    "inspect": "samples.jsonl",
    "openai-evals": "samples.jsonl",
    "omk": "samples.yaml",
    "apollia": "suite.yaml",
}


def test_the_mapping_names_every_check_type_and_every_tool() -> None:
    assert tuple(TOOLS) == RUNNERS + OTHERS
    assert set(TOOLS) <= set(REGISTRY)
    # every runner with a Blueprint scorer is listed, and only promptfoo runs checks natively
    assert {name for name, tool in TOOLS.items() if tool.kind in ("native", "scorer")} == set(
        SCORED_FORMATS
    )
    assert {name for name, tool in TOOLS.items() if tool.kind == "native"} == {"promptfoo"}
    for tool in TOOLS.values():
        assert set(tool.types) <= set(CHECK_TYPES), tool.title
    lines = table()
    assert [line["type"] for line in lines] == list(CHECK_TYPES)
    for line in lines:
        assert set(line["tools"]) == set(TOOLS)
        assert all(line["tools"].values()) and line["description"]


@pytest.mark.parametrize("check_type", CHECK_TYPES)
def test_each_example_is_a_check_of_its_type(check_type: str) -> None:
    example = EXAMPLES[check_type]
    assert TypeAdapter(Check).validate_python(example).type == check_type
    assert check_problem(example) is None


def _row(row_id: str, oracle: str, expected: Any, **case: Any) -> dict[str, Any]:
    return {
        "id": row_id,
        "input": f"question {row_id}",
        "expected": expected,
        "metadata": {
            "case": {
                "caseId": row_id,
                "oracleType": oracle,
                "expectedBehavior": "b",
                "provenance": "expert-authored",
                "evaluator": "exact-or-programmatic",
                **case,
            }
        },
    }


#: an acceptable set defined by each example, and a row whose answer every tool can write
#: (a list of card ids, for ome) with every example in its gate
SATISFIED = [f"by-{check_type}" for check_type in CHECK_TYPES]
ROWS = [
    _row(f"by-{check_type}", "acceptable-set", {"satisfies": example})
    for check_type, example in EXAMPLES.items()
] + [_row("gated", "reference-answer", ["card-1"], checks=list(EXAMPLES.values()))]


def _lossy(tmp_path: Path, tool: str, graders: str = "vendor") -> dict[tuple[str, str], set[str]]:
    """What the export reports, by field and kind: the row ids."""
    source = tmp_path / "set.json"
    source.write_text(
        json.dumps({"schemaVersion": "blueprint.eval-set/v1", "name": "checks", "rows": ROWS}),
        encoding="utf-8",
    )
    options = ConvertOptions(target_format=tool, graders=graders, force=True)
    result = convert(source, tmp_path / TARGETS[tool], options)
    found: dict[tuple[str, str], set[str]] = {}
    for lossy in result.export.lossy:
        found.setdefault((lossy.field, lossy.kind), set()).update(lossy.row_ids)
    return found


@pytest.mark.parametrize("tool", list(TOOLS))
def test_each_tools_kind_is_what_its_export_does(tmp_path: Path, tool: str) -> None:
    kind = TOOLS[tool].kind
    found = _lossy(tmp_path, tool)
    reported = {field for field, _ in found}
    if kind == "native":
        assert not reported & {"expected.satisfies", "metadata.case.checks", "*"}, found
    elif kind == "scorer":
        assert found[("expected.satisfies", "weakened")] == set(SATISFIED)
        assert "gated" in found[("metadata.case.checks", "weakened")]
        again = _lossy(tmp_path, tool, graders="blueprint")
        assert not {field for field, _ in again} & {"expected.satisfies", "metadata.case.checks"}
    else:
        # the tool's own assertions: a check it has is written, a row defined by one it has
        # not is left out (or the check reported), and cells marked partly go either way
        left_out = found.get(("*", "excluded"), set()) | found.get(
            ("expected.satisfies", "weakened"), set()
        )
        for check_type in CHECK_TYPES:
            cell = TOOLS[tool].carries(check_type)
            if cell.startswith(LEFT_OUT):
                assert f"by-{check_type}" in left_out, (tool, check_type, found)
            elif not cell.startswith(PARTLY):
                assert f"by-{check_type}" not in left_out, (tool, check_type, found)
        # the gate holds every example, some of which the tool has not
        assert "gated" in found.get(("*", "excluded"), set()) | set().union(
            *(ids for (field, _), ids in found.items() if field == "metadata.case.checks")
        )
