"""``Settings``: the options of one run, checked once where they are made.

The bottom layer of the package (beside ``types`` and ``errors``): judges, models, metrics,
the runner and the CLI all read the same frozen value, so a bad value is refused before any
work with one message, wherever it came from (keyword, CLI option, ``dataclasses.replace``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from ragmeter.config.criteria import Criterion, as_criteria
from ragmeter.errors import ConfigError, param
from ragmeter.types import Judge, Verifier

__all__ = ["DEFAULT_DEADLINE", "Settings"]


def _setting(name: str) -> str:
    """How an error names the setting ``name``: what the front end calling calls it (the
    CLI's ``--max-no-reply``, see :func:`ragmeter.errors.param_names`), else "The
    'max_no_reply' setting"."""
    return param(name, f"The {name!r} setting")


#: A run's deadline unless told otherwise: six hours (CI services end jobs about then).
DEFAULT_DEADLINE = 6 * 3600.0
#: Most repeats of the judge per row: past a few dozen the noise it measures hardly moves,
#: while the calls, the cache and a dry run's plan grow with every one.
MAX_REPEATS = 100


@dataclass(frozen=True, slots=True)
class Settings:
    """Run options that families read. All keyword-only at the API surface."""

    #: "offline" (default), "openai:MODEL", or a Judge object.
    judge: str | Judge = "offline"
    #: Who decides "premise entails claim" for the claim metrics: "judge" (default: the
    #: judge's own verify, so the offline verifier with the offline judge), "offline" (the
    #: offline verifier, whichever judge extracts the claims), "nli:PATH_OR_NAME" (a local
    #: Hugging Face sequence classifier), or a Verifier object.
    verifier: str | Verifier = "judge"
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
    #: Context relevance LM: "offline" (the packaged GGUF: Gemma 3 270M, else SmolLM2-135M,
    #: on onnxruntime), a .gguf path, or a local path / HF cache name (torch).
    relevance_model: str = "offline"
    #: Context relevance numerics: "auto" (int8 for a GGUF model on onnxruntime, the offline
    #: default; on torch bfloat16 on CPUs with native bfloat16, else float32;
    #: ``RAGMETER_RELEVANCE_DTYPE`` overrides), "float32" (Unitxt's), "bfloat16" (torch) or
    #: "int8" (onnxruntime: every weight matrix in int8; agreement in docs/speed.md).
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
    #: Requests in a row that get no reply at all (timeouts, dropped connections; across rows)
    #: after which the judge's or the embedder's client stops the run (0: never).
    max_no_reply: int = 10
    price_in: float | None = None
    price_out: float | None = None
    batch_size: int = 256
    #: Cores the local models and the offline judge use (onnxruntime's threads, the judge's
    #: worker processes from 2 on, for 64 or more rows at once); None: every core
    #: (``os.cpu_count()``). The Ray engine's number of workers is its own option.
    workers: int | None = None
    #: Seconds without any reply from the judge's (or a model's) endpoint, requests pending,
    #: before a warning on stderr says what is pending (0 or None: never).
    stall_warning: float | None = 30.0
    #: Seconds the run may take in all; then it stops, keeping the rows scored (a run with
    #: ``resume=True`` scores the rest). 0 or None: no deadline.
    deadline: float | None = DEFAULT_DEADLINE
    #: The user's criteria, each a metric judged by the LLM judge (all of a row's in one
    #: call): a TOML path, a Criterion, or a list of them (:mod:`ragmeter.config.criteria`).
    criteria: tuple[Criterion, ...] = ()
    #: How many times the judge scores each row: each repeat's replies are
    #: cached apart, a row's score is the mean of its repeats, and the run record's
    #: ``judge_noise`` says how much they differ (:mod:`ragmeter.runner.repeats`). For an LLM
    #: or Python judge; the offline judge is deterministic and refuses more than one. At most
    #: :data:`MAX_REPEATS`.
    repeats: int = 1

    def __post_init__(self) -> None:
        """Refuse values no run can use, once, where the settings are made."""
        object.__setattr__(self, "criteria", as_criteria(self.criteria))
        if self.max_concurrency < 1:
            raise ConfigError(
                f"{_setting('max_concurrency')} must be >= 1. Got {self.max_concurrency}."
            )
        if self.batch_size < 1:
            raise ConfigError(f"{_setting('batch_size')} must be >= 1. Got {self.batch_size}.")
        if self.workers is not None and (
            isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1
        ):
            raise ConfigError(
                f"{_setting('workers')} must be an integer >= 1 (cores to use), or None for "
                f"every core. Got {self.workers!r}."
            )
        if not self.timeout > 0 or math.isinf(self.timeout):
            raise ConfigError(
                f"{_setting('timeout')} must be a number of seconds > 0. Got {self.timeout!r}."
            )
        if self.max_retries < 0:
            raise ConfigError(f"{_setting('max_retries')} must be >= 0. Got {self.max_retries}.")
        for name in ("max_reply_bytes", "max_claims"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{_setting(name)} must be >= 1. Got {getattr(self, name)}.")
        if isinstance(self.max_no_reply, bool) or not (
            isinstance(self.max_no_reply, int) and self.max_no_reply >= 0
        ):
            raise ConfigError(
                f"{_setting('max_no_reply')} must be an integer >= 0 (0: never stop). "
                f"Got {self.max_no_reply!r}."
            )
        for name in ("stall_warning", "deadline"):
            seconds = getattr(self, name)
            if seconds is not None and (
                isinstance(seconds, bool)
                or not isinstance(seconds, int | float)
                or not (math.isfinite(seconds) and seconds >= 0)
            ):
                raise ConfigError(
                    f"{_setting(name)} must be a finite number of seconds >= 0 (0: none). "
                    f"Got {seconds!r}."
                )
        for name in ("price_in", "price_out"):
            price = getattr(self, name)
            if price is not None and not (math.isfinite(price) and price >= 0):
                raise ConfigError(
                    f"{_setting(name)} must be a finite number >= 0 (a price per 1M "
                    f"tokens), or None for no cost. Got {price!r}."
                )
        if isinstance(self.repeats, bool) or not (
            isinstance(self.repeats, int) and 1 <= self.repeats <= MAX_REPEATS
        ):
            raise ConfigError(
                f"{_setting('repeats')} must be an integer from 1 to {MAX_REPEATS} (each repeat "
                f"asks the judge again for every row). Got {self.repeats!r}."
            )
        if (
            self.repeats > 1
            and isinstance(self.judge, str)
            and self.judge.split(":", 1)[0] == "offline"
        ):
            raise ConfigError(
                f"{_setting('repeats')} is {self.repeats}, but the offline judge is "
                "deterministic: it gives a row the same claims and verdicts every time, so "
                "repeats would measure no noise. Repeat an LLM judge (an 'openai:MODEL' judge), "
                "or leave repeats at 1."
            )
        for name in ("ks", "relevance_ks"):
            for k in getattr(self, name):
                if not isinstance(k, int) or k < 1:
                    raise ConfigError(f"{_setting(name)} must hold integers >= 1. Got {k!r}.")

    @property
    def cores(self) -> int:
        """``workers``, or every core of this machine when it is None."""
        return self.workers if self.workers is not None else max(1, os.cpu_count() or 1)
