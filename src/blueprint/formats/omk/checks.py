"""omk's deterministic assertions as Blueprint checks, and checks as omk assertions.

omk checks an output (always text) with its assertions (``src/grading/assertions.ts`` of
oh-my-knowledge): ``contains``, ``starts_with``, ``ends_with``, ``contains_all`` and
``contains_any`` compare lowercased texts; ``equals`` compares trimmed texts; ``regex`` is a
JavaScript RegExp with the assertion's flags, ``i`` when it gives none; ``min_length`` and
``max_length`` count the text's length, ``word_count_min`` and ``word_count_max`` its runs
of non-space; ``json_valid`` parses it, ``json_schema`` validates it with Ajv (JSON Schema
draft-07); ``levenshtein_max`` bounds its edit distance to a reference; ``not: true``
negates any of them and an ``assert-set`` of mode ``all`` (the default) or ``any`` combines
its children. Each has a check of the vocabulary that says the same (docs/grading.md):
``contains`` is contains under ``lowercase``, ``equals`` is equals under ``trim``, an
``assert-set`` is all or any. A check is written back as the assertion that says the same;
a case-sensitive text check as an escaped regex (with the flag ``g``, which changes nothing
for one test, since no flags at all would mean ``i``).

Where the two differ only at the edges, the difference is said in the mapping file: omk's
lengths and edit distances count UTF-16 code units (a character beyond U+FFFF counts 2),
JavaScript's trim and ``\\s`` do not take U+0085 for white space and take U+FEFF.
Assertions that do not check the output's text (tools, cost, latency, turns, mocks), and
those no check says (``rouge_n_min``, ``bleu_min``, the judge-backed ones), are not read as
checks: they stay as written in the sample.
"""

from __future__ import annotations

import re
from typing import Any, Final

from blueprint.core.checks import check_problem
from blueprint.formats.omk.rules import MAX_SAFE, _is_number

#: omk text assertions and the check each is, under the normalisation omk applies
_TEXT: Final = {
    "contains": "contains",
    "starts_with": "starts-with",
    "ends_with": "ends-with",
}
_NEGATED: Final = {"not_contains": "contains", "not_equals": "equals"}
_LOWER: Final = ["lowercase"]
_TRIM: Final = ["trim"]
#: JSON Schema keywords that draft-07 (Ajv, as omk runs it) and 2020-12 read the same
_SCHEMA_WORDS: Final = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "enum", "const",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems",
        "maxItems", "uniqueItems", "minLength", "maxLength", "minProperties",
        "maxProperties", "anyOf", "allOf", "oneOf", "not", "title", "description",
    }
)  # fmt: skip
_JS_ESCAPE: Final = re.compile(r"[\\^$.*+?()[\]{}|/-]")


def _text(value: Any) -> str | None:
    """A value as omk's String(value) gives it, for text and safe integers."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and _is_number(value) and abs(value) <= MAX_SAFE:
        return str(value)
    return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and _is_number(value) and value >= 0 else None


def plain_schema(schema: Any) -> bool:
    """Whether a schema uses only keywords draft-07 and 2020-12 read the same (no $ref,
    format, pattern, items, ...), so Ajv and Blueprint validate alike."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or set(schema) - _SCHEMA_WORDS:
        return False
    subschemas: list[Any] = []
    for key in ("properties",):
        if key in schema:
            if not isinstance(schema[key], dict):
                return False
            subschemas += schema[key].values()
    for key in ("anyOf", "allOf", "oneOf"):
        if key in schema:
            if not isinstance(schema[key], list):
                return False
            subschemas += schema[key]
    for key in ("additionalProperties", "not"):
        if key in schema:
            subschemas.append(schema[key])
    return all(plain_schema(part) for part in subschemas)


def _regex_flags(flags: Any) -> str | None:
    """The check's flags for omk's (``i`` when none are given), or None for flags the check
    has no form of (``u``, ``v``, ``y``) or that JavaScript refuses."""
    given = "i" if flags in (None, "") else flags
    if not isinstance(given, str) or len(set(given)) != len(given) or set(given) - set("imsgd"):
        return None
    return "".join(flag for flag in "ims" if flag in given)


def check_of(assertion: Any) -> dict[str, Any] | None:
    """The check an omk assertion is, or None when it has none (or is not omk's)."""
    if not isinstance(assertion, dict):
        return None
    check = _positive(assertion)
    if check is None or check_problem(check) is not None:
        return None
    return {"type": "not", "check": check} if assertion.get("not") is True else check


def _positive(assertion: dict[str, Any]) -> dict[str, Any] | None:
    kind = assertion.get("type")
    value = assertion.get("value")
    if kind in _TEXT and (text := _text(value)) is not None:
        return {"type": _TEXT[kind], "value": text, "normalize": _LOWER}
    if kind == "equals" and (text := _text(value)) is not None:
        return {"type": "equals", "value": text, "normalize": _TRIM}
    if kind in _NEGATED:
        inner = _positive({**assertion, "type": _NEGATED[kind]})
        return None if inner is None else {"type": "not", "check": inner}
    values = assertion.get("values")
    if kind in ("contains_all", "contains_any") and isinstance(values, list) and values:
        if not all(isinstance(item, str) for item in values):
            return None
        return {"type": kind.replace("_", "-"), "values": values, "normalize": _LOWER}
    if kind == "regex" and isinstance(assertion.get("pattern"), str):
        flags = _regex_flags(assertion.get("flags"))
        if flags is None:
            return None
        check = {"type": "regex", "pattern": assertion["pattern"]}
        return {**check, "flags": flags} if flags else check
    count = _count(value)
    bounds = {"min_length": "min", "max_length": "max", "word_count_min": "min"}
    bounds["word_count_max"] = "max"
    if kind in bounds and count is not None:
        unit = "words" if kind.startswith("word") else "characters"
        return {"type": "length", "unit": unit, bounds[kind]: count}
    if kind == "json_valid":
        return {"type": "is-json"}
    if kind == "json_schema" and plain_schema(assertion.get("schema")):
        return {"type": "json-schema", "schema": assertion["schema"]}
    reference = assertion.get("reference")
    if kind == "levenshtein_max" and count is not None and isinstance(reference, str):
        return {"type": "levenshtein", "value": reference, "maxDistance": count}
    if kind == "assert-set":
        children = assertion.get("children")
        mode = assertion.get("mode", "all")
        if not isinstance(children, list) or not children or mode not in ("all", "any"):
            return None
        found = [check_of(child) for child in children]
        checks = [check for check in found if check is not None]
        if len(checks) != len(found):
            return None
        return {"type": mode, "checks": checks}
    return None


# --- checks as omk assertions -------------------------------------------------------------------


def _escaped(text: str) -> str:
    return _JS_ESCAPE.sub(lambda match: "\\" + match.group(0), text)


def _regex(pattern: str, flags: str = "") -> dict[str, Any]:
    # omk reads no flags as i: g changes nothing for a fresh RegExp's one test
    return {"type": "regex", "pattern": pattern, "flags": flags or "g"}


def assertion_of(check: Any) -> dict[str, Any] | None:
    """The omk assertion that says what a check says, or None when omk has none."""
    if not isinstance(check, dict):
        return None
    kind = check.get("type")
    normalize = check.get("normalize") or []
    value = check.get("value")
    omk_text = {check_kind: omk for omk, check_kind in _TEXT.items()}
    if kind in omk_text and isinstance(value, str):
        if normalize == _LOWER:
            return {"type": omk_text[kind], "value": value}
        if not normalize:
            before = "^" if kind == "starts-with" else ""
            after = "$" if kind == "ends-with" else ""
            return _regex(before + _escaped(value) + after)
        return None
    if kind == "equals" and isinstance(value, str):
        if normalize == _TRIM:
            return {"type": "equals", "value": value}
        return _regex("^" + _escaped(value) + "$") if not normalize else None
    values = check.get("values")
    if kind in ("contains-all", "contains-any") and isinstance(values, list) and values:
        if normalize == _LOWER:
            return {"type": kind.replace("-", "_"), "values": values}
        if normalize:
            return None
        if kind == "contains-any":
            return _regex("(?:" + "|".join(_escaped(text) for text in values) + ")")
        children = [_regex(_escaped(text)) for text in values]
        return {"type": "assert-set", "mode": "all", "children": children}
    if kind == "regex" and isinstance(check.get("pattern"), str):
        return _regex(check["pattern"], check.get("flags") or "")
    if kind == "length":
        return _length(check)
    if kind == "is-json":
        return {"type": "json_valid"}
    if kind == "json-schema" and plain_schema(check.get("schema")):
        return {"type": "json_schema", "schema": check["schema"]}
    if kind == "levenshtein" and isinstance(value, str):
        return {"type": "levenshtein_max", "value": check["maxDistance"], "reference": value}
    if kind == "not":
        inner = assertion_of(check.get("check"))
        if inner is None:
            return None
        if inner.get("not") is True:
            inner = {"type": "assert-set", "mode": "all", "children": [inner]}
        return {**inner, "not": True}
    if kind in ("all", "any") and isinstance(check.get("checks"), list) and check["checks"]:
        found = [assertion_of(part) for part in check["checks"]]
        children = [child for child in found if child is not None]
        if len(children) != len(found):
            return None
        return {"type": "assert-set", "mode": kind, "children": children}
    return None


def _length(check: dict[str, Any]) -> dict[str, Any] | None:
    words = check.get("unit") == "words"
    names = ("word_count_min", "word_count_max") if words else ("min_length", "max_length")
    parts = [
        {"type": name, "value": check[bound]}
        for name, bound in zip(names, ("min", "max"), strict=True)
        if check.get(bound) is not None
    ]
    if not parts or not all(isinstance(part["value"], int) for part in parts):
        return None
    if len(parts) == 1:
        return parts[0]
    return {"type": "assert-set", "mode": "all", "children": parts}


def assertions_of(check: Any) -> list[dict[str, Any]] | None:
    """A check as top-level assertions: all of several checks as one assertion each."""
    if isinstance(check, dict) and check.get("type") == "all":
        parts = [assertions_of(part) for part in check.get("checks") or []]
        if parts and all(part is not None for part in parts):
            return [item for part in parts if part for item in part]
    single = assertion_of(check)
    return None if single is None else [single]
