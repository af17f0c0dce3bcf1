"""Inspect AI reads our exports with its own loaders and scores them, offline, with its mock
model: the scores prove where each oracle type lands and what its stock scorers weaken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors, vendor

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.formats import REGISTRY, WriteOptions

pytestmark = pytest.mark.conformance

NATIVE = Path(__file__).parents[1] / "fixtures" / "native" / "inspect"
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "inspect-conformance"}
#: what the mock model answers, unless a test says otherwise
ANSWER = "Default output from mockllm/model"


def row(row_id: str, oracle: str, expected: Any = None, **case: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"id": row_id, "input": f"Question {row_id}?"}
    if expected is not None:
        data["expected"] = expected
    data["metadata"] = {
        "case": {
            "caseId": row_id,
            "oracleType": oracle,
            "expectedBehavior": "answers as the mock model does",
            "provenance": "expert-authored",
            **case,
        },
        "team": "evals",
    }
    return data


ROWS = [
    row("exact", "reference-answer", ANSWER),
    row("suffix-only", "reference-answer", "mockllm/model"),
    row("inside-only", "reference-answer", "output from"),
    row("wrong", "reference-answer", "Paris"),
    row("set-hit", "acceptable-set", {"acceptable": ["Paris", ANSWER]}),
    row("set-miss", "acceptable-set", {"acceptable": ["Paris", "London"]}),
    row(
        "rubric",
        "rubric",
        evaluator="llm-judge",
        evaluationCriteria=["Names the capital", "Is one sentence"],
    ),
]


def export(rows: list[dict[str, Any]], target: Path) -> Any:
    return REGISTRY["inspect"].write(HEADER, iter(rows), target, WriteOptions())


def mock_model(answer: str = ANSWER, seen: list[str] | None = None) -> Any:
    """The mock model, answering ``answer`` with its token usage given, so it counts no
    tokens (counting would fetch an encoding from the network)."""
    model = vendor("inspect_ai.model")

    def reply(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        if seen is not None:
            seen.append("\n".join(message.text for message in messages))
        output = model.ModelOutput.from_content(model="mockllm", content=answer)
        output.usage = model.ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return model.get_model("mockllm/model", custom_outputs=reply)


def run(dataset: Any, scorer: Any, tmp_path: Path, solver: Any = None, **model: Any) -> dict:
    """Each sample's scores, by sample id and scorer name."""
    inspect_ai = vendor("inspect_ai")
    solvers = vendor("inspect_ai.solver")
    task = inspect_ai.Task(dataset=dataset, solver=solver or solvers.generate(), scorer=scorer)
    [log] = inspect_ai.eval(
        task, model=mock_model(**model), log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success", log.error
    return {s.id: {k: v.value for k, v in s.scores.items()} for s in log.samples}


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_json_dataset_loads_our_export_and_match_scores_it(tmp_path: Path, suffix: str) -> None:
    dataset_module = vendor("inspect_ai.dataset")
    scorers = vendor("inspect_ai.scorer")
    target = tmp_path / f"samples{suffix}"
    result = export(ROWS, target)
    assert result.rows == len(ROWS)
    dataset = dataset_module.json_dataset(str(target))
    samples = {sample.id: sample for sample in dataset}
    assert list(samples) == [r["id"] for r in ROWS]
    assert samples["exact"].input == "Question exact?"
    assert samples["exact"].target == ANSWER
    assert samples["set-hit"].target == ["Paris", ANSWER]
    assert samples["rubric"].target == "Names the capital\nIs one sentence"
    metadata = samples["set-hit"].metadata
    assert metadata["oracleType"] == "acceptable-set"
    assert metadata["blueprint"]["case"]["caseId"] == "set-hit"
    assert metadata["blueprint"]["metadata"] == {"team": "evals"}

    scored = run(
        dataset.filter(lambda s: s.metadata["oracleType"] != "rubric"),
        [scorers.match(), scorers.match(location="exact"), scorers.includes()],
        tmp_path,
    )
    # keys: match() (default, location="end"), match(location="exact"), includes()
    assert scored["exact"] == {"match": "C", "match1": "C", "includes": "C"}
    assert scored["suffix-only"] == {"match": "C", "match1": "I", "includes": "C"}
    assert scored["inside-only"] == {"match": "I", "match1": "I", "includes": "C"}
    assert scored["wrong"] == {"match": "I", "match1": "I", "includes": "I"}
    # a list of targets passes when any one matches
    assert scored["set-hit"] == {"match": "C", "match1": "C", "includes": "C"}
    assert scored["set-miss"] == {"match": "I", "match1": "I", "includes": "I"}
    # the report names the weakened rule for each row whose answer the default match loosens
    weakened = {i for lossy in result.lossy if lossy.kind == "weakened" for i in lossy.row_ids}
    assert {"suffix-only", "inside-only", "set-hit"} <= weakened


def test_csv_dataset_loads_our_export_with_its_metadata(tmp_path: Path) -> None:
    dataset_module = vendor("inspect_ai.dataset")
    scorers = vendor("inspect_ai.scorer")
    target = tmp_path / "samples.csv"
    result = export(ROWS, target)
    left_out = {i for lossy in result.lossy if lossy.kind == "excluded" for i in lossy.row_ids}
    assert left_out == {"set-hit", "set-miss"}  # a CSV cell holds one target
    dataset = dataset_module.csv_dataset(str(target))
    samples = {sample.id: sample for sample in dataset}
    assert set(samples) == {r["id"] for r in ROWS} - left_out
    assert samples["exact"].target == ANSWER
    assert samples["rubric"].target == "Names the capital\nIs one sentence"
    # metadata is JSON text in the CSV, which csv_dataset parses back into an object
    assert samples["wrong"].metadata["blueprint"]["case"]["oracleType"] == "reference-answer"
    assert samples["wrong"].metadata["blueprint"]["metadata"] == {"team": "evals"}
    scored = run(
        dataset.filter(lambda s: s.metadata["oracleType"] == "reference-answer"),
        scorers.match(location="exact"),
        tmp_path,
    )
    assert scored == {
        "exact": {"match": "C"},
        "suffix-only": {"match": "I"},
        "inside-only": {"match": "I"},
        "wrong": {"match": "I"},
    }
    # and Blueprint reads the CSV back to the same rows
    back = {item.data["id"]: item.data for item in REGISTRY["inspect"].open(target).rows}
    assert back == {r["id"]: r for r in ROWS if r["id"] not in left_out}


def test_model_graded_qa_grades_a_rubric_row_against_its_criteria(tmp_path: Path) -> None:
    dataset_module = vendor("inspect_ai.dataset")
    scorers = vendor("inspect_ai.scorer")
    target = tmp_path / "samples.jsonl"
    export([r for r in ROWS if r["id"] == "rubric"], target)
    seen: list[str] = []
    scored = run(
        dataset_module.json_dataset(str(target)),
        scorers.model_graded_qa(model=mock_model("GRADE: C", seen)),
        tmp_path,
        answer="Paris is the capital.",
    )
    assert scored == {"rubric": {"model_graded_qa": "C"}}
    # the grader model was asked about exactly the row's criteria
    assert any("Names the capital\nIs one sentence" in prompt for prompt in seen)


def test_a_multiple_choice_sample_goes_back_to_the_choice_scorer(tmp_path: Path) -> None:
    dataset_module = vendor("inspect_ai.dataset")
    scorers = vendor("inspect_ai.scorer")
    solvers = vendor("inspect_ai.solver")
    source = NATIVE / "public" / "inspect-test-datasets" / "samples-mcq.jsonl"
    imported = tmp_path / "imported.json"
    convert(source, imported, ConvertOptions(source_format="inspect"))
    [row] = list(data_rows(REGISTRY["json"].open(imported)))
    assert row["metadata"]["case"]["oracleType"] == "reference-answer"
    assert row["expected"] == "A"
    exported = tmp_path / "exported.jsonl"
    convert(imported, exported, ConvertOptions(target_format="inspect"))
    before = dataset_module.json_dataset(str(source))
    after = dataset_module.json_dataset(str(exported))
    assert [(s.input, s.target, s.choices) for s in after] == [
        (s.input, s.target, s.choices) for s in before
    ]
    right = run(after, scorers.choice(), tmp_path, solvers.multiple_choice(), answer="ANSWER: A")
    wrong = run(after, scorers.choice(), tmp_path, solvers.multiple_choice(), answer="ANSWER: B")
    assert [v["choice"] for v in right.values()] == ["C"]
    assert [v["choice"] for v in wrong.values()] == ["I"]


def _samples(path: Path) -> list[dict[str, Any]]:
    dataset_module = vendor("inspect_ai.dataset")
    loader = dataset_module.csv_dataset if path.suffix == ".csv" else dataset_module.json_dataset
    found = []
    for sample in loader(str(path)):
        data = sample.model_dump(mode="json", exclude={"files"})
        metadata = data.get("metadata") or {}
        metadata.pop("blueprint", None)
        data["metadata"] = metadata or None
        for message in data["input"] if isinstance(data["input"], list) else []:
            message.pop("id", None)  # a fresh id for each message, every load
        found.append(data)
    return found


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (NATIVE / "public").rglob("*") if p.suffix in (".jsonl", ".json", ".csv")),
    ids=lambda p: str(p.relative_to(NATIVE)),
)
def test_inspect_loads_the_same_samples_after_a_round_trip(path: Path, tmp_path: Path) -> None:
    imported = tmp_path / "imported.json"
    convert(path, imported, ConvertOptions(source_format="inspect"))
    exported = tmp_path / f"exported{path.suffix}"
    convert(imported, exported, ConvertOptions(target_format="inspect"))
    assert _samples(exported) == _samples(path)


def test_json_dataset_reads_chat_content_parts_as_inspect_content(tmp_path: Path) -> None:
    """An image, audio, video or document in a chat message goes as Inspect's own content
    part, which json_dataset reads as that content, not as text."""
    dataset_module = vendor("inspect_ai.dataset")
    content = vendor("inspect_ai._util.content")
    parts = [
        {"type": "text", "text": "Do these agree?"},
        {"type": "image", "image": "https://example.com/receipt.png", "detail": "low"},
        {"type": "audio", "audio": "data:audio/wav;base64,UklGRg==", "format": "wav"},
        {"type": "video", "video": "https://example.com/clip.mp4", "format": "mp4"},
        {"type": "document", "document": "contract.pdf", "mime_type": "application/pdf"},
    ]
    media = row("media", "reference-answer", "yes")
    media["input"] = [{"role": "user", "content": parts}]
    target = tmp_path / "samples.jsonl"
    result = export([media], target)
    assert not [item for item in result.lossy if item.field == "input"]
    (sample,) = dataset_module.json_dataset(str(target))
    kinds = [type(part) for part in sample.input[0].content]
    assert kinds == [
        content.ContentText,
        content.ContentImage,
        content.ContentAudio,
        content.ContentVideo,
        content.ContentDocument,
    ]
