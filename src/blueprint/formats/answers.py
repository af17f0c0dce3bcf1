"""Expected values and inputs as the text a vendor's string scorer compares and its prompt
takes: shared by the codecs of sample-shaped formats (Inspect, OpenAI Evals)."""

from __future__ import annotations

from typing import Any

from blueprint.io import jsonvalues


def answer_text(value: Any) -> str:
    """An answer as the text a string-matching scorer compares: text as it is, else JSON."""
    return value if isinstance(value, str) else jsonvalues.dumps_text(value)


def answers_of(expected: Any) -> list[str]:
    """The answers an acceptable set accepts in full, as text: every member of an enumerated
    set; of a graded set, the members with the top grade (a target carries no grade)."""
    if not isinstance(expected, dict):
        return []
    acceptable = expected.get("acceptable")
    if isinstance(acceptable, list):
        return [answer_text(value) for value in acceptable]
    graded = expected.get("graded")
    members = [
        member
        for member in (graded if isinstance(graded, list) else [])
        if isinstance(member, dict) and isinstance(member.get("grade"), int | float)
    ]
    if not members:
        return []
    top = max(member["grade"] for member in members)
    return [answer_text(member.get("value")) for member in members if member["grade"] == top]


def criteria_text(case: dict[str, Any]) -> str:
    """A rubric's criteria as one text, one criterion a line."""
    criteria = case.get("evaluationCriteria")
    return "\n".join(str(item) for item in (criteria if isinstance(criteria, list) else []))


def chat_messages(value: Any, keys: dict[str, frozenset[str]]) -> bool:
    """Whether a value is a list of chat messages a tool reads as such: each a role it knows,
    text content, and no key it would ignore."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(message, dict)
            and message.get("role") in keys
            and isinstance(message.get("content"), str)
            and set(message) <= keys[message["role"]]
            and all(isinstance(part, str) for part in message.values())
            for message in value
        )
    )


def prompt_of(value: Any, keys: dict[str, frozenset[str]]) -> str | list[Any]:
    """An input as a tool takes it: text or chat messages as they are, anything else as its
    JSON text."""
    if isinstance(value, str) or chat_messages(value, keys):
        return value
    return jsonvalues.dumps_text(value)
