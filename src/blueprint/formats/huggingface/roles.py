"""Which columns hold the id, input and expected value of a dataset Blueprint did not write."""

from __future__ import annotations

from typing import Any, Final

from blueprint.formats.mapping import NAMESPACE

#: column names that hold a row's id, input and expected value in datasets people publish,
#: in order of preference
ID_COLUMNS: Final = ("id", "_id", "uid", "uuid", "qid", "question_id", "example_id", "task_id")
INPUT_COLUMNS: Final = (
    "input",
    "inputs",
    "question",
    "prompt",
    "query",
    "instruction",
    "problem",
    "messages",
    "text",
)
EXPECTED_COLUMNS: Final = (
    "expected",
    "expected_output",
    "answer",
    "answers",
    "output",
    "target",
    "targets",
    "ideal",
    "reference",
    "ground_truth",
    "label",
    "solution",
    "response",
    "completion",
)


Roles = dict[str, Any]


def roles_of(record: dict[str, Any]) -> Roles:
    """Which column holds a record's id, input and expected value: ``{"input": "question"}``;
    the input is a list of columns when no column says it holds the input (every column that
    plays no other role then makes it up)."""
    roles: Roles = {}
    for role, names in (
        ("id", ID_COLUMNS),
        ("expected", EXPECTED_COLUMNS),
        ("input", INPUT_COLUMNS),
    ):
        taken = set(roles.values())
        name = next((n for n in names if n in record and n not in taken), None)
        if name is not None:
            roles[role] = name
    if "input" not in roles:
        roles["input"] = [k for k in record if k not in roles.values() and k != NAMESPACE]
    return roles


def to_roles(record: dict[str, Any], roles: Roles) -> dict[str, Any]:
    """A table row with its columns renamed to the roles they play (id, input, expected)."""
    by_column = {column: role for role, column in roles.items() if isinstance(column, str)}
    spread = roles.get("input") if isinstance(roles.get("input"), list) else None
    out: dict[str, Any] = {}
    for key, value in record.items():
        if spread is not None and key in spread:
            if "input" not in out:
                out["input"] = {column: record[column] for column in spread if column in record}
            continue
        out[by_column.get(key, key)] = value
    if spread is not None and "input" not in out:
        out["input"] = {}
    return out


def from_roles(record: dict[str, Any], roles: Any) -> dict[str, Any]:
    """A record's keys renamed back to the columns they came from."""
    if not isinstance(roles, dict) or not roles:
        return record
    out: dict[str, Any] = {}
    for key, value in record.items():
        column = roles.get(key) if key in ("id", "input", "expected") else None
        if isinstance(column, str) and column and column not in record:
            out[column] = value
        elif (
            isinstance(column, list)
            and isinstance(value, dict)
            and list(value) == [c for c in column if c in value]
            and not set(value) & (set(record) - {key})
        ):
            out.update(value)
        else:
            out[key] = value
    return out
