"""Claim-level metrics as pure arithmetic over entailment matrices (RAGChecker's design).

Every function here takes booleans that a judge produced once per sample and returns a
:class:`~ragmeter.types.Score`. No function sees text or a model.

The inputs, for one sample with ``n`` answer claims, ``m`` reference claims and ``k`` contexts:

``answer_in_contexts``
    ``n`` rows of ``k`` booleans: context ``j`` entails answer claim ``i``.
``answer_correct``
    ``n`` booleans: the reference answer entails answer claim ``i``.
``reference_in_contexts``
    ``m`` rows of ``k`` booleans: context ``j`` entails reference claim ``i``.
``reference_in_answer``
    ``m`` booleans: the answer entails reference claim ``i``.
``answer_support_in_contexts`` / ``answer_support_correct``
    The graded twins of ``answer_in_contexts`` / ``answer_correct``: floats in [0, 1], the
    judge's support for the entailment (the offline verifier's calibrated probability; 0 or
    1 for a judge that only gives verdicts). Only the ``*_support`` metrics read them.

A context is *relevant* when it entails at least one reference claim. An answer claim is
*incorrect* when the reference does not entail it (neutral and contradiction alike).

A defined score's ``reason`` is one short sentence built from the counts the value comes
from ("3 of 4 answer claims are entailed by a context."); it names contexts by index (0 is the
first retrieved) or by rank (1 is the first) and never quotes claim text.

Examples
--------
>>> noise_sensitivity(
...     answer_correct=[True, False],
...     answer_in_contexts=[[True, False], [True, False]],
...     reference_in_contexts=[[True, False]],
...     mode="relevant",
... ).value
0.5
>>> faithfulness([[False, False]]).value
0.0
>>> faithfulness([[True, False], [False, False]]).reason
'1 of 2 answer claims is entailed by a context.'
>>> faithfulness([]).reason
'the answer has no claims'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ragmeter.types import Score

Matrix = Sequence[Sequence[bool]]

NO_ANSWER_CLAIMS = "the answer has no claims"
#: Said instead of ``NO_ANSWER_CLAIMS`` when the answer has no claims because it only evades.
NONCOMMITTAL_ANSWER = "the answer is noncommittal (it evades or refuses): it has no claims"
NO_REFERENCE_CLAIMS = "the reference answer has no claims"
NO_CONTEXTS = "no contexts were retrieved"


def _check_rows(name: str, matrix: Matrix, width: int | None) -> int:
    """Return the row width of ``matrix``; every row must have the same width."""
    widths = {len(row) for row in matrix}
    if len(widths) > 1:
        raise ValueError(f"The rows of {name} must all have the same length. Got {sorted(widths)}.")
    found = widths.pop() if widths else width
    if width is not None and found is not None and found != width:
        raise ValueError(f"{name} must have {width} columns (one per context). Got {found}.")
    return found if found is not None else 0


def _check_length(name: str, values: Sequence[bool], n: int, what: str) -> None:
    if len(values) != n:
        raise ValueError(f"{name} must have one value per {what} ({n}). Got {len(values)}.")


def _plural(n: int, noun: str) -> str:
    return noun if n == 1 else noun + "s"


def _counted(
    hits: int,
    total: int,
    noun: str,
    rest: str,
    *,
    qualifier: str = "",
    verbs: tuple[str, str] = ("is", "are"),
) -> str:
    """``"2 of 3 answer claims are entailed by a context."``: the verb agrees with ``hits``
    (and is singular for ``0 of 1``)."""
    verb = verbs[0] if hits == 1 or total == 1 else verbs[1]
    subject = f"{hits} of {total} {_plural(total, noun)}"
    if qualifier:
        subject += f" {qualifier}"
    return f"{subject} {verb} {rest}."


def _numbers(values: Sequence[int], limit: int = 5) -> str:
    """``"0, 2, 3"``; beyond ``limit`` values, ``"0, 1, 2, 3, 4 and 3 more"``."""
    shown = ", ".join(str(v) for v in values[:limit])
    extra = len(values) - limit
    return f"{shown} and {extra} more" if extra > 0 else shown


def _contexts_phrase(indices: Sequence[int], adjective: str) -> str:
    """``"contexts 0, 2 are relevant"`` / ``"context 1 is relevant"`` /
    ``"no context is relevant"``."""
    if not indices:
        return f"no context is {adjective}"
    if len(indices) == 1:
        return f"context {indices[0]} is {adjective}"
    return f"contexts {_numbers(indices)} are {adjective}"


def relevant_contexts(reference_in_contexts: Matrix, n_contexts: int) -> tuple[bool, ...]:
    """Which contexts entail at least one reference claim."""
    _check_rows("reference_in_contexts", reference_in_contexts, n_contexts)
    return tuple(any(row[j] for row in reference_in_contexts) for j in range(n_contexts))


def _share(
    flags: Sequence[bool], empty_reason: str, noun: str, rest: str, *, qualifier: str = ""
) -> Score:
    if not flags:
        return Score.undefined(empty_reason)
    hits = sum(1 for f in flags if f)
    reason = _counted(hits, len(flags), noun, rest, qualifier=qualifier)
    return Score(hits / len(flags), reason=reason)


def faithfulness(answer_in_contexts: Matrix) -> Score:
    """Share of answer claims entailed by at least one context."""
    if not answer_in_contexts:
        return Score.undefined(NO_ANSWER_CLAIMS)
    if _check_rows("answer_in_contexts", answer_in_contexts, None) == 0:
        return Score.undefined(NO_CONTEXTS)
    return _share(
        [any(row) for row in answer_in_contexts],
        NO_ANSWER_CLAIMS,
        "answer claim",
        "entailed by a context",
    )


def _check_unit(name: str, values: Sequence[float]) -> None:
    bad = [v for v in values if not 0.0 <= v <= 1.0]  # also rejects NaN
    if bad:
        raise ValueError(f"{name} must hold supports in [0, 1]. Got {bad[0]!r}.")


def faithfulness_support(answer_support_in_contexts: Sequence[Sequence[float]]) -> Score:
    """Graded faithfulness: mean over answer claims of the best context's support.

    With 0/1 supports (a judge that only gives verdicts) it equals :func:`faithfulness`.

    Examples
    --------
    >>> faithfulness_support([[0.9, 0.2], [0.1, 0.3]]).value
    0.6
    """
    if not answer_support_in_contexts:
        return Score.undefined(NO_ANSWER_CLAIMS)
    if _check_rows("answer_support_in_contexts", answer_support_in_contexts, None) == 0:
        return Score.undefined(NO_CONTEXTS)
    best = [max(row) for row in answer_support_in_contexts]
    _check_unit("answer_support_in_contexts", best)
    value = sum(best) / len(best)
    n = len(best)
    reason = f"Mean support {value:.2f} over {n} {_plural(n, 'answer claim')} (best context each)."
    return Score(value, reason=reason)


def claim_precision_support(answer_support_correct: Sequence[float]) -> Score:
    """Graded claim precision: mean over answer claims of the support that the reference
    entails the claim. With 0/1 supports it equals :func:`claim_precision`.

    Examples
    --------
    >>> claim_precision_support([1.0, 0.5]).value
    0.75
    """
    if not answer_support_correct:
        return Score.undefined(NO_ANSWER_CLAIMS)
    _check_unit("answer_support_correct", answer_support_correct)
    n = len(answer_support_correct)
    value = sum(answer_support_correct) / n
    reason = (
        f"Mean support {value:.2f} that the reference entails each of {n} "
        f"{_plural(n, 'answer claim')}."
    )
    return Score(value, reason=reason)


def claim_precision(answer_correct: Sequence[bool]) -> Score:
    """Share of answer claims the reference entails."""
    return _share(answer_correct, NO_ANSWER_CLAIMS, "answer claim", "entailed by the reference")


def claim_recall(reference_in_answer: Sequence[bool]) -> Score:
    """Share of reference claims the answer entails."""
    return _share(
        reference_in_answer, NO_REFERENCE_CLAIMS, "reference claim", "found in the answer"
    )


def claim_f1(answer_correct: Sequence[bool], reference_in_answer: Sequence[bool]) -> Score:
    """Harmonic mean of claim precision and claim recall (0 when both are 0).

    Examples
    --------
    >>> claim_f1([True, False], [True, True, True, False]).reason
    'F1 0.60 of claim precision (1 of 2 answer claims) and claim recall (3 of 4 reference claims).'
    """
    precision = claim_precision(answer_correct)
    recall = claim_recall(reference_in_answer)
    if precision.value is None:
        return precision
    if recall.value is None:
        return recall
    total = precision.value + recall.value
    value = 0.0 if total == 0 else 2 * precision.value * recall.value / total
    n, m = len(answer_correct), len(reference_in_answer)
    reason = (
        f"F1 {value:.2f} of claim precision ({sum(map(bool, answer_correct))} of {n} "
        f"{_plural(n, 'answer claim')}) and claim recall ({sum(map(bool, reference_in_answer))} "
        f"of {m} {_plural(m, 'reference claim')})."
    )
    return Score(value, reason=reason)


def context_claim_recall(reference_in_contexts: Matrix) -> Score:
    """Share of reference claims entailed by at least one context (retriever recall)."""
    if not reference_in_contexts:
        return Score.undefined(NO_REFERENCE_CLAIMS)
    if _check_rows("reference_in_contexts", reference_in_contexts, None) == 0:
        return Score.undefined(NO_CONTEXTS)
    return _share(
        [any(row) for row in reference_in_contexts],
        NO_REFERENCE_CLAIMS,
        "reference claim",
        "entailed by a context",
    )


def context_claim_precision(reference_in_contexts: Matrix, n_contexts: int) -> Score:
    """Share of contexts that are relevant (entail at least one reference claim):
    RAGChecker's retriever ``context_precision``, rank-blind.

    Examples
    --------
    >>> context_claim_precision([[True, False, False, False], [False, False, True, False]], 4)
    Score(value=0.5, reason='2 of 4 contexts entail a reference claim (ranks 1, 3).', details=None)
    """
    if n_contexts == 0:
        return Score.undefined(NO_CONTEXTS)
    if not reference_in_contexts:
        return Score.undefined(NO_REFERENCE_CLAIMS)
    relevant = relevant_contexts(reference_in_contexts, n_contexts)
    ranks = [j + 1 for j, r in enumerate(relevant) if r]
    reason = _counted(
        len(ranks),
        n_contexts,
        "context",
        "a reference claim" + _ranks_phrase(ranks),
        verbs=("entails", "entail"),
    )
    return Score(len(ranks) / n_contexts, reason=reason)


def _ranks_phrase(ranks: Sequence[int]) -> str:
    """``" (rank 2)"`` / ``" (ranks 1, 3)"`` / ``""``."""
    if not ranks:
        return ""
    return f" (rank {ranks[0]})" if len(ranks) == 1 else f" (ranks {_numbers(ranks)})"


def ranked_precision(useful: Sequence[bool], what: str) -> Score:
    """Ragas' context precision of a ranked list of per-context verdicts: the mean, over the
    useful contexts, of the precision at each one's rank (average precision over the
    retrieved list); 0 when no context is useful. ``what`` completes "entail(s) ...".

    Ragas divides by ``sum(verdicts) + 1e-10``; this divides by ``sum(verdicts)`` exactly, so
    the two differ by less than 1e-9 when a context is useful and agree (0) when none is.

    Examples
    --------
    >>> ranked_precision([False, True, False, True], "a reference claim").value
    0.5
    >>> ranked_precision([True, False, True], "an answer claim").reason
    'Average precision 0.83 over 3 ranked contexts: 2 entail an answer claim (ranks 1, 3).'
    """
    n = len(useful)
    if n == 0:
        return Score.undefined(NO_CONTEXTS)
    ranks = [k + 1 for k, flag in enumerate(useful) if flag]
    if not ranks:
        return Score(
            0.0,
            reason=f"Average precision 0 over {n} ranked "
            f"{_plural(n, 'context')}: none entails {what}.",
        )
    value = sum((i + 1) / rank for i, rank in enumerate(ranks)) / len(ranks)
    verb = "entails" if len(ranks) == 1 else "entail"
    reason = (
        f"Average precision {value:.2f} over {n} ranked {_plural(n, 'context')}: "
        f"{len(ranks)} {verb} {what}{_ranks_phrase(ranks)}."
    )
    return Score(value, reason=reason)


def context_precision(reference_in_contexts: Matrix, n_contexts: int) -> Score:
    """Ragas' ``context_precision`` (with a reference): :func:`ranked_precision` of the
    contexts that entail at least one reference claim (the per-context verdict "this context
    was useful in arriving at the reference").

    Examples
    --------
    >>> context_precision([[False, True, False], [False, False, True]], 3).value
    0.5833333333333333
    """
    if n_contexts == 0:
        return Score.undefined(NO_CONTEXTS)
    if not reference_in_contexts:
        return Score.undefined(NO_REFERENCE_CLAIMS)
    return ranked_precision(
        relevant_contexts(reference_in_contexts, n_contexts), "a reference claim"
    )


def context_utilization(answer_in_contexts: Matrix, n_contexts: int) -> Score:
    """Ragas' ``context_utilization`` (context precision without a reference):
    :func:`ranked_precision` of the contexts that entail at least one answer claim (the
    per-context verdict "this context was useful in arriving at the answer").

    Examples
    --------
    >>> context_utilization([[True, False], [False, False]], 2).value
    1.0
    """
    if n_contexts == 0:
        return Score.undefined(NO_CONTEXTS)
    if not answer_in_contexts:
        return Score.undefined(NO_ANSWER_CLAIMS)
    _check_rows("answer_in_contexts", answer_in_contexts, n_contexts)
    used = tuple(any(row[j] for row in answer_in_contexts) for j in range(n_contexts))
    return ranked_precision(used, "an answer claim")


def context_claim_utilization(
    reference_in_contexts: Matrix, reference_in_answer: Sequence[bool]
) -> Score:
    """Of the reference claims found in the contexts, the share the answer also states:
    RAGChecker's generator ``context_utilization``."""
    if not reference_in_contexts:
        return Score.undefined(NO_REFERENCE_CLAIMS)
    _check_length("reference_in_answer", reference_in_answer, len(reference_in_contexts), "claim")
    retrieved = [
        in_answer
        for row, in_answer in zip(reference_in_contexts, reference_in_answer, strict=True)
        if any(row)
    ]
    return _share(
        retrieved,
        "no reference claim is entailed by any context",
        "reference claim",
        "stated in the answer",
        qualifier="found in the contexts",
    )


def _answer_flags(
    answer_correct: Sequence[bool], answer_in_contexts: Matrix
) -> tuple[int, Score | None]:
    n = len(answer_correct)
    if n == 0:
        return 0, Score.undefined(NO_ANSWER_CLAIMS)
    _check_length("answer_in_contexts", answer_in_contexts, n, "answer claim")
    if _check_rows("answer_in_contexts", answer_in_contexts, None) == 0:
        return n, Score.undefined(NO_CONTEXTS)
    return n, None


def hallucination(answer_correct: Sequence[bool], answer_in_contexts: Matrix) -> Score:
    """Share of answer claims that are incorrect and entailed by no context."""
    n, undefined = _answer_flags(answer_correct, answer_in_contexts)
    if undefined is not None:
        return undefined
    hits = sum(
        1
        for ok, row in zip(answer_correct, answer_in_contexts, strict=True)
        if not ok and not any(row)
    )
    reason = _counted(
        hits, n, "answer claim", "wrong against the reference and entailed by no context"
    )
    return Score(hits / n, reason=reason)


def self_knowledge(answer_correct: Sequence[bool], answer_in_contexts: Matrix) -> Score:
    """Share of answer claims that are correct and entailed by no context."""
    n, undefined = _answer_flags(answer_correct, answer_in_contexts)
    if undefined is not None:
        return undefined
    hits = sum(
        1 for ok, row in zip(answer_correct, answer_in_contexts, strict=True) if ok and not any(row)
    )
    reason = _counted(hits, n, "answer claim", "correct but entailed by no context")
    return Score(hits / n, reason=reason)


def noise_sensitivity(
    *,
    answer_correct: Sequence[bool],
    answer_in_contexts: Matrix,
    reference_in_contexts: Matrix,
    mode: Literal["relevant", "irrelevant"],
) -> Score:
    """Share of answer claims that are incorrect and come from relevant (or irrelevant) contexts.

    ``relevant``: incorrect and entailed by some relevant context. ``irrelevant``: incorrect,
    entailed by some irrelevant context and by no relevant one. The denominator is every answer
    claim. Lower is better.
    """
    if mode not in ("relevant", "irrelevant"):
        raise ValueError(f"mode must be 'relevant' or 'irrelevant'. Got {mode!r}.")
    n, undefined = _answer_flags(answer_correct, answer_in_contexts)
    if undefined is not None:
        return undefined
    k = _check_rows("answer_in_contexts", answer_in_contexts, None)
    if not reference_in_contexts:
        return Score.undefined(NO_REFERENCE_CLAIMS)
    relevant = relevant_contexts(reference_in_contexts, k)
    hits = 0
    for ok, row in zip(answer_correct, answer_in_contexts, strict=True):
        if ok:
            continue
        from_relevant = any(e and r for e, r in zip(row, relevant, strict=True))
        from_irrelevant = any(e and not r for e, r in zip(row, relevant, strict=True))
        if mode == "relevant":
            hits += from_relevant
        else:
            hits += from_irrelevant and not from_relevant
    if mode == "relevant":
        rest = "wrong against the reference yet entailed by a relevant context"
        which = _contexts_phrase([j for j, r in enumerate(relevant) if r], "relevant")
    else:
        rest = "wrong against the reference and entailed only by irrelevant contexts"
        which = _contexts_phrase([j for j, r in enumerate(relevant) if not r], "irrelevant")
    reason = _counted(hits, n, "answer claim", f"{rest} ({which})")
    return Score(hits / n, reason=reason)
