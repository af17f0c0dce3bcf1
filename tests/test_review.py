"""Git-aware diff and the pull-request review: a set against its version at a revision."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import convert
from blueprint.diff import diff_sets, load_for_diff
from blueprint.project.gitref import load_at_revision
from blueprint.reports.review import render_markdown, review
from conftest import EXAMPLES, git

runner = CliRunner()
EXAMPLE = EXAMPLES / "support-refunds.json"


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def edit_csv(path: Path, edit) -> None:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    edit(rows[0], rows)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(rows)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    convert(EXAMPLE, tmp_path / "set.csv")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "first")

    def change(header: list[str], rows: list[list[str]]) -> None:
        behaviour = header.index("case.expectedBehavior")
        provenance = header.index("case.provenance")
        rows[1][behaviour] += " It also apologises."
        rows[2][provenance] = "starter-example"
        del rows[3]

    edit_csv(tmp_path / "set.csv", change)
    git(tmp_path, "commit", "-qam", "second")
    return tmp_path


def test_acceptance_markdown_lists_changed_and_removed_rows(repo: Path) -> None:
    before = load_for_diff(EXAMPLE)
    ids = [key[0] for key in before.rows_by_key]
    result = run("diff", "--against", "HEAD~1", "set.csv", "--markdown", "out.md")
    assert result.exit_code == 1, result.output
    text = (repo / "out.md").read_text(encoding="utf-8")
    assert "#### Removed rows" in text and f"`{ids[2]}`" in text
    assert "#### Changed rows" in text
    assert "`$.metadata.case.expectedBehavior`" in text
    assert "`$.metadata.case.provenance`" in text
    # a reviewer's warnings: gold turned starter, behaviour changed without a new version
    warning = text.split("> [!WARNING]", 1)[1].split("\n\n", 1)[0]
    assert f"`{ids[1]}`" in warning and f"`{ids[0]}`" in warning


def test_against_a_revision_is_identical_to_itself(repo: Path) -> None:
    assert run("diff", "--against", "HEAD", "set.csv").exit_code == 0


def test_json_review_names_the_transitions(repo: Path) -> None:
    result = run("diff", "--against", "HEAD~1", "set.csv", "--report", "json")
    data = json.loads(result.stdout)
    assert data["left"] == "set.csv@HEAD~1" and len(data["removed"]) == 1
    assert [t["after"] for t in data["review"]["demoted"]] == ["starter-example"]
    assert data["review"]["unversioned"][0]["fields"] == ["metadata.case.expectedBehavior"]


def test_a_behaviour_changed_without_a_new_version_is_a_finding_with_a_code(repo: Path) -> None:
    ids = [key[0] for key in load_for_diff(EXAMPLE).rows_by_key]
    result = run("diff", "--against", "HEAD~1", "set.csv", "--report", "json")
    (finding,) = json.loads(result.stdout)["review"]["findings"]
    assert (finding["code"], finding["severity"], finding["rowId"]) == (
        "unversioned-behavior-change",
        "warning",
        ids[0],
    )
    assert finding["path"] == "$.rows[0].metadata.case.version"
    assert "expectedBehavior" in finding["message"]
    text = run("diff", "--against", "HEAD~1", "set.csv")
    assert f"warning unversioned-behavior-change {ids[0]}" in text.stderr
    markdown = run("diff", "--against", "HEAD~1", "set.csv", "--markdown", "-")
    assert "`unversioned-behavior-change`" in markdown.stdout


@pytest.mark.parametrize(
    ("field", "value", "version", "found"),
    [
        ("expectedBehavior", "Refuses politely.", None, True),
        ("expectedBehavior", "Refuses politely.", "3", False),  # versioned: no finding
        ("scenario", "A new scenario", None, False),  # not the expected behaviour
        ("passLogic", "any refusal", None, True),
    ],
)
def test_which_changes_need_a_new_version(
    tmp_path: Path, field: str, value: str, version: str | None, found: bool
) -> None:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    (tmp_path / "before.json").write_text(json.dumps(data), encoding="utf-8")
    case = data["rows"][1]["metadata"]["case"]
    case[field] = value
    if version is not None:
        case["version"] = version
    (tmp_path / "after.json").write_text(json.dumps(data), encoding="utf-8")
    before, after = load_for_diff(tmp_path / "before.json"), load_for_diff(tmp_path / "after.json")
    findings = review(before, after, diff_sets(before, after)).findings
    assert [(f.code, f.row_index) for f in findings] == (
        [("unversioned-behavior-change", 1)] if found else []
    )


def test_the_other_side_may_be_another_format(repo: Path) -> None:
    # the set moved from CSV to JSON in the working tree: compare with the CSV at HEAD
    convert(repo / "set.csv", repo / "set.json")
    git(repo, "rm", "-q", "set.csv", "set.csv.set.json")
    git(repo, "add", "set.json")
    git(repo, "commit", "-qm", "json now")
    before = load_at_revision(repo / "set.csv", "HEAD~1")
    after = load_for_diff(repo / "set.json")
    assert diff_sets(before, after).identical


def test_a_set_that_did_not_exist_is_all_added(repo: Path) -> None:
    convert(EXAMPLE, repo / "new.jsonl")
    result = run("diff", "--against", "HEAD", "new.jsonl", "--report", "json")
    assert result.exit_code == 1
    assert len(json.loads(result.stdout)["added"]) == 8


def test_promotion_is_good_news(tmp_path: Path) -> None:
    convert(EXAMPLE, tmp_path / "a.json")
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    gold = data["rows"][0]["metadata"]["case"]["provenance"]
    data["rows"][0]["metadata"]["case"]["provenance"] = "starter-example"
    (tmp_path / "before.json").write_text(json.dumps(data), encoding="utf-8")
    before = load_for_diff(tmp_path / "before.json")
    after = load_for_diff(tmp_path / "a.json")
    summary = review(before, after, diff_sets(before, after))
    assert [(t.before, t.after) for t in summary.promoted] == [("starter-example", gold)]
    assert not summary.demoted and not summary.unversioned
    assert "[!TIP]" in render_markdown([summary])


def test_grading_changes_of_rows_and_families(tmp_path: Path) -> None:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    before_path = tmp_path / "before.json"
    before_path.write_text(json.dumps(data), encoding="utf-8")
    family = data["caseFamilies"][0]
    family["evaluator"] = "llm-judge"
    for item in data["rows"]:
        if item["metadata"]["case"].get("caseFamily") == family["id"]:
            item["metadata"]["case"]["evaluator"] = "llm-judge"
    (tmp_path / "after.json").write_text(json.dumps(data), encoding="utf-8")
    before, after = load_for_diff(before_path), load_for_diff(tmp_path / "after.json")
    summary = review(before, after, diff_sets(before, after))
    subjects = {t.subject for t in summary.grading}
    assert f"case family {family['id']}" in subjects
    assert "#### Oracle types and evaluators" in render_markdown([summary])


def test_markdown_cells_keep_pipes_and_newlines_inside(tmp_path: Path) -> None:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    (tmp_path / "before.json").write_text(json.dumps(data), encoding="utf-8")
    data["rows"][0]["input"] = "a | b\nc `d`"
    (tmp_path / "after.json").write_text(json.dumps(data), encoding="utf-8")
    before, after = load_for_diff(tmp_path / "before.json"), load_for_diff(tmp_path / "after.json")
    text = render_markdown([review(before, after, diff_sets(before, after))])
    row_line = next(line for line in text.splitlines() if line.startswith("| `$.input`"))
    assert row_line.count(" | ") == 3  # four cells: the pipe inside is escaped
    assert "\\|" in row_line


def test_markdown_output_is_not_overwritten_without_force(repo: Path) -> None:
    (repo / "out.md").write_text("keep", encoding="utf-8")
    result = run("diff", "--against", "HEAD~1", "set.csv", "--markdown", "out.md")
    assert result.exit_code == 2
    assert (repo / "out.md").read_text(encoding="utf-8") == "keep"
    result = run("diff", "--against", "HEAD~1", "set.csv", "--markdown", "out.md", "--force")
    assert result.exit_code == 1 and "Removed rows" in (repo / "out.md").read_text()


@pytest.mark.parametrize("revision", ["no-such-branch", "--output=/tmp/x"])
def test_bad_revisions_exit_2(repo: Path, revision: str) -> None:
    result = run("diff", f"--against={revision}", "set.csv")
    assert result.exit_code == 2


def test_outside_a_repository_exits_2(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    convert(EXAMPLE, tmp_path / "a.json")
    result = run("diff", "--against", "HEAD", "a.json")
    assert result.exit_code == 2


def test_diff_needs_two_sets_without_against(repo: Path) -> None:
    assert run("diff", "set.csv").exit_code == 2


def test_the_older_side_is_read_from_its_copy_not_held(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blueprint import diff as diff_module
    from blueprint.diff import FileSet
    from blueprint.project.gitref import revision_for_diff

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)
    with revision_for_diff(repo / "set.csv", "HEAD~1") as older:
        assert isinstance(older, FileSet) and older.label.endswith("set.csv@HEAD~1")
        assert [path.name[:19] for path in scratch.iterdir()] == ["blueprint-revision-"]
    assert not list(scratch.iterdir())  # the copy goes with the context
    # neither side of --against is read whole
    monkeypatch.setattr(diff_module, "collect", lambda *_: pytest.fail("a side was read whole"))
    result = run("diff", "--against", "HEAD~1", "set.csv", "--report", "json")
    assert result.exit_code == 1, result.output
    assert len(json.loads(result.stdout)["removed"]) == 1
    assert not list(scratch.iterdir())


def test_a_row_that_does_not_read_at_the_revision_names_the_set_there(repo: Path) -> None:
    convert(EXAMPLE, repo / "set.jsonl")
    mended = (repo / "set.jsonl").read_text(encoding="utf-8")
    lines = mended.splitlines(keepends=True)
    lines[2] = '{"id": "broken", \n'
    (repo / "set.jsonl").write_text("".join(lines), encoding="utf-8")
    git(repo, "add", "set.jsonl", "set.jsonl.set.json")
    git(repo, "commit", "-qm", "a broken row")
    (repo / "set.jsonl").write_text(mended, encoding="utf-8")  # mended in the working tree
    result = run("diff", "--against", "HEAD", "set.jsonl")
    assert result.exit_code == 2, result.output
    assert "set.jsonl@HEAD:3" in result.output
    assert "blueprint-revision" not in result.output


def test_several_sets_against_a_revision_each_compared(repo: Path) -> None:
    convert(EXAMPLE, repo / "other.json")
    git(repo, "add", "other.json")
    git(repo, "commit", "-qm", "another set")
    result = run("diff", "--against", "HEAD~1", "set.csv", "other.json", "--report", "json")
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert [len(item["removed"]) for item in document["sets"]] == [0, 0]
    assert [len(item["added"]) for item in document["sets"]] == [0, 8]


def test_no_room_for_the_older_side_is_an_output_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from blueprint.project import gitref

    real = gitref._git

    def full(folder: Path, *arguments: str, into: Any = None) -> bytes:
        if into is not None:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(folder, *arguments)

    monkeypatch.setattr(gitref, "_git", full)
    result = run("diff", "--against", "HEAD~1", "set.csv")
    assert result.exit_code == 2, result.output
    assert "TMPDIR" in result.output
