"""Editing a set in place: set a row's oracle type (narrowing its evaluator) and add rows.

Every edit reads the set, decides everything, and only then rewrites the file in its own
format, atomically. A refused edit (an inadmissible evaluator, a row that would leave its case
family silently, an expected value that would be lost) leaves the file byte-for-byte as it was.
Rows stream through; memory holds one row at a time plus the set-level fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from blueprint import admissibility, jsonvalues
from blueprint.checks import RowView
from blueprint.convert import complete_header, data_rows
from blueprint.errors import BlueprintError
from blueprint.formats import Codec, ExportResult, StrPath, WriteOptions, resolve_codec
from blueprint.jsonvalues import dumps_text
from blueprint.model import (
    EXPECTED_HINTS,
    EXPECTED_SHAPES,
    STARTER_PROVENANCES,
    EvaluatorType,
    OracleType,
    case_profile_fields,
    fits,
)
from blueprint.validate import validate_document

_NO_EXPECTED: Final = frozenset({"rubric", "expected-behavior-only"})


class EditRefused(BlueprintError, ValueError):
    """The edit cannot be made as asked; the file was not touched."""

    exit_code = 1


# --- reading and rewriting -------------------------------------------------------------------


@dataclass
class _Set:
    path: Path
    codec: Codec
    header: dict[str, Any]
    notes: list[str]

    def families(self) -> dict[str, dict[str, Any]]:
        found = self.header.get("caseFamilies")
        if not isinstance(found, list):
            return {}
        return {f["id"]: f for f in found if isinstance(f, dict) and isinstance(f.get("id"), str)}

    def rows(self) -> Iterator[Any]:
        return data_rows(self.codec.open(self.path))

    def rewrite(self, rows: Iterator[Any], expected_rows: int) -> ExportResult:
        """Replace the file with ``rows``. Strict, and the row count is checked before the
        output is committed, so an edit that would lose anything leaves the file as it was."""
        return self.codec.write(
            self.header,
            _exactly(rows, expected_rows, self.path),
            self.path,
            WriteOptions(force=True, strict=True),
        )


def _exactly(rows: Iterator[Any], expected: int, path: Path) -> Iterator[Any]:
    """Pass rows through; raise (so the writer commits nothing) unless there are ``expected``."""
    count = 0
    for row in rows:
        count += 1
        yield row
    if count != expected:
        raise EditRefused(f"{path}: the edit would write {count} rows, not {expected}; unchanged")


def _open(path: Path, format: str | None) -> _Set:
    codec = resolve_codec(path, format, reading=True)
    if not codec.lossless:
        # rewriting a vendor file means exporting the whole set again, which loses what that
        # format cannot hold (set-level fields, rows it leaves out); an edit must lose nothing
        raise EditRefused(
            f"{path}: editing a {codec.name} file in place is refused: rewriting it would export"
            f" the set again, and a {codec.name} export leaves out rows and fields it has no"
            f" place for. Convert it to a canonical format first (blueprint convert {path}"
            f" {path.with_name(path.stem + '-set.json')} --from {codec.name}), edit that,"
            " and export again"
        )
    source = codec.open(path)
    header, notes = complete_header(source)
    return _Set(path, codec, dict(header), notes)


def _find(edited: _Set, row_id: str) -> dict[str, Any]:
    matches = [row for row in edited.rows() if isinstance(row, dict) and row.get("id") == row_id]
    if not matches:
        raise EditRefused(f"{edited.path}: no row has the id {row_id!r}")
    if len(matches) > 1:
        raise EditRefused(
            f"{edited.path}: {len(matches)} rows share the id {row_id!r}; fix that first"
        )
    return matches[0]


def _case(row: dict[str, Any]) -> dict[str, Any]:
    metadata = row.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if not isinstance(case, dict):
        raise EditRefused(f"row {row.get('id')!r} has no case profile at metadata.case")
    return case


_CASE_ORDER: Final = case_profile_fields()


def _ordered(case: dict[str, Any]) -> dict[str, Any]:
    """The case profile with known fields in schema order, unknown ones after."""
    known = {key: case[key] for key in _CASE_ORDER if key in case}
    return {**known, **{key: value for key, value in case.items() if key not in known}}


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
class OracleOutcome:
    """What an oracle change did, for the CLI to tell the user."""

    row_id: str
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
    notes: list[str] = field(default_factory=list)


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


def _named(path: Path, error: EditRefused) -> EditRefused:
    text = str(error)
    return error if text.startswith(f"{path}:") else EditRefused(f"{path}: {text}")


def set_oracle(
    path: StrPath, request: OracleRequest, *, format: str | None = None
) -> OracleOutcome:
    """Change a row's oracle type (and its family's, with scope="family") in place."""
    try:
        return _set_oracle(Path(path), request, format)
    except EditRefused as error:
        raise _named(Path(path), error) from None


def _set_oracle(path: Path, request: OracleRequest, format: str | None) -> OracleOutcome:
    edited = _open(path, format)
    target = _find(edited, request.row_id)
    case = _case(target)
    previous = case.get("oracleType")
    new = request.oracle_type
    rule = admissibility.rule_for(new)
    outcome = OracleOutcome(
        row_id=request.row_id,
        oracle_type=new,
        previous_oracle_type=previous if isinstance(previous, str) else None,
        evaluator=None,
        notes=list(edited.notes),
    )

    families = edited.families()
    family_id = case.get("caseFamily")
    family = families.get(family_id) if isinstance(family_id, str) else None
    family_evaluator = family.get("evaluator") if family is not None else None

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
        current = case.get("evaluator") if "evaluator" in case else family_evaluator
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
                f"row {request.row_id!r} belongs to the case family {family_id!r}"
                f" ({family.get('oracleType')}, {family_evaluator or 'no evaluator'}), whose"
                " rows share one oracle type and evaluator. Change the whole family with"
                " --family, or take the row out of it with --leave-family"
            )
    elif request.scope == "family":
        if not isinstance(family_id, str):
            raise EditRefused(f"row {request.row_id!r} belongs to no case family")
        defined = ", ".join(families) or "none"
        raise EditRefused(
            f"row {request.row_id!r} names the case family {family_id!r}, which the set does"
            f" not define (caseFamilies: {defined})"
        )
    # a row that inherits its family's evaluator goes on inheriting it while it stays in the
    # family; one leaving the family takes the evaluator with it
    inherits = family is not None and request.scope != "leave-family"

    def affected(row: Any) -> bool:
        view = RowView(0, row)
        if request.scope == "family":
            return view.case.get("caseFamily") == family_id
        return view.id == request.row_id

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
        row_case = _case(row)
        change, note = _expected_change(row, row_case.get("oracleType"), new, request.drop_expected)
        changes[position] = change
        if note:
            outcome.expected_notes[row_id] = note
        if row_case.get("provenance") in STARTER_PROVENANCES:
            outcome.starter_rows.append(row_id)
        was = row_case.get("evaluator", family_evaluator)
        if row_id != request.row_id and was != evaluator:
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
        row_case = _case(row)
        row_case["oracleType"] = new
        if evaluator is None:
            row_case.pop("evaluator", None)
        elif "evaluator" in row_case or not inherits:
            row_case["evaluator"] = evaluator
        if request.scope == "leave-family":
            row_case.pop("caseFamily", None)
        row["metadata"]["case"] = _ordered(row_case)
        change = changes[position]
        if change is not None:
            change(row)
        outcome.rows_changed.append(row["id"])
        return row

    total = sum(1 for _ in edited.rows())
    edited.rewrite((transform(position, row) for position, row in enumerate(edited.rows())), total)
    return outcome


# --- add -------------------------------------------------------------------------------------

_ABSENT: Final = object()


@dataclass(frozen=True)
class AddRequest:
    """A new row for an existing case family; provenance must be stated, never assumed."""

    family: str
    row_id: str
    input: Any
    expected_behavior: str
    provenance: str
    expected: Any = _ABSENT
    #: further case-profile fields by their file names (scenario, unacceptableBehavior, ...)
    case: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class AddOutcome:
    row: dict[str, Any]
    position: int
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def build_row(request: AddRequest, family: dict[str, Any]) -> dict[str, Any]:
    """The row an add request describes, inheriting the family's oracle type and evaluator."""
    case = {
        **request.case,
        "caseId": request.row_id,
        "oracleType": family.get("oracleType"),
        "expectedBehavior": request.expected_behavior,
        "provenance": request.provenance,
        "caseFamily": request.family,
    }
    if "evaluator" in family:
        case["evaluator"] = family["evaluator"]
    row: dict[str, Any] = {"id": request.row_id, "input": request.input}
    if request.expected is not _ABSENT:
        row["expected"] = request.expected
    row["metadata"] = {"case": _ordered(case), **request.metadata}
    return row


def add_row(path: StrPath, request: AddRequest, *, format: str | None = None) -> AddOutcome:
    """Add a row to a case family, after the family's last row; refuses an invalid row."""
    try:
        return _add_row(Path(path), request, format)
    except EditRefused as error:
        raise _named(Path(path), error) from None


def _add_row(path: Path, request: AddRequest, format: str | None) -> AddOutcome:
    edited = _open(path, format)
    families = edited.families()
    family = families.get(request.family)
    if family is None:
        defined = ", ".join(families) or "none: the set has no caseFamilies"
        raise EditRefused(f"the set defines no case family {request.family!r} (defined: {defined})")
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
    for index, existing in enumerate(edited.rows()):
        view = RowView(index, existing)
        if view.id == request.row_id:
            raise EditRefused(f"{edited.path}: a row with the id {request.row_id!r} already exists")
        if view.case.get("caseFamily") == request.family:
            last_of_family = index
        position = index + 1
    insert_at = last_of_family + 1 if last_of_family >= 0 else position

    def with_new_row() -> Iterator[Any]:
        for index, existing in enumerate(edited.rows()):
            if index == insert_at:
                yield row
            yield existing
        if insert_at >= position:
            yield row

    edited.rewrite(with_new_row(), position + 1)
    warnings = [
        issue.message
        for issue in report.issues
        if issue.severity == "warning" and issue.path.startswith("$.rows[0]")
    ]
    return AddOutcome(row=row, position=insert_at, warnings=warnings, notes=edited.notes)
