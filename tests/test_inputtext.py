"""The normalised text of an input: what exact and near-duplicate checks compare."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.io.firstseen import text_key
from blueprint.validation.inputtext import (
    canonical_text,
    comparable_text,
    input_key,
    is_chat,
    jaccard,
    normalize,
    normalize_by_character,
    shingle_hashes,
    shingles,
    split_of,
)
from strategies import json_values


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("Hello, World!!", "hello world"),
        ("  many\t\nspaces  ", "many spaces"),
        ("ﬁne Straße", "fine strasse"),  # NFKC and case folding
        ("ＦＵＬＬＷＩＤＴＨ", "fullwidth"),
        ("don’t", "don t"),
        ("don't", "don t"),
        ("«Bonjour», dit-il…", "bonjour dit il"),
        (
            "3.5 kg, 1,000 items at 10:30 on 2024-06-01.",
            "3.5 kg 1,000 items at 10:30 on 2024-06-01",
        ),
        ("order A-12345", "order a 12345"),
        ("-5 and .5", "-5 and .5"),
        ("x - 5", "x 5"),
        ("$5 + 2=7", "$5 + 2=7"),  # symbols are not punctuation
        ("?", "?"),  # nothing but punctuation keeps it
        ("snake_case", "snake case"),
        ("é-è (ü)", "é è ü"),
    ],
)
def test_normalize(text: str, normalised: str) -> None:
    assert normalize(text) == normalised


def test_numbers_keep_what_tells_them_apart() -> None:
    assert normalize("refund 3.50") != normalize("refund 350")
    assert normalize("what is -5 squared") != normalize("what is 5 squared")
    assert normalize("?") != normalize("!")


#: texts dense in what decides punctuation: digits of several scripts, signs, points, words
_punctuated = st.text(
    st.one_of(
        st.sampled_from(list("0123456789٣٥.,-_:;!?'\"()… «»—¿¡ aZéß\u00a0\t\n")),
        st.characters(),
    ),
    max_size=30,
)


@given(_punctuated)
def test_normalize_decides_punctuation_as_the_character_by_character_reference(text: str) -> None:
    assert normalize(text) == normalize_by_character(text)


#: texts where the byte-level path meets every case: punctuation beside ASCII and other digits,
#: letters, symbols and marks; white space and punctuation beyond ASCII; separators \x1c-\x1f
_beside_digits = st.text(
    st.one_of(
        st.sampled_from(list("09٣-.,:_'\"?!()$+ aZé☕́\u00a0\u2028\x1c\x1f«。😤")),
        st.characters(),
    ),
    max_size=24,
)


@given(_beside_digits)
def test_the_byte_level_path_decides_as_the_reference(text: str) -> None:
    assert normalize(text) == normalize_by_character(text)


@given(json_values)
def test_the_duplicate_key_is_the_key_of_the_comparable_text(value: object) -> None:
    # validate, dedupe, check and split all key inputs by input_key
    text = comparable_text(value)
    assert input_key(value) == (None if text is None else text_key(text))


@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once


def test_canonical_text_of_objects_ignores_key_order() -> None:
    assert canonical_text({"b": 1, "a": {"y": "Y", "x": None}}) == canonical_text(
        {"a": {"x": None, "y": "Y"}, "b": 1}
    )
    assert input_key({"q": "Refund?", "n": 1}) == input_key({"n": 1, "q": "refund"})
    assert input_key({"q": "Refund?", "n": 1}) != input_key({"q": "refund", "n": "2"})


def test_chat_messages_keep_their_roles_and_tool_calls() -> None:
    user = [{"role": "user", "content": "Where is my refund?"}]
    assistant = [{"role": "assistant", "content": "Where is my refund?"}]
    assert is_chat(user) and not is_chat([]) and not is_chat(["text"])
    assert input_key(user) != input_key(assistant)
    assert input_key(user) != input_key("Where is my refund?")
    with_call = [{**user[0], "tool_calls": [{"name": "lookup"}]}]
    assert input_key(with_call) != input_key(user)
    parts = [{"role": "user", "content": [{"type": "text", "text": "Where is my refund?"}]}]
    assert input_key(parts) == input_key(user)


def test_near_text_leaves_out_the_set_up_of_a_conversation() -> None:
    chat = [
        {"role": "system", "content": "You are a long, shared system prompt."},
        {"role": "user", "content": "Where is my refund?"},
    ]
    assert "system" in canonical_text(chat)
    assert canonical_text(chat, near=True) == "user: Where is my refund?"
    only_setup = chat[:1]
    assert canonical_text(only_setup, near=True) == canonical_text(only_setup)


@pytest.mark.parametrize("value", [None, "", "   ", {}, [], "\n\t"])
def test_nothing_to_compare(value: object) -> None:
    assert comparable_text(value) is None
    assert input_key(value) is None


def test_shingles_are_words_and_word_pairs() -> None:
    assert shingles(["a", "b", "c"]) == {"a", "b", "c", "a b", "b c"}
    assert len(shingle_hashes(["a", "b", "a", "b"])) == len({"a", "b", "a b", "b a"})


def test_jaccard() -> None:
    assert jaccard({1, 2, 3}, [2, 3, 4]) == 0.5
    assert jaccard(set(), []) == 1.0


@pytest.mark.parametrize(
    ("row", "split"),
    [
        ({"metadata": {"split": "dev"}}, "dev"),
        ({"metadata": {"split": ["dev"]}}, None),
        ({"metadata": {}}, None),
        ({"metadata": None}, None),
        ("not a row", None),
    ],
)
def test_split_of(row: object, split: str | None) -> None:
    assert split_of(row) == split


def test_a_lone_surrogate_is_compared_not_a_crash() -> None:
    # a YAML escape ("\ud800") can put one in a string that JSON readers would refuse
    assert input_key("refund \ud800") == input_key("Refund \ud800!")
    assert input_key("refund \ud800") != input_key("refund \udc00")
    assert len(shingle_hashes(["refund", "\ud800"])) == 3
