"""The studio's editor form read back: only what a person changed becomes a change, whatever
the browser does to line ends and whatever odd values the row holds."""

from __future__ import annotations

from typing import Any

import pytest

from blueprint.authoring.rowedit import REMOVED
from blueprint.studio.forms import read_form, shown_fields
from conftest import row


def as_sent(text: str) -> str:
    """A value as a browser sends it: its line ends as \\r\\n."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")


def submitted(data: dict[str, Any], *, originals: bool = True) -> dict[str, str]:
    """The form a browser sends for the editor as shown, untouched."""
    form: dict[str, str] = {}
    for field in shown_fields(data, ["lookup"]):
        form[field.spec.name] = as_sent(field.text)
        if field.spec.kind == "auto" or (field.mode == "json" and field.spec.kind != "choice"):
            form[field.spec.mode_name] = field.mode
        if originals:
            form[field.spec.original_name] = as_sent(field.original)
            form[field.spec.original_mode_name] = field.original_mode
    return form


def odd_row() -> dict[str, Any]:
    data = row("a", caseFamily="lookup", evaluationCriteria=["x", "y"])
    case = data["metadata"]["case"]
    data["input"] = "\nfirst line\r\nsecond line\n"
    data["expected"] = {"days": 30, "note": None}
    case["scenario"] = 42  # a number where text belongs: invalid, but shown as it is
    case["actor"] = "a customer\nwho writes twice"
    case["linkedConcerns"] = ["policy", 7]
    case["evaluator"] = "not-an-evaluator"
    case["version"] = None
    data["metadata"]["split"] = "dev"
    return data


@pytest.mark.parametrize("originals", [True, False])
def test_an_untouched_form_changes_nothing(originals: bool) -> None:
    data = odd_row()
    changes, problems = read_form(data, submitted(data, originals=originals))
    assert (changes, problems) == ([], {})


def test_values_a_page_cannot_carry_are_shown_as_json() -> None:
    data = odd_row()
    case = data["metadata"]["case"]
    case["actor"] = "carriage\rreturn and NUL\x00"
    case["evaluationCriteria"] = ["two\nlines", " padded ", ""]
    shown = {field.spec.name: field for field in shown_fields(data, [])}
    assert shown["f.metadata.case.actor"].mode == "json"
    assert "\\r" in shown["f.metadata.case.actor"].text
    assert shown["f.metadata.case.evaluationCriteria"].mode == "json"
    form = submitted(data)
    form["f.metadata.case.scenario"] = "7"  # shown as JSON: typed as JSON
    changes, problems = read_form(data, form)
    assert problems == {}
    assert [(change.dotted, change.value) for change in changes] == [("metadata.case.scenario", 7)]


def test_after_a_conflict_only_what_this_person_typed_is_written() -> None:
    opened = row("a", scenario="old", actor="old actor")
    form = submitted(opened)
    form["f.metadata.case.actor"] = "my actor"
    # meanwhile another save changed the scenario
    now = row("a", scenario="theirs", actor="old actor")
    again = {f.spec.name: f for f in shown_fields(now, [], form)}
    assert again["f.metadata.case.scenario"].text == "theirs"  # rebased on the row as it is
    assert again["f.metadata.case.actor"].text == "my actor"
    resent: dict[str, str] = {}
    for field in again.values():
        resent[field.spec.name] = as_sent(field.text)
        resent[field.spec.original_name] = as_sent(field.original)
        resent[field.spec.original_mode_name] = field.original_mode
        if field.spec.kind == "auto":
            resent[field.spec.mode_name] = field.mode
    changes, _ = read_form(now, resent)
    assert [(change.dotted, change.value) for change in changes] == [
        ("metadata.case.actor", "my actor")
    ]


def test_only_the_field_typed_into_changes() -> None:
    data = odd_row()
    form = submitted(data)
    form["f.metadata.case.expectedBehavior"] = "new\r\nbehaviour"
    form["f.metadata.case.evaluationCriteria"] = "x\r\n\r\nrefunds \r\n"
    form["f.metadata.case.linkedConcerns"] = '["policy", 8]'  # shown as JSON, typed as JSON
    form["f.metadata.split"] = ""
    changes, problems = read_form(data, form)
    assert problems == {}
    assert {change.dotted: change.value for change in changes} == {
        "metadata.case.expectedBehavior": "new\nbehaviour",
        "metadata.case.evaluationCriteria": ["x", "refunds"],
        "metadata.case.linkedConcerns": ["policy", 8],
        "metadata.split": REMOVED,
    }


def test_switching_a_field_to_json_reads_its_value() -> None:
    data = row("a")
    form = submitted(data)
    form["f.input"], form["k.input"] = "[1, 2]", "json"
    form["f.expected"], form["k.expected"] = "{not json", "json"
    changes, problems = read_form(data, form)
    assert [(change.dotted, change.value) for change in changes] == [("input", [1, 2])]
    assert set(problems) == {"f.expected"}


def test_a_typed_form_is_shown_again_as_typed() -> None:
    data = row("a")
    form = submitted(data)
    form["f.expected"], form["k.expected"] = "{not json", "json"
    shown = {field.spec.name: field for field in shown_fields(data, [], form)}
    assert shown["f.expected"].text == "{not json"
    assert shown["f.expected"].mode == "json"
    assert shown["f.expected"].problem is not None
