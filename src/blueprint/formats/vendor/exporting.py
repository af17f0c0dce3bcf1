"""The export side of a vendor codec: valid rows taken apart, and what the export loses."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any, Final, TypeVar

from pydantic import ValidationError

from blueprint.core import admissibility, jsonpath
from blueprint.core.errors import BlueprintError, EveryRowExcluded, LossyExportRefused
from blueprint.core.model import (
    EVALUATOR_TYPES,
    EXPECTED_SHAPES,
    STARTER_PROVENANCES,
    Row,
    fits,
)
from blueprint.formats import native
from blueprint.formats.base import ExportResult, LossyField, WriteOptions
from blueprint.formats.mapping import VendorMapping
from blueprint.formats.native import ABSENT
from blueprint.io.idlist import IdList, id_entry

HUMAN_REVIEW: Final = "human-review"
STARTER_NOTE: Final = "starter example, not validated gold"


def starter_note(rows: str, how: str) -> str:
    """The note of an export whose format has no field to mark starter rows in."""
    return f"starter {rows} are examples, not validated gold: {how}; review them before use"


#: sets of lost fields an export remembers the lists of (free-form metadata may make a set a
#: row, so memory stays flat past it)
_REMEMBERED_LOSSES: Final = 1024


class InvalidRowForExport(BlueprintError, ValueError):
    """A row that breaks the schema cannot be mapped to a vendor format reliably."""

    exit_code = 1


@dataclass(frozen=True)
class ExportRow:
    """A valid canonical row, taken apart for mapping."""

    data: dict[str, Any]
    id: str
    case: dict[str, Any]
    #: metadata keys other than `case`
    extra: dict[str, Any]
    #: the evaluator the row's case family names, which the row inherits when it names none
    family_evaluator: str | None = None
    # read many times a row by an export: taken once, when the row is taken apart
    oracle_type: str = ""
    #: the evaluator that grades the row: its own, else its case family's
    evaluator: str | None = None

    @classmethod
    def of(cls, data: dict[str, Any], family_evaluator: str | None = None) -> ExportRow:
        metadata = data["metadata"]
        case = metadata["case"]
        extra = {key: value for key, value in metadata.items() if key != "case"}
        evaluator = case.get("evaluator", family_evaluator)
        return cls(
            data, data["id"], case, extra, family_evaluator, str(case["oracleType"]), evaluator
        )

    @property
    def has_expected(self) -> bool:
        return "expected" in self.data

    @property
    def expected(self) -> Any:
        return self.data.get("expected")

    @property
    def input(self) -> Any:
        return self.data["input"]

    @property
    def starter(self) -> bool:
        return self.case.get("provenance") in STARTER_PROVENANCES

    @property
    def human_only(self) -> bool:
        return not admissibility.automatically_gradable(self.oracle_type, self.evaluator)

    def extension(self, format_name: str) -> dict[str, Any] | None:
        """What an import from ``format_name`` kept of the vendor's record, if it came so."""
        extensions = self.case.get("extensions")
        found = extensions.get(format_name) if isinstance(extensions, dict) else None
        return found if isinstance(found, dict) else None

    def labels(self) -> dict[str, Any]:
        """Plain metadata keys a vendor can filter on; the payload holds the full profile."""
        labels: dict[str, Any] = {
            "oracleType": self.oracle_type,
            "provenance": self.case["provenance"],
        }
        if "caseFamily" in self.case:
            labels["caseFamily"] = self.case["caseFamily"]
        if self.starter:
            labels["starterExample"] = True
        if self.human_only:
            labels["humanReview"] = True
        return labels


def family_evaluators(header: dict[str, Any]) -> dict[str, str]:
    """The evaluator each declared case family names, by family id."""
    families = header.get("caseFamilies")
    return {
        family["id"]: family["evaluator"]
        for family in (families if isinstance(families, list) else [])
        if isinstance(family, dict)
        and isinstance(family.get("id"), str)
        and family.get("evaluator") in EVALUATOR_TYPES
    }


T = TypeVar("T")

#: rows an export takes through each of its steps at a time (see in_batches)
BATCH: Final = 256


def in_batches(items: Iterable[T]) -> Iterator[list[T]]:
    """``items`` in lists of :data:`BATCH`. An export takes a batch through one step (reading,
    validating and taking rows apart; making records; encoding them) before the next, so each
    step's code and data are still in the processor's caches from the row before: in one
    measurement, promptfoo's and omk's writers cost some 7 µs a row less than a row at a
    time. Memory holds one batch."""
    iterator = iter(items)
    while batch := list(islice(iterator, BATCH)):
        yield batch


def export_rows(
    rows: Iterable[Any],
    format_name: str,
    header: dict[str, Any] | None = None,
    accepted: Callable[[Any], bool] | None = None,
) -> Iterator[ExportRow]:
    """Check each row against the schema and take it apart; a broken row stops the export.

    Rows that name no evaluator inherit their case family's, from ``header``. A row that
    ``accepted`` says the validator accepted is not checked against the schema again.
    """
    inherited = family_evaluators(header or {})
    for index, data in enumerate(rows):
        if accepted is None or not accepted(data):
            _require_valid(data, index, format_name)
        case = data["metadata"]["case"]
        exported = ExportRow.of(data, inherited.get(case.get("caseFamily", "")))
        evaluator = exported.evaluator
        barred = evaluator and admissibility.verdict(case["oracleType"], evaluator) == "barred"  # type: ignore[arg-type]
        if barred:
            whose = "names" if "evaluator" in case else "inherits from its case family"
            raise InvalidRowForExport(
                f"row {index} ({data['id']!r}) {whose} the evaluator {evaluator}, which"
                f" {case['oracleType']} bars; fix the set first (blueprint validate;"
                " --allow-invalid writes canonical formats only)"
            )
        yield exported


def _require_valid(data: Any, index: int, format_name: str) -> None:
    """Refuse a row that breaks the schema, or whose expected value does not fit its oracle
    type: no vendor record can be made of it reliably."""
    try:
        Row.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        row_id = data.get("id") if isinstance(data, dict) else None
        raise InvalidRowForExport(
            f"row {index} ({row_id!r}) is not a valid row ({where}: {first['msg']});"
            f" a {format_name} export needs a valid set: run blueprint validate"
            " (--allow-invalid writes canonical formats only)"
        ) from None
    case = data["metadata"]["case"]
    shapes = EXPECTED_SHAPES[case["oracleType"]]
    shaped = (
        "expected" not in data
        if shapes is None
        else "expected" in data and (not shapes or any(fits(m, data["expected"]) for m in shapes))
    )
    if not shaped:
        raise InvalidRowForExport(
            f"row {index} ({data['id']!r}): its expected value does not fit the oracle type"
            f" {case['oracleType']}; a {format_name} export needs a valid set: run"
            " blueprint validate (--allow-invalid writes canonical formats only)"
        )


#: the content parts that carry an image, audio, video or a document, by their type: Inspect's
#: (``{"type": "image", "image": ...}``), OpenAI's chat and response parts (``image_url``,
#: ``input_audio``, ``file``) and Anthropic's (``{"type": "image", "source": ...}``)
MEDIA_TYPES: Final = {
    "image": "image",
    "image_url": "image",
    "input_image": "image",
    "audio": "audio",
    "input_audio": "audio",
    "video": "video",
    "document": "document",
    "file": "document",
    "input_file": "document",
}
#: the keys that hold a part's media (one of them is there, besides its type)
_MEDIA_KEYS: Final = frozenset(MEDIA_TYPES) | {"source", "url", "data", "file_data", "file_id"}
_KINDS: Final = ("image", "audio", "video", "document")


def media_in(value: Any) -> tuple[str, ...]:
    """The kinds of media (image, audio, video, document) an input holds as content parts,
    in that order; () for text, and for an input with none.

    Every object and list in the input is looked at once, without recursion (an export asks
    of every row whose input is not text: a microsecond or so for a chat or an object of
    named inputs)."""
    if type(value) is not dict and type(value) is not list:
        return ()
    found: set[str] = set()
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        if type(item) is dict:
            if "type" in item:
                kind = MEDIA_TYPES.get(item["type"]) if type(item["type"]) is str else None
                if kind is not None and not _MEDIA_KEYS.isdisjoint(item):
                    found.add(kind)
                    continue
            items: Iterable[Any] = item.values()
        else:
            items = item
        for each in items:
            if type(each) is dict or type(each) is list:
                push(each)
    return tuple(kind for kind in _KINDS if kind in found) if found else ()


@dataclass
class ExportTally:
    """What an export left out, dropped or weakened, by kind, for the lossy report (the
    set-level fields it drops come from the mapping file)."""

    mapping: VendorMapping
    # the ids of the rows each loss names, kept compact (and on disk past a size), so that an
    # export's memory stays flat however many rows lose a field
    excluded: dict[str, IdList] = field(default_factory=dict)
    dropped: dict[tuple[str, str], IdList] = field(default_factory=dict)
    weakened: dict[tuple[str, str], IdList] = field(default_factory=dict)
    #: set-level fields the export wrote (so they are not reported as lost)
    set_written: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    written: int = 0
    #: what a codec remembers from row to row of one export
    memo: dict[str, Any] = field(default_factory=dict)
    #: the lists of dropped ids that each set of lost fields goes to (see drop_fields)
    drop_lists: dict[tuple[tuple[str, ...], str], list[IdList]] = field(default_factory=dict)

    def exclude(self, kind: str, row: ExportRow) -> None:
        _named(self.excluded, kind).append(row.id)

    def note_rows(self, key: str, row: ExportRow, sentence: Callable[[str], str]) -> None:
        """One note about some rows, kept up to date as they come: ``sentence`` is given
        how many there are and the first few ids ("3 row(s) (a, b, c)")."""
        counted = self.memo.setdefault(key, {"at": len(self.notes), "ids": [], "count": 0})
        if not counted["count"]:
            self.notes.append("")
        counted["count"] += 1
        if len(counted["ids"]) < 5:
            counted["ids"].append(row.id)
        more = f" and {counted['count'] - 5} more" if counted["count"] > 5 else ""
        rows = f"{counted['count']} row(s) ({', '.join(counted['ids'])}{more})"
        self.notes[counted["at"]] = sentence(rows)

    def drop(self, path: str, reason: str, row: ExportRow) -> None:
        """A field of this row that the export could not write as it is."""
        _named(self.dropped, (path, reason)).append(row.id)

    def drop_fields(self, paths: list[str], row: ExportRow) -> None:
        """:meth:`drop` each field, with the reason the mapping gives for it and the row's
        oracle type. Rows of one oracle type tend to lose the same fields, so the lists that
        a set of fields and an oracle type go to are looked up once."""
        if not paths:
            return
        key = (tuple(paths), row.oracle_type)
        lists = self.drop_lists.get(key)
        if lists is None:
            if len(self.drop_lists) >= _REMEMBERED_LOSSES:
                self.drop_lists.clear()
            reason = self.mapping.row_loss_reason
            lists = self.drop_lists[key] = [
                _named(self.dropped, (path, reason(path, row.oracle_type))) for path in paths
            ]
        encoded = id_entry(row.id)
        for ids in lists:
            ids.append(row.id, encoded)

    def weaken(self, row: ExportRow) -> None:
        """The mapping file's rules that this row's record leaves unenforced."""
        for rule in self.mapping.weakened_rules(row.data, row.oracle_type, row.evaluator):
            _named(self.weakened, (rule.field, rule.reason)).append(row.id)

    def weaken_rule(self, path: str, reason: str, row: ExportRow) -> None:
        """A rule this row's record leaves unenforced, which the codec found itself."""
        _named(self.weakened, (path, reason)).append(row.id)

    def weaken_media(self, row: ExportRow) -> None:
        """For a format whose model takes text only (the mapping's ``media``): an image,
        audio, video or document in the row's input, which its model gets as JSON text."""
        reason = self.mapping.media
        if reason is None:
            return
        kinds = media_in(row.input)
        if kinds:
            listed = kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} and {kinds[-1]}"
            self.weaken_rule("input", f"{listed} content in the input: {reason}", row)

    def merge(self, other: ExportTally) -> None:
        """Take in what an export tried aside found (its exclusions, drops and weakenings)."""
        for found, merged in (
            (other.excluded, self.excluded),
            (other.dropped, self.dropped),
            (other.weakened, self.weakened),
        ):
            for key, ids in found.items():
                _named(merged, key).extend(ids)
        self.notes += other.notes

    def lossy(self, header: dict[str, Any], derived: frozenset[str]) -> list[LossyField]:
        # set-level values the reader made up (a name taken from the file) are not losses
        # and the text kept of the file a set was read from is how it was written, not what
        # the set says: no format loses it (diff leaves it out too)
        real = {
            key: value
            for key, value in native.without_kept_text(header).items()
            if key not in derived
        }
        losses = self.mapping.set_loss(real, frozenset(self.set_written))
        losses += [self.mapping.exclusion(kind, ids) for kind, ids in self.excluded.items()]
        losses += [LossyField(path, reason, ids) for (path, reason), ids in self.dropped.items()]
        losses += [
            LossyField(path, reason, ids, kind="weakened")
            for (path, reason), ids in self.weakened.items()
        ]
        return losses

    def refuse(self, header: dict[str, Any], options: WriteOptions) -> list[LossyField]:
        """What the export lost; raises when the options refuse that loss, or when it left
        out every row of a set that had rows (an empty set writes an empty file) unless
        ``allow_empty`` says to write that."""
        lossy = self.lossy(header, options.derived_fields)
        if options.strict and lossy:
            raise LossyExportRefused(self.mapping.format, lossy)
        if not self.written and self.excluded and not options.allow_empty:
            raise EveryRowExcluded(self.mapping.format, lossy)
        return lossy

    def finish(
        self, header: dict[str, Any], files: list[Path], options: WriteOptions
    ) -> ExportResult:
        """The export result; raises (so nothing is committed) for a refused strict export."""
        lossy = self.refuse(header, options)
        return ExportResult(
            format=self.mapping.format,
            files=files,
            rows=self.written,
            lossy=lossy,
            notes=self.notes,
        )


@dataclass(frozen=True)
class WriteContext:
    """What a record writer may need beyond the row: the set, the options, the file's form."""

    header: dict[str, Any]
    options: WriteOptions
    form: str
    #: what the set says for every record of the format (promptfoo's defaultTest)
    suite: Any = None
    #: the file being written
    path: Path | None = None
    #: what one write keeps across its records (a format's running checks)
    state: dict[str, Any] = field(default_factory=dict)
    #: the records of starter rows not yet encoded, by identity, for a format that marks
    #: them outside the record (a comment beside it), where the record has no place
    starters: dict[int, Any] = field(default_factory=dict)

    def remember_starter(self, record: Any) -> None:
        self.starters[id(record)] = record

    def is_starter(self, record: Any) -> bool:
        """Whether ``record`` was remembered as a starter row's; forgotten once asked."""
        return self.starters.pop(id(record), None) is record


@dataclass(frozen=True)
class Framing:
    """The bytes around and between exported records."""

    opening: bytes = b""
    first: bytes = b""
    between: bytes = b""
    closing: bytes = b""
    #: written instead of ``closing`` when no record was written
    empty: bytes = b""


JSON_LINES: Final = Framing(between=b"\n", closing=b"\n")
JSON_ARRAY: Final = Framing(
    opening=b"[", first=b"\n  ", between=b",\n  ", closing=b"\n]\n", empty=b"]\n"
)


def changed_fields(row: dict[str, Any], again: dict[str, Any]) -> list[str]:
    """The fields of ``row`` that ``again`` (the row read back) does not give back as they
    were: top-level fields, the keys of ``metadata`` and the keys of its case profile (an
    object on one side only is one changed field)."""
    changed: list[str] = []

    def compare(before: dict[str, Any], after: dict[str, Any], prefix: str, inner: str) -> None:
        for key in dict.fromkeys([*before, *after]):
            old, new = before.get(key, ABSENT), after.get(key, ABSENT)
            if key == inner and isinstance(old, dict) and isinstance(new, dict):
                continue
            if not native.same(old, new):
                changed.append(_field_name(prefix, key))

    compare(row, again, "$", "metadata")
    metadata, metadata_again = row.get("metadata"), again.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata_again, dict):
        compare(metadata, metadata_again, "$.metadata", "case")
        case, case_again = metadata.get("case"), metadata_again.get("case")
        if isinstance(case, dict) and isinstance(case_again, dict):
            compare(case, case_again, "$.metadata.case", "")
    return changed


def _named(table: dict[Any, IdList], key: Any) -> IdList:
    """The ids kept under ``key``, a new list the first time."""
    ids = table.get(key)
    if ids is None:
        ids = table[key] = IdList()
    return ids


@lru_cache(maxsize=4096)
def _field_name(prefix: str, key: str) -> str:
    """A changed field, named as the diff names it (``metadata['odd key']``), so that the two
    always agree; the same few fields change on every row of a set, hence the memo."""
    return jsonpath.join(prefix, [key]).removeprefix("$.")


def compare_records(before: list[Any], after: list[Any], what: str = "record") -> list[str]:
    """The differences between two lists of records, key by key, for a person to read."""
    changes = []
    if len(before) != len(after):
        changes.append(f"{len(before)} {what}s became {len(after)}")
    for number, (old, new) in enumerate(zip(before, after, strict=False), start=1):
        if native.same(old, new):
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            keys = [
                key
                for key in dict.fromkeys([*old, *new])
                if not native.same(old.get(key, ABSENT), new.get(key, ABSENT))
            ]
            changes.append(f"{what} {number}: {', '.join(keys)} changed")
        else:
            changes.append(f"{what} {number} changed")
    return changes
