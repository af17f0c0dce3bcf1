"""OpenAI Evals registry samples: JSON Lines of ``{"input": ..., "ideal": ...}``.

The open-source ``openai/evals`` registry's basic evals (Match, Includes, FuzzyMatch) read a
sample's ``input`` (text or chat messages) and ``ideal`` (a text or a list of texts, any of
which is right) and ignore every other key; the model-graded ``closedqa`` eval also reads
``criteria``. A sample has no id and no metadata, so the case profile travels under a
``metadata`` key, which the basic evals never read. Not the hosted Evals API's format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.formats._io import read_json_lines
from blueprint.formats.answers import answer_text, answers_of, criteria_text, prompt_of
from blueprint.formats.base import SetSource
from blueprint.formats.mapping import load_mapping
from blueprint.formats.native import ABSENT, NativeShape
from blueprint.formats.openai_registry import (
    MATCH,
    EvalClass,
    check_ideal,
    ideal_check,
    registry_class,
)
from blueprint.formats.sniffing import Fit, first_line_object, foreign_marks
from blueprint.formats.vendor import (
    ExportRow,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    extras_of,
    imported_row,
    payload_of,
)

#: the chat messages the evals' prompts take: role and text content, and an optional name
_ROLE_KEYS: Final = frozenset({"role", "content", "name"})
_MESSAGE_KEYS: Final = {role: _ROLE_KEYS for role in ("system", "user", "assistant")}
#: keys a sample may carry that another .jsonl format uses for its own answer
_OTHER_ANSWERS: Final = frozenset({"target", "expected", "outputs", "expected_output"})

_SHAPE: Final = NativeShape(
    mapped={
        "input": ("input",),
        "ideal": ("expected", "case.oracleType"),
        "criteria": ("case.evaluationCriteria",),
        "metadata": ("extras",),
    },
    grading=("ideal", "criteria"),
)


def _ideal(row: ExportRow) -> str | list[str] | None:
    if row.oracle_type == "reference-answer":
        return answer_text(row.expected)
    if row.oracle_type == "acceptable-set":
        if isinstance(row.expected, dict) and "satisfies" in row.expected:
            decided = check_ideal(row.expected["satisfies"])
            return decided[1] if decided is not None else []
        return answers_of(row.expected)
    return None


def _ideal_weakened(row: ExportRow) -> str | None:
    """Why an acceptable set defined by a check Match or Includes decides is still weakened:
    the registry YAML, not the samples file, names the class."""
    if row.oracle_type != "acceptable-set" or not isinstance(row.expected, dict):
        return None
    decided = check_ideal(row.expected.get("satisfies"))
    if decided is None:
        return None
    return (
        f"ideal holds the check's text, which {decided[0]} decides exactly as the check does;"
        " a samples file names no eval class, so that holds only when the registry YAML runs"
        f" it with {decided[0].split()[0]}; convert --graders blueprint applies the check"
    )


class OpenaiEvalsCodec(VendorCodec):
    name: ClassVar[str] = "openai-evals"
    title: ClassVar[str] = "OpenAI Evals registry samples (JSONL)"
    read_extensions: ClassVar[tuple[str, ...]] = (".jsonl",)
    write_forms: ClassVar[dict[str, str]] = {".jsonl": "jsonl"}
    refused_forms: ClassVar[dict[str, str]] = {
        ".json": "the registry reads samples from JSON Lines files only; write .jsonl",
        ".csv": "the registry reads samples from JSON Lines files only; write .jsonl",
    }
    what: ClassVar[str] = "an OpenAI Evals sample"
    shape: ClassVar[NativeShape] = _SHAPE

    def records(self, path: Path) -> Records:
        return read_json_lines(path)

    def open(self, path: Path) -> SetSource:
        # the eval class a registry YAML runs the file with decides what an ideal means
        return self.source(path, None, self.rows(self.records(path), registry_class(path)))

    def kept_row(
        self,
        record: dict[str, Any],
        payload: dict[str, Any],
        position: int,
        ids: Any,
        suite: Any,
    ) -> dict[str, Any]:
        # a record Blueprint wrote back keeps its changes from the record read with no class
        return super().kept_row(record, payload, position, ids, None)

    # --- reading -----------------------------------------------------------------------------

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        ideal = record.get("ideal", ABSENT)
        expected = {"acceptable": ideal} if isinstance(ideal, list) and ideal else ideal
        if ideal == []:
            expected = ABSENT
        return Values(
            input=record.get("input", ABSENT),
            expected=expected,
            extras=extras_of(record.get("metadata")) if native_mode else {},
        )

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        derived: dict[str, str] = {
            "id": "a sample has no id; numbered by position, as the registry's runner does",
            "metadata.case.expectedBehavior": "OpenAI Evals samples carry no behaviour description",
        }
        values = self.values_of(record, True, suite)
        value = values.input
        if value is ABSENT:
            value = None
            derived["input"] = "the sample has no input"
        case: dict[str, Any] = {}
        criteria = record.get("criteria")
        if isinstance(criteria, str) and criteria:
            case["evaluationCriteria"] = [criteria]
        expected = values.expected
        check = ideal_check(suite, record.get("ideal")) if isinstance(suite, EvalClass) else None
        if check is not None:
            assert isinstance(suite, EvalClass)
            expected = {"satisfies": check}
            oracle = "acceptable-set"
            how = "starts with" if suite.path == MATCH else "contains"
            derived["metadata.case.oracleType"] = (
                f"the registry YAML {suite.spec.name} runs these samples with {suite.name}, which"
                f" passes an output that {how} any ideal: an acceptable set defined by that check"
            )
        elif expected is not ABSENT:
            if isinstance(record.get("ideal"), list):
                oracle = "acceptable-set"
                derived["metadata.case.oracleType"] = "the sample's ideal is a list: any is right"
            else:
                oracle = "reference-answer"
                derived["metadata.case.oracleType"] = "the sample has an ideal answer"
                if not isinstance(expected, str):
                    derived["expected"] = "an ideal answer is text; this one is not"
        elif "evaluationCriteria" in case:
            oracle = "rubric"
            derived["metadata.case.oracleType"] = (
                "the sample has criteria and no ideal, as model-graded closedqa samples do"
            )
        else:
            oracle = "expected-behavior-only"
            derived["metadata.case.oracleType"] = "the sample has no ideal and no criteria"
        return imported_row(
            row_id=f"sample-{position + 1}",
            input_value=value,
            expected=expected,
            oracle_type=oracle,
            expected_behavior="(imported from OpenAI Evals without a behaviour description)",
            format_name=self.name,
            derived=derived,
            case=case,
            metadata=values.extras,
        )

    # --- writing -----------------------------------------------------------------------------

    def _sample(self, row: ExportRow) -> dict[str, Any]:
        sample: dict[str, Any] = {"input": prompt_of(row.input, _MESSAGE_KEYS)}
        ideal = _ideal(row)
        if ideal is not None:
            sample["ideal"] = ideal
        if row.case.get("evaluationCriteria"):
            sample["criteria"] = criteria_text(row.case)
        return sample

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        return {**self._sample(row), "metadata": row.labels()}

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        sample = self._sample(row)
        if row.extra:
            sample["metadata"] = dict(row.extra)
        return sample

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        # Blueprint's eval class grades calls and final states from the sample's metadata
        graded_here = context.options.graders == "blueprint"
        if row.oracle_type in ("expected-tool-calls", "expected-final-state") and not graded_here:
            return "no-basic-eval"
        if row.oracle_type == "rubric" and not row.case.get("evaluationCriteria"):
            return "no-criteria"
        return None

    def weakened(self, row: ExportRow, context: WriteContext) -> list[tuple[str, str]] | None:
        chat = not isinstance(row.input, list) or prompt_of(row.input, _MESSAGE_KEYS) is row.input
        decided = _ideal_weakened(row)
        if chat and decided is None:
            return None
        rules = load_mapping(self.name).weakened_rules(row.data, row.oracle_type, row.evaluator)
        found = [
            (rule.field, decided if rule.field == "expected.satisfies" and decided else rule.reason)
            for rule in rules
        ]
        if not chat:
            found.append(
                (
                    "input",
                    "a list that is not chat messages (role system, user or assistant, text"
                    " content, an optional name) goes as its JSON text, so the model sees JSON",
                )
            )
        return found

    def sniff(self, path: Path, head: bytes) -> Fit:
        first = first_line_object(head)
        keys = set(first) if isinstance(first, dict) else set()
        why = "an OpenAI Evals sample has input and ideal (or criteria)"
        if "input" not in keys or keys & _OTHER_ANSWERS:
            return Fit.no(why)
        if "ideal" in keys:
            return Fit.yes()
        if "criteria" in keys and (
            keys <= {"input", "criteria"} or payload_of(first.get("metadata"))
        ):
            return Fit.yes()
        return Fit.no(why)

    def sniff_named(self, path: Path, head: bytes) -> Fit:
        """Whether a file named as OpenAI Evals samples is one: more loosely than detection,
        a sample with an input and no ideal is read (a model-graded eval's template reads
        other keys), but a record without an input is no sample: the evals' runner fails on
        it, and a chat fine-tuning file or a hosted Evals data file would give rows of
        nothing."""
        first = first_line_object(head)
        keys = set(first) if isinstance(first, dict) else set()
        marks = foreign_marks(keys, self.name)
        if "input" in keys or not marks.ok:
            return marks
        if "messages" in keys:
            return Fit.no(
                "each line holds chat messages and no input: a chat fine-tuning file, not"
                " eval samples (an OpenAI Evals sample has an input, and an ideal answer)"
            )
        if "item" in keys:
            return Fit.no(
                "each line wraps its fields in item: a hosted OpenAI Evals data file, not"
                " registry samples (a sample has an input, and an ideal answer)"
            )
        return Fit.no("an OpenAI Evals sample has an input (and an ideal answer or criteria)")
