"""The Hugging Face codec: a dataset folder read into rows, and rows written as one."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.core.errors import ParseError, UsageError
from blueprint.formats._io import read_json_lines, read_text
from blueprint.formats.base import (
    ExportResult,
    SetSource,
    SourceRow,
    UnreadableRow,
    WriteOptions,
)
from blueprint.formats.huggingface.card import _CARD_KEYS, CARD, read_card
from blueprint.formats.huggingface.columns import _pyarrow, _Table, jsonable
from blueprint.formats.huggingface.layout import (
    _JSON_SUFFIXES,
    _PARQUET_SUFFIXES,
    DATA_FOLDER,
    DEFAULT_CONFIG,
    DEFAULT_SPLIT,
    Layout,
    layout_of,
    split_name,
)
from blueprint.formats.huggingface.roles import from_roles, roles_of, to_roles
from blueprint.formats.huggingface.writing import (
    _POSITION,
    _card_text,
    _recorded_format,
)
from blueprint.formats.mapping import NAMESPACE, load_mapping
from blueprint.formats.native import ABSENT, NativeShape
from blueprint.formats.sniffing import Fit
from blueprint.formats.vendor import (
    ExportRow,
    ExportTally,
    Values,
    VendorCodec,
    WriteContext,
    _UniqueIds,
    compare_records,
    export_rows,
    imported_row,
    in_batches,
    oracle_for_expected,
    payload_of,
    read_json_document,
)
from blueprint.io import jsonvalues
from blueprint.io.atomic import AtomicFolder, scratch_folder

#: the data-file formats an export can write
DATA_FORMATS: Final = ("jsonl", "parquet")

_SHAPE: Final = NativeShape(
    mapped={
        "id": ("id",),
        "input": ("input",),
        "expected": ("expected", "case.oracleType"),
        NAMESPACE: ("extras",),
    },
    grading=("expected",),
)


def _payload(table_row: dict[str, Any]) -> dict[str, Any] | None:
    """The Blueprint payload of a table row (its column holds ``{NAMESPACE: payload}``)."""
    wrapper = table_row.get(NAMESPACE)
    payload = wrapper.get(NAMESPACE) if isinstance(wrapper, dict) else None
    return payload if isinstance(payload, dict) else None


@dataclass
class _State:
    """What reading or writing one folder knows of the record at hand (set before each
    record is handed to the shared vendor machinery, which reads it synchronously)."""

    json_columns: frozenset[str] = frozenset()
    #: the config (subset) the record at hand is in (reading) or goes to (writing)
    config: str = DEFAULT_CONFIG
    #: reading: what a row of this config without an id is named by ("" in the first
    #: config, its name in the others), and how many records the configs before it held
    prefix: str = ""
    offset: int = 0
    #: the split the record at hand is in (reading) or goes to (writing)
    split: str = DEFAULT_SPLIT
    #: for a record Blueprint did not write: which column plays which role
    columns: dict[str, Any] = field(default_factory=dict)
    #: where the record stood in the set, when the export had to say so
    position: int | None = None
    #: the data file the record at hand was read from
    file: Path | None = None


class HuggingfaceCodec(VendorCodec):
    name: ClassVar[str] = "huggingface"
    title: ClassVar[str] = (
        "Hugging Face dataset folder (JSON Lines or Parquet, with a dataset card)"
    )
    #: a folder, which has no extension
    read_extensions: ClassVar[tuple[str, ...]] = ("",)
    write_forms: ClassVar[dict[str, str]] = {"": "jsonl"}
    refused_forms: ClassVar[dict[str, str]] = {
        suffix: "a Hugging Face dataset is a folder (README.md and data files); name a folder"
        for suffix in (".json", ".jsonl", ".csv", ".parquet", ".yaml", ".yml", ".toml", ".md")
    }
    what: ClassVar[str] = "a Hugging Face dataset row"
    shape: ClassVar[NativeShape] = _SHAPE
    metadata_key: ClassVar[str] = NAMESPACE
    compact: ClassVar[bool] = False
    #: the forms its data files can take (``--data-format``)
    data_formats: ClassVar[tuple[str, ...]] = DATA_FORMATS

    # --- reading -----------------------------------------------------------------------------

    def sniff(self, path: Path, head: bytes) -> Fit:
        why = (
            "a Hugging Face dataset is a folder with a dataset card (README.md) that declares"
            " configs, or with JSON Lines or Parquet data files"
        )
        if not path.is_dir():
            return Fit.no(why)
        try:
            card = read_card(path)
        except ParseError:
            return Fit.yes()  # a card that does not parse: the reader says where
        if card is not None and ("configs" in card.meta or NAMESPACE in card.meta):
            return Fit.yes()  # the reader says what is wrong with it, if anything
        try:
            layout_of(path)
        except ParseError as error:
            return Fit.no(f"{why} ({error.reason})")
        return Fit.yes()

    def open(self, path: Path) -> SetSource:
        layout = layout_of(path)
        state = _State()
        items: list[tuple[SourceRow | UnreadableRow, int | None]] = []
        read = self.rows(self._records(path, layout, state), state)
        for item in read:
            if isinstance(item, UnreadableRow) and item.file is None:
                item = replace(item, file=state.file)  # its line is in that data file
            items.append((item, state.position if isinstance(item, SourceRow) else None))
        if items and all(position is not None for _, position in items):
            items.sort(key=lambda pair: pair[1] or 0)
        # a line number says where a row is only when there is one data file (an unreadable
        # row's message names its file)
        one_file = len(layout.files()) == 1
        rows: list[SourceRow | UnreadableRow] = [
            SourceRow(index, item.line if one_file else None, item.data)
            if isinstance(item, SourceRow)
            else UnreadableRow(index, item.line, item.column, item.reason, item.file)
            for index, (item, _) in enumerate(items)
        ]
        return self.source(path, self._header(layout), iter(rows), read.count)

    def _header(self, layout: Layout) -> dict[str, Any] | None:
        """The set-level fields: Blueprint's, from the card; else what the card says, kept."""
        card = layout.card
        ours = card.meta.get(NAMESPACE) if card is not None else None
        if isinstance(ours, dict) and isinstance(ours.get("set"), dict):
            return dict(ours["set"])
        kept: dict[str, Any] = {}
        rest = {k: v for k, v in card.meta.items() if k not in _CARD_KEYS} if card else {}
        if rest:
            kept["card"] = jsonable(rest)
        if card is not None and card.body.strip():
            kept["body"] = card.body
        if list(layout.configs) != [DEFAULT_CONFIG]:
            # every config is read (each row says its own): their order, and the default
            kept["configs"] = list(layout.configs)
            default = _default_config(card.meta.get("configs") if card else None)
            if default is not None:
                kept["defaultConfig"] = default
        if any(file.name.lower().endswith(_PARQUET_SUFFIXES) for file in layout.files()):
            kept["dataFormat"] = "parquet"
        return {"extensions": {self.name: kept}} if kept else None

    def _records(
        self, folder: Path, layout: Layout, state: _State
    ) -> Iterator[tuple[int | None, Any] | UnreadableRow]:
        first = next(iter(layout.configs))
        read = 0
        current = None
        for config, split, file in _files_of(layout):
            if config != current:  # a row without an id is numbered within its config
                current = config
                state.prefix = "" if config == first else f"{config}-"
                state.offset = read
            state.json_columns = layout.json_columns_of(config)
            for item in self._file_records(file):
                read += 1
                state.config, state.split, state.position, state.columns = config, split, None, {}
                state.file = file
                if isinstance(item, UnreadableRow):
                    yield item  # open() names the file it is in
                    continue
                line, record = item
                if isinstance(record, dict):
                    try:
                        record = self._as_record(record, state)
                    except ValueError as error:
                        yield UnreadableRow(0, line, None, str(error))
                        continue
                yield line, record

    def _file_records(self, file: Path) -> Iterable[tuple[int | None, Any] | UnreadableRow]:
        name = file.name.lower()
        if name.endswith(_PARQUET_SUFFIXES):
            pq = _pyarrow()
            try:
                table = pq.read_table(file)
            except Exception as error:  # pyarrow raises kinds of its own for a damaged file
                raise ParseError(file, f"not a readable Parquet file ({error})") from None
            return [(None, jsonable(record)) for record in table.to_pylist()]
        if name.endswith(_JSON_SUFFIXES):
            if name.endswith(".json") and read_text(file).lstrip().startswith("["):
                document = read_json_document(file)
                return [(None, record) for record in document]
            return read_json_lines(file)
        raise ParseError(
            file, "only JSON Lines and Parquet data files are read (convert this file first)"
        )

    def _as_record(self, row: dict[str, Any], state: _State) -> dict[str, Any]:
        """A table row as a record: JSON text decoded, the payload unwrapped, and the columns
        of a row Blueprint did not write renamed to the roles they play."""
        record = dict(row)
        for name in state.json_columns:
            value = record.get(name)
            if isinstance(value, str):
                try:
                    record[name] = jsonvalues.loads(value)
                except jsonvalues.JSONError as error:
                    raise ValueError(
                        f"the column {name} holds no JSON text ({error.reason})"
                    ) from None
        payload = record.get(NAMESPACE)
        if isinstance(payload, dict) and isinstance(payload.get("case"), dict):
            payload = dict(payload)
            position = payload.pop(_POSITION, None)
            state.position = position if isinstance(position, int) else None
            record[NAMESPACE] = {NAMESPACE: payload}
            native_part = payload.get("native")
            more = native_part.get("more") if isinstance(native_part, dict) else None
            roles = more.get("columns") if isinstance(more, dict) else None
            return to_roles(record, roles) if isinstance(roles, dict) else record
        roles = roles_of(record)
        state.columns = {role: column for role, column in roles.items() if column != role}
        return to_roles(record, roles)

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        split = suite.split if isinstance(suite, _State) else DEFAULT_SPLIT
        expected = record.get("expected", ABSENT)
        values = Values(
            input=record.get("input", ABSENT), expected=ABSENT if expected is None else expected
        )
        if not native_mode:
            metadata = record.get("metadata")
            values.extras = dict(metadata) if isinstance(metadata, dict) else {}
        values.extras.setdefault("split", split)
        return values

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        state = suite if isinstance(suite, _State) else _State()
        columns = state.columns
        derived: dict[str, str] = {}
        row_id = record.get("id")
        if isinstance(row_id, int | float) and not isinstance(row_id, bool):
            row_id = str(row_id)
            derived["id"] = f"made text from the number in the column {columns.get('id', 'id')}"
        if not isinstance(row_id, str) or not row_id:
            row_id = f"{state.prefix}{state.split}-{position - state.offset + 1}"
            derived["id"] = (
                f"the row has no id column; named by its config ({state.config}), split and"
                " position"
                if state.prefix
                else "the row has no id column; named by split and position"
            )
        elif "id" in columns and "id" not in derived:
            derived["id"] = f"taken from the column {columns['id']}"
        value = record.get("input")
        if isinstance(columns.get("input"), list):
            derived["input"] = "no column is the input, so every other column makes it up"
        elif "input" in columns:
            derived["input"] = f"taken from the column {columns['input']}"
        expected = record.get("expected", ABSENT)
        expected = ABSENT if expected is None else expected
        if expected is ABSENT:
            oracle = "expected-behavior-only"
            derived["metadata.case.oracleType"] = "the row has no expected value"
        else:
            oracle = oracle_for_expected(expected)
            where = columns.get("expected", "expected")
            derived["metadata.case.oracleType"] = f"inferred from the shape of the column {where}"
            if where != "expected":
                derived["expected"] = f"taken from the column {where}"
        derived["metadata.case.expectedBehavior"] = (
            "Hugging Face datasets carry no behaviour description"
        )
        return imported_row(
            row_id=row_id,
            input_value=value,
            expected=expected,
            oracle_type=oracle,
            expected_behavior="(imported from Hugging Face without a behaviour description)",
            format_name=self.name,
            derived=derived,
            metadata={"split": state.split},
        )

    def row_of(
        self, record: dict[str, Any], position: int, ids: _UniqueIds, suite: Any
    ) -> dict[str, Any]:
        row = super().row_of(record, position, ids, suite)
        state = suite if isinstance(suite, _State) else _State()
        if payload_of(record.get(NAMESPACE)) is None and state.columns:
            # the columns the roles came from, so the export writes them back there
            row["metadata"]["case"]["extensions"][self.name]["columns"] = state.columns
        extensions = row["metadata"]["case"].get("extensions")
        ours = extensions.get(self.name) if isinstance(extensions, dict) else None
        if state.config != DEFAULT_CONFIG and isinstance(ours, dict):
            # the config (subset) it is in, so the export writes it back there (a row
            # written from Blueprint goes to the default config, and has no such extension)
            ours["config"] = state.config
        return row

    # --- writing -----------------------------------------------------------------------------

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        state = context.suite if isinstance(context.suite, _State) else _State()
        record: dict[str, Any] = {"id": row.id, "input": row.input}
        if row.has_expected:
            record["expected"] = row.expected
        record["oracle_type"] = row.oracle_type
        record["expected_behavior"] = row.case["expectedBehavior"]
        record["provenance"] = row.case["provenance"]
        if "caseFamily" in row.case:
            record["case_family"] = row.case["caseFamily"]
        if row.evaluator is not None:
            record["evaluator"] = row.evaluator
        record["starter_example"] = row.starter
        record["human_review"] = row.human_only
        metadata = dict(row.extra)
        if metadata.get("split") == state.split:
            metadata.pop("split")  # the file says it
        if metadata:
            record["metadata"] = metadata
        return record

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        record: dict[str, Any] = {"id": row.id, "input": row.input}
        if row.has_expected:
            record["expected"] = row.expected
        return record

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        data_format = options.data_format or _recorded_format(header) or DATA_FORMATS[0]
        if data_format not in DATA_FORMATS:
            raise UsageError(
                f"a Hugging Face dataset's data files are {' or '.join(DATA_FORMATS)},"
                f" not {data_format!r}"
            )
        if data_format == "parquet":
            _pyarrow()
        state = _State()
        context = WriteContext(header, options, data_format, state)
        tally = ExportTally(load_mapping(self.name))
        derived = options.derived_fields
        tally.set_written = set(header)
        default = _written_default(header)
        with scratch_folder("huggingface") as spools:
            # a table a config: each has its own columns, as datasets reads each alone
            tables: dict[str, _Table] = {}
            blueprint_mode = interleaved = False
            previous: tuple[str, str] | None = None
            seen: set[tuple[str, str]] = set()
            for chunk in in_batches(export_rows(rows, self.name, header, options.accepted)):
                made = []
                for row in chunk:
                    state.split = split_name(row.extra.get("split"))
                    record = self.record_for(row, context, tally)
                    if record is not None:
                        made.append((state.split, row, record, tally.written))
                        tally.written += 1
                for split, row, record, position in made:
                    extension = row.extension(self.name)
                    blueprint_mode = blueprint_mode or extension is None
                    config = _config_of(extension, default)
                    table = tables.get(config)
                    if table is None:
                        folder = spools / str(len(tables))
                        folder.mkdir()
                        table = tables[config] = _Table(folder)
                    table_row = from_roles(record, (extension or {}).get("columns"))
                    # reading goes config by config and split by split: where they
                    # interleave, the payload says where each row stood (kept in every
                    # spooled row, left out at the end when they did not interleave)
                    payload = _payload(table_row)
                    if payload is not None:
                        payload[_POSITION] = position
                    key = (config, split)
                    if key != previous:
                        # back to a split, or to a config, left before
                        left = previous is not None and previous[0] != config
                        if key in seen or (left and table.sizes):
                            interleaved = True
                        seen.add(key)
                        previous = key
                    table.add(split, table_row)
            if not tables:
                folder = spools / "0"
                folder.mkdir()
                tables[default] = _Table(folder)
                tables[default].add_split(DEFAULT_SPLIT)
            for table in tables.values():
                table.settle(blueprint=blueprint_mode or not tally.written)
            own = {key: value for key, value in header.items() if key not in derived}
            placed = _placed_files(tables, data_format)
            card = _card_text(header, own, tables, placed, default)

            def unplaced(table_row: dict[str, Any]) -> None:
                payload = _payload(table_row)
                if payload is not None:
                    payload.pop(_POSITION, None)

            with AtomicFolder(path, force=options.force, follow_links=options.in_place) as folder:
                (folder / DATA_FOLDER).mkdir()
                files = [path / CARD]
                for config, table in tables.items():
                    for split, file_name in placed[config].items():
                        target = folder / file_name
                        target.parent.mkdir(parents=True, exist_ok=True)
                        fix = None if interleaved else unplaced
                        table.write(target, split, data_format, fix)
                        files.append(path / file_name)
                (folder / CARD).write_text(card, encoding="utf-8", newline="\n")
                return tally.finish(header, files, options)

    # --- comparing native folders -------------------------------------------------------------

    def native_records(self, path: Path) -> list[Any]:
        layout = layout_of(path)
        found: list[Any] = []
        for config, split, file in _files_of(layout):
            json_columns = layout.json_columns_of(config)
            for item in self._file_records(file):
                if isinstance(item, UnreadableRow):
                    raise ParseError(file, item.reason, line=item.line, column=item.column)
                record = dict(item[1])
                for name in json_columns & set(record):
                    if isinstance(record[name], str):
                        record[name] = jsonvalues.loads(record[name])
                if payload_of({NAMESPACE: record.get(NAMESPACE)}) is not None:
                    record.pop(NAMESPACE)
                where = {"config": config} if config != DEFAULT_CONFIG else {}
                found.append({**where, "split": split, "row": record})
        return found

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        return compare_records(self.native_records(original), self.native_records(exported))


def _files_of(layout: Layout) -> Iterator[tuple[str, str, Path]]:
    """Every data file of a folder, with its config and split, in the card's order."""
    for config, splits in layout.configs.items():
        for split, files in splits.items():
            for file in files:
                yield config, split, file


def _default_config(configs: Any) -> str | None:
    """The config a card marks ``default: true``, if any."""
    for config in configs if isinstance(configs, list) else []:
        if isinstance(config, dict) and config.get("default") is True:
            name = config.get("config_name", DEFAULT_CONFIG)
            return name if isinstance(name, str) else None
    return None


def _written_default(header: dict[str, Any]) -> str:
    """The config a row that names none is written to: the default of the folder the set
    was read from (or its first config), else ``default``."""
    extensions = header.get("extensions")
    ours = extensions.get("huggingface") if isinstance(extensions, dict) else None
    ours = ours if isinstance(ours, dict) else {}
    default = ours.get("defaultConfig")
    configs = ours.get("configs")
    if not isinstance(default, str) and isinstance(configs, list) and configs:
        default = configs[0]
    return default if isinstance(default, str) and default else DEFAULT_CONFIG


def _config_of(extension: dict[str, Any] | None, default: str) -> str:
    config = (extension or {}).get("config")
    return config if isinstance(config, str) and config else default


def _placed_files(tables: dict[str, _Table], data_format: str) -> dict[str, dict[str, str]]:
    """Where each config's splits are written, inside the folder: ``data/<split>`` for one
    config, ``data/<config>/<split>`` for several (folder names that differ only in case,
    or that a file system would refuse, made apart)."""
    if len(tables) == 1:
        ((config, table),) = tables.items()
        return {config: {s: f"{DATA_FOLDER}/{n}" for s, n in table.files(data_format).items()}}
    placed: dict[str, dict[str, str]] = {}
    used: set[str] = set()
    for config, table in tables.items():
        stem = re.sub(r"[^\w.-]+", "_", config).strip(".") or "config"
        name, number = stem, 2
        while name.lower() in used:
            name, number = f"{stem}-{number}", number + 1
        used.add(name.lower())
        placed[config] = {
            split: f"{DATA_FOLDER}/{name}/{file_name}"
            for split, file_name in table.files(data_format).items()
        }
    return placed
