"""The published JSON Schemas: generated from the models, written to ``schemas/``, validated with.

The committed files in ``schemas/`` are exactly what :func:`published_schemas` returns; a test
fails when they drift. Validation uses the same documents, with two corrections that make
Python's jsonschema agree with both the JSON Schema specification and the strict models:
``integer`` excludes floats such as ``1.0``, and ``$`` in a pattern means end of string (ECMA-262),
not "before a final newline" (Python's ``re``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import jsonschema_rs

from blueprint.core.resources import shipped_folders

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator
    from pydantic import BaseModel
    from pydantic.json_schema import GenerateJsonSchema

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

#: file name in schemas/ -> the document's $id
SCHEMA_FILES: Final[dict[str, str]] = {
    "eval-set.schema.json": "urn:blueprint:schema:eval-set:v1",
    "row.schema.json": "urn:blueprint:schema:row:v1",
    "case-profile.schema.json": "urn:blueprint:schema:case-profile:v1",
    "expected.schema.json": "urn:blueprint:schema:expected:v1",
    "pack.schema.json": "urn:blueprint:schema:pack:v1",
    "overlay.schema.json": "urn:blueprint:schema:overlay:v1",
}


# The schemas are generated from the models (pydantic, the packs' models) only to publish
# them; checking reads the files Blueprint ships, so those imports wait until generation.


@cache
def _generator() -> type[GenerateJsonSchema]:
    from pydantic.json_schema import GenerateJsonSchema

    class Generator(GenerateJsonSchema):
        """Pydantic's generator without per-property titles (they only repeat the key)."""

        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    return Generator


def _model_schema(model: type[BaseModel], schema_id: str) -> dict[str, Any]:
    body = model.model_json_schema(by_alias=True, schema_generator=_generator())
    return {"$schema": DIALECT, "$id": schema_id, **body}


def _expected_schema(schema_id: str) -> dict[str, Any]:
    from pydantic.json_schema import models_json_schema

    from blueprint.core.model import EXPECTED_SHAPES

    models = [model for shapes in EXPECTED_SHAPES.values() if shapes for model in shapes]
    _, top = models_json_schema(
        [(model, "validation") for model in models],
        by_alias=True,
        schema_generator=_generator(),
        ref_template="#/$defs/{model}",
    )
    defs: dict[str, Any] = dict(top["$defs"])
    for oracle_type, shapes in EXPECTED_SHAPES.items():
        if not shapes:
            continue
        refs = [{"$ref": f"#/$defs/{model.__name__}"} for model in shapes]
        defs[oracle_type] = refs[0] if len(refs) == 1 else {"anyOf": refs}
    return {
        "$schema": DIALECT,
        "$id": schema_id,
        "title": "Expected",
        "description": (
            "The shape of `expected` for each oracle type that has one, under $defs named after"
            " the oracle type. reference-answer accepts any JSON value; rubric and"
            " expected-behavior-only rows carry no `expected`."
        ),
        "$defs": dict(sorted(defs.items())),
    }


@cache
def published_schemas() -> dict[str, dict[str, Any]]:
    """Every published schema, keyed by its file name in ``schemas/``."""
    from blueprint.core.model import CaseProfile, EvalSet, Row
    from blueprint.core.pack_model import Overlay, Pack

    ids = SCHEMA_FILES
    return {
        "eval-set.schema.json": _model_schema(EvalSet, ids["eval-set.schema.json"]),
        "row.schema.json": _model_schema(Row, ids["row.schema.json"]),
        "case-profile.schema.json": _model_schema(CaseProfile, ids["case-profile.schema.json"]),
        "expected.schema.json": _expected_schema(ids["expected.schema.json"]),
        "pack.schema.json": _model_schema(Pack, ids["pack.schema.json"]),
        "overlay.schema.json": _model_schema(Overlay, ids["overlay.schema.json"]),
    }


def render_schema(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# --- validating against the published schemas ------------------------------------------------


def _is_strict_integer(checker: Any, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    # ECMA-262 `$` (no multiline flag) matches only at the very end; Python's also matches
    # before a final newline, which would accept "policy-drift\n" as kebab-case.
    return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))


def _pattern(
    validator: Any, pattern: str, instance: object, schema: Any
) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not _ecma_pattern(pattern).search(instance):
        from jsonschema import ValidationError

        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _strict_validator() -> Any:
    """jsonschema's Draft 2020-12 validator with ECMA-262 patterns and strict integers.

    Imported and built on first use: rows jsonschema-rs accepts never need it, only the
    description of what is wrong does, so a run over valid files never loads jsonschema.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    return extend(
        Draft202012Validator,
        validators={"pattern": _pattern},
        type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
    )


def _check_pattern(
    validator: Any, pattern: str, instance: object, schema: Any
) -> Iterator[ValidationError]:
    from jsonschema import ValidationError

    from blueprint.core.regex import RegexError, compile_regex

    if not isinstance(instance, str):
        return
    try:
        matched = compile_regex(pattern).search(instance) is not None
    except RegexError as error:
        yield ValidationError(f"the pattern {pattern!r} cannot run: {error}")
        return
    if not matched:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _check_validator() -> Any:
    """Draft 2020-12 as a ``json-schema`` check applies it: patterns are JavaScript's (as
    in every runner's validator), and references reach nothing outside the schema."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    return extend(Draft202012Validator, validators={"pattern": _check_pattern})


def ecma_validator(schema: dict[str, Any]) -> Validator:
    """A validator for the schema of a ``json-schema`` check."""
    validator: Validator = _check_validator()(schema)
    return validator


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why a ``json-schema`` check's schema is not a Draft 2020-12 schema whose patterns
    run (None when it is one)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from blueprint.core.regex import regex_problem

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return f"the schema is not a JSON Schema: {error.message}"
    except RecursionError:
        return "the schema is nested too deeply"
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            pattern = node.get("pattern")
            problem = regex_problem(pattern) if isinstance(pattern, str) else None
            if problem is not None:
                return f"the schema's pattern {pattern!r} cannot run: {problem}"
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def _shipped_folder() -> Path | None:
    """The published schema files: inside the installed package, or the source tree's
    ``schemas/``."""
    for candidate in shipped_folders("schemas"):
        if (candidate / "row.schema.json").is_file():
            return candidate
    return None


@cache
def checking_schemas() -> dict[str, dict[str, Any]]:
    """The published schemas the validator checks with, read from the files Blueprint ships.

    They are the documents :func:`published_schemas` generates (a test holds the two equal,
    for the source tree and for the installed wheel), read in milliseconds where generating
    them from the models takes a good part of a second at every start. Without the files
    they are generated."""
    folder = _shipped_folder()
    if folder is not None:
        try:
            return {
                name: json.loads((folder / name).read_text(encoding="utf-8"))
                for name in SCHEMA_FILES
            }
        except (OSError, ValueError):
            pass  # an unreadable copy: the models are the source of truth
    return published_schemas()


def _schema_for(name: str, subschema: str | None) -> dict[str, Any]:
    document = checking_schemas()[name]
    if subschema is None:
        return document
    return {**document["$defs"][subschema], "$defs": document["$defs"]}


@cache
def validator_for(name: str, subschema: str | None = None) -> Validator:
    """A validator for one published schema, or for one of its ``$defs``."""
    validator: Validator = _strict_validator()(_schema_for(name, subschema))
    return validator


# --- the compiled fast path --------------------------------------------------------------------

#: the keyword added beside every ``"type": "integer"`` for the compiled validator
_STRICT_INTEGER: Final = "x-blueprint-strict-integer"


class _StrictInteger:
    """Refuses a float where the schema wants an integer: JSON Schema counts ``1.0`` as an
    integer, the strict models do not, and neither does :func:`validator_for`."""

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        pass

    def validate(self, instance: Any) -> None:
        if isinstance(instance, float):
            raise ValueError("a float is not an integer")


def _with_strict_integers(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_with_strict_integers(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    found = {key: _with_strict_integers(value) for key, value in schema.items()}
    kind = schema.get("type")
    if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
        found[_STRICT_INTEGER] = True
    return found


@cache
def accepts(name: str, subschema: str | None = None) -> Callable[[Any], bool]:
    """Whether a value fits one published schema (or one of its ``$defs``), compiled: the
    verdict of :func:`validator_for` at a small fraction of its cost. It only says yes or no;
    :func:`validator_for` describes what is wrong. ``$`` already means end of string there
    (ECMA-262 regular expressions), and floats are refused where integers are wanted."""
    compiled = jsonschema_rs.Draft202012Validator(
        _with_strict_integers(_schema_for(name, subschema)),
        keywords={_STRICT_INTEGER: _StrictInteger},
    )

    def check(instance: Any) -> bool:
        try:
            return bool(compiled.is_valid(instance))
        except (ValueError, TypeError, OverflowError):  # a value it cannot take in (a lone
            return False  # surrogate, a Python object): the slow path decides

    return check
