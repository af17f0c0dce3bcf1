"""A run's verdicts off the heap: a list of verdicts reads back what was appended, past its
chunks, and a bucket's verdict file gives back its records in order."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from blueprint.grading.semantics import VERDICTS, RowVerdict
from blueprint.grading.spilled import RECORDS_A_CHUNK, VerdictList, write_verdicts
from blueprint.grading.trials import RowTrials

texts = st.text(max_size=8)
verdicts = st.builds(
    RowVerdict,
    id=texts,
    verdict=st.sampled_from(VERDICTS),
    score=st.none() | st.floats(0, 1),
    reason=texts,
    oracle_type=st.none() | texts,
    case_family=st.none() | texts,
    evaluator=st.none() | texts,
    starter=st.booleans(),
    judge=st.none() | st.dictionaries(texts, texts, max_size=2),
    risk=st.none() | texts,
)


@given(st.lists(verdicts, max_size=40), st.integers(1, 5))
def test_a_verdict_list_reads_back_what_was_appended(items: list[RowVerdict], chunk: int) -> None:
    kept = VerdictList(chunk=chunk)
    for item in items:
        kept.append(item)
    assert len(kept) == len(items)
    assert list(kept) == items
    assert list(kept) == items  # read twice: the chunks on disk stay
    if items:
        assert kept[0] == items[0] and kept[-1] == items[-1]


def test_a_verdict_file_gives_its_records_in_order(tmp_path: Path) -> None:
    count = 3 * RECORDS_A_CHUNK + 5
    records = [
        (
            position * 2,
            RowVerdict(f"row-{position}", "pass", 1.0, "matched", judge={"model": "m"}),
            RowTrials(bytes([1, 2])) if position % 2 else None,
        )
        for position in range(count)
    ]
    written = write_verdicts(str(tmp_path), iter(records))
    assert list(written.records()) == records
    assert list(written.records()) == records  # read again, from the start
    empty = write_verdicts(str(tmp_path), iter(()))
    assert Path(empty.path).stat().st_size == 0 and list(empty.records()) == []


def test_with_many_buckets_the_chunks_are_smaller() -> None:
    from blueprint.grading.spilled import records_a_chunk

    assert records_a_chunk(1) == records_a_chunk(2) == RECORDS_A_CHUNK
    assert records_a_chunk(134) == 61 and records_a_chunk(1340) == 6
    assert records_a_chunk(10**6) == 4
    for buckets in (1, 50, 300, 5000):  # what a run holds of every bucket stays about the same
        assert buckets * records_a_chunk(buckets) <= max(8192, 4 * buckets)
