"""Lexical scores from token counts: each value with its reason and details.

The functions of :mod:`ragmeter.scoring.lexical` count shared tokens text by text; a whole
batch counts them at once (:func:`ragmeter.scoring.lexical.batch_overlap.batch_common`). Both
build their :class:`~ragmeter.types.Score` here, so a score and its wording never depend
on how the counts were gathered. Where Unitxt raises (an empty list of contexts or of
reference answers) the score is undefined with a reason. The functions the docstrings
name (``k_precision``, ``token_recall``, ...) are those of :mod:`ragmeter.scoring.lexical`.

>>> k_precision_from_counts([1, 3], 4).reason
'3 of 4 answer tokens found in context 1.'
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.scoring.lexical.overlap import Measure, best_index, f1_of_counts, share
from ragmeter.types import Score

__all__ = [
    "answer_token_recall_from_counts",
    "context_token_precision_from_counts",
    "exact_match_from_index",
    "k_precision_from_counts",
    "note_question_tokens",
    "reference_score_from_counts",
]


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
    index = best_index(commons, answer_tokens, reference_tokens, measure)
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
        return Score(share(common, size), reason, details)
    if measure == "precision":
        if length == 0:
            return Score(0.0, _EMPTY_ANSWER[new], details)
        reason = (
            f"{common} of {_plural(length, fresh + 'answer token')} found in reference {index}."
        )
        return Score(share(common, length), reason, details)
    if new and length == 0:
        return Score(0.0, _EMPTY_ANSWER[new], details)
    f1 = f1_of_counts(common, length, size)
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
    return Score(share(common, question_tokens), reason, details)


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
    return Score(share(common, length), reason, details)


_SIDE_KEYS = {"answer": "answer_tokens", "question": "question_tokens"}
_SIDE_UNITS = {
    "answer": ("answer token", "answer tokens"),
    "question": ("question token", "question tokens"),
}


def note_question_tokens(score: Score, repeated: int) -> Score:
    """``score`` of :func:`new_token_score`, its details and
    reason saying how many answer tokens repeat the question (and were not counted).

    Examples
    --------
    >>> score = note_question_tokens(Score(0.5, "1 of 2 found.", {"common_tokens": 1}), 2)
    >>> score.reason
    '1 of 2 found (2 answer tokens that repeat the question not counted).'
    >>> score.details
    {'common_tokens': 1, 'answer_tokens_in_question': 2}
    """
    if score.details is None:
        return score
    details = {**score.details, "answer_tokens_in_question": repeated}
    reason = score.reason
    if repeated:
        reason = (
            f"{reason[:-1]} ({_plural(repeated, 'answer token')} that repeat the question "
            "not counted)."
        )
    return Score(score.value, reason, details)
