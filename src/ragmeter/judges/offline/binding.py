"""Binding a claim to its subject and its values in a retrieved passage.

Retrieved passages come with distractors: passages of the same kind about other entities
(another town, drug, plan, novel, river) that say the same sort of thing with other values.
Word overlap and an entailment model read "the town traditionally lived from tin mining" as
support for "Wexcombe traditionally lived from tin mining" whichever town the passage is
about. A hard rule reads what the evidence is about:

``subject_conflict``
    a name of the claim (a proper noun in spaCy's parse, else a capitalised word after the
    first) is missing from the passage, or the sentences that hold the rest of the claim
    name none of the claim's names while naming someone else, or, naming no one, belong to
    a passage whose topic (its first sentence) is not one of them;
``answer_conflict``
    the claim answers the block's question (it shares a word with it beyond names) with
    nouns and adjectives of its own ("high cholesterol"), none of them anywhere in the
    passage, while the passage's sentence that answers that question answers with words
    the claim lacks ("plaque psoriasis"): another answer.
    Read from spaCy's parse of the claim (no such conflict without spaCy).

Numbers are bound by ``missing_numbers``
(:mod:`~ragmeter.judges.offline.features`): a quantity of the claim that the passage does not
give for the same unit (:mod:`~ragmeter.judges.offline.quantities`: "10 GB" against "10
members" and "1000 GB").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.judges.offline.features import PREFIX, ClaimText, PremiseText, stem
from ragmeter.text import DATE_WORDS, SPEAKER_WORDS, STOP_WORDS, tokens

__all__ = [
    "BINDING_FEATURES",
    "ClaimWords",
    "answer_conflict",
    "claim_names",
    "parsed_words",
    "subject_conflict",
]

#: The features this module adds (1.0 for a conflict, else 0.0).
BINDING_FEATURES: tuple[str, ...] = ("subject_conflict", "answer_conflict")

_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")


def _name_tokens(word: str) -> list[str]:
    """The token of a name as written ("Mars's" -> "mars")."""
    return tokens(re.split(r"['’]", word)[0])[:1]


def claim_names(claim: str) -> tuple[str, ...]:
    """Capitalised words of ``claim`` after its first (likely names), as tokens; the
    fallback when spaCy is not installed."""
    words = _WORD_RE.findall(claim)
    out: list[str] = []
    for word in words[1:]:
        if word[0].isupper() and word not in SPEAKER_WORDS:
            out.extend(_name_tokens(word))
    return tuple(dict.fromkeys(t for t in out if t not in DATE_WORDS and t not in STOP_WORDS))


@dataclass(frozen=True, slots=True)
class ClaimWords:
    """What binding reads of a claim: its names (tokens) and the stems of its nouns and
    adjectives that are not names (the words an answer gives)."""

    names: tuple[str, ...]
    values: tuple[str, ...] = ()


def parsed_words(doc: Any) -> ClaimWords:
    """:class:`ClaimWords` of a parsed claim (spaCy ``Doc``): proper nouns as names (month
    and weekday names and stop words left out), other nouns and adjectives as values."""
    names: list[str] = []
    values: list[str] = []
    for token in doc:
        if token.pos_ == "PROPN" and token.text[:1].isupper():
            names.extend(_name_tokens(token.text))
        elif token.pos_ in ("NOUN", "ADJ") and token.lower_ not in STOP_WORDS:
            values.extend(stem(t) for t in tokens(token.text) if t not in STOP_WORDS)
    kept = tuple(dict.fromkeys(t for t in names if t not in DATE_WORDS and t not in STOP_WORDS))
    return ClaimWords(kept, tuple(dict.fromkeys(values)))


def _has(name: str, stems: frozenset[str]) -> bool:
    if name in stems or stem(name) in stems:
        return True
    head = name[:PREFIX]
    return len(head) >= 4 and any(s[:PREFIX] == head for s in stems if len(s) >= 4)


def _others(sentence: str, names: Sequence[str], premise: PremiseText) -> bool:
    """Whether ``sentence`` opens with a name that is none of ``names`` (its subject is
    someone else: "Ashford traditionally lived from tin mining"; "It ...", "The town ..."
    and "Doctors ..." name no one). An opening word is a name when the passage never writes
    it in lower case and writes it capitalised after the start of a sentence, or opens
    more than one sentence with it."""
    words = _WORD_RE.findall(sentence)[:3]
    while words and words[0].lower() in STOP_WORDS:
        words = words[1:]
    if not words or not words[0][0].isupper():
        return False
    found = _name_tokens(words[0])
    if not found or found[0] in DATE_WORDS or _has(found[0], frozenset(names)):
        return False
    word = words[0]
    if re.search(rf"\b{re.escape(word.lower())}\b", premise.text) is not None:
        return False
    inside = sum(1 for s in premise.sentences if word in _WORD_RE.findall(s)[1:])
    openings = sum(1 for s in premise.sentences if s.startswith(word))
    return inside > 0 or openings > 1


def subject_conflict(names: Sequence[str], claim: ClaimText, premise: PremiseText) -> bool:
    """Whether the passage's evidence for ``claim`` is about another subject than the
    claim's ``names`` (see the module docstring)."""
    if not names or not premise.sentences:
        return False
    if not all(_has(n, premise.stems) for n in names):
        return True
    named = frozenset(stem(n) for n in names)
    rest = [c for c in claim.content if c not in named and not _has(c, frozenset(names))]
    if not rest:
        return False
    scores = [sum(c in ss for c in rest) for ss in premise.sentence_stems]
    best = max(scores)
    if best == 0:
        return False
    held = [k for k, s in enumerate(scores) if s == best]
    for k in held:
        if any(_has(n, premise.sentence_stems[k]) for n in names):
            return False
    if any(_others(premise.sentences[k], names, premise) for k in held):
        return True
    return not any(_has(n, premise.sentence_stems[0]) for n in names)


_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)


def _near(word: str, stems: frozenset[str]) -> bool:
    return _has(word, stems)


def answer_conflict(
    words: ClaimWords, claim: ClaimText, asked: frozenset[str], premise: PremiseText
) -> bool:
    """Whether ``claim`` gives another answer to the question (content stems ``asked``)
    than the passage's sentence that answers it (see the module docstring)."""
    if not words.values or not asked or not premise.sentences:
        return False
    own = frozenset(words.names)
    asked = frozenset(a for a in asked if not _has(a, own))
    if not asked or not any(_near(c, asked) for c in claim.content if not _has(c, own)):
        return False
    values = [v for v in words.values if not _near(v, asked) and not _has(v, own)]
    if not values or any(_has(v, premise.stems) for v in values):
        return False
    scores = [sum(1 for a in asked if _has(a, ss)) for ss in premise.sentence_stems]
    best = max(scores)
    if best == 0:
        return False
    k = scores.index(best)
    sentence = premise.sentence_stems[k]
    if any(_has(v, sentence) for v in values):
        return False
    claim_stems = frozenset(claim.content)
    gives = [
        w
        for w in sentence
        if w not in _STOP_STEMS
        and not w[:1].isdigit()
        and not _near(w, asked)
        and not _has(w, own)
        and not _near(w, claim_stems)
    ]
    return bool(gives)
