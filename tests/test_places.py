"""A JSON document's row places come back in order, from memory or from the scratch file."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.io import places as module
from blueprint.io.places import RowPlaces


@given(
    lengths=st.lists(st.tuples(st.integers(0, 9), st.integers(1, 500)), max_size=80),
    in_memory=st.sampled_from([1, 2, 5, module.PLACES_IN_MEMORY]),
)
def test_places_come_back_in_order(lengths: list[tuple[int, int]], in_memory: int) -> None:
    expected, position = [], 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "PLACES_IN_MEMORY", in_memory)
        places = RowPlaces()
        for gap, size in lengths:
            start = position + gap
            places.start(start)
            position = start + size
            places.end(position)
            expected.append((start, position))
    assert len(places) == len(expected)
    assert bool(places) == bool(expected)
    assert list(places) == expected
    assert list(places) == expected  # read twice: the file's place is left alone
    places.close()
