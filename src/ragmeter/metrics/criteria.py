"""Family "criteria": the user's criteria (:mod:`ragmeter.config.criteria`), one metric each.

Its metrics are not registered in advance: :func:`specs_for` makes them from
``Settings.criteria`` and the run's plan adds them to the metrics asked for. A judge that
answers criteria (the LLM judge) gets every criterion of a row in one call
(:meth:`~ragmeter.judges.llm.openai_judge.OpenAIJudge.judge_criteria`); each score is the
criterion's score of the judge's answer (yes 1, no 0, or the rubric level's score), its
reason the judge's, its details the answer and the quote. With a judge that cannot (the
offline judge), criteria of kind ``entailment`` are decided by the judge's verifier (one
``verify`` call for all of them: the hypothesis, as one claim, against each text of the
premise; entailed by any of them scores 1) and the others are skipped, with that reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.config.criteria import CriteriaRequest, Criterion
from ragmeter.errors import param
from ragmeter.judges.base import ClaimBlock
from ragmeter.judges.shared_analysis import judges_criteria
from ragmeter.metrics._judged import judge_ref, score_all
from ragmeter.metrics.base import Outcome, RunContext, check_metrics
from ragmeter.types import Failure, MetricSpec, Sample, Score

__all__ = ["FAMILY", "SPECS", "CriteriaFamily", "build", "specs_for"]

FAMILY = "criteria"
#: None in advance: a run's criteria are its settings' (:func:`specs_for`).
SPECS: tuple[MetricSpec, ...] = ()


def specs_for(criteria: Sequence[Criterion]) -> list[MetricSpec]:
    """The metric of each criterion: its name, the fields it reads, its direction."""
    return [
        MetricSpec(
            name=c.name,
            family=FAMILY,
            requires=c.fields,
            description=c.description,
            higher_is_better=c.higher_is_better,
            needs_judge=True,
        )
        for c in criteria
    ]


def skip_reason(judge_name: str) -> str:
    return (
        f"the judge {judge_name} cannot judge criteria: they need an LLM judge "
        f"('openai:MODEL' as {param('judge')}); only criteria of kind 'entailment' run with "
        "the offline judge (its verifier decides them)"
    )


class CriteriaFamily:
    """Scores the run's criteria: by the judge in one call per row, or entailment ones by
    the verifier when the judge answers no criteria."""

    def __init__(self, ctx: RunContext) -> None:
        self.criteria = {c.name: c for c in ctx.settings.criteria}
        self.judge: Any = ctx.judge()
        self.by_judge = judges_criteria(self.judge)
        #: Criteria this judge cannot score, with the reason (the plan skips them).
        self.skipped: dict[str, str] = {}
        if not self.by_judge:
            for c in self.criteria.values():
                if c.kind != "entailment":
                    self.skipped[c.name] = skip_reason(self.judge.name)

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        check_metrics(FAMILY, metrics, self.criteria)
        return await score_all(samples, metrics, self._one)

    async def _one(self, sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
        criteria = [self.criteria[name] for name in metrics if name not in self.skipped]
        if not criteria:
            return {}
        if self.by_judge:
            return await self._judged(sample, criteria)
        return await self._verified(sample, criteria)

    async def _judged(self, sample: Sample, criteria: list[Criterion]) -> dict[str, Outcome]:
        fields = list(dict.fromkeys(f for c in criteria for f in c.fields))
        texts = {f: getattr(sample, f) for f in fields if getattr(sample, f) is not None}
        request = CriteriaRequest(criteria=tuple(criteria), texts=texts)
        reply = await self.judge.judge_criteria(request)
        verdicts = {v.name: v for v in getattr(reply, "verdicts", ())}
        ref = judge_ref(getattr(reply, "meta", None))
        out: dict[str, Outcome] = {}
        for c in criteria:
            v = verdicts.get(c.name)
            if v is None:
                # The judge's reply, not the row: a resumed run asks again.
                out[c.name] = Failure(
                    c.name, f"The judge gave no verdict for {c.name}.", cause="judge"
                )
                continue
            details = {**ref, "answer": v.answer, "quote": v.quote, "decided_by": "judge"}
            out[c.name] = Score(v.score, reason=f"{v.answer}: {v.reason}", details=details)
        return out

    async def _verified(self, sample: Sample, criteria: list[Criterion]) -> dict[str, Outcome]:
        out: dict[str, Outcome] = {}
        sent: list[tuple[Criterion, tuple[str, ...]]] = []
        blocks = []
        for c in criteria:
            hypothesis = (getattr(sample, str(c.hypothesis)) or "").strip()
            value = getattr(sample, str(c.premise))
            premises = tuple(value) if isinstance(value, tuple) else (value or "",)
            premises = tuple(p for p in premises if p.strip())
            if not hypothesis:
                out[c.name] = Score.undefined(f"the {c.hypothesis} is empty")
            elif not premises:
                out[c.name] = Score.undefined(f"the {c.premise} holds no text")
            else:
                sent.append((c, premises))
                blocks.append(ClaimBlock(claims=(hypothesis,), premises=premises))
        if not blocks:
            return out
        verification = await self.judge.verify(blocks)
        ref = judge_ref(verification.meta)
        for (c, premises), matrix in zip(sent, verification.matrices, strict=True):
            entailed_by = [j for j, cell in enumerate(matrix[0]) if cell] if matrix else []
            found = "entailed" if entailed_by else "not entailed"
            where = f" (text {entailed_by[0] + 1} of {len(premises)})" if entailed_by else ""
            out[c.name] = Score(
                1.0 if entailed_by else 0.0,
                reason=f"The verifier of {self.judge.name} finds the {c.hypothesis} {found} "
                f"by the {c.premise}{where}.",
                details={**ref, "decided_by": "verifier", "entailed_by": entailed_by},
            )
        return out


def build(ctx: RunContext) -> CriteriaFamily:
    return CriteriaFamily(ctx)
