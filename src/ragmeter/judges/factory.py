"""Build the run's judge from ``Settings.judge``: a Judge object, "offline" or "openai:MODEL",
with the entailment verdicts from ``Settings.verifier`` when that is not the judge's own."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError, did_you_mean, param
from ragmeter.judges.base import Judge, Verifier
from ragmeter.judges.shared_analysis import SharedJudge, Step
from ragmeter.settings import Settings
from ragmeter.types import Usage

if TYPE_CHECKING:
    from ragmeter.cache import JudgeCache

__all__ = ["make_judge"]


def make_judge(settings: Settings, usage: Usage) -> SharedJudge:
    """The judge for one run, wrapped so families share one analysis per sample.

    ``settings.judge`` may be a Judge object (used as is), ``"offline"`` or ``"openai:MODEL"``
    (endpoint from ``settings.base_url`` or ``OPENAI_BASE_URL``, key from ``settings.api_key``
    or ``OPENAI_API_KEY``; a non-OpenAI endpoint may go without a key). ``settings.verifier``
    then picks who decides entailment (:func:`with_verifier`).
    """
    spec = settings.judge
    if isinstance(spec, SharedJudge):
        return spec
    judge = _judge(spec, settings, usage)
    return SharedJudge(
        with_verifier(judge, settings), usage=usage, count=_uncounted_steps(judge, settings, usage)
    )


def _uncounted_steps(judge: Judge, settings: Settings, usage: Usage) -> frozenset[Step]:
    """The steps whose calls go to an object that keeps no count in the run's ``usage``.

    A judge or verifier object given by the user (a Python judge such as ``FakeJudge``)
    is counted by the shared judge; the OpenAI judge counts its own requests, and the
    offline and local models make no calls worth counting.
    """
    steps: set[Step] = set()
    if not isinstance(settings.judge, str) and getattr(judge, "usage", None) is not usage:
        steps.add("analyze")
        if settings.verifier == "judge":
            steps.add("verify")
    if not isinstance(settings.verifier, str):
        steps.add("verify")
    return frozenset(steps)


def with_verifier(judge: Judge, settings: Settings) -> Judge:
    """``judge`` with its verdicts from ``settings.verifier``: ``"judge"`` (its own),
    ``"offline"`` (the offline verifier), ``"nli:PATH_OR_NAME"`` (a local classifier) or a
    Verifier object (see :class:`~ragmeter.judges.verified.VerifiedJudge`)."""
    spec = settings.verifier
    nli = isinstance(spec, str) and spec.startswith("nli:")
    if not nli:
        given = [
            option
            for option, value in (
                (param("verifier_label"), settings.verifier_label),
                (param("verifier_threshold"), settings.verifier_threshold),
                (param("device"), settings.device),
                (param("allow_download"), settings.allow_download or None),
            )
            if value is not None
        ]
        if given:
            raise ConfigError(
                f"{', '.join(given)} set the nli: verifier, and the verifier is {spec!r}. "
                f"Add {param('verifier')} nli:PATH_OR_NAME, or drop them."
            )
    if spec == "judge":
        return judge
    from ragmeter.judges.verified import VerifiedJudge

    if spec == "offline":
        from ragmeter.judges.offline.judge import OfflineJudge

        if isinstance(judge, OfflineJudge):
            return judge
        return VerifiedJudge(judge, OfflineJudge(settings, cache=_cache(settings)))
    if nli:
        from ragmeter.judges.hf_entailment import make_nli_verifier

        return VerifiedJudge(judge, make_nli_verifier(spec.removeprefix("nli:"), settings))
    if not isinstance(spec, str) and isinstance(spec, Verifier):
        return VerifiedJudge(judge, spec)
    shown = spec if isinstance(spec, str) else type(spec).__name__
    hint = did_you_mean(spec, ("judge", "offline", "nli:")) if isinstance(spec, str) else ""
    raise ConfigError(
        f"Unknown verifier {shown!r}.{hint} Use 'judge' (the judge's own verdicts, the "
        "default), 'offline', 'nli:PATH_OR_NAME' (a local Hugging Face classifier such as "
        "MiniCheck or an NLI cross-encoder), or an object with name, async verify() and "
        "describe()."
    )


def _judge(spec: Any, settings: Settings, usage: Usage) -> Judge:
    """The judge of ``settings.judge`` (see :func:`make_judge`)."""
    if not isinstance(spec, str):
        if not isinstance(spec, Judge):
            raise ConfigError(
                "The judge must be 'offline', 'openai:MODEL' or an object with name, "
                f"async analyze(), async verify() and describe(). Got {type(spec).__name__}."
            )
        return spec
    if spec == "offline":
        from ragmeter.judges.offline.judge import OfflineJudge

        return OfflineJudge(settings, cache=_cache(settings))
    kind, sep, model = spec.partition(":")
    if kind == "openai" and sep and model:
        from ragmeter.judges.llm.openai_judge import OpenAIJudge

        cache = _cache(settings)
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
            max_no_reply=settings.max_no_reply,
        )
        return judge
    raise ConfigError(
        f"Unknown judge {spec!r}. Use 'offline', 'openai:MODEL' (e.g. openai:gpt-4o-mini), "
        "or pass a Judge object."
    )


def _cache(settings: Settings) -> JudgeCache | None:
    """The run's judge cache (``settings.cache_path``), or None with ``use_cache=False``."""
    from ragmeter.cache import JudgeCache

    return JudgeCache(settings.cache_path) if settings.use_cache else None
