"""What an LLM judge is told about a row: one template per oracle type, rendered the same
for every runner.

The spec admits ``llm-judge`` for reference-answer, acceptable-set and rubric rows only if
the reference, the acceptable set or the rubric goes in the judge prompt. :func:`judge_prompt`
renders the row's part of that prompt (its criteria, its unacceptable behaviours, its
reference or acceptable set, the author's pass logic) from ``judge_templates/<oracle>.j2``;
each runner's own judge (promptfoo's llm-rubric, DeepEval's GEval, Inspect's
model_graded_qa, openevals, autoevals, OpenAI Evals' model-graded classify) adds the output.

A judge is named by its model (the runner's configuration: Blueprint never calls a model)
and its template, ``<oracle-type>@<digest>``: the first 12 hex digits of the SHA-256 of the
template file. A verdict carries both, and a judge-validation report made from verdicts
speaks for that judge only; another model or an edited template makes it stale.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from blueprint.core.checks import describe

#: the oracle types an LLM judge may grade (under the spec's two conditions)
JUDGED_ORACLE_TYPES: Final = ("reference-answer", "acceptable-set", "rubric")
_TEMPLATES: Final = Path(__file__).with_name("judge_templates")
#: the keys of a judge's verdict in a recorded result, and what identifies the judge
VERDICT_KEYS: Final = ("pass", "score", "reason", "model", "template")


@dataclass(frozen=True)
class JudgePrompt:
    """The row's part of a judge prompt, and the template it was rendered from."""

    oracle_type: str
    #: the instructions: the rubric, the unacceptable behaviours, the reference or set
    text: str
    #: ``<oracle-type>@<digest>``, the template's identity
    template: str
    #: the reference as text (a reference answer, or the acceptable answers one a line), for
    #: runners whose judge also takes a reference of its own (expected_output, target)
    reference: str | None


def judged(row: dict[str, Any], family_evaluator: str | None = None) -> bool:
    """Whether an LLM judge grades the row, as ``blueprint grade`` reads it: llm-judge on a
    reference-answer, acceptable-set or rubric row, or a rubric row with no evaluator."""
    case = _case(row)
    oracle = case.get("oracleType")
    evaluator = case.get("evaluator", family_evaluator)
    if oracle not in JUDGED_ORACLE_TYPES:
        return False
    return evaluator == "llm-judge" or (oracle == "rubric" and evaluator is None)


def judge_prompt(row: dict[str, Any], family_evaluator: str | None = None) -> JudgePrompt | None:
    """The judge prompt for a judged row (None for a row no judge grades)."""
    if not judged(row, family_evaluator):
        return None
    case = _case(row)
    oracle = str(case["oracleType"])
    expected = row.get("expected")
    reference: str | None = None
    values: dict[str, Any] = {
        "behavior": _text(case.get("expectedBehavior")),
        "question": as_text(row.get("input")) if row.get("input") is not None else "",
        "criteria": _texts(case.get("evaluationCriteria")),
        "unacceptable": _texts(case.get("unacceptableBehavior")),
        "pass_logic": _text(case.get("passLogic")),
        "rules": _rules(case),
    }
    if oracle == "reference-answer":
        reference = as_text(expected)
        values["reference"] = reference
    elif oracle == "acceptable-set":
        expected = expected if isinstance(expected, dict) else {}
        members = _members(expected)
        threshold = case.get("passThreshold")
        values.update(
            graded="graded" in expected,
            members=members,
            threshold=1 if threshold is None else threshold,
            satisfies=describe(expected.get("satisfies")) if "satisfies" in expected else "",
        )
        reference = "\n".join(member["value"] for member in members) or None
    else:
        reference = as_text(expected) if expected is not None else None
        values["reference"] = reference or ""
    text = _template(oracle).render(values).strip() + "\n"
    return JudgePrompt(oracle, text, template_id(oracle), reference)


def template_id(oracle_type: str) -> str:
    """``<oracle-type>@<digest>`` for a judged oracle type's template (KeyError otherwise)."""
    if oracle_type not in JUDGED_ORACLE_TYPES:
        raise KeyError(oracle_type)
    return _template_ids()[oracle_type]


def current_template(template: Any) -> bool:
    """Whether a verdict's template is the one Blueprint renders now."""
    if not isinstance(template, str) or "@" not in template:
        return False
    oracle = template.split("@", 1)[0]
    return oracle in JUDGED_ORACLE_TYPES and template_id(oracle) == template


def template_source(oracle_type: str) -> str:
    """The template's text, as docs show it."""
    return (_TEMPLATES / f"{oracle_type}.j2").read_text(encoding="utf-8")


@cache
def _template_ids() -> dict[str, str]:
    return {
        oracle: f"{oracle}@{hashlib.sha256(template_source(oracle).encode()).hexdigest()[:12]}"
        for oracle in JUDGED_ORACLE_TYPES
    }


@cache
def _template(oracle_type: str) -> Any:
    # jinja2 loads only when a prompt is rendered: validate reads template names alone
    from jinja2 import Environment, StrictUndefined

    environment = Environment(
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        keep_trailing_newline=True,
    )
    return environment.from_string(template_source(oracle_type))


def as_text(value: Any) -> str:
    """A row's input or expected value as the text a judge reads: text as it is, chat
    messages one ``role: content`` a line, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(_message(item) for item in value):
        return "\n".join(f"{item['role']}: {_content(item.get('content'))}" for item in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _message(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("role"), str)


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") if isinstance(part, dict) else None for part in content]
        if all(isinstance(part, str) for part in parts):
            return "\n".join(str(part) for part in parts)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def _members(expected: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(expected.get("graded"), list):
        return [
            {"value": as_text(member.get("value")), "grade": member.get("grade")}
            for member in expected["graded"]
            if isinstance(member, dict)
        ]
    if isinstance(expected.get("acceptable"), list):
        return [{"value": as_text(member), "grade": 1} for member in expected["acceptable"]]
    return []


def _rules(case: dict[str, Any]) -> list[str]:
    """The row's comparison rules in words, for the judge to apply as code would."""
    rules = []
    normalize = case.get("normalize")
    if isinstance(normalize, list) and normalize:
        rules.append(f"compare after these normalisations: {', '.join(map(str, normalize))}")
    tolerance = case.get("tolerance")
    if isinstance(tolerance, int | float) and not isinstance(tolerance, bool):
        rules.append(f"a number within {tolerance:g} of the expected one is equal to it")
    return rules


def _case(row: dict[str, Any]) -> dict[str, Any]:
    metadata = row.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    return case if isinstance(case, dict) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _texts(value: Any) -> list[str]:
    return (
        [item.strip() for item in value if isinstance(item, str)] if isinstance(value, list) else []
    )
