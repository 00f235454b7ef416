"""Binding a claim to its subject and its values in a retrieved passage.

Retrieved passages come with distractors: passages of the same kind about other entities
(another town, drug, plan, novel, river) that say the same sort of thing with other values.
Word overlap and an entailment model read "the town traditionally lived from tin mining" as
support for "Wexcombe traditionally lived from tin mining" whichever town the passage is
about. A hard rule reads what the evidence is about:

``subject_conflict``
    a name of the claim (a proper noun in spaCy's parse, or a capitalised word after the
    first; the passage must write it with a capital) or a hyphenated modifier that names a
    kind in lower case ("the dusk-tailed vole") is missing from the passage, or the
    sentences that hold the rest of the claim name none of them and open with another
    name ("Ashford traditionally lived from tin mining"; "The town ..." and "It ..." are
    read with the passage's own subject);
``answer_conflict``
    the claim answers the block's question (it shares a word with it) with
    nouns and adjectives of its own ("high cholesterol"), none of them anywhere in the
    passage, while the passage's sentence that answers that question answers with words
    the claim lacks ("plaque psoriasis"): another answer. A claim whose answer is a name or a
    quantity that sentence gives is bound by it.
    Read from spaCy's parse of the claim (no such conflict without spaCy).

Numbers are bound by ``missing_numbers``
(:mod:`~ragmeter.judges.offline.features`): a quantity of the claim that the passage does not
give for the same unit (:mod:`~ragmeter.judges.offline.quantities`: "10 GB" against "10
members" and "1000 GB").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ragmeter.judges.offline.features import PREFIX, ClaimText, PremiseText, stem
from ragmeter.judges.offline.quantities import is_given, quantities
from ragmeter.text import DATE_WORDS, SPEAKER_WORDS, STOP_WORDS, tokens

__all__ = [
    "BINDING_FEATURES",
    "ClaimWords",
    "answer_conflict",
    "claim_names",
    "kind_words",
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


# A definite description with a hyphenated modifier: what names a kind in lower case ("the
# dusk-tailed vole", "the russet-crowned heron"; not "an ice-cold bottle").
_KIND_RE = re.compile(r"\b[Tt]he\s+([a-z]+-[a-z]+)\s+[a-z]")


def kind_words(claim: str) -> tuple[str, ...]:
    """The hyphenated modifiers of ``claim`` before a noun, as tokens ("dusktailed")."""
    return tuple(dict.fromkeys(t for m in _KIND_RE.findall(claim) for t in tokens(m)))


@dataclass(frozen=True, slots=True)
class ClaimWords:
    """What binding reads of a claim: its names (tokens) and the stems of its nouns and
    adjectives that are not names (the words an answer gives)."""

    names: tuple[str, ...]
    values: tuple[str, ...] = ()
    #: Stems of the main clause's subject ("the Ferndoc Enterprise plan"), which a passage
    #: may write as "it" or "the plan".
    subject: tuple[str, ...] = ()


def parsed_words(doc: Any) -> ClaimWords:
    """:class:`ClaimWords` of a parsed claim (spaCy ``Doc``): proper nouns as names (month
    and weekday names and stop words left out), other nouns and adjectives as values."""
    names: list[str] = []
    values: list[str] = []
    # the whole word a token is part of ("Berners-Lee" is one name, not "Berners" and "Lee")
    words = {
        m.start() + k: m.group() for m in _WORD_RE.finditer(doc.text) for k in range(len(m.group()))
    }
    for token in doc:
        if token.pos_ == "PROPN" and token.text[:1].isupper():
            names.extend(_name_tokens(words.get(token.idx, token.text)))
        elif token.pos_ in ("NOUN", "ADJ") and token.lower_ not in STOP_WORDS:
            values.extend(stem(t) for t in tokens(token.text) if t not in STOP_WORDS)
    # a capitalised word after the first is a name too ("the Loomly Team plan": the small
    # parser tags "Team" a noun)
    names.extend(claim_names(doc.text))
    subject = [
        stem(t)
        for token in doc
        if token.dep_ in ("nsubj", "nsubjpass") and token.head.dep_ == "ROOT"
        for part in token.subtree
        for t in tokens(part.text)
        if t not in STOP_WORDS
    ]
    kept = tuple(dict.fromkeys(t for t in names if t not in DATE_WORDS and t not in STOP_WORDS))
    values = [v for v in values if v not in {stem(n) for n in kept}]
    return ClaimWords(kept, tuple(dict.fromkeys(values)), tuple(dict.fromkeys(subject)))


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
    words = _WORD_RE.findall(sentence)[:4]
    article = False
    while words and words[0].lower() in STOP_WORDS:
        words, article = words[1:], True
    if not words or not words[0][0].isupper():
        return False
    if article and len(words) > 1 and words[1][0].islower():
        return False  # "The American gymnast ...": a modifier, not the subject's name
    found = _name_tokens(words[0])
    if not found or found[0] in DATE_WORDS or _has(found[0], frozenset(names)):
        return False
    word = words[0]
    if re.search(rf"\b{re.escape(word.lower())}\b", premise.text) is not None:
        return False
    inside = sum(1 for s in premise.sentences if word in _WORD_RE.findall(s)[1:])
    openings = sum(1 for s in premise.sentences if s.startswith(word))
    return inside > 0 or openings > 1


def _another_name(sentence: str, names: Sequence[str], rest: frozenset[str]) -> bool:
    """Whether ``sentence`` names someone that is none of ``names`` among the words it
    shares with the claim (``rest``: the claim's other content stems): "Employees based in
    the Dublin office are entitled to ..." for a claim about Berlin, but not "... credited
    with the telephone, later moved to Canada" ("The American gymnast ..." names no one: a
    modifier after an opening article)."""
    words = _WORD_RE.findall(sentence)
    held = [k for k, w in enumerate(words) if any(stem(t) in rest for t in tokens(w))]
    if not held:
        return False
    own = frozenset(names)
    for k in range(max(held[0], 1), held[-1]):
        word = words[k]
        if not word[0].isupper() or word in SPEAKER_WORDS:
            continue
        if k == 1 and words[0].lower() in STOP_WORDS and words[2:3] and words[2][0].islower():
            continue
        found = _name_tokens(word)
        if not found or found[0] in DATE_WORDS or found[0] in STOP_WORDS or len(found[0]) < 3:
            continue
        if not _has(found[0], own):
            return True
    return False


_DEMONYM = ("ian", "ish", "ese", "ean", "an", "i")


def _ascii(word: str) -> str:
    """``word`` without its accents ("türkiye" -> "turkiye")."""
    return unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode()


def _alias_in(name: str, acronym: bool, text: str, written: frozenset[str]) -> bool:
    """Whether ``text`` gives ``name`` in another form: an acronym spelled by the capitals of
    a run of words ("NASA", "UNESCO", "MIT"), a short form ("Fed" for "Federal"), a
    demonym of a place ("Norwegian" for "Norway", "Turkish" for "Türkiye")."""
    name = _ascii(name)
    written = frozenset(_ascii(w) for w in written)
    if acronym:
        for run in _CAPITAL_RUN_RE.findall(text):
            initials = "".join(w[0] for w in run.split() if w[0].isupper()).lower()
            if name in initials:
                return True
    if len(name) >= 3 and any(w.startswith(name) for w in written):
        return True
    for suffix in _DEMONYM:
        if name.endswith(suffix) and len(name) - len(suffix) >= 4:
            head = name[:4]
            return any(w.startswith(head) for w in written)
    return False


# A run of capitalised words, small linking words allowed ("National Aeronautics and Space
# Administration", "United Nations Educational, Scientific and Cultural Organization").
_CAPITAL_RUN_RE = re.compile(r"(?:[A-Z][\w'-]*,?\s+(?:(?:of|and|for|the|de|&)\s+)*)+[A-Z][\w'-]*")


@lru_cache(maxsize=4096)
def _capitalised(text: str) -> frozenset[str]:
    """Tokens of the words ``text`` writes with a capital (where a name can be; a lower-case
    text has none, and then every word counts)."""
    words = _WORD_RE.findall(text)
    found = frozenset(t for w in words if w[0].isupper() for t in _name_tokens(w))
    if not found:
        return frozenset(t for w in words for t in _name_tokens(w))
    return found | frozenset(stem(t) for t in found)


def subject_conflict(
    names: Sequence[str], claim: ClaimText, premise: PremiseText, kinds: Sequence[str] = ()
) -> bool:
    """Whether the passage's evidence for ``claim`` is about another subject than the
    claim's ``names`` (see the module docstring)."""
    if (not names and not kinds) or not premise.sentences:
        return False
    # a name after the claim's first word must be written with a capital in the passage
    # ("Team" is not "teams"); the first word may be a capitalised common noun ("Sigma bonds")
    written = _capitalised(premise.text)
    words = _WORD_RE.findall(claim.text)
    first = _name_tokens(words[0]) if words else []
    acronyms = {w.lower() for w in words if w.isupper() and 2 <= len(w) <= 6}
    for n in names:
        where = premise.stems if n in first else written
        if not _has(n, where) and not _alias_in(n, n in acronyms, premise.text, written):
            return True
    if not all(k in premise.words for k in kinds):
        return True
    names = (*names, *kinds)
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
    # "The town ..." and "It ..." are read with the passage's subject; a sentence that opens
    # with another name, or names another in the claim's name's place, is about someone else
    shared = frozenset(rest)
    return any(
        _others(premise.sentences[k], names, premise)
        or _another_name(premise.sentences[k], names, shared)
        for k in held
    )


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
    if not any(_has(c, asked) for c in claim.content):  # the claim is about the question
        return False
    everything_asked = asked
    asked = frozenset(a for a in asked if not _has(a, own))
    if not asked:
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
    # the claim's answer is a name or a quantity, and the sentence gives it ("Tobias Nyberg"
    # for "Who wrote ...?", "35,500" for "How many ...?")
    if any(_has(n, sentence) for n in own if not _has(n, everything_asked)):
        return False
    found = quantities(claim.text)
    if found and any(is_given(q, quantities(premise.sentences[k])) for q in found):
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
