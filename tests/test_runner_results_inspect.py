"""Inspect's logs read as recorded results, without Inspect: the default ``.eval`` archive
(zstandard-compressed JSON entries) and the JSON log, judge verdicts included (Blueprint's
scorer's, and Inspect's own model-graded scorers'), each epoch of several a trial, and every bad
archive refused with the file and the entry named."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.core.errors import ParseError
from blueprint.core.judgeprompt import template_id
from blueprint.grading.results import read_results
from blueprint.grading.runners import inspect as inspect_log
from blueprint.io import limits

FIXTURES = Path(__file__).parent / "fixtures"
LOGS = FIXTURES / "results" / "inspect-judged"
SET = FIXTURES / "judged" / "judged-set.json"
runner = CliRunner()

#: what the fixture logs hold, by row: output, tool calls and judge's verdict
EXPECTED = {
    "judged-graded": {
        "output": "About a month.",
        "toolCalls": [],
        "judge": {
            "score": 0.5,
            "model": "mockllm/judge",
            "template": template_id("acceptable-set"),
        },
    },
    "judged-rubric": {
        "output": "Sorry for the wait; your refund is on its way.",
        "toolCalls": [],
        "judge": {
            "pass": False,
            "score": 0.0,
            "model": "mockllm/judge",
            "template": template_id("rubric"),
        },
    },
    "tool-calls": {
        "output": "",
        "toolCalls": [{"name": "lookup_order", "arguments": {"order_id": "A-1"}}],
        # Blueprint's scorer gives no judge to a tool-call row, whatever Inspect's own gave
    },
}


def read(path: Path) -> dict[str, dict[str, Any]]:
    found = inspect_log.archive_items(path)
    assert found is not None
    items = {}
    for item in found:
        judge = item.get("judge")
        if judge is not None:
            assert isinstance(judge.pop("reason"), str)  # the grader's words
        items[item.pop("id")] = item
    return items


@pytest.mark.parametrize("name", ["judged.eval", "judged.json"])
def test_a_log_of_inspect_gives_each_sample_and_its_judge(name: str) -> None:
    assert read(LOGS / name) == EXPECTED


def test_the_json_log_holds_nan_as_inspect_writes_it() -> None:
    text = (LOGS / "judged.json").read_text(encoding="utf-8")
    assert "NaN" in text  # not strict JSON: read as no value


@pytest.mark.parametrize("name", ["judged.eval", "judged.json"])
def test_blueprint_grade_gives_the_judges_verdict_with_model_and_template(name: str) -> None:
    done = runner.invoke(app, ["grade", str(SET), str(LOGS / name), "--report", "json"])
    assert done.exit_code in (0, 1), done.output
    rows = {row["id"]: row for row in json.loads(done.stdout)["rows"]}
    graded = rows["judged-graded"]
    assert (graded["verdict"], graded["score"]) == ("pass", 0.5)  # P at passThreshold 0.5
    assert graded["judge"] == {"model": "mockllm/judge", "template": template_id("acceptable-set")}
    rubric = rows["judged-rubric"]
    assert (rubric["verdict"], rubric["score"]) == ("fail", 0.0)
    assert rubric["judge"] == {"model": "mockllm/judge", "template": template_id("rubric")}
    calls = rows["tool-calls"]
    assert (calls["verdict"], calls["score"]) == ("pass", 1.0)
    assert "judge" not in calls  # a judge's verdict never decides a tool-call row
    assert rows["judged-reference"]["verdict"] == "not-run"


def test_the_eval_archive_is_read_without_inspect_installed() -> None:
    """Neither inspect_ai nor its zipfile patch is imported: Python's zipfile alone cannot
    decompress zstandard entries before 3.14."""
    code = f"""
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("inspect_ai", "zipfile_zstd"):
            raise ImportError(name)
sys.meta_path.insert(0, Refuse())
from pathlib import Path
from blueprint.grading.results import read_results
found = read_results(Path({str(LOGS / "judged.eval")!r}))
print(sorted(found))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == str(sorted(EXPECTED))


def test_every_entry_of_the_fixture_is_compressed_with_zstandard() -> None:
    with zipfile.ZipFile(LOGS / "judged.eval") as archive:
        methods = {info.compress_type for info in archive.infolist()}
    assert methods == {inspect_log.ZSTANDARD}


# --- Inspect's own model-graded scorers --------------------------------------------------------


def log(samples: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "version": 2,
        "status": "success",
        "eval": {"model": "openai/evaluated", **spec},
        "samples": samples,
    }


def sample(row_id: str, scores: dict[str, Any], epoch: int = 1) -> dict[str, Any]:
    return {"id": row_id, "epoch": epoch, "output": {"completion": "an answer"}, "scores": scores}


def judges(document: dict[str, Any]) -> dict[str, Any]:
    found = inspect_log.items(Path("log.json"), document)
    assert found is not None
    return {item["id"]: item.get("judge") for item in found}


def test_model_graded_scores_are_the_judges_verdict_graded_by_the_model_evaluated() -> None:
    scorers = [{"name": "model_graded_qa", "options": {}}]
    document = log(
        [
            sample("a", {"model_graded_qa": {"value": "C", "explanation": "right"}}),
            sample("b", {"model_graded_qa": {"value": "I", "explanation": "wrong"}}),
            sample("c", {"model_graded_qa": {"value": "P", "explanation": "partly"}}),
            sample("d", {"model_graded_qa": {"value": None, "explanation": "no grade"}}),
            sample("e", {"match": {"value": "C"}}),
        ],
        scorers=scorers,
    )
    model = "openai/evaluated"
    assert judges(document) == {
        "a": {"pass": True, "score": 1.0, "reason": "right", "model": model},
        "b": {"pass": False, "score": 0.0, "reason": "wrong", "model": model},
        "c": {"score": 0.5, "reason": "partly", "model": model},
        "d": None,
        "e": None,  # match is not a judge
    }


def test_without_blueprints_scorer_inspects_own_grades_are_the_judge() -> None:
    """The fixture's model_graded_qa scores, graded by the model evaluated (mockllm/model)."""
    document = json.loads((LOGS / "judged.json").read_text(encoding="utf-8"))
    for logged in document["samples"]:
        del logged["scores"]["oracle_scorer"]
    found = judges(document)
    assert found["judged-rubric"] == {
        "pass": False,
        "score": 0.0,
        "reason": "It apologises but names no date.\nGRADE: I",
        "model": "mockllm/model",
    }
    assert found["tool-calls"] == {
        "pass": True,
        "score": 1.0,
        "reason": "It meets the criterion.\nGRADE: C",
        "model": "mockllm/model",
    }
    # the stub answered P, which model_graded_qa's own instructions do not offer: Inspect
    # left the sample unscored (NaN in the log), so there is no verdict
    assert found["judged-graded"] is None


def test_the_grader_is_the_scorers_model_else_the_grader_role() -> None:
    scorers = [
        {"name": "model_graded_fact", "options": {}},
        {"name": "model_graded_fact", "options": {"model": {"model": "anthropic/judge"}}},
    ]
    roles = {"grader": {"model": "google/grader", "config": {}}}
    scores = {
        "model_graded_fact": {"value": "C"},
        "model_graded_fact1": {"value": "I"},
    }
    document = log([sample("a", scores)], scorers=scorers, model_roles=roles)
    # two graders together: it fails when one fails; its score is their mean
    assert judges(document) == {
        "a": {"pass": False, "score": 0.5, "model": "google/grader, anthropic/judge"}
    }


def test_blueprints_scorer_where_used_decides_the_judge_not_inspects_own() -> None:
    judge = {"pass": True, "score": 0.9, "model": "m", "template": "rubric@000000000000"}
    scores = {
        "oracle_scorer": {"value": 0.9, "metadata": {"verdict": "pass", "judge": judge}},
        "model_graded_qa": {"value": "I"},
    }
    unjudged = {
        "oracle_scorer": {"value": 1.0, "metadata": {"verdict": "pass"}},
        "model_graded_qa": {"value": "I"},
    }
    document = log(
        [sample("a", scores), sample("b", unjudged)], scorers=[{"name": "model_graded_qa"}]
    )
    assert judges(document) == {"a": judge, "b": None}


def test_each_epoch_of_a_log_of_several_is_a_trial() -> None:
    document = log([sample("a", {}, 1), sample("b", {}, 1), sample("a", {}, 2)])
    found = list(inspect_log.items(Path("log.json"), document) or [])
    assert [(item["id"], item["trial"]) for item in found] == [("a", 1), ("b", 1), ("a", 2)]
    # a log of one epoch names no trial
    assert "trial" not in next(
        iter(inspect_log.items(Path("log.json"), log([sample("a", {})])) or [])
    )


def test_the_same_sample_twice_in_one_epoch_is_refused(tmp_path: Path) -> None:
    samples = [sample("tool-calls", {}, 1), sample("tool-calls", {}, 2)]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log([*samples, sample("tool-calls", {}, 2)])))
    with pytest.raises(ParseError):
        read_results(path)
    done = runner.invoke(app, ["grade", str(SET), str(path), "--report", "json"])
    assert done.exit_code == 2
    assert "trial 2" in done.output
    path.write_text(json.dumps(log(samples)))
    done = runner.invoke(app, ["grade", str(SET), str(path), "--report", "json"])
    assert json.loads(done.stdout)["trials"]["count"] == 2


# --- bad archives ---------------------------------------------------------------------------

HEADER = json.dumps({"version": 2, "status": "success", "eval": {"model": "m"}}).encode()
SAMPLE = json.dumps(sample("a", {})).encode()


def zstd_zip(
    entries: dict[str, bytes],
    *,
    sizes: dict[str, int] | None = None,
    crcs: dict[str, int] | None = None,
    flags: int = 0,
    raw: dict[str, bytes] | None = None,
) -> bytes:
    """A zip whose entries are zstandard-compressed (method 93), as Inspect writes them; the
    sizes and checksums its directory gives may be set apart from the data."""
    local = bytearray()
    central = bytearray()
    compressor = zstandard.ZstdCompressor()
    for name, data in entries.items():
        packed = (raw or {}).get(name, compressor.compress(data))
        size = (sizes or {}).get(name, len(data))
        crc = (crcs or {}).get(name, zlib.crc32(data))
        encoded = name.encode()
        offset = len(local)
        fields = (20, flags, 93, 0, 0, crc, len(packed), size, len(encoded))
        local += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", *fields, 0) + encoded + packed
        central += (
            struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, 0, offset)
            + encoded
        )
    end = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(local), 0
    )
    return bytes(local + central + end)


def write(tmp_path: Path, data: bytes, name: str = "log.eval") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ParseError) as refused:
        read_results(path)
    assert refused.value.path == path
    return refused.value.reason


def test_a_handmade_zstandard_archive_reads(tmp_path: Path) -> None:
    path = write(tmp_path, zstd_zip({"header.json": HEADER, "samples/a_epoch_1.json": SAMPLE}))
    assert read_results(path)["a"].output == "an answer"


def test_a_file_that_is_not_a_zip_is_refused(tmp_path: Path) -> None:
    refusal(write(tmp_path, b"not a zip at all"))


def test_an_archive_without_its_header_is_refused_naming_it(tmp_path: Path) -> None:
    path = write(tmp_path, zstd_zip({"samples/a_epoch_1.json": SAMPLE}))
    assert "header.json" in refusal(path)


def test_an_entry_that_is_not_json_is_refused_naming_it(tmp_path: Path) -> None:
    entries = {"header.json": HEADER, "samples/a_epoch_1.json": b"{not json"}
    assert "samples/a_epoch_1.json" in refusal(write(tmp_path, zstd_zip(entries)))


def test_a_header_without_the_eval_spec_is_refused(tmp_path: Path) -> None:
    entries = {"header.json": b"[]", "samples/a_epoch_1.json": SAMPLE}
    assert "header.json" in refusal(write(tmp_path, zstd_zip(entries)))


def test_an_entry_past_the_limit_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    bomb = b'{"id": "a", "pad": "' + b" " * 5_000_000 + b'"}'
    path = write(tmp_path, zstd_zip({"header.json": HEADER, "samples/a_epoch_1.json": bomb}))
    assert path.stat().st_size < 10_000
    with limits.overridden(max_cell_bytes=1_000_000):
        assert "samples/a_epoch_1.json" in refusal(path)


def test_an_entry_whose_directory_lies_about_its_size_is_refused(tmp_path: Path) -> None:
    bomb = b'{"id": "a", "pad": "' + b" " * 5_000_000 + b'"}'
    entries = {"header.json": HEADER, "samples/a_epoch_1.json": bomb}
    path = write(tmp_path, zstd_zip(entries, sizes={"samples/a_epoch_1.json": 100}))
    with limits.overridden(max_cell_bytes=1_000_000):
        assert "samples/a_epoch_1.json" in refusal(path)


def test_the_archive_in_all_keeps_to_max_file_bytes(tmp_path: Path) -> None:
    padded = json.dumps({**sample("a", {}), "pad": " " * 100_000}).encode()
    entries = {"header.json": HEADER, **{f"samples/{n}_epoch_1.json": padded for n in range(9)}}
    path = write(tmp_path, zstd_zip(entries))
    assert path.stat().st_size < 100_000
    with limits.overridden(max_file_bytes=len(HEADER) + 3 * len(padded)):
        assert "samples/" in refusal(path)


def test_a_damaged_entry_is_refused(tmp_path: Path) -> None:
    entries = {"header.json": HEADER, "samples/a_epoch_1.json": SAMPLE}
    crc = write(tmp_path, zstd_zip(entries, crcs={"header.json": 1}), "crc.eval")
    assert "header.json" in refusal(crc)
    garbled = {"samples/a_epoch_1.json": b"\x28\xb5\x2f\xfd garbage"}
    assert "samples/a_epoch_1.json" in refusal(write(tmp_path, zstd_zip(entries, raw=garbled)))


def test_an_encrypted_entry_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, zstd_zip({"header.json": HEADER}, flags=1))
    assert "header.json" in refusal(path)


def test_a_deflated_archive_reads_as_well(tmp_path: Path) -> None:
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", HEADER)
        archive.writestr("samples/a_epoch_1.json", SAMPLE)
    assert read_results(path)["a"].output == "an answer"


def test_blueprint_grade_refuses_a_bad_archive_without_a_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, zstd_zip({"samples/a_epoch_1.json": SAMPLE}))
    done = runner.invoke(app, ["grade", str(SET), str(path)])
    assert done.exit_code == 2
    assert "Traceback" not in done.output and "header.json" in done.output
