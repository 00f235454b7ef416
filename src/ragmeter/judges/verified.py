"""``VerifiedJudge``: claims from one judge, entailment from another verifier.

``Settings.verifier`` builds one when the verifier is not the judge's own:
LLM-extracted claims checked by a local NLI model or by the offline verifier (no paid verify
calls), offline claims checked by a local NLI model. Its name joins both names, so the run
record says which verifier produced the scores; each score's details keep the analyze step's
judge and the verify step's verifier apart (``meta["analyze"]``, ``meta["verify"]``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ragmeter.config.criteria import CriteriaRequest, CriteriaVerdicts
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Judge, Verification, Verifier

__all__ = ["VerifiedJudge"]


class VerifiedJudge:
    """A :class:`~ragmeter.judges.base.Judge` whose ``analyze`` is ``judge``'s and whose
    ``verify`` is ``verifier``'s."""

    def __init__(self, judge: Judge, verifier: Verifier) -> None:
        self.judge = judge
        self.verifier = verifier
        self.name = f"{judge.name}+verify:{verifier.name}"

    async def analyze(self, request: AnalyzeRequest) -> Analysis:
        return await self.judge.analyze(request)

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification:
        return await self.verifier.verify(blocks)

    @property
    def judges_criteria(self) -> bool:
        """Whether the claims' judge answers the user's criteria (they go to it)."""
        return callable(getattr(self.judge, "judge_criteria", None))

    async def judge_criteria(self, request: CriteriaRequest) -> CriteriaVerdicts:
        return await self.judge.judge_criteria(request)  # type: ignore[attr-defined]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "claims": self.judge.describe(),
            "verifier": self.verifier.describe(),
        }

    async def preflight(self) -> None:
        """The verifier's check first (a local model loads, free), then the judge's."""
        for part in (self.verifier, self.judge):
            check = getattr(part, "preflight", None)
            if check is not None:
                await check()

    async def aclose(self) -> None:
        closers = [getattr(part, "aclose", None) for part in (self.judge, self.verifier)]
        await asyncio.gather(*(close() for close in closers if close is not None))
