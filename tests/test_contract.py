"""The lossy-report contract, over every codec in the registry: what an export declares it
drops is exactly what comes back different after importing it, no more and no fewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from blueprint.convert import roundtrip
from blueprint.core.admissibility import verdict
from blueprint.core.errors import EmptyExportRefused
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.formats.mapping import load_mapping
from blueprint.formats.vendor import InvalidRowForExport
from conftest import EXAMPLES, FIXTURES, write_json
from strategies import eval_sets

CODECS = [codec for codec in REGISTRY.values() if codec.can_read and codec.can_write]
SHARED = [FIXTURES / "awkward" / "awkward.json", EXAMPLES / "support-refunds.json"]


def describe(result: Any) -> str:
    return f"undeclared={result.undeclared} unobserved={result.unobserved}"


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@pytest.mark.parametrize("fixture", SHARED, ids=lambda p: p.stem)
def test_declared_loss_is_actual_loss_on_shared_fixtures(codec: Any, fixture: Path) -> None:
    result = roundtrip(fixture, codec.name)
    assert result.exact, describe(result)
    if codec.lossless:
        assert result.export.lossy == [] and result.diff.identical


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(doc=eval_sets())
def test_declared_loss_is_actual_loss_on_any_valid_set(
    codec: Any, doc: dict[str, Any], tmp_path: Path
) -> None:
    source = write_json(tmp_path / "set.json", doc)
    families = {f["id"]: f["evaluator"] for f in doc.get("caseFamilies") or [] if "evaluator" in f}

    def evaluator_of(case: dict[str, Any]) -> str | None:
        # a row names its evaluator, or inherits its case family's
        return case.get("evaluator", families.get(case.get("caseFamily", "")))

    barred = any(
        evaluator_of(row["metadata"]["case"]) is not None
        and verdict(row["metadata"]["case"]["oracleType"], evaluator_of(row["metadata"]["case"]))
        == "barred"
        for row in doc["rows"]
    )
    if barred and not codec.lossless:
        with pytest.raises(InvalidRowForExport):  # vendors never get an inadmissible pairing
            roundtrip(source, codec.name)
        return
    try:
        result = roundtrip(source, codec.name)
    except EmptyExportRefused:
        # a format whose document needs a record (omk) refuses a set with none it can write
        return
    assert result.exact, describe(result)


@pytest.mark.parametrize("codec", [c for c in CODECS if not c.lossless], ids=lambda c: c.name)
def test_every_vendor_has_a_complete_mapping_file(codec: Any) -> None:
    mapping = load_mapping(codec.name)
    assert {entry.field for entry in mapping.rows} >= {"id", "input", "expected", "metadata.case"}
    assert all(entry.to or entry.dropped for entry in mapping.rows + mapping.set)
    assert "human-review" in mapping.excluded


@pytest.mark.parametrize("codec", [c for c in CODECS if not c.lossless], ids=lambda c: c.name)
def test_human_review_rows_are_left_out_unless_asked_for(codec: Any, tmp_path: Path) -> None:
    from blueprint.convert import data_rows

    rows = list(data_rows(REGISTRY["json"].open(FIXTURES / "awkward" / "awkward.json")))
    human = {"rubric-criteria", "behaviour-only"}
    target = tmp_path / f"out{codec.extensions[0]}"
    header = {"schemaVersion": "blueprint.eval-set/v1", "name": "t"}
    # allow_empty: a format may hold no row of the fixture at all (ome)
    result = codec.write(header, iter(rows), target, WriteOptions(allow_empty=True))
    left_out = {row_id for lossy in result.lossy if lossy.field == "*" for row_id in lossy.row_ids}
    assert human <= left_out
    back = {item.data["id"] for item in codec.open(target).rows}
    assert not human & back
    included = codec.write(
        header, iter(rows), target, WriteOptions(force=True, include_human_review=True)
    )
    assert not any(set(lossy.row_ids) & human for lossy in included.lossy if lossy.field == "*")
    assert human <= {item.data["id"] for item in codec.open(target).rows}


@pytest.mark.parametrize("codec", [c for c in CODECS if not c.lossless], ids=lambda c: c.name)
def test_strict_refuses_and_writes_nothing(codec: Any, tmp_path: Path) -> None:
    from blueprint.convert import data_rows
    from blueprint.core.errors import LossyExportRefused

    rows = list(data_rows(REGISTRY["json"].open(EXAMPLES / "support-refunds.json")))
    target = tmp_path / f"out{codec.extensions[0]}"
    header = {"schemaVersion": "blueprint.eval-set/v1", "name": "t"}
    with pytest.raises(LossyExportRefused):
        codec.write(header, iter(rows), target, WriteOptions(strict=True))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("codec", [c for c in CODECS if not c.lossless], ids=lambda c: c.name)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(doc=eval_sets())
def test_weakened_rules_are_reported_for_exactly_the_rows_that_carry_them(
    codec: Any, doc: dict[str, Any], tmp_path: Path
) -> None:
    """A weakened entry names rows that were written and carry the rule; every written row
    that carries a rule the mapping says the vendor ignores is named."""
    from blueprint.formats.mapping import values_at
    from blueprint.formats.vendor import ExportRow

    header = {key: value for key, value in doc.items() if key != "rows"}
    target = tmp_path / f"out{codec.extensions[0]}"
    try:
        result = codec.write(header, iter(doc["rows"]), target, WriteOptions(force=True))
    except (InvalidRowForExport, EmptyExportRefused):
        return  # an inadmissible pairing never reaches a vendor; nothing to write is refused
    left_out = {i for lossy in result.lossy if lossy.kind == "excluded" for i in lossy.row_ids}
    reported: dict[tuple[str, str], set[str]] = {}
    for lossy in result.lossy:
        if lossy.kind == "weakened":
            reported.setdefault((lossy.field, lossy.reason), set()).update(lossy.row_ids)
    by_id = {row["id"]: row for row in doc["rows"]}
    mapping = load_mapping(codec.name)
    defaulted = {
        (r.field, r.reason) for r in mapping.grading.weakened if "default" in r.model_fields_set
    }
    for (name, reason), row_ids in reported.items():
        for row_id in row_ids:
            assert row_id not in left_out
            if (name, reason) not in defaulted:  # else the rule holds by default when absent
                assert values_at(by_id[row_id], name), (row_id, name)
    families = {
        f["id"]: f.get("evaluator") for f in header.get("caseFamilies") or [] if "evaluator" in f
    }
    for row in doc["rows"]:
        if row["id"] in left_out:
            continue
        exported = ExportRow.of(row, families.get(row["metadata"]["case"].get("caseFamily", "")))
        applied = codec.applied_by_vendor(exported)
        for rule in mapping.weakened_rules(row, exported.oracle_type, exported.evaluator):
            if rule.field in applied:  # written as the vendor's own assertion, which it runs
                continue
            # reported under the rule's field (a codec may name a narrower reason)
            named = {i for (field, _), ids in reported.items() if field == rule.field for i in ids}
            assert row["id"] in named, (row["id"], rule)
