"""ome recall-evaluation suites: ``{name, experiencesFile, cases: [...]}``, one JSON document.

ome (oh-my-experience) recalls *experience cards* for a prompt, and ``ome eval recall --suite``
checks, deterministically and without a model, which cards come back for each case. A case
passes when every card of ``expectedCards`` comes back and no other card does, except those
``allowedExtraCards`` lists (and never one of ``unexpectedCards``); with ``expectNoMatches``
any returned card fails it.

Canonically a case is an ``acceptable-set`` row defined by an ``items`` check, which is
ome's rule itself: the output (the list of card ids ome returns) holds every required card,
in any order, and no other card but the allowed ones. ``{"satisfies": {"type": "items",
"required": ["browser-validation"]}}`` says that exactly that card must come back; optional
extra cards are the check's ``allowed`` ones, and abstention (``expectNoMatches``) is the
check with nothing required and nothing allowed. Forbidden cards are left out of the allowed
ones and kept as unacceptable behaviours written ``returns the card "id"``. The input is the
prompt, or ``{"prompt", "cwd"}`` when the case sets the project folder that scoped cards
depend on. An acceptable set of card lists, each list one complete answer, is written too
when its lists are the required cards with each choice of the optional ones.

A suite has no free-form place: ome's case contract names every key, so an export writes
only those keys, and what a row cannot say is declared lost by reading the record back.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_text
from blueprint.formats.base import ExportResult, SetSource, WriteOptions
from blueprint.formats.canonical_json import row_start_lines
from blueprint.formats.native import ABSENT, NativeShape, same
from blueprint.formats.sniffing import Fit, json_head, object_keys, text_of
from blueprint.formats.vendor import (
    HUMAN_REVIEW,
    ExportRow,
    ExportTally,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    compare_records,
    imported_row,
)
from blueprint.io import jsonvalues

#: the keys of a case that grade it: which cards must, may and must not come back
CARD_KEYS: Final = ("expectedCards", "allowedExtraCards", "unexpectedCards", "expectNoMatches")
#: the keys ome's recall eval reads from a suite
SUITE_KEYS: Final = frozenset({"name", "experiencesFile", "experiences", "cases"})

#: the most optional cards an acceptable set of card lists is written with: each choice of
#: them is one list, so the set holds 2**n lists (an items check has no such limit)
MAX_OPTIONAL_CARDS: Final = 8

#: how many cards ome returns by default (``--limit``)
DEFAULT_LIMIT: Final = 4

#: how an imported case says what passes, so a Blueprint reader knows the order is free
PASS_LOGIC: Final = (
    "ome returns a ranked list of cards; the case passes when those cards, in any order, are"
    " every required card and otherwise only allowed ones"
)

#: the case keys ome reads as one value, what each must be, and how to say so
_SCALARS: Final[dict[str, tuple[Callable[[Any], bool], str]]] = {
    "expectNoMatches": (lambda value: isinstance(value, bool), "true or false"),
    "cwd": (lambda value: isinstance(value, str), "a folder path (text)"),
    "threshold": (
        lambda value: isinstance(value, int | float) and not isinstance(value, bool),
        "a number",
    ),
}

_FORBIDDEN: Final = re.compile(r'returns the card (".*")', re.DOTALL)

_SHAPE: Final = NativeShape(
    mapped={
        "id": ("id",),
        "prompt": ("input",),
        "cwd": ("input",),
        "expectedCards": ("expected", "case.oracleType"),
        "allowedExtraCards": ("expected", "case.oracleType"),
        "unexpectedCards": ("case.unacceptableBehavior",),
        "expectNoMatches": ("expected", "case.oracleType"),
    },
    grading=CARD_KEYS,
)


def forbidden_text(card: str) -> str:
    """The unacceptable behaviour that says a card must not come back."""
    return f"returns the card {json.dumps(card, ensure_ascii=False)}"


def forbidden_card(text: Any) -> str | None:
    """The card an unacceptable behaviour forbids, when it says so in :func:`forbidden_text`
    form; None for any other behaviour."""
    match = _FORBIDDEN.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    try:
        card = json.loads(match.group(1))
    except ValueError:
        return None
    return card if isinstance(card, str) and forbidden_text(card) == text else None


def default_experiences_file(name: str) -> str:
    """Where a suite named ``name`` expects its cards: beside it, named after it."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "suite"
    return f"./{stem}.cards.json"


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


# --- the cards a row names ---------------------------------------------------------------------


class Cards:
    """What an ome case says of the cards: required, optional, and whether none may come."""

    def __init__(self, required: list[str], optional: list[str], abstain: bool) -> None:
        self.required = required
        self.optional = optional
        self.abstain = abstain

    def answers(self) -> list[list[str]]:
        """Every acceptable answer: the required cards with each choice of optional ones."""
        if self.abstain:
            return [[]]
        return [
            [*self.required, *chosen]
            for size in range(len(self.optional) + 1)
            for chosen in itertools.combinations(self.optional, size)
        ]

    def check(self) -> dict[str, Any]:
        """ome's rule for these cards as an ``items`` check on the list of returned cards."""
        if self.abstain:
            return {"type": "items", "required": []}
        check: dict[str, Any] = {"type": "items", "required": list(self.required)}
        if self.optional:
            check["allowed"] = list(self.optional)
        return check


def is_card_id(value: Any) -> bool:
    """Whether a value can be an ome card id: text, not empty, without a path separator
    (ome's card schema refuses ids holding / or \\)."""
    return isinstance(value, str) and bool(value) and not {"/", "\\"} & set(value)


def _card_list(value: Any) -> list[str] | None:
    """The cards one answer names: a list of card ids, or one card id by itself."""
    if is_card_id(value):
        return [value]
    if isinstance(value, list) and all(is_card_id(item) for item in value):
        return value
    return None


def cards_of(row: ExportRow) -> Cards | str:
    """The cards a row's expected value names, or the exclusion kind when it names none or
    says something ome cannot."""
    expected = row.expected
    if row.oracle_type == "reference-answer":
        listed = _card_list(expected) if isinstance(expected, list) else None
        if listed is None:
            return "no-cards"
        return Cards(_unique(listed), [], abstain=not listed)
    if row.oracle_type != "acceptable-set" or not isinstance(expected, dict):
        return "no-cards"
    if "graded" in expected:
        return "graded"
    if "satisfies" in expected:
        return _items_cards(expected["satisfies"])
    if "acceptable" not in expected:
        return "no-cards"
    members = [_card_list(member) for member in expected["acceptable"]]
    if any(member is None for member in members):
        return "no-cards"
    answers = [_unique(member) for member in members if member is not None]
    smallest = min(answers, key=len)
    required = [card for card in smallest if all(card in answer for answer in answers)]
    optional = _unique([card for answer in answers for card in answer if card not in required])
    if len(optional) > MAX_OPTIONAL_CARDS:
        return "alternatives"
    cards = Cards(required, optional, abstain=False)
    if {frozenset(answer) for answer in answers} != {
        frozenset(answer) for answer in cards.answers()
    }:
        return "alternatives"
    if not required and not optional:
        cards.abstain = True
    return cards


def _items_cards(check: Any) -> Cards | str:
    """The cards an ``items`` check names (no-cards for any other check, or items that are
    not card ids)."""
    if not isinstance(check, dict) or check.get("type") != "items":
        return "no-cards"
    required = _card_list(check.get("required"))
    allowed = _card_list(check.get("allowed") or [])
    if not isinstance(check.get("required"), list) or required is None or allowed is None:
        return "no-cards"
    if len(_unique(required)) != len(required):
        return "no-cards"  # ome returns each card once: a card required twice never passes
    optional = _unique([card for card in allowed if card not in required])
    return Cards(required, optional, abstain=not required and not optional)


def prompt_of(value: Any) -> tuple[str, str | None]:
    """The prompt and the project folder (cwd) a row's input gives a case."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict) and isinstance(value.get("prompt"), str):
        cwd = value.get("cwd")
        if set(value) <= {"prompt", "cwd"} and (cwd is None or isinstance(cwd, str)):
            return value["prompt"], cwd
    return jsonvalues.dumps_text(value), None


def forbidden_cards(row: ExportRow) -> list[str]:
    behaviours = row.case.get("unacceptableBehavior") or []
    return [card for text in behaviours if (card := forbidden_card(text)) is not None]


# --- the suite around the cases ----------------------------------------------------------------


def _suite_head(name: str | None) -> dict[str, Any]:
    """The suite's own keys (before ``cases``) that a set with this name is written with."""
    if name is None:
        return {}
    return {"name": name, "experiencesFile": default_experiences_file(name)}


def _head_order(head: dict[str, Any]) -> list[str]:
    return [*head, "cases"]


def suite_extension(document: dict[str, Any], name: str | None) -> dict[str, Any]:
    """What the set must keep of a suite's own keys so the export writes the same suite:
    the values a set named ``name`` would not be written with, the keys it would be written
    with that the suite lacks, and the key order when it is not the usual one."""
    head = _suite_head(name)
    kept = {
        key: value
        for key, value in document.items()
        if key != "cases" and (key not in head or not same(head[key], value))
    }
    absent = [key for key in head if key not in document]
    extension: dict[str, Any] = {}
    if name is None:
        extension["unnamed"] = True  # the set's name is made up: the suite is written without
    if kept:
        extension["suite"] = kept
    if absent:
        extension["absent"] = absent
    if list(document) != _head_order(_apply(head, extension)):
        extension["keys"] = list(document)
    return extension


def _apply(head: dict[str, Any], extension: dict[str, Any]) -> dict[str, Any]:
    absent = extension.get("absent")
    absent = absent if isinstance(absent, list) else []
    kept = extension.get("suite")
    kept = kept if isinstance(kept, dict) else {}
    return {**{k: v for k, v in head.items() if k not in absent}, **kept}


def suite_of_set(
    header: dict[str, Any], derived: frozenset[str]
) -> tuple[dict[str, Any], list[str]]:
    """The suite's own keys for a set, and the order of every key (``cases`` among them)."""
    extensions = header.get("extensions")
    extension = extensions.get("ome") if isinstance(extensions, dict) else None
    extension = extension if isinstance(extension, dict) else {}
    name = header.get("name")
    real = isinstance(name, str) and bool(name) and "name" not in derived
    real = real and extension.get("unnamed") is not True
    head = _apply(_suite_head(name if real else None), extension)
    order = extension.get("keys")
    if isinstance(order, list):
        first = [key for key in order if isinstance(key, str) and (key in head or key == "cases")]
        order = _unique([*first, *head, "cases"])
    else:
        order = _head_order(head)
    return head, order


# --- writing JSON the way ome's suites are written ---------------------------------------------


def _render(value: Any, depth: int, inline: bool) -> str:
    pad = "  " * (depth + 1)
    if isinstance(value, dict) and value:
        items = [
            f"{pad}{jsonvalues.dumps_text(key)}: {_render(item, depth + 1, inline)}"
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
    if isinstance(value, list) and value:
        if inline and not any(isinstance(item, dict | list) for item in value):
            return "[" + ", ".join(jsonvalues.dumps_text(item) for item in value) + "]"
        items = [pad + _render(item, depth + 1, inline) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * depth + "]"
    return jsonvalues.dumps_text(value)


def render_suite(document: dict[str, Any], *, expanded: bool = False) -> str:
    """A suite as ome's own suites are written: two-space indents, and a list of plain values
    on one line (``expanded``: one value a line, as ``JSON.stringify(suite, null, 2)``)."""
    return _render(document, 0, not expanded) + "\n"


# --- the codec ---------------------------------------------------------------------------------


class OmeCodec(VendorCodec):
    name: ClassVar[str] = "ome"
    title: ClassVar[str] = "ome recall-evaluation suite (JSON)"
    read_extensions: ClassVar[tuple[str, ...]] = (".json",)
    write_forms: ClassVar[dict[str, str]] = {".json": "json"}
    refused_forms: ClassVar[dict[str, str]] = {
        suffix: "ome reads a recall suite as one JSON document; write .json"
        for suffix in (".jsonl", ".yaml", ".yml", ".csv", ".toml")
    }
    what: ClassVar[str] = "an ome recall case"
    shape: ClassVar[NativeShape] = _SHAPE
    metadata_key: ClassVar[str | None] = None
    document: ClassVar[bool] = True

    # --- reading -----------------------------------------------------------------------------

    def records(self, path: Path) -> Records:
        return self._read(path)[1]

    def open(self, path: Path) -> SetSource:
        header, records = self._read(path)
        return self.source(path, header, self.rows(records))

    def _read(self, path: Path) -> tuple[dict[str, Any], list[tuple[int | None, Any]]]:
        """The set-level fields and the cases of a suite, read once."""
        text = read_text(path)
        try:
            document = jsonvalues.loads(text)
        except jsonvalues.JSONError as error:
            raise ParseError(path, error.reason, line=error.line, column=error.column) from None
        if not isinstance(document, dict):
            raise ParseError(
                path,
                "an ome recall suite is one JSON object with a cases array, not"
                f" {jsonvalues.json_type(document)}",
            )
        cases = document.get("cases", ABSENT)
        if not isinstance(cases, list):
            found = "missing" if cases is ABSENT else f"{jsonvalues.json_type(cases)}"
            raise ParseError(
                path, f"cases: an ome recall suite must hold a cases array (it is {found})"
            )
        name = document.get("name")
        real = name if isinstance(name, str) and name else None
        header: dict[str, Any] = {"name": real} if real else {}
        extension = suite_extension(document, real)
        if render_suite(document) != text and render_suite(document, expanded=True) == text:
            extension["layout"] = "expanded"
        if extension:
            header["extensions"] = {self.name: extension}
        lines = row_start_lines(text, "cases")
        records = [
            (lines[index] if index < len(lines) else None, case) for index, case in enumerate(cases)
        ]
        return header, records

    def problem(self, record: dict[str, Any]) -> str | None:
        case_id = record.get("id")
        which = f"case {case_id!r}" if isinstance(case_id, str) else "a case"
        prompt = record.get("prompt", ABSENT)
        if not isinstance(prompt, str):
            found = "missing" if prompt is ABSENT else jsonvalues.json_type(prompt)
            return f"{which}: prompt must be text (it is {found})"
        for key in ("expectedCards", "allowedExtraCards", "unexpectedCards"):
            value = record.get(key)
            if value is not None and not (
                isinstance(value, list) and all(isinstance(card, str) for card in value)
            ):
                return f"{which}: {key} must be a list of card ids (text)"
        for key, (fits, wanted) in _SCALARS.items():
            value = record.get(key)
            if value is not None and not fits(value):
                return f"{which}: {key} must be {wanted}, not {jsonvalues.json_type(value)}"
        return None

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        return Values(input=self._input(record))

    @staticmethod
    def _input(record: dict[str, Any]) -> Any:
        cwd = record.get("cwd")
        if isinstance(cwd, str):
            return {"prompt": record.get("prompt"), "cwd": cwd}
        return record.get("prompt")

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        derived: dict[str, str] = {}
        row_id = record.get("id")
        if not isinstance(row_id, str) or not row_id:
            row_id = f"case-{position + 1}"
            derived["id"] = "the case has no id (text); numbered by position"
        required = _unique(record.get("expectedCards") or [])
        forbidden = record.get("unexpectedCards") or []
        optional = [
            card
            for card in _unique(record.get("allowedExtraCards") or [])
            if card not in required and card not in forbidden
        ]
        abstain = record.get("expectNoMatches") is True
        cards = Cards(required, optional, abstain)
        case: dict[str, Any] = {}
        if forbidden:
            case["unacceptableBehavior"] = [forbidden_text(card) for card in forbidden]
            derived["metadata.case.unacceptableBehavior"] = "one per card of unexpectedCards"
        case["passLogic"] = PASS_LOGIC
        derived["metadata.case.oracleType"] = "an ome case checks which cards come back"
        derived["expected"] = (
            "ome's rule as an items check: expectedCards required, allowedExtraCards (but"
            " unexpectedCards) allowed, in any order; nothing at all with expectNoMatches"
        )
        derived["metadata.case.expectedBehavior"] = "written from the case's card lists"
        derived["metadata.case.passLogic"] = "ome's rule for passing a case"
        return imported_row(
            row_id=row_id,
            input_value=self._input(record),
            expected={"satisfies": cards.check()},
            oracle_type="acceptable-set",
            expected_behavior=_behaviour(cards),
            format_name=self.name,
            derived=derived,
            case=case,
        )

    # --- writing -----------------------------------------------------------------------------

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        if row.human_only:
            return None  # left out, or written for human review, as every vendor does
        found = cards_of(row)
        return found if isinstance(found, str) else None

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        prompt, cwd = prompt_of(row.input)
        record: dict[str, Any] = {"id": row.id, "prompt": prompt}
        if cwd is not None:
            record["cwd"] = cwd
        found = cards_of(row) if row.has_expected else "no-cards"
        cards = found if isinstance(found, Cards) else Cards([], [], abstain=False)
        record["expectedCards"] = cards.required
        if cards.optional:
            record["allowedExtraCards"] = cards.optional
        forbidden = forbidden_cards(row)
        if forbidden:
            record["unexpectedCards"] = forbidden
        if cards.abstain:
            record["expectNoMatches"] = True
        return record

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        record = self.native_record(row, context)
        tags = (["starter-example"] if row.starter else []) + (
            [HUMAN_REVIEW] if row.human_only else []
        )
        if tags:
            record["tags"] = tags
        return record

    def record_for(
        self, row: ExportRow, context: WriteContext, tally: ExportTally
    ) -> dict[str, Any] | None:
        record = super().record_for(row, context, tally)
        if record is None:
            return None
        if row.human_only and not tally.memo.get("human"):
            tally.memo["human"] = True
            tally.notes.append(
                "rows written for human review carry the tag human-review; ome scores each as"
                " a case that expects exactly the cards it lists (none for a rubric or a"
                " behaviour-only row), so read their results by hand"
            )
        expects = len(record.get("expectedCards") or [])
        if expects > DEFAULT_LIMIT and not tally.memo.get("limit"):
            tally.memo["limit"] = True
            tally.notes.append(
                f"{row.id}: expects {expects} cards, and ome returns at most {DEFAULT_LIMIT} by"
                " default; run ome eval recall with --limit high enough or such cases fail"
            )
        return record

    def document_bytes(self, records: list[dict[str, Any]], context: WriteContext) -> bytes:
        head, order = suite_of_set(context.header, context.options.derived_fields)
        values = {**head, "cases": records}
        document = {key: values[key] for key in order if key in values}
        extensions = context.header.get("extensions")
        extension = extensions.get(self.name) if isinstance(extensions, dict) else None
        expanded = isinstance(extension, dict) and extension.get("layout") == "expanded"
        return render_suite(document, expanded=expanded).encode("utf-8")

    def set_fields_written(self, header: dict[str, Any], context: WriteContext) -> set[str]:
        head, _ = suite_of_set(header, context.options.derived_fields)
        written = set()
        if "name" in head and head["name"] == header.get("name"):
            written.add("name")
        extensions = header.get("extensions")
        if isinstance(extensions, dict) and isinstance(extensions.get(self.name), dict):
            written.add(f"extensions.{self.name}")
        return written

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        result = super().write(header, rows, path, options)
        head, _ = suite_of_set(header, options.derived_fields)
        result.notes.append(experiences_note(head, path))
        return result

    # --- comparing and telling apart ---------------------------------------------------------

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        def head(path: Path) -> Any:
            document = jsonvalues.loads(read_text(path))
            return {k: v for k, v in document.items() if k != "cases"}, list(document)

        changes = []
        if not same(head(original), head(exported)):
            changes.append("the suite's own keys (name, experiencesFile, ...) changed")
        cases = compare_records(
            self.native_records(original), self.native_records(exported), "case"
        )
        return changes + cases

    def sniff(self, path: Path, head: bytes) -> Fit:
        why = (
            "an ome recall suite is a JSON object with cases (prompt, expectedCards, ...) and"
            " an experiencesFile"
        )
        outline = json_head(head)
        keys = set(outline.keys)
        if outline.kind != "object" or "cases" not in keys or keys & {"rows", "schemaVersion"}:
            return Fit.no(why)
        if keys & {"experiencesFile", "experiences"}:
            return Fit.yes()
        first = _first_case_keys(text_of(head))
        if "prompt" in first and first & set(CARD_KEYS):
            return Fit.yes()
        return Fit.no(why)


def _behaviour(cards: Cards) -> str:
    def listed(values: list[str]) -> str:
        return ", ".join(json.dumps(value, ensure_ascii=False) for value in values)

    if cards.abstain:
        return "returns no card: nothing in the library applies to this prompt"
    if not cards.required:
        text = "returns no card"
    else:
        noun = "card" if len(cards.required) == 1 else "cards"
        text = f"returns the {noun} {listed(cards.required)}"
    if cards.optional:
        return f"{text}, and may also return {listed(cards.optional)}, but no other card"
    return f"{text} and no other card"


def _first_case_keys(text: str) -> set[str]:
    """The keys of a suite's first case, as far as the head goes (empty when not found)."""
    decoder = json.JSONDecoder()
    index = text.find("{")
    if index < 0:
        return set()
    index += 1
    while index < len(text):
        while index < len(text) and text[index] in " \t\r\n,":
            index += 1
        if index >= len(text) or text[index] != '"':
            return set()
        try:
            key, index = decoder.raw_decode(text, index)
            while index < len(text) and text[index] in " \t\r\n:":
                index += 1
            if key == "cases":
                while index < len(text) and text[index] in " \t\r\n[":
                    index += 1
                return set(object_keys(text, index) or [])
            _, index = decoder.raw_decode(text, index)
        except ValueError:
            return set()
    return set()


def experiences_note(head: dict[str, Any], path: Path) -> str:
    """What the written suite needs beside it for ``ome eval recall --suite`` to run."""
    run = f"ome eval recall --suite {path.name}"
    if isinstance(head.get("experiences"), list):
        return f"{path.name} holds its experience cards inline (experiences); {run} uses them"
    target = head.get("experiencesFile")
    if not isinstance(target, str) or not target:
        return (
            f"{path.name} names no experiences file: {run} needs --experiences FILE (the"
            " cards to recall from) or --use-current-library"
        )
    where = (path.parent / target).resolve()
    found = "it exists" if where.is_file() else "it does not exist yet"
    return (
        f"{path.name} expects the experiences file {target} (the cards it recalls from,"
        f" resolved from the suite's folder: {where}); it must exist for {run} to run,"
        f" and {found}"
    )
