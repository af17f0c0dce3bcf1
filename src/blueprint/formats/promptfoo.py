"""promptfoo test cases: a YAML tests file, and reading promptfoo configs and test files."""

from __future__ import annotations

import contextlib
import csv
import glob
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Final

import yaml

from blueprint import jsonvalues
from blueprint.errors import ParseError
from blueprint.formats._io import read_json_lines, read_text
from blueprint.formats.base import ExportResult, SetSource, UnreadableRow, WriteOptions
from blueprint.formats.mapping import NAMESPACE
from blueprint.formats.vendor import (
    ABSENT,
    ExportRow,
    Framing,
    imported_row,
    payload_of,
    read_json_document,
    restored_row,
    vendor_rows,
    write_export,
)

_YAML11_ONLY: Final = frozenset(
    {
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
    }
)
FINAL_STATE: Final = "final-state"
NO_ASSERTION: Final = "no-assertion"
_ID_PREFIX: Final = re.compile(r"^\[([^\]]+)\]")

# --- keeping text literal through promptfoo's template handling -----------------------------
#
# promptfoo renders var values and assertion values with Nunjucks, substitutes {{name}} for
# known vars before that, and loads strings that start with file:// or package:. A "{" that
# opens a tag is therefore written as the expression {{ "{" }}, which renders back to "{" and
# leaves nothing for the substitution to find; a leading file:// or package: gets an empty
# expression in front. Rendering gives back exactly the original text.

_OPENER: Final = re.compile(r"\{(?=[{%#])")
_BRACE: Final = '{{ "{" }}'
_LOADED_PREFIXES: Final = ("file://", "package:")
_GUARD: Final = '{{ "" }}'


def literal(text: str) -> str:
    """Text that promptfoo's template handling turns back into exactly ``text``."""
    escaped = _OPENER.sub(lambda match: _BRACE, text)
    if escaped.startswith(_LOADED_PREFIXES):
        escaped = _GUARD + escaped
    return escaped


def unliteral(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return value.removeprefix(_GUARD).replace(_BRACE, "{")


def risky(value: Any) -> bool:
    """Whether promptfoo would load a string somewhere inside the value as a file or package."""
    if isinstance(value, str):
        return value.startswith(_LOADED_PREFIXES)
    if isinstance(value, dict):
        return any(risky(key) or risky(item) for key, item in value.items())
    if isinstance(value, list):
        return any(risky(item) for item in value)
    return False


def _same(left: Any, right: Any) -> bool:
    return jsonvalues.dumps(left, sort_keys=True) == jsonvalues.dumps(right, sort_keys=True)


# --- input <-> vars --------------------------------------------------------------------------


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


def input_from_vars(variables: Any) -> Any:
    if not isinstance(variables, dict):
        return None
    if set(variables) == {"input"} and isinstance(variables["input"], str):
        return unliteral(variables["input"])
    return {key: unliteral(item) for key, item in variables.items()}


# --- expected <-> assertions -----------------------------------------------------------------

_JS_HELPERS: Final = """\
const canon = (v) => Array.isArray(v) ? v.map(canon)
  : (v && typeof v === 'object')
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
    : v;
const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
const matches = (member) => {
  if (typeof member === 'string') return output === member;
  try { return same(JSON.parse(output), member); } catch (e) { return false; }
};
"""

_JS_ACCEPTABLE: Final = """\
const acceptable = {data};
{helpers}return acceptable.some(matches);
"""

_JS_GRADED: Final = """\
const graded = {data};
{helpers}let best = 0;
let found = false;
for (const member of graded) {{
  if (matches(member.value)) {{ found = true; best = Math.max(best, member.grade); }}
}}
return {{ pass: best > 0, score: best,
  reason: found ? 'matched an acceptable answer with grade ' + best
    : 'matched no acceptable answer' }};
"""

_JS_TOOL_CALLS: Final = """\
const expected = {data};
{helpers}let parsed = output;
if (typeof output === 'string') {{
  try {{ parsed = JSON.parse(output); }}
  catch (e) {{ return {{ pass: false, score: 0, reason: 'the output holds no tool calls' }}; }}
}}
const raw = Array.isArray(parsed) ? parsed
  : (parsed && (parsed.tool_calls || parsed.toolCalls || parsed.calls)) || [];
const calls = raw.map((call) => {{
  const fn = call.function || call;
  let args = fn.arguments ?? fn.args ?? fn.input ?? {{}};
  if (typeof args === 'string') {{ try {{ args = JSON.parse(args); }} catch (e) {{}} }}
  return {{ name: fn.name, arguments: args }};
}});
const fits = (want, got) => want.name === got.name
  && (want.arguments === undefined || same(want.arguments, got.arguments));
let ok;
if ((expected.order || 'exact') === 'exact') {{
  ok = calls.length === expected.calls.length && expected.calls.every((w, i) => fits(w, calls[i]));
}} else {{
  const left = [...calls];
  ok = calls.length === expected.calls.length && expected.calls.every((w) => {{
    const at = left.findIndex((g) => fits(w, g));
    if (at < 0) return false;
    left.splice(at, 1);
    return true;
  }});
}}
const banned = (expected.forbidden || []).filter((f) => calls.some((g) => fits(f, g)));
return {{ pass: ok && banned.length === 0, score: ok && banned.length === 0 ? 1 : 0,
  reason: banned.length ? 'made a forbidden call: ' + banned.map((f) => f.name).join(', ')
    : ok ? 'the expected calls were made' : 'the calls differ from the expected calls' }};
"""


def _javascript(template: str, data: Any) -> dict[str, Any]:
    code = template.format(data=jsonvalues.dumps_text(data), helpers=_JS_HELPERS)
    return {"type": "javascript", "value": literal(code)}


def _rubric_text(row: ExportRow) -> str:
    lines = [row.case["expectedBehavior"]]
    criteria = row.case.get("evaluationCriteria") or []
    if criteria:
        lines.append("The output passes only if it meets every criterion:")
        lines += [f"- {criterion}" for criterion in criteria]
    unacceptable = row.case.get("unacceptableBehavior") or []
    if unacceptable:
        lines.append("The output fails if it does any of these:")
        lines += [f"- {behaviour}" for behaviour in unacceptable]
    return "\n".join(lines)


def assertions_for(row: ExportRow) -> list[dict[str, Any]]:
    oracle, judge = row.oracle_type, row.evaluator == "llm-judge"
    expected = row.expected
    if oracle == "reference-answer":
        text = expected if isinstance(expected, str) else jsonvalues.dumps_text(expected)
        if judge:
            return [{"type": "factuality", "value": literal(text)}]
        if isinstance(expected, dict | list) and not risky(expected):
            return [{"type": "equals", "value": expected}]
        return [{"type": "equals", "value": literal(text)}]
    if oracle == "acceptable-set":
        if judge:
            prompt = (
                f"{row.case['expectedBehavior']}\nThe output passes only if it matches one of"
                f" these acceptable answers: {jsonvalues.dumps_text(expected)}"
            )
            return [{"type": "llm-rubric", "value": literal(prompt)}]
        if "graded" in expected:
            return [_javascript(_JS_GRADED, expected["graded"])]
        return [_javascript(_JS_ACCEPTABLE, expected["acceptable"])]
    if oracle == "rubric" and judge:
        return [{"type": "llm-rubric", "value": literal(_rubric_text(row))}]
    if oracle == "expected-tool-calls":
        return [_javascript(_JS_TOOL_CALLS, expected)]
    return []


def expected_from_assertions(assertions: Any) -> Any:
    """The reference answer an equals or factuality assertion gives back, or ABSENT."""
    if isinstance(assertions, list) and len(assertions) == 1 and isinstance(assertions[0], dict):
        only = assertions[0]
        if only.get("type") in ("equals", "factuality") and isinstance(only.get("value"), str):
            return unliteral(only["value"])
    return ABSENT


def _description(row: ExportRow) -> str:
    note = " (starter example, not validated gold)" if row.starter else ""
    review = " [needs human review]" if row.human_only else ""
    behaviour = row.case["expectedBehavior"].strip().replace("\n", " ")
    if len(behaviour) > 100:
        behaviour = behaviour[:99] + "\N{HORIZONTAL ELLIPSIS}"
    return f"[{row.id}]{review}{note} {behaviour}".rstrip()


def test_for(row: ExportRow) -> dict[str, Any]:
    variables = vars_for(row.input)
    # rows for human review go out unasserted: an automated check would misrepresent them
    assertions = [] if row.human_only else assertions_for(row)
    markers: dict[str, Any] = {}
    if not _same(input_from_vars(variables), row.input):
        markers["input"] = row.input
    if row.has_expected:
        back = expected_from_assertions(assertions)
        if back is ABSENT or not _same(back, row.expected):
            markers["expected"] = row.expected
    test: dict[str, Any] = {"description": _description(row), "vars": variables}
    if assertions:
        test["assert"] = assertions
    if any(isinstance(value, list) for value in variables.values()):
        test["options"] = {"disableVarExpansion": True}
    metadata: dict[str, Any] = {"id": row.id, **row.labels()}
    payload = row.payload(**markers)
    # promptfoo would load file:// strings in metadata too; JSON text keeps them inert
    metadata[NAMESPACE] = jsonvalues.dumps_text(payload) if risky(payload) else payload
    if risky(row.id):
        del metadata["id"]
    test["metadata"] = metadata
    return test


# --- YAML that js-yaml and PyYAML read alike -------------------------------------------------

_AMBIGUOUS: Final = re.compile(
    r"^(?:[-+.0-9].*|~|null|true|false|yes|no|on|off|y|n|\.inf|\.nan)$", re.IGNORECASE | re.DOTALL
)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # YAML 1.1 (PyYAML) and 1.2 (js-yaml, used by promptfoo) disagree on plain scalars such
    # as 0o17 or yes; quote anything that could read as a non-string in either
    # likewise anything with line breaks or control characters (YAML counts \x85 and
    # \u2028 as line breaks): double quotes escape them, so they come back exactly
    style = '"' if _AMBIGUOUS.match(data) or not data.isprintable() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> bytes:
    text = yaml.dump(
        data,
        Dumper=_Dumper,
        allow_unicode=True,
        sort_keys=False,
        width=100,
        default_flow_style=False,
    )
    return text.encode("utf-8")


# --- reading native promptfoo files ----------------------------------------------------------


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core scalars, as js-yaml (and so promptfoo) reads:
    only true/false are booleans, 0o17 is octal, and no dates or base-60 numbers."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _YAML11_ONLY]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = loader.construct_scalar(node)  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    return int(text, 0) if text.startswith("0x") else int(text)


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)

_ASSERTION_TYPES: Final = frozenset(
    [
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
        "starts-with",
        "tool-call-f1",
        "webhook",
        "word-count",
    ]
)
_CSV_ASSERTION: Final = re.compile(
    r"^(not-)?([a-z0-9-]+(?::[a-z-]+)??)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$"
)


def assertion_from_cell(cell: str) -> dict[str, Any]:
    """promptfoo's reading of an __expected cell, for the types that matter here."""
    text = cell.strip()
    for prefix, kind in (
        ("javascript:", "javascript"),
        ("fn:", "javascript"),
        ("eval:", "javascript"),
        ("grade:", "llm-rubric"),
        ("llm-rubric:", "llm-rubric"),
        ("python:", "python"),
    ):
        if text.startswith(prefix):
            return {"type": kind, "value": text[len(prefix) :].strip()}
    match = _CSV_ASSERTION.match(text)
    if match and match.group(2) in _ASSERTION_TYPES:
        negate, kind, threshold, value = match.groups()
        assertion: dict[str, Any] = {"type": f"{negate or ''}{kind}"}
        if value is not None:
            if kind.endswith(("-any", "-all")):
                assertion["value"] = [part.strip() for part in value.split(",")]
            else:
                assertion["value"] = value
        if threshold is not None:
            assertion["threshold"] = float(threshold)
        return assertion
    return {"type": "equals", "value": text}


def _csv_tests(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.DictReader(read_text(path).splitlines(keepends=True))
    for record in reader:
        test: dict[str, Any] = {"vars": {}}
        for raw_key, cell in record.items():
            if raw_key is None or cell is None:
                continue
            key = raw_key.strip()
            if key.startswith("__expected"):
                if cell.strip():
                    test.setdefault("assert", []).append(assertion_from_cell(cell))
            elif key == "__description":
                test["description"] = cell
            elif key.startswith("__metadata:") and cell.strip():
                name = key[len("__metadata:") :]
                if name.endswith("[]"):
                    test.setdefault("metadata", {})[name[:-2]] = [
                        part.strip().replace("\\,", ",", 1) for part in re.split(r"(?<!\\),", cell)
                    ]
                else:
                    test.setdefault("metadata", {})[name] = cell
            elif key.startswith("__"):
                test.setdefault("options", {})[key[2:]] = cell
            else:
                test["vars"][key] = cell
        yield reader.line_num, test


def _load_tests_file(
    path: Path, seen: frozenset[Path] = frozenset()
) -> list[tuple[int | None, Any]]:
    resolved = path.resolve()
    if resolved in seen:
        raise ParseError(path, "the promptfoo config includes itself")
    seen = seen | {resolved}
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return list(_csv_tests(path))
    if suffix == ".jsonl":
        found: list[tuple[int | None, Any]] = []
        for item in read_json_lines(path):
            if isinstance(item, UnreadableRow):
                raise ParseError(path, item.reason, line=item.line, column=item.column)
            found.append(item)
        return found
    data = read_json_document(path) if suffix == ".json" else _read_yaml(path)
    if isinstance(data, dict) and "tests" in data:
        return _tests_of_config(path, data, seen)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ParseError(path, "a promptfoo tests file is a list of test cases")
    return [(None, test) for test in data]


def _json_compatible(value: Any) -> bool:
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if not all(isinstance(key, str) for key in current):
                return False
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
        elif current is not None and not isinstance(current, str | int | float | bool):
            return False
    return True


def _read_yaml(path: Path) -> Any:
    text = read_text(path)
    try:
        data = yaml.load(text, Loader=Yaml12Loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or "not valid YAML"
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        raise ParseError(path, f"not valid YAML: {problem}", line=line, column=column) from None
    except RecursionError:
        raise ParseError(path, "YAML nested too deeply") from None
    if not _json_compatible(data):
        raise ParseError(path, "holds YAML values that are not JSON (binary data, sets, dates)")
    return data


def _tests_of_config(
    path: Path, config: dict[str, Any], seen: frozenset[Path]
) -> list[tuple[int | None, Any]]:
    tests = config.get("tests")
    entries = tests if isinstance(tests, list) else [tests]
    found: list[tuple[int | None, Any]] = []
    for entry in entries:
        if isinstance(entry, str):
            reference = str(path.parent / entry.removeprefix("file://"))
            if any(char in reference for char in "*?["):
                # absolute or relative, as promptfoo allows: Path.glob takes relative only
                targets = [Path(match) for match in sorted(glob.glob(reference))]  # noqa: PTH207
            else:
                targets = [Path(reference)]
            for target in targets:
                found += _load_tests_file(target, seen)
        elif isinstance(entry, dict) and "path" in entry and "vars" not in entry:
            raise ParseError(path, "test generators (tests: {path: ...}) run code; not read")
        else:
            found.append((None, entry))
    return found


def _oracle_from_assertions(
    assertions: list[dict[str, Any]],
) -> tuple[str, Any, dict[str, Any], str | None]:
    """(oracle type, expected, extra case fields, evaluator) inferred from a test's asserts."""
    by_type = {str(a.get("type")): a for a in assertions if isinstance(a, dict)}
    if "equals" in by_type:
        value = by_type["equals"].get("value")
        return "reference-answer", unliteral(value), {}, "exact-or-programmatic"
    for kind in ("factuality", "model-graded-factuality"):
        if kind in by_type:
            return "reference-answer", unliteral(by_type[kind].get("value")), {}, "llm-judge"
    rubric = [
        a for a in assertions if a.get("type") in ("llm-rubric", "g-eval", "model-graded-closedqa")
    ]
    if rubric:
        criteria: list[str] = []
        for assertion in rubric:
            value = assertion.get("value")
            criteria += [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return "rubric", ABSENT, {"evaluationCriteria": criteria}, "llm-judge"
    if "tool-call-f1" in by_type:
        names = by_type["tool-call-f1"].get("value")
        names = names.split(",") if isinstance(names, str) else names
        names = names if isinstance(names, list) else []
        calls = [{"name": str(name).strip(), "arguments": {}} for name in names]
        return "expected-tool-calls", {"calls": calls, "order": "any"}, {}, "exact-or-programmatic"
    return "expected-behavior-only", ABSENT, {}, None


def row_from_test(test: dict[str, Any], position: int) -> dict[str, Any]:
    metadata = test.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get(NAMESPACE), str):
        # a payload kept as JSON text (it held strings promptfoo would load)
        with contextlib.suppress(jsonvalues.JSONError):
            metadata = {**metadata, NAMESPACE: jsonvalues.loads(metadata[NAMESPACE])}
    payload = payload_of(metadata)
    raw_assertions = test.get("assert")
    assertions: list[Any] = [
        item
        for item in (raw_assertions if isinstance(raw_assertions, list) else [])
        if isinstance(item, dict)
    ]
    if payload is not None:
        value = payload["input"] if "input" in payload else input_from_vars(test.get("vars"))
        if "expected" in payload:
            expected = payload["expected"]
        else:
            expected = expected_from_assertions(assertions)
        bare = {k: v for k, v in payload.items() if k not in ("input", "expected")}
        return restored_row(bare, bare.get("id"), value, expected)
    derived: dict[str, str] = {}
    description = test.get("description")
    match = _ID_PREFIX.match(description) if isinstance(description, str) else None
    row_id = metadata.get("id") if isinstance(metadata, dict) else None
    if not isinstance(row_id, str) or not row_id:
        if match:
            row_id = match.group(1)
        else:
            row_id = f"test-{position + 1}"
            derived["id"] = "promptfoo tests have no id; numbered by position"
    oracle, expected, case, evaluator = _oracle_from_assertions(assertions)
    derived["metadata.case.oracleType"] = (
        f"inferred from the assertions ({', '.join(str(a.get('type')) for a in assertions)})"
        if assertions
        else "the test has no assertion, so nothing checks it automatically"
    )
    if evaluator:
        case["evaluator"] = evaluator
        derived["metadata.case.evaluator"] = "inferred from the assertion type"
    if expected is not ABSENT and oracle == "expected-tool-calls":
        derived["expected.calls"] = "tool-call-f1 names tools only; arguments are unknown"
    behaviour = description if isinstance(description, str) and description.strip() else None
    derived["metadata.case.expectedBehavior"] = (
        "taken from the test description" if behaviour else "the test has no description"
    )
    extension = {key: value for key, value in test.items() if key not in ("vars", "metadata")}
    row_metadata = (
        {k: v for k, v in metadata.items() if k != "id"} if isinstance(metadata, dict) else {}
    )
    return imported_row(
        row_id=row_id,
        input_value=input_from_vars(test.get("vars")),
        expected=expected,
        oracle_type=oracle,
        expected_behavior=behaviour or "(imported from promptfoo without a description)",
        format_name="promptfoo",
        derived=derived,
        case=case,
        metadata=row_metadata,
        vendor_extension=extension or None,
    )


class PromptfooCodec:
    name: ClassVar[str] = "promptfoo"
    title: ClassVar[str] = "promptfoo tests (YAML; reads configs and JSON/JSONL/CSV tests)"
    extensions: ClassVar[tuple[str, ...]] = (".yaml", ".yml")
    lossless: ClassVar[bool] = False
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True

    def open(self, path: Path) -> SetSource:
        tests = _load_tests_file(path)
        rows = vendor_rows(tests, row_from_test, what="a promptfoo test case")
        return SetSource(path=path, format=self.name, header=None, rows=rows)

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        def encode(row: ExportRow) -> bytes:
            # one single-item list per test: the concatenation is the whole list
            return dump_yaml([test_for(row)])

        def skip(row: ExportRow) -> str | None:
            if row.oracle_type == "expected-final-state":
                return FINAL_STATE
            if not row.human_only and not assertions_for(row):
                return NO_ASSERTION
            return None

        opening = f"# promptfoo test cases; use them with: tests: file://{path.name}\n"
        framing = Framing(opening=opening.encode("utf-8"), empty=b"[]\n")
        return write_export(
            self.name, header, rows, path, options, encode=encode, framing=framing, skip=skip
        )

    def sniff(self, head: bytes) -> bool:
        text = head.decode("utf-8", errors="replace")
        return bool(re.search(r"^\s*-?\s*(vars|assert|tests|prompts|providers):", text, re.M))
