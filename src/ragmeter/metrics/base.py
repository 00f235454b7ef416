"""The contract between the runner and metric families.

A *family* computes one or more metrics that share work (tokens, claims, embeddings).
Each family module exposes ``SPECS: tuple[MetricSpec, ...]`` and
``build(ctx: RunContext) -> MetricFamily``; it imports heavy libraries lazily, inside
``build`` or later, so that listing metrics stays fast.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragmeter.errors import ConfigError
from ragmeter.types import Failure, Sample, Score, Usage

if TYPE_CHECKING:
    from ragmeter.judges.base import Judge
    from ragmeter.models.embeddings import Embedder

Outcome = Score | Failure


@dataclass(frozen=True, slots=True)
class Settings:
    """Run options that families read. All keyword-only at the API surface."""

    #: "offline" (default), "openai:MODEL", or a Judge object.
    judge: Any = "offline"
    #: Who decides "premise entails claim" for the claim metrics: "judge" (default: the
    #: judge's own verify, so the offline verifier with the offline judge), "offline" (the
    #: offline verifier, whichever judge extracts the claims), "nli:PATH_OR_NAME" (a local
    #: Hugging Face sequence classifier), or a Verifier object.
    verifier: Any = "judge"
    #: The nli: verifier's support label, a name or index (default: from its config.json).
    verifier_label: str | None = None
    #: The nli: verifier's threshold on the support probability (default 0.5).
    verifier_threshold: float | None = None
    #: Where the nli: verifier runs: "cpu", "cuda", "cuda:N" or "auto" (default).
    device: str | None = None
    #: Let the nli: verifier fetch a model id missing from the local Hugging Face cache.
    allow_download: bool = False
    base_url: str | None = None
    api_key: str | None = None
    #: Who answers behind an "openai:MODEL" judge, in its cache keys (default: the model name).
    #: The endpoint's address is not in them; set this when two servers serve different
    #: weights under one model name.
    judge_id: str | None = None
    #: Embeddings: "offline" (MiniLM int8 ONNX), a sentence-transformers name or path,
    #: "openai:MODEL", or an Embedder object.
    embedder: Any = "offline"
    #: Context relevance LM: "offline" (SmolLM2 GGUF), a local path / HF cache name.
    relevance_model: str = "offline"
    #: Context relevance numerics: "auto" (bfloat16 on CPUs with native bfloat16, else
    #: float32; ``RAGMETER_RELEVANCE_DTYPE`` overrides), "float32" (Unitxt's) or "bfloat16".
    relevance_dtype: str = "auto"
    reward_model: str | None = None
    ks: tuple[int, ...] = (1, 3, 5, 10)
    relevance_ks: tuple[int, ...] = (1, 3, 5)
    response_relevancy_n: int = 3
    max_concurrency: int = 16
    cache_path: str | None = None
    use_cache: bool = True
    timeout: float = 60.0
    max_retries: int = 5
    #: Caps on what an LLM judge may send back: bytes of one reply, and claims of one answer
    #: (or one reference answer). A row past a cap fails with the reason; nothing is cached.
    max_reply_bytes: int = 1_000_000
    max_claims: int = 1000
    price_in: float | None = None
    price_out: float | None = None
    batch_size: int = 256


@dataclass(slots=True)
class RunContext:
    """Resources shared by the families of one run; built lazily, once."""

    settings: Settings = field(default_factory=Settings)
    usage: Usage = field(default_factory=Usage)
    _judge: Any = None
    _embedder: Any = None

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
