"""Planning a run's judge calls without making them (a dry run).

An :class:`~ragmeter.judges.llm.openai_judge.OpenAIJudge` given a :class:`CallPlanner`
builds each request exactly as it would send it (messages, schema, cache key) and then, in
place of the HTTP request, asks the planner: a reply already in the cache is read and used
(the call is counted as cached); any other call is counted as one to make, its prompt tokens
counted, and answered with a simulated reply that fits the request (``simulated_*``:
claims are the sentences of the text, no claim is entailed, every criterion gets its first
answer), so the families go on and plan their next call as a real run would. Nothing is sent
and no client is opened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ragmeter.cache import JudgeCache
from ragmeter.config.criteria import CriteriaRequest
from ragmeter.judges.base import AnalyzeRequest
from ragmeter.judges.llm import schemas as S
from ragmeter.judges.llm.schemas import ReplyInvalid
from ragmeter.text.sentences import split_sentences

__all__ = [
    "CallPlanner",
    "PlannedCall",
    "simulated_analysis",
    "simulated_criteria",
    "simulated_verification",
]

T = TypeVar("T")

_ENTITY = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*|\b\d[\d,.]*\b")


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One judge call of the plan: its prompt id, whether the cache answers it, its tokens
    (prompt: the messages as sent; completion: the simulated or cached reply)."""

    prompt: str
    cached: bool
    prompt_tokens: int
    completion_tokens: int


@dataclass(slots=True)
class CallPlanner:
    """Collects the calls a run would make. ``count_messages`` counts a request's prompt
    tokens, ``count_text`` a reply's."""

    count_messages: Callable[[list[dict[str, str]]], int]
    count_text: Callable[[str], int]
    calls: list[PlannedCall] = field(default_factory=list)

    def complete(
        self,
        *,
        prompt_id: str,
        key: str,
        messages: list[dict[str, str]],
        cache: JudgeCache | None,
        parse: Callable[[str], T],
        simulated: str,
    ) -> tuple[T, bool]:
        """The value a call would give (cached, else simulated) and whether it was cached."""
        stored = cache.get(key) if cache is not None else None
        if stored is not None:
            try:
                value = parse(stored)
            except ReplyInvalid:
                pass  # a real run asks again: planned as a call to make
            else:
                self._add(prompt_id, True, messages, stored)
                return value, True
        self._add(prompt_id, False, messages, simulated)
        return parse(simulated), False

    def _add(self, prompt_id: str, cached: bool, messages: list[dict[str, str]], reply: str):
        self.calls.append(
            PlannedCall(prompt_id, cached, self.count_messages(messages), self.count_text(reply))
        )


def _sentences(text: str | None) -> list[str]:
    return [s for s in split_sentences(text or "") if s.strip()]


def _entities(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0) for m in _ENTITY.finditer(text)))


def simulated_analysis(request: AnalyzeRequest) -> str:
    """An analyze reply that fits ``request``: claims are the sentences of each text."""
    wants = S.ordered_wants(request.wants)
    out: dict[str, Any] = {}
    if "answer_claims" in wants:
        out["answer_claims"] = _sentences(request.answer)
    if "reference_claims" in wants:
        out["reference_claims"] = [
            {"reference": i, "claims": _sentences(r)}
            for i, r in enumerate(request.references, start=1)
        ]
    if "entities" in wants:
        out["reference_entities"] = [e for r in request.references for e in _entities(r)]
        out["context_entities"] = [
            {"context": i, "entities": _entities(c)}
            for i, c in enumerate(request.contexts, start=1)
        ]
    if "questions" in wants:
        first = (_sentences(request.answer) or ["the answer"])[0].rstrip(".?!")
        out["questions"] = [
            f"What is known about {first}? ({i})" for i in range(1, request.n_questions + 1)
        ]
        out["noncommittal"] = False
    return json.dumps(out)


def simulated_verification(plan: S.VerifyPlan) -> str:
    """A verify reply that fits ``plan``: no claim is entailed."""
    return json.dumps(
        {"verdicts": [{"claim": i, "entailed_by": []} for i in range(1, plan.n_claims + 1)]}
    )


def simulated_criteria(request: CriteriaRequest) -> str:
    """A criteria reply that fits ``request``: every criterion gets its first answer."""
    return json.dumps(
        {
            c.name: {"reason": "planned", "quote": "", "answer": c.answers[0]}
            for c in request.criteria
        }
    )
