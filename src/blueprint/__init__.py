"""Blueprint: golden sets whose cases declare their oracle type, and the tools around them."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
import warnings
from importlib.machinery import ModuleSpec, SourceFileLoader
from typing import TYPE_CHECKING, Any, Final, cast

#: where each public name lives; a module is imported the first time one of its names is
#: used, so that ``import blueprint`` (and the command line's start-up) stays cheap
_PUBLIC: Final = {
    "ADMISSIBILITY": "blueprint.core.admissibility",
    "OracleRule": "blueprint.core.admissibility",
    "admissible_evaluators": "blueprint.core.admissibility",
    "bar_reason": "blueprint.core.admissibility",
    "conditions": "blueprint.core.admissibility",
    "verdict": "blueprint.core.admissibility",
    "ConvertOptions": "blueprint.convert",
    "ConvertResult": "blueprint.convert",
    "RoundtripResult": "blueprint.convert",
    "convert": "blueprint.convert",
    "roundtrip": "blueprint.convert",
    "SetDiff": "blueprint.diff",
    "diff_files": "blueprint.diff",
    "AmbiguousFormatError": "blueprint.core.errors",
    "BlueprintError": "blueprint.core.errors",
    "EveryRowExcluded": "blueprint.core.errors",
    "InvalidSetError": "blueprint.core.errors",
    "LossyExportRefused": "blueprint.core.errors",
    "OutputExistsError": "blueprint.core.errors",
    "ParseError": "blueprint.core.errors",
    "UnknownFormatError": "blueprint.core.errors",
    "UsageError": "blueprint.core.errors",
    "REGISTRY": "blueprint.formats",
    "Codec": "blueprint.formats",
    "ExportResult": "blueprint.formats",
    "LossyField": "blueprint.formats",
    "get_codec": "blueprint.formats",
    "issues_frame": "blueprint.frames",
    "rows_frame": "blueprint.frames",
    "DuplicateReport": "blueprint.authoring.hygiene",
    "find_duplicates": "blueprint.authoring.hygiene",
    "CODES": "blueprint.core.issues",
    "Issue": "blueprint.core.issues",
    "ValidationReport": "blueprint.core.issues",
    "EVALUATOR_TYPES": "blueprint.core.model",
    "ORACLE_TYPES": "blueprint.core.model",
    "PROVENANCES": "blueprint.core.model",
    "CaseFamily": "blueprint.core.model",
    "CaseProfile": "blueprint.core.model",
    "EvalSet": "blueprint.core.model",
    "Row": "blueprint.core.model",
    "load_set": "blueprint.sets",
    "save_set": "blueprint.sets",
    "SampleOptions": "blueprint.authoring.splits",
    "SplitOptions": "blueprint.authoring.splits",
    "sample_set": "blueprint.authoring.splits",
    "split_set": "blueprint.authoring.splits",
    "ValidationOptions": "blueprint.validation.stream",
    "validate_document": "blueprint.validation.validate",
    "validate_file": "blueprint.validation.validate",
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
    "EveryRowExcluded",
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


#: the modules that moved into the wings (``docs/architecture.md``), by their old path; the
#: old path still imports, with a DeprecationWarning, until the release after 0.1
_MOVED: Final = {
    **{
        f"blueprint.{name}": f"blueprint.{wing}.{name}"
        for wing, names in {
            "core": ("admissibility", "errors", "issues", "jsonpath", "model", "schema"),
            "io": ("atomic", "jsonvalues", "limits", "locking", "yamlload"),
            "validation": ("checks", "inputtext", "parallel", "rowindex", "validate"),
            "authoring": ("builder", "curate", "editing", "hygiene", "merge", "packs", "splits"),
            "reports": ("judgepages", "judging", "render", "review", "risk", "summary"),
            "project": ("check", "config", "discovery", "gitref"),
            "cli": ("docgen",),
        }.items()
        for name in names
    },
    "blueprint.templating": "blueprint.reports.templating",
    "blueprint.formats.toml_positions": "blueprint.io.toml_positions",
}


class _MovedModules:
    """Finds an old module path and gives the module at its new one (the same object)."""

    def __init__(self) -> None:
        self._own_specs: dict[str, ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        return ModuleSpec(fullname, cast("Loader", self)) if fullname in _MOVED else None

    def _warn(self, fullname: str) -> str:
        new = _MOVED[fullname]
        warnings.warn(
            f"{fullname} has moved to {new}; the old path goes in the next release",
            DeprecationWarning,
            stacklevel=3,
        )
        return new

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self._warn(spec.name))
        self._own_specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # the import system gave the module the old path's spec: it gets its own back
        if module.__spec__ is not None:
            module.__spec__ = self._own_specs.pop(module.__spec__.name)

    def get_code(self, fullname: str) -> types.CodeType | None:
        """For ``python -m`` on an old path: the new module's code."""
        spec = importlib.util.find_spec(self._warn(fullname))
        if spec is None or not isinstance(spec.loader, SourceFileLoader):
            return None
        return spec.loader.get_code(spec.name)


sys.meta_path.append(_MovedModules())


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from blueprint.core.version import package_version

        value: Any = package_version()
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
    from importlib.abc import Loader

    __version__: str

    from blueprint.authoring.hygiene import DuplicateReport, find_duplicates
    from blueprint.authoring.splits import SampleOptions, SplitOptions, sample_set, split_set
    from blueprint.convert import ConvertOptions, ConvertResult, RoundtripResult, convert, roundtrip
    from blueprint.core.admissibility import (
        ADMISSIBILITY,
        OracleRule,
        admissible_evaluators,
        bar_reason,
        conditions,
        verdict,
    )
    from blueprint.core.errors import (
        AmbiguousFormatError,
        BlueprintError,
        EveryRowExcluded,
        InvalidSetError,
        LossyExportRefused,
        OutputExistsError,
        ParseError,
        UnknownFormatError,
        UsageError,
    )
    from blueprint.core.issues import CODES, Issue, ValidationReport
    from blueprint.core.model import (
        EVALUATOR_TYPES,
        ORACLE_TYPES,
        PROVENANCES,
        CaseFamily,
        CaseProfile,
        EvalSet,
        Row,
    )
    from blueprint.diff import SetDiff, diff_files
    from blueprint.formats import REGISTRY, Codec, ExportResult, LossyField, get_codec
    from blueprint.frames import issues_frame, rows_frame
    from blueprint.sets import load_set, save_set
    from blueprint.validation.stream import ValidationOptions
    from blueprint.validation.validate import validate_document, validate_file
