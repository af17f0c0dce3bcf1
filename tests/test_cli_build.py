"""The builder's commands: packs, new, oracle, add, end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.core.model import ORACLE_TYPES

runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_packs_lists_eight_packs_covering_every_oracle_type() -> None:
    result = run("packs", "--report", "json")
    assert result.exit_code == 0
    entries = json.loads(result.stdout)
    packs = [e for e in entries if e["kind"] == "pack"]
    assert len(packs) >= 8
    assert set().union(*(e["oracleTypes"] for e in packs)) == set(ORACLE_TYPES)
    text = run("packs")
    assert text.exit_code == 0 and "not validated gold" in text.stderr


def test_packs_show() -> None:
    data = json.loads(run("packs", "show", "customer-support", "--report", "json").stdout)
    assert data["id"] == "customer-support"
    family = data["caseFamilies"][0]
    assert set(family) >= {"id", "oracleType", "evaluator", "severity", "rows"}
    assert all(f["starterExamples"] for f in data["caseFamilies"])
    shown = run("packs", "show", "finance")
    assert shown.exit_code == 0 and "not validated gold" in shown.stderr
    assert run("packs", "show", "nope").exit_code == 2


def test_packs_check(tmp_path: Path) -> None:
    root = Path(__file__).parent.parent / "packs"
    assert (
        run(
            "packs", "check", root / "customer-support.yaml", root / "overlays" / "legal.yaml"
        ).exit_code
        == 0
    )
    bad = tmp_path / "bad.yaml"
    text = (root / "customer-support.yaml").read_text(encoding="utf-8")
    bad.write_text(
        text.replace("id: customer-support", "id: bad").replace(
            "evaluator: rubric-human", "evaluator: exact-or-programmatic"
        ),
        encoding="utf-8",
    )
    result = run("packs", "check", bad)
    assert result.exit_code == 1 and "inadmissible-evaluator" in result.stderr


def test_acceptance_new_validate_oracle(tmp_path: Path) -> None:
    target = tmp_path / "s.csv"
    result = run("new", "customer-support", "--overlay", "finance", "-o", target)
    assert result.exit_code == 0, result.output
    assert "not validated gold" in result.stderr
    report = run("validate", target, "--report", "json")
    assert report.exit_code == 0
    codes = {issue["code"] for issue in json.loads(report.stdout)["issues"]}
    assert codes == {"starter-example"}

    row_id = "cs-return-window-online"
    before = snapshot(tmp_path)
    refused = run("oracle", target, row_id, "rubric", "--evaluator", "exact-or-programmatic")
    assert refused.exit_code == 1
    assert "string comparison cannot read a criterion" in refused.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_new_in_every_canonical_format(tmp_path: Path, suffix: str) -> None:
    target = tmp_path / f"s{suffix}"
    assert run("new", "agent-tool-use", "-o", target, "--name", "agents").exit_code == 0
    assert run("validate", target).exit_code == 0
    assert run("new", "agent-tool-use", "-o", target).exit_code == 2  # exists, no --force


def test_oracle_lists_admissible_evaluators_and_conditions(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    run("new", "customer-support", "-o", target)
    result = run("oracle", target, "cs-return-window-online", "acceptable-set", "--family")
    assert result.exit_code == 0
    assert "admissible evaluators" in result.stderr and "not validated gold" in result.stderr
    judged = run(
        "oracle",
        target,
        "cs-return-window-online",
        "acceptable-set",
        "--family",
        "--evaluator",
        "llm-judge",
    )
    assert judged.exit_code == 0 and "human labels" in judged.stderr
    assert run("validate", target).exit_code == 0
    split = run("oracle", target, "cs-shipping-cost-eu", "reference-answer")
    assert split.exit_code == 1 and "--leave-family" in split.stderr
    both = run("oracle", target, "cs-shipping-cost-eu", "rubric", "--family", "--leave-family")
    assert both.exit_code == 2


def test_add_requires_explicit_provenance(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    run("new", "customer-support", "-o", target)
    base = [
        "add",
        target,
        "--family",
        "policy-lookup",
        "--id",
        "cs-opening-hours",
        "--input",
        "When are you open on Sundays?",
        "--expected",
        "We are closed on Sundays.",
        "--behavior",
        "Quotes the published opening hours.",
    ]
    missing = run(*base)
    assert missing.exit_code == 2
    added = run(*base, "--provenance", "expert-authored", "--unacceptable", "invents Sunday hours")
    assert added.exit_code == 0, added.output
    assert run("validate", target).exit_code == 0
    again = run(*base, "--provenance", "expert-authored")
    assert again.exit_code == 1
    bad_json = run(*base[:-2], "--provenance", "expert-authored", "--expected-json", "{oops")
    assert bad_json.exit_code == 2


def test_add_json_options_refuse_non_json_numbers(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    run("new", "customer-support", "-o", target)
    before = target.read_bytes()
    for bad in ("NaN", "[1e400]", '"\\ud800"', "[" * 200 + "]" * 200):
        result = run(
            "add",
            target,
            "--family",
            "policy-lookup",
            "--id",
            "x",
            "--input",
            "q",
            "--expected-json",
            bad,
            "--behavior",
            "b",
            "--provenance",
            "expert-authored",
        )
        assert result.exit_code == 2, (bad, result.output)
    assert target.read_bytes() == before


def test_new_refuses_a_pack_that_builds_an_invalid_set(tmp_path: Path) -> None:
    root = Path(__file__).parent.parent / "packs"
    text = (root / "customer-support.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        text.replace("id: customer-support", "id: bad").replace(
            "evaluator: rubric-human", "evaluator: exact-or-programmatic"
        ),
        encoding="utf-8",
    )
    result = run("new", bad, "-o", tmp_path / "s.json")
    assert result.exit_code == 1
    assert not (tmp_path / "s.json").exists()


def test_packs_check_reports_every_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: [unclosed\n", encoding="utf-8")
    good = Path(__file__).parent.parent / "packs" / "summarization.yaml"
    result = run("packs", "check", broken, good)
    assert result.exit_code == 1
    assert "ok" in result.stderr and "broken.yaml" in result.stderr


def test_overlay_named_as_a_pack_gets_a_hint(tmp_path: Path) -> None:
    result = run("new", "finance", "-o", tmp_path / "s.json")
    assert result.exit_code == 2 and "--overlay" in result.stderr


def test_missing_pack_folder_override(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("BLUEPRINT_PACKS", str(tmp_path / "nowhere"))
    result = run("new", "customer-support", "-o", tmp_path / "s.json")
    assert result.exit_code == 1 and "BLUEPRINT_PACKS" in result.stderr


def test_one_broken_pack_does_not_hide_the_others(tmp_path: Path, monkeypatch) -> None:
    import shutil

    root = Path(__file__).parent.parent / "packs"
    shutil.copytree(root, tmp_path / "packs")
    (tmp_path / "packs" / "broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    monkeypatch.setenv("BLUEPRINT_PACKS", str(tmp_path / "packs"))
    result = run("packs", "--report", "json")
    assert result.exit_code == 1
    assert len([e for e in json.loads(result.stdout) if e["kind"] == "pack"]) >= 8
    assert "broken.yaml" in result.stderr


def test_packs_show_reads_an_overlay_file() -> None:
    overlay = Path(__file__).parent.parent / "packs" / "overlays" / "legal.yaml"
    data = json.loads(run("packs", "show", overlay, "--report", "json").stdout)
    assert data["kind"] == "overlay" and data["id"] == "legal"


VENDORS = {
    "promptfoo": "tests.yaml",
    "deepeval": "goldens.json",
    "langsmith": "examples.jsonl",
    "braintrust": "records.jsonl",
}


def _vendor_file(tmp_path: Path, fmt: str) -> Path:
    canonical = tmp_path / "s.json"
    assert run("new", "customer-support", "-o", canonical).exit_code == 0
    target = tmp_path / VENDORS[fmt]
    converted = run("convert", canonical, target, "--to", fmt, "--include-human-review")
    assert converted.exit_code == 0, converted.output
    canonical.unlink()
    return target


@pytest.mark.parametrize("fmt", list(VENDORS))
def test_edits_of_vendor_files_are_refused_and_leave_them_byte_identical(
    tmp_path: Path, fmt: str
) -> None:
    target = _vendor_file(tmp_path, fmt)
    before = snapshot(tmp_path)
    row_id = "cs-return-window-online"
    for args in (
        ("oracle", target, row_id, "acceptable-set", "--leave-family", "--from", fmt),
        ("oracle", target, row_id, "expected-behavior-only", "--leave-family", "--drop-expected"),
        (
            "add",
            target,
            "--family",
            "policy-lookup",
            "--id",
            "new-row",
            "--input",
            "q",
            "--expected",
            "a",
            "--behavior",
            "b",
            "--provenance",
            "expert-authored",
            "--from",
            fmt,
        ),
    ):
        refused = run(*args)
        assert refused.exit_code == 1, refused.output
        assert "convert" in refused.stderr
        assert snapshot(tmp_path) == before


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_edits_of_canonical_files_keep_every_row(tmp_path: Path, suffix: str) -> None:
    from blueprint.convert import data_rows, open_set

    target = tmp_path / f"s{suffix}"
    assert run("new", "customer-support", "-o", target).exit_code == 0
    count = sum(1 for _ in data_rows(open_set(target)))
    row_id = "cs-return-window-online"
    assert run("oracle", target, row_id, "acceptable-set", "--leave-family").exit_code == 0
    assert sum(1 for _ in data_rows(open_set(target))) == count
    dropped = run("oracle", target, row_id, "expected-behavior-only", "--drop-expected")
    assert dropped.exit_code == 0, dropped.output
    ids = [row["id"] for row in data_rows(open_set(target))]
    assert len(ids) == count and row_id in ids


PACKS = [
    "agent-tool-use",
    "classification-routing",
    "code-generation",
    "customer-support",
    "rag-question-answering",
    "safety-and-refusal",
    "structured-extraction",
    "summarization",
]


def _report(output: str) -> list[str]:
    """The loss report of an export's output, without the lines naming the file written."""
    return [
        line for line in output.splitlines() if line.startswith(("left out", "dropped", "weakened"))
    ]


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize(("fmt", "name"), [("promptfoo", "tests.yaml"), ("inspect", "s.jsonl")])
def test_new_into_a_vendor_format_writes_what_convert_writes(
    tmp_path: Path, pack: str, fmt: str, name: str
) -> None:
    """One behaviour: the rows the format holds, and the same loss report as convert's."""
    canonical = tmp_path / "set.json"
    assert run("new", pack, "-o", canonical).exit_code == 0
    converted = tmp_path / "converted" / name
    converted.parent.mkdir()
    by_convert = run("convert", canonical, converted, "--to", fmt)
    target = tmp_path / name
    by_new = run("new", pack, "-o", target, "--to", fmt)
    assert by_new.exit_code == by_convert.exit_code == 0, by_new.output
    assert target.read_bytes() == converted.read_bytes()
    assert _report(by_new.stderr) == _report(by_convert.stderr)
    strict = run("new", pack, "-o", tmp_path / f"strict-{name}", "--to", fmt, "--strict")
    assert strict.exit_code == 1 and not (tmp_path / f"strict-{name}").exists()


def test_new_to_a_yaml_file_means_promptfoo_and_reports_what_it_leaves_out(
    tmp_path: Path,
) -> None:
    result = run("new", "customer-support", "-o", tmp_path / "tests.yaml")
    assert result.exit_code == 0, result.output
    assert "wrote" in result.stderr and "(promptfoo, " in result.stderr
    assert any(line.startswith("left out") for line in result.stderr.splitlines())


def test_oracle_follows_the_evaluator_a_row_inherits(tmp_path: Path) -> None:
    document = json.loads(
        (Path(__file__).parent.parent / "examples" / "support-refunds.json").read_text("utf-8")
    )
    for data in document["rows"]:
        data["metadata"]["case"].pop("evaluator", None)
    target = tmp_path / "s.json"
    target.write_text(json.dumps(document), encoding="utf-8")
    same = run("oracle", target, "cs-refund-window-quote", "reference-answer")
    assert same.exit_code == 0, same.output  # the row's own family, unchanged
    family = run("oracle", target, "cs-eligibility-late-return", "reference-answer", "--family")
    assert family.exit_code == 0, family.output
    written = json.loads(target.read_text(encoding="utf-8"))
    fam = next(f for f in written["caseFamilies"] if f["id"] == "refund-eligibility")
    assert fam["evaluator"] == "exact-or-programmatic"  # admitted by the new type: kept
    left = run("oracle", target, "cs-escalate-chargeback-threat", "rubric", "--leave-family")
    assert left.exit_code == 0, left.output
    row = next(
        r
        for r in json.loads(target.read_text("utf-8"))["rows"]
        if r["id"] == "cs-escalate-chargeback-threat"
    )
    assert row["metadata"]["case"]["evaluator"] == "human-expert"  # taken along


def test_a_family_whose_evaluator_is_null_names_none(tmp_path: Path) -> None:
    document = json.loads(
        (Path(__file__).parent.parent / "examples" / "support-refunds.json").read_text("utf-8")
    )
    document["caseFamilies"][0]["evaluator"] = None
    target = tmp_path / "s.json"
    target.write_text(json.dumps(document), encoding="utf-8")
    assert run("validate", target).exit_code == 0


def test_a_vendor_file_beside_a_stale_set_file_is_still_a_vendor_file(tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "examples" / "support-refunds.json"
    target = tmp_path / "out.jsonl"
    assert run("convert", example, target).exit_code == 0  # canonical, with a set file
    assert run("convert", example, target, "--to", "braintrust", "--force").exit_code == 0
    before = snapshot(tmp_path)
    refused = run(
        "add",
        target,
        "--family",
        "policy-lookup",
        "--id",
        "new-row",
        "--behavior",
        "b",
        "--provenance",
        "expert-authored",
        "--input",
        "hi",
        "--expected",
        "x",
    )
    assert refused.exit_code == 1 and "braintrust" in refused.stderr
    assert snapshot(tmp_path) == before


def _reference_rows(baseline: float, change: float) -> int:
    """The pooled two-proportion z-test's rows per run, worked out here from scipy's normal
    quantiles, for a change toward one half."""
    from scipy.stats import norm

    other = baseline - change if baseline > 0.5 else baseline + change
    pooled = (baseline + other) / 2
    z_alpha, z_power = norm.ppf(0.975), norm.ppf(0.8)
    spread = (
        z_alpha * (2 * pooled * (1 - pooled)) ** 0.5
        + z_power * (baseline * (1 - baseline) + other * (1 - other)) ** 0.5
    )
    return math.ceil(spread**2 / change**2 - 1e-9)


@pytest.mark.parametrize(("baseline", "change"), [(0.5, 0.1), (0.8, 0.05), (0.3, 0.2)])
def test_new_sizes_each_scored_family_for_the_change_asked(
    tmp_path: Path, baseline: float, change: float
) -> None:
    target = tmp_path / "s.json"
    result = run(
        "new", "customer-support", "-o", target, "--detect", change, "--baseline-rate", baseline
    )
    assert result.exit_code == 0, result.output
    families = json.loads(target.read_text(encoding="utf-8"))["caseFamilies"]
    needed = str(_reference_rows(baseline, change))
    lines = {line.split()[0]: line.split() for line in result.stderr.splitlines() if line.strip()}
    for family in families:
        person = family["oracleType"] == "expected-behavior-only" or family["evaluator"] in {
            "human-expert",
            "rubric-human",
        }
        cells = lines[family["id"]]
        assert (cells[-3:] == ["a", "person", "grades"]) if person else (cells[-1] == needed)
    # a change no baseline allows is refused before anything is written
    refused = tmp_path / "r.json"
    assert run("new", "customer-support", "-o", refused, "--detect", 0.7).exit_code == 2
    assert run("new", "customer-support", "-o", refused, "--baseline-rate", 1).exit_code == 2
    assert not refused.exists()
