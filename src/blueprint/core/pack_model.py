"""The models of a pack file and an overlay file: case families with starter rows.

The pack loader (:mod:`blueprint.authoring.packs`) reads files into these; the published
``pack.schema.json`` and ``overlay.schema.json`` are generated from them.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import ConfigDict, Field, JsonValue, create_model

from blueprint.core.model import (
    CaseProfile,
    EvaluatorType,
    KebabId,
    NonEmptyStr,
    OracleType,
    Severity,
    StrictModel,
)

PACK_VERSION: Final = "blueprint.pack/v1"
OVERLAY_VERSION: Final = "blueprint.overlay/v1"
STARTER: Final = "starter-example"
OVERLAY_STARTER: Final = "overlay-starter-needs-expert-validation"

#: case-profile fields a pack never states per row: the builder fills them from the family
SUPPLIED_BY_FAMILY: Final = frozenset(
    {"case_id", "oracle_type", "provenance", "evaluator", "case_family"}
)

StarterCase = create_model(  # type: ignore[call-overload]
    "StarterCase",
    __base__=StrictModel,
    __doc__=(
        "A starter row's case profile, without the fields the builder fills in: caseId (the"
        " row id), oracleType and evaluator (from the family), provenance and caseFamily."
    ),
    **{
        name: (field.annotation, field)
        for name, field in CaseProfile.model_fields.items()
        if name not in SUPPLIED_BY_FAMILY
    },
)


class Concern(StrictModel):
    """One entry of a pack's palette of evaluation concerns."""

    id: KebabId = Field(description="Kebab-case name of the concern.")
    description: NonEmptyStr = Field(description="What failure the concern names.")


class StarterRow(StrictModel):
    """A starter row: realistic input, an expected value in the family's shape, a profile."""

    id: KebabId = Field(description="Row id, unique across every pack and overlay.")
    input: JsonValue = Field(description="What the system under test receives.")
    expected: JsonValue = Field(
        default=None, description="The expected value, shaped by the family's oracle type."
    )
    case: StarterCase = Field(description="The case profile, minus what the family supplies.")
    metadata: dict[str, JsonValue] | None = Field(
        default=None, description="Free-form metadata copied into the row."
    )


class PackFamily(StrictModel):
    """A case family: rows that test one kind of failure and are graded the same way."""

    id: KebabId = Field(description="Kebab-case id, filled into case.caseFamily of its rows.")
    title: NonEmptyStr = Field(description="A short human name.")
    description: NonEmptyStr = Field(description="What the family tests and why it matters.")
    oracle_type: OracleType = Field(description="The oracle type of every row.")
    evaluator: EvaluatorType = Field(description="The evaluator of every row.")
    severity: Severity = Field(description="How much a failure in this family matters.")
    linked_concerns: list[KebabId] = Field(
        default_factory=list, description="Concerns from the palette that the family covers."
    )
    rows: list[StarterRow] = Field(min_length=1, description="The starter rows.")


class _PackBase(StrictModel):
    model_config = ConfigDict(defer_build=True, populate_by_name=False)

    schema_version: str = Field(description="The format version.")
    id: KebabId = Field(description="Kebab-case id; the file is named <id>.yaml.")
    title: NonEmptyStr = Field(description="A short human name.")
    description: NonEmptyStr = Field(description="What the task family covers.")
    linked_concerns: list[Concern] = Field(
        default_factory=list,
        description=(
            "A starting palette of evaluation concerns for this task family: a place to start,"
            " not a published taxonomy."
        ),
    )
    case_families: list[PackFamily] = Field(
        alias="case-families", min_length=1, description="The case families."
    )


class Pack(_PackBase):
    """A task-family pack."""

    schema_version: Literal["blueprint.pack/v1"] = Field(description="Always blueprint.pack/v1.")


class Overlay(_PackBase):
    """A domain overlay: families that a domain adds to a base pack."""

    schema_version: Literal["blueprint.overlay/v1"] = Field(
        description="Always blueprint.overlay/v1."
    )
    applies_to: list[KebabId] | None = Field(
        default=None, description="The base packs the overlay fits; absent means any."
    )
    reviewer_expertise: NonEmptyStr = Field(
        description=(
            "The expertise a reviewer needs to validate the overlay's rows; a row may state its"
            " own in case.reviewerExpertise."
        )
    )
