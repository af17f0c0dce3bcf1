"""blueprint judge-report on the command line: outputs, exit codes, configuration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from conftest import write_json
from test_judging import judged_set, labels_csv

runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_json(tmp_path / "set.json", judged_set())
    labels_csv(tmp_path / "good.csv", 40, 2)
    labels_csv(tmp_path / "bad.csv", 40, 16)
    return tmp_path


def test_exit_codes_follow_the_verdict(project: Path) -> None:
    good = run("judge-report", "good.csv", "--set", "set.json", "--resamples", 200)
    assert good.exit_code == 0, good.output
    assert "verdict: pass" in good.stdout
    bad = run("judge-report", "bad.csv", "--set", "set.json", "--resamples", 200)
    assert bad.exit_code == 1
    assert "verdict: fail" in bad.stdout


def test_json_report_on_stdout(project: Path) -> None:
    result = run(
        "judge-report", "good.csv", "--set", "set.json", "--report", "json", "--resamples", 200
    )
    report = json.loads(result.stdout)
    assert report["verdict"] == "pass" and report["families"][0]["family"] == "tone"
    assert set(report["thresholds"]) == {
        "minLabels",
        "minFraction",
        "minAgreement",
        "minKappa",
        "minAlpha",
        "maxBias",
    }


def test_outputs_by_extension_and_force(project: Path) -> None:
    for name in ("r.json", "r.md", "r.html"):
        result = run(
            "judge-report", "good.csv", "--set", "set.json", "-o", name, "--resamples", 200
        )
        assert result.exit_code == 0, result.output
    report = json.loads((project / "r.json").read_text())
    assert report["set"] == "set.json" and report["labels"] == "good.csv"
    assert report["families"][0]["rowsHash"].startswith("sha256:")
    html = (project / "r.html").read_text()
    assert "<svg" in html and "<script" not in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html
    assert "| tone |" in (project / "r.md").read_text()
    before = (project / "r.json").read_bytes()
    again = run("judge-report", "bad.csv", "--set", "set.json", "-o", "r.json")
    assert again.exit_code == 2 and (project / "r.json").read_bytes() == before
    assert run("judge-report", "good.csv", "--set", "set.json", "-o", "r.txt").exit_code == 2


def test_unusable_input_exits_2(project: Path) -> None:
    labels_csv(project / "unknown.csv", 2, 0, ["t00", "ghost"])
    result = run("judge-report", "unknown.csv", "--set", "set.json")
    assert result.exit_code == 2 and "ghost" in result.output
    assert run("judge-report", "missing.csv", "--set", "set.json").exit_code == 2
    assert run("judge-report", "good.csv", "--set", "set.json", "--scale", "5-1").exit_code == 2


def test_thresholds_from_flags_and_configuration(project: Path) -> None:
    flagged = run(
        "judge-report",
        "bad.csv",
        "--set",
        "set.json",
        "--min-agreement",
        "0.5",
        "--min-kappa",
        "0.1",
        "--resamples",
        200,
    )
    assert flagged.exit_code == 0, flagged.output
    (project / "blueprint.toml").write_text("[judge-thresholds]\nmin-agreement = 0.99\n")
    configured = run(
        "judge-report", "good.csv", "--set", "set.json", "--report", "json", "--resamples", 200
    )
    assert configured.exit_code == 1
    assert json.loads(configured.stdout)["thresholds"]["minAgreement"] == 0.99


def test_check_uses_the_configured_reports(project: Path) -> None:
    assert (
        run(
            "judge-report", "good.csv", "--set", "set.json", "-o", "judge.json", "--resamples", 200
        ).exit_code
        == 0
    )
    (project / "blueprint.toml").write_text(
        'include = ["set.json"]\ncanonical-roundtrip = false\njudge-reports = ["judge.json"]\n'
        'fail-on = "warning"\n'
    )
    result = run("check", "--report", "json")
    assert result.exit_code == 0, result.output


def test_help_loads_no_statistics_library() -> None:
    # numpy is not ours to keep out: other dependencies load it
    code = (
        "import sys; from typer.testing import CliRunner; from blueprint.cli import app;"
        " CliRunner().invoke(app, ['--help']);"
        " print(sorted(m for m in ('sklearn', 'scipy', 'krippendorff') if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
