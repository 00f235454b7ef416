"""Token-overlap metrics, exactly as Unitxt computes them: pure functions, no I/O.

This module holds the metrics, one function each. Their parts live beside it and are
re-exported here: token bags and overlap counting (:mod:`ragmeter.scoring.lexical.overlap`),
scores with reasons from token counts (:mod:`ragmeter.scoring.lexical.scores`) and the
counts of a whole batch at once (:mod:`ragmeter.scoring.lexical.batch_overlap`).

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

from collections.abc import Sequence

from ragmeter.scoring.lexical.batch_overlap import batch_common
from ragmeter.scoring.lexical.overlap import (
    Bag,
    Measure,
    Overlap,
    TextLike,
    Tokens,
    as_reference,
    best_overlap,
    shared_count,
    token_overlap,
)
from ragmeter.scoring.lexical.scores import (
    answer_token_recall_from_counts,
    context_token_precision_from_counts,
    exact_match_from_index,
    k_precision_from_counts,
    note_question_tokens,
    reference_score_from_counts,
)
from ragmeter.types import Score

__all__ = [
    "Bag",
    "Measure",
    "Overlap",
    "TextLike",
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
    return note_question_tokens(score, len(answer_tokens) - len(kept))


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


def _reference_counts(
    answer: TextLike, references: Sequence[TextLike]
) -> tuple[list[int], int, list[int]]:
    pred = Bag.of(answer)
    refs = [as_reference(r) for r in references]
    return [shared_count(pred, ref) for ref in refs], len(pred), [len(ref) for ref in refs]


def _commons(pred: Bag, contexts: Sequence[TextLike]) -> list[int]:
    return [shared_count(pred, as_reference(context)) for context in contexts]
