"""The types Arrow reads a dataset's columns as, and the table of every split's rows."""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import UsageError
from blueprint.formats.mapping import NAMESPACE
from blueprint.io import jsonvalues

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

_INT64: Final = 2**63


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


#: rows a Parquet file is written in at a time: memory holds one batch, not the split
PARQUET_BATCH: Final = 10_000


class _Table:
    """The rows of every split, as columns of one type each, gathered one row at a time.

    Arrow needs each column's one type before the first row is written, which only the
    last row settles; so the rows wait in a spool file per split (in ``folder``) while the
    types, the splits' sizes and the card's counts are taken, and are then written from
    the spools. Memory holds the columns and the counts, not the rows.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.columns: list[str] = []
        #: each column written as it is: its one Arrow type (None: nothing but nulls)
        self.plain: dict[str, Any] = {}
        #: the columns written as JSON text
        self.json: list[str] = []
        #: rows in each split, in the order the splits first appear
        self.sizes: dict[str, int] = {}
        #: rows by oracle type, and rows that are starter examples (for the card)
        self.oracle_types: dict[str, int] = {}
        self.starters = 0
        self._seen: dict[str, None] = {}
        self._types: dict[str, Any] = {}
        self._mixed: set[str] = set()
        self._spools: dict[str, Any] = {}

    def add(self, split: str, record: dict[str, Any]) -> None:
        """Take one row: its values' types, and the row itself into its split's spool."""
        for name, value in record.items():
            if name not in self._seen:
                self._seen[name] = None
            if name in self._mixed:
                continue
            try:
                self._types[name] = merge(self._types.get(name), signature(value))
            except _Mixed:
                self._mixed.add(name)
        oracle = record.get("oracle_type")
        if isinstance(oracle, str):
            self.oracle_types[oracle] = self.oracle_types.get(oracle, 0) + 1
        self.starters += record.get("starter_example") is True
        self.add_split(split)
        spool = self._spools[split]
        spool.write(jsonvalues.dumps(record))
        spool.write(b"\n")
        self.sizes[split] += 1

    def add_split(self, split: str) -> None:
        """A split with no rows (so far): its file is written all the same."""
        if split not in self._spools:
            self._spools[split] = (self.folder / f"{len(self._spools)}.jsonl").open("wb")
            self.sizes[split] = 0

    def settle(self, *, blueprint: bool) -> None:
        """Decide every column's type, once every row is in; ``blueprint``: some row was
        written from Blueprint, so every column of Blueprint's is there, whether any row has
        a value."""
        for spool in self._spools.values():
            spool.close()
        columns: dict[str, None] = dict.fromkeys(BLUEPRINT_COLUMNS) if blueprint else {}
        columns.update(self._seen)
        self.columns = list(columns)
        for name in self.columns:
            if name in self._mixed:
                self.json.append(name)
                continue
            kind = self._types.get(name)
            # Blueprint's own free-form columns: text, or JSON text; the payload always JSON
            free = blueprint and name in ("input", "expected", "metadata")
            if name == NAMESPACE or (free and kind not in (None, "string")):
                self.json.append(name)
            else:
                self.plain[name] = kind

    def records(self, split: str) -> Iterator[dict[str, Any]]:
        """The rows of one split, from its spool, in the order they were added."""
        read = jsonvalues.reader()  # the limits, looked up once for the split
        with (self.folder / f"{list(self._spools).index(split)}.jsonl").open("rb") as spool:
            for line in spool:
                yield read(line)

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
        for split in self.sizes:
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

    def write(
        self,
        target: Path,
        split: str,
        data_format: str,
        fix: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """Write one split's file from its spool; ``fix`` changes each row first."""
        rows = (self._cells_of(record, fix) for record in self.records(split))
        if data_format == "parquet":
            import pyarrow as pa

            pq = _pyarrow()
            schema = pa.schema(
                [
                    pa.field(name, _arrow_type(self.plain.get(name, "string")))
                    for name in self.columns
                ]
            )
            with pq.ParquetWriter(target, schema) as writer:
                batch: list[dict[str, Any]] = []
                for cells in rows:
                    batch.append(cells)
                    if len(batch) == PARQUET_BATCH:
                        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                        batch = []
                if batch or not self.sizes.get(split):
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            return
        with target.open("wb") as handle:
            for cells in rows:
                handle.write(jsonvalues.dumps(cells))
                handle.write(b"\n")

    def _cells_of(
        self, record: dict[str, Any], fix: Callable[[dict[str, Any]], None] | None
    ) -> dict[str, Any]:
        if fix is not None:
            fix(record)
        return self.cells(record)
