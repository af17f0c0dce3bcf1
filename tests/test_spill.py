"""The findings log (core/spill.py, IssueLog in core/issues.py): a list of findings as far
as anything can tell, whose oldest chunks wait on disk."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint.core.errors import OutputError
from blueprint.core.issues import Issue, IssueLog, ValidationReport
from blueprint.core.spill import Scratch
from blueprint.reports.writers import render_json


def finding(number: int) -> Issue:
    return Issue(
        code="duplicate-id",
        severity="error",
        message=f"finding {number} ✓",
        path=f"$.rows[{number}].id",
        row_index=number,
        row_id=None if number % 3 else f"r{number}",
        line=number + 1 if number % 2 else None,
        file="part-1.jsonl" if number % 5 == 0 else None,
    )


indices = st.integers(min_value=-40, max_value=40)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 10_000)),
        st.tuples(st.just("extend"), st.lists(st.integers(0, 10_000), max_size=12)),
        st.tuples(st.just("setitem"), indices, st.integers(0, 10_000)),
        st.tuples(st.just("setslice"), indices, st.lists(st.integers(0, 10_000), max_size=6)),
        st.tuples(st.just("delitem"), indices),
        st.tuples(st.just("insert"), indices, st.integers(0, 10_000)),
        st.tuples(
            st.just("clear"),
        ),
    ),
    max_size=40,
)


def apply(target: Any, operation: tuple[Any, ...]) -> None:
    kind = operation[0]
    if kind == "append":
        target.append(finding(operation[1]))
    elif kind == "extend":
        target.extend(finding(number) for number in operation[1])
    elif kind == "setitem":
        target[operation[1]] = finding(operation[2])
    elif kind == "setslice":
        target[operation[1] :] = [finding(number) for number in operation[2]]
    elif kind == "delitem":
        del target[operation[1]]
    elif kind == "insert":
        target.insert(operation[1], finding(operation[2]))
    else:
        target.clear()


@settings(max_examples=200, deadline=None)
@given(start=st.lists(st.integers(0, 10_000), max_size=30), steps=operations)
def test_the_log_behaves_as_a_list(start: list[int], steps: list[tuple[Any, ...]]) -> None:
    log = IssueLog((finding(number) for number in start), chunk=3)
    model = [finding(number) for number in start]
    for step in steps:
        raised: type[BaseException] | None = None
        try:
            apply(model, step)
        except IndexError:
            raised = IndexError
        if raised is not None:
            with pytest.raises(raised):
                apply(log, step)
        else:
            apply(log, step)
        assert len(log) == len(model)
        assert list(log) == model
    assert log == model
    for index in range(-len(model), len(model)):
        assert log[index] == model[index]
    for start_at in range(-2, len(model) + 2, 2):
        assert log[start_at : start_at + 5] == model[start_at : start_at + 5]
    assert log[::2] == model[::2]
    assert pickle.loads(pickle.dumps(log)) == model
    assert copy.deepcopy(log) == model


def test_most_findings_wait_on_disk() -> None:
    log = IssueLog(chunk=100)
    log.extend(finding(number) for number in range(10_000))
    assert len(log._held) < 200
    assert len(log._chunks) == 99
    assert [issue.row_index for issue in log] == list(range(10_000))
    assert log[4321].message == "finding 4321 ✓"


def test_a_report_keeps_its_findings_in_a_log() -> None:
    report = ValidationReport(source="x", format="jsonl", issues=[finding(1)])
    assert isinstance(report.issues, IssueLog)
    report.issues.append(Issue("missing-set-file", "warning", "no set file", "$"))
    assert [issue.code for issue in report.issues] == ["duplicate-id", "missing-set-file"]
    assert report.counts()["error"] == 1


def test_a_long_report_renders_as_a_short_one_does(monkeypatch: pytest.MonkeyPatch) -> None:
    issues = [finding(number) for number in range(5_000)]
    whole = render_json(ValidationReport(source="x", format="jsonl", issues=issues))
    monkeypatch.setattr("blueprint.core.spill.CHUNK", 7)
    report = ValidationReport(source="x", format="jsonl", issues=issues)
    assert report.issues._chunks  # type: ignore[attr-defined]
    assert render_json(report) == whole


def test_a_full_temporary_folder_is_an_error_that_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_room(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("blueprint.core.spill.tempfile.TemporaryFile", no_room)
    log = IssueLog(chunk=2)
    with pytest.raises(OutputError) as caught:
        log.extend(finding(number) for number in range(10))
    assert "TMPDIR" in str(caught.value)


def test_lists_that_share_a_scratch_file_keep_their_own_items() -> None:
    scratch = Scratch()
    first, second = IssueLog(chunk=2, scratch=scratch), IssueLog(chunk=3, scratch=scratch)
    for number in range(40):
        (first if number % 3 else second).append(finding(number))
    first.close()  # not the list's own file: the other list still reads it
    assert [issue.row_index for issue in first] == [n for n in range(40) if n % 3]
    assert [issue.row_index for issue in second] == [n for n in range(40) if not n % 3]
    scratch.close()
