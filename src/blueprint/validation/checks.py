"""The validator's checks: schema findings and the cross-field rules, each yielding issues.

Rules read raw rows (the JSON a file holds, valid or not) so that one malformed field never
hides the other findings of its row. Each rule names the codes it can yield, which lets
``--select``/``--ignore`` skip it entirely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

import orjson

from blueprint.core import admissibility, jsonpath
from blueprint.core.issues import Issue, make_issue
from blueprint.core.model import (
    EVALUATOR_TYPES,
    EXPECTED_HINTS,
    EXPECTED_SHAPES,
    OMITTED_FIELDS,
    ORACLE_TYPES,
    STARTER_PROVENANCES,
    case_profile_fields,
    missing_input,
    omitted_field,
)
from blueprint.core.schema import accepts, validator_for
from blueprint.formats.shards import ShardStarts
from blueprint.io.firstseen import text_key
from blueprint.io.jsonvalues import dumps_text
from blueprint.io.typedrows import is_typed_row, row_data
from blueprint.validation.checkrules import (
    check_rubric_criteria,
    grading_rule_issues,
    unusable_check_issues,
)
from blueprint.validation.inputtext import input_key, split_of
from blueprint.validation.rowindex import FirstSeen, RowIds, RowLines
from blueprint.validation.schemadescribe import (
    Location,
    describe_value,
    schema_findings,
)

if TYPE_CHECKING:  # jsonschema is imported only to describe a failure (see schema.py)
    pass

# --- the rows and the set, as rules see them ---------------------------------------------------


class RowView:
    """A raw row with its case profile and enums picked out defensively."""

    __slots__ = ("case", "checked", "data", "evaluator", "id", "index", "line", "oracle_type")

    def __init__(self, index: int, data: Any, line: int | None = None) -> None:
        self.index = index
        self.line = line
        #: whether the published row schema is known to accept the row (a typed row)
        self.checked = False
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}
        row_id = self.data.get("id")
        self.id: str | None = row_id if isinstance(row_id, str) else None
        metadata = self.data.get("metadata")
        case = metadata.get("case") if isinstance(metadata, dict) else None
        self.case: dict[str, Any] = case if isinstance(case, dict) else {}
        oracle_type = self.case.get("oracleType")
        evaluator = self.case.get("evaluator")
        self.oracle_type: Any = oracle_type if _member(oracle_type, ORACLE_TYPES) else None
        self.evaluator: Any = evaluator if _member(evaluator, EVALUATOR_TYPES) else None

    @classmethod
    def of(cls, index: int, data: Any, line: int | None = None) -> RowView:
        """The view of a row as a reader gave it: a raw value, or a typed row."""
        if is_typed_row(data):
            return cls.of_typed(index, data, line)
        return cls(index, data, line)

    @classmethod
    def of_typed(cls, index: int, row: Any, line: int | None = None) -> RowView:
        """The view of a typed row (:mod:`blueprint.io.typedrows`), which the published row
        schema accepts: its data is put back together from the typed fields, and its enums
        need no checking."""
        view = cls.__new__(cls)
        view.index = index
        view.line = line
        view.checked = True
        view.data = row_data(row)
        view.id = row.id
        view.case = case = row.metadata["case"]
        view.oracle_type = case["oracleType"]
        view.evaluator = case.get("evaluator")
        return view

    @property
    def is_starter(self) -> bool:
        """Whether the row is a pack's starter example, not validated gold."""
        provenance = self.case.get("provenance")
        return isinstance(provenance, str) and provenance in STARTER_PROVENANCES

    def imported(self) -> dict[str, Any]:
        """The import record a vendor reader left in the profile (format, derived values)."""
        return import_record(self.case)

    def issue(self, code: str, *location: str | int, **context: Any) -> Issue:
        return make_issue(
            code,
            path=jsonpath.row_path(self.index, *location),
            row_index=self.index,
            row_id=self.id,
            line=self.line,
            **context,
        )


def import_record(case: dict[str, Any]) -> dict[str, Any]:
    """The import record a vendor reader left in a case profile (format, derived values);
    empty when there is none."""
    extensions = case.get("extensions")
    record = extensions.get("blueprint-import") if isinstance(extensions, dict) else None
    if not isinstance(record, dict) or not isinstance(record.get("derived"), dict):
        return {}
    return record


def row_case(data: Any) -> dict[str, Any]:
    """A raw row's case profile (``metadata.case``); empty when it has none."""
    metadata = data.get("metadata") if isinstance(data, dict) else None
    case = metadata.get("case") if isinstance(metadata, dict) else None
    return case if isinstance(case, dict) else {}


def _member(value: Any, members: tuple[str, ...]) -> bool:
    return isinstance(value, str) and value in members


@dataclass
class SetState:
    """What the validator remembers across rows: family definitions and the ids seen."""

    #: the declared case families by id; None when the set declares none (or is unknown)
    families: dict[str, dict[str, Any]] | None = None
    #: whether the set-level fields are known at all (a CSV without its set file: no)
    header_known: bool = False
    #: key of a row id -> index of the first row that used it
    first_use: FirstSeen = field(default_factory=FirstSeen)
    #: the line each row starts on (0 when unknown)
    lines: RowLines = field(default_factory=RowLines)
    #: the id of each row (None when it has none), for findings that name an earlier row
    ids: RowIds = field(default_factory=RowIds)
    #: family -> field -> (value, row index, row id) of the first row that gave it; bounded by
    #: the number of families, not rows
    family_firsts: dict[str, dict[str, tuple[Any, int, str | None]]] = field(default_factory=dict)
    #: normalised-input key -> index of the first row with that input
    first_input: FirstSeen = field(default_factory=FirstSeen)
    #: first row of an input -> (split number << 40 | index) of the first row of that input
    #: with a split; kept only for inputs that repeat or carry a split
    input_split: FirstSeen = field(default_factory=lambda: FirstSeen(wide=True))
    #: the splits named so far, by number (a set names few)
    split_names: dict[str, int] = field(default_factory=dict)
    #: which file each row is in, where that is not the set's own (a shard of a set in
    #: shards, a tests file a promptfoo config includes): a finding naming an earlier row
    #: names its file beside its line
    files: ShardStarts = field(default_factory=ShardStarts)

    @classmethod
    def from_header(cls, header: dict[str, Any] | None) -> SetState:
        if header is None:
            return cls()
        if not isinstance(header.get("caseFamilies"), list):
            return cls(header_known=True)
        families = {
            family["id"]: family
            for family in header["caseFamilies"]
            if isinstance(family, dict) and isinstance(family.get("id"), str)
        }
        return cls(families=families, header_known=True)

    def family_of(self, row: RowView) -> dict[str, Any] | None:
        name = row.case.get("caseFamily")
        if not isinstance(name, str) or self.families is None:
            return None
        return self.families.get(name)


def effective_evaluator(row: RowView, state: SetState) -> str | None:
    """The evaluator that grades a row: its own, else the one its case family names."""
    if row.evaluator is not None or "evaluator" in row.case:
        return row.evaluator
    family = state.family_of(row)
    inherited = family.get("evaluator") if family is not None else None
    return inherited if _member(inherited, EVALUATOR_TYPES) else None


# --- row rules -------------------------------------------------------------------------------

#: what a rule finds in one row; most rows give most rules nothing, which costs no allocation
Findings = Sequence[Issue]
NONE: Final[Findings] = ()


def check_schema(row: RowView, raw: Any) -> Iterator[Issue]:
    if accepts("row.schema.json")(raw):
        return  # compiled, the published schema accepts the row at a fraction of the cost
    for location, reason in _row_schema_findings(raw):
        yield row.issue("schema", *location, reason=reason)


#: rows up to this size (encoded) share the description of their schema findings: a broken
#: export repeats one defect on every row, and describing it is what costs
_MEMO_BYTES: Final = 4096


def _row_schema_findings(raw: Any) -> tuple[tuple[Location, str], ...]:
    try:
        encoded = orjson.dumps(raw, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # beyond orjson (a very large integer): described every time
        encoded = b""
    if not encoded or len(encoded) > _MEMO_BYTES:
        return tuple(schema_findings(validator_for("row.schema.json"), raw))
    return _memoised_row_findings(encoded)


@lru_cache(maxsize=1024)
def _memoised_row_findings(encoded: bytes) -> tuple[tuple[Location, str], ...]:
    raw = orjson.loads(encoded)
    return tuple(schema_findings(validator_for("row.schema.json"), raw))


def check_case_id(row: RowView, state: SetState) -> Findings:
    case_id = row.case.get("caseId")
    if row.id is not None and isinstance(case_id, str) and case_id != row.id:
        return [
            row.issue("case-id-mismatch", "metadata", "case", "caseId", case_id=case_id, id=row.id)
        ]
    return NONE


def check_duplicate_id(row: RowView, state: SetState) -> Findings:
    if row.id is None:
        return NONE
    return duplicate_id_issues(row, state, text_key(row.id))


def duplicate_id_issues(row: RowView, state: SetState, key: int) -> Findings:
    """The duplicate-id rule for a row with an id whose key is already known (a pool worker
    computed it)."""
    first = state.first_use.setdefault(key, row.index)
    if first == row.index:
        return NONE
    line = state.lines[first] if first < len(state.lines) else 0
    return [duplicate_id_issue(row, first, line, state.files(first))]


def duplicate_id_issue(
    row: RowView, first: int, first_line: int, first_file: str | None = None
) -> Issue:
    """``duplicate-id`` for a row whose id row ``first`` (on ``first_line``; 0: unknown; of
    ``first_file``, when not the set's own) had before."""
    where = _where(first_line, first_file)
    return row.issue("duplicate-id", "id", id=row.id, first_index=first, first_where=where)


def _where(line: int, file: str | None) -> str:
    """Where an earlier row is: " (line 5)", " (logs/part-1.jsonl line 5)", or nothing."""
    if file is None:
        return f" (line {line})" if line else ""
    return f" ({file} line {line})" if line else f" ({file})"


#: the codes whose findings name an earlier row by its id (see :func:`_row_where`)
NAMING_EARLIER_ROWS: Final = ("duplicate-input", "duplicate-input-across-splits")


def _row_where(state: SetState, index: int) -> str:
    """An earlier row as a finding names it: its index, its id and its line, as known."""
    line = state.lines[index] if index < len(state.lines) else 0
    return row_where(index, _row_id(state, index), line, state.files(index))


def row_where(index: int, row_id: str | None, line: int, file: str | None = None) -> str:
    """An earlier row as a finding names it: "row 3, 'r3' (line 5)"; no id or line (0) when
    not known."""
    named = f", {_shown_id(row_id)}" if row_id is not None else ""
    return f"row {index}{named}{_where(line, file)}"


def _row_id(state: SetState, index: int) -> str | None:
    return state.ids[index] if index < len(state.ids) else None


def _shown_id(row_id: str) -> str:
    # an id of a few hundred characters would drown the message
    return repr(row_id if len(row_id) <= _SHOWN_ID else row_id[: _SHOWN_ID - 1] + "…")


#: characters of an earlier row's id that a message shows
_SHOWN_ID: Final = 80


def check_duplicate_input(row: RowView, state: SetState) -> Findings:
    if "input" not in row.data:
        return NONE
    return duplicate_input_issues(row, state, input_key(row.data["input"]), split_of(row.data))


def check_inputs_across_splits(row: RowView, state: SetState) -> Findings:
    """:func:`check_duplicate_input` where only ``duplicate-input-across-splits`` is wanted (a
    conversion checks errors only): a row with no split can be no such finding, and is never
    the row one names (the first row of the input with a split), so its input is not read."""
    split = split_of(row.data)
    if split is None or "input" not in row.data:
        return NONE
    return duplicate_input_issues(row, state, input_key(row.data["input"]), split)


def duplicate_input_issues(
    row: RowView, state: SetState, key: int | None, split: str | None
) -> Findings:
    """The duplicate-input rule for a row whose input key and split are already known (a
    pool worker computed them)."""
    if key is None:
        return NONE
    first = state.first_input.setdefault(key, row.index)
    # no split named yet: nothing was recorded to look up
    seen_split = _split_seen(state, first + 1) if state.split_names else None
    if seen_split is None and split is not None:
        number = state.split_names.setdefault(split, len(state.split_names))
        state.input_split.setdefault(first + 1, number << _SPLIT_SHIFT | row.index)
    if first == row.index:
        return NONE
    if seen_split is not None and split is not None and seen_split[0] != split:
        return [across_splits_issue(row, _row_where(state, seen_split[1]), seen_split[0], split)]
    return [duplicate_input_issue(row, _row_where(state, first))]


def duplicate_input_issue(row: RowView, other: str) -> Issue:
    """``duplicate-input``: the row repeats the input of the row ``other`` names."""
    return row.issue("duplicate-input", "input", other=other)


def across_splits_issue(row: RowView, other: str, other_split: str, split: str) -> Issue:
    """``duplicate-input-across-splits``: the row, in ``split``, repeats the input of the
    row ``other`` names, the first of that input with a split (``other_split``)."""
    return row.issue(
        "duplicate-input-across-splits", "input", other=other, other_split=other_split, split=split
    )


#: where a split's number starts in an ``input_split`` value: row indices stay below 2**40
_SPLIT_SHIFT: Final = 40


def _split_seen(state: SetState, key: int) -> tuple[str, int] | None:
    packed = state.input_split.get(key)
    if packed is None:
        return None
    names = list(state.split_names)
    return names[packed >> _SPLIT_SHIFT], packed & ((1 << _SPLIT_SHIFT) - 1)


def evaluator_issue(oracle_type: str, evaluator: str, make: Callable[..., Issue]) -> Findings:
    """The admissibility finding for one pairing, built by ``make(code, **context)``."""
    verdict = admissibility.verdict(oracle_type, evaluator)  # type: ignore[arg-type]
    if verdict == "barred":
        return [
            make(
                "inadmissible-evaluator",
                oracle_type=oracle_type,
                evaluator=evaluator,
                reason=admissibility.bar_reason(oracle_type, evaluator),  # type: ignore[arg-type]
                admissible=", ".join(admissibility.admissible_evaluators(oracle_type)),  # type: ignore[arg-type]
            )
        ]
    if verdict == "conditional":
        conditions = admissibility.conditions(oracle_type, evaluator)  # type: ignore[arg-type]
        return [
            make(
                "conditional-evaluator",
                oracle_type=oracle_type,
                evaluator=evaluator,
                conditions=" and ".join(conditions),
            )
        ]
    return NONE


def check_evaluator(row: RowView, state: SetState) -> Findings:
    if row.oracle_type is None or row.evaluator is None:
        return NONE

    def make(code: str, **context: Any) -> Issue:
        return row.issue(code, "metadata", "case", "evaluator", **context)

    return evaluator_issue(row.oracle_type, row.evaluator, make)


def check_input(row: RowView, state: SetState) -> Findings:
    """A row with no input has no case to pose (see :func:`missing_input`); a row without
    the key at all is a schema finding."""
    what = missing_input(row.data.get("input", 0), row.case)
    return NONE if what is None else [row.issue("missing-input", "input", what=what)]


def check_expected_shape(row: RowView, state: SetState) -> Findings:
    if row.oracle_type is None:
        return NONE
    shapes = EXPECTED_SHAPES[row.oracle_type]
    present = "expected" in row.data
    if shapes is None:
        if not present:
            return NONE
        return [
            row.issue(
                "expected-shape",
                "expected",
                reason=f"{row.oracle_type} rows carry no expected value (the criteria belong in"
                " case.evaluationCriteria or case.expectedBehavior)"
                if row.oracle_type == "rubric"
                else f"{row.oracle_type} rows carry no expected value; describe the behaviour in"
                " case.expectedBehavior",
            )
        ]
    if not present:
        wanted = EXPECTED_HINTS.get(row.oracle_type, "the one correct output")
        return [
            row.issue(
                "expected-shape",
                "expected",
                reason=f"{row.oracle_type} rows need expected: {wanted}",
            )
        ]
    if not shapes:
        return NONE  # reference-answer: any JSON value is a reference answer
    expected = row.data["expected"]
    if not isinstance(expected, dict):
        return [
            row.issue(
                "expected-shape",
                "expected",
                reason=f"{row.oracle_type} expects {EXPECTED_HINTS[row.oracle_type]},"
                f" not {describe_value(expected)}",
            )
        ]
    if accepts("expected.schema.json", row.oracle_type)(expected):
        return NONE
    validator = validator_for("expected.schema.json", row.oracle_type)
    return [
        row.issue("expected-shape", "expected", *location, reason=reason)
        for location, reason in schema_findings(validator, expected)
    ]


def omitted_field_issues(holder: Any, make: Callable[..., Issue], *prefix: str | int) -> Findings:
    """An issue for each key of ``holder`` that names a field the schema leaves out, in any
    letter case or spelling (``priority``, ``Priority``, ``DIFFICULTY``)."""
    if not isinstance(holder, dict) or holder.keys() <= _clean_keys:
        return NONE
    found = [(key, name) for key in holder if (name := omitted_field(key)) is not None]
    if not found and len(_clean_keys) < _CLEAN_KEYS_KEPT:
        # the next holder with these keys is one comparison (a long key, rare, and kept by
        # the set, is looked at each time)
        _clean_keys.update(key for key in holder if len(key) <= _CLEAN_KEY_LENGTH)
    return [
        make(
            "omitted-field",
            *prefix,
            key,
            field=name if key == name else f"{key!r} ({name})",
            reason=OMITTED_FIELDS[name],
        )
        for key, name in found
    ] or NONE


#: keys that are never an omitted field, so most holders need no look at each key
_NOT_OMITTED: Final = frozenset(
    {"id", "input", "expected", "metadata", "case", *case_profile_fields()}
)
#: those keys, and the keys of holders already found to name no omitted field (a set's
#: metadata repeats its own few keys on every row), up to :data:`_CLEAN_KEYS_KEPT`
_clean_keys: set[str] = set(_NOT_OMITTED)
_CLEAN_KEYS_KEPT: Final = 4096
_CLEAN_KEY_LENGTH: Final = 128


def check_omitted_fields(row: RowView, state: SetState) -> Findings:
    found = [
        *omitted_field_issues(row.data, row.issue),
        *omitted_field_issues(row.data.get("metadata"), row.issue, "metadata"),
        *omitted_field_issues(row.case, row.issue, "metadata", "case"),
    ]
    return found or NONE


def check_starter(row: RowView, state: SetState) -> Findings:
    if not row.is_starter:
        return NONE
    provenance = row.case["provenance"]
    return [row.issue("starter-example", "metadata", "case", "provenance", provenance=provenance)]


#: where a case-family finding goes among its row's others: the first row of an undeclared
#: family, then each field's mismatch in this order, then the inherited evaluator (a pool
#: finds the first two apart from the rest, and puts them back in this order)
FAMILY_FIELDS: Final = ("oracleType", "evaluator")
UNDECLARED_PLACE: Final = 0
INHERITED_PLACE: Final = len(FAMILY_FIELDS) + 1


def check_case_family(row: RowView, state: SetState) -> Findings:
    name = row.case.get("caseFamily")
    if not isinstance(name, str):
        return NONE
    unknown = unknown_family_issue(row, state, name)
    if unknown is not None:
        return [unknown]
    firsts = state.family_firsts.get(name)
    new = firsts is None
    if firsts is None:
        firsts = state.family_firsts[name] = {}
    found = declared_family_issues(row, state, name) if state.families is not None else []
    undeclared = new and state.families is None and state.header_known
    fields = family_open_fields(row, state, name)
    differ = family_values_differ(firsts, row.index, row.id, row.case, fields) if fields else ()
    if undeclared or differ:
        found += first_row_issues(row, name, differ, undeclared=undeclared)
    if not found:
        return NONE
    found.sort(key=lambda item: item[0])
    return [issue for _, issue in found]


def unknown_family_issue(row: RowView, state: SetState, name: str) -> Issue | None:
    """``unknown-case-family`` when the set declares its families and not this one; such a
    row is held to nothing else of its family."""
    if state.families is None or name in state.families:
        return None
    return row.issue(
        "unknown-case-family",
        "metadata",
        "case",
        "caseFamily",
        family=name,
        defined=", ".join(state.families) or "none",
    )


def family_open_fields(row: RowView, state: SetState, name: str) -> list[str]:
    """The row's family fields its declared family does not give: the family's first row
    that gives one sets it for the rest."""
    case = row.case
    family = state.families.get(name) if state.families is not None else None
    if family is None:
        return [key for key in FAMILY_FIELDS if key in case]
    return [key for key in FAMILY_FIELDS if key in case and family.get(key) is None]


def declared_family_issues(row: RowView, state: SetState, name: str) -> list[tuple[int, Issue]]:
    """The findings the declared family gives one row alone, by their place among the
    row's case-family findings: a field that differs from the family's, an inherited
    evaluator."""
    family = state.families.get(name) if state.families is not None else None
    if family is None:
        return []
    found: list[tuple[int, Issue]] = []
    for place, key in enumerate(FAMILY_FIELDS, start=1):
        declared = family.get(key)
        if key in row.case and declared is not None and row.case[key] != declared:
            found.append((place, _family_mismatch(row, key, name, dumps_text(declared))))
    evaluator = family.get("evaluator")
    if "evaluator" not in row.case and evaluator is not None:
        shown = evaluator if isinstance(evaluator, str) else dumps_text(evaluator)
        inherited = row.issue(
            "inherited-evaluator", "metadata", "case", "evaluator", evaluator=shown, family=name
        )
        found.append((INHERITED_PLACE, inherited))
    return found


#: what a case family's rows gave first, by field: (value, row index, row id)
FamilyFirsts = dict[str, tuple[Any, int, str | None]]


def family_values_differ(
    firsts: FamilyFirsts,
    index: int,
    row_id: str | None,
    case: Mapping[str, Any],
    fields: Iterable[str],
) -> list[tuple[str, tuple[Any, int, str | None]]]:
    """Note the values a row's case profile gives its family's open ``fields`` (the first
    row to give a field sets it); the fields whose value differs from the first, with it."""
    differ = []
    for key in fields:
        value = case[key]
        first = firsts.setdefault(key, (value, index, row_id))
        if first[1] != index and first[0] != value:
            differ.append((key, first))
    return differ


def first_row_issues(
    row: RowView,
    name: str,
    differ: Iterable[tuple[str, tuple[Any, int, str | None]]],
    *,
    undeclared: bool,
) -> list[tuple[int, Issue]]:
    """The findings that depend on the family's earlier rows, by their place: the family's
    first row in a set that declares none (``undeclared``), and each field whose value
    differs from the one the family's first row to give it gave (``differ``)."""
    found: list[tuple[int, Issue]] = []
    if undeclared:
        found.append(
            (
                UNDECLARED_PLACE,
                row.issue("undeclared-case-family", "metadata", "case", "caseFamily", family=name),
            )
        )
    for key, first in differ:
        by = f" (from row {first[1]}" + (f", {first[2]!r})" if first[2] else ")")
        place = FAMILY_FIELDS.index(key) + 1
        found.append((place, _family_mismatch(row, key, name, dumps_text(first[0]) + by)))
    return found


def _family_mismatch(row: RowView, key: str, family: str, family_value: str) -> Issue:
    return row.issue(
        "case-family-mismatch",
        "metadata",
        "case",
        key,
        field=key,
        row_value=dumps_text(row.case[key]),
        family=family,
        family_value=family_value,
    )


def check_reviewer_expertise(row: RowView, state: SetState) -> Findings:
    evaluator = effective_evaluator(row, state)
    graded_by_expert = evaluator == "human-expert" or (
        evaluator is None and row.oracle_type == "expected-behavior-only"
    )
    expertise = row.case.get("reviewerExpertise")
    if graded_by_expert and not (isinstance(expertise, str) and expertise.strip()):
        return [row.issue("missing-reviewer-expertise", "metadata", "case", "reviewerExpertise")]
    return NONE


def check_derived_values(row: RowView, state: SetState) -> Findings:
    imported = row.imported()
    if not imported:
        return NONE
    source = imported.get("format", "another format")
    return [
        row.issue(
            "derived-value",
            *[part for part in str(path).split(".") if part],
            field=path,
            format=source,
            how=how,
        )
        for path, how in imported["derived"].items()
    ]


@dataclass(frozen=True)
class RowRule:
    codes: tuple[str, ...]
    check: Callable[[RowView, SetState], Findings]


ROW_RULES: Final[tuple[RowRule, ...]] = (
    RowRule(("case-id-mismatch",), check_case_id),
    RowRule(("duplicate-id",), check_duplicate_id),
    RowRule(("duplicate-input", "duplicate-input-across-splits"), check_duplicate_input),
    RowRule(("inadmissible-evaluator", "conditional-evaluator"), check_evaluator),
    RowRule(("missing-input",), check_input),
    RowRule(("expected-shape",), check_expected_shape),
    RowRule(("omitted-field",), check_omitted_fields),
    RowRule(("starter-example",), check_starter),
    RowRule(
        (
            "case-family-mismatch",
            "unknown-case-family",
            "undeclared-case-family",
            "inherited-evaluator",
        ),
        check_case_family,
    ),
    RowRule(("missing-reviewer-expertise",), check_reviewer_expertise),
    RowRule(("rubric-without-criteria",), check_rubric_criteria),
    RowRule(("derived-value",), check_derived_values),
    # apart, so that a conversion (errors only) runs the first alone
    RowRule(("check-unusable",), unusable_check_issues),
    RowRule(
        ("rule-not-applied", "pass-logic-unstated"),
        lambda row, state: grading_rule_issues(row, effective_evaluator(row, state)),
    ),
)


# --- set-level rules -------------------------------------------------------------------------


def _header_issue(code: str, *location: str | int, **context: Any) -> Issue:
    return make_issue(code, path=jsonpath.join("$", location), **context)


def header_issues(header: dict[str, Any]) -> Iterator[Issue]:
    """Findings on the set-level fields: schema, case families, omitted fields."""
    document = {**header, "rows": []}
    if not accepts("eval-set.schema.json")(document):  # compiled: the common case is cheap
        for location, reason in schema_findings(validator_for("eval-set.schema.json"), document):
            yield _header_issue("schema", *location, reason=reason)
    yield from omitted_field_issues(header, _header_issue)
    families = header.get("caseFamilies")
    if not isinstance(families, list):
        return
    seen: set[str] = set()
    for position, family in enumerate(families):
        if not isinstance(family, dict):
            continue
        yield from omitted_field_issues(family, _header_issue, "caseFamilies", position)
        family_id = family.get("id")
        if isinstance(family_id, str):
            if family_id in seen:
                yield _header_issue(
                    "duplicate-case-family", "caseFamilies", position, "id", family=family_id
                )
            seen.add(family_id)
        oracle_type, evaluator = family.get("oracleType"), family.get("evaluator")
        if (
            isinstance(oracle_type, str)
            and isinstance(evaluator, str)
            and _member(oracle_type, ORACLE_TYPES)
            and _member(evaluator, EVALUATOR_TYPES)
        ):

            def make(code: str, _position: int = position, **context: Any) -> Issue:
                return _header_issue(code, "caseFamilies", _position, "evaluator", **context)

            yield from evaluator_issue(oracle_type, evaluator, make)
