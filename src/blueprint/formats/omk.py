"""omk eval-sample sets: one document, ``schemaVersion: omk.eval-sample-set/v2``, JSON or YAML.

An omk sample set is strict: the root, every sample, assertion, mock and nested object
accept only the keys omk's loader knows, so there is no free-form place for Blueprint's case
profile. The writer therefore writes only omk's own keys, and what a sample cannot say is
declared lost field by field (see :meth:`VendorCodec.declare_unkept`).

How rows map to samples:

- ``id`` is ``sample_id``; ``input`` is ``prompt`` (text as it is; any other value as its
  JSON text);
- a reference answer is an ``equals`` assertion; an acceptable set an ``assert-set`` of mode
  ``any`` holding one ``equals`` per member; expected tool calls are ``tools_called``, one
  ``tool_input_contains`` per argument and ``tools_not_called``; a rubric row's criteria are
  rubric dimensions of equal weight, summing to exactly 1;
- provenance goes to omk's three values where one fits; the case family to ``capability``.

Reading infers the oracle type from the rubric and assertions, sets provenance ``imported``
and keeps every key of the sample it does not read (``difficulty``, ``tripwire``, ``mocks``,
``covers``, ``context``, assertion weights, ...) in ``case.extensions.omk``, so an omk file
goes back as it came. The root's ``requires`` is kept in the set's ``extensions.omk``.

:func:`check_document` implements omk's own rules for a sample set (strict keys at every
level, rubric weights, ``mock_hit`` references, assert-set nesting, required values per
assertion type); reading an omk file reports what it finds as ``vendor-format`` issues.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Final

import yaml

from blueprint.core.errors import EmptyExportRefused, ParseError
from blueprint.core.issues import Issue, make_issue
from blueprint.core.model import KEBAB_CASE
from blueprint.formats._io import read_text
from blueprint.formats.base import SetSource
from blueprint.formats.canonical_json import row_start_lines
from blueprint.formats.native import ABSENT, NativeShape, same
from blueprint.formats.promptfoo import Yaml12Loader, dump_yaml, read_yaml
from blueprint.formats.sniffing import Fit, json_head, text_of, top_level_value
from blueprint.formats.vendor import (
    ExportRow,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    imported_row,
    read_json_document,
)
from blueprint.io import jsonvalues, yamlload

SCHEMA_VERSION: Final = "omk.eval-sample-set/v2"
#: the file names omk discovers by itself; both in one folder is an error
CANONICAL_NAMES: Final = ("eval-samples.json", "eval-samples.yaml")

#: Blueprint provenances and the omk value that says the same, where one does
PROVENANCE_TO_OMK: Final = {
    "expert-authored": "human",
    "observed-incident": "production-trace",
    "production-sample": "production-trace",
    "synthetic-perturbation": "llm-generated",
}

#: the rows a writer leaves out, by kind (the reasons are in exporters/omk.yaml)
EMPTY_PROMPT: Final = "empty-prompt"
FINAL_STATE: Final = "final-state"
NO_CHECK: Final = "no-check"

#: the largest integer omk's loader accepts as a number (JavaScript's safe integers)
MAX_SAFE: Final = 2**53 - 1
_KEBAB: Final = re.compile(KEBAB_CASE)


class EmptySampleSet(EmptyExportRefused):
    """omk refuses a sample set with no samples, so nothing is written."""


# --- omk's rules for a sample set --------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One way a document breaks omk's rules: which rule, where (a JSON path), and what."""

    rule: str
    path: str
    message: str
    line: int | None = None


ROOT_KEYS: Final = ("schemaVersion", "requires", "samples")
REQUIRES_KEYS: Final = ("tools", "files", "env", "preflight")
SAMPLE_KEYS: Final = (
    "sample_id",
    "prompt",
    "context",
    "cwd",
    "rubric",
    "assertions",
    "allowedTools",
    "capability",
    "difficulty",
    "construct",
    "provenance",
    "covers",
    "tripwire",
    "mocks",
    "mocksStrict",
    "environment",
)
ASSERTION_KEYS: Final = (
    "type",
    "value",
    "values",
    "pattern",
    "flags",
    "schema",
    "weight",
    "fn",
    "reference",
    "threshold",
    "not",
    "mode",
    "children",
    "n",
)
COVER_KINDS: Final = (
    "skill",
    "skill_file",
    "frontmatter",
    "reference",
    "script",
    "hard_rule",
    "workflow",
    "workflow_node",
)
MATCH_KEYS: Final = (
    "command_glob",
    "file_path",
    "file_path_endswith",
    "input",
    "input_contains",
    "url",
    "url_glob",
)
#: assertion types omk runs asynchronously (a judge or custom code): never inside an assert-set
ASYNC_TYPES: Final = frozenset(
    {"semantic_similarity", "custom", "faithfulness", "answer_relevancy", "context_recall"}
)
#: what each assertion type needs, beyond its type
_TEXT_VALUE: Final = frozenset(
    {"contains", "not_contains", "starts_with", "ends_with", "equals", "not_equals"}
)
_NUMBER_VALUE: Final = frozenset(
    {
        "min_length",
        "max_length",
        "word_count_min",
        "word_count_max",
        "cost_max",
        "latency_max",
        "turns_max",
        "turns_min",
        "tools_count_max",
        "tools_count_min",
        "levenshtein_max",
    }
)
_VALUES: Final = frozenset({"contains_all", "contains_any", "tools_called", "tools_not_called"})
_TOOL_NEEDLE: Final = frozenset(
    {"tool_output_contains", "tool_input_contains", "tool_input_not_contains"}
)
_REFERENCE_TEXT: Final = frozenset({"rouge_n_min", "bleu_min"})
ASSERTION_TYPES: Final = frozenset(
    _TEXT_VALUE
    | _NUMBER_VALUE
    | _VALUES
    | _TOOL_NEEDLE
    | _REFERENCE_TEXT
    | ASYNC_TYPES
    | {"regex", "json_valid", "json_schema", "mock_hit", "assert-set"}
)
WEIGHT_TOLERANCE: Final = 1e-9


#: what JavaScript's String.prototype.trim removes (omk checks blank names and criteria so)
_JS_SPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def blank(text: str) -> bool:
    """Whether a text is empty once trimmed as JavaScript trims it."""
    return not text.strip(_JS_SPACE)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _safe_number(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and abs(value) <= MAX_SAFE


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if re.fullmatch(r"[A-Za-z_$][\w$]*", key) else f"{path}[{key!r}]"


class _Checker:
    """Walks a document and collects every problem (it never stops at the first)."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, rule: str, path: str, message: str) -> None:
        self.problems.append(Problem(rule, path, message))

    def strict(self, value: dict[str, Any], allowed: tuple[str, ...], path: str, what: str) -> None:
        for key in value:
            if key not in allowed:
                self.add(
                    "unknown-field",
                    _key_path(path, str(key)),
                    f"{what} has no field {key!r} (omk's loader refuses unknown fields;"
                    f" known: {', '.join(allowed)})",
                )

    def object(self, value: Any, path: str, what: str) -> bool:
        if isinstance(value, dict):
            return True
        self.add("type", path, f"{what} must be an object, not {jsonvalues.json_type(value)}")
        return False

    def text(self, value: Any, path: str, *, nonempty: bool = False, blank_ok: bool = True) -> None:
        if not isinstance(value, str):
            self.add("type", path, f"must be a string, not {jsonvalues.json_type(value)}")
        elif nonempty and not value:
            self.add("empty", path, "must not be empty")
        elif not blank_ok and blank(value):
            self.add("blank", path, "must not be blank")

    def texts(self, value: Any, path: str, *, nonempty_items: bool = True) -> None:
        if not isinstance(value, list):
            self.add(
                "type", path, f"must be an array of strings, not {jsonvalues.json_type(value)}"
            )
            return
        for index, item in enumerate(value):
            self.text(item, f"{path}[{index}]", nonempty=nonempty_items)

    def boolean(self, value: Any, path: str) -> None:
        if not isinstance(value, bool):
            self.add("type", path, f"must be true or false, not {jsonvalues.json_type(value)}")

    def enum(self, value: Any, allowed: tuple[str, ...], path: str) -> None:
        if value not in allowed or not isinstance(value, str):
            self.add("enum", path, f"must be one of {', '.join(allowed)}, not {value!r}")

    # --- the document ----------------------------------------------------------------------

    def document(self, doc: Any) -> None:
        if isinstance(doc, list):
            self.add(
                "legacy-array",
                "$",
                "a top-level array of samples is the legacy shape omk no longer reads; wrap it"
                f" as {{schemaVersion: {SCHEMA_VERSION}, samples: [...]}}",
            )
            return
        if not self.object(doc, "$", "a sample set"):
            return
        self.strict(doc, ROOT_KEYS, "$", "the sample set")
        if "schemaVersion" not in doc:
            self.add("required", "$.schemaVersion", f"schemaVersion is required ({SCHEMA_VERSION})")
        elif doc["schemaVersion"] != SCHEMA_VERSION:
            self.add(
                "schema-version",
                "$.schemaVersion",
                f"schemaVersion must be {SCHEMA_VERSION}, not {doc['schemaVersion']!r}",
            )
        if "requires" in doc and self.object(doc["requires"], "$.requires", "requires"):
            self.strict(doc["requires"], REQUIRES_KEYS, "$.requires", "requires")
            for key in REQUIRES_KEYS:
                if key in doc["requires"]:
                    self.texts(doc["requires"][key], f"$.requires.{key}")
        samples = doc.get("samples", ABSENT)
        if samples is ABSENT:
            self.add("required", "$.samples", "samples is required")
            return
        if not isinstance(samples, list):
            self.add("type", "$.samples", "samples must be an array of samples")
            return
        if not samples:
            self.add("empty", "$.samples", "a sample set holds at least one sample")
        seen: dict[str, int] = {}
        for index, sample in enumerate(samples):
            path = f"$.samples[{index}]"
            self.sample(sample, path)
            sample_id = sample.get("sample_id") if isinstance(sample, dict) else None
            if isinstance(sample_id, str) and sample_id:
                if sample_id in seen:
                    self.add(
                        "duplicate-sample-id",
                        f"{path}.sample_id",
                        f"sample_id {sample_id!r} is already used by samples[{seen[sample_id]}]",
                    )
                else:
                    seen[sample_id] = index

    def sample(self, sample: Any, path: str) -> None:
        if not self.object(sample, path, "a sample"):
            return
        self.strict(sample, SAMPLE_KEYS, path, "a sample")
        for key in ("sample_id", "prompt"):
            if key not in sample:
                self.add("required", f"{path}.{key}", f"{key} is required")
            else:
                self.text(sample[key], f"{path}.{key}", nonempty=True)
        for key in ("cwd", "construct"):
            if key in sample:
                self.text(sample[key], f"{path}.{key}", nonempty=True)
        if "context" in sample:
            self.text(sample["context"], f"{path}.context")
        for key in ("allowedTools", "capability"):
            if key in sample:
                self.texts(sample[key], f"{path}.{key}")
        for key in ("tripwire", "mocksStrict"):
            if key in sample:
                self.boolean(sample[key], f"{path}.{key}")
        if "difficulty" in sample:
            self.enum(sample["difficulty"], ("easy", "medium", "hard"), f"{path}.difficulty")
        if "provenance" in sample:
            self.enum(
                sample["provenance"],
                ("human", "llm-generated", "production-trace"),
                f"{path}.provenance",
            )
        if "covers" in sample:
            self.covers(sample["covers"], f"{path}.covers")
        if "environment" in sample:
            self.environment(sample["environment"], f"{path}.environment")
        if "rubric" in sample:
            self.rubric(sample["rubric"], f"{path}.rubric")
        mocks = sample.get("mocks")
        if "mocks" in sample:
            self.mocks(mocks, f"{path}.mocks")
        if "assertions" in sample:
            assertions = sample["assertions"]
            if not isinstance(assertions, list):
                self.add("type", f"{path}.assertions", "assertions must be an array")
            else:
                declared = mocks if isinstance(mocks, list) else []
                for index, assertion in enumerate(assertions):
                    self.assertion(assertion, f"{path}.assertions[{index}]", declared, nested=False)

    def covers(self, covers: Any, path: str) -> None:
        if not isinstance(covers, list):
            self.add("type", path, "covers must be an array")
            return
        for index, cover in enumerate(covers):
            at = f"{path}[{index}]"
            if not self.object(cover, at, "a covers entry"):
                continue
            self.strict(cover, ("targetKind", "ref"), at, "a covers entry")
            if "targetKind" not in cover:
                self.add("required", f"{at}.targetKind", "targetKind is required")
            else:
                self.enum(cover["targetKind"], COVER_KINDS, f"{at}.targetKind")
            if "ref" not in cover:
                self.add("required", f"{at}.ref", "ref is required")
            else:
                self.text(cover["ref"], f"{at}.ref", nonempty=True)

    def environment(self, environment: Any, path: str) -> None:
        if not self.object(environment, path, "environment"):
            return
        self.strict(environment, ("cli_available", "files_available", "notes"), path, "environment")
        for key in ("cli_available", "files_available"):
            if key in environment:
                self.texts(environment[key], f"{path}.{key}")
        if "notes" in environment:
            self.text(environment["notes"], f"{path}.notes")

    def rubric(self, rubric: Any, path: str) -> None:
        if not self.object(rubric, path, "a rubric"):
            return
        if not rubric:
            self.add("empty", path, "a rubric has at least one dimension")
            return
        total = 0.0
        summable = True
        for name, dimension in rubric.items():
            at = _key_path(path, str(name))
            if blank(str(name)):
                self.add("blank", at, "a rubric dimension's name must not be blank")
            if not self.object(dimension, at, "a rubric dimension"):
                summable = False
                continue
            self.strict(dimension, ("criterion", "weight"), at, "a rubric dimension")
            if "criterion" not in dimension:
                self.add("required", f"{at}.criterion", "criterion is required")
            else:
                self.text(dimension["criterion"], f"{at}.criterion", nonempty=True, blank_ok=False)
            weight = dimension.get("weight", ABSENT)
            if weight is ABSENT:
                self.add("required", f"{at}.weight", "weight is required")
                summable = False
            elif not _is_number(weight) or not math.isfinite(weight):
                self.add("type", f"{at}.weight", f"weight must be a number, not {weight!r}")
                summable = False
            elif not 0 < weight <= 1:
                self.add("weight-range", f"{at}.weight", f"weight must be in (0, 1], not {weight}")
                total += weight
            else:
                total += weight
        if summable and abs(total - 1) > WEIGHT_TOLERANCE:
            self.add(
                "weight-sum",
                path,
                f"the rubric's weights sum to {total!r}; they must sum to 1 (within 1e-9)",
            )

    def mocks(self, mocks: Any, path: str) -> None:
        if not isinstance(mocks, list):
            self.add("type", path, "mocks must be an array")
            return
        if not mocks:
            self.add("empty", path, "mocks, when given, holds at least one mock")
        for index, mock in enumerate(mocks):
            at = f"{path}[{index}]"
            if not self.object(mock, at, "a mock"):
                continue
            returns = [key for key in ("return", "return_file", "return_seq") if key in mock]
            self.strict(
                mock, ("tool", "match", "return", "return_file", "return_seq"), at, "a mock"
            )
            if "tool" not in mock:
                self.add("required", f"{at}.tool", "tool is required")
            else:
                self.text(mock["tool"], f"{at}.tool", nonempty=True)
            if len(returns) != 1:
                self.add(
                    "mock-return",
                    at,
                    "a mock has exactly one of return, return_file and return_seq",
                )
            if "return" in mock and not isinstance(mock["return"], str | dict):
                self.add("type", f"{at}.return", "return must be a string or an object")
            if "return_file" in mock:
                self.text(mock["return_file"], f"{at}.return_file", nonempty=True)
            if "return_seq" in mock:
                seq = mock["return_seq"]
                if not isinstance(seq, list) or not seq:
                    self.add("type", f"{at}.return_seq", "return_seq is a non-empty array")
                else:
                    for number, item in enumerate(seq):
                        if not isinstance(item, str | dict):
                            self.add(
                                "type",
                                f"{at}.return_seq[{number}]",
                                "each return is a string or an object",
                            )
            if "match" in mock:
                self.match(mock["match"], f"{at}.match")

    def match(self, match: Any, path: str) -> None:
        if not self.object(match, path, "a mock's match"):
            return
        self.strict(match, MATCH_KEYS, path, "a mock's match")
        if "url" in match and "url_glob" in match:
            self.add("mock-match", path, "a match gives url or url_glob, not both")
        for key in MATCH_KEYS:
            if key in match and key != "input":
                self.text(match[key], f"{path}.{key}", nonempty=True)
        if "input" in match:
            self.object(match["input"], f"{path}.input", "match.input")

    def assertion(self, assertion: Any, path: str, mocks: list[Any], *, nested: bool) -> None:
        if not self.object(assertion, path, "an assertion"):
            return
        self.strict(assertion, ASSERTION_KEYS, path, "an assertion")
        kind = assertion.get("type", ABSENT)
        if kind is ABSENT:
            self.add("required", f"{path}.type", "type is required")
        elif kind not in ASSERTION_TYPES:
            self.add("enum", f"{path}.type", f"{kind!r} is not an omk assertion type")
        self._assertion_fields(assertion, path)
        if nested and kind in ASYNC_TYPES:
            self.add(
                "async-nested",
                f"{path}.type",
                f"{kind} is judge-backed or custom code, which omk runs asynchronously; it must"
                " stay a top-level assertion, never inside an assert-set",
            )
        if kind not in ASSERTION_TYPES:
            return
        value = assertion.get("value", ABSENT)
        if kind in _TEXT_VALUE and value is ABSENT:
            self.add("required-value", f"{path}.value", f"{kind} needs a value")
        elif kind in _NUMBER_VALUE and not _is_number(value):
            self.add("required-value", f"{path}.value", f"{kind} needs a numeric value")
        elif kind in _VALUES:
            values = assertion.get("values")
            if not isinstance(values, list) or not values:
                self.add(
                    "required-value", f"{path}.values", f"{kind} needs a non-empty values list"
                )
        elif kind in _TOOL_NEEDLE:
            tool, sep, needle = value.partition(":") if isinstance(value, str) else ("", "", "")
            if not (tool and sep and needle):
                self.add(
                    "required-value",
                    f"{path}.value",
                    f'{kind} needs a value "Tool:text" (a tool name and the text, both non-empty)',
                )
        elif kind == "regex" and not isinstance(assertion.get("pattern"), str):
            self.add("required-value", f"{path}.pattern", "regex needs a pattern")
        elif kind == "json_schema" and not isinstance(assertion.get("schema"), dict):
            self.add("required-value", f"{path}.schema", "json_schema needs a schema object")
        elif kind == "semantic_similarity" and not isinstance(assertion.get("reference"), str):
            self.add("required-value", f"{path}.reference", "semantic_similarity needs a reference")
        elif kind == "custom" and not isinstance(assertion.get("fn"), str):
            self.add("required-value", f"{path}.fn", "custom needs fn, the path of its JS file")
        elif kind in _REFERENCE_TEXT and not isinstance(
            assertion.get("reference", assertion.get("value")), str
        ):
            self.add("required-value", f"{path}.reference", f"{kind} needs a reference text")
        elif kind == "mock_hit":
            self.mock_hit(value, f"{path}.value", mocks)
        elif kind == "assert-set":
            children = assertion.get("children")
            if not isinstance(children, list) or not children:
                self.add(
                    "required-value",
                    f"{path}.children",
                    "assert-set needs a non-empty children list",
                )
            else:
                for index, child in enumerate(children):
                    self.assertion(child, f"{path}.children[{index}]", mocks, nested=True)

    def _assertion_fields(self, assertion: dict[str, Any], path: str) -> None:
        value = assertion.get("value", ABSENT)
        if value is not ABSENT and not (isinstance(value, str) or _safe_number(value)):
            self.add("type", f"{path}.value", "value must be a string or a (safe) number")
        if "values" in assertion and (
            not isinstance(assertion["values"], list)
            or not all(isinstance(item, str) for item in assertion["values"])
        ):
            self.add("type", f"{path}.values", "values must be an array of strings")
        for key in ("pattern", "flags", "fn", "reference"):
            if key in assertion:
                self.text(assertion[key], f"{path}.{key}")
        if "schema" in assertion:
            self.object(assertion["schema"], f"{path}.schema", "schema")
        for key in ("weight", "threshold"):
            if key in assertion and not _safe_number(assertion[key]):
                self.add("type", f"{path}.{key}", f"{key} must be a (safe) number")
        if "n" in assertion and not (
            isinstance(assertion["n"], int)
            and not isinstance(assertion["n"], bool)
            and abs(assertion["n"]) <= MAX_SAFE
        ):
            self.add("type", f"{path}.n", "n must be an integer")
        if "not" in assertion:
            self.boolean(assertion["not"], f"{path}.not")
        if "mode" in assertion:
            self.enum(assertion["mode"], ("any", "all"), f"{path}.mode")
        if "children" in assertion and assertion.get("type") != "assert-set":
            self.add("children", f"{path}.children", "only an assert-set has children")

    def mock_hit(self, value: Any, path: str, mocks: list[Any]) -> None:
        tool, sep, ordinal = value.rpartition(":") if isinstance(value, str) else ("", "", "")
        if not (tool and sep and ordinal.isdigit() and ordinal.isascii()):
            self.add("mock-hit", path, 'mock_hit needs a value "Tool:N" (N counts from 1)')
            return
        same_tool = [mock for mock in mocks if isinstance(mock, dict) and mock.get("tool") == tool]
        number = int(ordinal)
        if not 1 <= number <= len(same_tool):
            declared = len(same_tool)
            self.add(
                "mock-hit",
                path,
                f"mock_hit {value!r} names mock {number} of tool {tool!r}, but the sample"
                f" declares {declared} mock(s) for that tool",
            )


def check_document(doc: Any) -> list[Problem]:
    """Every way a parsed document breaks omk's rules for a v2 sample set (empty: none).

    The rules are those of omk's published schema (strict keys and types at every level) and
    of its loader (rubric weights in (0, 1] summing to 1 within 1e-9, non-blank names and
    criteria, ``mock_hit`` references to declared mocks, judge-backed and custom assertions
    only at the top level, the values each assertion type needs, unique sample ids).
    """
    checker = _Checker()
    checker.document(doc)
    return checker.problems


def ambiguity(path: Path) -> Problem | None:
    """omk's rule for its canonical names: eval-samples.json beside eval-samples.yaml is an
    error, since omk would not know which one to read."""
    if path.name not in CANONICAL_NAMES:
        return None
    other = path.with_name(
        CANONICAL_NAMES[1] if path.name == CANONICAL_NAMES[0] else CANONICAL_NAMES[0]
    )
    if not other.is_file():
        return None
    return Problem(
        "ambiguous-samples",
        "$",
        f"{path.name} and {other.name} are both in {path.parent}; omk refuses to choose between"
        " them (keep one)",
    )


def read_document(path: Path) -> Any:
    """The parsed document of an omk file: JSON for .json, YAML (1.2, as omk reads it) else."""
    if path.suffix.lower() == ".json":
        return read_json_document(path)
    return read_yaml(path)


def check_file(path: Path, document: Any = ABSENT) -> list[Problem]:
    """Every way an omk file breaks omk's rules, each with the line it starts on where known
    (``document``: the file's parsed document, when it has been read already)."""
    if document is ABSENT:
        document = read_document(path)
    found = [problem for problem in [ambiguity(path)] if problem]
    found += check_document(document)
    lines = _lines(path)
    return [
        Problem(problem.rule, problem.path, problem.message, lines(problem.path))
        for problem in found
    ]


def _lines(path: Path) -> Any:
    """A function giving the line a JSON path starts on in the file (None where unknown)."""
    try:
        text = read_text(path)
    except ParseError:
        return lambda where: None
    if path.suffix.lower() == ".json":
        starts = row_start_lines(text, "samples")

        def of_json(where: str) -> int | None:
            found = re.match(r"\$\.samples\[(\d+)\]", where)
            if found and int(found.group(1)) < len(starts):
                return starts[int(found.group(1))]
            return 1 if where == "$" else None

        return of_json
    try:
        node = yamlload.compose(text, path, loader=Yaml12Loader)
    except ParseError:
        return lambda where: None
    marks: dict[str, int] = {}

    def walk(current: Any, at: str) -> None:
        marks[at] = current.start_mark.line + 1
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                name = str(key.value)
                child = _key_path(at, name)
                walk(value, child)
                marks[child] = key.start_mark.line + 1
        elif isinstance(current, yaml.SequenceNode):
            for index, value in enumerate(current.value):
                walk(value, f"{at}[{index}]")

    if node is not None:
        try:
            walk(node, "$")
        except RecursionError:  # nested too deeply to locate: lines stay unknown
            marks.clear()

    def of_yaml(where: str) -> int | None:
        while where:
            if where in marks:
                return marks[where]
            where = re.sub(r"(\.[^.\[]+|\[[^\]]*\])$", "", where) if where != "$" else ""
        return None

    return of_yaml


# --- mapping rows to samples -------------------------------------------------------------------


def prompt_of(value: Any) -> str:
    """The prompt for a row's input: text as it is, any other value as its JSON text."""
    return value if isinstance(value, str) else jsonvalues.dumps_text(value)


def answer_value(value: Any) -> str | int | float:
    """An expected value as omk's equals takes it: text, or a number within JavaScript's safe
    range; anything else as its JSON text."""
    if isinstance(value, str):
        return value
    if _safe_number(value):
        return value
    return jsonvalues.dumps_text(value)


def equal_weights(count: int) -> list[float]:
    """``count`` equal weights whose floating-point sum, added left to right as omk adds
    them, is exactly 1 (the last one takes up the rounding)."""
    weights = [1 / count] * (count - 1)
    running = 0.0
    for weight in weights:
        running += weight
    last = 1.0 - running
    total = running + last
    if total != 1.0:  # pragma: no cover - 1 - x + x is 1 in binary floating point
        last = math.nextafter(last, 2.0 if total < 1 else 0.0)
    return [*weights, last]


def rubric_criteria(row: ExportRow) -> list[str]:
    """The criteria a rubric row's omk rubric holds: its non-blank evaluation criteria, else
    its expected behaviour when that says something."""
    criteria = [text for text in row.case.get("evaluationCriteria") or [] if not blank(text)]
    if criteria:
        return criteria
    behaviour = row.case.get("expectedBehavior", "")
    return [behaviour] if isinstance(behaviour, str) and not blank(behaviour) else []


def rubric_of(criteria: list[str]) -> dict[str, Any]:
    weights = equal_weights(len(criteria))
    return {
        f"criterion-{number}": {"criterion": text, "weight": weight}
        for number, (text, weight) in enumerate(zip(criteria, weights, strict=True), start=1)
    }


def _acceptable_members(expected: dict[str, Any]) -> list[Any]:
    if "acceptable" in expected:
        return list(expected["acceptable"])
    return [item["value"] for item in expected.get("graded", []) if item.get("grade", 0) > 0]


def _plain_forbidden(expected: dict[str, Any]) -> list[str]:
    return [
        call["name"]
        for call in expected.get("forbidden") or []
        if not call.get("arguments")  # a call forbidden by its arguments has no omk form
    ]


def grading_of(row: ExportRow) -> dict[str, Any]:
    """The rubric and assertions that say what the row's oracle says, as far as omk can."""
    oracle = row.oracle_type
    expected = row.expected
    if oracle == "rubric":
        criteria = rubric_criteria(row)
        return {"rubric": rubric_of(criteria)} if criteria else {}
    if oracle == "reference-answer":
        return {"assertions": [{"type": "equals", "value": answer_value(expected)}]}
    if oracle == "acceptable-set":
        members = _acceptable_members(expected)
        if not members:
            return {}
        children = [{"type": "equals", "value": answer_value(member)} for member in members]
        return {"assertions": [{"type": "assert-set", "mode": "any", "children": children}]}
    if oracle == "expected-tool-calls":
        assertions: list[dict[str, Any]] = []
        calls = expected.get("calls", [])
        names = [call["name"] for call in calls]
        if names:
            assertions.append({"type": "tools_called", "values": names})
        for call in calls:
            if ":" in call["name"]:
                continue  # omk reads the tool's name up to the first colon
            for key, value in call["arguments"].items():
                needle = argument_text(key, value)
                assertions.append(
                    {"type": "tool_input_contains", "value": f"{call['name']}:{needle}"}
                )
        forbidden = _plain_forbidden(expected)
        if forbidden:
            assertions.append({"type": "tools_not_called", "values": forbidden})
        return {"assertions": assertions} if assertions else {}
    return {}


def argument_text(key: str, value: Any) -> str:
    """An argument as it appears in the JSON text of a tool's input (``"id":"A1"``), compact
    as JavaScript's JSON.stringify writes it, which omk's tool_input_contains searches."""
    return f"{jsonvalues.dumps_text(key)}:{jsonvalues.dumps_text(value)}"


def _argument(text: str) -> tuple[str, Any] | None:
    """The one argument an ``"key":value`` text states, when it is written as
    :func:`argument_text` writes it (else omk's substring check says something else)."""
    try:
        parsed = jsonvalues.loads("{" + text + "}")
    except jsonvalues.JSONError:
        return None
    if not isinstance(parsed, dict) or len(parsed) != 1:
        return None
    ((key, value),) = parsed.items()
    return (key, value) if argument_text(key, value) == text else None


def _calls(assertions: list[Any], names: list[str]) -> list[dict[str, Any]]:
    """The calls tools_called names, with the arguments tool_input_contains checks of them:
    each argument goes to the first call of its tool that does not have that key yet."""
    calls: list[dict[str, Any]] = [{"name": name, "arguments": {}} for name in names]
    for assertion in assertions:
        value = assertion.get("value") if _plain(assertion, "tool_input_contains") else None
        if not isinstance(value, str):
            continue
        name, _, text = value.partition(":")
        argument = _argument(text)
        if argument is None:
            continue
        key, given = argument
        call = next((c for c in calls if c["name"] == name and key not in c["arguments"]), None)
        if call is not None:
            call["arguments"][key] = given
    return calls


def _plain(assertion: Any, kind: str) -> bool:
    return (
        isinstance(assertion, dict)
        and assertion.get("type") == kind
        and assertion.get("not") is not True
    )


def _equals_value(assertion: Any) -> Any:
    if _plain(assertion, "equals") and (
        isinstance(assertion.get("value"), str) or _is_number(assertion.get("value"))
    ):
        return assertion["value"]
    return ABSENT


def _acceptable_set(assertion: Any) -> list[Any] | None:
    if not _plain(assertion, "assert-set") or assertion.get("mode") != "any":
        return None
    children = assertion.get("children")
    if not isinstance(children, list) or not children:
        return None
    values = [_equals_value(child) for child in children]
    return None if any(value is ABSENT for value in values) else values


def _tool_names(assertions: list[Any], kind: str) -> list[str]:
    return [
        name
        for assertion in assertions
        if _plain(assertion, kind) and isinstance(assertion.get("values"), list)
        for name in assertion["values"]
        if isinstance(name, str) and name
    ]


def oracle_of(record: dict[str, Any]) -> tuple[str, Any, dict[str, Any], str]:
    """The oracle type a sample states, its expected value (ABSENT for none), the case fields
    it gives, and how the oracle type was inferred."""
    rubric = record.get("rubric")
    if isinstance(rubric, dict) and rubric:
        criteria = [
            dimension["criterion"]
            if isinstance(dimension, dict) and isinstance(dimension.get("criterion"), str)
            else jsonvalues.dumps_text(dimension)
            for dimension in rubric.values()
        ]
        return "rubric", ABSENT, {"evaluationCriteria": criteria}, "the sample has a rubric"
    raw = record.get("assertions")
    assertions = raw if isinstance(raw, list) else []
    for assertion in assertions:
        value = _equals_value(assertion)
        if value is not ABSENT:
            return "reference-answer", value, {}, "the sample has an equals assertion"
    for assertion in assertions:
        members = _acceptable_set(assertion)
        if members is not None:
            why = "the sample has an assert-set of mode any whose children are equals assertions"
            return "acceptable-set", {"acceptable": members}, {}, why
    called = _tool_names(assertions, "tools_called")
    not_called = _tool_names(assertions, "tools_not_called")
    if called or not_called:
        expected: dict[str, Any] = {"calls": _calls(assertions, called), "order": "any"}
        if not_called:
            expected["forbidden"] = [{"name": name} for name in not_called]
        why = (
            "the sample has tools_called or tools_not_called assertions (the arguments from"
            " tool_input_contains; in any order, which omk does not check)"
        )
        return "expected-tool-calls", expected, {}, why
    if assertions:
        why = "its assertions state no reference answer, set, rubric or tool calls"
    else:
        why = "the sample has no rubric and no assertions"
    return "expected-behavior-only", ABSENT, {}, why


_SHAPE: Final = NativeShape(
    mapped={
        "sample_id": ("id",),
        "prompt": ("input",),
        "rubric": ("case.oracleType", "case.evaluationCriteria"),
        "assertions": ("expected", "case.oracleType"),
        "provenance": ("case.provenance",),
        "capability": ("case.caseFamily",),
    },
    grading=("rubric", "assertions"),
)


class OmkCodec(VendorCodec):
    name: ClassVar[str] = "omk"
    title: ClassVar[str] = "omk eval-sample set v2 (JSON or YAML)"
    read_extensions: ClassVar[tuple[str, ...]] = (".json", ".yaml", ".yml")
    write_forms: ClassVar[dict[str, str]] = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}
    what: ClassVar[str] = "an omk sample"
    shape: ClassVar[NativeShape] = _SHAPE
    metadata_key: ClassVar[str | None] = None
    document: ClassVar[bool] = True
    named_only: ClassVar[bool] = True

    # --- reading -----------------------------------------------------------------------------

    def records(self, path: Path) -> Records:
        return self._read(path)[1]

    def open(self, path: Path) -> SetSource:
        document = read_document(path)
        header, records = self._parts(path, document)
        source = self.source(path, header, self.rows(records))
        if header is not None:
            source.header_origin = "the document"
        source.notes = [self._issue(problem, document) for problem in check_file(path, document)]
        if path.suffix.lower() == ".json":
            starts = _sample_lines(path)
            source.line_of = lambda index: starts[index] if index < len(starts) else None
        return source

    def _issue(self, problem: Problem, document: Any) -> Issue:
        """A problem as a vendor-format issue, on the row of the sample it is in (if any)."""
        index: int | None = None
        row_id = None
        found = re.match(r"\$\.samples\[(\d+)\]", problem.path)
        samples = document.get("samples") if isinstance(document, dict) else document
        if found and isinstance(samples, list) and int(found.group(1)) < len(samples):
            index = int(found.group(1))
            sample = samples[index]
            sample_id = sample.get("sample_id") if isinstance(sample, dict) else None
            row_id = sample_id if isinstance(sample_id, str) else None
        return make_issue(
            "vendor-format",
            path=problem.path,
            row_index=index,
            row_id=row_id,
            line=problem.line,
            format=self.name,
            rule=problem.rule,
            reason=problem.message,
        )

    def _read(self, path: Path) -> tuple[dict[str, Any] | None, Records]:
        return self._parts(path, read_document(path))

    def _parts(self, path: Path, document: Any) -> tuple[dict[str, Any] | None, Records]:
        """The set-level fields and the samples of a parsed document."""
        if isinstance(document, list):
            samples: Any = document  # the legacy shape: read, and reported by the checker
            kept: dict[str, Any] = {}
        elif isinstance(document, dict):
            samples = document.get("samples", [])
            kept = {k: v for k, v in document.items() if k not in ("schemaVersion", "samples")}
            version = document.get("schemaVersion", ABSENT)
            if version is not ABSENT and version != SCHEMA_VERSION:
                kept["schemaVersion"] = version
        else:
            raise ParseError(
                path,
                f"an omk sample set is an object with schemaVersion {SCHEMA_VERSION} and"
                f" samples, not {jsonvalues.json_type(document)}",
            )
        if not isinstance(samples, list):
            raise ParseError(path, "samples must be an array of samples")
        # a file with nothing at its root but the samples has no set-level fields at all
        header = {"extensions": {self.name: kept}} if kept else None
        lines = _yaml_sample_lines(path, len(samples))
        return header, [(lines[index], sample) for index, sample in enumerate(samples)]

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        _, expected, _, _ = oracle_of(record)
        return Values(input=record.get("prompt", ABSENT), expected=expected)

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        derived: dict[str, str] = {}
        row_id = record.get("sample_id")
        if not isinstance(row_id, str) or not row_id:
            row_id = f"sample-{position + 1}"
            derived["id"] = "the sample has no sample_id; numbered by position"
        prompt = record.get("prompt", ABSENT)
        if prompt is ABSENT:
            prompt = None
            derived["input"] = "the sample has no prompt"
        oracle, expected, case, how = oracle_of(record)
        derived["metadata.case.oracleType"] = how
        if "evaluationCriteria" in case:
            derived["metadata.case.evaluationCriteria"] = (
                "taken from the rubric's criteria (dimension names and weights stay in"
                " case.extensions.omk)"
            )
        capability = record.get("capability")
        if (
            isinstance(capability, list)
            and len(capability) == 1
            and isinstance(capability[0], str)
            and _KEBAB.match(capability[0])
        ):
            case["caseFamily"] = capability[0]
            derived["metadata.case.caseFamily"] = "taken from the sample's one capability"
        derived["metadata.case.expectedBehavior"] = "omk samples carry no behaviour description"
        return imported_row(
            row_id=row_id,
            input_value=prompt,
            expected=expected,
            oracle_type=oracle,
            expected_behavior="(imported from omk without a behaviour description)",
            format_name=self.name,
            derived=derived,
            case=case,
        )

    # --- writing -----------------------------------------------------------------------------

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        if row.oracle_type == "expected-final-state":
            return FINAL_STATE
        if row.input == "":
            return EMPTY_PROMPT
        if row.oracle_type != "expected-behavior-only" and not grading_of(row):
            return NO_CHECK
        return None

    def _sample(self, row: ExportRow) -> dict[str, Any]:
        sample: dict[str, Any] = {"sample_id": row.id, "prompt": prompt_of(row.input)}
        sample.update(grading_of(row))
        family = row.case.get("caseFamily")
        if isinstance(family, str):
            sample["capability"] = [family]
        provenance = PROVENANCE_TO_OMK.get(row.case.get("provenance", ""))
        if provenance is not None:
            sample["provenance"] = provenance
        return sample

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        return self._sample(row)

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        return self._sample(row)

    def set_fields_written(self, header: dict[str, Any], context: WriteContext) -> set[str]:
        return {"extensions.omk"} if _root_extension(header) else set()

    def document_bytes(self, records: list[dict[str, Any]], context: WriteContext) -> bytes:
        if not records:
            raise EmptySampleSet(
                "an omk sample set holds at least one sample (omk's loader refuses an empty"
                " samples list), and no row of this set can be written as one: rows whose"
                " oracle omk cannot check are left out, and human-review rows too unless"
                " --include-human-review is given. Nothing was written"
            )
        document = _document(records, context)
        if context.form == "yaml":
            return dump_yaml(document)
        return jsonvalues.dumps(document, indent=True) + b"\n"

    def document_notes(
        self, records: list[dict[str, Any]], path: Path, context: WriteContext
    ) -> list[str]:
        # only what no valid set holds can break omk's rules here: values kept from an omk
        # file that already broke them, or ids a set written with --allow-invalid repeats.
        # The document is checked as written, not read back: both forms give back exactly
        # the values they were written from
        found = [problem for problem in [ambiguity(path)] if problem]
        return [
            f"{path}: omk's loader will refuse this file: {problem.path}: {problem.message}"
            for problem in found + check_document(_document(records, context))
        ]

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        changes = []
        before, after = read_document(original), read_document(exported)
        if isinstance(before, dict) and isinstance(after, dict):
            root = [
                key
                for key in dict.fromkeys([*before, *after])
                if key != "samples" and not same(before.get(key, ABSENT), after.get(key, ABSENT))
            ]
            if root:
                changes.append(f"the sample set's {', '.join(root)} changed")
        return changes + super().compare_native(original, exported)

    def sniff(self, path: Path, head: bytes) -> Fit:
        why = f"an omk sample set declares schemaVersion {SCHEMA_VERSION}"
        if path.suffix.lower() == ".json":
            outline = json_head(head)
            if outline.kind != "object":
                return Fit.no(why)
            version = top_level_value(head, "schemaVersion")
            return Fit.yes() if version == SCHEMA_VERSION else Fit.no(why)
        for line in text_of(head).splitlines():
            found = re.match(r"""^schemaVersion\s*:\s*(["']?)(.*?)\1\s*(#.*)?$""", line)
            if found:
                return Fit.yes() if found.group(2) == SCHEMA_VERSION else Fit.no(why)
        return Fit.no(why)


def _document(records: list[dict[str, Any]], context: WriteContext) -> dict[str, Any]:
    """The sample set written: the root fields an import kept, then the samples."""
    kept = _root_extension(context.header)
    document: dict[str, Any] = {"schemaVersion": kept.get("schemaVersion", SCHEMA_VERSION)}
    document.update({k: v for k, v in kept.items() if k not in ("schemaVersion", "samples")})
    document["samples"] = records
    return document


def _root_extension(header: dict[str, Any]) -> dict[str, Any]:
    extensions = header.get("extensions")
    kept = extensions.get("omk") if isinstance(extensions, dict) else None
    return kept if isinstance(kept, dict) else {}


@cache
def _cached_lines(path: str, stamp: float) -> tuple[int, ...]:
    try:
        return tuple(row_start_lines(read_text(Path(path)), "samples"))
    except (ParseError, OSError):
        return ()


def _sample_lines(path: Path) -> tuple[int, ...]:
    try:
        return _cached_lines(str(path), path.stat().st_mtime)
    except OSError:
        return ()


def _yaml_sample_lines(path: Path, count: int) -> list[int | None]:
    """The line each sample starts on, for a YAML file (JSON lines are found when asked)."""
    if path.suffix.lower() == ".json":
        return [None] * count
    try:
        node = yamlload.compose(read_text(path), path, loader=Yaml12Loader)
    except ParseError:
        return [None] * count
    samples: Any = None
    if isinstance(node, yaml.SequenceNode):
        samples = node
    elif isinstance(node, yaml.MappingNode):
        samples = next((v for k, v in node.value if k.value == "samples"), None)
    items = samples.value if isinstance(samples, yaml.SequenceNode) else []
    lines: list[int | None] = [item.start_mark.line + 1 for item in items]
    return (lines + [None] * count)[:count]


__all__ = [
    "CANONICAL_NAMES",
    "SCHEMA_VERSION",
    "EmptySampleSet",
    "OmkCodec",
    "Problem",
    "check_document",
    "check_file",
]
