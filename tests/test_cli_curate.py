"""The edit commands end to end: refusals and dry runs leave every file as it was."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.diff import diff_sets, load_for_diff
from blueprint.formats import REGISTRY
from conftest import row
from curation_sets import (
    SUFFIXES,
    curation_rows,
    curation_set,
    header,
    header_of,
    rows_of,
    snapshot,
    write_set,
)

runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


Invocations = tuple[list[object], list[object]]


def _merge(target: Path) -> Invocations:
    folder, suffix = target.parent, target.suffix
    # a: the same row as the set's own, z: a new one
    other = write_set(folder / f"other{suffix}", [curation_rows()[0], row("z")])
    clash = write_set(folder / f"clash{suffix}", [row("d", expected="no")])
    out = folder / f"merged{suffix}"
    return (["merge", target, other, "-o", out], ["merge", target, clash, "-o", out])


def cmd(command: str, target: Path, options: str = "") -> list[object]:
    """A command line: the command's words, the set, then options (split on spaces)."""
    return [*command.split(), target, *options.split()]


#: per command: an edit that works, and one that is refused (exit 1)
EDITS: dict[str, Callable[[Path], Invocations]] = {
    "oracle": lambda s: (
        cmd("oracle", s, "d acceptable-set"),
        cmd("oracle", s, "d rubric --evaluator exact-or-programmatic --drop-expected"),
    ),
    "add": lambda s: (
        cmd(
            "add",
            s,
            "--id f --oracle-type reference-answer --input q --expected x --behavior b"
            " --provenance expert-authored --actor customer --metadata source=chat",
        ),
        cmd(
            "add",
            s,
            "--family lookup --id a --input q --expected x --behavior b"
            " --provenance expert-authored",
        ),
    ),
    "rm": lambda s: (cmd("rm", s, "b d"), cmd("rm", s, "b no-such-row")),
    "rename": lambda s: (cmd("rename", s, "b b2"), cmd("rename", s, "b a")),
    "family add": lambda s: (
        cmd("family add", s, "fresh --oracle-type rubric --evaluator llm-judge"),
        cmd("family add", s, "fresh --oracle-type rubric --evaluator exact-or-programmatic"),
    ),
    "family edit": lambda s: (
        cmd("family edit", s, "lookup --title Look-ups --oracle-type acceptable-set"),
        cmd("family edit", s, "tone --evaluator exact-or-programmatic"),
    ),
    "family rm": lambda s: (
        cmd("family rm", s, "lookup --rows detach"),
        cmd("family rm", s, "lookup"),
    ),
    "accept": lambda s: (cmd("accept", s, "e --field oracleType"), cmd("accept", s, "zz")),
    "promote": lambda s: (
        cmd(
            "promote",
            s,
            "d --provenance expert-authored --reviewer Ana --reviewed-at 2025-03-01T09:30:00+01:00",
        ),
        cmd("promote", s, "a --provenance expert-authored --reviewer Ana"),
    ),
    "merge": _merge,
}


def _comparable(diff: dict) -> dict:
    return {key: diff[key] for key in ("added", "removed", "changed", "setFields")}


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("command", list(EDITS))
def test_refusal_and_dry_run_write_nothing_and_the_dry_run_shows_the_edit(
    tmp_path: Path, command: str, suffix: str
) -> None:
    folder = tmp_path / "set"
    folder.mkdir()
    target = curation_set(folder, suffix)
    good, bad = EDITS[command](target)
    before = snapshot(folder)

    refused = run(*bad)
    assert refused.exit_code == 1, refused.output
    assert snapshot(folder) == before  # byte-identical, and no new file

    dry = run(*good, "--dry-run", "--report", "json")
    assert dry.exit_code == 0, dry.output
    assert snapshot(folder) == before
    shown = json.loads(dry.stdout)["diff"]

    kept = tmp_path / "before"
    shutil.copytree(folder, kept)
    done = run(*good, "--report", "json")
    assert done.exit_code == 0, done.output
    assert snapshot(folder) != before
    compared = target if command != "merge" else folder / f"merged{suffix}"
    actual = diff_sets(load_for_diff(kept / target.name), load_for_diff(compared))
    assert _comparable(actual.to_json()) == _comparable(shown)

    # the edit kept the format, and a CSV its own column order
    codec = REGISTRY[suffix.lstrip(".")]
    assert list(codec.open(compared).rows)
    if suffix == ".csv":
        old = codec.open(kept / target.name).columns or ()
        new = codec.open(compared).columns or ()
        assert [name for name in new if name in old] == [name for name in old if name in new]
        assert new[:2] == ("metadata.source", "case.provenance")


def test_help_lists_the_curation_commands() -> None:
    result = run("--help")
    for command in ("rm", "rename", "family", "merge", "accept", "promote", "oracle", "add"):
        assert f" {command} " in result.stdout
    assert run("family", "--help").exit_code == 0


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_refusal_in_json_says_so_on_stdout(tmp_path: Path, suffix: str) -> None:
    target = curation_set(tmp_path, suffix)
    result = run("rm", target, "nope", "--report", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["exitCode"] == 1


def test_edits_say_what_they_did_on_stderr(tmp_path: Path) -> None:
    target = curation_set(tmp_path, ".json")
    result = run("rm", target, "b")
    assert result.exit_code == 0 and result.stdout == ""
    assert "removed 1 row(s): b" in result.stderr
    dry = run("rename", target, "a", "a2", "--dry-run")
    assert "would rename a to a2" in dry.stderr and "dry run" in dry.stderr
    assert dry.stdout == ""


def test_add_takes_every_optional_case_field(tmp_path: Path) -> None:
    target = curation_set(tmp_path, ".csv")
    result = run(
        "add", target, "--id", "f", "--oracle-type", "expected-tool-calls",
        "--evaluator", "trajectory-or-state-check",
        "--input-json", '{"order": "A-1"}',
        "--expected-json", '{"calls": [{"name": "refund", "arguments": {"order": "A-1"}}]}',
        "--behavior", "refunds the order", "--provenance", "observed-incident",
        "--scenario", "s", "--actor", "customer", "--reversibility", "R2",
        "--blast-radius", "B1", "--linked-concern", "money", "--linked-concern", "trust",
        "--tool-action-expectation", "refund once", "--escalation-expectation", "none",
        "--case-version", "2", "--retirement-condition", "when refunds move",
        "--extensions", '{"team": {"owner": "payments"}}',
        "--metadata", "source=ticket", "--metadata", '{"ticket": 42}',
        "--unacceptable", "refunds twice", "--criterion", "one call",
        "--reviewer-expertise", "payments", "--pass-logic", "all calls",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    added = rows_of(target)["f"]
    case = added["metadata"]["case"]
    assert case["actor"] == "customer" and case["reversibility"] == "R2"
    assert case["blastRadius"] == "B1" and case["linkedConcerns"] == ["money", "trust"]
    assert case["toolActionExpectation"] == "refund once"
    assert case["escalationExpectation"] == "none"
    assert case["version"] == "2" and case["retirementCondition"] == "when refunds move"
    assert case["extensions"] == {"team": {"owner": "payments"}}
    assert "caseFamily" not in case and case["evaluator"] == "trajectory-or-state-check"
    assert added["metadata"]["source"] == "ticket" and added["metadata"]["ticket"] == 42
    assert run("validate", target, "--report", "json").exit_code == 0


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ([], 2),  # no family and no oracle type
        (["--oracle-type", "rubric", "--evaluator", "exact-or-programmatic"], 1),  # barred
        (["--family", "lookup", "--oracle-type", "rubric"], 1),  # not the family's
        (["--family", "lookup", "--evaluator", "human-expert"], 1),  # not the family's
        (["--oracle-type", "reference-answer", "--metadata", "oops"], 2),
        (["--oracle-type", "reference-answer", "--metadata", "[1]"], 2),
        (["--oracle-type", "reference-answer", "--metadata", "case=x"], 2),
        (["--oracle-type", "reference-answer", "--extensions", '{"team": 1}'], 1),
        (["--oracle-type", "reference-answer", "--metadata", "a=1", "--metadata", "a=2"], 2),
    ],
)
def test_add_refusals(tmp_path: Path, extra: list[str], code: int) -> None:
    target = curation_set(tmp_path, ".jsonl")
    before = snapshot(tmp_path)
    base = ["add", target, "--id", "f", "--input", "q", "--expected", "x", "--behavior", "b"]
    result = run(*base, "--provenance", "expert-authored", *extra)
    assert result.exit_code == code, result.output
    assert snapshot(tmp_path) == before


def test_family_commands_on_a_csv_without_its_set_file(tmp_path: Path) -> None:
    target = write_set(tmp_path / "plain.csv", [row("a"), row("b")])
    (tmp_path / "plain.csv.set.json").unlink()
    # an edit of rows only keeps it so
    assert run("rename", target, "b", "b2").exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.csv"]
    # a family needs somewhere to live: the set file is created, and says so
    dry = run("family", "add", target, "lookup", "--oracle-type", "reference-answer", "--dry-run")
    assert dry.exit_code == 0 and "would create" in dry.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.csv"]
    result = run("family", "add", target, "lookup", "--oracle-type", "reference-answer")
    assert result.exit_code == 0, result.output
    assert "created plain.csv.set.json" in result.stderr
    assert header_of(target) == {
        "schemaVersion": "blueprint.eval-set/v1",
        "name": "plain",
        "caseFamilies": [{"id": "lookup", "oracleType": "reference-answer"}],
    }
    missing = run("family", "rm", tmp_path / "plain.jsonl", "x")
    assert missing.exit_code == 2  # no such file


def test_accept_and_promote_an_imported_row(tmp_path: Path) -> None:
    target = curation_set(tmp_path, ".json")
    nothing = run("accept", target, "a")
    assert nothing.exit_code == 0 and "nothing to accept" in nothing.stderr
    refused = run("promote", target, "e", "--provenance", "expert-authored", "--reviewer", "Ana")
    assert refused.exit_code == 1 and "blueprint accept" in refused.stderr
    assert run("accept", target, "--all").exit_code == 0
    codes = json.loads(run("validate", target, "--report", "json").stdout)["issues"]
    assert "derived-value" not in {issue["code"] for issue in codes}
    again = run("accept", target, "--all", "--field", "oracleType")
    assert again.exit_code == 0 and "no derived value at oracleType" in again.stderr
    promoted = run(
        "promote", target, "e", "d", "--provenance", "expert-authored", "--reviewer", "Ana",
        "--report", "json",
    )  # fmt: skip
    assert promoted.exit_code == 0, promoted.output
    assert json.loads(promoted.stdout)["promoted"] == {
        "e": "imported",
        "d": "starter-example",
    }
    review = rows_of(target)["d"]["metadata"]["case"]["extensions"]["blueprint-review"]
    assert review["reviewer"] == "Ana" and review["previousProvenance"] == "starter-example"
    to_starter = run("promote", target, "a", "--provenance", "starter-example", "--reviewer", "Ana")
    assert to_starter.exit_code == 1
    assert run("accept", target).exit_code == 2  # neither rows nor --all
    assert run("accept", target, "a", "--all").exit_code == 2


def test_merge_conflicts_in_json(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".json", "a")
    b = write_set(tmp_path / "b.jsonl", [row("d", expected="no")], header(name="other"))
    out = tmp_path / "m.json"
    result = run("merge", a, b, "-o", out, "--report", "json")
    assert result.exit_code == 1 and not out.exists()
    report = json.loads(result.stdout)
    assert report["exitCode"] == 1
    assert [c["id"] for c in report["conflicts"]] == ["d"]
    assert report["conflicts"][0]["paths"] == ["$.expected", "$.metadata.case.provenance"]
    kept = run("merge", a, b, "-o", out, "--keep", "b", "--report", "json")
    assert kept.exit_code == 0, kept.output
    assert json.loads(kept.stdout)["resolved"] == {"d": "kept b"}
    assert rows_of(out)["d"]["expected"] == "no"
    exists = run("merge", a, b, "-o", out, "--keep", "b")
    assert exists.exit_code == 2 and "--force" in exists.stderr
    assert run("merge", a, b, "-o", out, "--keep", "b", "--force").exit_code == 0
    both = run("merge", a, b, "-o", tmp_path / "n.json", "--keep", "a", "--suffix", "-b")
    assert both.exit_code == 2
    vendor = run("merge", a, b, "-o", tmp_path / "tests.yaml")
    assert vendor.exit_code == 1 and not (tmp_path / "tests.yaml").exists()


@pytest.mark.parametrize("command", [c for c in EDITS if c not in ("oracle", "add")])
def test_vendor_files_are_refused_untouched(tmp_path: Path, command: str) -> None:
    native = Path(__file__).parent / "fixtures" / "native" / "braintrust" / "records.jsonl"
    target = tmp_path / "records.jsonl"
    shutil.copyfile(native, target)
    good, _ = EDITS[command](target)
    if command == "merge":  # the vendor file as either input
        good = ["merge", target, target, "-o", tmp_path / "m.json"]
    before = snapshot(tmp_path)
    refused = run(*good, "--from", "braintrust")
    assert refused.exit_code == 1, refused.output
    assert "convert" in refused.stderr
    assert snapshot(tmp_path) == before
