"""The studio's editor form read back: only what a person changed becomes a change, whatever
the browser does to line ends and whatever odd values the row holds."""

from __future__ import annotations

from typing import Any

from blueprint.authoring.rowedit import REMOVED
from blueprint.studio.forms import read_form, shown_fields
from conftest import row


def submitted(data: dict[str, Any]) -> dict[str, str]:
    """The form a browser sends for the editor as shown, untouched (CRLF line ends)."""
    form: dict[str, str] = {}
    for field in shown_fields(data, ["lookup"]):
        # a browser's textarea holds its text with \n line ends, and sends them as \r\n
        text = field.text.replace("\r\n", "\n").replace("\r", "\n")
        form[field.spec.name] = text.replace("\n", "\r\n")
        if field.spec.kind == "auto" or (field.mode == "json" and field.spec.kind != "choice"):
            form[field.spec.mode_name] = field.mode
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


def test_an_untouched_form_changes_nothing() -> None:
    data = odd_row()
    changes, problems = read_form(data, submitted(data))
    assert (changes, problems) == ([], {})


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
