"""Typed structures for rows, generated from the published row schema (msgspec).

The validator's fast path decodes each row straight into these structures: msgspec checks the
shape in C while it parses, which is as fast as parsing alone. They are not a second model.
:func:`struct_type` translates the published JSON Schema (which the pydantic models generate)
into msgspec types when first asked, so the two cannot drift; a keyword the translation does
not know is refused, never ignored. A test holds the typed structures, the published schema and
the pydantic models to the same accept or refuse answer.

A row decodes in two steps (see :class:`RowTypes`). ``metadata`` is an open object: its
``case`` is checked, and the other keys are kept as they are. A msgspec structure would drop
those keys, so the row's own structure takes an open object as a plain dict, and each open
object is then converted to a structure of its known keys.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Final, Literal, Union

import msgspec

from blueprint.core.schema import checking_schemas

#: keywords that only describe a schema; everything else must be translated or refused
_DESCRIPTIVE: Final = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples", "$defs"}
)


class UntranslatableSchema(ValueError):
    """The schema uses a keyword the translation to msgspec types does not know."""


def _ecma(pattern: str) -> str:
    # ECMA-262 `$` (no multiline flag) matches only at the very end; Python's also matches
    # before a final newline (the same translation as the schema validator's)
    return re.sub(r"(?<!\\)\$", r"\\Z", pattern)


class _Translator:
    """One schema document's ``$defs`` and the structure types made from them so far."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.definitions: dict[str, Any] = document.get("$defs", {})
        self.made: dict[str, Any] = {}
        #: how many tagged unions deep the translation is (a check inside a check)
        self.depth = 0

    def type_of(self, schema: Any, name: str, *, shallow: bool = False) -> Any:
        """The msgspec type for ``schema``; ``shallow`` takes an open object with known
        properties as a plain dict (see the module's note)."""
        if schema is True or schema == {}:
            return Any
        if not isinstance(schema, dict):
            raise UntranslatableSchema(f"{name}: a schema must be an object, not {schema!r}")
        unknown = set(schema) - _DESCRIPTIVE - _KNOWN
        if unknown:
            raise UntranslatableSchema(f"{name}: unknown keyword(s) {sorted(unknown)}")
        if "$ref" in schema:
            return self.reference(schema["$ref"], shallow=shallow)
        if "oneOf" in schema:
            return self.tagged(schema, name, shallow=shallow)
        if "anyOf" in schema:
            branches = [
                self.type_of(branch, f"{name}[{position}]", shallow=shallow)
                for position, branch in enumerate(schema["anyOf"])
            ]
            return Union[tuple(branches)]  # noqa: UP007 (built at run time)
        if "enum" in schema or "const" in schema:
            members = schema["enum"] if "enum" in schema else [schema["const"]]
            if not all(isinstance(member, str) for member in members):
                raise UntranslatableSchema(f"{name}: only string enums are translated")
            return Literal[tuple(members)]
        kinds = schema.get("type")
        if isinstance(kinds, list):
            return Union[tuple(self.kind(schema, kind, name, shallow) for kind in kinds)]  # noqa: UP007
        if kinds is None:
            raise UntranslatableSchema(f"{name}: a schema without a type")
        return self.kind(schema, kinds, name, shallow)

    def tagged(self, schema: dict[str, Any], name: str, *, shallow: bool) -> Any:
        """A ``oneOf`` told apart by a discriminator (the checks): a msgspec tagged union.
        Past :data:`_TAGGED_DEPTH` unions deep a value is left to the exact reader."""
        discriminator = schema.get("discriminator")
        if not isinstance(discriminator, dict) or not isinstance(
            discriminator.get("mapping"), dict
        ):
            raise UntranslatableSchema(f"{name}: oneOf without a discriminator's mapping")
        if self.depth >= _TAGGED_DEPTH:
            return _NOTHING
        tag_field = discriminator["propertyName"]
        self.depth += 1
        try:
            members = [
                self.tagged_member(reference, tag_field, tag, shallow=shallow)
                for tag, reference in discriminator["mapping"].items()
            ]
        finally:
            self.depth -= 1
        return Union[tuple(members)]  # noqa: UP007 (built at run time)

    def tagged_member(self, reference: str, tag_field: str, tag: str, *, shallow: bool) -> Any:
        name = self.definition_name(reference)
        key = f"{name}:{tag}@{self.depth}{':shallow' if shallow else ''}"
        if key not in self.made:
            schema = self.definitions[name]
            self.made[key] = self.object(schema, name, shallow, tag=(tag_field, tag))
        return self.made[key]

    def definition_name(self, reference: str) -> str:
        prefix = "#/$defs/"
        if not reference.startswith(prefix) or reference[len(prefix) :] not in self.definitions:
            raise UntranslatableSchema(f"unknown reference {reference!r}")
        return reference[len(prefix) :]

    def reference(self, reference: str, *, shallow: bool) -> Any:
        name = self.definition_name(reference)
        key = f"{name}:shallow" if shallow else name
        if key not in self.made:
            self.made[key] = self.type_of(self.definitions[name], name, shallow=shallow)
        return self.made[key]

    def kind(self, schema: dict[str, Any], kind: str, name: str, shallow: bool) -> Any:
        if kind == "string":
            return _constrained(
                str,
                min_length=schema.get("minLength"),
                max_length=schema.get("maxLength"),
                pattern=_ecma(schema["pattern"]) if "pattern" in schema else None,
            )
        if kind == "integer":  # a float is no integer, and neither is a boolean (strict)
            return _constrained(int, ge=schema.get("minimum"), le=schema.get("maximum"))
        if kind == "number":
            bounds = {"ge": schema.get("minimum"), "le": schema.get("maximum")}
            # msgspec bounds a number type, not a union: an int or a float, each bounded
            return Union[_constrained(int, **bounds), _constrained(float, **bounds)]  # noqa: UP007
        if kind == "boolean":
            return bool
        if kind == "null":
            return None
        if kind == "array":
            items = self.type_of(schema.get("items", {}), f"{name}[]", shallow=shallow)
            return _constrained(
                list[items],  # type: ignore[valid-type]
                min_length=schema.get("minItems"),
                max_length=schema.get("maxItems"),
            )
        if kind == "object":
            return self.object(schema, name, shallow)
        raise UntranslatableSchema(f"{name}: unknown type {kind!r}")

    def object(
        self,
        schema: dict[str, Any],
        name: str,
        shallow: bool,
        tag: tuple[str, str] | None = None,
    ) -> Any:
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        if tag is not None:  # the tag is msgspec's to check, not a field of the structure
            properties = {key: value for key, value in properties.items() if key != tag[0]}
            required.discard(tag[0])
        extra = schema.get("additionalProperties", True)
        if not properties and tag is None:
            if required:
                raise UntranslatableSchema(f"{name}: required keys without properties")
            values = Any if extra is True else self.type_of(extra, f"{name}{{}}", shallow=shallow)
            return dict[str, values]  # type: ignore[valid-type]
        if extra is not True and extra is not False:
            raise UntranslatableSchema(f"{name}: properties beside an additionalProperties schema")
        if extra is True and shallow:
            return dict[str, Any]
        fields: list[tuple[str, Any, Any]] = []
        renamed: dict[str, str] = {}
        for position, (key, value) in enumerate(properties.items()):
            attribute = key if key.isidentifier() and not keyword.iskeyword(key) else f"_{position}"
            renamed[attribute] = key
            field_type = self.type_of(value, f"{name}.{key}", shallow=shallow)
            if key in required:
                fields.append((attribute, field_type, msgspec.NODEFAULT))
            else:  # absent and null are two things: an absent key stays absent
                fields.append((attribute, field_type, msgspec.UNSET))
        return msgspec.defstruct(
            schema.get("title", name),
            [
                (attribute, kind) if default is msgspec.NODEFAULT else (attribute, kind, default)
                for attribute, kind, default in fields
            ],
            kw_only=True,
            forbid_unknown_fields=extra is False,
            rename=renamed,
            omit_defaults=True,
            tag_field=None if tag is None else tag[0],
            tag=None if tag is None else tag[1],
        )


#: how many checks deep (a check inside a ``not``, ``all``...) the typed structures go; a
#: row nesting its checks deeper is read by the exact reader and checked by the schema
_TAGGED_DEPTH: Final = 6
#: a type no value fits: what lies past :data:`_TAGGED_DEPTH` goes to the exact reader
_NOTHING: Final = Annotated[str, msgspec.Meta(pattern="(?!)")]


_KNOWN: Final = frozenset(
    {
        "$ref",
        "anyOf",
        "oneOf",
        "discriminator",
        "enum",
        "const",
        "type",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "additionalProperties",
    }
)


def _constrained(base: Any, **constraints: Any) -> Any:
    given = {key: value for key, value in constraints.items() if value is not None}
    return Annotated[base, msgspec.Meta(**given)] if given else base


@dataclass(frozen=True)
class RowTypes:
    """The row's structure (open objects as plain dicts), and the structure each of those
    open objects is converted to: ``(attribute, type)`` pairs."""

    row: type[msgspec.Struct]
    open_fields: tuple[tuple[str, Any], ...]


@cache
def row_types() -> RowTypes:
    """The typed structures for the published row schema, made on first use."""
    document = checking_schemas()["row.schema.json"]
    row = _Translator(document).type_of(document, "Row", shallow=True)
    deep = _Translator(document)
    open_fields = tuple(
        (key, kind)
        for key, value in document["properties"].items()
        if isinstance(kind := deep.type_of(value, f"Row.{key}"), type)
        and issubclass(kind, msgspec.Struct)
        and not kind.__struct_config__.forbid_unknown_fields
    )
    return RowTypes(row=row, open_fields=open_fields)


def fits_row(value: Any) -> bool:
    """Whether the typed structures accept a decoded row (the test of their equivalence
    with the published schema uses it; the validator decodes bytes instead)."""
    types = row_types()
    try:
        row = msgspec.convert(value, types.row)
        for attribute, kind in types.open_fields:
            msgspec.convert(getattr(row, attribute), kind)
    except (msgspec.ValidationError, TypeError, ValueError, RecursionError):
        return False
    return True
