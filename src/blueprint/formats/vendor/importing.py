"""The import side of a vendor codec: the payload read back, and rows inferred from records."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.core.model import EXPECTED_SHAPES, OMITTED_FIELDS, fits, omitted_field
from blueprint.formats._io import read_text
from blueprint.formats.base import MergedRecord, UnreadableRow
from blueprint.formats.canonical_json import element_lines
from blueprint.formats.mapping import NAMESPACE
from blueprint.formats.native import ABSENT
from blueprint.io import jsonvalues
from blueprint.io.firstseen import FirstSeen, text_key

IMPORT_EXTENSION: Final = "blueprint-import"

#: metadata keys a vendor record may have that cannot be row metadata keys: the case
#: profile's own key, the payload's, and the fields the schema leaves out on purpose (in any
#: letter case: see :func:`~blueprint.core.model.omitted_field`). Import keeps them in the
#: extension (the vendor's metadata is restored whole on export).
RESERVED_METADATA: Final = frozenset({"case", NAMESPACE, *OMITTED_FIELDS})


# --- the payload: the case profile, and what the record cannot give back -------------------


def payload_of(metadata: Any) -> dict[str, Any] | None:
    """The blueprint payload inside vendor metadata, when the record came from Blueprint."""
    if isinstance(metadata, dict):
        payload = metadata.get(NAMESPACE)
        if isinstance(payload, str):  # kept as JSON text where the vendor would load strings
            try:
                payload = jsonvalues.loads(payload)
            except jsonvalues.JSONError:
                return None
        if isinstance(payload, dict) and (
            isinstance(payload.get("case"), dict) or kept_form(payload)
        ):
            return payload
    return None


def kept_form(payload: dict[str, Any]) -> bool:
    """Whether a payload is the compact bookkeeping of a record written back to its own
    format (a digest and the changes from the row it reads back as), not a case profile."""
    return isinstance(payload.get("digest"), str) and isinstance(payload.get("patch"), list)


@dataclass
class Values:
    """The canonical values a record gives back by itself, without the payload."""

    input: Any = ABSENT
    expected: Any = ABSENT
    extras: dict[str, Any] = field(default_factory=dict)


#: the payload's keys and the JSON types each must have
_PAYLOAD_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "id": (str,),
    "case": (dict,),
    "metadata": (dict,),
    "notMetadata": (list,),
    "native": (dict,),
    "noExpected": (bool,),
}


def _check_payload(payload: dict[str, Any]) -> None:
    """Refuse a payload someone damaged, with what is wrong (read as an unreadable row)."""
    for key, types in _PAYLOAD_TYPES.items():
        if key in payload and not isinstance(payload[key], types):
            raise ValueError(f"its blueprint metadata is damaged: {key} has the wrong type")
    if not all(isinstance(name, str) for name in payload.get("notMetadata", [])):
        raise ValueError("its blueprint metadata is damaged: notMetadata holds a non-text key")
    native_part = payload.get("native", {})
    for key, types in (("entries", (dict,)), ("keys", (list, type(None))), ("more", (dict,))):
        if key in native_part and not isinstance(native_part[key], types):
            raise ValueError(f"its blueprint metadata is damaged: native.{key} has the wrong type")


def _strip_payload(metadata: Any) -> Any:
    """Vendor metadata without the payload (ABSENT when nothing else was there)."""
    if not isinstance(metadata, dict) or NAMESPACE not in metadata:
        return metadata
    payload = payload_of(metadata)
    if payload is None:
        return metadata  # the vendor's own key of that name, not a payload
    rest = {key: value for key, value in metadata.items() if key != NAMESPACE}
    if "displaced" in payload:
        rest[NAMESPACE] = payload["displaced"]
    if not rest:
        was = payload.get("metadataWas")
        if was == "absent":
            return ABSENT
        if was == "null":
            return None
    return rest


# --- reading ---------------------------------------------------------------------------------


#: what a reader gives a record by record: (its line, the record), a record that cannot be
#: read, or one the format merges into another's row (counted, never silently dropped)
Records = Iterable[tuple[int | None, Any] | UnreadableRow | MergedRecord]


def imported_row(
    *,
    row_id: str,
    input_value: Any,
    expected: Any,
    oracle_type: str,
    expected_behavior: str,
    format_name: str,
    derived: dict[str, str],
    case: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A canonical row from a vendor record that did not come from Blueprint.

    ``derived`` maps each field path that had to be inferred to how it was inferred; the
    validator reports each one as ``derived-value``.
    """
    profile: dict[str, Any] = {
        "caseId": row_id,
        "oracleType": oracle_type,
        "expectedBehavior": expected_behavior,
        "provenance": "imported",
        **(case or {}),
    }
    profile["extensions"] = {IMPORT_EXTENSION: {"format": format_name, "derived": derived}}
    row: dict[str, Any] = {"id": row_id, "input": input_value}
    if expected is not ABSENT:
        row["expected"] = expected
    row["metadata"] = {"case": profile, **(metadata or {})}
    return row


def extras_of(metadata: Any) -> dict[str, Any]:
    """The row metadata a vendor's metadata object gives: every key but the reserved ones."""
    if not isinstance(metadata, dict):
        return {}
    return {
        key: value
        for key, value in metadata.items()
        if key not in RESERVED_METADATA and omitted_field(key) is None
    }


def oracle_for_expected(expected: Any) -> str:
    """The oracle type a bare expected value most plausibly has: the shape of another oracle
    type only when the value fits it whole, else a reference answer (any value is one)."""
    for oracle_type in ("acceptable-set", "expected-tool-calls", "expected-final-state"):
        shapes = EXPECTED_SHAPES[oracle_type] or ()
        if any(fits(model, expected) for model in shapes):
            return oracle_type
    return "reference-answer"


def read_json_document(path: Path) -> Any:
    return read_json_text(path)[0]


def read_json_text(path: Path) -> tuple[Any, str]:
    """A JSON file's document and its text, for a reader that also finds the lines its
    records start on (:func:`~blueprint.formats.canonical_json.element_lines`)."""
    text = read_text(path)
    try:
        return jsonvalues.loads(text), text
    except jsonvalues.JSONError as error:
        raise ParseError(path, error.reason, line=error.line, column=error.column) from None


def json_array_records(path: Path, what: str) -> list[tuple[int | None, Any]]:
    """The records of a JSON array, each with the line it starts on."""
    document, text = read_json_text(path)
    if not isinstance(document, list):
        raise ParseError(path, f"a JSON file of {what}s is an array of them")
    lines = element_lines(text, len(document))
    del text  # a large file should not stay in memory twice
    return list(zip(lines, document, strict=True))


#: repeated ids whose next number is remembered, and their characters, at most (memory stays
#: flat in a file of many, or of long ones)
_REMEMBERED_REPEATS: Final = 65536
_REMEMBERED_CHARACTERS: Final = 4 * 2**20


class _UniqueIds:
    """Makes row ids unique while reading: a repeat becomes ``id-2`` and is flagged.

    The ids read are kept as 64-bit keys in a flat table (:class:`FirstSeen`), so that reading
    or exporting millions of rows holds no id; two distinct ids share a key about once in
    2**64 / rows**2 files. A repeated id remembers the number it was last given, so that a
    file repeating one id over and over is renamed in one pass, not in a pass a repeat."""

    __slots__ = ("_added", "_first", "_next", "_next_characters", "_seen")

    def __init__(self) -> None:
        # most are asked about one id (a record read back on its own): the table is made
        # at the second
        self._first: str | None = None
        self._seen: FirstSeen | None = None
        self._added = 0
        #: the number to try first for a repeated id: every lower one is taken (an id once
        #: read stays read), so the renaming is the same as counting from 2
        self._next: dict[str, int] = {}
        self._next_characters = 0

    def _add(self, row_id: str) -> bool:
        """Note ``row_id``; False when it was already there."""
        if self._seen is None:
            if self._first is None:
                self._first = row_id
                return True
            if row_id == self._first:
                return False
            self._seen = FirstSeen(slots=16)
            self._seen.setdefault(text_key(self._first), 0)
        # a new id is stored with a number no id before it has, so the answer says which
        number = self._added + 1
        if self._seen.setdefault(text_key(row_id), number) != number:
            return False
        self._added = number  # counted only when added: a long run of repeats asks often
        return True

    def settle(self, row: dict[str, Any], format_name: str) -> None:
        row_id = row.get("id")
        if not isinstance(row_id, str):
            return
        if self._add(row_id):
            return
        number = self._next.get(row_id, 2)
        while not self._add(f"{row_id}-{number}"):
            number += 1
        if row_id not in self._next:
            self._next_characters += len(row_id)
            if (
                len(self._next) >= _REMEMBERED_REPEATS
                or self._next_characters > _REMEMBERED_CHARACTERS
            ):
                # forgotten, a repeat counts from 2 again: slower, and the same names
                self._next.clear()
                self._next_characters = len(row_id)
        self._next[row_id] = number + 1
        unique = f"{row_id}-{number}"
        row["id"] = unique
        case = row["metadata"]["case"]
        case["caseId"] = unique
        # a damaged profile is left as it came (validation says why); only a missing part is added
        extensions = case.setdefault("extensions", {})
        if isinstance(extensions, dict):
            record = extensions.setdefault(IMPORT_EXTENSION, {"format": format_name})
            derived = record.setdefault("derived", {}) if isinstance(record, dict) else None
            if isinstance(derived, dict):
                derived["id"] = (
                    f"the id {row_id!r} repeats in the file; "
                    "this row was renamed to keep ids unique"
                )
