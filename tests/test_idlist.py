"""An id list gives back the ids it was given, in order, from memory or from its scratch file."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.io.idlist import HEAD, IdList, id_entry

# lone surrogates too: a YAML escape can put one in an id, and it must come back as it was
_IDS = st.lists(
    st.one_of(
        st.text(max_size=6),
        st.text(alphabet=st.characters(codec=None, categories=["Cs", "Lo"]), max_size=3),
        st.text(min_size=127, max_size=300),  # lengths of two varint bytes
    ),
    max_size=60,
)


@given(ids=_IDS, memory_bytes=st.sampled_from([1, 7, 64, 1 << 20]))
def test_the_ids_come_back_in_order(ids: list[str], memory_bytes: int) -> None:
    kept = IdList(ids, memory_bytes=memory_bytes)
    assert list(kept) == ids
    assert len(kept) == len(ids)
    assert kept == ids
    assert kept == tuple(ids)
    assert tuple(ids) == kept
    assert [kept[index] for index in range(len(ids))] == ids
    assert kept[-1:] == ids[-1:]
    assert kept[1:5] == ids[1:5]
    assert kept[::2] == ids[::2]
    assert kept[::-1] == ids[::-1]
    assert pickle.loads(pickle.dumps(kept)) == ids
    kept.close()
    assert list(kept) == []


@given(ids=_IDS, memory_bytes=st.sampled_from([1, 64, 1 << 20]))
def test_an_id_added_already_encoded_is_the_same_id(ids: list[str], memory_bytes: int) -> None:
    encoded = IdList(memory_bytes=memory_bytes)
    for row_id in ids:
        encoded.append(row_id, id_entry(row_id))
    assert encoded == ids
    assert encoded[-1:] == ids[-1:]


def test_a_long_list_keeps_a_few_bytes_an_id_in_memory() -> None:
    kept = IdList(memory_bytes=4096)
    for number in range(50_000):
        kept.append(f"row-{number:07d}")
    assert len(kept._buffer) < 4096  # the rest is on disk
    assert kept[0] == "row-0000000"
    assert kept[HEAD + 3] == f"row-{HEAD + 3:07d}"
    assert kept[49_999] == "row-0049999"
    assert sum(1 for _ in kept) == 50_000


def test_ids_added_while_reading_are_read_on_the_next_pass() -> None:
    kept = IdList(["a", "b"], memory_bytes=2)
    seen = []
    for row_id in kept:
        seen.append(row_id)
        if row_id == "a":
            kept.append("c")
    assert list(kept) == ["a", "b", "c"]
    assert seen[:2] == ["a", "b"]


def test_it_is_a_sequence_of_strings_and_nothing_else() -> None:
    kept = IdList(["a"])
    assert kept != "a"
    assert kept != IdList(["a", "b"])
    assert hash(kept) == hash(("a",))
    with pytest.raises(IndexError):
        kept[1]
    assert repr(kept) == "IdList(['a'])"
