"""The types Arrow reads a dataset's columns as, and the table of every split's rows."""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Iterable
from dataclasses import dataclass
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
