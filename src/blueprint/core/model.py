"""The canonical data model: eval set, case family, row, case profile and expected shapes.

These models are the single source of the published JSON Schemas. They are strict: no type
coercion (the string ``"1"`` stays a string) and unknown keys are rejected, except for free-form
row metadata and the namespaces inside ``case.extensions``.

Cross-field rules (``caseId`` equals the row ``id``, the shape of `expected` for the oracle
type, evaluator admissibility, case-family consistency) are not expressible in the schema; the
validator checks them (see :mod:`blueprint.validation.checks`).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError
from pydantic.alias_generators import to_camel

SCHEMA_VERSION: Final = "blueprint.eval-set/v1"

OracleType = Literal[
    "reference-answer",
    "acceptable-set",
    "rubric",
    "expected-tool-calls",
    "expected-final-state",
    "expected-behavior-only",
]
EvaluatorType = Literal[
    "exact-or-programmatic",
    "rubric-human",
    "llm-judge",
    "pairwise-preference",
    "trajectory-or-state-check",
    "human-expert",
]
Provenance = Literal[
    "observed-incident",
    "production-sample",
    "expert-authored",
    "starter-example",
    "overlay-starter-needs-expert-validation",
    "synthetic-perturbation",
    "imported",
]
Severity = Literal["blocker", "major", "minor"]
Reversibility = Literal["R0", "R1", "R2", "R3"]
BlastRadius = Literal["B0", "B1", "B2", "B3"]

ORACLE_TYPES: Final[tuple[OracleType, ...]] = get_args(OracleType)
EVALUATOR_TYPES: Final[tuple[EvaluatorType, ...]] = get_args(EvaluatorType)
PROVENANCES: Final[tuple[Provenance, ...]] = get_args(Provenance)
SEVERITIES: Final[tuple[Severity, ...]] = get_args(Severity)

#: Provenances that mark published starting material rather than validated gold.
STARTER_PROVENANCES: Final[frozenset[str]] = frozenset(
    {"starter-example", "overlay-starter-needs-expert-validation"}
)

#: Row fields the schema leaves out on purpose, with the reason shown to whoever uses them.
OMITTED_FIELDS: Final[dict[str, str]] = {
    "difficulty": (
        "a difficulty column is a weight under another name, and weights add up to a composite"
        " score that hides the design decisions the case profile is meant to show"
    ),
    "weight": (
        "if some cases matter more than others, that belongs in the harness's scoring"
        " function, not in the case"
    ),
    "priority": (
        "priority is a triage notion, not a property of a test case; a P1 column tends to mark"
        " half the set P1 and tells the harness nothing"
    ),
    "score": (
        "the score is what the grader produces, not an input of the case; the profile says what"
        " the case tests and how to grade it"
    ),
}

#: what a key may carry besides the letters of an omitted field's name and still name it:
#: "Priority", "PRIORITY", "Wei_ght" and " score " are priority, weight and score
_KEY_SEPARATORS: Final = str.maketrans("", "", "_- \t")
#: longer keys name no omitted field (the longest name, with a separator between every letter)
_LONGEST_OMITTED_KEY: Final = 2 * max(map(len, OMITTED_FIELDS))


@functools.lru_cache(maxsize=4096)
def _folded_omitted(key: str) -> str | None:
    folded = key.casefold().translate(_KEY_SEPARATORS)
    return folded if folded in OMITTED_FIELDS else None


def omitted_field(key: str) -> str | None:
    """The field the schema leaves out on purpose that ``key`` names, whatever its letter
    case and whatever ``_``, ``-`` or spaces it carries (``Priority``, ``DIFFICULTY``), or None."""
    if key in OMITTED_FIELDS:
        return key
    return _folded_omitted(key) if len(key) <= _LONGEST_OMITTED_KEY else None


#: how each empty input is named (``missing-input``)
_EMPTY_INPUTS: Final[dict[type, str]] = {str: "an empty text", list: "an empty list of messages"}


def missing_input(value: Any, case: dict[str, Any]) -> str | None:
    """What a row's input is when it is no input, or None: ``null``, an empty text or an
    empty list of messages. An empty object is an input (a call with no named inputs, as a
    promptfoo test without vars runs the config's prompts as they are), and so is an empty
    list of messages with a ``scenario`` a simulator plays the conversation from (DeepEval's
    conversational goldens without turns)."""
    if value is None:
        return "null"
    what = None if value else _EMPTY_INPUTS.get(type(value))
    scenario = case.get("scenario")
    if what is not None and value == [] and isinstance(scenario, str) and scenario.strip():
        return None
    return what


KEBAB_CASE: Final = r"^[a-z0-9]+(-[a-z0-9]+)*$"
KebabId = Annotated[str, Field(pattern=KEBAB_CASE)]
NonEmptyStr = Annotated[str, Field(min_length=1)]
#: where judge-validation reports are: one path relative to the set file, or several
JudgeValidation = NonEmptyStr | Annotated[list[NonEmptyStr], Field(min_length=1)]


class StrictModel(BaseModel):
    """Base of every canonical model: no coercion, unknown keys rejected, camelCase in files."""

    model_config = ConfigDict(
        # the validator is built on first use, not at import: validating a file checks rows
        # against the published schema files and never builds it
        defer_build=True,
        strict=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
    )


# --- checks: what code can decide about an output, declared as data --------------------------

#: the normalisations a text check may apply to both sides, always in this order whatever
#: order a row lists them in: Unicode NFC, runs of white space made one space, white space
#: at both ends removed, lowercased (Unicode's default mapping, JavaScript's toLowerCase)
Normalization = Literal["nfc", "collapse-whitespace", "trim", "lowercase"]
NORMALIZATIONS: Final[tuple[Normalization, ...]] = get_args(Normalization)
Normalizations = Annotated[list[Normalization], Field(min_length=1)]
NonNegative = Annotated[int, Field(ge=0)] | Annotated[float, Field(ge=0)]
Share = Annotated[int, Field(ge=0, le=1)] | Annotated[float, Field(ge=0, le=1)]


class EqualsCheck(StrictModel):
    """The output equals a value: text after the normalisations, any other JSON value as a
    value (an output given as JSON text is read as JSON first)."""

    type: Literal["equals"]
    value: JsonValue
    normalize: Normalizations | None = None


class NumberCheck(StrictModel):
    """The output is a number (or the text of one) within ``tolerance`` of ``value``."""

    type: Literal["number"]
    value: int | float
    tolerance: NonNegative = 0


class TextCheck(StrictModel):
    """The output's text contains, starts with or ends with ``value``, after the
    normalisations (applied to both)."""

    type: Literal["contains", "starts-with", "ends-with"]
    value: str
    normalize: Normalizations | None = None


class TextsCheck(StrictModel):
    """The output's text contains any (or all) of ``values``, after the normalisations."""

    type: Literal["contains-any", "contains-all"]
    values: list[str] = Field(min_length=1)
    normalize: Normalizations | None = None


class RegexCheck(StrictModel):
    """A match of ``pattern`` anywhere in the output's text. The pattern is JavaScript's
    RegExp, run with JavaScript's meaning wherever it is graded (docs/grading.md); flags are
    ``i`` (ignore case), ``m`` (^ and $ at line ends) and ``s`` (. matches a line end),
    written in that order."""

    type: Literal["regex"]
    pattern: str
    flags: Annotated[str, Field(pattern=r"^i?m?s?$")] = ""


class IsJsonCheck(StrictModel):
    """The output is JSON: a JSON value, or text that parses as one."""

    type: Literal["is-json"]


class JsonSchemaCheck(StrictModel):
    """The output is JSON that a JSON Schema (draft 2020-12) accepts."""

    type: Literal["json-schema"]
    json_schema: dict[str, JsonValue] = Field(alias="schema")


class LengthCheck(StrictModel):
    """The output's length, in Unicode characters or in words (runs of non-white-space),
    is within ``min`` and ``max`` (each inclusive, either may be absent)."""

    type: Literal["length"]
    unit: Literal["characters", "words"] = "characters"
    min: Annotated[int, Field(ge=0)] | None = None
    max: Annotated[int, Field(ge=0)] | None = None


class LevenshteinCheck(StrictModel):
    """The output's text is at most ``maxDistance`` edits (insertions, deletions,
    substitutions of one character) from ``value``."""

    type: Literal["levenshtein"]
    value: str
    max_distance: Annotated[int, Field(ge=0)]


class ItemsCheck(StrictModel):
    """The output is a JSON list (or the text of one) holding each ``required`` item, in
    any order, and no item that is neither required nor ``allowed``."""

    type: Literal["items"]
    required: list[JsonValue]
    allowed: list[JsonValue] | None = None


class NotCheck(StrictModel):
    """Passes when ``check`` fails."""

    type: Literal["not"]
    check: Check


class AllCheck(StrictModel):
    """Passes when every one of ``checks`` passes."""

    type: Literal["all"]
    checks: list[Check] = Field(min_length=1)


class AnyCheck(StrictModel):
    """Passes when at least one of ``checks`` passes."""

    type: Literal["any"]
    checks: list[Check] = Field(min_length=1)


class WeightedCheck(StrictModel):
    """Passes when the weighted share of ``checks`` that pass is at least ``threshold``
    (each weight 1 when ``weights`` is absent; no weight at all is a share of 0)."""

    type: Literal["weighted"]
    checks: list[Check] = Field(min_length=1)
    weights: list[NonNegative] | None = None
    threshold: Share


Check = Annotated[
    EqualsCheck
    | NumberCheck
    | TextCheck
    | TextsCheck
    | RegexCheck
    | IsJsonCheck
    | JsonSchemaCheck
    | LengthCheck
    | LevenshteinCheck
    | ItemsCheck
    | NotCheck
    | AllCheck
    | AnyCheck
    | WeightedCheck,
    Field(discriminator="type"),
]
CHECK_MODELS: Final = (
    EqualsCheck,
    NumberCheck,
    TextCheck,
    TextsCheck,
    RegexCheck,
    IsJsonCheck,
    JsonSchemaCheck,
    LengthCheck,
    LevenshteinCheck,
    ItemsCheck,
    NotCheck,
    AllCheck,
    AnyCheck,
    WeightedCheck,
)
#: every check type, in the order the docs list them
CHECK_TYPES: Final[tuple[str, ...]] = tuple(
    name for model in CHECK_MODELS for name in get_args(model.model_fields["type"].annotation)
)


class CaseProfile(StrictModel):
    """The case profile, kept at `metadata.case` on every row."""

    case_id: NonEmptyStr = Field(
        description="Unique id of the case; must equal the row's top-level `id`."
    )
    oracle_type: OracleType = Field(
        description="The form of the expected answer; it decides which evaluators may grade it."
    )
    expected_behavior: str = Field(
        description=(
            "What the system should do, in the author's words: why the expected answer is right,"
            " not the answer itself."
        )
    )
    provenance: Provenance = Field(
        description="Where the row came from; the two starter provenances mark examples, not gold."
    )
    scenario: str | None = Field(
        default=None,
        description="The situation the case describes, for a reader who has never seen the system.",
    )
    actor: str | None = Field(
        default=None, description="Who or what performs the action: a customer, an admin, an API."
    )
    unacceptable_behavior: list[str] | None = Field(
        default=None, description="Behaviours the output must not show. Pipe-separated in CSV."
    )
    evaluation_criteria: list[str] | None = Field(
        default=None,
        description="The criteria a rubric is scored against. Pipe-separated in CSV.",
    )
    reversibility: Reversibility | None = Field(
        default=None,
        description=(
            "What a failure costs to undo: R0 no state change, R1 the actor can undo it,"
            " R2 needs a compensating operation, R3 no way back."
        ),
    )
    blast_radius: BlastRadius | None = Field(
        default=None,
        description=(
            "How far a failure travels: B0 one record, B1 one team, B2 the organization,"
            " B3 outside it."
        ),
    )
    linked_concerns: list[str] | None = Field(
        default=None,
        description="Named evaluation concerns the case covers. Pipe-separated in CSV.",
    )
    evaluator: EvaluatorType | None = Field(
        default=None,
        description=(
            "The evaluator that will grade the case; checked against the oracle type. When absent,"
            " any admissible evaluator is implied."
        ),
    )
    tool_action_expectation: str | None = Field(
        default=None, description="For tool-calling cases: which tools, with which arguments."
    )
    escalation_expectation: str | None = Field(
        default=None,
        description="Whether and when the case should escalate to a person, and how.",
    )
    reviewer_expertise: str | None = Field(
        default=None,
        description="The domain expertise a reviewer needs; expected when a human expert grades.",
    )
    pass_logic: str | None = Field(
        default=None,
        description=(
            "How the evaluator's output maps to pass or fail, e.g. '3 of 5 criteria met' or"
            " 'exact match after lowercasing'."
        ),
    )
    version: str | None = Field(
        default=None,
        description="The case's own version; changes when its expected behaviour changes.",
    )
    retirement_condition: str | None = Field(
        default=None, description="When the case should leave the set."
    )
    case_family: KebabId | None = Field(
        default=None,
        description=(
            "The kebab-case id of the case family the row belongs to; rows of a family share its"
            " oracle type, evaluator and severity."
        ),
    )
    checks: list[Check] | None = Field(
        default=None,
        description=(
            "Checks code decides (docs/grading.md) that the output must pass as well as the"
            " oracle: a gate, for a judged row too. A JSON array in CSV."
        ),
    )
    normalize: Normalizations | None = Field(
        default=None,
        description=(
            "How text is compared with a reference answer or an acceptable-set member: nfc,"
            " collapse-whitespace, trim, lowercase. Pipe-separated in CSV."
        ),
    )
    tolerance: NonNegative | None = Field(
        default=None,
        description=(
            "How far a number may be from a numeric reference answer or acceptable-set member"
            " and still equal it."
        ),
    )
    pass_threshold: Share | None = Field(
        default=None,
        description=(
            "The grade a graded acceptable-set member, or the score a judge gives, needs for"
            " the row to pass (1 for a graded set and 0.5 for a judge's score when absent)."
        ),
    )
    extensions: dict[str, dict[str, JsonValue]] | None = Field(
        default=None,
        description=(
            "Fields the schema does not cover, as namespace -> object. Carried through export and"
            " import, checked only for that shape."
        ),
    )


class RowMetadata(BaseModel):
    """Row metadata: the case profile plus any free-form keys, kept as they are."""

    model_config = ConfigDict(defer_build=True, strict=True, extra="allow")

    case: CaseProfile = Field(description="The case profile.")


class Row(StrictModel):
    """One evaluation case."""

    id: NonEmptyStr = Field(description="Unique within the set.")
    input: JsonValue = Field(
        description=(
            "What the system under test receives: a string, an object of named inputs, or a list"
            " of chat messages."
        )
    )
    expected: JsonValue = Field(
        default=None,
        description=(
            "The expected answer, shaped by the oracle type; absent for rubric and"
            " expected-behavior-only rows."
        ),
    )
    metadata: RowMetadata = Field(
        description="`case` holds the case profile; other keys are free-form."
    )


class CaseFamily(StrictModel):
    """A group of rows that test the same kind of failure and share how they are graded."""

    id: KebabId = Field(description="Kebab-case id that rows name in `case.caseFamily`.")
    title: str | None = Field(default=None, description="A short human name.")
    description: str | None = Field(default=None, description="What the family tests.")
    oracle_type: OracleType = Field(description="The oracle type every row of the family has.")
    evaluator: EvaluatorType | None = Field(
        default=None, description="The evaluator every row of the family names, if any."
    )
    severity: Severity | None = Field(
        default=None,
        description="How much a failure in this family matters: blocker, major or minor.",
    )
    linked_concerns: list[str] | None = Field(
        default=None, description="Evaluation concerns the family covers."
    )
    judge_validation: JudgeValidation | None = Field(
        default=None,
        description=(
            "The judge-validation report(s) (`blueprint judge-report -o X.json`) for this"
            " family's llm-judge rows: a path relative to the set file, or a list of them."
        ),
    )


class EvalSetHeader(StrictModel):
    """The set-level fields of an eval set, everything but its rows."""

    schema_version: Literal["blueprint.eval-set/v1"] = Field(
        description="Always `blueprint.eval-set/v1` for this version of the format."
    )
    name: NonEmptyStr = Field(description="The set's name.")
    version: str | None = Field(default=None, description="The set's own version.")
    description: str | None = Field(default=None, description="What the set is for.")
    task_family: str | None = Field(
        default=None, description="The task family the set was built from, e.g. customer-support."
    )
    case_families: list[CaseFamily] | None = Field(
        default=None, description="The case families rows may belong to."
    )
    judge_validation: JudgeValidation | None = Field(
        default=None,
        description=(
            "Judge-validation report(s) (`blueprint judge-report -o X.json`) for the set's"
            " llm-judge rows, each covering the case families it labels: a path relative to"
            " the set file, or a list of them."
        ),
    )
    extensions: dict[str, dict[str, JsonValue]] | None = Field(
        default=None,
        description=(
            "Set-level fields the schema does not cover, as namespace -> object: what an import"
            " keeps of a vendor suite (a promptfoo config's prompts and defaultTest), written"
            " back when the set is exported to that format again."
        ),
    )


#: the set-level fields as files name them, in schema order (schemaVersion first)
HEADER_FIELDS: Final = tuple(
    field.alias or name for name, field in EvalSetHeader.model_fields.items()
)


class EvalSet(EvalSetHeader):
    """A whole eval set: set-level fields and rows."""

    rows: list[Row] = Field(description="The evaluation cases.")


# --- the shape of `expected`, one per oracle type that has one -------------------------------


class AcceptableSetEnumerated(StrictModel):
    """acceptable-set, enumerated: any member is a correct answer."""

    acceptable: list[JsonValue] = Field(min_length=1)


class GradedValue(StrictModel):
    """One member of a graded acceptable set."""

    value: JsonValue
    grade: Annotated[int, Field(ge=0, le=1)] | Annotated[float, Field(ge=0, le=1)]


class AcceptableSetGraded(StrictModel):
    """acceptable-set, graded: each member earns a grade between 0 and 1."""

    graded: list[GradedValue] = Field(min_length=1)


class AcceptableSetSatisfies(StrictModel):
    """acceptable-set, by a check: every output the check passes is acceptable."""

    satisfies: Check


class ToolCall(StrictModel):
    """A call the system is expected to make."""

    name: NonEmptyStr
    arguments: dict[str, JsonValue]


class ForbiddenCall(StrictModel):
    """A call that must not happen; without `arguments`, any call of that tool is forbidden."""

    name: NonEmptyStr
    arguments: dict[str, JsonValue] | None = None


class ExpectedToolCalls(StrictModel):
    """expected-tool-calls: the calls, their order, and the calls that must not happen."""

    calls: list[ToolCall]
    order: Literal["exact", "any"] = "exact"
    forbidden: list[ForbiddenCall] | None = None


class FileExistsCheck(StrictModel):
    """A file that must exist after the run."""

    kind: Literal["file_exists"]
    path: NonEmptyStr


class CommandCheck(StrictModel):
    """A command to run after the run, and the exit code it must give."""

    kind: Literal["command"]
    run: NonEmptyStr
    exit_code: int


class RecordCheck(StrictModel):
    """A record that must hold after the run, described and optionally queried."""

    kind: Literal["record"]
    description: NonEmptyStr
    query: str | None = None
    equals: JsonValue = None


FinalStateCheck = Annotated[
    FileExistsCheck | CommandCheck | RecordCheck, Field(discriminator="kind")
]


class ExpectedFinalState(StrictModel):
    """expected-final-state: checks run against the world after the run."""

    checks: list[FinalStateCheck] = Field(min_length=1)


#: For each oracle type, the model `expected` must fit, or None when `expected` must be absent.
#: reference-answer takes any JSON value, so it has no model but `expected` is required.
EXPECTED_SHAPES: Final[dict[str, tuple[type[BaseModel], ...] | None]] = {
    "reference-answer": (),
    "acceptable-set": (AcceptableSetEnumerated, AcceptableSetGraded, AcceptableSetSatisfies),
    "rubric": None,
    "expected-tool-calls": (ExpectedToolCalls,),
    "expected-final-state": (ExpectedFinalState,),
    "expected-behavior-only": None,
}


#: how `expected` must look for each oracle type that has one, for messages
EXPECTED_HINTS: Final[dict[str, str]] = {
    "reference-answer": "the one correct output",
    "acceptable-set": '{"acceptable": [...]}, {"graded": [{"value": ..., "grade": 0..1}]} or'
    ' {"satisfies": {"type": ..., ...}}',
    "expected-tool-calls": '{"calls": [{"name": ..., "arguments": {...}}], "order": "exact"|"any",'
    ' "forbidden": [...]}',
    "expected-final-state": '{"checks": [{"kind": "file_exists"|"command"|"record", ...}]}',
}


def fits(model: type[BaseModel], value: Any) -> bool:
    """Whether a value validates against a model (the same verdict as the published schema)."""
    try:
        model.model_validate(value)
    except ValidationError:
        return False
    return True


def case_profile_fields() -> list[str]:
    """The case-profile field names as they appear in files (camelCase), in schema order."""
    return [field.alias or name for name, field in CaseProfile.model_fields.items()]


def dump_row(row: Row) -> dict[str, Any]:
    """A row as canonical JSON data; fields that were never set stay absent."""
    return row.model_dump(mode="json", by_alias=True, exclude_unset=True)
