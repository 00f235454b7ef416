"""What the offline verifier checks: each claim as read against each premise, the claims
that only restate a question, and the cells its trained model reads.

A claim is checked as itself against a context (a name given with its acronym in the form
the context uses), and by its words beyond the question against an answer read with its
question (a ``Premise`` with a question): the question's words earn no support.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragmeter.judges.base import ClaimBlock
from ragmeter.judges.offline.features import (
    STOP_WORDS,
    ClaimText,
    PremiseText,
    as_named_in,
    content_words,
    prepare_claim,
    stem,
)
from ragmeter.judges.offline.model_features import (
    ANSWER_WINDOW_SENTENCES,
    WINDOW_SENTENCES,
    evidence_window,
)
from ragmeter.text import tokens

__all__ = [
    "QUESTION_WORDS",
    "Checks",
    "beyond_question",
    "gated_cells",
    "plan_checks",
    "restated_cells",
    "restates_question",
]


def beyond_question(claim: str, question: str) -> str:
    """The claim without the words its question already holds (their content stems), in
    its own words and case: what an answer read with that question has to support.

    >>> beyond_question("Water boils at 100 degrees Celsius at sea level.",
    ...                 "What is the boiling point of water at sea level in Celsius?")
    'at 100 degrees at'
    """
    asked = frozenset(content_words(tokens(question)))
    kept = []
    for word in claim.split():
        toks = tokens(word)
        if toks and all(t not in STOP_WORDS and stem(t) in asked for t in toks):
            continue
        kept.append(word)
    return " ".join(kept).rstrip(".")


#: Per premise: the text the claims are checked against, each claim as checked against it,
#: and the question when the premise is an answer read with its question (else None).
Checks = list[tuple[str, list[str], str | None]]


def plan_checks(block: ClaimBlock) -> Checks:
    """What each claim of ``block`` is checked as against each premise: itself against a
    context (a name it gives with its acronym, "Life Insurance Corporation of India (LIC)",
    in the form the context uses: :func:`as_named_in`); its words beyond the question
    against an answer read with its question (a ``Premise`` with one), so the question's words
    earn no support."""
    out: Checks = []
    for premise in block.premises:
        text, question = premise.text, premise.question
        if question is None:
            out.append((text, [as_named_in(c, text) for c in block.claims], None))
        else:
            out.append((text, [beyond_question(c, question) for c in block.claims], question))
    return out


def restated_cells(block: ClaimBlock, checks: Checks, claims: dict[str, ClaimText]) -> np.ndarray:
    """:func:`restates_question` from ``checks``, with the claims prepared in ``claims``
    (filled in as needed)."""

    def content(text: str) -> tuple[str, ...]:
        if text not in claims:
            claims[text] = prepare_claim(text)
        return claims[text].content

    out = np.zeros((len(block.claims), len(block.premises)), dtype=bool)
    for j, (_, claims_as, question) in enumerate(checks):
        if question is not None:
            for i, (claim, rest) in enumerate(zip(block.claims, claims_as, strict=True)):
                out[i, j] = bool(content(claim)) and not content(rest)
    return out


def restates_question(block: ClaimBlock) -> np.ndarray:
    """Claims × premises: True where the premise is an answer read with its question
    (a :class:`~ragmeter.types.Premise` with a question) and the claim says nothing beyond that
    question (every content word of the claim is one of the question's). Such a premise
    gives the claim no support: the question states no fact, its answer does.
    """
    return restated_cells(block, plan_checks(block), {})


#: Words of a question the model reads before an answer it checks a claim against.
QUESTION_WORDS = 64


def gated_cells(
    blocks: Sequence[ClaimBlock],
    plans: Sequence[Checks],
    restated: Sequence[np.ndarray],
    claims: dict[str, ClaimText],
    premises: dict[str, PremiseText],
    wanted: Sequence[np.ndarray],
) -> list[list[tuple[int, int, str, str]]]:
    """Per block, the cells the model checks (``wanted``, the claim not a restated
    question), each with the premise and claim as the model reads them: the claim's
    evidence window of the premise (for an answer read with its question, the question's
    first ``QUESTION_WORDS`` words before the answer, or its best window when long),
    against the whole claim."""
    out: list[list[tuple[int, int, str, str]]] = []
    for block, plan, block_wanted, block_restated in zip(
        blocks, plans, wanted, restated, strict=True
    ):
        cells = []
        for j, (premise, claims_as, question) in enumerate(plan):
            head, width = "", WINDOW_SENTENCES
            if question is not None:  # the question's first words, then the answer's window
                head = " ".join(question.split(maxsplit=QUESTION_WORDS)[:QUESTION_WORDS]) + " "
                width = ANSWER_WINDOW_SENTENCES
            for i, claim in enumerate(block.claims if question is not None else claims_as):
                if not block_wanted[i, j] or block_restated[i, j]:
                    continue
                window = evidence_window(claims[claim].content, premises[premise], width=width)
                cells.append((i, j, head + window, claim))
        out.append(cells)
    return out
