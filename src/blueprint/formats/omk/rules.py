"""omk's rules for a v2 sample set: the keys, types and values its loader accepts."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Final

from blueprint.formats.native import ABSENT
from blueprint.io import jsonvalues
from blueprint.io.firstseen import FirstSeen, text_key

SCHEMA_VERSION: Final = "omk.eval-sample-set/v2"

#: the largest integer omk's loader accepts as a number (JavaScript's safe integers)
MAX_SAFE: Final = 2**53 - 1


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
        if not self.root(doc):
            return
        samples = doc.get("samples", ABSENT)
        if samples is ABSENT:
            self.add("required", "$.samples", "samples is required")
            return
        if not isinstance(samples, list):
            self.add("type", "$.samples", "samples must be an array of samples")
            return
        if not samples:
            self.add("empty", "$.samples", "a sample set holds at least one sample")
        seen = FirstSeen()
        for index, sample in enumerate(samples):
            self.entry(index, sample, seen)
        seen.close()

    def root(self, doc: Any) -> bool:
        """The sample set's own keys; False when it is no sample set at all."""
        if isinstance(doc, list):
            self.add(
                "legacy-array",
                "$",
                "a top-level array of samples is the legacy shape omk no longer reads; wrap it"
                f" as {{schemaVersion: {SCHEMA_VERSION}, samples: [...]}}",
            )
            return False
        if not self.object(doc, "$", "a sample set"):
            return False
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
        return True

    def entry(self, index: int, sample: Any, seen: FirstSeen) -> None:
        """One sample of the set, and its id against those before it (``seen``: the index of
        each id's first sample, by the id's :func:`text_key`, so that a set of millions of
        samples is checked in flat memory)."""
        path = f"$.samples[{index}]"
        self.sample(sample, path)
        sample_id = sample.get("sample_id") if isinstance(sample, dict) else None
        if isinstance(sample_id, str) and sample_id:
            first = seen.setdefault(text_key(sample_id), index)
            if first != index:
                self.add(
                    "duplicate-sample-id",
                    f"{path}.sample_id",
                    f"sample_id {sample_id!r} is already used by samples[{first}]",
                )

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


class SampleSetCheck:
    """:func:`check_document` one sample at a time, for a sample set written as it goes:
    the root keys first, then each sample as it is added. Holds a flat table of the ids
    seen, not the samples."""

    def __init__(self, root: dict[str, Any]) -> None:
        self._checker = _Checker()
        self._checker.root(root)
        self._seen = FirstSeen()

    def add(self, index: int, sample: Any) -> None:
        self._checker.entry(index, sample, self._seen)

    @property
    def problems(self) -> list[Problem]:
        return self._checker.problems

    def close(self) -> None:
        """Let go of the ids seen (and of any part of them the table put on disk)."""
        self._seen.close()
