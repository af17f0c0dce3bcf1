"""Every bundled pack and overlay: format, content rules, and the sets they build."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from blueprint.authoring.packs import (
    Overlay,
    Pack,
    build_pack_set,
    build_set,
    load_overlay_file,
    load_pack_file,
    pack_problems,
    packs_root,
)
from blueprint.core.model import ORACLE_TYPES
from blueprint.core.schema import validator_for
from blueprint.io import jsonvalues
from blueprint.validation.validate import validate_document

ROOT = packs_root()
PACK_FILES = sorted(ROOT.glob("*.yaml"))
OVERLAY_FILES = sorted((ROOT / "overlays").glob("*.yaml"))
PACKS = [load_pack_file(path) for path in PACK_FILES]
OVERLAYS = [load_overlay_file(path) for path in OVERLAY_FILES]
EVERYTHING: list[Pack | Overlay] = [*PACKS, *OVERLAYS]

REQUIRED_PACKS = {
    "customer-support",
    "structured-extraction",
    "rag-question-answering",
    "agent-tool-use",
    "summarization",
    "classification-routing",
    "code-generation",
    "safety-and-refusal",
}
PLACEHOLDER = re.compile(
    r"lorem|ipsum|\bTODO\b|\bTBD\b|placeholder|example input|\bfoo\b|\bbar\b|\bxxx\b|"
    r"sample text|your text here|insert .* here",
    re.IGNORECASE,
)


def ids(items: list[Pack | Overlay]) -> list[str]:
    return [item.id for item in items]


def test_the_required_packs_and_overlays_exist() -> None:
    assert set(ids(PACKS)) >= REQUIRED_PACKS
    assert {"healthcare", "finance", "legal"} <= set(ids(OVERLAYS))


@pytest.mark.parametrize("path", PACK_FILES + OVERLAY_FILES, ids=lambda p: p.stem)
def test_file_matches_the_published_schema(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    schema = "overlay.schema.json" if path.parent.name == "overlays" else "pack.schema.json"
    errors = [e.message for e in validator_for(schema).iter_errors(data)]
    assert errors == []


@pytest.mark.parametrize("pack", EVERYTHING, ids=lambda p: p.id)
def test_family_and_row_counts(pack: Pack | Overlay) -> None:
    low, high = (3, 6) if isinstance(pack, Pack) else (2, 6)
    assert low <= len(pack.case_families) <= high
    for family in pack.case_families:
        assert len(family.rows) >= 3, family.id


@pytest.mark.parametrize("pack", EVERYTHING, ids=lambda p: p.id)
def test_built_set_has_only_starter_warnings(pack: Pack | Overlay) -> None:
    document = build_pack_set(pack)
    report = validate_document(document)
    assert [i for i in report.issues if i.code != "starter-example"] == []
    assert len([i for i in report.issues if i.code == "starter-example"]) == len(document["rows"])
    assert pack_problems(pack) == []


@pytest.mark.parametrize(
    ("pack", "overlay"), list(itertools.product(PACKS, OVERLAYS)), ids=lambda p: p.id
)
def test_every_overlay_combines_with_every_base_pack_it_fits(pack: Pack, overlay: Overlay) -> None:
    if overlay.applies_to is not None and pack.id not in overlay.applies_to:
        pytest.skip(f"{overlay.id} does not apply to {pack.id}")
    document = build_set(pack, [overlay])
    report = validate_document(document)
    assert [i for i in report.issues if i.code != "starter-example"] == []


@pytest.mark.parametrize("pack", EVERYTHING, ids=lambda p: p.id)
def test_row_content_rules(pack: Pack | Overlay) -> None:
    for row in build_pack_set(pack)["rows"]:
        case = row["metadata"]["case"]
        assert case["expectedBehavior"].strip(), row["id"]
        assert case.get("unacceptableBehavior"), f"{row['id']}: no unacceptableBehavior"
        if case["oracleType"] == "rubric":
            assert case.get("evaluationCriteria"), f"{row['id']}: rubric without criteria"
        if case["oracleType"] in ("expected-tool-calls", "expected-final-state"):
            assert "reversibility" in case and "blastRadius" in case, row["id"]
        if case["evaluator"] == "human-expert":
            assert case.get("reviewerExpertise"), row["id"]
        if isinstance(pack, Overlay):
            assert case["provenance"] == "overlay-starter-needs-expert-validation"
            assert case.get("reviewerExpertise"), row["id"]
        else:
            assert case["provenance"] == "starter-example"


#: what a programmatic check's passLogic must not promise: no exporter normalises the output
#: before comparing it (promptfoo's equals is ===), so a pack promising it would mislead
NORMALISATION = re.compile(
    r"trim|whitespace|lower-?cas|upper-?cas|case-?fold|collaps|normalis|normaliz|quotes|"
    r"spaces removed|removing spaces",
    re.IGNORECASE,
)


@pytest.mark.parametrize("pack", EVERYTHING, ids=lambda p: p.id)
def test_programmatic_checks_promise_no_normalisation(pack: Pack | Overlay) -> None:
    for row in build_pack_set(pack)["rows"]:
        case = row["metadata"]["case"]
        programmatic = case.get("evaluator") in (
            "exact-or-programmatic",
            "trajectory-or-state-check",
        )
        if programmatic and case["oracleType"] != "expected-final-state":
            assert not NORMALISATION.search(case.get("passLogic", "")), row["id"]


@pytest.mark.parametrize("path", PACK_FILES + OVERLAY_FILES, ids=lambda p: p.stem)
def test_no_placeholder_text(path: Path) -> None:
    found = PLACEHOLDER.findall(path.read_text(encoding="utf-8"))
    assert found == []


def test_ids_and_inputs_are_unique_across_everything() -> None:
    rows = [row for pack in EVERYTHING for row in build_pack_set(pack)["rows"]]
    row_ids = Counter(row["id"] for row in rows)
    assert [i for i, n in row_ids.items() if n > 1] == []
    families = Counter(family.id for pack in EVERYTHING for family in pack.case_families)
    assert [i for i, n in families.items() if n > 1] == []
    inputs = Counter(jsonvalues.dumps(row["input"], sort_keys=True) for row in rows)
    assert [i for i, n in inputs.items() if n > 1] == []


def test_every_oracle_type_appears_several_times() -> None:
    families = Counter(f.oracle_type for pack in PACKS for f in pack.case_families)
    assert {oracle: families[oracle] >= 3 for oracle in ORACLE_TYPES} == dict.fromkeys(
        ORACLE_TYPES, True
    )


def test_row_ids_carry_their_pack_prefix() -> None:
    for pack in EVERYTHING:
        prefixes = {row.id.split("-")[0] for family in pack.case_families for row in family.rows}
        assert len(prefixes) == 1, (pack.id, prefixes)
