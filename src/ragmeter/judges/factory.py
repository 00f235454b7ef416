"""Build the run's judge from ``Settings.judge``: a Judge object, "offline" or "openai:MODEL"."""

from __future__ import annotations

import os
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.judges.base import Judge
from ragmeter.judges.shared import SharedJudge
from ragmeter.types import Usage

__all__ = ["make_judge"]


def make_judge(settings: Any, usage: Usage) -> SharedJudge:
    """The judge for one run, wrapped so families share one analysis per sample.

    ``settings.judge`` may be a Judge object (used as is), ``"offline"`` or ``"openai:MODEL"``
    (endpoint from ``settings.base_url`` or ``OPENAI_BASE_URL``, key from ``settings.api_key``
    or ``OPENAI_API_KEY``; a non-OpenAI endpoint may go without a key).
    """
    if settings.max_concurrency < 1:
        raise ConfigError(f"max_concurrency must be >= 1. Got {settings.max_concurrency}.")
    spec = settings.judge
    if isinstance(spec, SharedJudge):
        return spec
    if not isinstance(spec, str):
        if not isinstance(spec, Judge):
            raise ConfigError(
                "The judge must be 'offline', 'openai:MODEL' or an object with name, "
                f"async analyze(), async verify() and describe(). Got {type(spec).__name__}."
            )
        return SharedJudge(spec)
    if spec == "offline":
        from ragmeter.judges.offline import OfflineJudge

        return SharedJudge(OfflineJudge(settings))
    kind, sep, model = spec.partition(":")
    if kind == "openai" and sep and model:
        from ragmeter.cache import JudgeCache
        from ragmeter.judges.openai_judge import OpenAIJudge

        cache = JudgeCache(settings.cache_path) if settings.use_cache else None
        judge = OpenAIJudge(
            model,
            base_url=settings.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            api_key=settings.api_key or os.environ.get("OPENAI_API_KEY") or None,
            usage=usage,
            cache=cache,
            max_concurrency=settings.max_concurrency,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            price_in=settings.price_in,
            price_out=settings.price_out,
            judge_id=settings.judge_id,
            max_reply_bytes=settings.max_reply_bytes,
            max_claims=settings.max_claims,
        )
        return SharedJudge(judge)
    raise ConfigError(
        f"Unknown judge {spec!r}. Use 'offline', 'openai:MODEL' (e.g. openai:gpt-4o-mini), "
        "or pass a Judge object."
    )
