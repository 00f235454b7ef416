"""How completely an answer covers its question's parts, by expected answer type: the
``completeness`` factor of ``response_relevancy``'s offline variant. Pure numpy, no model:
the cosines come in as a matrix.

A part whose wh-word sets an expected answer type (when -> a time, who -> a name, where -> a
place, how many / what year... -> a number; :func:`ragmeter.text.questions.expected_answer_type`)
is answered to the degree ``r = best cosine(part, answer sentence holding that type) / best
cosine(part, any answer sentence)`` (0 when no sentence holds it) and counts ``0.5 + 0.5 * r``.
Parts of other types count 1. ``completeness`` is the mean over parts, in [0.5, 1].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragmeter.text.questions import expected_answer_type, holds_answer_type

__all__ = ["part_credits"]


def part_credits(
    question: str,
    parts: Sequence[str],
    sentences: Sequence[str],
    similarity: npt.NDArray[np.float64],
) -> tuple[list[float], list[str | None]]:
    """The credit of each part of ``question`` and the answer type it asks for.

    Parameters
    ----------
    question : str
        The whole question (a value it already holds is not an answer).
    parts, sentences : sequence of str
        The question's parts and the answer's sentences.
    similarity : ndarray, sentences x parts
        Cosines clipped to [0, 1].

    Examples
    --------
    >>> similarity = np.array([[0.8, 0.1], [0.2, 0.6]])
    >>> part_credits("When was it built and why?", ["When was it built", "why"],
    ...              ["It is old.", "It was built in 1889."], similarity)
    ([0.625, 1.0], ['time', None])
    """
    credits: list[float] = []
    types: list[str | None] = []
    for j, part in enumerate(parts):
        kind = expected_answer_type(part)
        types.append(kind)
        if kind is None:
            credits.append(1.0)
            continue
        typed = [
            float(similarity[i, j])
            for i, sentence in enumerate(sentences)
            if holds_answer_type(kind, sentence, question)
        ]
        best = float(similarity[:, j].max())
        ratio = min(max(typed, default=0.0) / best, 1.0) if best > 0 else 0.0
        credits.append(0.5 + 0.5 * ratio)
    return credits, types
