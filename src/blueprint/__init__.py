"""Blueprint: golden sets whose cases declare their oracle type, and the tools around them."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("blueprint-evals")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

from blueprint.admissibility import (
    ADMISSIBILITY,
    OracleRule,
    admissible_evaluators,
    bar_reason,
    conditions,
    verdict,
)
from blueprint.convert import ConvertOptions, ConvertResult, RoundtripResult, convert, roundtrip
from blueprint.diff import SetDiff, diff_files
from blueprint.errors import (
    AmbiguousFormatError,
    BlueprintError,
    InvalidSetError,
    LossyExportRefused,
    OutputExistsError,
    ParseError,
    UnknownFormatError,
    UsageError,
)
from blueprint.formats import REGISTRY, Codec, ExportResult, LossyField, get_codec
from blueprint.frames import issues_frame, rows_frame
from blueprint.hygiene import DuplicateReport, find_duplicates
from blueprint.issues import CODES, Issue, ValidationReport
from blueprint.model import (
    EVALUATOR_TYPES,
    ORACLE_TYPES,
    PROVENANCES,
    CaseFamily,
    CaseProfile,
    EvalSet,
    Row,
)
from blueprint.sets import load_set, save_set
from blueprint.splits import SampleOptions, SplitOptions, sample_set, split_set
from blueprint.validate import ValidationOptions, validate_document, validate_file

__all__ = [
    "ADMISSIBILITY",
    "CODES",
    "EVALUATOR_TYPES",
    "ORACLE_TYPES",
    "PROVENANCES",
    "REGISTRY",
    "AmbiguousFormatError",
    "BlueprintError",
    "CaseFamily",
    "CaseProfile",
    "Codec",
    "ConvertOptions",
    "ConvertResult",
    "DuplicateReport",
    "EvalSet",
    "ExportResult",
    "InvalidSetError",
    "Issue",
    "LossyExportRefused",
    "LossyField",
    "OracleRule",
    "OutputExistsError",
    "ParseError",
    "RoundtripResult",
    "Row",
    "SampleOptions",
    "SetDiff",
    "SplitOptions",
    "UnknownFormatError",
    "UsageError",
    "ValidationOptions",
    "ValidationReport",
    "__version__",
    "admissible_evaluators",
    "bar_reason",
    "conditions",
    "convert",
    "diff_files",
    "find_duplicates",
    "get_codec",
    "issues_frame",
    "load_set",
    "roundtrip",
    "rows_frame",
    "sample_set",
    "save_set",
    "split_set",
    "validate_document",
    "validate_file",
    "verdict",
]
