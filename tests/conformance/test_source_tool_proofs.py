"""Public suites graded by their own tool and by ``blueprint grade`` on the same recorded
outputs give the same pass or fail for every test; the same outputs through every other
runner, with the suite converted, give the same verdicts again.

**promptfoo.** The public promptfoo configs shipped as fixtures (each folder's SOURCE.md
names where it comes from) whose tests import as rows Blueprint grades by code (reference
answers, acceptable sets defined by checks, expected tool calls). Each suite is copied with
its files, its providers replaced by the echo provider and its prompts by the recorded
outputs (each JSON-encoded, since promptfoo trims what it renders, and parsed back by a
``JSON.parse(output)`` transform in the defaultTest's options); its tests, its defaultTest's
assertions and its test files are kept as they are. promptfoo runs every test on every
output in one eval, and ``grade_row`` on the imported rows gives promptfoo's pass or fail for
each. The outputs are derived from the suite's own checks and tests: each value, the same in
another case, embedded in other text, cut short, texts of the word counts at and beyond each
bound, edit distances at and beyond the bound, JSON and not, tool calls with and without the
expected ones, and the suite's own prompts as the echo provider writes them.

**The other runners.** Every (row, output) of those suites graded by code from the output's
text is a row of one set, converted with ``--graders blueprint`` to DeepEval, LangSmith,
Braintrust, Inspect and OpenAI Evals and run through each runner's own machinery
(runner_drivers): each gives ``grade``'s verdict and score. The same set exported natively
to omk and apollia-os is decided by those tools' documented rules (source_rules): every row
the export carries whole (not reported weakened or left out) gets ``grade``'s verdict.

**omk and apollia-os fixtures.** The shipped omk samples with assertions (the format page's
assertion snippets and review example, and the public agent-runtime example) and the public
apollia-os suites are imported and graded with ``grade_row``, and the original files'
assertions decided by the documented rules on the same outputs: the same pass or fail.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from conformance_tools import promptfoo, promptfoo_eval, quiet_vendors
from runner_drivers import DRIVERS
from source_rules import apollia_passes, omk_verdicts

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.formats import REGISTRY
from blueprint.formats.base import ReadOptions, reading_with
from blueprint.formats.promptfoo import dump_yaml, read_yaml
from blueprint.grading import Recorded, grade_row

pytestmark = pytest.mark.conformance

NATIVE = Path(__file__).parents[1] / "fixtures" / "native"
PUBLIC = NATIVE / "promptfoo" / "public"
#: the public promptfoo configs whose tests import as rows graded by code: (the folder the
#: suite's files live in, the config in it)
SUITES: list[tuple[str, str]] = [
    ("simple-test", "promptfooconfig.yaml"),
    ("newer-assertions", "examples/word-count-assertion/promptfooconfig.yaml"),
    ("newer-assertions", "examples/normalized-tools/promptfooconfig.yaml"),
    *(
        ("smoke-fixtures", f"configs/{name}")
        for name in (
            "assertions.yaml",
            "contains-all-assertion.yaml",
            "contains-any-assertion.yaml",
            "csv-tests.yaml",
            "default-test.yaml",
            "file-ref-vars.yaml",
            "json-tests.yaml",
            "jsonl-tests.yaml",
            "levenshtein-assertion.yaml",
        )
    ),
]
#: a suite's id: its config's name, or its folder's for a promptfooconfig.yaml
SUITE_IDS = [
    Path(config).parent.name or folder
    if config.endswith("promptfooconfig.yaml")
    else Path(config).stem
    for folder, config in SUITES
]
CODE_ORACLES = frozenset({"reference-answer", "acceptable-set", "expected-tool-calls"})
TRANSFORM = "JSON.parse(output)"


def _graded_by_code(row: dict[str, Any]) -> bool:
    case = row["metadata"]["case"]
    return case.get("evaluator") == "exact-or-programmatic" and case["oracleType"] in CODE_ORACLES


# --- outputs derived from the checks ------------------------------------------------------------


def _words(count: int) -> str:
    return " ".join(f"w{number}" for number in range(count))


def _edited(text: str, edits: int) -> str:
    """``text`` with ``edits`` characters replaced (or added past its end)."""
    chars = list(text)
    for number in range(edits):
        if number < len(chars):
            chars[number] = "#" if chars[number] != "#" else "%"
        else:
            chars.append("#")
    return "".join(chars)


def _text_variants(value: str) -> list[str]:
    return [
        value,
        value.upper(),
        value.lower(),
        f"Well, {value} indeed",
        f" {value}\n",
        value[:-1],
        f"{value}.",
    ]


def _check_outputs(check: dict[str, Any]) -> list[str]:
    kind = check.get("type")
    if kind in ("not", "all", "any", "weighted"):
        parts = [check["check"]] if kind == "not" else check["checks"]
        return [output for part in parts for output in _check_outputs(part)]
    if kind in ("equals", "contains", "starts-with", "ends-with") and isinstance(
        check.get("value"), str
    ):
        return _text_variants(check["value"])
    if kind in ("contains-any", "contains-all"):
        values = [str(value) for value in check["values"]]
        return [
            *values,
            " and ".join(values),
            " and ".join(value.upper() for value in values),
            " ".join(values[:-1]) or "none of them",
        ]
    if kind == "regex":
        return []  # the suite's own prompts and texts match or miss its patterns
    if kind in ("is-json", "json-schema"):
        return ['{"key": "value", "number": 123}', "[1, 2]", '"text"', "{bad", "not json"]
    if kind == "length":
        counts = {1, 2}
        for bound in ("min", "max"):
            if isinstance(check.get(bound), int):
                counts |= {check[bound] - 1, check[bound], check[bound] + 1}
        return [_words(count) for count in sorted(counts) if count >= 0]
    if kind == "levenshtein":
        value, most = check["value"], check["maxDistance"]
        return [value, _edited(value, 1), _edited(value, most), _edited(value, most + 1)]
    return []


def _tool_call_outputs(expected: dict[str, Any]) -> list[str]:
    names = [call["name"] for call in expected["calls"]]
    calls = [{"name": name, "arguments": {"location": "Paris"}} for name in names]
    openai = [{"type": "function", "function": {"name": name, "arguments": "{}"}} for name in names]
    other = {"name": "get_time", "arguments": {}}
    return [
        json.dumps(calls),
        json.dumps(openai),
        json.dumps(calls + calls),
        json.dumps([other]),
        json.dumps([*calls, other]),
        json.dumps([]),
        "I cannot call tools",
    ]


def _rendered(template: str, variables: dict[str, Any]) -> str:
    return re.sub(
        r"\{\{\s*(\w+)\s*\}\}", lambda match: str(variables.get(match.group(1), "")), template
    )


def suite_outputs(config: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """The recorded outputs for a suite: derived from each row's checks and answers, with the
    suite's own prompts as the echo provider writes them and the texts of its vars."""
    outputs: list[str] = ["", "ok"]
    for row in rows:
        expected = row.get("expected")
        oracle = row["metadata"]["case"]["oracleType"]
        if oracle == "reference-answer" and isinstance(expected, str):
            outputs += _text_variants(expected)
        elif oracle == "acceptable-set":
            outputs += _check_outputs(expected["satisfies"])
        elif oracle == "expected-tool-calls":
            outputs += _tool_call_outputs(expected)
    tests = config.get("tests")
    inline = tests if isinstance(tests, list) else []  # a tests file's vars are not read here
    variables = [test.get("vars") or {} for test in inline] or [{}]
    for prompt in config.get("prompts") or []:
        if isinstance(prompt, str) and not prompt.startswith("file://"):
            outputs += [_rendered(prompt, values) for values in variables]
    outputs += [
        value for values in variables for value in values.values() if isinstance(value, str)
    ]
    unique = list(dict.fromkeys(outputs))
    # promptfoo renders each prompt as a template: no output may read as one
    assert not [o for o in unique if re.search(r"\{[{%#]", json.dumps(o))], unique
    return unique


# --- promptfoo on the recorded outputs ----------------------------------------------------------


def imported(folder: str, config: str) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    path = PUBLIC / folder / config
    # a suite's tests files may lie beside its config's folder (smoke-fixtures/data)
    with reading_with(ReadOptions(allowed_paths=(PUBLIC / folder,))):
        rows = list(data_rows(REGISTRY["promptfoo"].open(path)))
    return path, read_yaml(path), rows


def promptfoo_verdicts(
    promptfoo: str, tmp_path: Path, folder: str, config: str, outputs: list[str]
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], bool]]:
    """The suite's rows graded by code, and promptfoo's pass or fail of each on each output."""
    _, data, rows = imported(folder, config)
    copied = tmp_path / folder
    shutil.copytree(PUBLIC / folder, copied)
    target = copied / config
    tests = data["tests"]
    if isinstance(tests, list):
        assert len(tests) == len(rows)
        kept = [index for index, row in enumerate(rows) if _graded_by_code(row)]
        data["tests"] = [tests[index] for index in kept]
    else:  # a file of tests, every one graded by code
        assert all(_graded_by_code(row) for row in rows), config
        kept = list(range(len(rows)))
    default = data.get("defaultTest") or {}
    assert isinstance(default, dict), "a defaultTest file would need its options merged"
    data["defaultTest"] = {**default, "options": {**default.get("options", {})}}
    data["defaultTest"]["options"]["transform"] = TRANSFORM
    data["providers"] = ["echo"]
    # a line end keeps promptfoo from reading a prompt as a file name (JSON.parse skips it)
    data["prompts"] = [json.dumps(output) + "\n" for output in outputs]
    data.pop("outputPath", None)
    target.write_bytes(dump_yaml(data))
    results = promptfoo_eval(promptfoo, target)["results"]
    assert len(results) == len(kept) * len(outputs)
    verdicts = {}
    for item in results:
        row = rows[kept[item["testIdx"]]]
        output = outputs[item["promptIdx"]]
        assert json.loads(item["response"]["raw"]) == output, item["response"]
        error = (item.get("gradingResult") or {}).get("reason", "")
        assert "Error" not in error or item["success"], (row["id"], output, error)
        verdicts[(row["id"], output)] = item["success"]
    return [rows[index] for index in kept], verdicts


def recorded(row: dict[str, Any], output: str) -> Recorded:
    if row["metadata"]["case"]["oracleType"] != "expected-tool-calls":
        return Recorded(id=row["id"], output=output, has_output=True)
    try:
        calls = json.loads(output)
    except ValueError:
        calls = []  # a text answer makes no call
    return Recorded(id=row["id"], output=output, has_output=True, tool_calls=calls)


def graded(row: dict[str, Any], output: str) -> bool:
    return grade_row(row, recorded(row, output)).verdict == "pass"


#: promptfoo's tool-call-f1 at its default threshold 1 passes only when the tools called are
#: exactly the tools named (precision and recall 1), while the expected-tool-calls row it
#: imports as lets other calls be made (docs/grading.md): an output that calls get_weather and
#: get_time passes ``grade`` and fails promptfoo. The set has no way to say "no other tool",
#: so the import's derived-value note says it; this stays a known difference, held here.
TOOL_CALL_F1 = pytest.mark.xfail(
    strict=True, reason="tool-call-f1 fails an extra tool that expected-tool-calls allows"
)


@pytest.mark.parametrize(
    ("folder", "config"),
    [
        pytest.param(*suite, marks=TOOL_CALL_F1) if "normalized-tools" in suite[1] else suite
        for suite in SUITES
    ],
    ids=SUITE_IDS,
)
def test_promptfoo_and_grade_agree_on_a_public_suite(
    folder: str, config: str, promptfoo: str, tmp_path: Path
) -> None:
    _, data, rows = imported(folder, config)
    outputs = suite_outputs(data, [row for row in rows if _graded_by_code(row)])
    kept, verdicts = promptfoo_verdicts(promptfoo, tmp_path, folder, config, outputs)
    assert kept
    disagreements = [
        (row["id"], row.get("expected"), output, passed)
        for row in kept
        for output in outputs
        if (passed := verdicts[(row["id"], output)]) != graded(row, output)
    ]
    assert disagreements == []
    # each test passes some outputs and fails others
    for row in kept:
        assert {verdicts[(row["id"], output)] for output in outputs} == {True, False}, row["id"]


# --- the same outputs through every other runner --------------------------------------------------


def proof_set() -> tuple[list[dict[str, Any]], list[str]]:
    """One row per (row, output) of the suites graded by code from the output's text, with
    that output; the row ids say the suite, the test and the output."""
    rows: list[dict[str, Any]] = []
    outputs: list[str] = []
    for number, (folder, config) in enumerate(SUITES):
        _, data, suite = imported(folder, config)
        suite = [row for row in suite if _graded_by_code(row)]
        texts = [
            row for row in suite if row["metadata"]["case"]["oracleType"] != "expected-tool-calls"
        ]
        for row in texts:
            for index, output in enumerate(suite_outputs(data, suite)):
                row_id = f"s{number}-{row['id']}-o{index}"
                copied = copy.deepcopy(row)
                copied["metadata"]["case"]["caseId"] = row_id
                rows.append({**copied, "id": row_id})
                outputs.append(output)
    return rows, outputs


ROWS, OUTPUTS = proof_set()
VERDICTS = {
    row["id"]: (found.verdict, found.score)
    for row, output in zip(ROWS, OUTPUTS, strict=True)
    if (found := grade_row(row, recorded(row, output)))
}


def test_the_proof_set_has_both_verdicts() -> None:
    assert len(ROWS) > 300
    counts = [verdict for verdict, _ in VERDICTS.values()]
    assert counts.count("pass") > 50 and counts.count("fail") > 50
    assert set(counts) == {"pass", "fail"}


@pytest.mark.parametrize("runner", sorted(DRIVERS))
def test_each_runner_gives_the_same_verdicts(runner: str, tmp_path: Path) -> None:
    driver, part = DRIVERS[runner]
    found = driver(tmp_path, ROWS, OUTPUTS)
    wrong = {
        row["id"]: (row["expected"], output, found[row["id"]])
        for row, output in zip(ROWS, OUTPUTS, strict=True)
        if found[row["id"]] != (VERDICTS[row["id"]] if part is None else VERDICTS[row["id"]][part])
    }
    assert len(found) == len(ROWS)
    assert wrong == {}


def exported_natively(tmp_path: Path, fmt: str, name: str) -> tuple[Path, set[str]]:
    """The proof set exported to ``fmt``, and the rows it does not carry whole."""
    source = tmp_path / "set.json"
    source.write_text(
        json.dumps({"schemaVersion": "blueprint.eval-set/v1", "name": "proof", "rows": ROWS}),
        encoding="utf-8",
    )
    target = tmp_path / name
    result = convert(source, target, ConvertOptions(target_format=fmt))
    partial = {
        row_id
        for item in result.export.lossy
        if item.kind in ("weakened", "excluded")
        for row_id in item.row_ids or []
    }
    return target, partial


def test_omk_decides_the_exported_rows_as_grade_does(tmp_path: Path) -> None:
    target, partial = exported_natively(tmp_path, "omk", "eval-samples.json")
    samples = {sample["sample_id"]: sample for sample in json.loads(target.read_text())["samples"]}
    carried = [
        (row, output) for row, output in zip(ROWS, OUTPUTS, strict=True) if row["id"] not in partial
    ]
    assert len(carried) > len(ROWS) / 2
    cases = [(samples[row["id"]]["assertions"], output) for row, output in carried]
    passes = omk_verdicts(tmp_path, cases)
    wrong = [
        (row["id"], samples[row["id"]]["assertions"], output, passed)
        for (row, output), passed in zip(carried, passes, strict=True)
        if passed != (VERDICTS[row["id"]][0] == "pass")
    ]
    assert wrong == []


def test_apollia_decides_the_exported_rows_as_grade_does(tmp_path: Path) -> None:
    target, partial = exported_natively(tmp_path, "apollia", "suite.toml")
    tasks = {task["id"]: task for task in tomllib.loads(target.read_text())["tasks"]}
    carried = [
        (row, output) for row, output in zip(ROWS, OUTPUTS, strict=True) if row["id"] not in partial
    ]
    # the rows it weakens are written too, with only the assertions apollia-os has
    assert len(carried) > 50 and {row["id"] for row, _ in carried} <= set(tasks)
    wrong = [
        (row["id"], tasks[row["id"]]["assertions"], output)
        for row, output in carried
        if apollia_passes(tasks[row["id"]]["assertions"], output, 0, set())
        != (VERDICTS[row["id"]][0] == "pass")
    ]
    assert wrong == []


# --- omk's and apollia-os's own fixtures --------------------------------------------------------

OMK_FILES = [
    "seed/assertion-snippets.yaml",  # the format page's assertion snippets (seed/SOURCE.md)
    "seed/review.json",  # the format page's first example
    "public/agent-runtime/eval-samples.json",  # lizhiyao/oh-my-knowledge examples/agent-runtime
]
OMK_OUTPUTS = [
    "",
    "All done, nothing left to finish.",
    "TODO: handle the error",
    "fixme later",
    "Use a parameterized query.",
    "Use a PREPARED STATEMENT",
    "bind(user, ?)",
    "BIND(x, ?)",
    "bind(x)",
    "bind(\n?)",
    "The SQL is parameterized",
    "SQL injection: use parameterized queries; the old code is not safe",
    "Payments and Platform own billing-webhook",
    "payments, platform",
    "Check the signature and the retry queue",
    "SIGNATURE only",
]


def _original(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


@pytest.mark.parametrize("name", OMK_FILES)
def test_omk_rules_and_grade_agree_on_omk_samples(name: str, tmp_path: Path) -> None:
    path = NATIVE / "omk" / name
    samples = {sample["sample_id"]: sample for sample in _original(path)["samples"]}
    rows = list(data_rows(REGISTRY["omk"].open(path)))
    assert {row["id"] for row in rows} == set(samples)
    cases = [(samples[row["id"]]["assertions"], output) for row in rows for output in OMK_OUTPUTS]
    passes = iter(omk_verdicts(tmp_path, cases))
    disagreements = []
    for row in rows:
        # a sample with a rubric is a judged row whose assertions are its gate: its judge
        # passes every output here, so its assertions decide
        judge = {"pass": True} if row["metadata"]["case"]["oracleType"] == "rubric" else None
        for output in OMK_OUTPUTS:
            found = grade_row(row, Recorded(row["id"], output, has_output=True, judge=judge))
            passed = next(passes)
            if passed != (found.verdict == "pass"):
                disagreements.append((row["id"], output, passed, found.reason))
    assert disagreements == []


APOLLIA_FILES = [
    # nidal-z/apollia-os evals/tools/native-tools-offline.toml (its SOURCE.md)
    "public/apollia-os-native-tools-offline/native-tools-offline.toml",
    # (evals/oria/agent-loop.toml has no task whose assertions all import: each keeps a regex
    # with inline flags, an llm_judge or no regex at all, which grade does not apply)
]


def _sample(pattern: str) -> str:
    """A text the literal-like pattern of a task matches."""
    return re.sub(r"\\(.)", r"\1", pattern.replace("[^\\n]*", " in "))


def _runs(assertions: list[dict[str, Any]]) -> list[tuple[str, int, frozenset[str]]]:
    """Recorded runs of a task: (result, exit code, files that exist)."""
    patterns = [a["pattern"] for a in assertions if a["type"] == "regex"]
    files = frozenset(a["path"] for a in assertions if a["type"] == "file_exists")
    text = "\n".join(_sample(pattern) for pattern in patterns) or "done"
    middle = len(text) // 2
    results = [
        text,
        f"log line\n{text}\nDONE",
        text.lower(),
        text[1:],
        "",
        text[:middle] + "\n" + text[middle:],
    ]
    runs = [(result, 0, files) for result in results]
    runs += [(text, 1, files), (text, 0, frozenset())]
    return list(dict.fromkeys(runs))


@pytest.mark.parametrize("name", APOLLIA_FILES)
def test_apollia_rules_and_grade_agree_on_apollia_suites(name: str) -> None:
    path = NATIVE / "apollia" / name
    tasks = {task["id"]: task for task in tomllib.loads(path.read_text(encoding="utf-8"))["tasks"]}
    rows = {row["id"]: row for row in data_rows(REGISTRY["apollia"].open(path))}
    carried = []
    for task_id, task in tasks.items():
        assertions = task.get("assertions") or []
        regexes = [a for a in assertions if a["type"] == "regex"]
        checks = rows[task_id]["metadata"]["case"].get("checks") or []
        plain = all(a["type"] in ("exit_code", "file_exists", "regex") for a in assertions)
        # a task whose every assertion the import carries: each regex on the result a check
        if (
            plain
            and assertions
            and len(checks) == len(regexes)
            and all(a["on"] == "result" for a in regexes)
        ):
            carried.append(task_id)
    assert carried
    disagreements = []
    for task_id in carried:
        assertions = tasks[task_id]["assertions"]
        for result, code, files in _runs(assertions):
            state = {"records": {"exit_code": code}, "files": sorted(files)}
            found = grade_row(
                rows[task_id], Recorded(task_id, result, has_output=True, final_state=state)
            )
            passed = apollia_passes(assertions, result, code, set(files))
            if passed != (found.verdict == "pass"):
                disagreements.append((task_id, result, code, sorted(files), passed, found.reason))
    assert disagreements == []
