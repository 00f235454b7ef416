"""Read a small decoder-only language model from a GGUF file: hyperparameters, weights, vocab.

Only what the ONNX builder (:mod:`ragmeter.models.relevance.gguf.onnx_graph`) and the tokenizer
builder (:mod:`ragmeter.models.relevance.gguf.tokenizer`) need, with the ``gguf`` package's numpy
reader and dequantisation (no torch, no llama.cpp). Two architectures are supported:

- ``llama`` (e.g. SmolLM2): RMSNorm, rotary embeddings, grouped-query attention, SwiGLU.
  llama.cpp stores the query and key projections with the rows of each head interleaved
  for its rotary kernel; :meth:`GGUFDecoder.weight` undoes that, giving Hugging Face's
  layout (rotate-half rotary embeddings).
- ``gemma3`` (e.g. Gemma 3 270M): as Llama, plus a scaled embedding, query/key norms,
  norms after attention and after the MLP, GeGLU, and sliding-window layers with their own
  rotary base. Its norms are stored as ``1 + w`` already.

Weights come back as float32 arrays of shape ``(out_features, in_features)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import ModelUnavailableError

__all__ = ["SUPPORTED_ARCHITECTURES", "DecoderConfig", "GGUFDecoder", "read_gguf"]

SUPPORTED_ARCHITECTURES = ("llama", "gemma3")

#: Gemma 3's settings that its GGUF files do not state (transformers' Gemma3TextConfig).
_GEMMA3_LOCAL_ROPE_BASE = 10_000.0
_GEMMA3_GLOBAL_EVERY = 6


@dataclass(frozen=True, slots=True)
class DecoderConfig:
    """The hyperparameters of a decoder-only transformer, from GGUF metadata."""

    architecture: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    eps: float
    rope_base: float
    #: Rotary base of the sliding-window layers (Gemma 3); equal to ``rope_base`` otherwise.
    local_rope_base: float
    #: Keys a query may see in a sliding-window layer (itself included); 0: none are local.
    sliding_window: int = 0
    #: Per layer: True when it is a sliding-window layer.
    local_layers: tuple[bool, ...] = ()
    #: Attention logits are multiplied by this (``head_dim ** -0.5``, or Gemma's
    #: ``query_pre_attn_scalar ** -0.5``).
    attention_scale: float = 0.0
    tied_output: bool = True

    @property
    def gemma(self) -> bool:
        return self.architecture == "gemma3"


@dataclass(slots=True)
class GGUFDecoder:
    """A GGUF file opened for conversion: config, tokenizer metadata, weights on demand."""

    path: Path
    config: DecoderConfig
    #: ``tokenizer.*`` metadata (tokens, merges, token types, special ids, chat template).
    tokenizer: dict[str, Any]
    _tensors: dict[str, Any] = field(default_factory=dict, repr=False)

    def has(self, name: str) -> bool:
        return name in self._tensors

    def weight(self, name: str) -> Any:
        """Tensor ``name`` as float32, ``(out, in)`` for a matrix; q/k in Hugging Face's layout."""
        import numpy as np
        from gguf.quants import dequantize

        try:
            tensor = self._tensors[name]
        except KeyError:
            raise ModelUnavailableError(
                f"{self.path.name} has no tensor {name!r}; it is not a complete "
                f"{self.config.architecture} model."
            ) from None
        array = np.ascontiguousarray(dequantize(tensor.data, tensor.tensor_type), np.float32)
        shape = tuple(int(n) for n in reversed(tensor.shape))
        array = array.reshape(shape)
        if self.config.architecture == "llama":
            if name.endswith("attn_q.weight"):
                array = _unpermute(array, self.config.heads)
            elif name.endswith("attn_k.weight"):
                array = _unpermute(array, self.config.kv_heads)
        return array


def _unpermute(weight: Any, heads: int) -> Any:
    """Undo llama.cpp's interleaving of each head's rows (``convert_hf_to_gguf.permute``)."""
    half = weight.shape[0] // heads // 2
    rows = weight.reshape(heads, half, 2, *weight.shape[1:])
    return rows.swapaxes(1, 2).reshape(weight.shape)


def _field(reader: Any, key: str, default: Any = None) -> Any:
    found = reader.fields.get(key)
    if found is None:
        return default
    return found.contents()


def read_gguf(path: Path) -> GGUFDecoder:
    """Open ``path`` (memory-mapped) and read its config and tokenizer metadata.

    Raises
    ------
    ModelUnavailableError
        The file is not a GGUF, or holds an architecture this builder does not support.
    """
    from gguf import GGUFReader

    try:
        reader = GGUFReader(str(path))
    except (OSError, ValueError) as error:
        raise ModelUnavailableError(f"Cannot read {path} as a GGUF file: {error}") from error
    arch = _field(reader, "general.architecture")
    if arch not in SUPPORTED_ARCHITECTURES:
        raise ModelUnavailableError(
            f"{path.name} holds a {arch!r} model; the ONNX runtime for context relevance "
            f"supports {', '.join(SUPPORTED_ARCHITECTURES)}."
        )
    tensors = {t.name: t for t in reader.tensors}

    def need(key: str) -> Any:
        value = _field(reader, f"{arch}.{key}")
        if value is None:
            raise ModelUnavailableError(f"{path.name} lacks the metadata key {arch}.{key}.")
        return value

    hidden = int(need("embedding_length"))
    heads = int(need("attention.head_count"))
    kv_heads = int(_field(reader, f"{arch}.attention.head_count_kv", heads))
    head_dim = int(_field(reader, f"{arch}.attention.key_length", 0)) or hidden // heads
    layers = int(need("block_count"))
    embedding = tensors.get("token_embd.weight")
    if embedding is None:
        raise ModelUnavailableError(f"{path.name} has no token_embd.weight tensor.")
    vocab = int(embedding.shape[1])
    rope_base = float(_field(reader, f"{arch}.rope.freq_base", 10_000.0))
    window = 0
    local: tuple[bool, ...] = (False,) * layers
    local_base = rope_base
    scale = head_dim**-0.5
    if arch == "gemma3":
        window = int(_field(reader, f"{arch}.attention.sliding_window", 0))
        local = tuple((i + 1) % _GEMMA3_GLOBAL_EVERY != 0 for i in range(layers))
        local_base = _GEMMA3_LOCAL_ROPE_BASE
        # transformers' default query_pre_attn_scalar for Gemma 3 is 256, its head_dim.
        scale = 256.0**-0.5
    config = DecoderConfig(
        architecture=arch,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        ffn=int(need("feed_forward_length")),
        vocab=vocab,
        eps=float(need("attention.layer_norm_rms_epsilon")),
        rope_base=rope_base,
        local_rope_base=local_base,
        sliding_window=window,
        local_layers=local,
        attention_scale=scale,
        tied_output="output.weight" not in tensors,
    )
    tokenizer = {
        key.removeprefix("tokenizer."): _field(reader, key)
        for key in reader.fields
        if key.startswith("tokenizer.")
    }
    return GGUFDecoder(Path(path), config, tokenizer, tensors)
