"""Native records: keeping what a vendor file says, so it goes back as it came in.

Importing a vendor record reads some of its keys into canonical fields (the *mapped* keys:
a promptfoo test's ``vars`` become the row's ``input``). Each codec describes its records
with a :class:`NativeShape`; this module keeps the rest in ``case.extensions.<format>``:

``record``
    every key the import does not read, verbatim, written back on export to that format;
``native``
    one entry per mapped key, with ``from``: a fingerprint of the canonical values that were
    read from it. Where the export would not give back the vendor's own value (an assertion
    list, a var holding a live template), the entry keeps it as ``value`` (or ``absent``
    when the vendor's record had no such key). Export restores the vendor's value while the
    fingerprint still matches, and regenerates the key from the row once those values have
    been edited, so an edit made in Blueprint always reaches the vendor;
``keys``
    the record's keys in their original order.

When a row goes back to the format it came from, the metadata payload leaves this extension
out, because the record itself carries it: the payload lists only the fingerprints, the key
order and the entries of edited keys, and reading rebuilds the extension from the record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.formats._io import read_text
from blueprint.io import jsonvalues


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


#: a key or value that is not there (distinct from JSON null)
ABSENT: Final[Any] = _Absent()

#: one canonical value a mapped key is read into: "id", "input", "expected", "extras" (row
#: metadata other than the case profile) or "case.<field>"
Dependency = str


@dataclass(frozen=True)
class NativeShape:
    """How one vendor format's records map to rows, key by key."""

    #: each record key the import reads, with every canonical value its export depends on
    mapped: Mapping[str, tuple[Dependency, ...]]
    #: the mapped keys that say how a record is graded (promptfoo's ``assert``)
    grading: tuple[str, ...] = ()


def canonical_value(row: dict[str, Any], dependency: Dependency) -> Any:
    metadata = row.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    if dependency == "extras":
        return {key: value for key, value in metadata.items() if key != "case"}
    if dependency.startswith("case."):
        case = metadata.get("case")
        return case.get(dependency[5:], ABSENT) if isinstance(case, dict) else ABSENT
    return row.get(dependency, ABSENT)


def fingerprint(row: dict[str, Any], dependencies: tuple[Dependency, ...]) -> str:
    """A short digest of the canonical values a native key is read into."""
    values = [
        {"absent": True} if (value := canonical_value(row, name)) is ABSENT else {"value": value}
        for name in dependencies
    ]
    return hashlib.sha256(jsonvalues.dumps(values, sort_keys=True)).hexdigest()[:16]


#: case-profile fields the shapes came to depend on after files were imported (the check
#: vocabulary's): an entry fingerprinted before, without them, still matches a row that has
#: none of them, so a set imported then goes back as it came
LATER_DEPENDENCIES: Final = frozenset(
    {"case.checks", "case.normalize", "case.tolerance", "case.passThreshold"}
)


def unchanged(
    entry: dict[str, Any], row: dict[str, Any], dependencies: tuple[Dependency, ...]
) -> bool:
    """Whether the canonical values a native entry was read into are as they were: its
    fingerprint is the row's now, with or without the later dependencies the row lacks."""
    written = entry.get("from")
    if written == fingerprint(row, dependencies):
        return True
    earlier = tuple(
        name
        for name in dependencies
        if name not in LATER_DEPENDENCIES or canonical_value(row, name) is not ABSENT
    )
    return earlier != dependencies and written == fingerprint(row, earlier)


def same(left: Any, right: Any) -> bool:
    """Equal as JSON, types kept apart (1 is not 1.0 is not true): their JSON texts, keys
    sorted, are the same."""
    if left is ABSENT or right is ABSENT:
        return left is right
    kind = type(left)
    if kind in _PLAIN_SCALARS and type(right) in _PLAIN_SCALARS:
        # most values compared are these, whose texts are equal when they are (orjson writes
        # containers faster than Python walks them)
        return kind is type(right) and bool(left == right)
    return jsonvalues.dumps(left, sort_keys=True) == jsonvalues.dumps(right, sort_keys=True)


#: the types whose values are equal as JSON texts exactly when they are equal values of one
#: type (not float: its text tells 0.0 from -0.0, and writes NaN as null)
_PLAIN_SCALARS: Final = frozenset({str, int, bool, type(None)})


def extension_for(
    shape: NativeShape,
    record: dict[str, Any],
    regenerated: dict[str, Any],
    row: dict[str, Any],
) -> dict[str, Any]:
    """What to keep of a native record, given the record its row would be exported as."""
    extension: dict[str, Any] = {}
    unmapped = {key: value for key, value in record.items() if key not in shape.mapped}
    if unmapped:
        extension["record"] = unmapped
    native: dict[str, Any] = {}
    for key, dependencies in shape.mapped.items():
        original, again = record.get(key, ABSENT), regenerated.get(key, ABSENT)
        if original is ABSENT and again is ABSENT and key not in shape.grading:
            continue
        entry: dict[str, Any] = {"from": fingerprint(row, dependencies)}
        if original is ABSENT:
            entry["absent"] = True
        elif not same(original, again):
            entry["value"] = original
        native[key] = entry
    if native:
        extension["native"] = native
    extension["keys"] = list(record)
    return extension


@dataclass
class Restored:
    """A native record put back together for export."""

    record: dict[str, Any]
    #: what the payload carries to rebuild the extension from the written record
    payload: dict[str, Any]
    #: mapped keys whose vendor value was kept (the fingerprint still matches)
    kept: set[str] = field(default_factory=set)
    #: mapped keys regenerated from the row because the values read from them were edited
    edited: list[str] = field(default_factory=list)
    #: what a person should know about how the record was put back together
    notes: list[str] = field(default_factory=list)


def restore(
    shape: NativeShape,
    regenerated: dict[str, Any],
    extension: dict[str, Any],
    row: dict[str, Any],
) -> Restored:
    """The record to write: the regenerated one, with the vendor's own values put back."""
    record = dict(regenerated)
    entries: dict[str, Any] = {}
    restored = Restored(record, {"entries": entries})
    native = extension.get("native")
    for key, entry in (native if isinstance(native, dict) else {}).items():
        dependencies = shape.mapped.get(key)
        if dependencies is None or not isinstance(entry, dict):
            entries[key] = entry  # not ours to interpret; carried as it is
            continue
        if not unchanged(entry, row, dependencies):
            entries[key] = entry  # edited since import: the old entry travels whole
            restored.edited.append(key)
            continue
        restored.kept.add(key)
        if "value" in entry:
            record[key] = entry["value"]
            entries[key] = {"from": entry["from"], "kept": True}
        else:
            if entry.get("absent"):
                record.pop(key, None)
            entries[key] = entry
    unmapped = extension.get("record")
    for key, value in (unmapped if isinstance(unmapped, dict) else {}).items():
        if key not in shape.mapped:
            record[key] = value
    order = extension.get("keys", ABSENT)
    restored.payload["keys"] = None if order is ABSENT else order
    if isinstance(order, list):
        first = [key for key in order if isinstance(key, str) and key in record]
        restored.record = {
            **{key: record[key] for key in first},
            **{key: value for key, value in record.items() if key not in first},
        }
    others = {
        key: value
        for key, value in extension.items()
        if key not in _PARTS or (key != "keys" and not isinstance(value, dict))
    }
    if others:  # keys someone added by hand: not ours to read, carried as they are
        restored.payload["more"] = others
    return restored


_PARTS: Final = ("record", "native", "keys")


def rebuild(
    shape: NativeShape,
    record: dict[str, Any],
    payload: Any,
    strip: Callable[[str, Any], Any],
) -> dict[str, Any]:
    """The extension a written record came from, given what the payload says of it.

    ``strip(key, value)`` takes off what the export added to a kept value (the payload in
    the vendor's metadata).
    """
    payload = payload if isinstance(payload, dict) else {}
    extension: dict[str, Any] = {}
    unmapped = {key: value for key, value in record.items() if key not in shape.mapped}
    if unmapped:
        extension["record"] = unmapped
    native: dict[str, Any] = {}
    entries = payload.get("entries")
    for key, entry in (entries if isinstance(entries, dict) else {}).items():
        if isinstance(entry, dict) and entry.get("kept") and key in record:
            native[key] = {"from": entry.get("from"), "value": strip(key, record[key])}
        else:
            native[key] = entry
    if native:
        extension["native"] = native
    order = payload.get("keys", ABSENT)
    if order is ABSENT:
        extension["keys"] = list(record)
    elif order is not None:
        extension["keys"] = order
    more = payload.get("more")
    if isinstance(more, dict):
        extension.update(more)
    return extension


# --- the compact bookkeeping of a record written back to its own format ----------------------
#
# A record written back to the format it came from reads back, most often, as exactly the row
# it was written from: then it needs no bookkeeping at all. Otherwise (the row was edited in
# Blueprint, or says what the format has no place for) the record carries one key: a digest
# of the record as written and the changes that turn the row the record reads back as into
# the row it was written from, as JSON Pointer operations ([pointer, value] sets a value,
# [pointer] removes one).


def digest(record: Any) -> str:
    """A short digest of a record as written, to tell whether it was edited since."""
    return hashlib.sha256(jsonvalues.dumps(record, sort_keys=True)).hexdigest()[:16]


def _step(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _key(step: str) -> str:
    return step.replace("~1", "/").replace("~0", "~")


def changes(before: Any, after: Any, at: str = "") -> list[list[Any]]:
    """The operations that turn ``before`` into ``after``: objects are compared key by key,
    any other value that differs is set whole."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[list[Any]] = [[f"{at}/{_step(key)}"] for key in before if key not in after]
        for key, value in after.items():
            pointer = f"{at}/{_step(key)}"
            if key in before:
                found += changes(before[key], value, pointer)
            else:
                found.append([pointer, value])
        return found
    return [] if same(before, after) else [[at, after]]


def apply_changes(document: dict[str, Any], operations: list[Any]) -> dict[str, Any]:
    """``document`` with ``operations`` (from :func:`changes`) applied; ValueError when one
    does not fit it (the bookkeeping was damaged)."""
    document = _copied(document)
    for operation in operations:
        if not isinstance(operation, list) or len(operation) not in (1, 2):
            raise ValueError("an operation is not [pointer] or [pointer, value]")
        pointer = operation[0]
        if not isinstance(pointer, str) or not pointer.startswith("/"):
            raise ValueError("an operation's pointer is not a JSON Pointer into the row")
        *parents, last = [_key(step) for step in pointer[1:].split("/")]
        holder: Any = document
        for step in parents:
            holder = holder.get(step) if isinstance(holder, dict) else None
        if not isinstance(holder, dict):
            raise ValueError(f"{pointer} names no place in the row")
        if len(operation) == 2:
            holder[last] = operation[1]
        elif holder.pop(last, ABSENT) is ABSENT:
            raise ValueError(f"{pointer} names no value to remove")
    return document


def _copied(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


# --- the text of a file read into a set, kept so writing it back can edit it in place ------

#: the largest text a set keeps of a YAML file it was read from: beyond it, a re-export
#: writes the file anew (as it does for a set that did not come from YAML)
KEPT_TEXT_LIMIT: Final = 8 * 1024 * 1024


def without_kept_text(header: dict[str, Any]) -> dict[str, Any]:
    """A set's fields without the text kept of the files it was read from: how a file was
    written, which writing the set changes by nature, not what the set says (diffs leave it
    out)."""
    extensions = header.get("extensions")
    if not isinstance(extensions, dict):
        return header
    kept = {}
    for name, extension in extensions.items():
        if isinstance(extension, dict) and isinstance(extension.get("source"), dict):
            extension = {key: value for key, value in extension.items() if key != "source"}
            if not extension:
                continue
        kept[name] = extension
    if kept == extensions:
        return header
    if not kept:
        return {key: value for key, value in header.items() if key != "extensions"}
    return {**header, "extensions": kept}


def kept_text(text: str) -> str | None:
    """The text to keep of a YAML file read into a set, or None when it is too large."""
    return text if len(text) <= KEPT_TEXT_LIMIT else None


def text_to_keep(path: Path, suffixes: tuple[str, ...]) -> str | None:
    """The text of a file of one of ``suffixes`` small enough to keep in the set it is read
    into (so writing the set back can edit it in place), else None."""
    if path.suffix.lower() not in suffixes:
        return None
    try:
        if path.stat().st_size > KEPT_TEXT_LIMIT:
            return None
    except OSError:
        return None
    return kept_text(read_text(path))


def kept_source(header: dict[str, Any], namespace: str) -> str | None:
    """The text a set keeps of the file it was read from (``extensions.<namespace>.source``)."""
    extensions = header.get("extensions")
    kept = extensions.get(namespace) if isinstance(extensions, dict) else None
    source = kept.get("source") if isinstance(kept, dict) else None
    text = source.get("text") if isinstance(source, dict) else None
    return text if isinstance(text, str) else None
