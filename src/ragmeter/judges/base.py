"""The judge protocol: the two structured tasks every claim metric is built from.

A judge answers *analyze* (claims, entities, generated questions: one call per sample)
and *verify* (entailment of each claim by each premise: one call per sample). Both the
OpenAI-compatible LLM judge and the deterministic offline verifier implement it, so all
claim metrics run on either. A :class:`Verifier` answers *verify* only (a local NLI model);
``Settings.verifier`` lets one decide entailment for claims another judge extracted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Want = Literal["answer_claims", "reference_claims", "entities", "questions"]


@dataclass(frozen=True, slots=True)
class AnalyzeRequest:
    question: str | None
    answer: str | None
    references: Sequence[str] = ()
    contexts: Sequence[str] = ()
    wants: frozenset[Want] = frozenset()
    n_questions: int = 3


@dataclass(frozen=True, slots=True)
class Analysis:
    answer_claims: tuple[str, ...] = ()
    #: One tuple of claims per reference answer.
    reference_claims: tuple[tuple[str, ...], ...] = ()
    reference_entities: tuple[str, ...] = ()
    #: One tuple of entities per context.
    context_entities: tuple[tuple[str, ...], ...] = ()
    questions: tuple[str, ...] = ()
    noncommittal: bool | None = None
    #: Provenance: prompt id and hash, method ("llm" / "offline-..."), cached or not.
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClaimBlock:
    """Check every claim against every premise."""

    claims: Sequence[str]
    premises: Sequence[str]


@dataclass(frozen=True, slots=True)
class Verification:
    #: One matrix per block: matrices[b][i][j] is True when premise j entails claim i.
    matrices: tuple[tuple[tuple[bool, ...], ...], ...]
    meta: dict[str, Any] = field(default_factory=dict)


_QUESTION_MARK = "Question: "
_ANSWER_MARK = "\nAnswer: "


def answer_premise(question: str | None, answer: str) -> str:
    """A reference answer (or the answer) as a premise, read with its question.

    Short answers state their fact only together with the question: "100 degrees Celsius."
    says that water boils at 100 degrees Celsius only as the answer to "What is the boiling
    point of water?". RAGChecker's checker is given the question for the same reason. Judges
    read the question as what the answer answers, never as a fact of its own (the verify
    prompt says so; the offline verifier gives no support to a claim that only restates the
    question). With no question the answer is the premise as it is.

    >>> answer_premise("When was the tower completed?", "In 1889.")
    'Question: When was the tower completed?\\nAnswer: In 1889.'
    >>> split_answer_premise(answer_premise("When was the tower completed?", "In 1889."))
    ('When was the tower completed?', 'In 1889.')
    """
    asked = " ".join((question or "").split())
    return f"{_QUESTION_MARK}{asked}{_ANSWER_MARK}{answer}" if asked else answer


def split_answer_premise(premise: str) -> tuple[str, str] | None:
    """``(question, answer)`` of a premise made by :func:`answer_premise`, else ``None``."""
    if not premise.startswith(_QUESTION_MARK):
        return None
    head, sep, answer = premise.partition(_ANSWER_MARK)
    if not sep or "\n" in head:
        return None
    return head[len(_QUESTION_MARK) :], answer


@runtime_checkable
class Judge(Protocol):
    #: Stable identity used in cache keys and results, e.g. "openai:gpt-4o-mini".
    name: str

    async def analyze(self, request: AnalyzeRequest) -> Analysis: ...

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification: ...

    def describe(self) -> dict[str, Any]: ...


@runtime_checkable
class Verifier(Protocol):
    """Decides entailment only: ``verify`` of a :class:`Judge`. Every judge is one, and so is
    the ``nli:`` verifier (:mod:`ragmeter.judges.nli_verifier`); ``Settings.verifier`` pairs
    one with the judge that extracts the claims (:mod:`ragmeter.judges.composite`)."""

    #: Stable identity used in cache keys and results, e.g. "nli:MiniCheck-RoBERTa-Large@...".
    name: str

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification: ...

    def describe(self) -> dict[str, Any]: ...
