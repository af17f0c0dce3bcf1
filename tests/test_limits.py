from __future__ import annotations

import pytest

from blueprint.core.errors import UsageError
from blueprint.io import limits


def test_defaults_and_override_block() -> None:
    assert limits.current() == limits.Limits()
    with limits.overridden(max_depth=7) as inside:
        assert inside.max_depth == 7 and limits.current().max_depth == 7
    assert limits.current().max_depth == limits.Limits().max_depth


def test_environment_takes_precedence_and_bad_values_are_usage_errors(monkeypatch) -> None:
    monkeypatch.setenv("BLUEPRINT_MAX_ROWS", "1_000")
    with limits.overridden(max_rows=5):
        assert limits.current().max_rows == 1000
    monkeypatch.setenv("BLUEPRINT_MAX_ROWS", "lots")
    with pytest.raises(UsageError):
        limits.current()
    monkeypatch.setenv("BLUEPRINT_MAX_ROWS", "-3")
    with pytest.raises(UsageError):
        limits.current()


def test_zero_means_no_limit_and_unknown_names_are_refused() -> None:
    with limits.overridden(max_file_bytes=0, max_rows=10):
        assert not limits.exceeded("max_file_bytes", 10**12)
        assert limits.exceeded("max_rows", 11) and not limits.exceeded("max_rows", 10)
    with pytest.raises(UsageError):
        limits.configure({"max-everything": 1})
    with pytest.raises(UsageError):
        limits.configure({"max-depth": True})
