"""Hypothesis strategies: arbitrary valid sets full of awkward values, and mutations of them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from blueprint.core.model import (
    EVALUATOR_TYPES,
    ORACLE_TYPES,
    PROVENANCES,
    SCHEMA_VERSION,
    SEVERITIES,
)

#: values that break naive CSV, JSON and spreadsheet handling
AWKWARD = [
    "",
    " ",
    "  padded  ",
    "a | b",
    "a|b",
    "a\\|b",
    "back\\slash\\",
    "C:\\path\\to",
    'He said "hi", then left',
    "comma, separated",
    "line1\nline2",
    "line1\r\nline2",
    "cr\ronly",
    "tab\there",
    "=1+1",
    "+44 20 7946 0000",
    "-5",
    "@mention",
    "1",
    "1.0",
    "-0",
    "true",
    "null",
    "None",
    "NaN",
    "[1, 2]",
    '{"a": 1}',
    '"quoted"',
    "{{7*7}}",
    "a #} b",
    "{#}",
    '{{ "#" }}',
    "{% raw %}",
    "smile 😀 𝔘 𝕏",
    "ends with newline\n",
    "ünïcödé",
    "contains: x",
    "python: 1+1",
]

awkward_text = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(max_size=12),
    st.builds(lambda a, b: a + b, st.sampled_from(AWKWARD), st.text(max_size=6)),
    st.integers().map(str),
)
nonempty_text = awkward_text.filter(bool)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    awkward_text,
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(awkward_text, children, max_size=3),
    ),
    max_leaves=6,
)
json_objects = st.dictionaries(awkward_text, json_values, max_size=3)
kebab = st.from_regex(r"\A[a-z0-9]{1,6}(-[a-z0-9]{1,4}){0,2}\Z")
text_lists = st.lists(awkward_text, max_size=4)


normalizations = st.lists(
    st.sampled_from(["nfc", "collapse-whitespace", "trim", "lowercase"]), min_size=1, max_size=4
)
shares = st.one_of(st.floats(min_value=0, max_value=1), st.sampled_from([0, 1]))
_leaf_checks = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("equals"), "value": json_values}, optional={"normalize": normalizations}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("number"),
            "value": st.integers() | st.floats(allow_nan=False, allow_infinity=False),
        },
        optional={"tolerance": st.floats(min_value=0, allow_infinity=False)},
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["contains", "starts-with", "ends-with"]), "value": awkward_text},
        optional={"normalize": normalizations},
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["contains-any", "contains-all"]),
            "values": st.lists(awkward_text, min_size=1, max_size=3),
        },
        optional={"normalize": normalizations},
    ),
    st.fixed_dictionaries(
        {"type": st.just("regex"), "pattern": awkward_text},
        optional={"flags": st.sampled_from(["", "i", "m", "s", "im", "ims", "ms"])},
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["is-json"])}),
    st.fixed_dictionaries({"type": st.just("json-schema"), "schema": json_objects}),
    st.fixed_dictionaries(
        {"type": st.just("length")},
        optional={
            "unit": st.sampled_from(["characters", "words"]),
            "min": st.integers(0, 50),
            "max": st.integers(0, 50),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("levenshtein"), "value": awkward_text, "maxDistance": st.integers(0, 9)}
    ),
    st.fixed_dictionaries(
        {"type": st.just("items"), "required": st.lists(json_values, max_size=3)},
        optional={"allowed": st.lists(json_values, max_size=2)},
    ),
)
#: checks of the vocabulary, nested (the schema's shape; a pattern may be outside the dialect)
checks = st.recursive(
    _leaf_checks,
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("not"), "check": inner}),
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(["all", "any"]),
                "checks": st.lists(inner, min_size=1, max_size=3),
            }
        ),
        st.fixed_dictionaries(
            {
                "type": st.just("weighted"),
                "checks": st.lists(inner, min_size=1, max_size=3),
                "threshold": shares,
            },
            optional={"weights": st.lists(st.integers(0, 3), min_size=1, max_size=3)},
        ),
    ),
    max_leaves=4,
)


def expected_for(oracle_type: str) -> st.SearchStrategy[Any]:
    if oracle_type == "reference-answer":
        return json_values
    if oracle_type == "acceptable-set":
        graded = st.lists(
            st.fixed_dictionaries(
                {
                    "value": json_values,
                    "grade": st.one_of(
                        st.floats(min_value=0, max_value=1), st.sampled_from([0, 1])
                    ),
                }
            ),
            min_size=1,
            max_size=3,
        )
        return st.one_of(
            st.fixed_dictionaries({"acceptable": st.lists(json_values, min_size=1, max_size=3)}),
            st.fixed_dictionaries({"graded": graded}),
            st.fixed_dictionaries({"satisfies": checks}),
        )
    if oracle_type == "expected-tool-calls":
        call = st.fixed_dictionaries({"name": nonempty_text, "arguments": json_objects})
        forbidden = st.fixed_dictionaries(
            {"name": nonempty_text}, optional={"arguments": json_objects}
        )
        return st.fixed_dictionaries(
            {"calls": st.lists(call, max_size=3)},
            optional={
                "order": st.sampled_from(["exact", "any"]),
                "forbidden": st.lists(forbidden, max_size=2),
            },
        )
    if oracle_type == "expected-final-state":
        check = st.one_of(
            st.fixed_dictionaries({"kind": st.just("file_exists"), "path": nonempty_text}),
            st.fixed_dictionaries(
                {"kind": st.just("command"), "run": nonempty_text, "exitCode": st.integers()}
            ),
            st.fixed_dictionaries(
                {"kind": st.just("record"), "description": nonempty_text},
                optional={"query": awkward_text, "equals": json_values},
            ),
        )
        return st.fixed_dictionaries({"checks": st.lists(check, min_size=1, max_size=3)})
    return st.nothing()


OPTIONAL_CASE = {
    "scenario": awkward_text,
    "actor": awkward_text,
    "unacceptableBehavior": text_lists,
    "evaluationCriteria": text_lists,
    "reversibility": st.sampled_from(["R0", "R1", "R2", "R3"]),
    "blastRadius": st.sampled_from(["B0", "B1", "B2", "B3"]),
    "linkedConcerns": text_lists,
    "evaluator": st.sampled_from(EVALUATOR_TYPES),
    "toolActionExpectation": awkward_text,
    "escalationExpectation": awkward_text,
    "reviewerExpertise": awkward_text,
    # phrases the validator reads as claims (a threshold, a comparison, a tolerance) too
    "passLogic": st.one_of(
        awkward_text,
        st.sampled_from(
            [
                "pass at 0.7",
                "case-insensitive match after trimming",
                "white space is ignored; NFC",
                "within 5 of the reference",
                "threshold 1",
            ]
        ),
    ),
    "version": awkward_text,
    "retirementCondition": awkward_text,
    "caseFamily": kebab,
    "checks": st.lists(checks, max_size=2),
    "normalize": normalizations,
    "tolerance": st.one_of(st.integers(0, 9), st.floats(min_value=0, allow_infinity=False)),
    "passThreshold": shares,
    "extensions": st.dictionaries(awkward_text, json_objects, max_size=2),
}


@st.composite
def rows(draw: st.DrawFn, row_id: str | None = None) -> dict[str, Any]:
    """A row that fits the schema (rules such as admissibility are not guaranteed)."""
    oracle_type = draw(st.sampled_from(ORACLE_TYPES))
    identifier = row_id if row_id is not None else draw(nonempty_text)
    case = draw(
        st.fixed_dictionaries(
            {
                "caseId": st.just(identifier),
                "oracleType": st.just(oracle_type),
                "expectedBehavior": awkward_text,
                "provenance": st.sampled_from(PROVENANCES),
            },
            optional=OPTIONAL_CASE,
        )
    )
    metadata = {"case": case}
    metadata.update(
        draw(st.dictionaries(awkward_text.filter(lambda k: k != "case"), json_values, max_size=2))
    )
    row: dict[str, Any] = {"id": identifier, "input": draw(json_values)}
    if oracle_type not in ("rubric", "expected-behavior-only"):
        row["expected"] = draw(expected_for(oracle_type))
    row["metadata"] = metadata
    return row


family = st.fixed_dictionaries(
    {"id": kebab, "oracleType": st.sampled_from(ORACLE_TYPES)},
    optional={
        "title": awkward_text,
        "description": awkward_text,
        "evaluator": st.sampled_from(EVALUATOR_TYPES),
        "severity": st.sampled_from(SEVERITIES),
        "linkedConcerns": text_lists,
    },
)

headers = st.fixed_dictionaries(
    {"schemaVersion": st.just(SCHEMA_VERSION), "name": nonempty_text},
    optional={
        "version": awkward_text,
        "description": awkward_text,
        "taskFamily": awkward_text,
        "caseFamilies": st.lists(family, max_size=3),
    },
)


@st.composite
def eval_sets(draw: st.DrawFn, max_rows: int = 5) -> dict[str, Any]:
    """A canonical set document with unique row ids."""
    ids = draw(st.lists(nonempty_text, max_size=max_rows, unique=True))
    return {**draw(headers), "rows": [draw(rows(row_id)) for row_id in ids]}


# --- mutations, for proving the models and the schema agree ----------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_paths(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_paths(child, (*prefix, index)))
    return found


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        document = document[part]
    return document


TRICKY_REPLACEMENTS = st.one_of(
    json_values,
    st.sampled_from(["1", 1, 1.0, True, None, "", "a\n", "reference-answer\n", "R4", "b0", [], {}]),
)


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """The document with one value replaced, one key added, or one key removed."""
    import copy

    document = copy.deepcopy(document)
    path = draw(st.sampled_from(_paths(document)))
    action = draw(st.sampled_from(["replace", "add", "remove"]))
    if not path:
        return draw(TRICKY_REPLACEMENTS) if action == "replace" else document
    parent = _parent(document, path)
    if action == "replace":
        parent[path[-1]] = draw(TRICKY_REPLACEMENTS)
    elif action == "add" and isinstance(parent, dict):
        key = draw(st.one_of(st.sampled_from(["foo", "Id", "case_id", "difficulty"]), awkward_text))
        parent[key] = draw(json_values)
    elif action == "remove":
        del parent[path[-1]]
    return document


# --- native vendor records, full of keys Blueprint has no field for ---------------------------

#: key names a vendor record might carry that no mapping knows
extra_keys = st.one_of(
    st.sampled_from(["futureKey", "x-note", "case", "difficulty", "blueprint", "id", "name"]),
    awkward_text.filter(bool),
)
extra_objects = st.dictionaries(extra_keys, json_values, max_size=3)


def _with_extras(base: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda record, more: {**more, **record}, base, extra_objects)


PROMPTFOO_TYPES = [
    "equals",
    "not-equals",
    "contains",
    "icontains-any",
    "regex",
    "javascript",
    "llm-rubric",
    "factuality",
    "g-eval",
    "tool-call-f1",
    "is-json",
    "similar",
    "answer-relevance",
]
promptfoo_assertion = st.builds(
    lambda kind, value, more: {**more, "type": kind, **({} if value is None else {"value": value})},
    st.sampled_from(PROMPTFOO_TYPES),
    st.one_of(st.none(), awkward_text, st.lists(awkward_text, max_size=3), json_objects),
    st.dictionaries(st.sampled_from(["weight", "threshold", "metric", "extra"]), json_values),
)
promptfoo_tests = _with_extras(
    st.fixed_dictionaries(
        {},
        optional={
            "description": awkward_text,
            "vars": st.one_of(json_objects, awkward_text),
            "assert": st.lists(promptfoo_assertion, max_size=3),
            "options": json_objects,
            "threshold": st.floats(min_value=0, max_value=1),
            "metadata": st.one_of(extra_objects, st.none()),
        },
    )
)

deepeval_goldens = _with_extras(
    st.fixed_dictionaries(
        {"input": awkward_text},
        optional={
            "expected_output": st.one_of(st.none(), awkward_text),
            "actual_output": st.one_of(st.none(), awkward_text),
            "context": st.one_of(st.none(), st.lists(awkward_text, max_size=3)),
            "retrieval_context": st.one_of(st.none(), st.lists(awkward_text, max_size=3)),
            "name": st.one_of(st.none(), awkward_text),
            "comments": st.one_of(st.none(), awkward_text),
            "expected_tools": st.one_of(
                st.none(),
                st.lists(
                    st.fixed_dictionaries(
                        {"name": nonempty_text},
                        optional={"inputParameters": json_objects, "type": st.just("FUNCTION")},
                    ),
                    max_size=2,
                ),
            ),
            "additional_metadata": st.one_of(st.none(), extra_objects),
        },
    )
)
conversational_goldens = _with_extras(
    st.fixed_dictionaries(
        {
            "scenario": nonempty_text,
            "turns": st.lists(
                st.fixed_dictionaries(
                    {"role": st.sampled_from(["user", "assistant"]), "content": awkward_text}
                ),
                max_size=3,
            ),
        },
        optional={
            "expected_outcome": st.one_of(st.none(), awkward_text),
            "user_description": awkward_text,
            "name": nonempty_text,
            "additional_metadata": st.one_of(st.none(), extra_objects),
        },
    )
)

langsmith_examples = _with_extras(
    st.fixed_dictionaries(
        {"inputs": json_objects},
        optional={
            "id": st.uuids().map(str),
            "outputs": st.one_of(st.none(), json_objects),
            "metadata": st.one_of(st.none(), extra_objects),
            "split": st.one_of(awkward_text, st.lists(awkward_text, min_size=1, max_size=2)),
            "created_at": st.just("2024-05-01T10:00:00Z"),
        },
    )
)

braintrust_records = _with_extras(
    st.fixed_dictionaries(
        {},
        optional={
            "id": awkward_text,
            "input": json_values,
            "expected": json_values,
            "metadata": st.one_of(st.none(), extra_objects),
            "tags": st.lists(awkward_text, max_size=3, unique=True),
            "_xact_id": st.just("1000192"),
        },
    )
)
