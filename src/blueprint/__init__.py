"""Blueprint: golden sets whose cases declare their oracle type, and the tools around them."""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any, Final

#: where each public name lives; a module is imported the first time one of its names is
#: used, so that ``import blueprint`` (and the command line's start-up) stays cheap
_PUBLIC: Final = {
    "ADMISSIBILITY": "blueprint.admissibility",
    "OracleRule": "blueprint.admissibility",
    "admissible_evaluators": "blueprint.admissibility",
    "bar_reason": "blueprint.admissibility",
    "conditions": "blueprint.admissibility",
    "verdict": "blueprint.admissibility",
    "ConvertOptions": "blueprint.convert",
    "ConvertResult": "blueprint.convert",
    "RoundtripResult": "blueprint.convert",
    "convert": "blueprint.convert",
    "roundtrip": "blueprint.convert",
    "SetDiff": "blueprint.diff",
    "diff_files": "blueprint.diff",
    "AmbiguousFormatError": "blueprint.errors",
    "BlueprintError": "blueprint.errors",
    "InvalidSetError": "blueprint.errors",
    "LossyExportRefused": "blueprint.errors",
    "OutputExistsError": "blueprint.errors",
    "ParseError": "blueprint.errors",
    "UnknownFormatError": "blueprint.errors",
    "UsageError": "blueprint.errors",
    "REGISTRY": "blueprint.formats",
    "Codec": "blueprint.formats",
    "ExportResult": "blueprint.formats",
    "LossyField": "blueprint.formats",
    "get_codec": "blueprint.formats",
    "issues_frame": "blueprint.frames",
    "rows_frame": "blueprint.frames",
    "DuplicateReport": "blueprint.hygiene",
    "find_duplicates": "blueprint.hygiene",
    "CODES": "blueprint.issues",
    "Issue": "blueprint.issues",
    "ValidationReport": "blueprint.issues",
    "EVALUATOR_TYPES": "blueprint.model",
    "ORACLE_TYPES": "blueprint.model",
    "PROVENANCES": "blueprint.model",
    "CaseFamily": "blueprint.model",
    "CaseProfile": "blueprint.model",
    "EvalSet": "blueprint.model",
    "Row": "blueprint.model",
    "load_set": "blueprint.sets",
    "save_set": "blueprint.sets",
    "SampleOptions": "blueprint.splits",
    "SplitOptions": "blueprint.splits",
    "sample_set": "blueprint.splits",
    "split_set": "blueprint.splits",
    "ValidationOptions": "blueprint.validate",
    "validate_document": "blueprint.validate",
    "validate_file": "blueprint.validate",
}

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


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        # importing the submodule blueprint.convert binds it here under its name; the public
        # function of the same name must stay what ``blueprint.convert`` means
        if name in _PUBLIC and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _version() -> str:
    # importlib.metadata costs more to import than all of ``import blueprint``: only --version
    # and the few who ask read it
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("blueprint-evals")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
        globals()[name] = value
        return value
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'blueprint' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, "__version__"})


if TYPE_CHECKING:  # what type checkers and editors see: the same names, imported eagerly
    __version__: str

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
