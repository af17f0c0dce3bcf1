"""blueprint check: the project's sets validated, round-tripped and compared with exports."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert
from conftest import EXAMPLES, document, git, row, write_json

runner = CliRunner()
EXAMPLE = EXAMPLES / "support-refunds.json"


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


CONFIG = """\
include = ["evals/*.csv", "evals/*.json"]
ignore = ["inherited-evaluator"]

[[set]]
path = "evals/refunds.json"
roundtrip = ["deepeval"]
export = [{format = "promptfoo", path = "exports/refunds.yaml"}]
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with two sets (CSV and JSON), a config and a committed export."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    (tmp_path / "exports").mkdir()
    convert(EXAMPLE, tmp_path / "evals" / "refunds.json")
    convert(EXAMPLE, tmp_path / "evals" / "support.csv")
    convert(
        EXAMPLE,
        tmp_path / "exports" / "refunds.yaml",
        ConvertOptions(target_format="promptfoo"),
    )
    (tmp_path / "blueprint.toml").write_text(CONFIG, encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "sets")
    return tmp_path


def break_csv_row(path: Path) -> int:
    """Give the first reference-answer row an oracle type that does not exist; return its
    physical line (no cell of the example spans lines)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    target = next(n for n, text in enumerate(lines) if n and ",reference-answer," in text)
    lines[target] = lines[target].replace(",reference-answer,", ",reference-answr,", 1)
    path.write_text("".join(lines), encoding="utf-8")
    return target + 1


def test_acceptance_passes_then_fails_on_a_broken_row(repo: Path) -> None:
    result = run("check")
    assert result.exit_code == 0, result.output
    assert "evals/support.csv" in result.stdout and "evals/refunds.json" in result.stdout

    line = break_csv_row(repo / "evals" / "support.csv")
    result = run("check", "--report", "github")
    assert result.exit_code == 1
    annotations = [a for a in result.stdout.splitlines() if a.startswith("::error")]
    assert any(
        f"file=evals/support.csv,line={line}," in annotation and "schema" in annotation
        for annotation in annotations
    ), result.stdout

    result = run("check", "--statistics")
    assert result.exit_code == 1
    assert "schema" in result.stdout and "findings by code" in result.stdout
    # statistics replace the list of findings
    assert "evals/support.csv:" not in result.stdout


def test_json_report_has_steps_and_statistics(repo: Path) -> None:
    break_csv_row(repo / "evals" / "support.csv")
    result = run("check", "--report", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["passed"] is False
    by_path = {entry["path"]: entry for entry in report["sets"]}
    assert by_path["evals/refunds.json"]["passed"] is True
    steps = {step["name"]: step["status"] for step in by_path["evals/refunds.json"]["steps"]}
    assert steps == {
        "validate": "passed",
        "canonical round-trip": "passed",
        "round-trip via deepeval": "passed",
        "export promptfoo exports/refunds.yaml": "passed",
        # the two sets hold the same inputs: reported, a warning, not a failure
        "duplicates across sets": "passed",
    }
    broken = {step["name"]: step["status"] for step in by_path["evals/support.csv"]["steps"]}
    assert broken == {
        "validate": "failed",
        "canonical round-trip": "skipped",
        "duplicates across sets": "passed",
    }
    assert {stat["code"] for stat in report["statistics"]} >= {"schema"}


def test_export_out_of_date_names_rows_and_the_command(repo: Path) -> None:
    data = json.loads((repo / "evals" / "refunds.json").read_text(encoding="utf-8"))
    data["rows"][0]["input"] = "a new question"
    write_json(repo / "evals" / "refunds.json", data)
    result = run("check", "--report", "json")
    assert result.exit_code == 1
    step = next(
        s
        for entry in json.loads(result.stdout)["sets"]
        for s in entry["steps"]
        if s["name"].startswith("export")
    )
    assert step["status"] == "failed"
    problems = "\n".join(step["problems"])
    assert data["rows"][0]["id"] in problems
    assert "blueprint convert evals/refunds.json exports/refunds.yaml --to promptfoo" in problems


def test_missing_export_and_missing_set_fail(repo: Path) -> None:
    (repo / "exports" / "refunds.yaml").unlink()
    with (repo / "blueprint.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[[set]]\npath = "evals/gone.csv"\n')
    result = run("check", "--report", "json")
    assert result.exit_code == 1
    report = {entry["path"]: entry for entry in json.loads(result.stdout)["sets"]}
    assert report["evals/gone.csv"]["passed"] is False
    export = [s for s in report["evals/refunds.json"]["steps"] if s["name"].startswith("export")]
    assert export[0]["status"] == "failed" and export[0]["summary"] == "missing"


def test_policies_fail_weakened_and_unfinished_sets(repo: Path) -> None:
    (repo / "blueprint.toml").write_text(
        'include = ["evals/refunds.json"]\nroundtrip = ["langsmith"]\nallow-weakened = false\n',
        encoding="utf-8",
    )
    report = json.loads(run("check", "--report", "json").stdout)
    steps = {s["name"]: s for s in report["sets"][0]["steps"]}
    assert steps["round-trip via langsmith"]["status"] == "failed"
    assert any("weakened" in p for p in steps["round-trip via langsmith"]["problems"])

    built = repo / "evals" / "starter.csv"
    assert run("new", "customer-support", "-o", built).exit_code == 0
    (repo / "blueprint.toml").write_text(
        'include = ["evals/starter.csv"]\nmax-starter-rows = 3\nignore = ["starter-example"]\n',
        encoding="utf-8",
    )
    result = run("check", "--report", "json")
    assert result.exit_code == 1
    steps = {s["name"]: s for s in json.loads(result.stdout)["sets"][0]["steps"]}
    assert steps["starter rows"]["status"] == "failed"
    # the starter-example warnings were ignored; the count is kept all the same
    assert steps["validate"]["status"] == "passed"


def test_per_family_ignore_and_fail_on_warning(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [
        row("a", caseFamily="tone", evaluator="llm-judge"),
        row("b", caseFamily="other", evaluator="llm-judge"),
    ]
    families = [
        {"id": "tone", "title": "Tone", "oracleType": "reference-answer", "severity": "minor"},
        {"id": "other", "title": "Other", "oracleType": "reference-answer", "severity": "minor"},
    ]
    write_json(tmp_path / "set.json", document(*rows, caseFamilies=families))
    (tmp_path / "blueprint.toml").write_text(
        'include = ["set.json"]\nfail-on = "warning"\n'
        '[per-family-ignore]\ntone = ["conditional-evaluator"]\n',
        encoding="utf-8",
    )
    report = json.loads(run("check", "--report", "json").stdout)
    issues = report["sets"][0]["validation"]["issues"]
    flagged = {(i["rowId"], i["code"]) for i in issues}
    assert ("b", "conditional-evaluator") in flagged
    assert ("a", "conditional-evaluator") not in flagged
    assert report["passed"] is False  # a warning fails with fail-on = "warning"


def test_junit_report_counts_failed_steps(repo: Path) -> None:
    (repo / "exports" / "refunds.yaml").write_text("tests: []\n", encoding="utf-8")
    result = run("check", "--report", "junit")
    assert result.exit_code == 1
    root = ElementTree.fromstring(result.stdout)
    failed = [
        case.get("name") for case in root.iter("testcase") if case.find("failure") is not None
    ]
    assert failed == ["export promptfoo exports/refunds.yaml"]


def test_paths_select_configured_sets(repo: Path) -> None:
    break_csv_row(repo / "evals" / "support.csv")
    # a hook passes every changed file: only configured sets among them are checked
    result = run("check", "evals/refunds.json", "README.md")
    assert result.exit_code == 0, result.output
    assert run("check", "evals/support.csv.set.json").exit_code == 1


def test_without_configuration_paths_are_checked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    convert(EXAMPLE, tmp_path / "a.jsonl")
    assert run("check", tmp_path).exit_code == 0
    assert run("check").exit_code == 2  # nothing configured and nothing named


def test_broken_configuration_exits_2(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "blueprint.toml").write_text('includes = ["*.json"]\n', encoding="utf-8")
    result = run("check", "--report", "json")
    assert result.exit_code == 2
    assert "blueprint.toml:1" in json.loads(result.stdout)["error"]


def test_several_processes_give_the_same_report(tmp_path: Path, monkeypatch) -> None:
    from blueprint.project.check import check_sets
    from blueprint.project.config import load_project
    from blueprint.project.discovery import project_sets

    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    for number in range(5):
        convert(EXAMPLE, tmp_path / "evals" / f"s{number}.jsonl")
    write_json(tmp_path / "evals" / "bad.json", document(row("a", caseId="b")))
    (tmp_path / "blueprint.toml").write_text('include = ["evals/*"]\n', encoding="utf-8")
    project = load_project(start=tmp_path)
    serial = check_sets(project, project_sets(project), jobs=1).to_json()
    pooled = check_sets(project, project_sets(project), jobs=2).to_json()
    assert serial == pooled and serial["passed"] is False and len(serial["sets"]) == 6


def test_a_case_in_both_the_dev_and_the_test_set_fails(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_json(tmp_path / "dev.json", document(row("a"), row("b")))
    test_rows = [row("c"), row("d")]
    test_rows[1]["input"] = "Question for A?"  # the dev set's first input, written otherwise
    write_json(tmp_path / "test.json", document(*test_rows))
    (tmp_path / "blueprint.toml").write_text(
        '[[set]]\npath = "dev.json"\nsplit = "dev"\n[[set]]\npath = "test.json"\nsplit = "test"\n',
        encoding="utf-8",
    )
    result = run("check", "--report", "json")
    assert result.exit_code == 1
    report = {entry["path"]: entry for entry in json.loads(result.stdout)["sets"]}
    steps = {s["name"]: s["status"] for s in report["test.json"]["steps"]}
    assert steps["duplicates across sets"] == "failed"
    issues = report["test.json"]["validation"]["issues"]
    assert [(i["code"], i["rowId"]) for i in issues] == [("duplicate-input-across-splits", "d")]
    assert report["dev.json"]["passed"] is True

    result = run("check", "--report", "github")
    assert "::error file=test.json," in result.stdout
    # a hook names only the changed file: it is still compared with the other sets
    assert run("check", "test.json").exit_code == 1
    assert run("check", "dev.json").exit_code == 0

    (tmp_path / "blueprint.toml").write_text(
        'duplicates = "off"\ninclude = ["*.json"]\n', encoding="utf-8"
    )
    assert run("check").exit_code == 0


# --- the configuration stays inside the project ------------------------------------------


@pytest.fixture
def outside(repo: Path) -> Path:
    """A folder beside the project (not under it) holding a valid set."""
    folder = repo.parent / f"{repo.name}-outside"
    folder.mkdir()
    convert(EXAMPLE, folder / "elsewhere.json")
    return folder


def configure(repo: Path, text: str) -> None:
    (repo / "blueprint.toml").write_text(text, encoding="utf-8")


def test_an_include_glob_leading_out_of_the_project_is_refused(repo: Path, outside: Path) -> None:
    pattern = f"../{outside.name}/*.json"
    configure(repo, f'include = ["evals/*.json", "{pattern}"]\n')
    result = run("check", "-q")
    assert result.exit_code == 2, result.output
    assert pattern in result.output and "blueprint.toml:1" in result.output


def test_allow_path_lets_the_configuration_name_that_folder(repo: Path, outside: Path) -> None:
    configure(repo, f'include = ["evals/*.json", "../{outside.name}/*.json"]\n')
    result = run("check", "-q", "--report", "json", "--allow-path", outside)
    assert result.exit_code == 0, result.output
    checked = {Path(item["path"]).name for item in json.loads(result.stdout)["sets"]}
    assert checked == {"refunds.json", "elsewhere.json"}


def test_a_committed_link_to_a_file_outside_is_refused(repo: Path, outside: Path) -> None:
    (repo / "evals" / "evil.json").symlink_to(outside / "elsewhere.json")
    result = run("check", "-q")
    assert result.exit_code == 2, result.output
    assert "evil.json" in result.output
    # excluded, it is never read, so it may lead anywhere
    configure(repo, CONFIG.replace("ignore =", 'exclude = ["evals/evil.json"]\nignore =', 1))
    assert run("check", "-q").exit_code == 0


def test_a_link_inside_the_project_is_followed(repo: Path) -> None:
    (repo / "shared").mkdir()
    convert(EXAMPLE, repo / "shared" / "common.json")
    (repo / "evals" / "common.json").symlink_to(repo / "shared" / "common.json")
    result = run("check", "-q", "--report", "json")
    assert result.exit_code == 0, result.output
    assert "common.json" in {Path(item["path"]).name for item in json.loads(result.stdout)["sets"]}


@pytest.mark.parametrize("include", ["evals/*", "evals", "evals/linked/*.json"])
def test_a_linked_folder_leading_outside_is_refused(
    repo: Path, outside: Path, include: str
) -> None:
    (repo / "evals" / "linked").symlink_to(outside, target_is_directory=True)
    configure(repo, f'include = ["{include}"]\n')
    result = run("check", "-q")
    # a walk never enters a linked folder; a glob that names one is refused
    assert result.exit_code == (0 if include == "evals" else 2), result.output


@pytest.mark.parametrize(
    "config",
    [
        'judge-reports = ["../{name}/judge.json"]\ninclude = ["evals/*.json"]\n',
        '[[set]]\npath = "evals/refunds.json"\njudge-reports = ["../{name}/judge.json"]\n',
        '[[set]]\npath = "evals/refunds.json"\n'
        'export = [{{format = "promptfoo", path = "../{name}/refunds.yaml"}}]\n',
        '[[set]]\npath = "../{name}/elsewhere.json"\n',
        'include = ["evals/*.json"]\nexclude = ["../{name}/**"]\n',
    ],
    ids=["judge-report", "set-judge-report", "export", "set-path", "exclude"],
)
def test_every_configured_path_must_lie_inside(repo: Path, outside: Path, config: str) -> None:
    configure(repo, config.format(name=outside.name))
    result = run("check", "-q")
    assert result.exit_code == 2, result.output
    assert f"../{outside.name}/" in result.output


def test_an_export_that_would_leave_out_every_row_fails_as_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    human = [
        row("behaviour-only", "expected-behavior-only"),
        row("expert", evaluator="human-expert", reviewerExpertise="refund policy"),
    ]
    write_json(tmp_path / "human.json", document(*human))
    (tmp_path / "goldens.json").write_text("[]\n", encoding="utf-8")
    (tmp_path / "blueprint.toml").write_text(
        '[[set]]\npath = "human.json"\nroundtrip = ["deepeval"]\n'
        'export = [{format = "deepeval", path = "goldens.json"}]\n',
        encoding="utf-8",
    )
    result = run("check", "--report", "json")
    assert result.exit_code == 1
    steps = {step["name"]: step for step in json.loads(result.stdout)["sets"][0]["steps"]}
    refused = steps["export deepeval goldens.json"]
    assert (refused["status"], refused["summary"]) == ("failed", "refused")
    assert any("--include-human-review" in problem for problem in refused["problems"])
    # a round trip still shows the loss (all of it, declared) rather than refusing
    assert steps["round-trip via deepeval"]["status"] == "passed"


def test_check_grades_the_set_and_runs_its_gates(repo: Path) -> None:
    results = repo / "evals" / "results.jsonl"
    baseline = repo / "evals" / "baseline.jsonl"
    source = (EXAMPLES / "support-refunds.results.jsonl").read_text(encoding="utf-8")
    baseline.write_text(source, encoding="utf-8")
    results.write_text(source, encoding="utf-8")
    config = (
        'include = []\n[[set]]\npath = "evals/refunds.json"\ncanonical-roundtrip = false\n'
        '[set.grade]\nresults = ["evals/results.jsonl"]\nbaseline = ["evals/baseline.jsonl"]\n'
    )
    (repo / "blueprint.toml").write_text(config, encoding="utf-8")
    done = run("check", "--report", "json")
    assert done.exit_code == 0, done.output
    steps = {s["name"]: s for s in json.loads(done.stdout)["sets"][0]["steps"]}
    assert steps["grade"]["status"] == "passed"
    # a claim the set's one high-risk cell cannot make fails the step, naming the gate
    (repo / "blueprint.toml").write_text(config + "claim = 0.1\n", encoding="utf-8")
    done = run("check", "--report", "json")
    assert done.exit_code == 1
    steps = {s["name"]: s for s in json.loads(done.stdout)["sets"][0]["steps"]}
    assert steps["grade"]["status"] == "failed"
    assert any(problem.startswith("gate risk-claim") for problem in steps["grade"]["problems"])
    (repo / "blueprint.toml").write_text(config + "claim = 2\n", encoding="utf-8")
    assert run("check").exit_code == 2  # a claim outside (0, 1) is a configuration error
