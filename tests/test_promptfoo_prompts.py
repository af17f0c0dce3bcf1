"""A promptfoo config's prompts become its tests' input, and go back to promptfoo as they came."""

from __future__ import annotations

import importlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.formats import REGISTRY
from blueprint.formats.promptfoo.prompts import Prompts, prompt_input, read_prompts, vars_from_text
from blueprint.validation.validate import validate_file
from conftest import FIXTURES

PUBLIC = FIXTURES / "native" / "promptfoo" / "public"

ONE_PROMPT = """\
prompts:
  - 'Hello! How are you?'
providers: [echo]
tests:
  - assert: [{type: g-eval, value: Coherence}]
  - assert: [{type: g-eval, value: Fluency}]
"""

ONE_TEMPLATE = """\
prompts:
  - 'Tell me about {{ topic }} in {{n}} words'
providers: [echo]
defaultTest:
  vars: {n: 10}
tests:
  - vars: {topic: cats}
    assert: [{type: contains, value: cat}]
  - vars: {topic: '{{ live }}'}
    assert: [{type: contains, value: dog}]
"""

SEVERAL = """\
prompts:
  - 'Summarize {{text}}'
  - id: file://prompts.txt
    label: from a file
providers: [echo]
tests:
  - vars: {text: a}
    assert: [{type: contains, value: a}]
  - assert: [{type: contains, value: b}]
"""


def _config(tmp_path: Path, text: str, **files: str) -> Path:
    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return list(data_rows(REGISTRY["promptfoo"].open(path)))


def _derived(row: dict[str, Any]) -> dict[str, str]:
    return row["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]


def _there_and_back(source: Path, tmp_path: Path) -> bytes:
    imported = tmp_path / "out" / "set.json"
    imported.parent.mkdir(exist_ok=True)
    convert(source, imported, ConvertOptions(force=True))
    back = tmp_path / "out" / "back.yaml"
    convert(imported, back, ConvertOptions(target_format="promptfoo", force=True))
    return back.read_bytes()


# --- reading the prompts --------------------------------------------------------------------


def test_one_prompt_is_the_input_of_a_test_without_vars(tmp_path: Path) -> None:
    rows = _rows(_config(tmp_path, ONE_PROMPT))
    assert [row["input"] for row in rows] == ["Hello! How are you?"] * 2
    assert all("input" in _derived(row) for row in rows)  # derived, to be confirmed


def test_one_prompt_is_rendered_with_the_vars_when_that_is_plain(tmp_path: Path) -> None:
    plain, live = _rows(_config(tmp_path, ONE_TEMPLATE))
    assert plain["input"] == "Tell me about cats in 10 words"  # the defaultTest's var too
    # a var holding a template is rendered by promptfoo at run time: prompt and vars
    assert live["input"] == {
        "prompt": "Tell me about {{ topic }} in {{n}} words",
        "vars": {"n": 10, "topic": "{{ live }}"},
    }
    assert "input" in _derived(plain) and "input" in _derived(live)


def test_several_prompts_are_said_on_every_row(tmp_path: Path) -> None:
    path = _config(tmp_path, SEVERAL, **{"prompts.txt": "First {{text}}\n---\nSecond\n"})
    rows = _rows(path)
    assert [row["input"] for row in rows] == [{"text": "a"}, {}]  # the vars, as before
    assert all("3 prompts" in _derived(row)["input"] for row in rows)
    report = validate_file(path)
    flagged = [i.path for i in report.issues if i.code == "derived-value" and "input" in i.path]
    assert len(flagged) == len(rows)


@pytest.mark.parametrize(
    ("prompts", "files", "texts"),
    [
        ("'plain text'", {}, ("plain text",)),
        ("[{raw: 'from raw', label: x}]", {}, ("from raw",)),
        ("{'file://p.txt': label}", {"p.txt": "legacy form\n"}, ("legacy form",)),
        ("[file://p.txt]", {"p.txt": "\n  one\n---\n\ntwo  \n---\n"}, ("one", "two")),
        ("[file://p.md]", {"p.md": "# Title\n{{x}}\n"}, ("# Title\n{{x}}\n",)),
        ("[file://p*.txt]", {"p1.txt": "globbed"}, ("globbed",)),
        ("['Is 1/2 more?']", {}, ("Is 1/2 more?",)),  # a pattern matching nothing is text
        (
            "[file://chat.json]",
            {"chat.json": '[\n  {"role": "user", "content": "{{q}}"}\n]\n'},
            ('[{"role":"user","content":"{{q}}"}]',),
        ),
        ("[file://p.jsonl]", {"p.jsonl": '[{"a": 1}]\n\n["b"]\n'}, ('[{"a": 1}]', '["b"]')),
        (
            "[file://p.yaml]",
            {"p.yaml": "- role: user\n  content: hi\n"},
            ('[{"role":"user","content":"hi"}]',),
        ),
    ],
)
def test_prompts_read_as_promptfoo_reads_them(
    tmp_path: Path, prompts: str, files: dict[str, str], texts: tuple[str, ...]
) -> None:
    import yaml

    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    config = yaml.safe_load(f"prompts: {prompts}")
    found = read_prompts(config, tmp_path)
    assert found is not None and found.texts == texts


@pytest.mark.parametrize(
    ("prompts", "files"),
    [
        ("[file://prompt.py]", {"prompt.py": "def f(): pass\n"}),
        ("[file://prompts.js:build]", {"prompts.js": ""}),
        ("[file://missing.txt]", {}),
        ("['exec:./make-prompt.sh']", {}),
        ("[file://p.json]", {"p.json": '{"temperature": 0.5}'}),  # a float: JS may differ
        ("[file://p.csv]", {"p.csv": "prompt\nhi\n"}),
        ("[{label: nothing}]", {}),
        ("[" + "9" * 5000 + ".txt]", {}),  # a name too long to look up (ENAMETOOLONG)
        ("[file://" + "a/" * 3000 + "p.txt]", {}),  # a path too long
    ],
)
def test_prompts_that_run_code_or_are_not_there_are_named_not_read(
    tmp_path: Path, prompts: str, files: dict[str, str]
) -> None:
    import yaml

    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    found = read_prompts(yaml.safe_load(f"prompts: {prompts}"), tmp_path)
    assert found is not None and found.texts is None and found.unread


def test_an_unread_prompt_keeps_the_vars_as_the_input(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        "prompts: [file://prompt.py]\n"
        "tests:\n  - vars: {q: hi}\n    assert: [{type: equals, value: x}]\n",
        **{"prompt.py": "def f(context): return 'x'\n"},
    )
    (row,) = _rows(path)
    assert row["input"] == {"q": "hi"}
    assert "input" in _derived(row)


def test_a_tests_file_without_a_config_keeps_its_vars(tmp_path: Path) -> None:
    path = tmp_path / "tests.yaml"
    path.write_text("- vars: {q: hi}\n  assert: [{type: equals, value: x}]\n", encoding="utf-8")
    (row,) = _rows(path)
    assert row["input"] == {"q": "hi"} and "input" not in _derived(row)


@pytest.mark.parametrize(
    ("template", "variables", "options", "expected"),
    [
        ("Hi {{name}}", {"name": "Ann"}, {}, "Hi Ann"),
        ("Hi {{ name }}!", {"name": "Ann", "unused": [1]}, {}, "Hi Ann!"),
        ("Count {{n}}", {"n": 3}, {}, "Count 3"),
        ("Q: {{q}}", {"q": "x"}, {"prefix": "P ", "suffix": " S"}, "P Q: x S"),
        ("Hi {{name | upper}}", {"name": "Ann"}, {}, None),
        ("{% if a %}x{% endif %}", {"a": "1"}, {}, None),
        ("Hi {{name}}", {}, {}, None),  # Nunjucks would render an absent var as nothing
        ("Hi {{name}}", {"name": True}, {}, None),  # JavaScript writes true
        ("Hi {{name}}", {"name": 1.0}, {}, None),  # and 1 for 1.0
        ("Hi {{name}}", {"name": "file://n.txt"}, {}, None),  # promptfoo loads the file
        ("Hi {{name}}", {"name": ["a", "b"]}, {}, None),  # one test per value
        ("Hi {{none}}", {"none": "x"}, {}, None),  # a Nunjucks literal, not a var
    ],
)
def test_rendering_is_a_plain_substitution_or_nothing(
    template: str, variables: dict[str, Any], options: dict[str, Any], expected: str | None
) -> None:
    rendering = prompt_input(template, variables, options, {})
    if expected is None:
        prefixed = options.get("prefix", "") + template + options.get("suffix", "")
        assert rendering.value == {"prompt": prefixed, "vars": variables}
    else:
        assert rendering.value == expected


def test_the_default_tests_prefix_applies_when_the_test_has_none() -> None:
    assert prompt_input("{{q}}", {"q": "x"}, {}, {"prefix": "> "}).value == "> x"
    assert prompt_input("{{q}}", {"q": "x"}, {"prefix": "! "}, {"prefix": "> "}).value == "! x"


def test_an_edited_rendered_prompt_is_read_back_into_its_vars() -> None:
    template = "Tell me about {{topic}} in {{n}} words ({{topic}})"
    found = vars_from_text(template, "Tell me about dogs in 5 words (dogs)", {"n": 5, "o": 1})
    assert found == {"n": 5, "o": 1, "topic": "dogs"}
    assert vars_from_text(template, "Something else entirely", {"n": 5}) is None
    assert vars_from_text("Static", "Edited", {}) is None


def test_the_kept_prompts_read_back_as_they_were() -> None:
    for prompts in (Prompts(2, ("a", "b")), Prompts(1, unread="a function")):
        assert Prompts.of_kept(json.loads(json.dumps(prompts.kept()))) == prompts
    assert Prompts.of_kept({"texts": ["a"]}) is None


# --- writing back ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", [ONE_PROMPT, ONE_TEMPLATE, SEVERAL])
def test_the_config_goes_back_to_promptfoo_as_it_came(tmp_path: Path, text: str) -> None:
    path = _config(tmp_path, text, **{"prompts.txt": "First {{text}}\n---\nSecond\n"})
    # written in out/, the config names its prompt file from there
    expected = path.read_bytes().replace(b"file://prompts.txt", b"file://../prompts.txt")
    assert _there_and_back(path, tmp_path) == expected


@pytest.mark.parametrize("name", ["g-eval", "csv-metadata", "store-and-reuse-outputs"])
def test_public_configs_keep_the_derived_input_out_of_their_vars(tmp_path: Path, name: str) -> None:
    source = PUBLIC / name / "promptfooconfig.yaml"
    back = _there_and_back(source, tmp_path).decode("utf-8")
    if name == "g-eval":  # no test there has vars, and none is given any
        assert back == source.read_text(encoding="utf-8")
    assert "vars:\n      input:" not in back


def test_an_edited_rendered_input_reaches_the_prompts_var(tmp_path: Path) -> None:
    from blueprint.formats.promptfoo import read_yaml

    source = _config(tmp_path, ONE_TEMPLATE)
    imported = tmp_path / "set.json"
    convert(source, imported, ConvertOptions())
    document = json.loads(imported.read_text(encoding="utf-8"))
    document["rows"][0]["input"] = "Tell me about birds in 10 words"
    imported.write_text(json.dumps(document), encoding="utf-8")
    result = convert(imported, tmp_path / "back.yaml", ConvertOptions(target_format="promptfoo"))
    first = read_yaml(tmp_path / "back.yaml")["tests"][0]
    assert first["vars"] == {"topic": "birds"}
    assert any("topic" in note for note in result.export.notes)


# --- other runners receive the input --------------------------------------------------------


@pytest.mark.conformance
# langsmith warns that outputs is deprecated for reference_outputs; both are read
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_prompt_only_test_goes_to_langsmith_with_inputs(tmp_path: Path) -> None:
    imported = tmp_path / "set.json"
    convert(_config(tmp_path, ONE_PROMPT), imported, ConvertOptions())
    target = tmp_path / "examples.jsonl"
    convert(imported, target, ConvertOptions(target_format="langsmith"))
    examples = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [example["inputs"] for example in examples] == [{"input": "Hello! How are you?"}] * 2
    try:
        schemas = importlib.import_module("langsmith.schemas")
    except ImportError:
        pytest.skip("langsmith is not installed (pip install -e '.[conformance]')")
    for example in examples:
        checked = schemas.ExampleCreate.model_validate(example)
        assert checked.inputs == example["inputs"] and isinstance(checked.id, uuid.UUID)


def test_writing_a_config_away_from_its_prompt_files_says_so(tmp_path: Path) -> None:
    from blueprint.formats.promptfoo.cases import Suite, moved_prompts

    (tmp_path / "p.txt").write_text("Hi {{name}}", encoding="utf-8")
    config = {"prompts": ["file://p.txt"]}
    suite = Suite(config=config, prompts=read_prompts(config, tmp_path))
    assert moved_prompts(suite, tmp_path / "back.yaml") is None
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert moved_prompts(suite, elsewhere / "back.yaml") is not None
    inline = {"prompts": ["Hi {{name}}"]}
    assert (
        moved_prompts(
            Suite(config=inline, prompts=read_prompts(inline, tmp_path)), elsewhere / "b.yaml"
        )
        is None
    )
