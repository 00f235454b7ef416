"""A claim checked against a short answer read with its question (RAGChecker's correctness).

A reference like "2000 GB.", "The River Duren.", "plaque psoriasis." or "Yes." states a fact
only as the answer to its question. The claim "A workspace on the Pro plan gets 2000 GB of
storage" is correct against it: its words that the question does not hold ("2000 GB") are
the reference's. The claim "The Eiffel Tower was completed for the World's Fair" is not
correct against "It was completed in 1889.": "World's Fair" is a detail the reference does
not give. :func:`read_as_answer` decides by what the words say, not by a model trained on
long premises:

1. **Quantities** of the claim must be quantities the answer or the question gives, bound to
   their unit (:mod:`~ragmeter.judges.offline.quantities`: "about 300,000 km/s" is
   "299,792,458 metres per second", "10 GB" is not "10 members").
2. **Names** (capitalised words) of the claim that the question does not hold must be in
   the answer: "Sydney" against "Canberra." is another answer.
3. **Polarity**: a negated claim needs a negative answer and the other way round; "Yes." and
   "No." answer the question itself.
4. **What the claim adds**: its content words beyond the question's, light verbs and hedges
   left out ("is", "has", "gets", "called", "about"), must be the answer's, except for
   :data:`ALLOWED_EXTRA` (2) words when the claim gives the answer or a part of it (a claim
   restating the answer with words that name the question's attribute differently: "70,400
   people" for "population", "runs for 873 km from source to mouth" for "length"). A claim
   that adds nothing beyond the question is not entailed (it only restates what was asked).

The support is the share of the claim's own content (quantities and words beyond the
question) that the answer gives, moved above 0.5 when the rule entails and below when not,
so the graded metrics read the same decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragmeter.judges.offline.features import NEGATIONS, STOP_WORDS, stem
from ragmeter.judges.offline.quantities import is_given, quantities
from ragmeter.text import is_polar_question, tokens

__all__ = ["ALLOWED_EXTRA", "AnswerReading", "read_as_answer"]

#: Words beyond the question and the answer a claim may add when it gives the answer (or an
#: item of it): chosen across sources, leave-one-source-out, by
#: ``bench/meta/fit_answer_reading.py`` (docs/validity.md).
ALLOWED_EXTRA = 2

#: Verbs, hedges and fillers that state no fact of their own in an answer's sentence.
_LIGHT = frozenset(
    stem(w)
    for w in """
    is are was were be been being has have had get gets got getting use uses used call calls
    called name named known locate located situated lies lie offer offers offered provide
    provides provided include includes including allow allows allowed give gives given make
    makes made total totals come comes exactly precisely approximately about around roughly
    nearly almost just some up also currently today still officially actually main primary
    typically usually generally
    """.split()  # noqa: SIM905 (a word list, as ragmeter.text.words writes them)
)

_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")
_YES = frozenset({"yes", "yeah", "correct", "true", "indeed"})
_NO = frozenset({"no", "not", "false", "never", "incorrect"})


@dataclass(frozen=True, slots=True)
class AnswerReading:
    """The rule's verdict on one claim against one answer read with its question."""

    entailed: bool
    support: float
    #: Why, in a few words ("answer gives every value", "adds: world, fair"...).
    why: str


def _near(word: str, words: frozenset[str]) -> bool:
    """``word`` (a stem) is one of ``words`` or shares its first five letters with one
    ("japanese" and "japan", "boiling" and "boils")."""
    if word in words:
        return True
    head = word[:5]
    return len(head) >= 4 and any(w[:5] == head for w in words if len(w) >= 4)


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(t) for t in tokens(text) if t not in STOP_WORDS)


def _is_number_or_unit(token: str) -> bool:
    return bool(quantities(token)) or bool(quantities(f"2 {token}")[0].dimension)


def _content(text: str, asked: frozenset[str]) -> list[str]:
    """Content stems of ``text`` beyond the question ``asked``: no numbers or units, no
    light words."""
    out = []
    for t in tokens(text):
        if t in STOP_WORDS or t in NEGATIONS or _is_number_or_unit(t):
            continue
        s = stem(t)
        if s in _LIGHT or _near(s, asked):
            continue
        out.append(s)
    return list(dict.fromkeys(out))


_ITEM_RE = re.compile(r",|;|\band\b|\bor\b")


def _items(answer: str, asked: frozenset[str]) -> list[list[str]]:
    """The content of each item of an answer that lists several ("A, B and C")."""
    return [_content(part, asked) for part in _ITEM_RE.split(answer)]


def _names(text: str) -> frozenset[str]:
    """Stems of capitalised words after the first word (likely names)."""
    words = _WORD_RE.findall(text)
    return frozenset(
        stem(t) for w in words[1:] if w[0].isupper() for t in tokens(w.split("'")[0])[:1]
    )


def _polarity(toks: list[str]) -> bool:
    return not NEGATIONS.isdisjoint(toks)


def read_as_answer(
    claim: str, question: str, answer: str, *, allowed_extra: int = ALLOWED_EXTRA
) -> AnswerReading:
    """Whether ``answer``, read as the answer to ``question``, entails ``claim``
    (``allowed_extra``: see :data:`ALLOWED_EXTRA`).

    Examples
    --------
    >>> q = "How much storage does a workspace on the Pro plan get?"
    >>> read_as_answer("A workspace on the Pro plan gets 2000 GB of shared storage.", q,
    ...                "2000 GB.").entailed
    True
    >>> read_as_answer("A workspace on the Pro plan gets 1000 GB.", q, "2000 GB.").entailed
    False
    >>> read_as_answer("The Eiffel Tower was completed for the World's Fair.",
    ...                "When was the Eiffel Tower completed?", "It was completed in 1889.").entailed
    False
    """
    asked = _stems(question)
    claim_toks = tokens(claim)
    answer_toks = tokens(answer)
    given = quantities(answer) + quantities(question)
    claim_quantities = quantities(claim)
    unbound = [q for q in claim_quantities if not is_given(q, given)]
    adds = _content(claim, asked)
    answer_words = _stems(answer)
    uncovered = [w for w in adds if not _near(w, answer_words)]
    claim_names = _names(claim)
    named = [w for w in uncovered if w in claim_names]
    claim_words = frozenset(stem(t) for t in claim_toks)
    answer_quantities = quantities(answer)
    # the claim gives the answer, or most of an item of it ("Miret" of "Lunhal, Miret and
    # Ostria", "literary satire" of "a work of literary satire"; not "fiction" of
    # "historical fiction"); a yes or no answers the question itself
    holds_answer = any(
        2 * sum(_near(w, claim_words) for w in item) > len(item)
        for item in _items(answer, asked)
        if item
    ) or any(is_given(q, claim_quantities) for q in answer_quantities)
    own = len(adds) + len(claim_quantities)
    bound = own - len(uncovered) - len(unbound)
    share = bound / own if own else 0.0
    # a yes/no question: a claim that restates it says yes or no by its polarity ("The Pro
    # plan does not include single sign-on." against "It comes without single sign-on.")
    polar = is_polar_question(question)
    first = answer_toks[0] if answer_toks else ""
    # "Yes.", "No, it is not.", "Yes, it is protected.": yes or no and nothing beyond the
    # question
    yes_no = first in _YES | _NO and (
        len(answer_toks) <= 3 or not [w for w in _content(answer, asked) if w not in _YES | _NO]
    )
    if yes_no:
        negative = first in _NO
        if _polarity(claim_toks) != negative:
            return AnswerReading(False, 0.5 * share, "the claim answers the other way")
    elif _polarity(claim_toks) != _polarity(answer_toks):
        return AnswerReading(False, 0.5 * share, "the claim and the answer differ in polarity")
    why: str
    if unbound:
        entailed, why = False, "a quantity the answer does not give"
    elif named:
        entailed, why = False, "names the answer does not: " + ", ".join(named)
    elif not own and not yes_no and not polar:
        entailed, why = False, "only restates the question"
    elif len(uncovered) > (allowed_extra if holds_answer or yes_no else 0):
        entailed, why = False, "adds: " + ", ".join(uncovered)
    else:
        entailed, why = True, "the answer gives what the claim adds to the question"
    if (yes_no or polar) and not own and entailed:
        share = 1.0
    support = 0.5 + 0.5 * share if entailed else 0.5 * share
    return AnswerReading(entailed, round(support, 4), why)
