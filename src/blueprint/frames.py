"""pandas interop: a set's rows, or a validation report's issues, as a DataFrame.

Rows are flattened the way the CSV layout is (``id``, ``input``, ``expected``, ``case.<field>``,
``metadata.<key>``), but values stay Python values: lists stay lists, objects stay dicts, and
a field a row does not have is missing (``NaN``/``None``), not an empty string.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blueprint.convert import data_rows, open_set
from blueprint.core.issues import ISSUE_FIELDS, ValidationReport
from blueprint.formats import StrPath

if TYPE_CHECKING:
    import pandas as pd


def flatten_row(row: dict[str, Any]) -> dict[str, Any]:
    """One row as a flat record keyed like the CSV columns."""
    flat = {key: value for key, value in row.items() if key != "metadata"}
    metadata = row.get("metadata")
    if isinstance(metadata, dict):
        for key, value in metadata.items():
            if key == "case" and isinstance(value, dict):
                flat.update({f"case.{name}": item for name, item in value.items()})
            else:
                flat[f"metadata.{key}"] = value
    return flat


def rows_frame(path: StrPath, *, format: str | None = None) -> pd.DataFrame:
    """A set file's rows as a DataFrame, one row per case."""
    import pandas as pd

    source = open_set(path, format)
    return pd.DataFrame.from_records([flatten_row(row) for row in data_rows(source)])


def issues_frame(report: ValidationReport) -> pd.DataFrame:
    """A validation report's issues as a DataFrame (columns as in the JSON report)."""
    import pandas as pd

    records = [issue.to_json() for issue in report.issues]
    return pd.DataFrame.from_records(records, columns=list(ISSUE_FIELDS))
