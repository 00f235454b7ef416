"""The contract between the runner and metric families.

A *family* computes one or more metrics that share work (tokens, claims, embeddings).
Each family module exposes ``SPECS: tuple[MetricSpec, ...]`` and
``build(ctx: RunContext) -> MetricFamily``; it imports heavy libraries lazily, inside
``build`` or later, so that listing metrics stays fast.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragmeter.errors import ConfigError
from ragmeter.metrics.progress import CHUNK_ROWS, scored
from ragmeter.settings import Settings
from ragmeter.types import Failure, Sample, Score, Usage

if TYPE_CHECKING:
    from ragmeter.judges.base import Judge
    from ragmeter.models.embeddings import Embedder

Outcome = Score | Failure


@dataclass(slots=True)
class RunContext:
    """Resources shared by the families of one run; built lazily, once."""

    settings: Settings = field(default_factory=Settings)
    usage: Usage = field(default_factory=Usage)
    #: The metrics this run computes (the plan sets it before building the families), so a
    #: family asks for nothing no requested metric needs; empty: every metric of the family.
    requested: frozenset[str] = frozenset()
    _judge: Any = None
    _embedder: Any = None
    #: Per family, what its own model says about the scores (model, dtype...), asked when the
    #: run's record is written; the record holds it as ``models``.
    models: dict[str, Callable[[], dict[str, Any]]] = field(default_factory=dict)

    def judge(self) -> Judge:
        if self._judge is None:
            from ragmeter.judges.factory import make_judge

            self._judge = make_judge(self.settings, self.usage)
        return self._judge

    def embedder(self) -> Embedder:
        if self._embedder is None:
            from ragmeter.models.embeddings import make_embedder

            self._embedder = make_embedder(self.settings.embedder, self.settings)
        return self._embedder

    def describe(self) -> dict[str, Any]:
        """What produced the scores, for the run's record (never secrets)."""
        out: dict[str, Any] = {}
        if self._judge is not None:
            out["judge"] = getattr(self._judge, "describe", lambda: {"name": str(self._judge)})()
        if self._embedder is not None:
            out["embedder"] = getattr(self._embedder, "name", type(self._embedder).__name__)
        if self.models:
            out["models"] = {family: about() for family, about in self.models.items()}
        return out

    async def aclose(self) -> None:
        close = getattr(self._judge, "aclose", None)
        if close is not None:
            await close()


@runtime_checkable
class MetricFamily(Protocol):
    """Scores a batch of samples for the requested metric names of this family.

    Returns one mapping per sample, in order, with an outcome for every requested name.
    Raising is allowed; the runner then retries sample by sample and records failures.
    """

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]: ...


def check_metrics(family: str, metrics: Sequence[str], names: Collection[str]) -> None:
    """Raise :class:`ConfigError` naming every requested metric ``family`` does not have."""
    unknown = [name for name in metrics if name not in names]
    if unknown:
        raise ConfigError(
            f"The {family} family has no metric {', '.join(map(repr, unknown))}. "
            f"It has: {', '.join(sorted(names))}."
        )


async def in_chunks(
    score_samples: Callable[[Sequence[Sample], Sequence[str]], list[dict[str, Outcome]]],
    samples: Sequence[Sample],
    metrics: Sequence[str],
    *,
    size: int = CHUNK_ROWS,
) -> list[dict[str, Outcome]]:
    """A model family's synchronous ``score_samples`` off the event loop (so judge calls
    keep flowing), ``size`` rows at a time, reporting progress after each chunk. The model
    families round their scores, so a row's score does not depend on its chunk."""
    out: list[dict[str, Outcome]] = []
    for start in range(0, len(samples), size):
        chunk = samples[start : start + size]
        out.extend(await asyncio.to_thread(score_samples, chunk, metrics))
        scored(len(chunk))
    return out
