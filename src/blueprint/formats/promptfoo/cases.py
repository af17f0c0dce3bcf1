"""promptfoo tests and their vars: a row's input as vars and back, defaultTest, CSV tests."""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_text
from blueprint.formats.native import ABSENT
from blueprint.formats.promptfoo.prompts import (
    Prompts,
    prompt_input,
    read_prompts,
    vars_from_text,
)
from blueprint.formats.promptfoo.templating import literal, risky, unliteral
from blueprint.io import jsonvalues

# --- input <-> vars --------------------------------------------------------------------------

#: row metadata carried as promptfoo vars too, so a prompt can use {{retrieval_context}}
CONTEXT_VARS: Final = ("context", "retrieval_context")


def vars_for(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"input": literal(value)}
    nested_risk = isinstance(value, dict) and any(
        risky(key) or (not isinstance(item, str) and risky(item)) for key, item in value.items()
    )
    if isinstance(value, dict) and value and not nested_risk:
        return {
            key: literal(item) if isinstance(item, str) else item
            for key, item in value.items()
            if item is not None  # promptfoo rejects null vars
        }
    return {"input": literal(jsonvalues.dumps_text(value))}


def input_from_vars(variables: Any, *, authored: bool) -> Any:
    """The input a test's vars give: one ``input`` text var is the text itself. Vars written
    by Blueprint (``authored``) are read back through the literal escape."""
    if not isinstance(variables, dict):
        return variables if variables is not None else ABSENT
    read = unliteral if authored else (lambda item: item)
    if set(variables) == {"input"} and isinstance(variables["input"], str):
        return read(variables["input"])
    return {key: read(item) for key, item in variables.items()}


# --- the suite around the tests: defaultTest and the config ---------------------------------


@dataclass
class Suite:
    """What a config says for every test: its defaultTest, and the rest of it."""

    defaults: dict[str, Any] = field(default_factory=dict)
    #: the config's keys other than tests and description, as it wrote them
    config: dict[str, Any] | None = None
    description: Any = ABSENT
    #: the config's prompts, as far as they could be read (None: it names none)
    prompts: Prompts | None = None
    #: the tests a config's scenarios expand to, by position among the tests read: which
    #: scenario, config entry and test each one is (see config.scenario_tests)
    scenario_tests: dict[int, str] = field(default_factory=dict)


def merged_vars(test: dict[str, Any], suite: Suite) -> Any:
    own = test.get("vars")
    defaults = suite.defaults.get("vars")
    if isinstance(own, dict) or own is None:
        merged = dict(defaults) if isinstance(defaults, dict) else {}
        merged.update(own or {})
        return merged
    return own  # a file reference or a list of them: kept as it is


def native_input(test: dict[str, Any], suite: Suite) -> tuple[Any, str | None]:
    """The input a promptfoo test gives, with how it was derived from the config's prompts.

    With one prompt the input is that prompt as the test sends it (see
    :func:`~blueprint.formats.promptfoo.prompts.prompt_input`); with several, or one that
    cannot be read, or vars in a file, it is the test's vars, and the note says why."""
    variables = merged_vars(test, suite)
    value = input_from_vars(variables, authored=False)
    prompts = suite.prompts
    if prompts is None:
        return value, None
    if prompts.several:
        count = (
            f"{len(prompts.texts)} prompts"
            if prompts.texts is not None
            else f"{prompts.entries} prompt entries"
        )
        return value, (
            f"the config has {count}, so the test does not hold one input: the input is its"
            " vars, which promptfoo renders into each prompt"
        )
    if prompts.texts is None:
        return value, f"the input is the test's vars: {prompts.unread or 'the prompt is not read'}"
    if not isinstance(variables, dict):
        return value, (
            "the test's vars are in a file promptfoo loads at run time, so the config's prompt"
            " is not rendered: the input is the vars"
        )
    own = test.get("options")
    defaults = suite.defaults.get("options")
    rendering = prompt_input(
        prompts.texts[0],
        variables,
        own if isinstance(own, dict) else {},
        defaults if isinstance(defaults, dict) else {},
    )
    return rendering.value, rendering.note


def moved_prompts(suite: Suite | None, path: Path | None) -> str | None:
    """What to say when the config is written where its prompts read otherwise than where it
    was read (its prompt files are not beside it), or None."""
    if suite is None or suite.prompts is None or suite.prompts.texts is None or path is None:
        return None
    there = read_prompts(suite.config, path.parent)
    if there == suite.prompts:
        return None
    return (
        f"the config's prompts name files that are not beside {path.name} as they were where"
        " it was read: promptfoo would not find them there, nor would Blueprint reading the"
        " file back (its tests would have their vars as input); copy the prompt files beside it"
    )


def vars_of_input(
    value: Any, suite: Suite | None, original: Any = ABSENT
) -> tuple[Any, str | None]:
    """What a test's vars say, given a row's input as :func:`native_input` made it: the vars
    of a ``{"prompt", "vars"}`` input whose prompt is the config's; the vars of an edited
    rendered prompt read back into the vars the prompt takes (the test's ``original`` vars
    otherwise kept); else the input itself. The note says when vars were read back."""
    prompts = suite.prompts if suite is not None else None
    if prompts is None or prompts.several or prompts.texts is None:
        return value, None
    if isinstance(value, dict) and set(value) == {"prompt", "vars"}:
        given = value["vars"]
        return (given, None) if isinstance(given, dict) else (value, None)
    if not isinstance(value, str):
        return value, None
    before = original if isinstance(original, dict) else {}
    defaults = suite.defaults.get("vars") if suite is not None else None
    merged = {**(defaults if isinstance(defaults, dict) else {}), **before}
    found = vars_from_text(prompts.texts[0], value, merged)
    if found is None:
        return value, None
    changed = [key for key, item in found.items() if key not in merged or merged[key] != item]
    own = {key: item for key, item in found.items() if key in before or key in changed}
    note = (
        f"the edited input is read back into the vars {', '.join(changed)} of the config's prompt"
        if changed
        else None
    )
    return own, note


def suite_of_header(header: dict[str, Any]) -> Suite:
    extensions = header.get("extensions")
    ours = extensions.get("promptfoo") if isinstance(extensions, dict) else None
    config = ours.get("config") if isinstance(ours, dict) else None
    if not isinstance(config, dict):
        return Suite()
    defaults = config.get("defaultTest")
    if not isinstance(defaults, dict) and isinstance(ours, dict):
        defaults = ours.get("defaultTest")  # a defaultTest file, as it was read
    return Suite(
        defaults=defaults if isinstance(defaults, dict) else {},
        config=config,
        description=header.get("description", ABSENT),
        prompts=Prompts.of_kept(ours.get("prompts")) if isinstance(ours, dict) else None,
    )


# --- CSV tests files, as promptfoo 0.121 reads them -----------------------------------------

#: promptfoo's base assertion types, in the order its CSV reader tries them (promptfoo
#: 0.121's BaseAssertionTypesSchema); a "not-" prefix negates any of them
ASSERTION_TYPES: Final = (
    "agent-rubric",
    "answer-relevance",
    "bleu",
    "classifier",
    "contains",
    "contains-all",
    "contains-any",
    "contains-html",
    "contains-json",
    "contains-sql",
    "contains-xml",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "conversation-relevance",
    "cost",
    "equals",
    "factuality",
    "finish-reason",
    "g-eval",
    "gleu",
    "guardrails",
    "icontains",
    "icontains-all",
    "icontains-any",
    "is-html",
    "is-json",
    "is-refusal",
    "is-sql",
    "is-valid-function-call",
    "is-valid-openai-function-call",
    "is-valid-openai-tools-call",
    "is-xml",
    "javascript",
    "latency",
    "levenshtein",
    "llm-rubric",
    "pi",
    "meteor",
    "model-graded-closedqa",
    "model-graded-factuality",
    "moderation",
    "perplexity",
    "perplexity-score",
    "python",
    "regex",
    "rouge-n",
    "ruby",
    "similar",
    "similar:cosine",
    "similar:dot",
    "similar:euclidean",
    "starts-with",
    "skill-used",
    "trajectory:goal-success",
    "trajectory:tool-args-match",
    "trajectory:step-count",
    "trajectory:tool-sequence",
    "trajectory:tool-used",
    "trace-error-spans",
    "trace-span-count",
    "trace-span-duration",
    "search-rubric",
    "webhook",
    "word-count",
    "select-best",
    "human",
    "max-score",
    "assert-set",
)
#: types whose CSV form takes a threshold, with the one promptfoo assumes when none is given
_CSV_THRESHOLDS: Final = frozenset(
    {
        "answer-relevance",
        "classifier",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "cost",
        "latency",
        "levenshtein",
        "perplexity-score",
        "perplexity",
        "rouge-n",
        "similar",
        "starts-with",
    }
)
_CSV_ASSERTION: Final = re.compile(
    r"^(not-)?("
    + "|".join(re.escape(kind) for kind in ASSERTION_TYPES)
    + r")(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$"
)
_JAVASCRIPT_FILE: Final = re.compile(r"\.(?:js|cjs|mjs|ts|cts|mts)$", re.IGNORECASE)
_NUMBER: Final = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


def _finite_number(text: str | None) -> float | int | None:
    """promptfoo's reading of a numeric CSV cell: a whole numeric literal, else nothing."""
    trimmed = (text or "").strip()
    if not _NUMBER.match(trimmed):
        return None
    number = float(trimmed)
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return int(number) if number.is_integer() and re.fullmatch(r"[+-]?\d+", trimmed) else number


def _comma_separated(value: str) -> list[str]:
    """promptfoo's split of a contains-any value: commas, with "quoted, fields" kept whole."""
    found: list[str] = []
    index = 0
    while index < len(value):
        while index < len(value) and (value[index].isspace() or value[index] == ","):
            index += 1
        if index >= len(value):
            break
        if value[index] == '"':
            index += 1
            field = ""
            while index < len(value):
                if value[index] == "\\" and index + 1 < len(value) and value[index + 1] in '"\\':
                    field += value[index + 1]
                    index += 2
                elif value[index] == '"' and index + 1 < len(value) and value[index + 1] == '"':
                    field += '"'
                    index += 2
                elif value[index] == '"':
                    index += 1
                    break
                else:
                    field += value[index]
                    index += 1
            found.append(field)
            while index < len(value) and value[index].isspace():
                index += 1
        else:
            end = value.find(",", index)
            end = len(value) if end < 0 else end
            found.append(value[index:end].strip())
            index = end
    return found


def assertion_from_cell(cell: str) -> dict[str, Any]:
    """promptfoo's reading of an __expected cell (its CSV assertion grammar)."""
    text = cell.strip()
    if text.startswith(("javascript:", "fn:", "eval:")) or (
        text.startswith("file://") and _JAVASCRIPT_FILE.search(text[7:])
    ):
        cut = next((len(p) for p in ("javascript:", "fn:", "eval:") if text.startswith(p)), 0)
        return {"type": "javascript", "value": text[cut:].strip()}
    if text.startswith(("grade:", "llm-rubric:")):
        return {"type": "llm-rubric", "value": text[6 if text.startswith("grade:") else 11 :]}
    if text.startswith("python:") or (
        text.startswith("file://") and (text.endswith(".py") or ".py:" in text)
    ):
        return {"type": "python", "value": text[7:].strip()}
    match = _CSV_ASSERTION.match(text)
    if not match:
        return {"type": "equals", "value": text}
    negate, kind, threshold_text, value = match.groups()
    assertion: dict[str, Any] = {"type": f"not-{kind}" if negate else kind}
    if kind in ("contains-all", "contains-any", "icontains-all", "icontains-any"):
        if value is not None:
            assertion["value"] = _comma_separated(value) if value else value
    elif kind in ("contains-json", "is-json"):
        if value is not None:
            assertion["value"] = value
    else:
        if value is not None:
            assertion["value"] = value.strip()
        if kind in _CSV_THRESHOLDS:
            threshold = _finite_number(threshold_text)
            assertion["threshold"] = (
                threshold if threshold is not None else 0.8 if kind == "similar" else 0.75
            )
    return assertion


def _refuse_repeated_columns(path: Path, names: Sequence[str]) -> None:
    """A CSV header naming a column twice: the reader would keep only the last one's cells."""
    first: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        key = name.strip()  # cells are read by the stripped name
        if key in first:
            raise ParseError(
                path,
                f"the header names the column {key!r} twice (columns {first[key]} and"
                f" {position}): only one of them would be read; rename or merge them",
                line=1,
            )
        first[key] = position


def _csv_tests(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Tests from a promptfoo CSV file, read as promptfoo 0.121 reads them."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.DictReader(read_text(path).splitlines(keepends=True))
    _refuse_repeated_columns(path, reader.fieldnames or [])
    for record in reader:
        variables: dict[str, Any] = {}
        assertions: list[dict[str, Any]] = []
        options: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        configs: dict[int, dict[str, Any]] = {}
        extra: dict[str, Any] = {}
        metric: str | None = None
        for raw_key, cell in record.items():
            if raw_key is None:
                raise ParseError(path, "a row has more cells than the header", line=reader.line_num)
            key, value = raw_key.strip(), cell if cell is not None else ""
            if key.startswith("__expected"):
                if value.strip():
                    assertions.append(assertion_from_cell(value))
            elif key in ("__prefix", "__suffix"):
                options[key[2:]] = value
            elif key == "__description":
                if value:
                    extra["description"] = value
            elif key == "__providerOutput":
                if value:
                    extra["providerOutput"] = value
            elif key == "__metric":
                metric = value
            elif key == "__threshold":
                number = _finite_number(value)
                if number is not None:
                    extra["threshold"] = number
            elif key.startswith("__metadata:"):
                name = key[len("__metadata:") :]
                if value.strip() and name.endswith("[]"):
                    metadata[name[:-2]] = [
                        part.strip().replace("\\,", ",") for part in re.split(r"(?<!\\),", value)
                    ]
                elif value.strip():
                    metadata[name] = value
            elif key == "__metadata":
                continue  # promptfoo warns and ignores a __metadata column without a key
            elif key.startswith("__config:"):
                configs_of(path, reader.line_num, key, value, configs)
            else:
                variables[key] = value
        for position, assertion in enumerate(assertions):
            if metric is not None:
                assertion["metric"] = metric
            for name, number in configs.get(position, {}).items():
                assertion[name] = number
                metadata[name] = number
        test: dict[str, Any] = {"vars": variables, "assert": assertions, "options": options}
        test.update(extra)
        if metadata:
            test["metadata"] = metadata
        yield reader.line_num, test


def configs_of(
    path: Path, line: int, key: str, value: str, configs: dict[int, dict[str, Any]]
) -> None:
    """A __config:__expected<N>:threshold column, as promptfoo reads it (or refuses it)."""
    parts = key[len("__config:") :].split(":")
    if len(parts) != 2:
        return  # promptfoo warns and ignores a __config column of another shape
    target, name = parts
    number_match = re.fullmatch(r"__expected(\d+)", target)
    if target == "__expected":
        index = 0
    elif number_match and int(number_match.group(1)) >= 1:
        index = int(number_match.group(1)) - 1
    else:
        raise ParseError(path, f"{key}: must name __expected or __expected<N>", line=line)
    if name != "threshold":
        raise ParseError(path, f"{key}: the only config key is threshold", line=line)
    number = _finite_number(value)
    if number is None:
        raise ParseError(path, f"{key}: {value!r} is not a number", line=line)
    configs.setdefault(index, {})[name] = number


def output_transform(options: Any, suite: Suite) -> Any:
    """The transform promptfoo applies to a test's output before its checks, or None: its
    options merged over its defaultTest's, key by key, then their transform or postprocess."""
    defaults = suite.defaults.get("options")
    merged = {
        **(defaults if isinstance(defaults, dict) else {}),
        **(options if isinstance(options, dict) else {}),
    }
    return merged.get("transform") or merged.get("postprocess") or None


def ignored_assertions(suite: Suite) -> list[str]:
    """What to say of a config's top-level assert, which promptfoo does not read."""
    checks = suite.config.get("assert") if isinstance(suite.config, dict) else None
    if checks is None:
        return []
    count = len(checks) if isinstance(checks, list) else 1
    return [
        f"the config's top-level assert ({count} check{'s' if count != 1 else ''}) is no key"
        " promptfoo reads (a suite's checks go under defaultTest.assert): it grades no test"
    ]


def merge_defaults(test: dict[str, Any], defaults: dict[str, Any]) -> None:
    """A test with a defaultTest merged in, as promptfoo applies it: the default assertions
    first, vars, options and metadata key by key (the test's own win), the rest only where
    the test has none."""
    for key, default in defaults.items():
        own = test.get(key)
        if key == "assert" and isinstance(default, list):
            test[key] = [*default, *(own if isinstance(own, list) else [])]
        elif key in ("vars", "options", "metadata") and isinstance(default, dict):
            if own is None or isinstance(own, dict):
                test[key] = {**default, **(own or {})}
        elif key not in test:
            test[key] = default
