"""Hugging Face dataset folders: one data file per split and a README.md dataset card.

``datasets.load_dataset(folder)`` reads the folder: the card's YAML front matter declares the
splits (``configs``) and the columns (``dataset_info.features``), and each split is one JSON
Lines file (or Parquet file) under ``data/``. A row goes to the split its ``metadata.split``
names; a row without one goes to ``test`` (the cases of a golden set are held-out test data,
and promptfoo's Hugging Face reader looks there by default).

Arrow, under ``datasets``, needs every column to keep one type across all rows and files: a
column whose values change type (a string here, an object there) makes the loader fail. So a
column written as it is holds one type throughout; every other column travels as JSON text,
and the card lists those columns (``blueprint.jsonColumns``) so the import decodes them. The
set-level fields travel in the card under the ``blueprint`` key, which Hugging Face ignores.

A folder Blueprint did not write is read as other vendor files are: the id, input and expected
value come from the columns whose names say so (``question``, ``answer``, ...), the rest is
inferred and flagged, and every other column is kept in ``case.extensions.huggingface``.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

import yaml

from blueprint.core.errors import ParseError, UsageError
from blueprint.formats._io import read_json_lines, read_text
from blueprint.formats.base import (
    ExportResult,
    SetSource,
    SourceRow,
    UnreadableRow,
    WriteOptions,
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
    oracle_for_expected,
    payload_of,
    read_json_document,
)
from blueprint.io import jsonvalues, yamlload
from blueprint.io.atomic import AtomicFolder

#: the split a row without one goes to
DEFAULT_SPLIT: Final = "test"
CARD: Final = "README.md"
DATA_FOLDER: Final = "data"
#: the split names ``datasets`` accepts
SPLIT_NAME: Final = re.compile(r"^\w+(\.\w+)*$")
#: the data-file formats an export can write
DATA_FORMATS: Final = ("jsonl", "parquet")
#: what a folder's data files may be, by suffix
_JSON_SUFFIXES: Final = (".jsonl", ".json", ".ndjson")
_PARQUET_SUFFIXES: Final = (".parquet",)
#: the names ``datasets`` recognises a split by in a file's path, when no card declares them
SPLIT_KEYWORDS: Final = {
    "train": ("train", "training"),
    "validation": ("validation", "valid", "dev", "val"),
    "test": ("test", "testing", "eval", "evaluation"),
}
#: column names that hold a row's id, input and expected value in datasets people publish,
#: in order of preference
ID_COLUMNS: Final = ("id", "_id", "uid", "uuid", "qid", "question_id", "example_id", "task_id")
INPUT_COLUMNS: Final = (
    "input",
    "inputs",
    "question",
    "prompt",
    "query",
    "instruction",
    "problem",
    "messages",
    "text",
)
EXPECTED_COLUMNS: Final = (
    "expected",
    "expected_output",
    "answer",
    "answers",
    "output",
    "target",
    "targets",
    "ideal",
    "reference",
    "ground_truth",
    "label",
    "solution",
    "response",
    "completion",
)
#: the columns a row written from Blueprint has, in order
BLUEPRINT_COLUMNS: Final = (
    "id",
    "input",
    "expected",
    "oracle_type",
    "expected_behavior",
    "provenance",
    "case_family",
    "evaluator",
    "starter_example",
    "human_review",
    "metadata",
    NAMESPACE,
)
#: card keys Blueprint writes itself
_CARD_KEYS: Final = frozenset({"configs", "dataset_info", NAMESPACE})
#: what the card says this folder is, so a reader knows the columns are Blueprint's
CARD_FORMAT: Final = "blueprint.huggingface/v1"

_FRONT_MATTER: Final = re.compile(r"^(\s*---[\r\n]+)([\S\s]*?)([\r\n]+---(\r\n|\n|$))")
_INT64: Final = 2**63

_SHAPE: Final = NativeShape(
    mapped={
        "id": ("id",),
        "input": ("input",),
        "expected": ("expected", "case.oracleType"),
        NAMESPACE: ("extras",),
    },
    grading=("expected",),
)


# --- the card --------------------------------------------------------------------------------


class _CardDumper(yaml.SafeDumper):
    """Writes strings so that any text reads back the same: in double quotes, escaped, when
    a plain scalar could be read as something else or hold a line break."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    plain = value.isascii() and value.isprintable() and value.strip() == value and value != ""
    style = None if plain else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_CardDumper.add_representer(str, _represent_text)


def dump_front_matter(data: dict[str, Any]) -> str:
    return yaml.dump(
        data,
        Dumper=_CardDumper,
        sort_keys=False,
        allow_unicode=False,
        default_flow_style=False,
        width=2**30,
    )


@dataclass
class Card:
    """A dataset card: its YAML front matter and its Markdown body."""

    meta: dict[str, Any]
    body: str
    #: whether the file had a front matter block at all
    has_front_matter: bool = True


def read_card(folder: Path) -> Card | None:
    path = folder / CARD
    if not path.is_file():
        return None
    text = read_text(path)
    match = _FRONT_MATTER.match(text)
    if match is None:
        return Card({}, text, has_front_matter=False)
    start_line = match.group(1).count("\n") + 1
    try:
        meta = yamlload.load(match.group(2), path, line_offset=start_line - 1)
    except ParseError as error:
        raise ParseError(
            path, f"the card's YAML front matter: {error.reason}", line=error.line
        ) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ParseError(path, "the card's YAML front matter is not a mapping", line=start_line)
    return Card(meta, text[match.end() :])


# --- columns ---------------------------------------------------------------------------------


class _Mixed(Exception):
    """A column whose values do not share one Arrow type."""


def signature(value: Any) -> Any:
    """The Arrow type a JSON value is read as (None: null, which fits any type)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        if -_INT64 <= value < _INT64:
            return "int64"
        raise _Mixed
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        inner = None
        for item in value:
            inner = merge(inner, signature(item))
        return ("list", inner)
    if isinstance(value, dict):
        if not value:
            raise _Mixed  # Arrow has no struct without fields
        return ("struct", tuple((key, signature(item)) for key, item in sorted(value.items())))
    raise _Mixed


def merge(left: Any, right: Any) -> Any:
    """The one type two types are read as together; raises _Mixed when there is none."""
    if left is None:
        return right
    if right is None or left == right:
        return left
    if not (isinstance(left, tuple) and isinstance(right, tuple)):
        raise _Mixed  # two different scalar types, or a scalar and a list or object
    if left[0] == right[0] == "list":
        return ("list", merge(left[1], right[1]))
    if left[0] == right[0] == "struct" and [k for k, _ in left[1]] == [k for k, _ in right[1]]:
        return (
            "struct",
            tuple((k, merge(a, b)) for (k, a), (_, b) in zip(left[1], right[1], strict=True)),
        )
    raise _Mixed


def column_type(values: Iterable[Any]) -> Any:
    """The one Arrow type of a column's values; raises _Mixed when they have several."""
    found = None
    for value in values:
        found = merge(found, signature(value))
    return found


def _arrow_type(kind: Any) -> Any:
    import pyarrow as pa

    if kind is None or kind == "string":
        return pa.string()
    if isinstance(kind, str):
        return {"bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64()}[kind]
    if kind[0] == "list":
        return pa.list_(_arrow_type(kind[1]))
    return pa.struct([pa.field(key, _arrow_type(value)) for key, value in kind[1]])


def _pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError(
            "Parquet needs pyarrow, which is not installed; install the parquet extra"
            " (pip install 'blueprint-evals[parquet]') or write JSON Lines"
        ) from None
    return pq


def jsonable(value: Any) -> Any:
    """A value read from Parquet as JSON: dates as ISO text, bytes as text or base64."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(value).decode("ascii")
    return str(value)


# --- reading a folder -------------------------------------------------------------------------


@dataclass
class Layout:
    """What a folder holds: the splits and their files, and what the card says of them."""

    splits: dict[str, list[Path]]
    card: Card | None
    json_columns: frozenset[str] = frozenset()
    #: the config read, when the card declares several
    config: str | None = None
    #: the other configs the card declares (not read)
    other_configs: list[str] = field(default_factory=list)


def _inside(folder: Path, pattern: str, card: Path) -> list[Path]:
    if not isinstance(pattern, str) or not pattern:
        raise ParseError(card, f"a data_files path is not text: {pattern!r}")
    if pattern.startswith(("/", "\\")) or ".." in Path(pattern).parts or "://" in pattern:
        raise ParseError(card, f"the data file {pattern!r} is outside the dataset folder")
    root = folder.resolve()
    found = sorted(
        path
        for path in folder.glob(pattern)
        if path.is_file() and path.resolve().is_relative_to(root)
    )
    if not found:
        raise ParseError(card, f"the data file {pattern!r} the card names is not in the folder")
    return found


def _declared_splits(folder: Path, data_files: Any, card: Path) -> dict[str, list[Path]]:
    splits: dict[str, list[Path]] = {}
    if isinstance(data_files, str | list) and not (
        isinstance(data_files, list) and data_files and isinstance(data_files[0], dict)
    ):
        patterns = [data_files] if isinstance(data_files, str) else data_files
        return {"train": [p for pattern in patterns for p in _inside(folder, pattern, card)]}
    if isinstance(data_files, dict):
        data_files = [{"split": key, "path": value} for key, value in data_files.items()]
    if not isinstance(data_files, list):
        raise ParseError(card, "configs: data_files is neither a path, a list nor a split list")
    for entry in data_files:
        if not isinstance(entry, dict) or "path" not in entry:
            raise ParseError(card, "configs: each data_files entry has a split and a path")
        split = str(entry.get("split", "train"))
        paths = entry["path"] if isinstance(entry["path"], list) else [entry["path"]]
        files = splits.setdefault(split, [])
        files += [p for pattern in paths for p in _inside(folder, pattern, card)]
    return splits


def _data_file(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith(_JSON_SUFFIXES + _PARQUET_SUFFIXES)


def _inferred_splits(folder: Path) -> dict[str, list[Path]]:
    """The splits ``datasets`` finds by file name in a folder whose card declares none."""
    files = [
        path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and _data_file(path)
        and not any(part.startswith((".", "_")) for part in path.relative_to(folder).parts)
    ]
    splits: dict[str, list[Path]] = {}
    for path in files:
        words = set(re.split(r"[-._ /0-9]+", path.relative_to(folder).as_posix().lower()))
        split = next((name for name, keys in SPLIT_KEYWORDS.items() if words & set(keys)), None)
        splits.setdefault(split or "", []).append(path)
    if "" in splits and len(splits) > 1:
        # files that name no split: datasets reads only the ones that do
        splits.pop("")
    if "" in splits:
        splits["train"] = splits.pop("")
    # in the order datasets lists them: train, validation, test
    return {name: splits[name] for name in SPLIT_KEYWORDS if name in splits}


def layout_of(folder: Path) -> Layout:
    """The splits and data files of a dataset folder, as ``datasets`` would find them."""
    if not folder.exists():
        raise ParseError(folder, "no such folder")
    if not folder.is_dir():
        raise ParseError(
            folder, "a Hugging Face dataset is a folder (with README.md and data files)"
        )
    card = read_card(folder)
    card_path = folder / CARD
    configs = card.meta.get("configs") if card is not None else None
    layout = Layout({}, card)
    if configs is not None:
        if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
            raise ParseError(card_path, "configs is a list of configurations")
        chosen = next((c for c in configs if c.get("default") is True), None)
        chosen = chosen or next((c for c in configs if c.get("config_name") == "default"), None)
        chosen = chosen or (configs[0] if configs else None)
        if chosen is not None:
            layout.config = str(chosen.get("config_name", "default"))
            layout.other_configs = [str(c.get("config_name")) for c in configs if c is not chosen]
            if "data_files" not in chosen:
                raise ParseError(card_path, f"the config {layout.config!r} names no data_files")
            layout.splits = _declared_splits(folder, chosen["data_files"], card_path)
    if not layout.splits:
        layout.splits = _inferred_splits(folder)
    if not layout.splits:
        raise ParseError(folder, "the folder holds no data files (JSON Lines or Parquet)")
    ours = card.meta.get(NAMESPACE) if card is not None else None
    if isinstance(ours, dict) and isinstance(ours.get("jsonColumns"), list):
        layout.json_columns = frozenset(str(name) for name in ours["jsonColumns"])
    return layout


@dataclass
class _State:
    """What reading or writing one folder knows of the record at hand (set before each
    record is handed to the shared vendor machinery, which reads it synchronously)."""

    json_columns: frozenset[str] = frozenset()
    #: the split the record at hand is in (reading) or goes to (writing)
    split: str = DEFAULT_SPLIT
    #: for a record Blueprint did not write: which column plays which role
    columns: dict[str, Any] = field(default_factory=dict)
    #: where the record stood in the set, when the export had to say so
    position: int | None = None


Roles = dict[str, Any]


def roles_of(record: dict[str, Any]) -> Roles:
    """Which column holds a record's id, input and expected value: ``{"input": "question"}``;
    the input is a list of columns when no column says it holds the input (every column that
    plays no other role then makes it up)."""
    roles: Roles = {}
    for role, names in (
        ("id", ID_COLUMNS),
        ("expected", EXPECTED_COLUMNS),
        ("input", INPUT_COLUMNS),
    ):
        taken = set(roles.values())
        name = next((n for n in names if n in record and n not in taken), None)
        if name is not None:
            roles[role] = name
    if "input" not in roles:
        roles["input"] = [k for k in record if k not in roles.values() and k != NAMESPACE]
    return roles


def to_roles(record: dict[str, Any], roles: Roles) -> dict[str, Any]:
    """A table row with its columns renamed to the roles they play (id, input, expected)."""
    by_column = {column: role for role, column in roles.items() if isinstance(column, str)}
    spread = roles.get("input") if isinstance(roles.get("input"), list) else None
    out: dict[str, Any] = {}
    for key, value in record.items():
        if spread is not None and key in spread:
            if "input" not in out:
                out["input"] = {column: record[column] for column in spread if column in record}
            continue
        out[by_column.get(key, key)] = value
    if spread is not None and "input" not in out:
        out["input"] = {}
    return out


def from_roles(record: dict[str, Any], roles: Any) -> dict[str, Any]:
    """A record's keys renamed back to the columns they came from."""
    if not isinstance(roles, dict) or not roles:
        return record
    out: dict[str, Any] = {}
    for key, value in record.items():
        column = roles.get(key) if key in ("id", "input", "expected") else None
        if isinstance(column, str) and column and column not in record:
            out[column] = value
        elif (
            isinstance(column, list)
            and isinstance(value, dict)
            and list(value) == [c for c in column if c in value]
            and not set(value) & (set(record) - {key})
        ):
            out.update(value)
        else:
            out[key] = value
    return out


def split_name(value: Any) -> str:
    """The split a row's ``split`` goes to: the name itself when ``datasets`` accepts it, else
    the name with what it refuses replaced; the default split for anything that is not text."""
    if not isinstance(value, str) or not value:
        return DEFAULT_SPLIT
    name = value if SPLIT_NAME.match(value) else re.sub(r"[^\w.]+", "_", value)
    name = re.sub(r"\.{2,}", ".", name).strip(".")
    if not SPLIT_NAME.match(name) or name.lower() == "all":
        return DEFAULT_SPLIT
    return name


# --- the codec -------------------------------------------------------------------------------


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
        state = _State(json_columns=layout.json_columns)
        items: list[tuple[SourceRow | UnreadableRow, int | None]] = []
        for item in self.rows(self._records(path, layout, state), state):
            items.append((item, state.position if isinstance(item, SourceRow) else None))
        if items and all(position is not None for _, position in items):
            items.sort(key=lambda pair: pair[1] or 0)
        # a line number says where a row is only when there is one data file (an unreadable
        # row's message names its file)
        one_file = sum(len(files) for files in layout.splits.values()) == 1
        rows: list[SourceRow | UnreadableRow] = [
            SourceRow(index, item.line if one_file else None, item.data)
            if isinstance(item, SourceRow)
            else UnreadableRow(index, item.line, item.column, item.reason)
            for index, (item, _) in enumerate(items)
        ]
        return self.source(path, self._header(layout), iter(rows))

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
        if layout.other_configs:
            # the card's other configs are not read: the set says which, so nobody is misled
            kept["configsNotRead"] = layout.other_configs
        files = [file for files in layout.splits.values() for file in files]
        if any(file.name.lower().endswith(_PARQUET_SUFFIXES) for file in files):
            kept["dataFormat"] = "parquet"
        return {"extensions": {self.name: kept}} if kept else None

    def _records(
        self, folder: Path, layout: Layout, state: _State
    ) -> Iterator[tuple[int | None, Any] | UnreadableRow]:
        for split, files in layout.splits.items():
            for file in files:
                where = file.relative_to(folder).as_posix()
                for item in self._file_records(file):
                    state.split, state.position, state.columns = split, None, {}
                    if isinstance(item, UnreadableRow):
                        yield UnreadableRow(
                            item.index, item.line, item.column, f"{where}: {item.reason}"
                        )
                        continue
                    line, record = item
                    if isinstance(record, dict):
                        try:
                            record = self._as_record(record, state)
                        except ValueError as error:
                            yield UnreadableRow(0, line, None, f"{where}: {error}")
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
            row_id = f"{state.split}-{position + 1}"
            derived["id"] = "the row has no id column; named by split and position"
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
        columns = suite.columns if isinstance(suite, _State) else {}
        if payload_of(record.get(NAMESPACE)) is None and columns:
            # the columns the roles came from, so the export writes them back there
            row["metadata"]["case"]["extensions"][self.name]["columns"] = columns
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
        splits: dict[str, list[dict[str, Any]]] = {}
        order: list[str] = []
        blueprint_mode = False
        for row in export_rows(rows, self.name, header, options.accepted):
            state.split = split_name(row.extra.get("split"))
            record = self.record_for(row, context, tally)
            if record is None:
                continue
            extension = row.extension(self.name)
            blueprint_mode = blueprint_mode or extension is None
            table_row = from_roles(record, (extension or {}).get("columns"))
            splits.setdefault(state.split, []).append(table_row)
            order.append(state.split)
            tally.written += 1
        if _interleaved(order):
            # reading goes split by split: the payload says where each row stood
            at = {split: 0 for split in splits}
            for split in order:
                wrapper = splits[split][at[split]].get(NAMESPACE)
                payload = wrapper.get(NAMESPACE) if isinstance(wrapper, dict) else None
                if isinstance(payload, dict):
                    payload[_POSITION] = sum(at.values())
                at[split] += 1
        if not splits:
            splits[DEFAULT_SPLIT] = []
        table = _Table.of(splits, blueprint=blueprint_mode or not tally.written)
        own = {key: value for key, value in header.items() if key not in derived}
        card = _card_text(header, own, table, data_format, tally)
        with AtomicFolder(path, force=options.force, follow_links=options.in_place) as folder:
            (folder / DATA_FOLDER).mkdir()
            files = [path / CARD]
            for split, file_name in table.files(data_format).items():
                table.write(folder / DATA_FOLDER / file_name, split, data_format)
                files.append(path / DATA_FOLDER / file_name)
            (folder / CARD).write_text(card, encoding="utf-8", newline="\n")
            return tally.finish(header, files, options)

    # --- comparing native folders -------------------------------------------------------------

    def native_records(self, path: Path) -> list[Any]:
        layout = layout_of(path)
        found: list[Any] = []
        for split, files in layout.splits.items():
            for file in files:
                for item in self._file_records(file):
                    if isinstance(item, UnreadableRow):
                        raise ParseError(file, item.reason, line=item.line, column=item.column)
                    record = dict(item[1])
                    for name in layout.json_columns & set(record):
                        if isinstance(record[name], str):
                            record[name] = jsonvalues.loads(record[name])
                    if payload_of({NAMESPACE: record.get(NAMESPACE)}) is not None:
                        record.pop(NAMESPACE)
                    found.append({"split": split, "row": record})
        return found

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        return compare_records(self.native_records(original), self.native_records(exported))


#: the payload key saying where a row stood in the set, when splits interleave
_POSITION: Final = "at"


def _interleaved(order: list[str]) -> bool:
    seen: set[str] = set()
    previous = None
    for split in order:
        if split != previous and split in seen:
            return True
        seen.add(split)
        previous = split
    return False


def _recorded_format(header: dict[str, Any]) -> str | None:
    """The data format of the folder a set was imported from, if it says."""
    extensions = header.get("extensions")
    ours = extensions.get("huggingface") if isinstance(extensions, dict) else None
    value = ours.get("dataFormat") if isinstance(ours, dict) else None
    return value if isinstance(value, str) else None


@dataclass
class _Table:
    """The rows of every split, as columns of one type each."""

    splits: dict[str, list[dict[str, Any]]]
    columns: list[str]
    #: each column written as it is: its one Arrow type (None: nothing but nulls)
    plain: dict[str, Any]
    #: the columns written as JSON text
    json: list[str]

    @classmethod
    def of(cls, splits: dict[str, list[dict[str, Any]]], *, blueprint: bool) -> _Table:
        """The table of the rows of every split; ``blueprint``: some row was written from
        Blueprint, so every column of Blueprint's is there, whether any row has a value."""
        columns: dict[str, None] = dict.fromkeys(BLUEPRINT_COLUMNS) if blueprint else {}
        for records in splits.values():
            for record in records:
                columns.update(dict.fromkeys(record))
        plain: dict[str, Any] = {}
        as_json: list[str] = []
        for name in columns:
            values = [r.get(name) for records in splits.values() for r in records]
            try:
                kind = column_type(values)
            except _Mixed:
                as_json.append(name)
                continue
            # Blueprint's own free-form columns: text, or JSON text; the payload always JSON
            free = blueprint and name in ("input", "expected", "metadata")
            if name == NAMESPACE or (free and kind not in (None, "string")):
                as_json.append(name)
            else:
                plain[name] = kind
        return cls(splits, list(columns), plain, as_json)

    def cells(self, record: dict[str, Any]) -> dict[str, Any]:
        cells: dict[str, Any] = {}
        for name in self.columns:
            if name not in record:
                cells[name] = None  # every row has every column: null where it has no value
                continue
            value = record[name]
            if name == NAMESPACE and isinstance(value, dict) and set(value) == {NAMESPACE}:
                value = value[NAMESPACE]  # the payload, unwrapped: the column is Blueprint's
            if name in self.json:
                value = jsonvalues.dumps_text(value)  # JSON null is "null"; no value is null
            cells[name] = value
        return cells

    def files(self, data_format: str) -> dict[str, str]:
        """Each split's file name (names that differ only in case get a number)."""
        names: dict[str, str] = {}
        used: set[str] = set()
        suffix = ".parquet" if data_format == "parquet" else ".jsonl"
        for split in self.splits:
            stem, number = split, 2
            while stem.lower() in used:
                stem, number = f"{split}-{number}", number + 1
            used.add(stem.lower())
            names[split] = stem + suffix
        return names

    def features(self) -> list[dict[str, Any]] | None:
        """The card's ``dataset_info.features``, when every column has a scalar type (a
        column of lists or objects is left for datasets to infer, as it does without a card).
        A column of nulls only is declared text."""
        features = []
        for name in self.columns:
            kind = self.plain.get(name, "string")
            if not (kind is None or isinstance(kind, str)):
                return None
            features.append({"name": name, "dtype": kind or "string"})
        return features

    def write(self, target: Path, split: str, data_format: str) -> None:
        rows = [self.cells(record) for record in self.splits[split]]
        if data_format == "parquet":
            import pyarrow as pa

            pq = _pyarrow()
            schema = pa.schema(
                [
                    pa.field(name, _arrow_type(self.plain.get(name, "string")))
                    for name in self.columns
                ]
            )
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), target)
            return
        with target.open("wb") as handle:
            for cells in rows:
                handle.write(jsonvalues.dumps(cells))
                handle.write(b"\n")


def _card_text(
    header: dict[str, Any],
    own: dict[str, Any],
    table: _Table,
    data_format: str,
    tally: ExportTally,
) -> str:
    extensions = header.get("extensions")
    ours = extensions.get("huggingface") if isinstance(extensions, dict) else None
    ours = ours if isinstance(ours, dict) else {}
    kept_card = ours.get("card")
    meta: dict[str, Any] = (
        {k: v for k, v in kept_card.items() if k not in _CARD_KEYS}
        if isinstance(kept_card, dict)
        else {}
    )
    name = header.get("name")
    if isinstance(name, str) and "pretty_name" not in meta:
        meta["pretty_name"] = name
    files = table.files(data_format)
    meta["configs"] = [
        {
            "config_name": "default",
            "data_files": [
                {"split": split, "path": f"{DATA_FOLDER}/{file_name}"}
                for split, file_name in files.items()
            ],
        }
    ]
    features = table.features()
    if features is not None:
        meta["dataset_info"] = {"features": features}
    meta[NAMESPACE] = {
        "format": CARD_FORMAT,
        "defaultSplit": DEFAULT_SPLIT,
        "jsonColumns": table.json,
        "set": own,
    }
    body = ours.get("body") if isinstance(ours.get("body"), str) else None
    if body is None:
        body = _card_body(header, table, files)
    return "---\n" + dump_front_matter(meta) + "---\n" + body


def _card_body(header: dict[str, Any], table: _Table, files: dict[str, str]) -> str:
    name = header.get("name") if isinstance(header.get("name"), str) else "golden set"
    lines = [f"# {name}", ""]
    description = header.get("description")
    if isinstance(description, str) and description.strip():
        lines += [description.strip(), ""]
    lines += [
        "A golden set: evaluation cases for an LLM application or agent. Every row declares",
        "its oracle type (the form of its expected answer), which decides how it may be graded.",
        "",
        "## Splits",
        "",
        "| split | rows | file |",
        "|---|---|---|",
    ]
    lines += [
        f"| {split} | {len(table.splits[split])} | {DATA_FOLDER}/{file_name} |"
        for split, file_name in files.items()
    ]
    counts: dict[str, int] = {}
    starters = 0
    for records in table.splits.values():
        for record in records:
            oracle = record.get("oracle_type")
            if isinstance(oracle, str):
                counts[oracle] = counts.get(oracle, 0) + 1
            starters += record.get("starter_example") is True
    if counts:
        lines += ["", "## Oracle types", "", "| oracle type | rows |", "|---|---|"]
        lines += [f"| {oracle} | {count} |" for oracle, count in sorted(counts.items())]
    lines += [
        "",
        "## Columns",
        "",
        "- `id`: the case's id; `input`: what the system under test receives; `expected`: the",
        "  expected answer, whose shape the oracle type fixes (empty for rubric and",
        "  behaviour-only cases).",
        "- `oracle_type`, `expected_behavior`, `provenance`, `case_family`, `evaluator`: the",
        "  case profile's main fields, to filter on.",
        "- `starter_example`: true for rows that are examples to adapt, not validated gold.",
        "- `human_review`: true for rows no automated grader may score.",
        "- `metadata`: the row's other metadata, as JSON text.",
        "- `blueprint`: the whole case profile (and what the other columns cannot say), as JSON",
        "  text; Blueprint reads it back to restore each row exactly.",
    ]
    if table.json:
        listed = ", ".join(f"`{name}`" for name in table.json)
        lines += [
            "",
            f"Columns holding JSON text (decode them with `json.loads`): {listed}. Arrow needs",
            "one type per column, so values whose types vary travel as JSON text.",
        ]
    if starters:
        lines += [
            "",
            f"**{starters} row(s) are starter examples**, not validated gold: review them before",
            "relying on a score.",
        ]
    lines += [
        "",
        "## Loading",
        "",
        "```python",
        "import json",
        "from datasets import load_dataset",
        "",
        'cases = load_dataset("path/to/this/folder")',
        "for row in cases[next(iter(cases))]:",
        '    case = json.loads(row["blueprint"])["case"]',
        '    print(row["id"], row["oracle_type"], case["expectedBehavior"])',
        "```",
        "",
    ]
    return "\n".join(lines)
