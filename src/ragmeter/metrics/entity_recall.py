"""Family "entity_recall": Ragas' context entity recall, with one shared analysis per sample.

``context_entity_recall`` = |CE ∩ GE| / |GE|, where GE are the entities of the reference
answers and CE those of the contexts, compared after case and punctuation folding. Entities
come from the run's judge (an LLM, or the offline NER model of the offline judge).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from ragmeter.metrics._judged import judge_for, judge_ref, request_for, score_all
from ragmeter.metrics.base import Outcome, RunContext, check_metrics
from ragmeter.types import Failure, MetricSpec, Sample, Score

FAMILY = "entity_recall"

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name="context_entity_recall",
        family=FAMILY,
        requires=("reference_answers", "contexts"),
        description="Share of the reference answers' entities that the contexts mention.",
        needs_judge=True,
    ),
)


def fold_entity(text: str) -> str:
    """Lowercase, drop punctuation and symbols, collapse spaces: 'U.S.' -> 'us'.

    >>> fold_entity("  The  Taj-Mahal, ")
    'the tajmahal'
    """
    kept = (
        ch
        for ch in unicodedata.normalize("NFKC", text).casefold()
        if not unicodedata.category(ch).startswith(("P", "S"))
    )
    return re.sub(r"\s+", " ", "".join(kept)).strip()


def _folded(entities: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for entity in entities:
        key = fold_entity(entity)
        if key:
            out.setdefault(key, entity)
    return out


class EntityRecallFamily:
    def __init__(self, ctx: RunContext) -> None:
        self.judge = judge_for(ctx, ("entities",))

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        check_metrics("entity_recall", metrics, ("context_entity_recall",))
        return await score_all(samples, metrics, self._score_one)

    async def _score_one(self, sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
        name = "context_entity_recall"
        for fld in ("reference_answers", "contexts"):
            if getattr(sample, fld) is None:
                return {name: Failure(name, f"the sample has no {fld}", field=fld)}
        if not sample.reference_answers:
            return {name: Score.undefined("no reference answers were given")}
        if not sample.contexts:
            return {name: Score.undefined("no contexts were retrieved")}
        analysis = await self.judge.analyze(request_for(sample, ("entities",)))
        if len(analysis.context_entities) != len(sample.contexts):
            return {
                name: Failure(
                    name,
                    f"The judge returned entities for {len(analysis.context_entities)} contexts; "
                    f"the sample has {len(sample.contexts)}.",
                )
            }
        reference = _folded(analysis.reference_entities)
        contexts = _folded(e for group in analysis.context_entities for e in group)
        details = {
            **judge_ref(analysis.meta),
            "reference_entities": list(reference.values()),
            "context_entities": list(contexts.values()),
            "found": [reference[k] for k in reference if k in contexts],
            "missing": [reference[k] for k in reference if k not in contexts],
        }
        if not reference:
            return {
                name: Score(None, reason="the reference answers name no entity", details=details)
            }
        hits = sum(1 for key in reference if key in contexts)
        return {name: Score(hits / len(reference), details=details)}


def build(ctx: RunContext) -> EntityRecallFamily:
    return EntityRecallFamily(ctx)
