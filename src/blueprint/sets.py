"""Loading a set file as a model, and saving a model, in any canonical format."""

from __future__ import annotations

from pathlib import Path

from blueprint.convert import complete_header, data_rows
from blueprint.core.errors import InvalidSetError
from blueprint.core.issues import ERROR_CODES
from blueprint.core.model import EvalSet, dump_row
from blueprint.formats import ExportResult, StrPath, WriteOptions, resolve_codec
from blueprint.validation.validate import ValidationOptions, validate_file


def load_set(path: StrPath, *, format: str | None = None) -> EvalSet:
    """Read and validate a set; raises InvalidSetError listing the errors when it is not valid.

    Warnings and info findings do not stop loading; call validate_file to see them.
    """
    path = Path(path)
    report = validate_file(
        path, format=format, options=ValidationOptions(select=ERROR_CODES, row_ids=False)
    )
    errors = [issue for issue in report.issues if issue.severity == "error"]
    if errors:
        raise InvalidSetError(path, errors)
    source = resolve_codec(path, format, reading=True).open(path)
    header, _ = complete_header(source)
    return EvalSet.model_validate({**header, "rows": list(data_rows(source))})


def save_set(
    eval_set: EvalSet, path: StrPath, *, format: str | None = None, force: bool = False
) -> ExportResult:
    """Write a set; fields never set on the model stay absent in the file."""
    path = Path(path)
    codec = resolve_codec(path, format, reading=False)
    header = eval_set.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude={"rows"})
    header.setdefault("schemaVersion", eval_set.schema_version)
    rows = (dump_row(row) for row in eval_set.rows)
    return codec.write(header, rows, path, WriteOptions(force=force))
