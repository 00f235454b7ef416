"""ragmeter's own claim verifier: a three-way MiniLM cross-encoder, int8 ONNX, no torch.

The model ships inside the package (``ragmeter/models/data/claim-verifier``: ``model.onnx``,
``tokenizer.json``, ``MODEL_CARD.md``); ``training/train_verifier.py`` in the repository
trains and exports it. Given (premise, claim) pairs it returns, per pair, the probabilities
of entailment, neutral and contradiction.

Concurrent callers share onnxruntime calls (their pairs run together, length-sorted).

A premise longer than the model's window (``max_tokens`` with the claim) is cut into
windows of whole sentences that overlap by one sentence; the claim is checked against each
window and the pair takes the window where entailment is most likely (with that window's
contradiction probability), and separately the highest contradiction probability of any
window.

The weights are stored as int8 with a scale per output channel and dequantised when the
session is built, so the arithmetic is float32 and a pair's probabilities do not depend on
the other pairs of its batch (padding is masked; tested). (Dynamic int8 quantisation,
which also quantises activations with a scale taken over the whole batch, made them depend
on the batch-mates and moved them by up to 0.57 from the float model.)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ragmeter.errors import ConfigError, ModelUnavailableError
from ragmeter.models._runtime import cached_model, default_threads, encodable, sha256_of

__all__ = [
    "LABELS",
    "ClaimVerifierModel",
    "PairProbabilities",
    "default_model_dir",
    "model_name",
    "shipped_model_available",
]

#: The label order of the model's output.
LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")

_INSTALL = "Install it with: pip install 'ragmeter[local]'"


def default_model_dir() -> Path:
    """The folder of the shipped model inside the installed package."""
    return Path(str(resources.files("ragmeter.models") / "data" / "claim-verifier"))


def model_name(folder: Path | None = None) -> str:
    """``<folder name>@<first 12 hex digits of model.onnx's sha256>`` (the shipped model's
    when ``folder`` is None), without loading the model."""
    folder = folder if folder is not None else default_model_dir()
    return f"{folder.name}@{sha256_of(folder / 'model.onnx')[:12]}"


def shipped_model_available() -> bool:
    """Whether the shipped model and its runtime (onnxruntime, tokenizers) are installed,
    without loading anything."""
    from importlib.util import find_spec

    if find_spec("onnxruntime") is None or find_spec("tokenizers") is None:
        return False
    return (default_model_dir() / "model.onnx").is_file()


@dataclass(frozen=True, slots=True)
class PairProbabilities:
    """Per pair: entailment and contradiction of the most entailing window, and the highest
    contradiction of any window (each a float array of the pairs' length)."""

    entailment: np.ndarray
    contradiction: np.ndarray
    max_contradiction: np.ndarray


def _split_sentences(text: str) -> list[str]:
    from ragmeter.text import split_sentences

    return split_sentences(text) or ([text] if text.strip() else [])


Row = tuple[list[int], list[int]]


class _RowBatcher:
    """Runs the rows (token ids, type ids) of concurrent callers together.

    One onnxruntime call at a time per session: a caller that finds the session busy
    leaves its rows and waits; the next leader takes every waiting caller's rows, sorts
    them by length and runs them in chunks of ``batch_size``. Bigger, length-sorted
    batches cost less per pair than each caller's few pairs alone, and a row's logits do
    not depend on its batch-mates (padding is masked).
    """

    def __init__(self, session: object) -> None:
        self._session = session
        self._ready = threading.Condition()
        self._waiting: list[_Request] = []
        self._busy = False

    def logits(self, rows: list[Row], batch_size: int) -> np.ndarray:
        request = _Request(rows)
        with self._ready:
            self._waiting.append(request)
            while not request.done and self._busy:
                self._ready.wait()
            if request.done:
                return request.result()
            self._busy = True
            taken, self._waiting = self._waiting, []
        try:
            _run_requests(self._session, taken, batch_size)
        finally:
            with self._ready:
                self._busy = False
                self._ready.notify_all()
        return request.result()


class _Request:
    __slots__ = ("done", "error", "logits", "rows")

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self.logits = np.zeros((len(rows), len(LABELS)))
        self.done = False
        self.error: BaseException | None = None

    def result(self) -> np.ndarray:
        if self.error is not None:
            raise self.error
        return self.logits


def _run_requests(session: object, requests: list[_Request], batch_size: int) -> None:
    """Fill every request's logits (or its error), the rows of all of them run together."""
    owners = [(r, k) for r in requests for k in range(len(r.rows))]
    order = sorted(range(len(owners)), key=lambda i: len(owners[i][0].rows[owners[i][1]][0]))
    try:
        for start in range(0, len(order), batch_size):
            chosen = [owners[i] for i in order[start : start + batch_size]]
            out = _session_logits(session, [r.rows[k] for r, k in chosen])
            for (r, k), row in zip(chosen, out, strict=True):
                r.logits[k] = row
    except BaseException as exc:
        for r in requests:
            r.error = exc
        raise
    finally:
        for r in requests:
            r.done = True


def _session_logits(session: object, rows: list[Row]) -> np.ndarray:
    width = max(len(ids) for ids, _ in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for r, (row_ids, row_types) in enumerate(rows):
        ids[r, : len(row_ids)] = row_ids
        types[r, : len(row_types)] = row_types
        mask[r, : len(row_ids)] = 1
    (logits,) = session.run(  # type: ignore[attr-defined]
        ["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    )
    return np.asarray(logits, dtype=np.float64)


def _load(folder: Path, threads: int) -> tuple[object, object, _RowBatcher]:
    model = folder / "model.onnx"
    tokenizer_file = folder / "tokenizer.json"
    if not model.is_file() or not tokenizer_file.is_file():
        raise ModelUnavailableError(
            f"The claim verifier model is missing from {folder} (model.onnx, tokenizer.json). "
            "Reinstall ragmeter, or train it with training/train_verifier.py."
        )
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelUnavailableError(
            f"The claim verifier needs onnxruntime and tokenizers ({exc}). {_INSTALL}"
        ) from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Threads that wait spin by default: on a few cores they take the CPU from the judge's
    # Python work between model calls (bench/offline_speed.py measures --workers 1 vs 2).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    # One batcher per session (instances share a session through ``cached_model``).
    return session, tokenizer, _RowBatcher(session)


class ClaimVerifierModel:
    """The shipped entailment cross-encoder (or one in ``folder`` with the same layout).

    Parameters
    ----------
    folder : path, optional
        A folder with ``model.onnx`` (inputs ``input_ids``, ``attention_mask``,
        ``token_type_ids``; output ``logits`` in :data:`LABELS` order) and ``tokenizer.json``.
        Default: the model shipped in the package.
    max_tokens : int
        Longest input (premise window + claim + 3 special tokens).
    batch_size : int
        At most this many windows per onnxruntime call.
    threads : int, optional
        onnxruntime intra-op threads; default :func:`~ragmeter.models._runtime.default_threads`.
    """

    def __init__(
        self,
        folder: str | Path | None = None,
        *,
        max_tokens: int = 256,
        batch_size: int = 16,
        threads: int | None = None,
    ) -> None:
        if max_tokens < 32:
            raise ConfigError(f"max_tokens of the claim verifier must be >= 32. Got {max_tokens}.")
        if batch_size < 1:
            raise ConfigError(f"batch_size of the claim verifier must be >= 1. Got {batch_size}.")
        self.folder = Path(folder) if folder is not None else default_model_dir()
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads or default_threads()
        self._session, self._tokenizer, self._batcher = cached_model(
            "claim-verifier",
            f"{self.folder}|{self.threads}",
            lambda: _load(self.folder, self.threads),
        )
        #: Identity recorded with verdicts: the folder's name and the weights' hash prefix.
        self.name = model_name(self.folder)

    # -- windows ------------------------------------------------------------------------

    def _token_count(self, texts: Sequence[str]) -> list[int]:
        encodings = self._tokenizer.encode_batch(encodable(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def windows(self, premise: str, claim_tokens: int) -> list[str]:
        """``premise`` as windows of whole sentences that fit beside a claim of
        ``claim_tokens`` tokens, consecutive windows sharing one sentence."""
        budget = self.max_tokens - claim_tokens - 3
        sentences = _split_sentences(premise)
        if not sentences:
            return [premise]
        sizes = self._token_count(sentences)
        if sum(sizes) <= budget:
            return [premise]
        out: list[str] = []
        start = 0
        while start < len(sentences):
            end, used = start, 0
            while end < len(sentences) and (end == start or used + sizes[end] <= budget):
                used += sizes[end]
                end += 1
            out.append(" ".join(sentences[start:end]))
            if end >= len(sentences):
                break
            start = end - 1 if end - 1 > start else end
        return out

    # -- scoring ------------------------------------------------------------------------

    def window_probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax probabilities (pairs x 3, :data:`LABELS` order) of (premise, claim) pairs
        taken as they are (the premise cut at ``max_tokens`` if too long)."""
        if not pairs:
            return np.zeros((0, len(LABELS)))
        premises = encodable([p for p, _ in pairs])
        claims = encodable([c for _, c in pairs])
        encodings = self._tokenizer.encode_batch(list(zip(premises, claims, strict=True)))
        rows = []
        for e in encodings:
            ids, types = list(e.ids), list(e.type_ids)
            if len(ids) > self.max_tokens:  # drop premise tokens (type 0) beyond the budget
                first_sep = types.index(1) - 1 if 1 in types else len(ids) - 1
                cut = len(ids) - self.max_tokens
                keep = max(1, first_sep - cut)
                ids = ids[:keep] + ids[first_sep:]
                types = types[:keep] + types[first_sep:]
            rows.append((ids, types))
        logits = self._batcher.logits(rows, self.batch_size)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> PairProbabilities:
        """Entailment and contradiction of (premise, claim) pairs, long premises in windows."""
        claims = [c for _, c in pairs]
        claim_tokens = self._token_count(encodable(claims)) if claims else []
        flat: list[tuple[str, str]] = []
        owner: list[int] = []
        for i, ((premise, claim), n) in enumerate(zip(pairs, claim_tokens, strict=True)):
            for window in self.windows(premise, min(n, self.max_tokens // 2)):
                flat.append((window, claim))
                owner.append(i)
        probs = self.window_probabilities(flat)
        entail = np.zeros(len(pairs))
        contra = np.zeros(len(pairs))
        max_contra = np.zeros(len(pairs))
        best = np.full(len(pairs), -1.0)
        for (p_e, _, p_c), i in zip(probs, owner, strict=True):
            if p_e > best[i]:
                best[i] = p_e
                entail[i], contra[i] = p_e, p_c
            max_contra[i] = max(max_contra[i], p_c)
        return PairProbabilities(entail, contra, max_contra)
