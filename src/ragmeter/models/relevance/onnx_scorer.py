"""Question likelihood on onnxruntime, from a GGUF converted to ONNX: no torch.

Same score as :class:`ragmeter.models.relevance.torch_scorer.QuestionLikelihood` for a causal LM
(see that module for Unitxt's semantics); the pairs' token ids are built by
:class:`ragmeter.models.relevance.runtime.QuestionScorer`, as for torch.

The model is the graph of :mod:`ragmeter.models.relevance.gguf.onnx_graph` (float32), converted
once by :mod:`ragmeter.models.relevance.gguf.convert`. The prompt's leading tokens that every
context shares (chat header and instruction) run once per scorer; their keys and values are
then fed to every pair, as in the torch path. Pairs run several per onnxruntime call
(``batch_tokens`` padded tokens at most), sorted by length so that little is padding; padding
sits after a pair's tokens and attention is causal, so a pair's score is the one it gets alone
(to float32 rounding, far below the 6 decimals results keep; tested). Only the question's
positions go through the output layer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import ConfigError, ModelUnavailableError
from ragmeter.models._runtime import cached_model, default_threads
from ragmeter.models.relevance.prompt import prefix_offset, shared_prefix
from ragmeter.models.relevance.runtime import PromptFormat, PromptTokens, QuestionScorer

__all__ = ["BATCH_TOKENS", "OnnxQuestionLikelihood"]

#: Padded tokens per onnxruntime call by default: measured by bench/context_relevance_onnx.py.
BATCH_TOKENS = 1024
#: Question tokens per call at most: each is a row of the output layer's logits over the
#: whole vocabulary (1 MB each for Gemma 3's 262,144 words, twice with the log-softmax), so
#: they bound the call's memory.
BATCH_TARGETS = 64


@dataclass(frozen=True, slots=True)
class _Loaded:
    session: Any
    tokenizer: Any
    prompt_format: Literal["chat", "plain"]
    end_id: int
    #: Layers, kv heads, head dim of ``past``.
    past_shape: tuple[int, int, int]
    about: dict[str, Any]


def _load(folder: Path, threads: int) -> _Loaded:
    import onnxruntime as ort

    from ragmeter.models.relevance.gguf.tokenizer import GGUFTokenizer

    about = json.loads((folder / "ragmeter-onnx.json").read_text())
    tokenizer = GGUFTokenizer.load(folder)
    if tokenizer.eos_id is None:
        raise ModelUnavailableError(
            f"The relevance model {about['name']!r} has no end-of-sequence token; the score "
            "includes the end token, so a causal model needs one."
        )
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # Prepacked copies of the matrices would double the weights in memory (2.1 GB resident
    # instead of 1.5 GB for Gemma 3 270M) for no measured speed: bench/context_relevance_onnx.py.
    options.add_session_config_entry("session.disable_prepacking", "1")
    # Waiting threads do not spin: the run's other work (the offline judge's Python, spaCy)
    # needs the cores between the model's calls.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # Calls differ in shape (one pair per call in int8), so recorded memory patterns are not
    # reused; without them the int8 scorer's peak is about 50 MB lower for the same speed
    # (bench/context_relevance_onnx.py --memory-stages).
    options.enable_mem_pattern = False
    try:
        session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime's own errors (Fail, InvalidProtobuf, ...)
        raise ModelUnavailableError(
            f"The relevance model {about.get('name', folder.name)!r} could not be loaded from "
            f"{folder}: {type(exc).__name__}: {str(exc)[:300]}. Its converted files may be "
            f"damaged (a disk full or an interrupted copy): delete {folder} (in ragmeter's "
            "model cache, RAGMETER_CACHE_DIR) and run again to convert it again."
        ) from None
    config = about["config"]
    shape = (int(config["layers"]), int(config["kv_heads"]), int(config["head_dim"]))
    fmt: Literal["chat", "plain"] = "chat" if tokenizer.meta.chat_template else "plain"
    return _Loaded(session, tokenizer, fmt, int(tokenizer.eos_id), shape, about)


@dataclass(slots=True)
class _Prefix:
    ids: tuple[int, ...]
    past: Any

    def offset(self, prompt: Sequence[int]) -> int:
        return prefix_offset(self.ids, prompt)


class OnnxQuestionLikelihood(QuestionScorer):
    """Scores ``P(question | prompt(context))`` with a GGUF model converted to ONNX.

    Parameters
    ----------
    name : str
        The model's name, recorded with the scores.
    convert : callable
        Returns the converted folder (converting the GGUF the first time); called on first use.
    max_context_tokens : int
        Contexts are cut to this many tokens.
    """

    def __init__(
        self,
        name: str,
        convert: Any,
        *,
        max_context_tokens: int = 512,
        batch_tokens: int = BATCH_TOKENS,
    ) -> None:
        if max_context_tokens < 1:
            raise ConfigError(f"max_context_tokens must be >= 1. Got {max_context_tokens}.")
        if batch_tokens < 1:
            raise ConfigError(f"batch_tokens must be >= 1. Got {batch_tokens}.")
        self.name = name
        self.max_context_tokens = max_context_tokens
        #: Padded tokens per onnxruntime call (a longer pair runs alone); 1: one pair a call.
        self.batch_tokens = batch_tokens
        self._convert = convert
        self._loaded: _Loaded | None = None
        self._prefix: _Prefix | None = None

    @property
    def loaded(self) -> _Loaded:
        if self._loaded is None:
            threads = default_threads()
            self._loaded = cached_model(
                "question-likelihood-onnx",
                f"{self.name}|{threads}",
                lambda: _load(Path(self._convert()), threads),
            )
        return self._loaded

    @property
    def dtype(self) -> str:
        """``"float32"``, or ``"int8"`` for a model converted with int8 matrix products."""
        return str(self.loaded.about.get("matmul", "float32"))

    @property
    def tokens(self) -> PromptTokens:
        return self.loaded.tokenizer

    @property
    def prompt_format(self) -> PromptFormat:
        return self.loaded.prompt_format

    @property
    def end_id(self) -> int:
        return self.loaded.end_id

    def numerics(self) -> dict[str, Any]:
        """How the scores were computed, for each result's details."""
        method = "padded" if self.batch_tokens > 1 else "single"
        return {"dtype": self.dtype, "method": method, "runtime": "onnxruntime"}

    # -- scoring -------------------------------------------------------------------------

    def _score_pairs(self, pairs: list[tuple[list[int], list[int]]]) -> list[float]:
        prefix = self._shared_prefix()
        runs = []
        for source, target in pairs:
            offset = prefix.offset(source)
            # The model reads the prompt after the prefix and the question but its last token;
            # the question's tokens are read from ``first`` on.
            runs.append((source[offset:] + target[:-1], len(source) - offset - 1, target, offset))
        scores = [0.0] * len(runs)
        for shared in (True, False):
            past = prefix.past if shared else self._empty_past()
            todo = [i for i, run in enumerate(runs) if bool(run[3]) == shared]
            lengths = [len(runs[i][0]) for i in todo]
            targets = [len(runs[i][2]) for i in todo]
            for batch in _batches(todo, lengths, self.batch_tokens, targets, BATCH_TARGETS):
                chosen = [runs[i] for i in batch]
                for i, value in zip(batch, self._score_batch(chosen, past), strict=True):
                    scores[i] = value
        return scores

    def _score_batch(self, runs: Sequence[tuple[list[int], int, list[int], int]], past: Any) -> Any:
        """Scores of pairs run side by side in one call, each padded to the longest."""
        import numpy as np

        width = max(len(ids) for ids, _, _, _ in runs)
        ids = np.zeros((len(runs), width), dtype=np.int64)
        rows: list[int] = []
        targets: list[int] = []
        for b, (tokens, first, target, _) in enumerate(runs):
            ids[b, : len(tokens)] = tokens
            rows.extend(range(b * width + first, b * width + first + len(target)))
            targets.extend(target)
        logprobs, _ = self._run(ids, past, rows, targets)
        out = []
        start = 0
        for _, _, target, _ in runs:
            part = logprobs[start : start + len(target)]
            out.append(float(np.exp(np.mean(part, dtype=np.float64))))
            start += len(target)
        return out

    def _run(self, ids: Any, past: Any, rows: Sequence[int], targets: Sequence[int]) -> Any:
        import numpy as np

        logprobs, present = self.loaded.session.run(
            None,
            {
                "ids": np.asarray(ids, dtype=np.int64),
                "past": past,
                "rows": np.asarray(rows, dtype=np.int64),
                "targets": np.asarray(targets, dtype=np.int64),
            },
        )
        return logprobs, present

    def _empty_past(self) -> Any:
        import numpy as np

        layers, kv, dim = self.loaded.past_shape
        return np.zeros((layers, 2, kv, 0, dim), dtype=np.float32)

    def _shared_prefix(self) -> _Prefix:
        """The prompt tokens every context shares, from probe prompts (never from the pairs
        of a call, so a pair is split the same way whatever it is scored with)."""
        if self._prefix is None:
            ids = shared_prefix(self.prompt_ids)
            past = self._empty_past()
            if ids:
                _, present = self._run([ids], past, [0], [0])
                past = present[:, :, 0]  # [layers, 2, kv, P, D] of the one row
            self._prefix = _Prefix(tuple(ids), past)
        return self._prefix


def _batches(
    order: Sequence[int],
    lengths: Sequence[int],
    budget: int,
    targets: Sequence[int] | None = None,
    target_budget: int | None = None,
) -> list[list[int]]:
    """``order`` cut into batches, longest first, each at most ``budget`` padded tokens
    (batch size x its longest length) and ``target_budget`` target tokens (a pair over either
    budget runs alone)."""
    ranked = sorted(range(len(order)), key=lambda k: (-lengths[k], k))
    out: list[list[int]] = []
    current: list[int] = []
    width = 0
    scored = 0
    for k in ranked:
        more = targets[k] if targets is not None else 0
        too_many = target_budget is not None and scored + more > target_budget
        if current and (width * (len(current) + 1) > budget or too_many):
            out.append(current)
            current = []
        if not current:
            width = lengths[k]
            scored = 0
        current.append(order[k])
        scored += more
    if current:
        out.append(current)
    return out
