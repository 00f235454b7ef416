"""Token-overlap metrics, exactly as Unitxt computes them: pure functions, no I/O.

Texts are compared as bags of SQuAD-normalised tokens (see :func:`ragmeter.text.tokens`).
For a prediction P and a reference R with ``c`` tokens in common (multiset intersection,
so a token repeated in P counts at most as often as it appears in R):

* precision = c / |P|, recall = c / |R|, f1 = 2·precision·recall / (precision + recall);
* when ``c`` is 0 (including an empty P or R) all three are 0, as in Unitxt.

Against several references each measure is the maximum over references, taken
separately per measure (Unitxt's rule). Where Unitxt raises (an empty list of contexts or
of reference answers) these functions return an undefined :class:`~ragmeter.types.Score`
with a reason.

Every text argument may be a string (normalised here), a sequence of tokens already
normalised (taken as is), a :class:`Bag` or :class:`Tokens`, so that a sample's texts are
normalised once and shared by all its metrics.

>>> answer = Bag.of("Einstein was born in Ulm Germany in 1879")
>>> k_precision(answer, ["Albert Einstein was born in 1879."]).value
0.625
>>> token_recall(answer, ["Einstein, born 1879"]).value
1.0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragmeter.text import ARTICLES
from ragmeter.text import tokens as _tokens
from ragmeter.text import tokens_for_lookup as _tokens_for_lookup
from ragmeter.types import Score

__all__ = [
    "Bag",
    "Overlap",
    "Tokens",
    "answer_token_recall",
    "best_overlap",
    "context_token_precision",
    "exact_match",
    "k_precision",
    "token_f1",
    "token_overlap",
    "token_precision",
    "token_recall",
]

Measure = Literal["precision", "recall", "f1"]


@dataclass(frozen=True, slots=True)
class Bag:
    """The normalised tokens of one text and their counts: the side that is looked up in.

    Examples
    --------
    >>> bag = Bag.of("The cat saw a cat.")
    >>> bag.tokens, bag.counts["cat"], len(bag)
    (('cat', 'saw', 'cat'), 2, 3)
    """

    tokens: tuple[str, ...]
    counts: Mapping[str, int]
    #: Tokens seen once, and the others with their counts: matching splits on this.
    singles: frozenset[str] = field(init=False, repr=False, compare=False)
    repeated: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        repeated = {t: n for t, n in self.counts.items() if n > 1}
        singles = frozenset(self.counts.keys() - repeated.keys() if repeated else self.counts)
        object.__setattr__(self, "singles", singles)
        object.__setattr__(self, "repeated", repeated)

    @classmethod
    def of(cls, text: TextLike) -> Bag:
        """A bag from raw text (normalised here), from tokens, or from a Tokens/Bag."""
        if isinstance(text, Bag):
            return text
        if isinstance(text, Tokens):
            toks = tuple(text.exact)
        elif isinstance(text, str):
            toks = tuple(_tokens(text))
        else:
            toks = tuple(text)
        return cls(toks, Counter(toks))

    def __len__(self) -> int:
        return len(self.tokens)


class Tokens:
    """The normalised tokens of one text, for matching against a :class:`Bag`.

    Normalising is the costly part of every lexical metric, so a text the metrics only
    look up (a context, a reference answer) is normalised once into ``Tokens``. On plain
    ASCII text the articles are left in ``lookup`` (see
    :func:`ragmeter.text.tokens_for_lookup`); ``exact`` and ``len()`` drop them, on
    first use.

    Examples
    --------
    >>> t = Tokens.of("The cat sat on a mat")
    >>> t.exact, len(t)
    (['cat', 'sat', 'on', 'mat'], 4)
    """

    __slots__ = ("_exact", "lookup")

    def __init__(self, lookup: list[str], exact: list[str] | None = None) -> None:
        self.lookup = lookup
        self._exact = exact

    @classmethod
    def of(cls, text: str | Sequence[str] | Tokens) -> Tokens:
        """Tokens of raw text (normalised here); a sequence of str is taken as exact."""
        if isinstance(text, Tokens):
            return text
        if isinstance(text, str):
            lookup, exact = _tokens_for_lookup(text)
            return cls(lookup, lookup if exact else None)
        toks = list(text)
        return cls(toks, toks)

    @property
    def exact(self) -> list[str]:
        """Exactly :func:`ragmeter.text.tokens` of the text."""
        if self._exact is None:
            self._exact = [t for t in self.lookup if t not in ARTICLES]
        return self._exact

    def __len__(self) -> int:
        return len(self.exact)

    def __repr__(self) -> str:
        return f"Tokens({self.exact!r})"


TextLike = str | Sequence[str] | Bag | Tokens


@dataclass(frozen=True, slots=True)
class Overlap:
    """Token overlap of a prediction with one reference (Unitxt's ``TokenOverlap``)."""

    common: int
    prediction_length: int
    reference_length: int

    @property
    def precision(self) -> float:
        """Share of prediction tokens found in the reference (0 when nothing is shared)."""
        if self.common == 0:
            return 0.0
        return 1.0 * self.common / self.prediction_length

    @property
    def recall(self) -> float:
        """Share of reference tokens found in the prediction (0 when nothing is shared)."""
        if self.common == 0:
            return 0.0
        return 1.0 * self.common / self.reference_length

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0 when nothing is shared)."""
        if self.common == 0:
            return 0.0
        precision, recall = self.precision, self.recall
        return (2 * precision * recall) / (precision + recall)

    def measure(self, name: Measure) -> float:
        if name == "precision":
            return self.precision
        if name == "recall":
            return self.recall
        return self.f1


def _reference(text: TextLike) -> Bag | Tokens:
    return text if isinstance(text, Tokens | Bag) else Tokens.of(text)


def _common(prediction: Bag, reference: Bag | Tokens) -> int:
    """Size of the multiset intersection of the two token bags."""
    if isinstance(reference, Bag):
        counts = reference.counts
        common = 0
        for token, m in prediction.counts.items():
            n = counts.get(token)
            if n:
                common += n if n < m else m
        return common
    lookup = reference.lookup
    if lookup is not reference._exact and not ARTICLES.isdisjoint(prediction.counts):
        # A prediction tokenised elsewhere may hold an article: match exact tokens only.
        lookup = reference.exact
    # A token the prediction has once is shared once if the reference has it at all: a
    # set intersection in C. Only the few repeated tokens need counting.
    common = len(prediction.singles.intersection(lookup))
    for token, m in prediction.repeated.items():
        n = lookup.count(token)
        if n:
            common += n if n < m else m
    return common


def token_overlap(prediction: TextLike, reference: TextLike) -> Overlap:
    """Multiset token overlap of ``prediction`` with ``reference``.

    Parameters
    ----------
    prediction, reference : str, sequence of str, Bag or Tokens
        Raw text (normalised here), or normalised tokens.

    Returns
    -------
    Overlap
        Shared token count and both lengths, with ``precision``, ``recall``, ``f1``.

    Examples
    --------
    >>> o = token_overlap("yes yes yes no", "yes")
    >>> o.common, o.precision, o.recall, round(o.f1, 3)
    (1, 0.25, 1.0, 0.4)
    """
    pred = Bag.of(prediction)
    ref = _reference(reference)
    return Overlap(_common(pred, ref), len(pred), len(ref))


def best_overlap(
    prediction: TextLike, references: Sequence[TextLike], *, measure: Measure
) -> tuple[int, Overlap] | None:
    """The reference that maximises ``measure`` (first one on ties), or ``None`` if none.

    Examples
    --------
    >>> best_overlap("Paris Berlin", ["Paris is in France", "Berlin"], measure="recall")
    (1, Overlap(common=1, prediction_length=2, reference_length=1))
    """
    if not references:
        return None
    pred = Bag.of(prediction)
    refs = [_reference(r) for r in references]
    if measure == "precision":
        # The prediction's length is fixed, so the most shared tokens win; only the
        # winner's length is needed.
        commons = [_common(pred, ref) for ref in refs]
        index = commons.index(max(commons))
        return index, Overlap(commons[index], len(pred), len(refs[index]))
    best: tuple[int, Overlap] | None = None
    best_value = -1.0
    for index, ref in enumerate(refs):
        overlap = Overlap(_common(pred, ref), len(pred), len(ref))
        value = overlap.measure(measure)
        if value > best_value:
            best, best_value = (index, overlap), value
    return best


def k_precision(answer: TextLike, contexts: Sequence[TextLike]) -> Score:
    """Share of answer tokens found in a context, best context taken alone (Unitxt).

    This is Unitxt's token K-Precision faithfulness: contexts are compared one at a time,
    never joined, and the maximum is kept.

    Parameters
    ----------
    answer : str, sequence of str, Bag or Tokens
        The generated answer.
    contexts : sequence of (str, sequence of str, Bag or Tokens)
        The retrieved contexts.

    Returns
    -------
    Score
        In [0, 1]; 0 for an answer without tokens; undefined when ``contexts`` is empty.
        ``details`` holds the best context's index and the token counts.

    Examples
    --------
    >>> k_precision("Paris Berlin", ["Paris is in France", "Berlin is in Germany"]).value
    0.5
    >>> k_precision("Paris", []).reason
    'No contexts were given: K-Precision needs at least one context.'
    """
    return _precision_against_best(
        answer,
        contexts,
        side="answer",
        empty_reason="No contexts were given: K-Precision needs at least one context.",
    )


def context_token_precision(question: TextLike, contexts: Sequence[TextLike]) -> Score:
    """Share of question tokens found in a context, best context taken alone.

    Unitxt's ``context_relevance.token_precision``: K-Precision with the question in
    place of the answer.

    Examples
    --------
    >>> context_token_precision("capital of France", ["unrelated", "capital of France"]).value
    1.0
    """
    return _precision_against_best(
        question,
        contexts,
        side="question",
        empty_reason="No contexts were given: context token precision needs at least one.",
    )


def token_recall(answer: TextLike, references: Sequence[TextLike]) -> Score:
    """Share of reference tokens found in the answer, best reference (Unitxt's token-recall
    answer correctness).

    Examples
    --------
    >>> token_recall("Obama", ["Barack Obama"]).value
    0.5
    >>> token_recall("Rome", ["", "Rome Italy"]).details
    {'best_reference': 1, 'common_tokens': 1, 'answer_tokens': 1, 'reference_tokens': 2}
    """
    best = _best(answer, references, "recall", _NO_REFERENCES.format(name="token recall"))
    if isinstance(best, Score):
        return best
    index, overlap = best
    details = _reference_details(index, overlap)
    if overlap.reference_length == 0:
        return Score(0.0, "Every reference answer is empty after normalisation.", details)
    reason = (
        f"{overlap.common} of {_plural(overlap.reference_length, 'token')} of reference "
        f"{index} found in the answer."
    )
    return Score(overlap.recall, reason, details)


def token_precision(answer: TextLike, references: Sequence[TextLike]) -> Score:
    """Share of answer tokens found in a reference answer, best reference.

    Examples
    --------
    >>> token_precision("The president was Barack Obama", ["Barack Obama"]).value
    0.5
    """
    best = _best(answer, references, "precision", _NO_REFERENCES.format(name="token precision"))
    if isinstance(best, Score):
        return best
    index, overlap = best
    details = _reference_details(index, overlap)
    if overlap.prediction_length == 0:
        return Score(0.0, "The answer has no tokens after normalisation.", details)
    reason = (
        f"{overlap.common} of {_plural(overlap.prediction_length, 'answer token')} found "
        f"in reference {index}."
    )
    return Score(overlap.precision, reason, details)


def token_f1(answer: TextLike, references: Sequence[TextLike]) -> Score:
    """Token F1 of the answer against its best reference answer (SQuAD / Unitxt).

    Examples
    --------
    >>> round(token_f1("well known author", ["well-known author"]).value, 6)
    0.4
    """
    best = _best(answer, references, "f1", _NO_REFERENCES.format(name="token F1"))
    if isinstance(best, Score):
        return best
    index, overlap = best
    reason = (
        f"F1 {overlap.f1:.3f} against reference {index}: "
        f"{_plural(overlap.common, 'shared token')}, "
        f"{overlap.prediction_length} in the answer, {overlap.reference_length} in the reference."
    )
    return Score(overlap.f1, reason, _reference_details(index, overlap))


def answer_token_recall(question: TextLike, answer: TextLike) -> Score:
    """Share of question tokens found in the answer (Unitxt's
    ``answer_relevance.token_recall``).

    Examples
    --------
    >>> answer_token_recall("What is it?", "it is what it is").value
    1.0
    """
    overlap = token_overlap(answer, question)
    details = {"common_tokens": overlap.common, "question_tokens": overlap.reference_length}
    if overlap.reference_length == 0:
        return Score(0.0, "The question has no tokens after normalisation.", details)
    reason = (
        f"{overlap.common} of {_plural(overlap.reference_length, 'question token')} "
        "found in the answer."
    )
    return Score(overlap.recall, reason, details)


def exact_match(answer: TextLike, references: Sequence[TextLike]) -> Score:
    """1.0 when the normalised answer equals a normalised reference answer, else 0.0.

    Examples
    --------
    >>> exact_match("The Beatles!", ["beatles", "Queen"]).value
    1.0
    >>> exact_match("Paris", []).value is None
    True
    """
    if not references:
        return Score.undefined(_NO_REFERENCES.format(name="exact match"))
    pred = Bag.of(answer).tokens
    for index, reference in enumerate(references):
        if isinstance(reference, Bag):
            ref: Sequence[str] = reference.tokens
        else:
            ref = Tokens.of(reference).exact
        if tuple(ref) == pred:
            reason = f"The answer equals reference {index} after normalisation."
            return Score(1.0, reason, {"matched_reference": index})
    return Score(0.0, "The answer equals no reference answer after normalisation.")


_NO_REFERENCES = "No reference answers were given: {name} needs at least one."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _best(
    prediction: TextLike, references: Sequence[TextLike], measure: Measure, empty_reason: str
) -> tuple[int, Overlap] | Score:
    best = best_overlap(prediction, references, measure=measure)
    return Score.undefined(empty_reason) if best is None else best


def _reference_details(index: int, overlap: Overlap) -> dict[str, int]:
    return {
        "best_reference": index,
        "common_tokens": overlap.common,
        "answer_tokens": overlap.prediction_length,
        "reference_tokens": overlap.reference_length,
    }


def _precision_against_best(
    prediction: TextLike, contexts: Sequence[TextLike], *, side: str, empty_reason: str
) -> Score:
    if not contexts:
        return Score.undefined(empty_reason)
    pred = Bag.of(prediction)
    # The prediction's length is fixed, so the context sharing most tokens wins; its own
    # length is never needed, which spares normalising it exactly.
    commons = [_common(pred, _reference(context)) for context in contexts]
    common = max(commons)
    index = commons.index(common)
    length = len(pred)
    details = {"best_context": index, "common_tokens": common, f"{side}_tokens": length}
    if length == 0:
        return Score(0.0, f"The {side} has no tokens after normalisation.", details)
    value = 0.0 if common == 0 else 1.0 * common / length
    reason = f"{common} of {_plural(length, side + ' token')} found in context {index}."
    return Score(value, reason, details)
