"""Conflicts the offline verifier reads in the premise clause a claim is about.

Word overlap cannot tell "imports increased by 15 percent" from "imports decreased by 15
percent", nor "Aspirin should be given" from "Aspirin should not be given": every content
word is there. These rules look at the premise's clauses (its sentences cut at semicolons
and at a comma before a contrasting conjunction) that hold every content word of the claim,
and flag a cell (claim, premise) as a hard conflict when

``polarity_conflict``
    every such clause negates one of the claim's content words (a negation within the
    :data:`NEGATION_SCOPE` tokens before it) and the claim is not negated, or the claim is
    negated and none of them does ("not only" is no negation);
``antonym_conflict``
    the claim holds a word of :data:`ragmeter.text.ANTONYMS` that no clause covering the
    claim holds, and a clause holding the rest of the claim's content words holds its
    opposite instead ("larger" for "smaller", "before" for "after");
``role_conflict``
    the claim's verb (not a copula: "X is the symbol for Y" and "Y ... with symbol X" are
    one fact) has the same lemma as a verb of a premise sentence that holds every
    content word of the claim, and the claim's subject is that verb's object and its object
    that verb's subject ("Chelsea beat Arsenal" against "Arsenal beat Chelsea", "Lumo
    acquired Brightline" against "Lumo was acquired by Brightline"); read from spaCy's
    dependency parse (:func:`role_conflicts`, 0 without spaCy).

A premise without a clause that covers the claim gives no conflict: these rules only read
what the premise says about the claim's own words.

Examples
--------
>>> from ragmeter.judges.offline.features import prepare_claim, prepare_premise
>>> premise = prepare_premise("Jupiter is larger than Saturn, although Saturn's rings look bigger.")
>>> conflict_features(prepare_claim("Jupiter is smaller than Saturn."), premise)
(0.0, 1.0)
>>> conflict_features(prepare_claim("Jupiter is not larger than Saturn."), premise)
(1.0, 0.0)
>>> conflict_features(prepare_claim("Jupiter is larger than Saturn."), premise)
(0.0, 0.0)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ragmeter.judges.offline.features import NEGATIONS, ClaimText, PremiseText, stem
from ragmeter.text import ANTONYM_OF, tokens

__all__ = [
    "CONFLICT_RULE_FEATURES",
    "Clause",
    "clauses_of",
    "conflict_features",
    "covering_sentences",
    "role_conflicts",
]

#: The features this module adds, in order (each 1.0 for a conflict, else 0.0).
CONFLICT_RULE_FEATURES: tuple[str, ...] = ("polarity_conflict", "antonym_conflict", "role_conflict")

# A clause boundary inside a sentence: a semicolon, or a comma before a contrasting or
# coordinating conjunction.
_CLAUSE_RE = re.compile(
    r";\s+|,\s+(?=(?:but|although|though|while|whereas|yet|and|so|which|because)\s)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of a premise: its words, their stems, and the stems that follow a
    negation closely (the negation's scope: the next :data:`NEGATION_SCOPE` tokens)."""

    words: frozenset[str]
    stems: frozenset[str]
    negated_stems: frozenset[str]
    #: Whether the clause opens with a pronoun or "the": its subject may be the claim's,
    #: named elsewhere ("It does not include single sign-on.").
    anaphoric: bool = False

    def negates(self, content: frozenset[str]) -> bool:
        """Whether a negation of this clause bears on one of ``content``'s stems."""
        return not self.negated_stems.isdisjoint(content)


#: Openings of a clause whose subject may be named elsewhere.
_ANAPHORS = frozenset(
    {"it", "they", "he", "she", "this", "these", "its", "their", "the", "there", "a", "an"}
)

#: "Yes, there is ..." : the answer word is no word a clause must hold.
_ANSWER_WORDS = frozenset({"yes"})

#: Negation words whose scope the polarity rule reads ("without" qualifies, it does not
#: deny: "after a day without food, your body releases glucagon").
_SCOPED_NEGATIONS = NEGATIONS - {"without"}

#: Tokens after a negation that it bears on ("is not the capital": "capital"; articles
#: are no tokens).
NEGATION_SCOPE = 3


@lru_cache(maxsize=4096)
def clauses_of(sentences: tuple[str, ...]) -> tuple[Clause, ...]:
    """The clauses of a premise's ``sentences`` (``PremiseText.sentences``, split once):
    each sentence cut at semicolons and at a comma before a conjunction ("Jupiter is larger
    than Saturn, although ..." gives two)."""
    out = []
    for sentence in sentences:
        for part in _CLAUSE_RE.split(sentence):
            toks = tokens(part)
            if not toks:
                continue
            out.append(
                Clause(
                    frozenset(toks),
                    frozenset(map(stem, toks)),
                    _negated_stems(toks),
                    # read from the text: tokens() drops the articles "the", "a" and "an"
                    anaphoric=_first_word(part) in _ANAPHORS,
                )
            )
    return tuple(out)


_WORD_RE = re.compile(r"[A-Za-z]+")


def _first_word(text: str) -> str:
    """The first word of ``text``, lowercased ("" when it has none)."""
    found = _WORD_RE.search(text)
    return found.group().lower() if found else ""


def _negated_stems(toks: list[str]) -> frozenset[str]:
    """Stems of the tokens a negation of ``toks`` bears on ("not only" denies nothing)."""
    return frozenset(
        stem(t)
        for k, word in enumerate(toks)
        if word in _SCOPED_NEGATIONS and toks[k + 1 : k + 2] != ["only"]
        for t in toks[k + 1 : k + 1 + NEGATION_SCOPE]
    )


def conflict_features(
    claim: ClaimText, premise: PremiseText, names: frozenset[str] = frozenset()
) -> tuple[float, float]:
    """``(polarity_conflict, antonym_conflict)`` of ``claim`` against ``premise``; for the
    polarity, the claim's ``names`` (stems) are left out of the words a clause must hold
    when the claim has others (a passage says "It does not include ..." where the claim
    names the plan: the name's binding is :mod:`~ragmeter.judges.offline.binding`'s)."""
    full = frozenset(claim.content) - _ANSWER_WORDS
    if not full:
        return 0.0, 0.0
    content = full - names if names and full - names else full
    clauses = clauses_of(premise.sentences)
    # a clause that holds the whole claim, or all but its subject when the clause's own
    # subject is a pronoun or "the ..." (not "Books have ..." for a claim about TV shows)
    covering = [c for c in clauses if full <= c.stems or (c.anaphoric and content <= c.stems)]
    content = full
    polarity = 0.0
    negated = bool(_negated_stems(list(claim.tokens)))
    if covering and all(c.negates(content) != negated for c in covering):
        polarity = 1.0
    # an antonym is read with the whole claim ("A Norwegian collector bought the canvas"
    # against "... sold to a collector from Norway" names no clause that covers it)
    covering = [c for c in clauses if content <= c.stems]
    antonym = 0.0
    words = frozenset(claim.tokens)
    for word in words:
        opposite = ANTONYM_OF.get(word)
        if opposite is None or opposite in words or any(word in c.words for c in covering):
            continue
        rest = content - {stem(word)}
        if rest and any(opposite in c.words and rest <= c.stems for c in clauses):
            antonym = 1.0
            break
    return polarity, antonym


def covering_sentences(claim: ClaimText, premise: PremiseText) -> tuple[str, ...]:
    """The sentences of ``premise`` that hold every content word of ``claim``."""
    content = frozenset(claim.content)
    if not content:
        return ()
    return tuple(
        s
        for s, stems in zip(premise.sentences, premise.sentence_stems, strict=True)
        if content <= stems
    )


# Roles: who does (agents) and to whom or what (patients), per verb.
_MODIFIERS = frozenset({"compound", "amod", "nmod", "nummod", "poss", "flat"})
_HOLDERS = frozenset({"advmod", "acomp", "dobj", "npadvmod", "attr", "dative"})


def _key(token: Any) -> frozenset[str]:
    """The words naming a noun: itself, its modifiers on the left, and an apposition."""
    words = {token.lower_}
    words.update(t.lower_ for t in token.lefts if t.dep_ in _MODIFIERS)
    for child in token.rights:
        if child.dep_ == "appos":
            words |= _key(child)
    return frozenset(words)


_COPULAS = frozenset({"is", "are", "was", "were", "be", "been", "being", "'s", "am"})


def _nouns(tokens_: Any) -> list[frozenset[str]]:
    return [_key(t) for t in tokens_ if t.pos_ in ("NOUN", "PROPN")]


def _objects_of_prepositions(token: Any) -> list[Any]:
    return [g for p in token.children if p.dep_ == "prep" for g in p.children if g.dep_ == "pobj"]


def _roles(nlp: Any, doc: Any) -> list[tuple[str, list[frozenset[str]], list[frozenset[str]]]]:
    """(verb lemma, agents, patients) of every verb with a noun agent and a noun patient."""
    from ragmeter.models.syntax import lemma

    out = []
    for verb in doc:
        # a copula has no agent: "Fe is the symbol for iron" and "Iron ... with symbol Fe"
        # say the same thing the other way round
        if verb.pos_ not in ("VERB", "AUX") or verb.lower_ in _COPULAS:
            continue
        agents, patients = [], []
        for child in verb.children:
            if child.dep_ == "nsubj":
                agents.append(child)
            elif child.dep_ == "agent":
                agents.extend(g for g in child.children if g.dep_ == "pobj")
            elif child.dep_ in ("dobj", "nsubjpass", "dative", "npadvmod"):
                # "npadvmod": the small parser's reading of "beat Arsenal 2-1"
                patients.append(child)
                patients.extend(_objects_of_prepositions(child))
            elif child.dep_ == "prep":
                patients.extend(g for g in child.children if g.dep_ == "pobj")
            elif child.dep_ in _HOLDERS:
                patients.extend(_objects_of_prepositions(child))
        agent_keys, patient_keys = _nouns(agents), _nouns(patients)
        if agent_keys and patient_keys:
            out.append((lemma(nlp, verb), agent_keys, patient_keys))
    return out


def _same(a: frozenset[str], b: frozenset[str]) -> bool:
    return a <= b or b <= a


def _swapped(claim_roles: list, premise_roles: list) -> bool:
    for verb, agents, patients in claim_roles:
        for p_verb, p_agents, p_patients in premise_roles:
            if verb != p_verb:
                continue
            for agent in agents:
                if any(_same(agent, a) for a in p_agents):
                    continue
                if any(_same(agent, p) for p in p_patients) and any(
                    _same(patient, a) for patient in patients for a in p_agents
                ):
                    return True
    return False


def role_conflicts(nlp: Any, cells: Sequence[tuple[str, tuple[str, ...]]]) -> list[bool]:
    """For each (claim, premise sentences that cover it): whether the claim swaps the
    subject and object of a verb of one of the sentences (see the module's docstring).
    Every text is parsed once, in one batch."""
    from ragmeter.models.syntax import parse

    texts = list(dict.fromkeys(t for claim, sents in cells for t in (claim, *sents)))
    roles = dict(zip(texts, (_roles(nlp, d) for d in parse(nlp, texts)), strict=True))
    return [
        bool(roles[claim]) and any(_swapped(roles[claim], roles[s]) for s in sents)
        for claim, sents in cells
    ]
