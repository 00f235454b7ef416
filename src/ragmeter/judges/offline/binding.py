"""Binding a claim to its subject and its values in a retrieved passage.

Retrieved passages come with distractors: passages of the same kind about other entities
(another town, drug, plan, novel, river) that say the same sort of thing with other values.
Word overlap and an entailment model read "the town traditionally lived from tin mining" as
support for "Wexcombe traditionally lived from tin mining" whichever town the passage is
about. A hard rule reads what the evidence is about:

``subject_conflict``
    a name of the claim's subject (a proper noun by spaCy's tagger, or a capitalised word
    after the first; a word of a several-word name must be written with its capital, "the
    Loomly Team plan" is not "teams"; an acronym, a short form or a demonym counts: "NASA",
    "Fed", "Norwegian"), more than half of its other names, or
    a hyphenated modifier that names a kind in lower case ("the dusk-tailed vole") or that
    kind's noun ("the slate-eared plover" in a passage about the slate-eared tree frog) is
    missing from the passage. A passage that writes "the town" or "it" is read as about
    its own subject; which sentence holds the claim's other words is not checked (on
    LFQA's web documents that check refused claims people found supported, and on the
    realistic rows it caught nothing the names had not).
``answer_conflict``
    the claim answers the block's question (it shares a word with what the question asks,
    not only the names and the kind of its subject: a long answer's other facts about the
    same river answer no question of it) with nouns and adjectives of its own ("high
    cholesterol"), none of them anywhere in the passage, while the passage's sentence that
    answers that question answers with words the claim lacks ("plaque psoriasis"): another
    answer. A claim whose answer is a name that sentence gives, or a quantity the passage
    gives, is bound by it. A name answers otherwise when the claim gives a name the question
    does not and the passage lacks, and the passage's sentence that holds the rest of the
    claim names someone else ("written by Halvard Castellan" against "written by Halvard
    Polstead"). A yes/no question is read the same way ("navigable by barges for most of
    its length" against "It is not navigable by boats").
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
_KIND_RE = re.compile(r"\b[Tt]he\s+([a-z]+-[a-z]+)\s+([a-z]+)")


def kind_words(claim: str) -> tuple[str, ...]:
    """The hyphenated modifiers of ``claim`` before a noun and that noun, as tokens ("the
    dusk-tailed vole": "dusktailed", "vole")."""
    return tuple(dict.fromkeys(t for m in _KIND_RE.findall(claim) for w in m for t in tokens(w)))


@dataclass(frozen=True, slots=True)
class ClaimWords:
    """What binding reads of a claim: its names (tokens) and the stems of its nouns and
    adjectives that are not names (the words an answer gives)."""

    names: tuple[str, ...]
    values: tuple[str, ...] = ()
    #: Stems of the main clause's subject ("the Ferndoc Enterprise plan"), which a passage
    #: may write as "it" or "the plan".
    subject: tuple[str, ...] = ()


#: Penn Treebank tags of the words an answer gives: common nouns and adjectives.
_VALUE_TAGS = frozenset({"NN", "NNS", "JJ", "JJR", "JJS"})


def parsed_words(doc: Any) -> ClaimWords:
    """:class:`ClaimWords` of a tagged claim (a spaCy ``Doc``; its Penn Treebank tags
    suffice, :func:`ragmeter.models.syntax.tag`): proper nouns as names (month and weekday
    names and stop words left out), other nouns and adjectives as values, the words before
    the first verb as the subject."""
    names: list[str] = []
    values: list[str] = []
    subject: list[str] = []
    verb = False
    # the whole word a token is part of ("Berners-Lee" is one name, not "Berners" and "Lee")
    words = {
        m.start() + k: m.group() for m in _WORD_RE.finditer(doc.text) for k in range(len(m.group()))
    }
    for token in doc:
        # the subject: what comes before the first verb ("Tupac's mother", "In the wild, the
        # dusk-tailed vole"); read from the tags alone, no dependency parse
        tag = token.tag_
        # a part of a hyphenated word is no verb ("eared" of "the ember-eared salamander")
        inside = token.idx > 0 and doc.text[token.idx - 1] == "-"
        verb = verb or (not inside and (tag.startswith("VB") or tag == "MD"))
        # the whole word, as the question's and the passage's stems read it ("moss-eared" is
        # "mossear", not "moss" and "eared")
        word = words.get(token.idx, token.text)
        if not verb and not token.is_punct:
            subject.extend(stem(t) for t in tokens(word) if t not in STOP_WORDS)
        if tag.startswith("NNP") and token.text[:1].isupper():
            names.extend(_name_tokens(word))
        elif tag in _VALUE_TAGS and token.lower_ not in STOP_WORDS:
            values.extend(stem(t) for t in tokens(word) if t not in STOP_WORDS)
    # a capitalised word after the first is a name too ("the Loomly Team plan": the small
    # parser tags "Team" a noun)
    names.extend(claim_names(doc.text))
    kept = tuple(dict.fromkeys(t for t in names if t not in DATE_WORDS and t not in STOP_WORDS))
    values = [v for v in values if v not in {stem(n) for n in kept}]
    return ClaimWords(kept, tuple(dict.fromkeys(values)), tuple(dict.fromkeys(subject)))


def _has(name: str, stems: frozenset[str]) -> bool:
    if name in stems or stem(name) in stems:
        return True
    head = name[:PREFIX]
    return len(head) >= 4 and head in _heads(stems)


@lru_cache(maxsize=8192)
def _heads(stems: frozenset[str]) -> frozenset[str]:
    """The first :data:`PREFIX` letters of each stem of at least four."""
    return frozenset(s[:PREFIX] for s in stems if len(s) >= 4)


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


# Two or more capitalised words in a row: one name ("Loomly Team", "World Heritage Site").
_COMPOUND_RE = re.compile(r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)+")


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
    names: Sequence[str],
    claim: ClaimText,
    premise: PremiseText,
    kinds: Sequence[str] = (),
    subject: frozenset[str] = frozenset(),
) -> bool:
    """Whether the passage's evidence for ``claim`` is about another subject than the
    claim's ``names`` (see the module docstring)."""
    if (not names and not kinds) or not premise.sentences:
        return False
    written = _capitalised(premise.text)
    words = _WORD_RE.findall(claim.text)
    first = _name_tokens(words[0]) if words else []
    acronyms = {w.lower() for w in words if w.isupper() and 2 <= len(w) <= 6}
    # the subject's names must be the passage's, and at least half of the claim's other
    # names ("Tupac's mother is Afeni Shakur" read in a passage that writes "Afeni"); a claim
    # whose subject names no one needs all of them
    subject_names = [n for n in names if stem(n) in subject or n in subject]
    others = [n for n in names if n not in subject_names] if subject_names else []
    required = subject_names or list(names)

    # a name of several capitalised words ("the Loomly Team plan") must be written with
    # its capitals; a one-word name may be written in lower case ("kelvin", "xbox")
    compound = {
        t for run in _COMPOUND_RE.findall(claim.text) for w in run.split() for t in _name_tokens(w)
    }

    def given(n: str) -> bool:
        where = written if n in compound and n not in first else premise.stems
        return _has(n, where) or _alias_in(n, n in acronyms, premise.text, written)

    if not all(given(n) for n in required):
        return True
    if others and 2 * sum(given(n) for n in others) < len(others):
        return True
    # the kind's modifier as written, its noun in any form ("voles")
    return not all(k in premise.words or _has(stem(k), premise.stems) for k in kinds)


_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)


def answer_conflict(
    words: ClaimWords, claim: ClaimText, asked: frozenset[str], premise: PremiseText
) -> bool:
    """Whether ``claim`` gives another answer to the question (content stems ``asked``)
    than the passage's sentence that answers it (see the module docstring)."""
    if not asked or not premise.sentences:
        return False
    if _other_name(words, claim, asked, premise):
        return True
    if not words.values:
        return False
    own = frozenset(words.names)
    everything_asked = asked
    # the question's stems against the names as stems too ("tid" is the name "Tide")
    named = own | frozenset(stem(n) for n in own)
    asked = frozenset(a for a in asked if not _has(a, named))
    if not asked:
        return False
    # the claim is about what the question asks, not only about its subject: a long answer's
    # other facts about the same river ("Boats are unable to travel on the River Ellet" for
    # "Into which body of water does the River Ellet flow?") answer no question of it
    # (what it is about: its names and its kind, "the moss-eared marten"; not the other
    # words of its grammatical subject, which may be the attribute asked: "The common side
    # effects of Velvarin are nausea.")
    topic = named | frozenset(stem(k) for k in kind_words(claim.text))
    if not any(_has(c, asked) for c in claim.content if not _has(c, topic)):
        return False
    # the answer is in the predicate: the subject's nouns ("Doctors prescribe ...") are not it
    subject = frozenset(words.subject)
    values = [
        v for v in words.values if not _has(v, asked) and not _has(v, own) and v not in subject
    ]
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
    # a quantity the passage gives is bound by ``missing_numbers`` (read with its unit), in
    # whichever sentence it stands ("At 596 pages, ..." where "The novel runs to 596 pages")
    found = quantities(claim.text)
    if found and any(is_given(q, quantities(premise.text)) for q in found):
        return False
    claim_stems = frozenset(claim.content)
    gives = [
        w
        for w in sentence
        if w not in _STOP_STEMS
        and not w[:1].isdigit()
        and not _has(w, asked)
        and not _has(w, own)
        and not _has(w, claim_stems)
    ]
    return bool(gives)


def _other_name(
    words: ClaimWords, claim: ClaimText, asked: frozenset[str], premise: PremiseText
) -> bool:
    """Whether the claim answers with a name the passage lacks where the passage's sentence
    that says the rest of the claim names someone else: "The Copper Harbour was written by
    Halvard Castellan" against "The Copper Harbour was written by Halvard Polstead",
    "Mardene stands on the River Brule" against "Mardene stands on the banks of the River
    Dovan". The answer's names are the claim's names the question does not give."""
    answer = [n for n in words.names if not _has(n, asked) and not _has(stem(n), asked)]
    if not answer or all(_has(n, premise.stems) for n in answer):
        return False
    answer_stems = frozenset(answer) | frozenset(stem(n) for n in answer)
    # the rest of the claim: its words but the answer's names and the question's names
    capitalised = _capitalised(claim.text)
    frame = [
        c
        for c in claim.content
        if not _has(c, answer_stems) and not (c in asked and c in capitalised)
    ]
    if not frame:
        return False
    claim_tokens = frozenset(claim.tokens)
    known = claim_tokens | asked | frozenset(stem(t) for t in claim_tokens)
    for sentence, stems in zip(premise.sentences, premise.sentence_stems, strict=True):
        if not all(_has(c, stems) for c in frame):
            continue
        words_there = _WORD_RE.findall(sentence)[1:]  # a name after the sentence's first word
        if any(t not in known for w in words_there if w[0].isupper() for t in _name_tokens(w)):
            return True
    return False
