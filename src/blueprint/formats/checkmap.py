"""How each tool a set is exported to carries the check vocabulary, as data: one line per
tool, with the check types it carries another way. ``docs/reference/checks.md`` is generated
from it (``python -m blueprint.cli.docgen``), and a test holds it to what the exports do: it
names every check type and every tool, and each tool's kind (native, Blueprint's scorer, not
carried) is what an export of a row with a check reports.

Update a tool's line when its export learns to write checks natively."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from blueprint.core.model import CHECK_MODELS, CHECK_TYPES

#: how a tool carries checks: its own assertions run every one of them; Blueprint's scorer in
#: the runner runs them (``convert --graders blueprint``), the stock graders do not; or the
#: tool's own assertions run those it has, and the others are left out or reported
Kind = Literal["native", "scorer", "own where it has one"]

#: a cell that starts so: the check is not carried (its row left out, or the check reported)
LEFT_OUT: Final = "left out"
#: a cell that starts so: carried in some forms of the check, left out in others
PARTLY: Final = "partly"

#: the cell of a check Blueprint's scorer applies in the runner
SCORER: Final = "scorer"


@dataclass(frozen=True)
class Carriage:
    """How one tool carries checks: ``cell`` for every check type but those in ``types``."""

    title: str
    kind: Kind
    cell: str
    #: the gate, an acceptable set defined by a check, and the export without Blueprint's
    #: scorer, in words
    note: str
    types: Mapping[str, str] = field(default_factory=dict)

    def carries(self, check_type: str) -> str:
        return self.types.get(check_type, self.cell)


_STOCK: Final = (
    "with `--graders blueprint`, Blueprint's scorer in the runner applies the gate, an"
    " acceptable set defined by a check, normalize, tolerance and passThreshold as `blueprint"
    " grade` does; the default export's stock graders do not, and it reports each such rule"
    " weakened"
)
_PROMPTFOO: Final = (
    "the default export writes the gate and an acceptable set defined by a check as"
    " assertions promptfoo runs: the checks in one javascript assertion with `blueprint"
    " grade`'s rules, a `json-schema` check on its own as promptfoo's `is-json` with the"
    " schema; a `json-schema` check inside `not`, `all`, `any` or `weighted` is not run"
    " (reported weakened)"
)
_OPENAI_EVALS: Final = (
    f"{_STOCK}. A samples file names no eval class (the registry YAML does), so an"
    " acceptable set defined by `starts-with`, or by `contains` (plain, or lowercased for"
    " Includes' ignore_case), or by `any` of several of one of them, goes as its texts in"
    " `ideal`, which Match (`starts-with`) or Includes (`contains`) decides exactly, still"
    " reported weakened; samples a registry YAML runs with Match or Includes import as those"
    " checks"
)
_OMK: Final = (
    "each check omk has is written as its own assertion (omk lowercases contains and the"
    " other text checks, so a case-sensitive one goes as an escaped regex, and trims"
    " equals); a row whose acceptable set is defined by a check omk has none of (number,"
    " items, weighted, other normalisations) is left out, and such a check in a gate is"
    " reported weakened. omk counts lengths and edit distances in UTF-16 units"
)
_APOLLIA: Final = (
    "a check that is a pattern on the result is written as apollia-os's regex assertion on"
    " `result`: regex with no flag or `s`, and equals, contains, starts-with, ends-with,"
    " contains-any and contains-all without normalisations, as escaped patterns; a row whose"
    " acceptable set is defined by any other check is left out (a task without assertions"
    " passes every run), and such a check in a gate is reported weakened"
)
_OME: Final = (
    "ome checks which cards come back: an `items` check of card ids is the case's"
    " expectedCards and allowedExtraCards; a row whose acceptable set is defined by any other"
    " check is left out, and a gate is reported weakened"
)
_OMK_TYPES: Final = {
    "equals": f"{PARTLY}: `equals` (omk trims; other normalisations {LEFT_OUT})",
    "number": LEFT_OUT,
    "contains": f"{PARTLY}: `contains` under `lowercase`, else a regex; `trim` {LEFT_OUT}",
    "starts-with": f"{PARTLY}: `starts_with` under `lowercase`, else a regex",
    "ends-with": f"{PARTLY}: `ends_with` under `lowercase`, else a regex",
    "contains-any": f"{PARTLY}: `contains_any` under `lowercase`, else regexes",
    "contains-all": f"{PARTLY}: `contains_all` under `lowercase`, else regexes",
    "regex": "`regex`",
    "is-json": "`json_valid`",
    "json-schema": f"{PARTLY}: `json_schema` where draft-07 reads the schema the same",
    "length": "`min_length`, `max_length`, `word_count_min`, `word_count_max`",
    "levenshtein": "`levenshtein_max`",
    "items": LEFT_OUT,
    "not": "`not: true`",
    "all": "`assert-set` (all)",
    "any": "`assert-set` (any)",
    "weighted": LEFT_OUT,
}
_PATTERN: Final = f"{PARTLY}: regex on `result` without normalisations"
_APOLLIA_TYPES: Final = {
    "equals": _PATTERN,
    "contains": _PATTERN,
    "starts-with": _PATTERN,
    "ends-with": _PATTERN,
    "contains-any": _PATTERN,
    "contains-all": _PATTERN,
    "regex": f"{PARTLY}: regex on `result`, no flag or `s`",
    "all": f"{PARTLY}: its pattern checks, each a regex on `result`",
}
_SCHEMA: Final = {"json-schema": "`is-json` with the schema"}
_IDEAL: Final = {"starts-with": "scorer; Match", "contains": "scorer; Includes"}
#: one line per tool, in the order the table lists them
TOOLS: Final[dict[str, Carriage]] = {
    "promptfoo": Carriage("promptfoo", "native", "javascript", _PROMPTFOO, _SCHEMA),
    "deepeval": Carriage("DeepEval", "scorer", SCORER, _STOCK),
    "langsmith": Carriage("LangSmith", "scorer", SCORER, _STOCK),
    "braintrust": Carriage("Braintrust", "scorer", SCORER, _STOCK),
    "inspect": Carriage("Inspect", "scorer", SCORER, _STOCK),
    "openai-evals": Carriage("OpenAI Evals", "scorer", SCORER, _OPENAI_EVALS, _IDEAL),
    "omk": Carriage("omk", "own where it has one", LEFT_OUT, _OMK, _OMK_TYPES),
    "apollia": Carriage("apollia", "own where it has one", LEFT_OUT, _APOLLIA, _APOLLIA_TYPES),
    "ome": Carriage("ome", "own where it has one", LEFT_OUT, _OME, {"items": "expectedCards"}),
}

#: one example of each check type
EXAMPLES: Final[dict[str, dict[str, Any]]] = {
    "equals": {"type": "equals", "value": "paris", "normalize": ["trim", "lowercase"]},
    "number": {"type": "number", "value": 3.14, "tolerance": 0.01},
    "contains": {"type": "contains", "value": "grub", "normalize": ["lowercase"]},
    "starts-with": {"type": "starts-with", "value": "Yes"},
    "ends-with": {"type": "ends-with", "value": ".", "normalize": ["trim"]},
    "contains-any": {"type": "contains-any", "values": ["refund", "credit"]},
    "contains-all": {"type": "contains-all", "values": ["order", "refund"]},
    "regex": {"type": "regex", "pattern": "^order [A-Z]-\\d+$", "flags": "im"},
    "is-json": {"type": "is-json"},
    "json-schema": {"type": "json-schema", "schema": {"type": "object", "required": ["id"]}},
    "length": {"type": "length", "unit": "words", "max": 50},
    "levenshtein": {"type": "levenshtein", "value": "Paris", "maxDistance": 1},
    "items": {"type": "items", "required": ["a"], "allowed": ["b"]},
    "not": {"type": "not", "check": {"type": "contains", "value": "As an AI"}},
    "all": {"type": "all", "checks": [{"type": "is-json"}, {"type": "contains", "value": "id"}]},
    "any": {
        "type": "any",
        "checks": [
            {"type": "starts-with", "value": "Yes"},
            {"type": "starts-with", "value": "Sure"},
        ],
    },
    "weighted": {
        "type": "weighted",
        "checks": [{"type": "is-json"}, {"type": "contains", "value": "id"}],
        "weights": [1, 3],
        "threshold": 0.75,
    },
}


def description(check_type: str) -> str:
    """What a check of this type decides: its model's docstring, on one line."""
    for model in CHECK_MODELS:
        if check_type in get_args(model.model_fields["type"].annotation):
            return " ".join((model.__doc__ or "").split()).replace("``", "`")
    raise KeyError(check_type)


def table() -> list[dict[str, Any]]:
    """The vocabulary, a line per check type: what it decides, an example, and how each
    tool carries it."""
    return [
        {
            "type": check_type,
            "description": description(check_type),
            "example": json.dumps(EXAMPLES[check_type], ensure_ascii=False),
            "tools": {name: tool.carries(check_type) for name, tool in TOOLS.items()},
        }
        for check_type in CHECK_TYPES
    ]
