"""The judge protocol: the two structured tasks every claim metric is built from.

A judge answers *analyze* (claims, entities, generated questions: one call per sample)
and *verify* (entailment of each claim by each premise: one call per sample). Both the
OpenAI-compatible LLM judge and the deterministic offline verifier implement it, so all
claim metrics run on either. A :class:`Verifier` answers *verify* only (a local NLI model);
``Settings.verifier`` lets one decide entailment for claims another judge extracted.

The types live in the bottom layer (:mod:`ragmeter.types`), so that ``Settings`` can name
them; judge code imports them from here.
"""

from ragmeter.types import (
    Analysis,
    AnalyzeRequest,
    ClaimBlock,
    Judge,
    Premise,
    Verification,
    Verifier,
    Want,
    answer_premise,
)

__all__ = [
    "Analysis",
    "AnalyzeRequest",
    "ClaimBlock",
    "Judge",
    "Premise",
    "Verification",
    "Verifier",
    "Want",
    "answer_premise",
]
