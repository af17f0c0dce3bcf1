"""Blueprint JSONL: one row per line; the set-level fields live in the set file beside it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from blueprint.formats import setfile
from blueprint.formats._io import read_json_lines, require_file
from blueprint.formats.base import ExportResult, SetSource, SourceRow, UnreadableRow, WriteOptions
from blueprint.formats.sniffing import Fit, first_line_object
from blueprint.io import jsonvalues
from blueprint.io.atomic import AtomicOutputs


class JsonlCodec:
    name: ClassVar[str] = "jsonl"
    title: ClassVar[str] = "Blueprint JSON Lines (+ set file)"
    extensions: ClassVar[tuple[str, ...]] = (".jsonl", ".ndjson")
    read_extensions: ClassVar[tuple[str, ...]] = (".jsonl", ".ndjson")
    write_forms: ClassVar[dict[str, str]] = {".jsonl": "jsonl", ".ndjson": "jsonl"}
    refused_forms: ClassVar[dict[str, str]] = {}
    lossless: ClassVar[bool] = True
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True

    def open(self, path: Path) -> SetSource:
        return self._open(path, typed=False)

    def open_typed(self, path: Path) -> SetSource:
        """:meth:`open`, with the rows that fit the published row schema decoded straight
        into typed rows (the validator's fast path, :mod:`blueprint.io.typedrows`)."""
        return self._open(path, typed=True)

    def _open(self, path: Path, *, typed: bool) -> SetSource:
        require_file(path)
        header, notes = setfile.read_set_file(path)
        return SetSource(
            path=path,
            format=self.name,
            header=header,
            rows=_read_lines(read_json_lines(path, typed=typed)),
            notes=notes,
            header_origin=setfile.set_file_for(path).name if header is not None else None,
        )

    def write(
        self,
        header: dict[str, Any],
        rows: Iterable[Any],
        path: Path,
        options: WriteOptions,
    ) -> ExportResult:
        set_path = setfile.set_file_for(path)
        targets = [path, set_path] if options.set_file else [path]
        count = 0
        with AtomicOutputs(targets, force=options.force, follow_links=options.in_place) as outputs:
            handle = outputs.open(path, "wb")
            for row in rows:
                handle.write(jsonvalues.dumps(row) + b"\n")
                count += 1
            if options.set_file:
                setfile.write_set_file(outputs.open(set_path, "wb"), header)
        return ExportResult(format=self.name, files=targets, rows=count)

    def sniff(self, path: Path, head: bytes) -> Fit:
        if not head.strip():
            return Fit.yes()
        first = first_line_object(head)
        if first is None:
            return Fit.yes()  # not JSON: the reader says which line breaks
        metadata = first.get("metadata") if isinstance(first, dict) else None
        if isinstance(metadata, dict) and isinstance(metadata.get("case"), dict):
            return Fit.yes()
        payload = metadata.get("blueprint") if isinstance(metadata, dict) else None
        if isinstance(payload, str) or (isinstance(payload, dict) and "case" in payload):
            return Fit.no("the record carries Blueprint's payload: a vendor record Blueprint wrote")
        # a row whose case profile is broken (validation says how); without metadata, an
        # {id, input, expected} object is a Braintrust record, not a row
        if (
            isinstance(first, dict)
            and set(first) <= ROW_KEYS
            and ("metadata" in first or not set(first) & {"input", "expected"})
        ):
            return Fit.yes()
        return Fit.no("a Blueprint row has id, input, expected and metadata.case, nothing else")


ROW_KEYS = frozenset({"id", "input", "expected", "metadata"})


def _read_lines(
    lines: Iterator[tuple[int, Any] | UnreadableRow],
) -> Iterator[SourceRow | UnreadableRow]:
    for index, item in enumerate(lines):
        if isinstance(item, UnreadableRow):
            yield item
        else:
            yield SourceRow(index, item[0], item[1])
