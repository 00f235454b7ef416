"""``Settings``: the options of one run, described once and checked once where they are made.

The bottom layer of the package (beside ``types`` and ``errors``): judges, models, metrics,
the runner and the CLI all read the same frozen value, so a bad value is refused before any
work with one message, wherever it came from (keyword, CLI option, ``dataclasses.replace``).

Each field of :class:`Settings` is one entry of the table of settings: its name, type and
default, and (:func:`setting`, read back with :func:`setting_info`) its help text, its check,
its command-line flag and the metrics whose scores it changes. Everything else is made from
that table: ``Settings``' checks, the ``ragmeter evaluate`` options and the flags its errors
name (:mod:`ragmeter.cli.options`), the settings a resumed run must keep
(:func:`scoring_settings`), and the checks of a client built without ``Settings``
(:func:`check_options`, the OpenAI judge's and embedder's). A new setting is one field here
and its use.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.config.criteria import Criterion, as_criteria
from ragmeter.errors import ConfigError, param
from ragmeter.types import Judge, Verifier

if TYPE_CHECKING:
    from ragmeter.types import MetricSpec

__all__ = [
    "DEFAULT_DEADLINE",
    "MAX_REPEATS",
    "SettingInfo",
    "Settings",
    "check_options",
    "scoring_settings",
    "setting_flags",
    "setting_info",
    "settings_table",
]

#: A run's deadline unless told otherwise: six hours (CI services end jobs about then).
DEFAULT_DEADLINE = 6 * 3600.0
#: Most repeats of the judge per row: past a few dozen the noise it measures hardly moves,
#: while the calls, the cache and a dry run's plan grow with every one.
MAX_REPEATS = 100

#: An option's default that is its setting's (:attr:`SettingInfo.option_default`).
AS_FIELD: Any = object()

#: A setting's check: what is wrong with a value, worded after its name ("must be >= 1. Got
#: 0."), or None when the value is fine.
Check = Callable[[Any], "str | None"]


@dataclass(frozen=True, slots=True)
class SettingInfo:
    """What the table says of a setting besides its name, type and default."""

    #: What it does, as ``ragmeter evaluate --help`` says it.
    help: str
    #: Its ``ragmeter evaluate`` option, which errors name on the command line; None: not
    #: on the command line (the setting keeps its Python name there).
    flag: str | None = None
    #: What the option's value is, in --help (``N``, ``SECONDS``).
    metavar: str | None = None
    check: Check | None = None
    #: The metrics whose scores it changes (a resumed run must keep it for them); None: it
    #: changes no score (concurrency, timeouts, the cache, prices).
    scores: Callable[[MetricSpec], bool] | None = None
    #: The option's type where the field's is wider (a judge object has no command line).
    option_type: Any = None
    #: The option's default where it is not the field's, and the setting of an option's value
    #: where it is not the value (``--no-cache`` gives ``use_cache=False``).
    option_default: Any = AS_FIELD
    from_option: Callable[[Any], Any] | None = None


def setting(default: Any, help_text: str, **info: Any) -> Any:
    """A field of :class:`Settings` with its entry in the table (:class:`SettingInfo`)."""
    return field(default=default, metadata={"setting": SettingInfo(help_text, **info)})


# -- checks: each says what is wrong after the setting's name, or None ------------------------


def _whole(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _at_least(low: int) -> Check:
    """A count of at least ``low``."""

    def check(value: Any) -> str | None:
        return None if _number(value) and value >= low else f"must be >= {low}. Got {value!r}."

    return check


def _workers(value: Any) -> str | None:
    if value is None or (_whole(value) and value >= 1):
        return None
    return f"must be an integer >= 1 (cores to use), or None for every core. Got {value!r}."


def _timeout(value: Any) -> str | None:
    if _number(value) and value > 0 and math.isfinite(value):
        return None
    return f"must be a number of seconds > 0. Got {value!r}."


def _no_reply(value: Any) -> str | None:
    if _whole(value) and value >= 0:
        return None
    return f"must be an integer >= 0 (0: never stop). Got {value!r}."


def _seconds_or_none(value: Any) -> str | None:
    if value is None or (_number(value) and math.isfinite(value) and value >= 0):
        return None
    return f"must be a finite number of seconds >= 0 (0: none). Got {value!r}."


def _price(value: Any) -> str | None:
    if value is None or (_number(value) and math.isfinite(value) and value >= 0):
        return None
    return (
        f"must be a finite number >= 0 (a price per 1M tokens), or None for no cost. Got {value!r}."
    )


def _repeats(value: Any) -> str | None:
    if _whole(value) and 1 <= value <= MAX_REPEATS:
        return None
    return (
        f"must be an integer from 1 to {MAX_REPEATS} (each repeat asks the judge again for "
        f"every row). Got {value!r}."
    )


def _ks(value: Any) -> str | None:
    bad = [k for k in value if not _whole(k) or k < 1]
    return f"must hold integers >= 1. Got {bad[0]!r}." if bad else None


# -- which metrics a setting's value changes ---------------------------------------------------


def _judged(spec: MetricSpec) -> bool:
    return spec.needs_judge


def _of_family(family: str) -> Callable[[MetricSpec], bool]:
    def changes(spec: MetricSpec) -> bool:
        return spec.family == family

    return changes


def _every_metric(spec: MetricSpec) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Settings:
    """Run options that families read. All keyword-only at the API surface.

    The fields are the table of settings (see the module's docstring)."""

    #: "offline" (default), "openai:MODEL", or a Judge object.
    judge: str | Judge = setting(  # noqa: RUF009 (a field and its entry in the table)
        "offline",
        "'offline' (no key needed) or 'openai:MODEL'.",
        flag="--judge",
        metavar="JUDGE",
        scores=_judged,
        option_type=str,
    )
    #: Who decides "premise entails claim" for the claim metrics: "judge" (default: the
    #: judge's own verify, so the offline verifier with the offline judge), "offline" (the
    #: offline verifier, whichever judge extracts the claims), "nli:PATH_OR_NAME" (a local
    #: Hugging Face sequence classifier), or a Verifier object.
    verifier: str | Verifier = setting(  # noqa: RUF009 (a field and its entry in the table)
        "judge",
        "Who decides 'premise entails claim': 'judge' (the judge's own; with the offline "
        "judge, the offline verifier), 'offline', or 'nli:PATH_OR_NAME' (a local Hugging Face "
        "classifier: MiniCheck, HHEM-2.1-open, an NLI cross-encoder).",
        flag="--verifier",
        scores=_of_family("claims"),
        option_type=str,
    )
    #: The nli: verifier's support label, a name or index (default: from its config.json).
    verifier_label: str | None = setting(
        None,
        "nli: the label (name or index) that means support (default: its config).",
        flag="--verifier-label",
        scores=_of_family("claims"),
    )
    #: The nli: verifier's threshold on the support probability (default 0.5).
    verifier_threshold: float | None = setting(
        None,
        "nli: support probability a verdict needs (default 0.5).",
        flag="--verifier-threshold",
        scores=_of_family("claims"),
    )
    #: Where the nli: verifier runs: "cpu", "cuda", "cuda:N" or "auto" (default).
    device: str | None = setting(
        None, "nli: where the model runs: cpu, cuda, cuda:N or auto (default).", flag="--device"
    )
    #: Let the nli: verifier fetch a model id missing from the local Hugging Face cache.
    allow_download: bool = setting(
        False,
        "nli: fetch a model id missing from the local Hugging Face cache.",
        flag="--allow-download",
        metavar="",
    )
    base_url: str | None = setting(
        None,
        "OpenAI-compatible endpoint (default $OPENAI_BASE_URL).",
        flag="--base-url",
        metavar="URL",
    )
    api_key: str | None = setting(None, "The endpoint's key (default $OPENAI_API_KEY).")
    #: Who answers behind an "openai:MODEL" judge, in its cache keys (default: the model name).
    #: The endpoint's address is not in them; set this when two servers serve different
    #: weights under one model name.
    judge_id: str | None = setting(
        None,
        "Who answers behind --judge openai:MODEL, for the cache (default: the model name); "
        "set it when servers serve different weights under one name.",
        flag="--judge-id",
        metavar="ID",
        scores=_judged,
    )
    #: Embeddings: "offline" (MiniLM int8 ONNX), a sentence-transformers name or path,
    #: "openai:MODEL", or an Embedder object.
    embedder: Any = setting(  # noqa: RUF009 (a field and its entry in the table)
        "offline",
        "'offline', a sentence-transformers name/path, or 'openai:MODEL'.",
        flag="--embedder",
        metavar="EMBEDDER",
        scores=_of_family("response_relevancy"),
        option_type=str,
    )
    #: Context relevance LM: "offline" (the packaged GGUF: Gemma 3 270M, else SmolLM2-135M,
    #: on onnxruntime), a .gguf path, or a local path / HF cache name (torch).
    relevance_model: str = setting(
        "offline",
        "Context relevance LM: 'offline' or a local model path.",
        flag="--relevance-model",
        metavar="MODEL",
        scores=_of_family("context_relevance"),
    )
    #: Context relevance numerics: "auto" (int8 for a GGUF model on onnxruntime, the offline
    #: default; on torch bfloat16 on CPUs with native bfloat16, else float32;
    #: ``RAGMETER_RELEVANCE_DTYPE`` overrides), "float32" (Unitxt's), "bfloat16" (torch) or
    #: "int8" (onnxruntime: every weight matrix in int8; agreement in docs/speed.md).
    relevance_dtype: str = setting(
        "auto",
        "Context relevance numerics: 'auto' (int8 for a GGUF model on onnxruntime, the "
        "default: faster and smaller, its agreement with float32 in docs/speed.md; for a "
        "transformers model on torch, bfloat16 on CPUs with native bfloat16, else float32), "
        "'float32' (Unitxt's), 'bfloat16' (torch only) or 'int8' (onnxruntime only).",
        flag="--relevance-dtype",
        metavar="DTYPE",
        scores=_of_family("context_relevance"),
    )
    reward_model: str | None = setting(
        None,
        "Reward model path for answer_reward.",
        flag="--reward-model",
        metavar="PATH",
        scores=_of_family("answer_reward"),
    )
    ks: tuple[int, ...] = setting((1, 3, 5, 10), "The k of the @k retrieval metrics.", check=_ks)
    relevance_ks: tuple[int, ...] = setting(
        (1, 3, 5), "The k of context relevance's @k metrics.", check=_ks
    )
    response_relevancy_n: int = setting(
        3,
        "Questions response relevancy generates per answer.",
        scores=_of_family("response_relevancy"),
    )
    max_concurrency: int = setting(
        16,
        "Judge calls in flight at once.",
        flag="--max-concurrency",
        metavar="N",
        check=_at_least(1),
    )
    cache_path: str | None = setting(
        None,
        "Judge cache file (SQLite).",
        flag="--cache",
        metavar="FILE",
        option_type=Path | None,
        from_option=lambda path: str(path) if path else None,
    )
    use_cache: bool = setting(
        True,
        "Do not read or write the cache.",
        flag="--no-cache",
        metavar="",
        option_default=False,
        from_option=lambda no_cache: not no_cache,
    )
    timeout: float = setting(
        60.0,
        "Seconds a judge call may take in all (each try).",
        flag="--timeout",
        metavar="SECONDS",
        check=_timeout,
    )
    max_retries: int = setting(
        5,
        "Retries of a judge call that timed out or got 429 / 5xx.",
        flag="--max-retries",
        metavar="N",
        check=_at_least(0),
    )
    #: Caps on what an LLM judge may send back: bytes of one reply, and claims of one answer
    #: (or one reference answer). A row past a cap fails with the reason; nothing is cached.
    max_reply_bytes: int = setting(
        1_000_000,
        "Largest judge reply accepted; a row past it fails.",
        flag="--max-reply-bytes",
        metavar="BYTES",
        check=_at_least(1),
    )
    max_claims: int = setting(
        1000,
        "Most claims a judge may find in one answer; a row past it fails.",
        flag="--max-claims",
        metavar="N",
        check=_at_least(1),
    )
    #: Requests in a row that get no reply at all (timeouts, dropped connections; across rows)
    #: after which the judge's or the embedder's client stops the run (0: never).
    max_no_reply: int = setting(
        10,
        "Stop the run after N requests in a row got no reply at all (timeouts, dropped "
        "connections), from the judge or the embedder; 0: never.",
        flag="--max-no-reply",
        metavar="N",
        check=_no_reply,
    )
    price_in: float | None = setting(
        None, "Price per 1M prompt tokens.", flag="--price-in", metavar="PRICE", check=_price
    )
    price_out: float | None = setting(
        None, "Price per 1M completion tokens.", flag="--price-out", metavar="PRICE", check=_price
    )
    batch_size: int = setting(
        256, "Rows scored per batch.", flag="--batch-size", metavar="N", check=_at_least(1)
    )
    #: Cores the local models and the offline judge use (onnxruntime's threads, the judge's
    #: worker processes from 2 on, for 64 or more rows at once); None: every core
    #: (``os.cpu_count()``). The Ray engine's number of workers is its own option.
    workers: int | None = setting(
        None,
        "Cores to use (default: every core): the local models' threads and the offline "
        "judge's; with --engine ray, Ray scoring workers (they share --max-concurrency).",
        flag="--workers",
        metavar="N",
        check=_workers,
    )
    #: Seconds without any reply from the judge's (or a model's) endpoint, requests pending,
    #: before a warning on stderr says what is pending (0 or None: never).
    stall_warning: float | None = setting(
        30.0,
        "Seconds without a reply from an endpoint before a warning says what is pending.",
        check=_seconds_or_none,
    )
    #: Seconds the run may take in all; then it stops, keeping the rows scored (a run with
    #: ``resume=True`` scores the rest). 0 or None: no deadline.
    deadline: float | None = setting(
        DEFAULT_DEADLINE,
        "Stop the run after this long, keeping the rows scored (--resume scores the rest); "
        "0: no deadline. Default: 6 hours.",
        flag="--deadline",
        metavar="SECONDS",
        check=_seconds_or_none,
        option_type=float,
        from_option=lambda seconds: seconds or None,
    )
    #: The user's criteria, each a metric judged by the LLM judge (all of a row's in one
    #: call): a TOML path, a Criterion, or a list of them (:mod:`ragmeter.config.criteria`).
    #: Any change of their definitions changes the scores.
    criteria: tuple[Criterion, ...] = setting(
        (),
        "Your own criteria: a TOML file with one 'criteria' table per criterion (name, "
        "question, fields, levels), each a metric the LLM judge scores, all of a row's in one "
        "call (docs/criteria.md).",
        flag="--criteria",
        metavar="FILE",
        scores=_every_metric,
        option_type=Path | None,
        option_default=None,
    )
    #: How many times the judge scores each row: each repeat's replies are
    #: cached apart, a row's score is the mean of its repeats, and the run record's
    #: ``judge_noise`` says how much they differ (:mod:`ragmeter.runner.repeats`). For an LLM
    #: or Python judge; the offline judge is deterministic and refuses more than one. At most
    #: :data:`MAX_REPEATS`.
    repeats: int = setting(
        1,
        "Ask an LLM judge N times per row (each repeat cached apart; at most 100): scores are "
        "the mean, and the summary says how much the judge disagrees with itself.",
        flag="--repeats",
        metavar="N",
        check=_repeats,
        scores=_judged,
    )

    def __post_init__(self) -> None:
        """Refuse values no run can use, once, where the settings are made."""
        object.__setattr__(self, "criteria", as_criteria(self.criteria))
        for name, info in _TABLE.items():
            problem = info.check(getattr(self, name)) if info.check is not None else None
            if problem is not None:
                raise ConfigError(f"{_setting(name)} {problem}")
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

    @property
    def cores(self) -> int:
        """``workers``, or every core of this machine when it is None."""
        return self.workers if self.workers is not None else max(1, os.cpu_count() or 1)


#: The table of settings, in the order of the fields.
_TABLE: dict[str, SettingInfo] = {item.name: item.metadata["setting"] for item in fields(Settings)}


def _setting(name: str) -> str:
    """How an error of ``Settings`` names the setting ``name``: what the front end calling
    calls it (the CLI's ``--max-no-reply``, see :func:`ragmeter.errors.param_names`), else
    "The 'max_no_reply' setting"."""
    return param(name, f"The {name!r} setting")


def setting_info(name: str) -> SettingInfo:
    """The table's entry for the setting ``name``."""
    return _TABLE[name]


def settings_table() -> dict[str, SettingInfo]:
    """Every entry of the table of settings, by name, in the order of the fields."""
    return dict(_TABLE)


def setting_flags() -> dict[str, str]:
    """Each setting's ``ragmeter evaluate`` option by name (``{"timeout": "--timeout"}``)."""
    return {name: info.flag for name, info in _TABLE.items() if info.flag is not None}


def scoring_settings() -> dict[str, Callable[[MetricSpec], bool]]:
    """The settings that change scores, each with the metrics whose scores it changes."""
    return {name: info.scores for name, info in _TABLE.items() if info.scores is not None}


def check_options(**values: Any) -> None:
    """Check options given to a client made without ``Settings`` (the OpenAI judge, the
    embedder, their retries) as ``Settings`` checks them: a bad value raises
    :class:`ConfigError` naming the option as the caller does (``timeout must be ...``)."""
    for name, value in values.items():
        check = _TABLE[name].check
        problem = check(value) if check is not None else None
        if problem is not None:
            raise ConfigError(f"{param(name)} {problem}")
