"""Blueprint's errors cross process boundaries as they were raised."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from blueprint.core import errors


@pytest.mark.parametrize(
    "error",
    [
        errors.ParseError(Path("set.jsonl"), "not JSON", line=3, column=7),
        errors.ParseError("set.csv", "a row too long"),
        errors.OutputError(Path("/tmp"), "No space left on device"),
        errors.OutputExistsError(Path("out.json")),
        errors.AmbiguousFormatError(Path("set.json"), ["json", "langsmith"]),
        errors.InvalidSetError(Path("set.json"), ["one", "two"]),
        errors.UsageError("no set given"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_an_error_pickles_back_to_itself(error: errors.BlueprintError) -> None:
    # a worker of a pool or of a Dask cluster raises it in the process that reads its result
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert str(again) == str(error)
    assert again.args == error.args
    assert {key: value for key, value in vars(again).items() if key != "_given"} == {
        key: value for key, value in vars(error).items() if key != "_given"
    }
