"""Answer reward family: a reward model's judgement of the answer to the question.

``answer_reward`` is Unitxt's: sigmoid of the single logit of a text-classification reward
model (default ``OpenAssistant/reward-model-deberta-v3-large-v2``) on (question, answer).
The model is not installable through pip: it is read from ``Settings.reward_model`` or the
local Hugging Face cache, and ``build`` raises ModelUnavailableError, saying how to supply
it, when it is absent. All pairs of a batch are scored together; scores are rounded to 6
decimals so that a row's score does not depend on the batch it ran in (float32 noise).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.metrics.base import Outcome, RunContext, check_metrics, in_chunks
from ragmeter.models.reward import AnswerReward, load_answer_reward
from ragmeter.types import MetricSpec, Sample, Score

__all__ = ["SPECS", "AnswerRewardFamily", "build"]

FAMILY = "answer_reward"

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "answer_reward",
        FAMILY,
        ("question", "answer"),
        "A reward model's sigmoid score of the answer given the question (Unitxt's "
        "answer_reward; default OpenAssistant/reward-model-deberta-v3-large-v2, a local copy "
        "given as the reward_model setting).",
    ),
)


class AnswerRewardFamily:
    """Scores ``answer_reward`` for a batch with one reward model."""

    def __init__(self, scorer: AnswerReward) -> None:
        self.scorer = scorer

    def score_samples(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        check_metrics("answer_reward", metrics, ("answer_reward",))
        rows: list[int] = []
        reasons: dict[int, str] = {}
        for index, sample in enumerate(samples):
            if not (sample.question or "").strip():
                reasons[index] = "The question is empty; a reward needs a question."
            elif not (sample.answer or "").strip():
                reasons[index] = "The answer is empty; there is nothing to reward."
            else:
                rows.append(index)
        values = self.scorer.score(
            [samples[i].question or "" for i in rows], [samples[i].answer or "" for i in rows]
        )
        scored = {i: round(value, 6) for i, value in zip(rows, values, strict=True)}
        out: list[dict[str, Outcome]] = []
        for index in range(len(samples)):
            if index in scored:
                outcome: Outcome = Score(
                    scored[index],
                    f"The reward model rates the answer {scored[index]:.3f} (sigmoid of its "
                    "logit for the question and answer).",
                    {"model": self.scorer.name},
                )
            else:
                outcome = Score.undefined(reasons[index])
            out.append({name: outcome for name in metrics})
        return out

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        return await in_chunks(self.score_samples, samples, metrics)


def build(ctx: RunContext) -> AnswerRewardFamily:
    """Find ``ctx.settings.reward_model``; raises ModelUnavailableError when it is missing."""
    return AnswerRewardFamily(load_answer_reward(ctx.settings.reward_model))
