"""A judged row in Inspect AI, offline: Blueprint's scorer grades it with Inspect's own
model_graded_qa, whose grader here is Inspect's mock model answering as a stub judge and
recording every prompt it receives. The stub's prompts hold each judged row's criteria and
its reference or acceptable answers; tool-call and exact rows never reach it; and the log
Inspect writes (``.eval``, its default, and JSON), read by ``blueprint grade``, gives the
stub's verdict with its model and the template named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors, vendor
from judge_stub import MARKS, MUST_SEE, SET
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert
from blueprint.core.judgeprompt import template_id

pytestmark = pytest.mark.conformance


@pytest.fixture(autouse=True)
def _runner_installed() -> None:
    """Every test here needs the runner: skipped (or failed, where conformance is required)
    before anything imports Blueprint's scorer for it."""
    vendor("inspect_ai")


ORACLES = {
    "judged-reference": "reference-answer",
    "judged-acceptable": "acceptable-set",
    "judged-graded": "acceptable-set",
    "judged-rubric": "rubric",
    "judged-by-family": "rubric",
}
#: the stub's grade by row (C otherwise): I fails the rubric row, P is half the graded set,
#: and a P where the row offers none (an enumerated set) is no grade at all
GRADES = {"judged-rubric": "I", "judged-graded": "P", "judged-acceptable": "P"}
ANSWERS = {row_id: "You have 30 days; sorry for the trouble." for row_id in MARKS}
ANSWERS["exact-reference"] = "30 days"
ANSWERS["tool-calls"] = ""


def stub(name: str, seen: list[str]) -> Any:
    """Inspect's mock model answering as a judge: it keeps each prompt and grades the row the
    prompt is for."""
    model = vendor("inspect_ai.model")

    def reply(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = "\n".join(message.text for message in messages)
        seen.append(prompt)
        row = next(row for row, mark in MARKS.items() if mark in prompt)
        grade = GRADES.get(row, "C")
        output = model.ModelOutput.from_content(
            model="stub", content=f"The stub's verdict on {row}.\nGRADE: {grade}"
        )
        output.usage = model.ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return model.get_model(name, custom_outputs=reply, memoize=False)


def run(tmp_path: Path, log_format: str, scorer: Any, **options: Any) -> Any:
    """The judged set's export through Inspect's eval, each sample's recorded answer as the
    model's turn (a tool call for the tool-call row), scored by ``scorer``."""
    inspect_ai = vendor("inspect_ai")
    dataset_module = vendor("inspect_ai.dataset")
    model = vendor("inspect_ai.model")
    solvers = vendor("inspect_ai.solver")
    tool = vendor("inspect_ai.tool")

    samples = tmp_path / "samples.jsonl"
    convert(SET, samples, ConvertOptions(target_format="inspect", graders="blueprint"))

    @solvers.solver
    def recorded() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            row_id = str(state.sample_id)
            calls = None
            if row_id == "tool-calls":
                calls = [
                    tool.ToolCall(id="1", function="lookup_order", arguments={"order_id": "A-1"})
                ]
            message = model.ChatMessageAssistant(content=ANSWERS[row_id], tool_calls=calls)
            state.messages.append(message)
            state.output = model.ModelOutput.from_message(message)
            return state

        return solve

    task = inspect_ai.Task(
        dataset=dataset_module.json_dataset(str(samples)), solver=recorded(), scorer=scorer
    )
    [log] = inspect_ai.eval(
        task,
        log_dir=str(tmp_path / f"logs-{log_format}"),
        display="none",
        log_format=log_format,
        **options,
    )
    assert log.status == "success", log.error
    [written] = (tmp_path / f"logs-{log_format}").iterdir()
    return log, written


def prompts_by_row(prompts: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for prompt in prompts:
        rows = [row for row, mark in MARKS.items() if mark in prompt]
        assert len(rows) == 1, prompt
        found.setdefault(rows[0], []).append(prompt)
    return found


def graded(path: Path) -> dict[str, dict[str, Any]]:
    done = CliRunner().invoke(app, ["grade", str(SET), str(path), "--report", "json"])
    assert done.exit_code in (0, 1), done.output
    return {row["id"]: row for row in json.loads(done.stdout)["rows"]}


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_the_stub_judge_sees_each_rows_rubric_and_grade_reads_its_verdict(
    tmp_path: Path, log_format: str
) -> None:
    from blueprint.integrations.inspect import oracle_scorer

    seen: list[str] = []
    judge = stub("mockllm/judge", seen)
    evaluated: list[str] = []
    log, written = run(
        tmp_path,
        log_format,
        oracle_scorer(judge_model=judge),
        model=stub("mockllm/model", evaluated),
    )
    assert evaluated == []  # the named judge grades, not the model evaluated

    by_row = prompts_by_row(seen)
    assert set(by_row) == set(MUST_SEE)  # the tool-call and exact rows never reach the judge
    for row_id, needed in MUST_SEE.items():
        [prompt] = by_row[row_id]
        assert all(text in prompt for text in needed), (row_id, prompt)

    scores = {str(sample.id): sample.scores.get("oracle_scorer") for sample in log.samples}
    rubric = scores["judged-rubric"]
    assert (rubric.value, rubric.answer) == (0.0, "fail")
    assert rubric.metadata["verdict"] == "fail"
    assert rubric.metadata["judge"] == {
        "pass": False,
        "score": 0.0,
        "reason": "The stub's verdict on judged-rubric.\nGRADE: I",
        "model": "mockllm/judge",
        "template": template_id("rubric"),
    }
    assert "judge" not in scores["tool-calls"].metadata

    rows = graded(written)
    assert {row_id: (row["verdict"], row["score"]) for row_id, row in rows.items()} == {
        "judged-reference": ("pass", 1.0),
        # P offered where the row gives none: no grade, so no verdict
        "judged-acceptable": ("needs-judge", None),
        "judged-graded": ("pass", 0.5),  # P, at the row's passThreshold
        "judged-rubric": ("fail", 0.0),
        "judged-by-family": ("pass", 1.0),
        "tool-calls": ("pass", 1.0),
        "exact-reference": ("pass", 1.0),
    }
    for row_id, oracle in ORACLES.items():
        expected = {"model": "mockllm/judge", "template": template_id(oracle)}
        assert rows[row_id]["judge"] == expected, row_id
    assert "judge" not in rows["tool-calls"] and "judge" not in rows["exact-reference"]


def test_without_a_judge_model_inspects_grader_role_grades(tmp_path: Path) -> None:
    from blueprint.integrations.inspect import oracle_scorer

    evaluated: list[str] = []
    graders: list[str] = []
    _, written = run(
        tmp_path,
        "eval",
        oracle_scorer(),
        model=stub("mockllm/model", evaluated),
        model_roles={"grader": stub("mockllm/grader", graders)},
    )
    assert evaluated == [] and len(graders) == len(MUST_SEE)
    rows = graded(written)
    assert rows["judged-reference"]["judge"]["model"] == "mockllm/grader"


def test_without_a_judge_model_or_grader_role_the_model_evaluated_grades(
    tmp_path: Path,
) -> None:
    from blueprint.integrations.inspect import oracle_scorer

    evaluated: list[str] = []
    _, written = run(tmp_path, "json", oracle_scorer(), model=stub("mockllm/model", evaluated))
    assert len(evaluated) == len(MUST_SEE)
    rows = graded(written)
    assert rows["judged-rubric"]["judge"] == {
        "model": "mockllm/model",
        "template": template_id("rubric"),
    }


def test_a_barred_pairing_never_reaches_the_judge(tmp_path: Path) -> None:
    """llm-judge on a tool-call row: the set bars it, so the row is invalid and no grader
    is asked."""
    inspect_ai = vendor("inspect_ai")
    dataset_module = vendor("inspect_ai.dataset")
    model = vendor("inspect_ai.model")
    solvers = vendor("inspect_ai.solver")
    from blueprint.integrations.inspect import oracle_scorer

    samples = tmp_path / "samples.jsonl"
    convert(SET, samples, ConvertOptions(target_format="inspect", graders="blueprint"))
    [sample] = [s for s in dataset_module.json_dataset(str(samples)) if s.id == "tool-calls"]
    sample.metadata["blueprint"]["case"]["evaluator"] = "llm-judge"

    @solvers.solver
    def answered() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            message = model.ChatMessageAssistant(content="Order A-1 ships today.")
            state.messages.append(message)
            state.output = model.ModelOutput.from_message(message)
            return state

        return solve

    seen: list[str] = []
    judge = stub("mockllm/judge", seen)
    task = inspect_ai.Task(
        dataset=dataset_module.MemoryDataset([sample]),
        solver=answered(),
        scorer=oracle_scorer(judge_model=judge),
    )
    [log] = inspect_ai.eval(
        task, model=judge, log_dir=str(tmp_path / "logs"), display="none", log_format="json"
    )
    assert log.status == "success", log.error
    assert seen == []
    assert (log.samples[0].scores or {}).get("oracle_scorer") is None  # no verdict, no score
