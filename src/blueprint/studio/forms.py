"""The row editor's fields, and a submitted form read back as the changes ``blueprint edit``
makes (:class:`FieldChange`), so a save in the studio and the command write the same bytes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from blueprint.authoring.rowedit import REMOVED, FieldChange, value_at
from blueprint.core.model import (
    EVALUATOR_TYPES,
    ORACLE_TYPES,
    PROVENANCES,
    BlastRadius,
    Reversibility,
)
from blueprint.io import jsonvalues

Kind = Literal["auto", "text", "long", "lines", "choice"]
Mode = Literal["text", "json"]
REVERSIBILITY: Final[tuple[str, ...]] = get_args(Reversibility)
BLAST_RADIUS: Final[tuple[str, ...]] = get_args(BlastRadius)


@dataclass(frozen=True)
class FieldSpec:
    """One field of the editor: its path, label, how it is edited, and its choices."""

    path: tuple[str, ...]
    label: str
    kind: Kind
    help: str = ""
    choices: tuple[str, ...] = ()
    #: whether the field stays (as empty text) when emptied, instead of being removed
    required: bool = False

    @property
    def name(self) -> str:
        return "f." + ".".join(self.path)

    @property
    def mode_name(self) -> str:
        return "k." + ".".join(self.path)

    @property
    def original_name(self) -> str:
        return "o." + ".".join(self.path)

    @property
    def original_mode_name(self) -> str:
        return "ok." + ".".join(self.path)

    @property
    def dom_id(self) -> str:
        return "field-" + "-".join(self.path)


def _case(key: str, label: str, kind: Kind, help: str = "", **more: Any) -> FieldSpec:
    return FieldSpec(("metadata", "case", key), label, kind, help, **more)


#: the fields the editor shows, in order; the rest of a row is shown as it is, read only
FIELDS: Final = (
    FieldSpec(("input",), "Input", "auto", "What the system receives.", required=True),
    FieldSpec(("expected",), "Expected", "auto", "The expected answer, shaped by the oracle type."),
    _case("oracleType", "Oracle type", "choice", choices=ORACLE_TYPES, required=True),
    _case("evaluator", "Evaluator", "choice", "Empty: the family's.", choices=EVALUATOR_TYPES),
    _case(
        "expectedBehavior",
        "Expected behaviour",
        "long",
        "Why the expected answer is right, in the author's words.",
        required=True,
    ),
    _case("provenance", "Provenance", "choice", choices=PROVENANCES, required=True),
    _case("caseFamily", "Case family", "choice"),
    _case("scenario", "Scenario", "long"),
    _case("actor", "Actor", "text"),
    _case("evaluationCriteria", "Evaluation criteria", "lines", "One criterion a line."),
    _case("unacceptableBehavior", "Unacceptable behaviour", "lines", "One behaviour a line."),
    _case("linkedConcerns", "Linked concerns", "lines", "One concern a line."),
    _case(
        "reversibility",
        "Reversibility",
        "choice",
        "R0 no change … R3 no way back.",
        choices=REVERSIBILITY,
    ),
    _case(
        "blastRadius", "Blast radius", "choice", "B0 one record … B3 outside.", choices=BLAST_RADIUS
    ),
    _case("toolActionExpectation", "Tool action expectation", "long"),
    _case("escalationExpectation", "Escalation expectation", "long"),
    _case("reviewerExpertise", "Reviewer expertise", "text"),
    _case("passLogic", "Pass logic", "text"),
    _case("version", "Case version", "text"),
    _case("retirementCondition", "Retirement condition", "text"),
    FieldSpec(("metadata", "split"), "Split", "text", "dev, test, …"),
)


@dataclass(frozen=True)
class ShownField:
    """A field as the editor shows it: its spec, the text in the control and its mode (text,
    or JSON for a value text would not hold), the text and mode it had when the editor was
    first opened (sent back, so that only a field a person changed is written), and a
    problem reading what was typed."""

    spec: FieldSpec
    text: str
    mode: Mode
    original: str
    original_mode: Mode
    choices: tuple[str, ...]
    problem: str | None = None


def shown_fields(
    row: Mapping[str, Any], families: list[str], typed: Mapping[str, str] | None = None
) -> list[ShownField]:
    """The editor's fields for ``row``. ``typed`` is a submitted form to show again: the
    fields it changed as typed, the others as ``row`` has them now (after a conflict, the
    row as another save left it), so that saving again writes only what this person typed."""
    shown: list[ShownField] = []
    problems = read_form(row, typed, families)[1] if typed is not None else {}
    for spec in FIELDS:
        value = value_at(row, spec.path)
        mode = _shown_mode(spec, value)
        text = original = _as_text(spec, value, mode)
        original_mode = mode
        if typed is not None and touched(spec, typed):
            given = typed.get(spec.mode_name)
            mode = "json" if given == "json" else "text" if given == "text" else mode
            text = typed.get(spec.name, "")
            original = typed.get(spec.original_name, original)
            sent = typed.get(spec.original_mode_name)
            original_mode = "json" if sent == "json" else "text" if sent == "text" else mode
        choices = spec.choices
        if spec.path[-1] == "caseFamily":
            current = value if isinstance(value, str) else None
            choices = tuple(families) + ((current,) if current and current not in families else ())
        shown.append(
            ShownField(spec, text, mode, original, original_mode, choices, problems.get(spec.name))
        )
    return shown


def _shown_mode(spec: FieldSpec, value: Any) -> Mode:
    """How a value is shown: as text where the field's control holds it unchanged, else as
    JSON (a number or null where a string belongs; a string with a control character other
    than a line end or tab, which a page cannot carry; list items a line each cannot hold)."""
    if value is REMOVED:
        return "text"
    if isinstance(value, str):
        return "json" if _UNSAFE.search(value) else "text"
    if spec.kind == "lines" and isinstance(value, list) and all(_one_line(v) for v in value):
        return "text"
    return "json"


#: characters a web page does not carry through a form as they are (NUL, CR, ...)
_UNSAFE: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _one_line(item: Any) -> bool:
    """Whether a list item survives as one line of a textarea."""
    return (
        isinstance(item, str)
        and bool(item)
        and item == item.strip()
        and "\n" not in item
        and not _UNSAFE.search(item)
    )


def _as_text(spec: FieldSpec, value: Any, mode: Mode) -> str:
    if value is REMOVED:
        return ""
    if mode == "text" and isinstance(value, str):
        return value
    if mode == "text" and spec.kind == "lines" and isinstance(value, list):
        return "\n".join(str(item) for item in value)
    return jsonvalues.dumps_text(value, indent=True)


def _lines(text: str) -> str:
    """Text with every line end as ``\\n`` (a browser's form sends CRLF)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def touched(spec: FieldSpec, form: Mapping[str, str]) -> bool:
    """Whether a person changed a field: its text or mode differs from what the editor first
    showed (sent back with the form; a form without it is compared with nothing, and every
    field it holds counts)."""
    if spec.name not in form:
        return False
    if spec.original_name not in form:
        return True
    if form.get(spec.mode_name, "text") != form.get(spec.original_mode_name, "text"):
        return True
    return _lines(form[spec.name]) != _lines(form[spec.original_name])


def read_form(
    row: Mapping[str, Any], form: Mapping[str, str], families: Sequence[str] = ()
) -> tuple[list[FieldChange], dict[str, str]]:
    """The changes a submitted editor form makes to ``row``, and what could not be read, by
    field name (nothing is saved while there is any). Only fields a person changed count
    (:func:`touched`), and of those only the ones whose value differs from the row's. A
    choice takes only the values its list offers (``families`` for the case family): the
    row's own value, and none, besides; anything else a form sends is refused."""
    changes: list[FieldChange] = []
    problems: dict[str, str] = {}
    for spec in FIELDS:
        if not touched(spec, form):
            continue
        current = value_at(row, spec.path)
        given = form.get(spec.mode_name, _shown_mode(spec, current))
        mode: Mode = "json" if given == "json" else "text"
        raw = _lines(form[spec.name])
        if spec.original_name not in form and raw == _lines(_as_text(spec, current, mode)):
            continue  # a form made without originals, sent back as the row would show it
        if spec.kind == "choice":
            offered = families if spec.path[-1] == "caseFamily" else spec.choices
            if raw and raw not in offered and raw != current:
                shown = ", ".join(offered) if offered else "none in this set"
                problems[spec.name] = f"{raw!r} is not a value of {spec.label} ({shown})"
                continue
        try:
            value = _value(spec, raw, "text" if spec.kind == "choice" else mode)
        except ValueError as error:
            problems[spec.name] = f"not JSON: {error}"
            continue
        if value != current:
            changes.append(FieldChange(spec.path, value))
    return changes, problems


def _value(spec: FieldSpec, raw: str, mode: str) -> Any:
    if mode == "json":
        if not raw.strip():
            return "" if spec.required else REMOVED
        return jsonvalues.loads(raw)
    if spec.kind == "lines":
        items = [line.strip() for line in raw.split("\n") if line.strip()]
        return items or REMOVED
    if spec.kind == "choice":
        return raw if raw else REMOVED
    if not raw.strip() and not spec.required:
        return REMOVED
    return raw
