"""Several (prompt, question) pairs side by side in one row of a causal LM's forward pass.

Each pair attends only to itself (and to a shared prompt prefix computed once), through an
attention function registered in transformers, so every matrix product has the same shape
whatever the other pairs are: a pair's bfloat16 score never depends on its batch. Used by
:class:`ragmeter.models.relevance.torch_scorer.QuestionLikelihood` for Llama-family models on torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.models.relevance.prompt import prefix_offset

__all__ = ["ATTENTION", "PACKABLE", "Prefix", "Segment", "enable_packing", "pack_rows"]

#: Model types whose layers mix tokens only in self-attention, which is plain causal
#: attention: their pairs can share the rows of one forward pass (see ``segment_attention``).
PACKABLE = frozenset({"llama"})
#: The name the attention function is registered under in transformers.
ATTENTION = "ragmeter_segments"


@dataclass(frozen=True, slots=True)
class Segment:
    """One pair's rows ``[start, end)`` in a packed row; ``shared`` when its prompt starts
    with the shared prefix, whose keys and values then come from ``Prefix``."""

    start: int
    end: int
    shared: bool


@dataclass(slots=True)
class Prefix:
    """Per-layer keys and values of the prompt's shared prefix (computed once per scorer)."""

    ids: tuple[int, ...]
    keys_values: dict[int, tuple[Any, Any]]

    def offset(self, prompt: Sequence[int]) -> int:
        """How many leading tokens of ``prompt`` the prefix stands for (0 or all of it)."""
        return prefix_offset(self.ids, prompt)


def segment_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """Causal attention within each segment of a packed row (registered as ``ATTENTION``).

    ``ragmeter_segments`` lists each pair's :class:`Segment`; a pair attends only to
    itself (and to the shared prefix's keys and values from ``ragmeter_prefix`` when
    ``shared``), at its own shape, exactly as if it ran alone. With ``ragmeter_capture``
    (a dict), the keys and values of the single segment are stored there by layer: that is
    how the shared prefix is computed. Rows after the last segment (padding) get zeros.
    """
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    segments: list[Segment] | None = kwargs.get("ragmeter_segments")
    if not segments:
        raise RuntimeError(
            f"The {ATTENTION!r} attention needs ragmeter_segments; it only runs inside "
            "QuestionLikelihood.score."
        )
    prefix: Prefix | None = kwargs.get("ragmeter_prefix")
    capture: dict[int, tuple[Any, Any]] | None = kwargs.get("ragmeter_capture")
    layer = module.layer_idx
    parts = []
    for segment in segments:
        q = query[:, :, segment.start : segment.end]
        k = key[:, :, segment.start : segment.end]
        v = value[:, :, segment.start : segment.end]
        if capture is not None:
            capture[layer] = (k.clone(), v.clone())
        mask = None
        if segment.shared and prefix is not None:
            before_k, before_v = prefix.keys_values[layer]
            k = torch.cat([before_k, k], dim=2)
            v = torch.cat([before_v, v], dim=2)
            # Query i sits at position len(prefix) + i: it sees the prefix and itself.
            mask = torch.ones((q.shape[2], k.shape[2]), dtype=torch.bool).tril(len(prefix.ids))
        out, _ = sdpa_attention_forward(
            module,
            q,
            k,
            v,
            None if mask is None else mask[None, None],
            scaling=scaling,
            is_causal=mask is None,
        )
        parts.append(out)
    rest = query.shape[2] - segments[-1].end
    if rest:
        parts.append(query.new_zeros((query.shape[0], rest, query.shape[1], query.shape[3])))
    return torch.cat(parts, dim=1), None


def enable_packing(model: Any, config: Any) -> tuple[Any, Any] | None:
    """Switch ``model`` to segment attention; its float32 output layer, or None if unsupported."""
    import torch

    head = model.get_output_embeddings()
    if (
        config.model_type not in PACKABLE
        or not getattr(model, "_supports_attention_backend", False)
        or not isinstance(head, torch.nn.Linear)
        or getattr(config, "final_logit_softcapping", None) is not None
    ):
        return None
    try:
        from transformers import AttentionInterface

        AttentionInterface.register(ATTENTION, segment_attention)
        model.set_attn_implementation(ATTENTION)
    except (ImportError, AttributeError, ValueError, KeyError):
        return None
    bias = None if head.bias is None else head.bias.detach().float().clone()
    return head.weight.detach().float().clone(), bias


def pack_rows(lengths: Sequence[int], size: int) -> list[tuple[int, list[int]]]:
    """Rows of ``size`` tokens (first fit, longest first) as ``(row length, pair indices)``.

    A pair longer than ``size`` gets a row of its own, rounded up to a multiple of ``size``,
    that no other pair joins: every other pair always runs in a row of exactly ``size``.
    """
    rows: list[tuple[int, list[int]]] = []
    free: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        length = lengths[i]
        for r, space in enumerate(free):
            if length <= space:
                rows[r][1].append(i)
                free[r] -= length
                break
        else:
            row = max(size, -(-length // size) * size)
            rows.append((row, [i]))
            # A longer row is that pair's alone: any other pair always runs at ``size``.
            free.append(row - length if row == size else 0)
    return rows
