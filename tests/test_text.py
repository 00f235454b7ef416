from __future__ import annotations

import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.text import normalize, split_sentences, tokens, tokens_for_lookup


def squad_normalize(s: str) -> str:
    """The SQuAD v1.1 normalisation, written out step by step as the oracle."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The cat sat on a mat", ["cat", "sat", "on", "mat"]),
        ("Einstein was born in 1879.", ["einstein", "was", "born", "in", "1879"]),
        ("pi is 3.14", ["pi", "is", "314"]),
        ("1,000 people", ["1000", "people"]),
        ("snake_case", ["snakecase"]),
        ("well-known author", ["wellknown", "author"]),
        ("  hello\t\tworld\n\nagain  ", ["hello", "world", "again"]),
        ("“Paris” — France", ["“paris”", "—", "france"]),
        ("don't don’t", ["dont", "don’t"]),
        ("Straße", ["straße"]),
        ("café", ["café"]),
        ("cafe\u0301", ["cafe\u0301"]),
        ("theatre another anthem", ["theatre", "another", "anthem"]),
        ("THE An a", []),
        ("", []),
    ],
)
def test_tokens_follow_squad_normalisation(text, expected):
    assert tokens(text) == expected
    assert normalize(text) == " ".join(expected) == squad_normalize(text)


def test_articles_next_to_non_ascii_marks_are_removed_as_the_regex_does():
    # "a" then a combining accent: the regex sees a word boundary after "a".
    assert tokens("a\u0301 the—end a’s “a”") == ["\u0301", "—end", "’s", "“", "”"]


def test_ascii_control_characters_take_the_exact_path():
    assert tokens("a\x01b the") == ["\x01b"]
    assert tokens("x\x1fthe") == ["x"]  # \x1f is whitespace to str.split


TEXT = st.text(
    alphabet=st.sampled_from(
        [*"aAnNtThHeE xyz019.,;'-_\t\n", "\x01", "\x1c", "é", "’", "“", "\u0301", "ß", "İ"]
    ),
    max_size=40,
)


@given(TEXT)
def test_tokens_equal_the_squad_oracle_on_any_text(text):
    assert " ".join(tokens(text)) == squad_normalize(text)


@given(TEXT)
def test_lookup_tokens_are_the_tokens_plus_at_most_the_articles(text):
    lookup, exact = tokens_for_lookup(text)
    if exact:
        assert lookup == tokens(text)
    else:
        assert [t for t in lookup if t not in {"a", "an", "the"}] == tokens(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("Dr. Smith met Mr. Jones. They talked.", ["Dr. Smith met Mr. Jones.", "They talked."]),
        ("Use a tool, e.g. Python. It works.", ["Use a tool, e.g. Python.", "It works."]),
        (
            "Pi is 3.14 and e is 2.72. Both are irrational.",
            ["Pi is 3.14 and e is 2.72.", "Both are irrational."],
        ),
        ("J. K. Rowling wrote it. It sold.", ["J. K. Rowling wrote it.", "It sold."]),
        ("He said “Stop.” Then he left.", ["He said “Stop.”", "Then he left."]),
        ("It ended in 1999. 2000 began.", ["It ended in 1999.", "2000 began."]),
        ("no capital after. this stays", ["no capital after. this stays"]),
        ("First paragraph\n\nSecond one", ["First paragraph", "Second one"]),
        ("Items:\n- one\n- two", ["Items:", "- one", "- two"]),
        ("wrapped line\ncontinues here.", ["wrapped line\ncontinues here."]),
        ("", []),
        ("   ", []),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


@given(st.text(max_size=200))
def test_split_sentences_keeps_every_non_space_character_in_order(text):
    joined = "".join("".join(s.split()) for s in split_sentences(text))
    assert joined == "".join(text.split())
