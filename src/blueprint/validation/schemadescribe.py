"""What the published schema finds wrong with a value, in words: each violation as a place in
the value and a reason a person can act on (the expected type or members, a near miss, a
typographic quote typed in place of a straight one)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

from blueprint.core import jsonpath
from blueprint.core.model import KEBAB_CASE, omitted_field
from blueprint.io.jsonvalues import dumps_text, json_type

if TYPE_CHECKING:  # jsonschema is imported only to describe a failure (see schema.py)
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

Location = list[str | int]


#: typographic quotes, which word processors and some spreadsheets type in place of '"'
TYPOGRAPHIC_QUOTES: Final = "\u201c\u201d\u2018\u2019"


def describe_value(value: Any) -> str:
    kind = json_type(value)
    if kind in ("object", "array"):
        return f"an {kind}" if kind == "object" else "an array"
    if kind == "null":
        return "null"
    text = dumps_text(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{'a' if kind != 'integer' else 'an'} {kind} {text}{typographic_quotes_hint(value)}"


def typographic_quotes_hint(value: Any) -> str:
    """A hint for text meant as JSON but typed with typographic quotes, which JSON does not
    accept: such a CSV cell or pasted value reads as a plain string."""
    if (
        isinstance(value, str)
        and value.lstrip()[:1] in ("{", "[")
        and any(quote in value for quote in TYPOGRAPHIC_QUOTES)
    ):
        return (
            " (it holds typographic quotes \u201c \u201d \u2018 \u2019, so it is not JSON:"
            ' write straight double quotes " instead, and turn off smart quotes)'
        )
    return ""


def near_member(value: Any, members: Iterable[Any]) -> str | None:
    """The member a string differs from only by letter case or surrounding whitespace (a
    spreadsheet's autocapitalisation, a stray space), if any: a hint, never a coercion."""
    if not isinstance(value, str):
        return None
    wanted = value.strip().casefold()
    for member in members:
        if isinstance(member, str) and member != value and member.casefold() == wanted:
            return member
    return None


def _not_a_member(value: Any, members: list[Any], expectation: str | None) -> str:
    near = near_member(value, members)
    if near is None:
        return f"must be {expectation}, not {describe_value(value)}"
    return (
        f"{describe_value(value)} is not allowed: did you mean {near!r}?"
        " (letter case and surrounding spaces count)"
    )


def _type_names(value: Any) -> list[str]:
    names = value if isinstance(value, list) else [value]
    articles = {"object": "an object", "array": "an array", "null": "null", "integer": "an integer"}
    return [articles.get(name, f"a {name}") for name in names]


def _expectation(error: ValidationError) -> str | None:
    """What a leaf keyword wanted, for merging the branches of an anyOf."""
    if error.validator == "type":
        return " or ".join(_type_names(error.validator_value))
    if error.validator == "const":
        return dumps_text(error.validator_value)
    if error.validator == "enum":
        return "one of " + ", ".join(dumps_text(v) for v in error.validator_value)
    return None


def _describe(error: ValidationError) -> Iterator[tuple[Location, str]]:
    path: Location = list(error.absolute_path)
    keyword = error.validator
    instance = error.instance
    if keyword == "additionalProperties" and isinstance(instance, dict):
        known = list(error.schema.get("properties", {}))
        for key in instance:
            if key not in known and omitted_field(key) is None:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f"did you mean {close[0]!r}?" if close else "allowed: " + ", ".join(known)
                yield [*path, key], f"unknown key {key!r} ({hint})"
        return
    if keyword == "required" and isinstance(instance, dict):
        for key in error.validator_value:
            if key not in instance:
                yield [*path, key], f"required field {key} is missing"
        return
    if keyword in ("anyOf", "oneOf") and error.context:
        yield from _describe_alternatives(error)
        return
    if keyword == "type":
        wanted_type = " or ".join(_type_names(error.validator_value))
        yield path, f"must be {wanted_type}, not {describe_value(instance)}"
    elif keyword in ("enum", "const"):
        members = error.validator_value if keyword == "enum" else [error.validator_value]
        yield path, _not_a_member(instance, list(members), _expectation(error))
    elif keyword == "minLength" and error.validator_value == 1:
        yield path, "must not be empty"
    elif keyword == "minItems":
        yield path, f"must have at least {error.validator_value} item(s)"
    elif keyword == "pattern" and error.validator_value == KEBAB_CASE:
        yield path, f"must be kebab-case (like policy-lookup), not {describe_value(instance)}"
    elif keyword in ("minimum", "maximum"):
        bound = ">=" if keyword == "minimum" else "<="
        yield path, f"must be {bound} {error.validator_value}, not {describe_value(instance)}"
    else:
        yield path, error.message


def _describe_alternatives(error: ValidationError) -> Iterator[tuple[Location, str]]:
    """Explain an anyOf/oneOf failure by the branch the value was evidently meant for."""
    path: Location = list(error.absolute_path)
    branches: dict[Any, list[ValidationError]] = {}
    for sub_error in error.context or ():
        branches.setdefault(sub_error.relative_schema_path[0], []).append(sub_error)

    def mismatched(errors: list[ValidationError], keywords: tuple[str, ...]) -> bool:
        return any(e.validator in keywords and len(e.relative_path) <= 1 for e in errors)

    # branches whose type fits the value (an object where an object is wanted, not null)
    fitting = {
        key: errors
        for key, errors in branches.items()
        if not any(e.validator == "type" and not e.relative_path for e in errors)
    }
    if not fitting:
        wanted = [_expectation(e) for errors in branches.values() for e in errors]
        alternatives = " or ".join(dict.fromkeys(w for w in wanted if w))
        yield path, f"must be {alternatives}, not {describe_value(error.instance)}"
        return
    # a tagged union: the branch whose tag (a const or enum member) matches is the one meant
    tagged = {k: v for k, v in fitting.items() if not mismatched(v, ("const", "enum"))}
    if len(tagged) == 1:
        for sub_error in next(iter(tagged.values())):
            yield from _describe(sub_error)
        return
    if not tagged and len(fitting) > 1:
        tags = [e for errors in fitting.values() for e in errors if e.validator == "const"]
        if tags and len({tuple(e.relative_path) for e in tags}) == 1:
            members = ", ".join(dumps_text(e.validator_value) for e in tags)
            at = [*path, *tags[0].relative_path]
            values = [e.validator_value for e in tags]
            yield at, _not_a_member(tags[0].instance, values, f"one of {members}")
            return
    # an object branch whose keys all fit is the one meant, even if its values do not
    shaped = {
        k: v for k, v in fitting.items() if not mismatched(v, ("required", "additionalProperties"))
    }
    for candidates in (shaped, fitting):
        if len(candidates) == 1:
            for sub_error in next(iter(candidates.values())):
                yield from _describe(sub_error)
            return
    from jsonschema.exceptions import best_match

    match = best_match(error.context or [])
    if match is not None:
        yield from _describe(match)


def schema_findings(validator: Validator, instance: Any) -> list[tuple[Location, str]]:
    """Every schema violation as (location, reason), without repeats, in document order."""
    seen: set[tuple[str, str]] = set()
    found = []
    errors = list(validator.iter_errors(instance))
    # a value outside an enum or const is usually also of the wrong type; one finding is enough
    valued = {tuple(e.absolute_path) for e in errors if e.validator in ("enum", "const")}
    for error in errors:
        if error.validator == "type" and tuple(error.absolute_path) in valued:
            continue
        for location, reason in _describe(error):
            key = (jsonpath.join("$", location), reason)
            if key not in seen:
                seen.add(key)
                found.append((location, reason))
    return found
