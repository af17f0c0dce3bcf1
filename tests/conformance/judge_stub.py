"""A stand-in judge for the runners' own judges, and what it must have been shown.

The judged set (tests/fixtures/judged/judged-set.json) is answered with :data:`OUTPUTS`. The
judge is an OpenAI-compatible client whose transport answers in-process (openevals and
autoevals call it as they would call OpenAI) or, for OpenAI Evals, a completion function; it
keeps every prompt it is shown, fails the rubric row that asks for a refund date and passes
every other answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from blueprint.core.judgeprompt import as_text
from conftest import FIXTURES

SET = FIXTURES / "judged" / "judged-set.json"
ROWS = {row["id"]: row for row in json.loads(SET.read_text(encoding="utf-8"))["rows"]}
#: the rows an LLM judge grades; the others (a tool-call row, an exact row) never reach it
JUDGED = [row_id for row_id in ROWS if row_id.startswith("judged-")]
CALLS = [{"name": "lookup_order", "arguments": {"order_id": "A-1"}}]
#: what the system under test answers, by row (each answer is told apart from the others)
OUTPUTS: dict[str, Any] = {
    "judged-reference": "You have 30 days from delivery.",
    "judged-acceptable": "Within a month of delivery.",
    "judged-graded": "About a month.",
    "judged-rubric": "Your refund is on its way.",
    "judged-by-family": "Sorry about that, the right size is on its way.",
    "tool-calls": {"toolCalls": CALLS},
    "exact-reference": "30 days",
}
#: the verdict ``blueprint grade`` gives each row with the stand-in judge's verdicts
EXPECTED = {
    "judged-reference": "pass",
    "judged-acceptable": "pass",
    "judged-graded": "pass",
    "judged-rubric": "fail",
    "judged-by-family": "pass",
    "tool-calls": "pass",
    "exact-reference": "pass",
}
MODEL = "stub-judge"
#: a few words of each row's input, by which a judge prompt is known for its row
MARKS = {
    "judged-reference": "How long do I have to return an item?",
    "judged-acceptable": "What is the return window for online orders?",
    "judged-graded": "Roughly how long can I wait before sending shoes back?",
    "judged-rubric": "This is the third time I am writing",
    "judged-by-family": "You sent me the wrong size twice!",
    "tool-calls": "Where is order A-1?",
    "exact-reference": "Return window in days?",
}
#: what each judged row's judge prompt must hold: its criteria and reference or answers
MUST_SEE = {
    "judged-reference": [
        "quotes the 30-day window",
        "You have 30 days from delivery to return an item.",
    ],
    "judged-acceptable": ["30 days from delivery", "a month from delivery"],
    "judged-graded": ["30 days from delivery", "about a month"],
    "judged-rubric": [
        "acknowledges the delay",
        "names a date for the refund",
        "blames the customer",
    ],
    "judged-by-family": ["apologises once"],
}
#: the words by which the stand-in judge fails an answer
FAILS_ON = "names a date for the refund"


def passes(prompt: str) -> bool:
    return FAILS_ON not in prompt


def reason(passed: bool) -> str:
    return "stand-in judge: " + ("it meets the rubric" if passed else "no date is named")


class StubJudge:
    """An OpenAI-compatible client (``client()``) answering in-process, keeping the prompts."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def handler(self, request: Any) -> Any:
        import httpx

        body = json.loads(request.content)
        prompt = "\n".join(str(message.get("content")) for message in body["messages"])
        self.prompts.append(prompt)
        passed = passes(prompt)
        if "tools" in body:  # autoevals' LLMClassifier: a select_choice call
            arguments = json.dumps(
                {"reasons": reason(passed), "choice": "pass" if passed else "fail"}
            )
            call = {"name": "select_choice", "arguments": arguments}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call-1", "type": "function", "function": call}],
            }
        else:  # openevals' create_llm_as_judge: JSON of reasoning and score
            content = json.dumps({"reasoning": reason(passed), "score": passed})
            message = {"role": "assistant", "content": content}
        choice = {"index": 0, "finish_reason": "stop", "message": message}
        return httpx.Response(
            200,
            json={
                "id": "stub",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [choice],
            },
        )

    def client(self) -> Any:
        import httpx
        import openai

        return openai.OpenAI(
            api_key="offline",
            base_url="http://127.0.0.1:9/v1",
            http_client=httpx.Client(transport=httpx.MockTransport(self.handler)),
        )


def output_text(row_id: str) -> str:
    output = OUTPUTS[row_id]
    return output if isinstance(output, str) else json.dumps(output["toolCalls"])


def shown(row_id: str) -> list[str]:
    """What the judge must have been shown for a judged row: its criteria and unacceptable
    behaviours, its reference or acceptable answers (reference-guided grading), its question
    and the answer."""
    row = ROWS[row_id]
    case = row["metadata"]["case"]
    found = [*case.get("evaluationCriteria", []), *case.get("unacceptableBehavior", [])]
    expected = row.get("expected")
    if isinstance(expected, str):
        found.append(expected)
    elif isinstance(expected, dict):
        found += [as_text(value) for value in expected.get("acceptable", [])]
        found += [as_text(member["value"]) for member in expected.get("graded", [])]
    found.append(as_text(row["input"]))
    found.append(output_text(row_id))
    return found


def assert_prompts(prompts: list[str]) -> None:
    """One prompt for each judged row, with all it must show; no other row reached the
    judge."""
    by_row = {
        row_id: [prompt for prompt in prompts if output_text(row_id) in prompt] for row_id in JUDGED
    }
    assert len(prompts) == len(JUDGED)
    for row_id in JUDGED:
        [prompt] = by_row[row_id]
        missing = [part for part in shown(row_id) if part not in prompt]
        assert missing == [], (row_id, prompt)
    # the exact row's answer ("30 days") is part of the references: its question tells it
    assert not any(output_text("tool-calls") in prompt for prompt in prompts)
    for row_id in set(ROWS) - set(JUDGED):
        assert not any(as_text(ROWS[row_id]["input"]) in prompt for prompt in prompts), row_id


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, default=str), encoding="utf-8")
    return path
