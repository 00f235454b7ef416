"""Answer reward: a reward model's sigmoid score of an answer to a question.

As Unitxt's ``answer_reward``: a transformers text-classification model reads the pair
(question, answer) — the question as the first text, the answer as the second — and the
score is ``sigmoid`` of its single logit, a number in (0, 1). The default model is
``OpenAssistant/reward-model-deberta-v3-large-v2``; it cannot be installed through pip, so
it is read from a local folder or the local Hugging Face cache. When it is absent the
error says how to supply it: there is no fallback score.

Pairs longer than the model's maximum length are truncated (longest text first), pairs are
sorted by length and run in padded batches under ``torch.inference_mode``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError, ModelUnavailableError, param
from ragmeter.models._runtime import (
    cached_model,
    enable_offline_hub,
    encodable,
    in_hf_cache,
    require_torch_stack,
    torch_setup,
)

__all__ = ["DEFAULT_REWARD_MODEL", "AnswerReward", "load_answer_reward", "resolve_reward_model"]

#: Unitxt's reward model.
DEFAULT_REWARD_MODEL = "OpenAssistant/reward-model-deberta-v3-large-v2"


def _how() -> str:
    """How to supply the reward model, naming the setting as the caller does."""
    return (
        "It cannot be downloaded here. Copy the model folder (config.json, weights, tokenizer "
        f"files) to this machine and pass its path as {param('reward_model')}, or place it in "
        "the local Hugging Face cache."
    )


def resolve_reward_model(spec: str | None = None) -> str:
    """A loadable location for the reward model, found without loading it.

    Parameters
    ----------
    spec : str, optional
        A local folder or a model name in the local HF cache; default
        :data:`DEFAULT_REWARD_MODEL`.

    Raises
    ------
    ModelUnavailableError
        Neither a folder nor cached, or torch / transformers are missing.
    """
    name = (spec or DEFAULT_REWARD_MODEL).strip()
    if not name:
        raise ConfigError(f"The reward model is empty. Pass its path as {param('reward_model')}.")
    try:
        require_torch_stack("answer_reward")
    except ModelUnavailableError as exc:
        if spec:
            raise
        # Installing the extra is not enough: pip does not install the reward model.
        raise ModelUnavailableError(
            f"{exc}, and the reward model itself, its path given as {param('reward_model')} (a "
            f"local copy of {DEFAULT_REWARD_MODEL})."
        ) from None
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(
                f"The reward model folder {name!r} has no config.json. {_how()}"
            )
        return str(path)
    if in_hf_cache(name):
        return name
    raise ModelUnavailableError(
        f"The reward model {name!r} is neither a local folder nor in the local Hugging Face "
        f"cache. {_how()}"
    )


@dataclass(frozen=True, slots=True)
class _Loaded:
    model: Any
    tokenizer: Any
    max_length: int


def _load(location: str) -> _Loaded:
    enable_offline_hub()
    torch_setup()
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(location, local_files_only=True)
        model = AutoModelForSequenceClassification.from_pretrained(
            location, local_files_only=True, dtype="float32"
        )
    except (OSError, ValueError) as error:
        raise ModelUnavailableError(
            f"Cannot load the reward model from {location}: {error}. {_how()}"
        ) from error
    if model.config.num_labels != 1:
        raise ModelUnavailableError(
            f"The reward model at {location} has {model.config.num_labels} labels; a reward "
            "model has a single logit (num_labels=1)."
        )
    model.eval()
    limits = [
        value
        for value in (
            getattr(tokenizer, "model_max_length", None),
            getattr(model.config, "max_position_embeddings", None),
        )
        if isinstance(value, int) and 0 < value < 1_000_000
    ]
    return _Loaded(model, tokenizer, min(limits) if limits else 512)


class AnswerReward:
    """sigmoid(reward logit) of (question, answer) pairs; the model loads on first use."""

    def __init__(self, location: str, *, batch_size: int = 8) -> None:
        if batch_size < 1:
            raise ConfigError(f"The reward batch_size must be >= 1. Got {batch_size}.")
        self.location = location
        self.name = location
        self.batch_size = batch_size
        self._loaded: _Loaded | None = None

    @property
    def loaded(self) -> _Loaded:
        if self._loaded is None:
            self._loaded = cached_model("reward", self.location, lambda: _load(self.location))
        return self._loaded

    def score(self, questions: Sequence[str], answers: Sequence[str]) -> list[float]:
        """One reward in (0, 1) per (question, answer) pair, in order."""
        if len(questions) != len(answers):
            raise ValueError(
                f"score() needs one answer per question. Got {len(questions)} questions and "
                f"{len(answers)} answers."
            )
        if not questions:
            return []
        import torch

        loaded = self.loaded
        questions, answers = encodable(questions), encodable(answers)
        order = sorted(range(len(questions)), key=lambda i: len(questions[i]) + len(answers[i]))
        scores = [0.0] * len(order)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                encoded = loaded.tokenizer(
                    [questions[i] for i in chunk],
                    [answers[i] for i in chunk],
                    padding=True,
                    truncation=True,
                    max_length=loaded.max_length,
                    return_tensors="pt",
                )
                logits = loaded.model(**encoded).logits[:, 0]
                for i, value in zip(chunk, torch.sigmoid(logits.float()).tolist(), strict=True):
                    scores[i] = float(value)
        return scores


def load_answer_reward(spec: str | None = None, *, batch_size: int = 8) -> AnswerReward:
    """The reward scorer for ``spec`` (see :func:`resolve_reward_model`)."""
    return AnswerReward(resolve_reward_model(spec), batch_size=batch_size)
