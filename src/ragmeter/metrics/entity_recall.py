"""Family "entity_recall": Ragas' context entity recall, with one shared analysis per sample.

``context_entity_recall`` = |CE ∩ GE| / |GE|, where GE are the entities of the reference
answers and CE those of the contexts, compared after case and punctuation folding. Entities
come from the run's judge (an LLM, or the offline NER model of the offline judge).

A reference entity is in CE when a context entity equals it or holds it as whole words: a
context naming "100 degrees Celsius" mentions the reference's "100 degrees" (entity spans
differ between texts and extractors; the other way round, "Shelley" in a context does not
confirm "Mary Shelley").
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


def mentioned(entity: str, context_entities: Iterable[str]) -> bool:
    """Whether a folded reference entity equals or sits, as whole words, in a folded context
    entity.

    >>> mentioned("100 degrees", ["100 degrees celsius"])
    True
    >>> mentioned("mary shelley", ["shelley"]), mentioned("100 degree", ["100 degrees"])
    (False, False)
    """
    padded = f" {entity} "
    return any(entity == other or padded in f" {other} " for other in context_entities)


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
        found = [k for k in reference if mentioned(k, contexts)]
        details = {
            **judge_ref(analysis.meta),
            "reference_entities": list(reference.values()),
            "context_entities": list(contexts.values()),
            "found": [reference[k] for k in found],
            "missing": [reference[k] for k in reference if k not in found],
        }
        if not reference:
            return {
                name: Score(None, reason="the reference answers name no entity", details=details)
            }
        n = len(reference)
        reason = f"{len(found)} of {n} reference entit{'y' if n == 1 else 'ies'} in the contexts"
        if details["missing"]:
            shown = ", ".join(repr(e) for e in details["missing"][:3])
            more = "" if len(details["missing"]) <= 3 else ", ..."
            reason += f"; missing {shown}{more}"
        return {name: Score(len(found) / n, reason + ".", details)}


def build(ctx: RunContext) -> EntityRecallFamily:
    return EntityRecallFamily(ctx)
