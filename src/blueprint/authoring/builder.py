"""Editing a set in place: set a row's oracle type (narrowing its evaluator) and add rows.

Both edits take the one edit path (:mod:`blueprint.authoring.editing`): they open the set,
decide everything, and only then rewrite the file in its own format, atomically. A refused
edit (an inadmissible evaluator, a row that would leave its case family silently, an expected
value that would be lost) leaves the file byte-for-byte as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from blueprint.authoring.editing import (
    EditableSet,
    EditOptions,
    EditOutcome,
    EditRefused,
    RowChange,
    case_of,
    editing,
    ordered_case,
)
from blueprint.core import admissibility
from blueprint.core.errors import UsageError
from blueprint.core.model import (
    EVALUATOR_TYPES,
    EXPECTED_HINTS,
    EXPECTED_SHAPES,
    ORACLE_TYPES,
    STARTER_PROVENANCES,
    EvaluatorType,
    OracleType,
    fits,
)
from blueprint.formats import StrPath
from blueprint.io import jsonvalues
from blueprint.io.jsonvalues import dumps_text
from blueprint.validation.checks import RowView
from blueprint.validation.validate import validate_document

__all__ = [
    "AddOutcome",
    "AddRequest",
    "EditOptions",
    "EditRefused",
    "OracleOutcome",
    "OracleRequest",
    "add_row",
    "build_row",
    "plan_family_oracle",
    "set_oracle",
]

_NO_EXPECTED: Final = frozenset({"rubric", "expected-behavior-only"})


# --- oracle ----------------------------------------------------------------------------------

Scope = Literal["row", "family", "leave-family"]


@dataclass(frozen=True)
class OracleRequest:
    """Set ``row_id``'s oracle type; ``scope`` says what happens to its case family."""

    row_id: str
    oracle_type: OracleType
    evaluator: EvaluatorType | None = None
    scope: Scope = "row"
    drop_expected: bool = False


@dataclass
class OracleOutcome(EditOutcome):
    """What an oracle change did, for the CLI to tell the user."""

    #: the row asked for; None when the change started from a case family (family edit)
    row_id: str | None
    oracle_type: str
    previous_oracle_type: str | None
    evaluator: str | None
    #: the evaluator that was removed because the new oracle type bars it, and why
    cleared: tuple[str, str] | None = None
    #: the conditions under which the evaluator (llm-judge) is admitted
    conditions: tuple[str, ...] = ()
    #: evaluators the oracle type admits, listed when none was named
    admissible: tuple[str, ...] = ()
    family: str | None = None
    left_family: str | None = None
    rows_changed: list[str] = field(default_factory=list)
    #: per row: what happened to `expected`, or what the user must now write there
    expected_notes: dict[str, str] = field(default_factory=dict)
    starter_rows: list[str] = field(default_factory=list)
    #: other rows of the family whose evaluator changed: row id -> (before, after)
    evaluator_changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def details(self) -> dict[str, Any]:
        return {
            "rowId": self.row_id,
            "oracleType": self.oracle_type,
            "previousOracleType": self.previous_oracle_type,
            "evaluator": self.evaluator,
            "cleared": (
                {"evaluator": self.cleared[0], "reason": self.cleared[1]} if self.cleared else None
            ),
            "conditions": list(self.conditions),
            "admissible": list(self.admissible),
            "family": self.family,
            "leftFamily": self.left_family,
            "rowsChanged": self.rows_changed,
            "expectedNotes": self.expected_notes,
            "starterRows": self.starter_rows,
            "evaluatorChanges": {
                row: {"before": before, "after": after}
                for row, (before, after) in self.evaluator_changes.items()
            },
        }


def _expected_change(
    row: dict[str, Any], old: str | None, new: str, drop: bool
) -> tuple[Callable[[dict[str, Any]], None] | None, str | None]:
    """How `expected` must change for a new oracle type: an edit to apply, and a note."""
    present = "expected" in row
    value = row.get("expected")
    row_id = row.get("id")
    if new in _NO_EXPECTED:
        if not present:
            return None, None
        if not drop:
            raise EditRefused(
                f"row {row_id!r} carries an expected value, which {new} rows cannot have;"
                " pass --drop-expected to remove it (nothing else is lost)"
            )
        return (lambda r: r.pop("expected", None)), f"removed expected (was {dumps_text(value)})"
    if new == old:
        return None, None
    if old == "reference-answer" and new == "acceptable-set" and present:

        def wrap(r: dict[str, Any]) -> None:
            r["expected"] = {"acceptable": [value]}

        return wrap, "wrapped the reference answer as the one member of the acceptable set"
    if (
        old == "acceptable-set"
        and new == "reference-answer"
        and isinstance(value, dict)
        and isinstance(value.get("acceptable"), list)
        and len(value["acceptable"]) == 1
    ):
        member = value["acceptable"][0]

        def unwrap(r: dict[str, Any]) -> None:
            r["expected"] = member

        return unwrap, "took the single acceptable member as the reference answer"
    shapes = EXPECTED_SHAPES[new] or ()
    if not present:
        return None, f"add expected: {EXPECTED_HINTS[new]}"
    if new == "reference-answer":
        return None, (
            f"expected kept as it is ({dumps_text(value)[:80]}); a reference answer is the one"
            " correct output, so check that this is it"
        )
    if shapes and not any(fits(model, value) for model in shapes):
        return None, f"expected does not fit {new} yet; it must be {EXPECTED_HINTS[new]}"
    return None, None


def set_oracle(
    path: StrPath, request: OracleRequest, options: EditOptions | None = None
) -> OracleOutcome:
    """Change a row's oracle type (and its family's, with scope="family") in place."""
    with editing(path, options) as edited:
        case = case_of(edited.find(request.row_id))
        family_id = case.get("caseFamily")
        family = edited.families().get(family_id) if isinstance(family_id, str) else None
        family_evaluator = family.get("evaluator") if family is not None else None
        current = case.get("evaluator") if "evaluator" in case else family_evaluator
        outcome, change = _plan_oracle(
            edited,
            request,
            _Start(request.row_id, case.get("oracleType"), current, family_id),
        )
        outcome.written = edited.commit(
            edited.changed(change), edited.count(), header_changed=request.scope == "family"
        )
        return outcome


def plan_family_oracle(
    edited: EditableSet,
    family_id: str,
    oracle_type: OracleType,
    evaluator: EvaluatorType | None,
    *,
    drop_expected: bool = False,
) -> tuple[OracleOutcome, RowChange]:
    """Plan a case family's new oracle type (or evaluator), its rows following, as
    ``oracle ROW --family`` does; the family itself changes in ``edited.header`` now, the
    rows when the returned change is applied to each of them."""
    family = edited.families()[family_id]
    request = OracleRequest("", oracle_type, evaluator, "family", drop_expected)
    start = _Start(None, family.get("oracleType"), family.get("evaluator"), family_id)
    return _plan_oracle(edited, request, start)


@dataclass(frozen=True)
class _Start:
    """Where an oracle change starts: a row, or (row_id None) a case family itself."""

    row_id: str | None
    previous: Any
    #: the evaluator that grades it now: the row's own, else its family's
    current_evaluator: Any
    family_id: Any


def _plan_oracle(
    edited: EditableSet, request: OracleRequest, start: _Start
) -> tuple[OracleOutcome, RowChange]:
    new = request.oracle_type
    rule = admissibility.rule_for(new)
    previous = start.previous
    outcome = OracleOutcome(
        row_id=start.row_id,
        oracle_type=new,
        previous_oracle_type=previous if isinstance(previous, str) else None,
        evaluator=None,
        notes=list(edited.notes),
    )

    families = edited.families()
    family_id = start.family_id
    family = families.get(family_id) if isinstance(family_id, str) else None
    family_evaluator = family.get("evaluator") if family is not None else None
    row_name = repr(start.row_id) if start.row_id is not None else "(none)"

    # the evaluator: refuse a barred one, clear a barred one already there (the row's own or
    # the one it inherits from its family), keep the rest
    evaluator = request.evaluator
    if evaluator is not None:
        if rule.verdict(evaluator) == "barred":
            raise EditRefused(
                f"{new} bars the evaluator {evaluator}: {rule.bars[evaluator]}."
                f" Admissible: {', '.join(rule.admissible())}"
            )
    else:
        outcome.admissible = rule.admissible()
        current = start.current_evaluator
        if isinstance(current, str) and current in rule.bars:
            outcome.cleared = (current, rule.bars[current])
        elif isinstance(current, str):
            evaluator = current  # type: ignore[assignment]
    if evaluator is not None:
        outcome.conditions = rule.conditional.get(evaluator, ())
    outcome.evaluator = evaluator

    # the case family: change it whole, leave it, or refuse to split it silently
    if family is not None:
        outcome.family = family_id
        differs = family.get("oracleType") != new or (
            family_evaluator is not None and family_evaluator != evaluator
        )
        if request.scope == "row" and differs:
            raise EditRefused(
                f"row {row_name} belongs to the case family {family_id!r}"
                f" ({family.get('oracleType')}, {family_evaluator or 'no evaluator'}), whose"
                " rows share one oracle type and evaluator. Change the whole family with"
                " --family, or take the row out of it with --leave-family"
            )
    elif request.scope == "family":
        if not isinstance(family_id, str):
            raise EditRefused(f"row {row_name} belongs to no case family")
        defined = ", ".join(families) or "none"
        raise EditRefused(
            f"row {row_name} names the case family {family_id!r}, which the set does"
            f" not define (caseFamilies: {defined})"
        )
    # a row that inherits its family's evaluator goes on inheriting it while it stays in the
    # family; one leaving the family takes the evaluator with it
    inherits = family is not None and request.scope != "leave-family"

    def affected(row: Any) -> bool:
        view = RowView(0, row)
        if request.scope == "family":
            return view.case.get("caseFamily") == family_id
        return view.id == start.row_id

    # decide every row's change before writing anything; rows are keyed by position
    changes: dict[int, Callable[[dict[str, Any]], None] | None] = {}
    seen: set[str] = set()
    for position, row in enumerate(edited.rows()):
        if not affected(row):
            continue
        row_id = row.get("id")
        if not isinstance(row_id, str) or row_id in seen:
            problem = "has no id" if not isinstance(row_id, str) else f"repeats the id {row_id!r}"
            raise EditRefused(
                f"row {position} of the case family {family_id!r} {problem}; give every row"
                " of the family its own id first"
            )
        seen.add(row_id)
        row_case = case_of(row)
        change, note = _expected_change(row, row_case.get("oracleType"), new, request.drop_expected)
        changes[position] = change
        if note:
            outcome.expected_notes[row_id] = note
        if row_case.get("provenance") in STARTER_PROVENANCES:
            outcome.starter_rows.append(row_id)
        was = row_case.get("evaluator", family_evaluator)
        if row_id != start.row_id and was != evaluator:
            outcome.evaluator_changes[row_id] = (was, evaluator)

    if request.scope == "family" and family is not None:
        family["oracleType"] = new
        if evaluator is None:
            family.pop("evaluator", None)
        else:
            family["evaluator"] = evaluator
    if request.scope == "leave-family" and family_id is not None:
        outcome.left_family = family_id if isinstance(family_id, str) else None

    def transform(position: int, row: Any) -> Any:
        if position not in changes:
            return row
        row_case = case_of(row)
        row_case["oracleType"] = new
        if evaluator is None:
            row_case.pop("evaluator", None)
        elif "evaluator" in row_case or not inherits:
            row_case["evaluator"] = evaluator
        if request.scope == "leave-family":
            row_case.pop("caseFamily", None)
        row["metadata"]["case"] = ordered_case(row_case)
        change = changes[position]
        if change is not None:
            change(row)
        outcome.rows_changed.append(row["id"])
        return row

    return outcome, transform


# --- add -------------------------------------------------------------------------------------

_ABSENT: Final = object()


@dataclass(frozen=True)
class AddRequest:
    """A new row, in a case family or outside any; provenance must be stated, never assumed.

    A row in a family takes the family's oracle type and evaluator (``oracle_type`` and
    ``evaluator``, when given, must agree with them); a row outside any family needs
    ``oracle_type``, and ``evaluator`` is optional.
    """

    family: str | None
    row_id: str
    input: Any
    expected_behavior: str
    provenance: str
    expected: Any = _ABSENT
    #: further case-profile fields by their file names (scenario, unacceptableBehavior, ...)
    case: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    oracle_type: str | None = None
    evaluator: str | None = None


@dataclass
class AddOutcome(EditOutcome):
    row: dict[str, Any]
    position: int
    warnings: list[str] = field(default_factory=list)

    def details(self) -> dict[str, Any]:
        return {"row": self.row, "position": self.position, "warnings": self.warnings}


def build_row(request: AddRequest, family: dict[str, Any] | None = None) -> dict[str, Any]:
    """The row an add request describes: in a family, with the family's oracle type and
    evaluator; outside any, with the request's."""
    case: dict[str, Any] = {
        **request.case,
        "caseId": request.row_id,
        "expectedBehavior": request.expected_behavior,
        "provenance": request.provenance,
    }
    if family is not None:
        case["oracleType"] = family.get("oracleType")
        case["caseFamily"] = request.family
        if "evaluator" in family:
            case["evaluator"] = family["evaluator"]
        elif request.evaluator is not None:
            case["evaluator"] = request.evaluator
    else:
        case["oracleType"] = request.oracle_type
        if request.evaluator is not None:
            case["evaluator"] = request.evaluator
    row: dict[str, Any] = {"id": request.row_id, "input": request.input}
    if request.expected is not _ABSENT:
        row["expected"] = request.expected
    row["metadata"] = {"case": ordered_case(case), **request.metadata}
    return row


def add_row(path: StrPath, request: AddRequest, options: EditOptions | None = None) -> AddOutcome:
    """Add a row after its case family's last row (a row outside any family: at the end);
    refuses a row that would not be valid."""
    with editing(path, options) as edited:
        return _add_row(edited, request)


def _check_grading(request: AddRequest, family: dict[str, Any] | None) -> None:
    """The oracle type and evaluator asked for: known, admissible, and the family's."""
    if request.oracle_type is not None and request.oracle_type not in ORACLE_TYPES:
        raise UsageError(f"{request.oracle_type!r} is not an oracle type")
    if request.evaluator is not None and request.evaluator not in EVALUATOR_TYPES:
        raise UsageError(f"{request.evaluator!r} is not an evaluator")
    if family is None:
        if request.oracle_type is None:
            raise UsageError(
                "a row outside any case family needs its oracle type (--oracle-type);"
                " in a family (--family) it takes the family's"
            )
        oracle_type: Any = request.oracle_type
    else:
        oracle_type = family.get("oracleType")
        if request.oracle_type is not None and request.oracle_type != oracle_type:
            raise EditRefused(
                f"the case family {request.family!r} is {oracle_type}, and its rows share"
                f" that oracle type, not {request.oracle_type}; leave --oracle-type out, or"
                " change the family first (blueprint family edit)"
            )
        named_evaluator = family.get("evaluator")
        if (
            request.evaluator is not None
            and "evaluator" in family
            and named_evaluator != request.evaluator
        ):
            raise EditRefused(
                f"the case family {request.family!r} is graded by"
                f" {named_evaluator or 'no named evaluator'}, and its rows share it, not"
                f" {request.evaluator}; leave --evaluator out, or change the family first"
            )
    if request.evaluator is not None and oracle_type in ORACLE_TYPES:
        rule = admissibility.rule_for(oracle_type)
        if rule.verdict(request.evaluator) == "barred":
            raise EditRefused(
                f"{oracle_type} bars the evaluator {request.evaluator}:"
                f" {rule.bars[request.evaluator]}."
                f" Admissible: {', '.join(rule.admissible())}"
            )


def _add_row(edited: EditableSet, request: AddRequest) -> AddOutcome:
    families = edited.families()
    family: dict[str, Any] | None = None
    if request.family is not None:
        family = families.get(request.family)
        if family is None:
            defined = ", ".join(families) or "none: the set has no caseFamilies"
            raise EditRefused(
                f"the set defines no case family {request.family!r} (defined: {defined})"
            )
    _check_grading(request, family)
    if not request.expected_behavior.strip():
        raise EditRefused("the expected behaviour is empty; say what should happen, and why")
    row = build_row(request, family)
    try:  # the row must read back: no NaN, no lone surrogates, no absurd nesting
        jsonvalues.loads(jsonvalues.dumps(row))
    except (jsonvalues.JSONError, ValueError) as error:
        raise EditRefused(f"the new row cannot be stored: {error}") from None
    report = validate_document({**edited.header, "rows": [row]})
    errors = [
        issue
        for issue in report.issues
        if issue.severity == "error" and issue.path.startswith("$.rows[0]")
    ]
    if errors:
        found = "; ".join(f"{i.path.replace('$.rows[0]', '$')}: {i.message}" for i in errors)
        raise EditRefused(f"the new row is not valid: {found}")
    position = 0
    last_of_family = -1
    own_evaluator = row["metadata"]["case"].get("evaluator")
    for index, existing in enumerate(edited.rows()):
        view = RowView(index, existing)
        if view.id == request.row_id:
            raise EditRefused(f"a row with the id {request.row_id!r} already exists")
        if request.family is not None and view.case.get("caseFamily") == request.family:
            last_of_family = index
            # a family that names no evaluator takes the first one its rows name
            theirs = view.case.get("evaluator")
            if own_evaluator is not None and theirs is not None and theirs != own_evaluator:
                raise EditRefused(
                    f"the row {view.id!r} of the case family {request.family!r} is graded by"
                    f" {theirs}, and rows of a family share their evaluator, not"
                    f" {own_evaluator}"
                )
        position = index + 1
    insert_at = last_of_family + 1 if last_of_family >= 0 else position

    def with_new_row() -> Any:
        for index, existing in enumerate(edited.rows()):
            if index == insert_at:
                yield row
            yield existing
        if insert_at >= position:
            yield row

    written = edited.commit(with_new_row(), position + 1)
    warnings = [
        issue.message
        for issue in report.issues
        if issue.severity == "warning" and issue.path.startswith("$.rows[0]")
    ]
    return AddOutcome(
        row=row, position=insert_at, warnings=warnings, notes=edited.notes, written=written
    )
