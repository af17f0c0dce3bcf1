"""Grading in buckets by row id (the engine's path) gives what one process gives: the same
verdicts and trials for every split of the set into spans and buckets, and the same refusal,
for the same file and line, for every results file one process refuses."""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.convert import data_rows, open_set
from blueprint.core.errors import BlueprintError, ParseError
from blueprint.core.issues import Issue, make_issue
from blueprint.formats.shards import find_shards
from blueprint.grading import buckets as buckets_module
from blueprint.grading import grade_set
from blueprint.grading import report as report_module
from blueprint.grading.buckets import grade_in_buckets
from blueprint.grading.checks import _RULES as CHECK_RULES
from blueprint.grading.semantics import GradingOptions
from blueprint.grading.streamed import GRADED_CASE_FIELDS, MAX_TRIALS, GradedRows, grade_rows
from blueprint.validation import parallel
from blueprint.validation.engines import Inline, InlineEngine, LocalEngine, LocalRunner, Runner
from blueprint.validation.parallel import pieces
from conftest import EXAMPLES, load_json, with_files

EXAMPLE = load_json(EXAMPLES / "support-refunds.json")
ANSWERS = {
    json.loads(text)["id"]: json.loads(text)
    for text in (EXAMPLES / "support-refunds.results.jsonl").read_text().splitlines()
}
COPIES = 6
#: the ids of the set's rows: every copy of every example row, but the last, which repeats
#: an earlier one's id (see shard_set)
IDS = [f"{row['id']}-{copy_number}" for copy_number in range(COPIES) for row in EXAMPLE["rows"]][
    :-1
]


def shard_set(folder: Path, cuts: list[int], *, repeat_id: bool = True) -> Path:
    """The example's rows, six copies of each (a copy's id and caseId numbered), in JSON Lines
    shards cut at ``cuts``; the last copy of one row repeats an earlier one's id, and one row
    is high-risk."""
    rows = []
    for copy_number in range(COPIES):
        for row in EXAMPLE["rows"]:
            made = copy.deepcopy(row)
            made["id"] = made["metadata"]["case"]["caseId"] = f"{row['id']}-{copy_number}"
            rows.append(made)
    if repeat_id:
        rows[-1]["id"] = rows[3]["id"]
    rows[5]["metadata"]["case"]["reversibility"] = "R3"
    folder.mkdir()
    bounds = [0, *sorted(cuts), len(rows)]
    for number, (start, end) in enumerate(itertools.pairwise(bounds)):
        lines = "".join(json.dumps(row) + "\n" for row in rows[start:end])
        (folder / f"part-{number:03d}.jsonl").write_text(lines)
    header = {key: value for key, value in EXAMPLE.items() if key != "rows"}
    folder.with_name(folder.name + ".set.json").write_text(json.dumps(header))
    return folder


def families() -> dict[str, Any]:
    return {family["id"]: family.get("evaluator") for family in EXAMPLE["caseFamilies"]}


def result(row_id: str, passing: bool = True, **extra: Any) -> dict[str, Any]:
    base = row_id.rsplit("-", 1)[0]
    found = dict(ANSWERS.get(base, {"output": "something"}))
    if not passing:
        found["output"] = "something else entirely"
        found.pop("toolCalls", None)
        found.pop("finalState", None)
    return {**found, "id": row_id, **extra}


def write_results(path: Path, results: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in results))
    return path


def outcome(call: Callable[[], GradedRows]) -> Any:
    """What a grading gives: its verdicts and trials, or its refusal (kind and words)."""
    try:
        graded = call()
    except BlueprintError as error:
        return type(error).__name__, str(error)
    trials = graded.trials
    return (
        graded.rows,
        None if trials is None else (trials.to_json(), trials.rows, trials.k),
    )


def both(
    folder: Path,
    results: list[Path],
    *,
    buckets: int = 3,
    span_bytes: int = 1500,
    errors: list[Issue] | None = None,
    k: int | None = None,
) -> tuple[Any, Any]:
    """One process's outcome and the buckets'."""
    options = GradingOptions()
    serial = outcome(
        lambda: grade_rows(
            data_rows(open_set(folder, "shards")), families(), errors or [], results, options, k=k
        )
    )

    def bucketed(runner: Runner) -> Any:
        return outcome(
            lambda: grade_in_buckets(
                runner,
                pieces(None, find_shards([folder]), span_bytes),
                families(),
                errors or [],
                results,
                options,
                buckets=buckets,
                k=k,
            )
        )

    in_memory = bucketed(Inline())
    # the records and the buckets' verdicts in files, as one process grades a large set, a
    # bucket's results written a few at a time
    with (
        tempfile.TemporaryDirectory() as spilled,
        mock.patch.object(buckets_module, "records_a_chunk", lambda buckets: 3),
    ):
        assert bucketed(LocalRunner(spilled)) == in_memory
    return serial, in_memory


@pytest.mark.parametrize("buckets", [1, 2, 5, 64])
@pytest.mark.parametrize("span_bytes", [1, 3000, 10**7])
def test_one_trial_gives_the_verdicts_one_process_gives(
    tmp_path: Path, buckets: int, span_bytes: int
) -> None:
    folder = shard_set(tmp_path / "set", [5, 20, 21])
    results = [result(row_id, passing=n % 3 != 0) for n, row_id in enumerate(IDS) if n % 7 != 4]
    path = write_results(tmp_path / "results.jsonl", results)
    serial, bucketed = both(folder, [path], buckets=buckets, span_bytes=span_bytes)
    assert isinstance(serial, tuple) and len(serial) == 2, serial
    assert bucketed == serial
    verdicts = {verdict.verdict for verdict in serial[0]}
    assert {"pass", "fail", "not-run"} <= verdicts
    # each row's verdict carries its high-risk cell, through the buckets too
    assert serial[0][5].id == IDS[5] and serial[0][5].risk == "R3/B0"
    assert {verdict.risk for verdict in serial[0]} > {None, "R3/B0"}


def test_trials_named_and_files_as_trials(tmp_path: Path) -> None:
    folder = shard_set(tmp_path / "set", [9, 30])
    named = [
        result(row_id, passing=(n + shift) % 4 != 0, trial=trial)
        for shift, trial in enumerate((3, 1, "b", 2))
        for n, row_id in enumerate(reversed(IDS))
        if (n + shift) % 5
    ]
    first = write_results(tmp_path / "named.jsonl", named)
    second = write_results(tmp_path / "one.jsonl", [result(row_id) for row_id in IDS[::2]])
    empty = write_results(tmp_path / "empty.jsonl", [])
    for files in ([first], [first, second], [second, empty, first]):
        serial, bucketed = both(folder, files)
        assert len(serial) == 2 and serial[1] is not None
        assert bucketed == serial
    serial, bucketed = both(folder, [first, second], k=2)
    assert bucketed == serial


def test_the_validators_errors_make_a_row_invalid(tmp_path: Path) -> None:
    folder = shard_set(tmp_path / "set", [10])
    # every third row has an error, row 6 two, and the repeated id (rows 3 and the last)
    # makes both its rows invalid: more findings than a bucket's file takes in one chunk
    errors = [
        make_issue("schema", path=f"$.rows[{n}]", row_index=n, row_id=IDS[n], reason="bad")
        for n in range(0, len(IDS), 3)
    ]
    second = make_issue("case-id-mismatch", path="$.rows[6]", row_id=IDS[6], case_id="x", id="y")
    errors.append(second)
    path = write_results(tmp_path / "r.jsonl", [result(row_id) for row_id in IDS])
    other = write_results(tmp_path / "s.jsonl", [result(row_id, False) for row_id in IDS])
    for files in ([path], [path, other]):
        serial, bucketed = both(folder, files, errors=errors)
        verdicts = serial[0]
        invalid = [n for n, verdict in enumerate(verdicts) if verdict.verdict == "invalid"]
        assert invalid == [*range(0, len(IDS), 3), len(IDS)]
        assert "(schema, case-id-mismatch)" in verdicts[6].reason
        assert bucketed == serial


REFUSED: dict[str, Callable[[], list[list[dict[str, Any]]]]] = {
    # a second result for many rows: the buckets find theirs, the first in the file is given
    "repeat": lambda: [[result(row_id) for row_id in [*IDS[:20], *reversed(IDS[:20])]]],
    "repeat in a trial": lambda: [
        [result(IDS[1], trial=1), result(IDS[1], trial=2), result(IDS[1], trial="2")]
    ],
    "unknown ids": lambda: [[result("nope-1"), result(IDS[2]), result("nope-0")]],
    "unknown before a repeat in the next file": lambda: [
        [result("nope")],
        [result(IDS[0]), result(IDS[0])],
    ],
    "a repeat before unknown ids": lambda: [[result("nope"), result(IDS[4]), result(IDS[4])]],
    "a trial named, then none": lambda: [[result(IDS[0], trial=1), result(IDS[1])]],
    "not an object": lambda: [[result(IDS[0]), [1, 2]]],  # type: ignore[list-item]
    "a repeat before a line that does not read": lambda: [
        [result(IDS[3]), result(IDS[3]), "broken"]  # type: ignore[list-item]
    ],
    "a line that does not read before a repeat": lambda: [
        [result(IDS[3]), "broken", result(IDS[3])]  # type: ignore[list-item]
    ],
    "too many trials": lambda: [
        [result(IDS[n % len(IDS)], trial=n + 1) for n in range(MAX_TRIALS + 5)]
    ],
    "too many trials after a repeat": lambda: [
        [result(IDS[0], trial=1), result(IDS[0], trial=1)]
        + [result(IDS[n % len(IDS)], trial=n + 2) for n in range(MAX_TRIALS + 5)]
    ],
    "a repeat after too many trials": lambda: [
        [result(IDS[n % len(IDS)], trial=n + 1) for n in range(MAX_TRIALS + 5)]
        + [result(IDS[0], trial=1)]
    ],
    "too many trials across files": lambda: [
        [result(IDS[0], trial=n + 1) for n in range(MAX_TRIALS - 1)],
        [result(IDS[1], trial=n + 1) for n in range(3)],
    ],
}


def _write_lines(path: Path, items: list[Any]) -> Path:
    path.write_text(
        "".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items)
    )
    return path


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refusal_is_the_one_one_process_gives(tmp_path: Path, case: str) -> None:
    folder = shard_set(tmp_path / "set", [12, 13])
    files = [
        _write_lines(tmp_path / f"results-{number}.jsonl", items)
        for number, items in enumerate(REFUSED[case]())
    ]
    for buckets in (1, 4):
        serial, bucketed = both(folder, files, buckets=buckets)
        assert isinstance(serial[0], str), serial  # a refusal
        assert bucketed == serial


results_files = st.lists(
    st.tuples(
        st.sampled_from([None, (1, 2), (1, "x", 3)]),  # the trials a file names
        st.lists(st.tuples(st.sampled_from(IDS), st.booleans()), max_size=30),
        st.booleans(),  # a row's results may repeat (else the first of each is kept)
        st.sampled_from([None, "unknown-row"]),
    ),
    min_size=1,
    max_size=3,
)


@with_files(80)
@given(
    cuts=st.lists(st.integers(1, len(IDS)), max_size=4, unique=True),
    buckets=st.integers(1, 7),
    files=results_files,
)
def test_any_results_grade_as_in_one_process(
    tmp_path_factory: pytest.TempPathFactory,
    cuts: list[int],
    buckets: int,
    files: list[tuple[Any, list[tuple[str, bool]], bool, str | None]],
) -> None:
    """Any rows' results, in one trial or several, with or without repeats and unknown
    ids, in any files: the same verdicts or the same refusal."""
    folder = tmp_path_factory.mktemp("grade")
    shards = shard_set(folder / "set", cuts)
    paths = []
    for number, (trials, items, repeats, unknown) in enumerate(files):
        made = []
        for trial in trials or (None,):
            seen: set[str] = set()
            for row_id, passing in items:
                if row_id in seen and not repeats:
                    continue
                seen.add(row_id)
                made.append(result(row_id, passing, **({} if trial is None else {"trial": trial})))
        if unknown is not None:
            made.insert(len(made) // 2, result(unknown, **({} if trials is None else {"trial": 1})))
        paths.append(write_results(folder / f"r{number}.jsonl", made))
    serial, bucketed = both(shards, paths, buckets=buckets, span_bytes=900)
    assert bucketed == serial


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
#: where in a row a value goes: a top-level field, or a field of its case profile
PLACES = [
    ("metadata",),
    ("expected",),
    ("metadata", "case"),
    *(("metadata", "case", name) for name in GRADED_CASE_FIELDS),
    ("metadata", "case", "reversibility"),
]


#: checks of every kind Blueprint knows, their fields of any type
check_lists = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(sorted(CHECK_RULES))},
        optional={
            name: json_values
            for name in ("value", "values", "pattern", "tolerance", "normalize", "schema", "min")
        },
    ),
    max_size=3,
)


@with_files(300)
@given(
    changes=st.lists(
        st.tuples(st.integers(0, len(IDS) - 1), st.sampled_from(PLACES), json_values)
        | st.tuples(
            st.integers(0, len(IDS) - 1), st.just(("metadata", "case", "checks")), check_lists
        ),
        min_size=1,
        max_size=4,
    ),
    buckets=st.integers(1, 4),
)
def test_any_value_anywhere_in_a_row_grades_as_in_one_process(
    tmp_path_factory: pytest.TempPathFactory,
    changes: list[tuple[int, tuple[str, ...], Any]],
    buckets: int,
) -> None:
    """Grading reads the rows as they are (the set is not validated here): a field of any
    type anywhere gives a verdict, never a crash, and the same one in buckets."""
    folder = tmp_path_factory.mktemp("hostile")
    shards = shard_set(folder / "set", [11, 30])
    lines = [
        json.loads(text)
        for path in sorted(shards.glob("*.jsonl"))
        for text in path.read_text().splitlines()
    ]
    for number, place, value in changes:
        target = lines[number]
        for key in place[:-1]:
            if not isinstance(target.get(key), dict):
                target[key] = {}
            target = target[key]
        target[place[-1]] = value
    for path in shards.glob("*.jsonl"):
        path.unlink()
    (shards / "part-000.jsonl").write_text("".join(json.dumps(item) + "\n" for item in lines))
    results = write_results(folder / "r.jsonl", [result(row_id) for row_id in IDS[::2]])
    serial, bucketed = both(shards, [results], buckets=buckets, span_bytes=2000)
    assert isinstance(serial[0], list), serial
    assert bucketed == serial


def test_a_k_past_the_trials_is_refused_after_the_results_are_read(tmp_path: Path) -> None:
    folder = shard_set(tmp_path / "set", [8])
    two = write_results(
        tmp_path / "two.jsonl", [result(row_id, trial=n) for n in (1, 2) for row_id in IDS[:9]]
    )
    repeated = write_results(tmp_path / "rep.jsonl", [result(IDS[0]), result(IDS[0])])
    for files in ([two], [two, repeated]):
        serial, bucketed = both(folder, files, k=5)
        assert serial[0] in ("UsageError", "ParseError"), serial
        assert bucketed == serial


@pytest.fixture
def small_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool for any set, in spans of a few rows."""
    monkeypatch.setattr(parallel, "MIN_POOL_BYTES", 0)
    monkeypatch.setattr(parallel, "SPAN_BYTES", 3000)


def test_grading_on_worker_processes_gives_the_one_process_report(
    tmp_path: Path, small_pool: None
) -> None:
    folder = shard_set(tmp_path / "set", [9, 30])
    whole = tmp_path / "whole.jsonl"  # the same rows in one JSON Lines file
    whole.write_bytes(b"".join(path.read_bytes() for path in sorted(folder.glob("*.jsonl"))))
    whole.with_name("whole.jsonl.set.json").write_bytes(
        folder.with_name("set.set.json").read_bytes()
    )
    named = [result(row_id, passing=n % 3 > 0, trial=1 + n % 2) for n, row_id in enumerate(IDS)]
    files = [
        write_results(tmp_path / "a.jsonl", named),
        write_results(tmp_path / "b.jsonl", [result(row_id) for row_id in IDS[::4]]),
    ]
    for path, how in ((folder, "shards"), (whole, "jsonl")):
        serial = grade_set(path, files, source_format=how, jobs=1).to_json()
        pooled = grade_set(path, files, source_format=how, jobs=2).to_json()
        assert pooled == serial
    repeated = write_results(tmp_path / "r.jsonl", [result(IDS[4]), result(IDS[4])])
    with pytest.raises(ParseError, match="more than one result"):
        grade_set(folder, [repeated], source_format="shards", jobs=2)


def test_the_pool_is_taken_only_for_a_set_it_reads_in_spans(
    tmp_path: Path, small_pool: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[int] = []

    def pool(jobs: int, **options: Any) -> Any:
        taken.append(jobs)
        return contextlib.nullcontext(InlineEngine(3000, 3))

    monkeypatch.setattr(report_module, "PoolEngine", pool)
    results = write_results(tmp_path / "r.jsonl", [result(EXAMPLE["rows"][0]["id"])])
    document = tmp_path / "set.json"  # a JSON document is graded in one process
    document.write_text(json.dumps(EXAMPLE))
    grade_set(document, [results], jobs=2)
    assert taken == []
    folder = shard_set(tmp_path / "set", [9])  # a set in shards, on the pool
    grade_set(
        folder,
        [write_results(tmp_path / "s.jsonl", [result(IDS[0])])],
        jobs=2,
        source_format="shards",
    )
    assert taken == [2]


def test_one_process_grades_a_large_set_in_buckets_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past a bucket's bytes, one process grades a JSON Lines file or a set in shards in
    buckets whose records and verdicts wait on disk (the same report), and a JSON document
    as before."""
    folder = shard_set(tmp_path / "set", [9, 30])
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"".join(path.read_bytes() for path in sorted(folder.glob("*.jsonl"))))
    whole.with_name("whole.jsonl.set.json").write_bytes(
        folder.with_name("set.set.json").read_bytes()
    )
    named = [result(row_id, passing=n % 3 > 0, trial=1 + n % 2) for n, row_id in enumerate(IDS)]
    one = [result(row_id, passing=n % 4 > 0) for n, row_id in enumerate(IDS) if n % 5]
    runs = [
        [write_results(tmp_path / "one.jsonl", one)],
        [
            write_results(tmp_path / "a.jsonl", named),
            write_results(tmp_path / "b.jsonl", [result(row_id) for row_id in IDS[::4]]),
        ],
    ]
    expected = {
        (how, number): grade_set(path, files, source_format=how, jobs=1).to_json()
        for path, how in ((folder, "shards"), (whole, "jsonl"))
        for number, files in enumerate(runs)
    }
    taken: list[str] = []

    class Spy(LocalEngine):
        def __enter__(self) -> Spy:
            taken.append(self.runner.__name__)
            super().__enter__()
            return self

    monkeypatch.setattr(report_module, "LocalEngine", Spy)
    monkeypatch.setattr(parallel, "BUCKET_BYTES", 2000)  # buckets of a few rows
    monkeypatch.setattr(parallel, "SPAN_BYTES", 3000)
    for (how, number), report in expected.items():
        path = folder if how == "shards" else whole
        assert grade_set(path, runs[number], source_format=how, jobs=1).to_json() == report
    assert len(taken) == 4
    document = tmp_path / "set.json"  # a JSON document is graded as it always was
    document.write_text(json.dumps(EXAMPLE))
    grade_set(document, [write_results(tmp_path / "r.jsonl", [result(EXAMPLE["rows"][0]["id"])])])
    assert len(taken) == 4


@pytest.mark.parametrize("where", ["tasks", "verdicts", "results", "findings"])
def test_no_room_for_the_buckets_is_an_output_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A temporary folder with no room for a bucket's records, results or verdicts is an
    output error that names TMPDIR (exit 2), not a crash."""
    import errno

    from blueprint.core.errors import OutputError
    from blueprint.validation import engines

    folder = shard_set(tmp_path / "set", [9, 30])
    results = write_results(tmp_path / "r.jsonl", [result(row_id) for row_id in IDS[::2]])
    monkeypatch.setattr(parallel, "BUCKET_BYTES", 2000)

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    if where == "tasks":
        monkeypatch.setattr(engines.tempfile, "mkstemp", full)
    elif where == "verdicts":
        monkeypatch.setattr(buckets_module, "write_verdicts", full)
    else:  # a bucket's results appended to its file, or the validator's findings
        opened = Path.open
        failing = [where == "results"]

        def appending(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            return full() if failing[0] and mode == "ab" else opened(path, mode, *args, **kwargs)

        monkeypatch.setattr(engines.Path, "open", appending)
        if where == "findings":  # the set's repeated id: full once it is being written
            encoded = buckets_module.issue_fields

            def filling(issue: Any) -> Any:
                failing[0] = True
                return encoded(issue)

            monkeypatch.setattr(buckets_module, "issue_fields", filling)
    with pytest.raises(OutputError, match="TMPDIR"):
        grade_set(folder, [results], source_format="shards", jobs=1)


def test_a_clusters_buckets_come_back_one_at_a_time_and_wait_on_disk(tmp_path: Path) -> None:
    """Without a folder of this machine (a cluster), each bucket's verdicts are gathered
    alone and written to a file here before the next: the run never holds them all."""
    folder = shard_set(tmp_path / "set", [7, 19])
    path = write_results(tmp_path / "r.jsonl", [result(row_id) for row_id in IDS[::2]])
    gathered: list[int] = []

    carried: list[Any] = []

    class OneRunner(Inline):
        def submit(self, function: Callable[..., Any], *arguments: Any) -> Any:
            if function is buckets_module.grade_bucket:
                carried.append(arguments[0].errors)
            return super().submit(function, *arguments)

        def gather(self, handles: list[Any]) -> list[Any]:
            gathered.append(len(handles))
            return super().gather(handles)

    merged: list[bool] = []
    real = buckets_module._merged

    def merging(graded: list[Any], *rest: Any) -> GradedRows:
        merged.extend(bucket.spilled is not None for bucket in graded)
        return real(graded, *rest)

    issue = make_issue("schema", path="$.rows[4]", row_index=4, row_id=IDS[4], reason="bad")
    serial, _ = both(folder, [path], buckets=5, errors=[issue])
    with mock.patch.object(buckets_module, "_merged", merging):
        bucketed = outcome(
            lambda: grade_in_buckets(
                OneRunner(),
                pieces(None, find_shards([folder]), 1500),
                families(),
                [issue],
                [path],
                GradingOptions(),
                buckets=5,
            )
        )
    assert bucketed == serial
    assert merged == [True] * 5
    assert gathered[-5:] == [1] * 5
    # a cluster's worker cannot read this machine's files: a task carries its findings
    assert len(carried) == 5 and all(isinstance(found, dict) for found in carried)
