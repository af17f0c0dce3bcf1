"""What every vendor codec shares: reading records into rows, writing rows as records.

Two kinds of row reach a vendor writer. A row authored in Blueprint (or imported from
another format) is written in *Blueprint mode*: native fields where the vendor has them, and
the rest of the row under one namespaced key in the vendor's free-form metadata
(``metadata.blueprint``), so importing the file restores the row exactly. A row imported
from the same format is written in *native mode*: the vendor's record as it came in (see
:mod:`blueprint.formats.native`), with the case profile in the same namespaced key.

Imports of records that did not come from Blueprint infer what they must, set provenance
``imported``, and record every derived value under ``case.extensions["blueprint-import"]``,
which ``blueprint validate`` reports as ``derived-value`` so a person reviews it. Every key
of such a record that is not read into a canonical field is kept, so nothing is lost.

The export side is :mod:`.exporting`, the import side :mod:`.importing`, and the base class
that joins them :mod:`.codec`.
"""

from __future__ import annotations

from blueprint.formats.vendor.codec import VendorCodec
from blueprint.formats.vendor.exporting import (
    HUMAN_REVIEW,
    JSON_ARRAY,
    JSON_LINES,
    STARTER_NOTE,
    ExportRow,
    ExportTally,
    Framing,
    InvalidRowForExport,
    WriteContext,
    changed_fields,
    compare_records,
    export_rows,
    family_evaluators,
    in_batches,
    starter_note,
)
from blueprint.formats.vendor.importing import (
    IMPORT_EXTENSION,
    RESERVED_METADATA,
    Records,
    Values,
    _UniqueIds,
    extras_of,
    imported_row,
    json_array_records,
    oracle_for_expected,
    payload_of,
    read_json_document,
    read_json_text,
)

__all__ = [
    "HUMAN_REVIEW",
    "IMPORT_EXTENSION",
    "JSON_ARRAY",
    "JSON_LINES",
    "RESERVED_METADATA",
    "STARTER_NOTE",
    "ExportRow",
    "ExportTally",
    "Framing",
    "InvalidRowForExport",
    "Records",
    "Values",
    "VendorCodec",
    "WriteContext",
    "_UniqueIds",
    "changed_fields",
    "compare_records",
    "export_rows",
    "extras_of",
    "family_evaluators",
    "imported_row",
    "in_batches",
    "json_array_records",
    "oracle_for_expected",
    "payload_of",
    "read_json_document",
    "read_json_text",
    "starter_note",
]
