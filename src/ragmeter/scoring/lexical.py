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

import numpy as np
import numpy.typing as npt

from ragmeter.text import ARTICLES, TokenBatch
from ragmeter.text import tokens as _tokens
from ragmeter.text import tokens_for_lookup as _tokens_for_lookup
from ragmeter.types import Score

__all__ = [
    "Bag",
    "Overlap",
    "Tokens",
    "answer_token_recall",
    "answer_token_recall_from_counts",
    "batch_common",
    "best_overlap",
    "context_token_precision",
    "context_token_precision_from_counts",
    "exact_match",
    "exact_match_from_index",
    "k_precision",
    "k_precision_from_counts",
    "new_token_score",
    "reference_score_from_counts",
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
        return _share(self.common, self.prediction_length)

    @property
    def recall(self) -> float:
        """Share of reference tokens found in the prediction (0 when nothing is shared)."""
        return _share(self.common, self.reference_length)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0 when nothing is shared)."""
        return _f1(self.common, self.prediction_length, self.reference_length)

    def measure(self, name: Measure) -> float:
        return _measure(name, self.common, self.prediction_length, self.reference_length)


def _share(common: int, length: int) -> float:
    return 0.0 if common == 0 else 1.0 * common / length


def _f1(common: int, prediction_length: int, reference_length: int) -> float:
    if common == 0:
        return 0.0
    precision = 1.0 * common / prediction_length
    recall = 1.0 * common / reference_length
    return (2 * precision * recall) / (precision + recall)


def _measure(name: Measure, common: int, prediction_length: int, reference_length: int) -> float:
    if name == "precision":
        return _share(common, prediction_length)
    if name == "recall":
        return _share(common, reference_length)
    return _f1(common, prediction_length, reference_length)


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
    return _pick(
        [_common(pred, ref) for ref in refs], len(pred), [len(ref) for ref in refs], measure
    )


def _pick(
    commons: Sequence[int], length: int, lengths: Sequence[int], measure: Measure
) -> tuple[int, Overlap]:
    """The first reference that maximises ``measure``, from shared counts and lengths."""
    index = _best_index(commons, length, lengths, measure)
    return index, Overlap(commons[index], length, lengths[index])


def _best_index(
    commons: Sequence[int], length: int, lengths: Sequence[int], measure: Measure
) -> int:
    if measure == "precision":  # the prediction's length is fixed: most shared wins
        return commons.index(max(commons))
    if len(commons) == 1:
        return 0
    values = [
        _measure(measure, common, length, size)
        for common, size in zip(commons, lengths, strict=True)
    ]
    return values.index(max(values))


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
    pred = Bag.of(answer)
    return k_precision_from_counts(_commons(pred, contexts), len(pred))


def context_token_precision(question: TextLike, contexts: Sequence[TextLike]) -> Score:
    """Share of question tokens found in a context, best context taken alone.

    Unitxt's ``context_relevance.token_precision``: K-Precision with the question in
    place of the answer.

    Examples
    --------
    >>> context_token_precision("capital of France", ["unrelated", "capital of France"]).value
    1.0
    """
    pred = Bag.of(question)
    return context_token_precision_from_counts(_commons(pred, contexts), len(pred))


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
    return reference_score_from_counts("recall", *_reference_counts(answer, references))


def token_precision(answer: TextLike, references: Sequence[TextLike]) -> Score:
    """Share of answer tokens found in a reference answer, best reference.

    Examples
    --------
    >>> token_precision("The president was Barack Obama", ["Barack Obama"]).value
    0.5
    """
    return reference_score_from_counts("precision", *_reference_counts(answer, references))


def token_f1(answer: TextLike, references: Sequence[TextLike]) -> Score:
    """Token F1 of the answer against its best reference answer (SQuAD / Unitxt).

    Examples
    --------
    >>> round(token_f1("well known author", ["well-known author"]).value, 6)
    0.4
    """
    return reference_score_from_counts("f1", *_reference_counts(answer, references))


def answer_token_recall(question: TextLike, answer: TextLike) -> Score:
    """Share of question tokens found in the answer (Unitxt's
    ``answer_relevance.token_recall``).

    Examples
    --------
    >>> answer_token_recall("What is it?", "it is what it is").value
    1.0
    """
    overlap = token_overlap(answer, question)
    return answer_token_recall_from_counts(overlap.common, overlap.reference_length)


def new_token_score(
    measure: Measure, question: TextLike, answer: TextLike, references: Sequence[TextLike]
) -> Score:
    """Token precision, recall or F1 (``measure``) of the answer against its best reference,
    counting only tokens the question does not contain.

    A word the question already holds says nothing about whether the answer is right: an
    answer that restates the question shares those words with a reference that restates it
    too. Here every token type of the question is dropped from the answer and from each
    reference before they are compared; the rest is :func:`token_precision`,
    :func:`token_recall` or :func:`token_f1` (multiset overlap, best reference, 0 when
    nothing is shared). An answer with nothing beyond the question scores 0 with that
    reason; no reference answers give an undefined score.

    Examples
    --------
    >>> new_token_score("precision", "Who wrote Hamlet?", "Hamlet was written by Marlowe",
    ...                 ["Shakespeare wrote Hamlet"]).value
    0.0
    >>> score = new_token_score("precision", "Who wrote Hamlet?", "Shakespeare wrote Hamlet",
    ...                         ["Hamlet was written by Shakespeare"])
    >>> score.value, score.details["answer_tokens_in_question"]
    (1.0, 2)
    """
    asked = set(_exact(question))
    answer_tokens = _exact(answer)
    kept = [t for t in answer_tokens if t not in asked]
    refs = [[t for t in _exact(r) if t not in asked] for r in references]
    score = reference_score_from_counts(measure, *_reference_counts(kept, refs), new=True)
    if score.details is None:
        return score
    repeated = len(answer_tokens) - len(kept)
    details = {**score.details, "answer_tokens_in_question": repeated}
    reason = score.reason
    if repeated:
        reason = (
            f"{reason[:-1]} ({_plural(repeated, 'answer token')} that repeat the question "
            "not counted)."
        )
    return Score(score.value, reason, details)


def _exact(text: TextLike) -> list[str]:
    """The SQuAD tokens of any text argument, articles dropped."""
    if isinstance(text, Bag):
        return list(text.tokens)
    return Tokens.of(text).exact


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
        return exact_match_from_index(None, references=0)
    pred = Bag.of(answer).tokens
    for index, reference in enumerate(references):
        if isinstance(reference, Bag):
            ref: Sequence[str] = reference.tokens
        else:
            ref = Tokens.of(reference).exact
        if tuple(ref) == pred:
            return exact_match_from_index(index, references=len(references))
    return exact_match_from_index(None, references=len(references))


# --- Scores from token counts: shared by the functions above and by whole batches ---------


def k_precision_from_counts(commons: Sequence[int], answer_tokens: int) -> Score:
    """:func:`k_precision` from the tokens each context shares with the answer (one
    count per context, in order) and the answer's token count.

    Examples
    --------
    >>> k_precision_from_counts([1, 3, 3], 4).details
    {'best_context': 1, 'common_tokens': 3, 'answer_tokens': 4}
    """
    return _precision_score(commons, answer_tokens, "answer", _NO_CONTEXTS_K)


def context_token_precision_from_counts(commons: Sequence[int], question_tokens: int) -> Score:
    """:func:`context_token_precision` from shared counts per context and the question's
    token count."""
    return _precision_score(commons, question_tokens, "question", _NO_CONTEXTS_QUESTION)


def reference_score_from_counts(
    measure: Measure,
    commons: Sequence[int],
    answer_tokens: int,
    reference_tokens: Sequence[int],
    *,
    new: bool = False,
) -> Score:
    """:func:`token_recall`, :func:`token_precision` or :func:`token_f1` (``measure``)
    from the tokens each reference shares with the answer and the token counts
    (``new``: the counts leave out the question's tokens, as :func:`new_token_score`'s,
    and the reasons say so).

    Examples
    --------
    >>> reference_score_from_counts("recall", [1, 1], 1, [2, 1]).value
    1.0
    """
    if not commons:
        name = _MEASURE_NAMES[measure]
        return Score.undefined(_NO_REFERENCES.format(name=f"new-{name}" if new else name))
    index = _best_index(commons, answer_tokens, reference_tokens, measure)
    fresh = "new " if new else ""
    common, length, size = commons[index], answer_tokens, reference_tokens[index]
    details = {
        "best_reference": index,
        "common_tokens": common,
        "answer_tokens": length,
        "reference_tokens": size,
    }
    if measure == "recall":
        if size == 0:
            return Score(0.0, _EMPTY_REFERENCES[new], details)
        reason = (
            f"{common} of {_plural(size, fresh + 'token')} of reference {index} found in the "
            "answer."
        )
        return Score(_share(common, size), reason, details)
    if measure == "precision":
        if length == 0:
            return Score(0.0, _EMPTY_ANSWER[new], details)
        reason = (
            f"{common} of {_plural(length, fresh + 'answer token')} found in reference {index}."
        )
        return Score(_share(common, length), reason, details)
    if new and length == 0:
        return Score(0.0, _EMPTY_ANSWER[new], details)
    f1 = _f1(common, length, size)
    reason = (
        f"F1 {f1:.3f} against reference {index}: {_plural(common, 'shared ' + fresh + 'token')}, "
        f"{length} in the answer, {size} in the reference."
    )
    return Score(f1, reason, details)


def answer_token_recall_from_counts(common: int, question_tokens: int) -> Score:
    """:func:`answer_token_recall` from the tokens the answer shares with the question
    and the question's token count."""
    details = {"common_tokens": common, "question_tokens": question_tokens}
    if question_tokens == 0:
        return Score(0.0, "The question has no tokens after normalisation.", details)
    reason = f"{common} of {_plural(question_tokens, 'question token')} found in the answer."
    return Score(_share(common, question_tokens), reason, details)


def exact_match_from_index(index: int | None, *, references: int) -> Score:
    """:func:`exact_match` from the first reference equal to the answer (``None``: none
    is) and the number of references."""
    if references == 0:
        return Score.undefined(_NO_REFERENCES.format(name="exact match"))
    if index is None:
        return Score(0.0, "The answer equals no reference answer after normalisation.")
    reason = f"The answer equals reference {index} after normalisation."
    return Score(1.0, reason, {"matched_reference": index})


_NO_REFERENCES = "No reference answers were given: {name} needs at least one."
_NO_CONTEXTS_K = "No contexts were given: K-Precision needs at least one context."
_NO_CONTEXTS_QUESTION = "No contexts were given: context token precision needs at least one."
_MEASURE_NAMES = {"recall": "token recall", "precision": "token precision", "f1": "token F1"}
#: Reasons for an empty side, without / with the question's tokens left out.
_EMPTY_ANSWER = {
    False: "The answer has no tokens after normalisation.",
    True: "The answer has no tokens beyond the question's: it adds nothing to check.",
}
_EMPTY_REFERENCES = {
    False: "Every reference answer is empty after normalisation.",
    True: "Every reference answer has no tokens beyond the question's.",
}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _reference_counts(
    answer: TextLike, references: Sequence[TextLike]
) -> tuple[list[int], int, list[int]]:
    pred = Bag.of(answer)
    refs = [_reference(r) for r in references]
    return [_common(pred, ref) for ref in refs], len(pred), [len(ref) for ref in refs]


def _commons(pred: Bag, contexts: Sequence[TextLike]) -> list[int]:
    return [_common(pred, _reference(context)) for context in contexts]


def _precision_score(commons: Sequence[int], length: int, side: str, empty_reason: str) -> Score:
    """The best context shares most tokens: the prediction's length is fixed, so a
    context's own length is never needed."""
    if not commons:
        return Score.undefined(empty_reason)
    common = max(commons)
    index = commons.index(common)
    details = {"best_context": index, "common_tokens": common, _SIDE_KEYS[side]: length}
    if length == 0:
        return Score(0.0, f"The {side} has no tokens after normalisation.", details)
    unit = _SIDE_UNITS[side][length != 1]
    reason = f"{common} of {length} {unit} found in context {index}."
    return Score(_share(common, length), reason, details)


_SIDE_KEYS = {"answer": "answer_tokens", "question": "question_tokens"}
_SIDE_UNITS = {
    "answer": ("answer token", "answer tokens"),
    "question": ("question token", "question tokens"),
}


# --- A whole batch at once ----------------------------------------------------------------

#: Above this many cells (lookup texts times prediction tokens) per token looked up, the
#: shared counts are gathered sparsely (a sort) instead of in one dense array.
_DENSE_LIMIT = 16

IntArray = npt.NDArray[np.int64]


def batch_common(
    batch: TokenBatch, predictions: IntArray, lookups: IntArray, owners: IntArray
) -> IntArray:
    """Shared token counts (multiset intersection) of many text pairs of one batch.

    Group ``g`` has the prediction text ``predictions[g]`` of ``batch``; lookup text
    ``lookups[x]`` belongs to group ``owners[x]``. The result's ``x``-th entry is
    ``token_overlap(prediction, lookup).common`` for that pair, on SQuAD tokens. Texts
    that ``batch`` left out count as having no tokens. Consecutive lookup texts are read
    fastest.

    Examples
    --------
    >>> batch = TokenBatch.of(["yes yes no", "yes yes yes", "No.", "maybe"])
    >>> batch_common(batch, np.array([0]), np.array([1, 2, 3]), np.array([0, 0, 0])).tolist()
    [2, 1, 0]
    """
    # The prediction tokens, dropped ones left out, group after group, a table per group.
    found, counts = _tokens_of(batch, predictions)
    keep = ~batch.dropped[found]
    groups = np.repeat(np.arange(len(predictions), dtype=np.int64), counts)[keep]
    table = _Tables(batch.keys[found][keep], np.bincount(groups, minlength=len(predictions)))
    kinds = table.kinds
    kind_start = np.zeros(len(predictions), dtype=np.int64)
    np.cumsum(kinds[:-1], out=kind_start[1:])

    # Every token of every lookup text, looked up in its group's table.
    found, counts = _tokens_of(batch, lookups)
    hits, kind = table.find(batch.keys[found], owners, counts)
    # One cell per (lookup text, distinct prediction token).
    width = kinds[owners]
    base = np.zeros(len(lookups) + 1, dtype=np.int64)
    np.cumsum(width, out=base[1:])
    cells = np.repeat(base[:-1] - kind_start[owners], counts)[hits]
    cells += kind
    total = int(base[-1])
    occurs = table.counts
    if total <= _DENSE_LIMIT * (len(hits) + len(occurs) + 64):
        shared = np.bincount(cells, minlength=total)
        which = np.arange(total, dtype=np.int64)
        which += np.repeat(kind_start[owners] - base[:-1], width)
        capped = np.minimum(shared, occurs[which])
        sums = np.zeros(total + 1, dtype=np.int64)
        np.cumsum(capped, out=sums[1:])
        return sums[base[1:]] - sums[base[:-1]]
    cells, shared = np.unique(cells, return_counts=True)
    text = np.searchsorted(base, cells, side="right") - 1
    capped = np.minimum(shared, occurs[cells - base[text] + kind_start[owners[text]]])
    return np.bincount(text, weights=capped, minlength=len(lookups)).astype(np.int64)


def _tokens_of(batch: TokenBatch, texts: IntArray) -> tuple[IntArray | slice, IntArray]:
    """Token indices of ``texts`` in order (a slice when the texts are consecutive), and
    how many each text has."""
    offsets = batch.offsets
    first = offsets[texts]
    counts = offsets[texts + 1] - first
    if len(texts) == 0:
        return np.zeros(0, dtype=np.int64), counts
    start = int(texts[0])
    if int(texts[-1]) - start == len(texts) - 1 and (np.diff(texts) == 1).all():
        return slice(int(first[0]), int(offsets[start + len(texts)])), counts
    ends = np.cumsum(counts)
    out = np.arange(int(ends[-1]), dtype=np.int64)
    out += np.repeat(first - (ends - counts), counts)
    return out, counts


class _Tables:
    """One open-addressing hash table of token keys per group, side by side in one
    array, built and probed in vectorised numpy rounds (linear probing inside each
    group's part, a power of two at least four times its tokens).

    Keys identify tokens (:class:`~ragmeter.text.TokenBatch`), and 0 marks an empty slot.
    Lookups come group after group, so each probes a small part that stays in cache.
    ``kinds[g]`` is the number of distinct tokens of group ``g``; ``counts[k]`` how often
    the ``k``-th distinct token occurs (numbered group after group).

    Examples
    --------
    >>> t = _Tables(np.array([5, 7, 5, 5], dtype=np.uint64), np.array([3, 1]))
    >>> t.kinds.tolist(), sorted(t.counts.tolist())
    ([2, 1], [1, 1, 2])
    """

    def __init__(self, keys: npt.NDArray[np.uint64], sizes: IntArray) -> None:
        part = np.left_shift(1, np.ceil(np.log2(4 * sizes + 4)).astype(np.int64))
        self.part = part
        self.start = np.zeros(len(sizes), dtype=np.int64)
        np.cumsum(part[:-1], out=self.start[1:])
        self.slot_key = np.zeros(int(part.sum()), dtype=np.uint64)
        slots = self._insert(keys, np.repeat(self.start, sizes), np.repeat(part - 1, sizes))
        used = self.slot_key != 0
        self.rank = np.cumsum(used) - 1
        self.kinds = np.add.reduceat(used, self.start).astype(np.int64)
        self.counts = np.bincount(self.rank[slots], minlength=int(self.kinds.sum()))

    @staticmethod
    def _home(keys: npt.NDArray[np.uint64], start: IntArray, mask: IntArray) -> IntArray:
        mixed = keys * _SLOT_MIX
        mixed >>= _SHIFT
        home = mixed.view(np.int64)
        home &= mask
        home += start
        return home

    def _insert(self, keys: npt.NDArray[np.uint64], start: IntArray, mask: IntArray) -> IntArray:
        """Put every key in its group's part; return the slot of each."""
        slot = self._home(keys, start, mask)
        slot_key = self.slot_key
        pending = np.arange(len(keys), dtype=np.int64)
        while len(pending):
            where = slot[pending]
            free = slot_key[where] == 0
            if free.any():
                # Several keys may claim one free slot: one wins, the others probe on.
                slot_key[where[free]] = keys[pending[free]]
            pending = pending[slot_key[where] != keys[pending]]
            slot[pending] = ((slot[pending] - start[pending] + 1) & mask[pending]) + start[pending]
        return slot

    def find(
        self, keys: npt.NDArray[np.uint64], groups: IntArray, counts: IntArray
    ) -> tuple[IntArray, IntArray]:
        """Look up ``keys``, those of text ``x`` (``counts[x]`` of them) in the part of
        group ``groups[x]``: the positions found and the numbers of their distinct tokens.
        """
        start = np.repeat(self.start[groups], counts)
        mask = np.repeat(self.part[groups] - 1, counts)
        slot = self._home(keys, start, mask)
        slot_key = self.slot_key
        # First round over every key at once, without compacting.
        found = slot_key[slot]
        equal = found == keys
        hits, slots = [np.flatnonzero(equal)], []
        slots.append(slot[hits[0]])
        pending = np.flatnonzero(found)
        pending = pending[~equal[pending]]
        start, mask, where, wanted = start[pending], mask[pending], slot[pending], keys[pending]
        while len(pending):
            where = ((where - start + 1) & mask) + start
            found = slot_key[where]
            equal = found == wanted
            hit = np.flatnonzero(equal)
            hits.append(pending[hit])
            slots.append(where[hit])
            go_on = np.flatnonzero(found != 0)
            go_on = go_on[~equal[go_on]]
            pending, start, mask = pending[go_on], start[go_on], mask[go_on]
            where, wanted = where[go_on], wanted[go_on]
        if len(hits) == 1:
            return hits[0], self.rank[slots[0]]
        return np.concatenate(hits), self.rank[np.concatenate(slots)]


_SLOT_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(32)
