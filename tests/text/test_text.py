from __future__ import annotations

import re
import string

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.scoring.lexical.token_batch import TokenBatch
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


# --- TokenBatch: the whole-batch tokeniser must give exactly the SQuAD tokens -------------

# Characters where a fast path could go wrong: ASCII punctuation and controls, whitespace
# that str.split knows and bytes.split does not, non-ASCII letters whose lowercase is
# longer ("İ"), dashes and quotes next to articles, underscores, digits, NUL and U+0080.
TRICKY = st.text(
    alphabet=st.sampled_from(
        [
            *"aAnNtThHeE xyzXYZ0129.,;:'\"!?-_()[]{}@#$%&*+/\\|~`^<=>\t\n\r\v\f",
            *"\x00\x01\x07\x0e\x1b\x1c\x1d\x1e\x1f\x7f\x80\x85\xa0",
            *"é’“”—–\u0301ßİ\u2028\u2003\u3000\u200bΣςσ",
        ]
    ),
    max_size=60,
)
# Mostly plain ASCII words, sometimes long, so that the byte path and long keys are used.
WORDY = st.lists(
    st.one_of(
        st.sampled_from(["the", "The", "a", "an", "An", "cat", "cat,", "Cat.", "x1", "(dog)"]),
        st.text(alphabet="abcAB", min_size=7, max_size=20),
        TRICKY,
    ),
    max_size=12,
).map(" ".join)
ANY_TEXT = st.one_of(TRICKY, WORDY, st.text(max_size=40))


def _oracle_tokens(text: str) -> list[str]:
    return squad_normalize(text).split(" ") if squad_normalize(text) else []


@given(st.lists(ANY_TEXT, max_size=8))
def test_batch_tokens_are_exactly_the_squad_tokens_of_every_text(texts):
    batch = TokenBatch.of(texts)
    assert len(batch) == len(texts)
    for i, text in enumerate(texts):
        expected = tokens(text)
        assert expected == _oracle_tokens(text)
        if batch.ok[i]:
            assert batch.tokens(i) == expected
            assert batch.lengths[i] == len(expected)
        else:  # left out only when a token holds a character the batch cannot carry
            assert batch.tokens(i) is None
            assert not " ".join(expected).isprintable()


@given(st.lists(ANY_TEXT, min_size=1, max_size=6))
def test_batch_keys_are_equal_exactly_when_tokens_are(texts):
    batch = TokenBatch.of(texts)
    kept = [
        (int(batch.keys[t]), tok)
        for i in range(len(texts))
        if batch.ok[i]
        for t, tok in zip(_squad_token_indices(batch, i), batch.tokens(i), strict=True)
    ]
    by_key: dict[int, str] = {}
    by_token: dict[str, int] = {}
    for key, tok in kept:
        assert by_key.setdefault(key, tok) == tok
        assert by_token.setdefault(tok, key) == key
        assert key != 0


def _squad_token_indices(batch: TokenBatch, i: int) -> list[int]:
    lo, hi = int(batch.offsets[i]), int(batch.offsets[i + 1])
    return [t for t in range(lo, hi) if not batch.dropped[t]]


@pytest.mark.parametrize(
    ("text", "expected", "ok"),
    [
        ("The cat, the mat.", ["cat", "mat"], True),
        ("the—end a’s “a”", ["—end", "’s", "“", "”"], True),  # exact path, then batched
        ("İstanbul THE end", ["i̇stanbul", "end"], True),
        ("a\u00a0the\u2003an b", ["b"], True),  # Unicode spaces split, articles go
        ("snake_case 1,000 x\x1fthe", ["snakecase", "1000", "x"], True),
        ("a\x01b the", None, False),  # token "\x01b": the batch cannot carry it
        ("a\x00b", None, False),
        ("a\x7fb the", None, False),  # DEL joins the batch's texts: never a kept token
        ("x \x7f y", None, False),
        ("", [], True),
    ],
)
def test_batch_handles_the_cases_where_a_byte_path_could_go_wrong(text, expected, ok):
    batch = TokenBatch.of(["x y", text, "tail"])
    assert batch.ok.tolist() == [True, ok, True]
    assert batch.tokens(1) == expected
    assert batch.tokens(0) == ["x", "y"] and batch.tokens(2) == ["tail"]


def test_long_tokens_whose_hashes_collide_still_get_distinct_keys(monkeypatch):
    import ragmeter.scoring.lexical.token_batch as text_module

    monkeypatch.setattr(text_module, "_LOW_56", 0)  # every long token hashes alike
    long = ["internationalization", "internationalisation", "x" * 300, "y" * 300, "abcdefghi"]
    batch = TokenBatch.of([" ".join(long), " ".join(reversed(long)), long[0]])
    keys = {tok: int(batch.keys[t]) for t, tok in zip(range(1, 6), long, strict=True)}
    assert len(set(keys.values())) == len(long)
    second = [int(batch.keys[t]) for t in range(7, 12)]
    assert second == [keys[tok] for tok in reversed(long)]
    assert int(batch.keys[13]) == keys[long[0]]


def test_long_tokens_get_exact_keys_when_every_key_lands_on_one_slot(monkeypatch):
    import ragmeter.scoring.lexical.hash_slots as slots_module

    monkeypatch.setattr(slots_module, "_SLOT_MIX", np.uint64(0))  # linear probing does it all
    long = ["internationalization", "internationalisation", "abcdefghi", "abcdefghj", "x" * 300]
    batch = TokenBatch.of([" ".join(long), " ".join(reversed(long)), long[0]])
    keys = {tok: int(batch.keys[t]) for t, tok in zip(range(1, 6), long, strict=True)}
    assert len(set(keys.values())) == len(long)
    assert [int(batch.keys[t]) for t in range(7, 12)] == [keys[tok] for tok in reversed(long)]
    assert int(batch.keys[13]) == keys[long[0]]


def test_same_compares_tokens_byte_for_byte():
    batch = TokenBatch.of(["abcdefghijk abcdefghijX abcdefghijk " + "z" * 300 + " " + "z" * 300])
    first, second, third, big, big2 = range(1, 6)
    result = batch.same(np.array([first, first, first, big]), np.array([third, second, big, big2]))
    assert result.tolist() == [True, False, False, True]
