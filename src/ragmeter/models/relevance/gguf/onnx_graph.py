"""Build an ONNX graph of a GGUF decoder (Llama, Gemma 3) that scores target tokens.

The graph is written with the ``onnx`` package from the dequantised float32 weights of
:func:`ragmeter.models.relevance.gguf.reader.read_gguf`; no torch at build or run time.

Several sequences run per call, side by side, padded on the right: attention is causal, so a
sequence's tokens never see the padding after them, and every position's numbers are those of
the sequence run alone (up to the order of float32 sums inside a matrix product). All the
sequences of a call follow the same ``past`` (the prompt's shared prefix).

Inputs
    ``ids`` int64 ``[B, T]``: each sequence's tokens after the cached prefix, padded.
    ``past`` float32 ``[layers, 2, kv_heads, P, head_dim]``: keys (rotated) and values of
    the ``P`` tokens before every row of ``ids`` (``P`` may be 0); ``ids`` take positions
    ``P..P+T-1``.
    ``rows`` int64 ``[N]``: indices into ``ids`` flattened (``b * T + t``) whose next-token
    distribution is wanted.
    ``targets`` int64 ``[N]``: the token scored at each of those rows.
Outputs
    ``logprobs`` float32 ``[N]``: ``log P(targets[n] | tokens up to rows[n])``; the output
    layer and log-softmax run only at ``rows``.
    ``present`` float32 ``[layers, 2, B, kv_heads, P+T, head_dim]``: ``past`` extended by
    each row of ``ids`` (read for the shared prefix, computed with ``B`` = 1).

The weights go to one external data file beside the graph. Bump :data:`CONVERTER_VERSION`
whenever the graph changes: it keys the cache of converted models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragmeter.models.relevance.gguf.reader import DecoderConfig, GGUFDecoder

__all__ = ["CONVERTER_VERSION", "INT8_VERSION", "OPSET", "build_graph", "write_model"]

#: Version of the graph layout; part of the cache key of converted models (2: a batch axis).
CONVERTER_VERSION = 2
#: Version of the int8 variant's layout, on top of :data:`CONVERTER_VERSION` (2: the
#: embedding and output layer in int8 too; 1: the layers' matrices only).
INT8_VERSION = 2
OPSET = 17
_ALIGN = 4096
#: Rows quantised at a time (int8 variant).
_QUANTIZE_ROWS = 8192


class _DataFile:
    """Initializers written to one external data file as they are made (page-aligned), so
    that a conversion holds one weight matrix in memory at a time, not all of them."""

    def __init__(self, path: Path) -> None:
        self.name = path.name
        self.handle = path.open("wb")
        self.offset = 0
        self.tensors: list[Any] = []

    def add(self, name: str, array: Any) -> None:
        import numpy as np
        from onnx import TensorProto

        array = np.asarray(array, order="C")  # (not ascontiguousarray: it makes scalars 1-D)
        kinds = {"int64": TensorProto.INT64, "int8": TensorProto.INT8}
        kind = kinds.get(array.dtype.name, TensorProto.FLOAT)
        if kind == TensorProto.FLOAT:
            array = array.astype(np.float32, copy=False)
        tensor = TensorProto(name=name, data_type=kind, dims=array.shape)
        if array.nbytes < _ALIGN:
            tensor.raw_data = array.tobytes()
        else:
            pad = -self.offset % _ALIGN
            self.handle.write(b"\0" * pad)
            self.offset += pad
            self.handle.write(memoryview(array).cast("B"))  # no copy of the bytes
            tensor.data_location = TensorProto.EXTERNAL
            for key, value in (
                ("location", self.name),
                ("offset", str(self.offset)),
                ("length", str(array.nbytes)),
            ):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
            self.offset += array.nbytes
        self.tensors.append(tensor)

    def close(self) -> None:
        self.handle.close()


class _Graph:
    """Nodes, initializers (numpy arrays, or written out to ``sink`` as they are made) and
    unique names for one ONNX graph."""

    def __init__(self, *, int8: bool = False, sink: _DataFile | None = None) -> None:
        self.nodes: list[Any] = []
        self.weights: dict[str, Any] = {}
        self.int8 = int8
        self.sink = sink
        self._count = 0

    def store(self, name: str, array: Any) -> None:
        """Initializer ``name``: written to the sink now, or kept in :attr:`weights`."""
        if self.sink is not None:
            self.sink.add(name, array)
        else:
            self.weights[name] = array

    def name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def op(self, kind: str, inputs: Sequence[str], hint: str = "", **attrs: Any) -> str:
        from onnx import helper

        out = self.name(hint or kind.lower())
        self.nodes.append(helper.make_node(kind, list(inputs), [out], name=out, **attrs))
        return out

    def ops(self, kind: str, inputs: Sequence[str], n: int, **attrs: Any) -> list[str]:
        from onnx import helper

        outs = [self.name(kind.lower()) for _ in range(n)]
        self.nodes.append(helper.make_node(kind, list(inputs), outs, name=outs[0], **attrs))
        return outs

    def const(self, value: Any, hint: str, dtype: str = "float32") -> str:
        import numpy as np

        name = self.name(hint)
        self.store(name, np.asarray(value, dtype=dtype))
        return name

    def quantize(self, weight: Any, hint: str) -> tuple[str, str, str]:
        """A float32 ``weight`` ``(out, in)`` as int8 initializers: its transpose ``(in, out)``
        quantised per output row (symmetric), the scales ``(out,)`` and zero points."""
        import numpy as np

        rows = weight.shape[0]
        scale = np.empty(rows, np.float32)
        transposed = np.empty((weight.shape[1], rows), np.int8)
        # In blocks of rows: a float temporary of the whole matrix (Gemma 3's embedding is
        # 671 MB in float32) would be made several times over by one expression.
        for start in range(0, rows, _QUANTIZE_ROWS):
            block = weight[start : start + _QUANTIZE_ROWS]
            step = np.maximum(np.abs(block).max(axis=1), 1e-12) / 127.0
            scaled = block / step[:, None]
            np.rint(scaled, out=scaled)
            np.clip(scaled, -127, 127, out=scaled)
            transposed[:, start : start + len(block)] = scaled.T
            scale[start : start + len(block)] = step
        return (
            self.const(transposed, hint, "int8"),
            self.const(scale, hint + "_scale"),
            self.const(np.zeros(rows, np.int8), hint + "_zero", "int8"),
        )

    def int8_matmul(self, x: str, quantized: tuple[str, str, str], hint: str) -> str:
        """``x @ dequantised weight.T`` with onnxruntime's DynamicQuantizeMatMul (the
        activations quantised per call, uint8): faster than float32, not exact."""
        from onnx import helper

        out = self.name(hint)
        self.nodes.append(
            helper.make_node(
                "DynamicQuantizeMatMul", [x, *quantized], [out], name=out, domain="com.microsoft"
            )
        )
        return out

    def linear(self, x: str, weight: Any, hint: str) -> str:
        """``x @ weight.T`` for a float32 ``weight`` of shape ``(out, in)``; with ``int8``,
        :meth:`int8_matmul` on the weight quantised per output row."""
        import numpy as np

        if not self.int8:
            return self.op("MatMul", [x, self.const(np.ascontiguousarray(weight.T), hint)])
        return self.int8_matmul(x, self.quantize(weight, hint), hint)


def _rms_norm(g: _Graph, x: str, weight: Any, eps: float) -> str:
    """``x / sqrt(mean(x**2, -1) + eps) * weight`` in float32 (Llama's and Gemma's form)."""
    square = g.op("Mul", [x, x])
    mean = g.op("ReduceMean", [square], axes=[-1], keepdims=1)
    root = g.op("Sqrt", [g.op("Add", [mean, g.const(eps, "eps")])])
    normed = g.op("Div", [x, root])
    return g.op("Mul", [normed, g.const(weight, "norm_weight")])


def _rotary(g: _Graph, positions: str, base: float, dim: int) -> tuple[str, str]:
    """cos and sin ``[T, dim]`` of Hugging Face's rotate-half rotary embedding."""
    import numpy as np

    inv = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / dim))
    freqs = g.op(
        "Mul",
        [
            g.op("Unsqueeze", [positions, g.const([1], "axis", "int64")]),
            g.const(inv.astype(np.float32)[None, :], "inv_freq"),
        ],
    )
    emb = g.op("Concat", [freqs, freqs], axis=-1)
    return g.op("Cos", [emb]), g.op("Sin", [emb])


def _rotate(g: _Graph, x: str, cos: str, sin: str, dim: int) -> str:
    """``x * cos + rotate_half(x) * sin`` over the last axis."""
    first, second = g.ops("Split", [x, g.const([dim // 2, dim // 2], "split", "int64")], 2, axis=-1)
    turned = g.op("Concat", [g.op("Neg", [second]), first], axis=-1)
    return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [turned, sin])])


def _mask(g: _Graph, past_len: str, total: str, length: str, window: int) -> str:
    """Additive mask ``[T, P+T]``: query ``i`` (position ``P+i``) sees keys ``<= P+i``,
    and only the last ``window`` of them when ``window`` > 0."""
    import numpy as np

    zero = g.const(0, "zero", "int64")
    one = g.const(1, "one", "int64")
    query = g.op("Add", [g.op("Range", [zero, length, one]), past_len])
    keys = g.op("Range", [zero, total, one])
    column = g.op("Unsqueeze", [query, g.const([1], "axis", "int64")])
    row = g.op("Unsqueeze", [keys, g.const([0], "axis", "int64")])
    allowed = g.op("LessOrEqual", [row, column])
    if window > 0:
        near = g.op("Less", [g.op("Sub", [column, row]), g.const(window, "window", "int64")])
        allowed = g.op("And", [allowed, near])
    lowest = g.const(np.finfo(np.float32).min, "lowest")
    return g.op("Where", [allowed, g.const(0.0, "zero_f"), lowest])


def _gelu_tanh(g: _Graph, x: str) -> str:
    """PyTorch's ``gelu(approximate="tanh")``."""
    cube = g.op("Mul", [g.op("Mul", [x, x]), x])
    inner = g.op("Add", [x, g.op("Mul", [cube, g.const(0.044715, "c")])])
    tanh = g.op("Tanh", [g.op("Mul", [inner, g.const(math.sqrt(2.0 / math.pi), "c")])])
    half = g.op("Mul", [x, g.const(0.5, "half")])
    return g.op("Mul", [half, g.op("Add", [tanh, g.const(1.0, "one_f")])])


def _layer(
    g: _Graph,
    model: GGUFDecoder,
    i: int,
    x: str,
    past: str,
    rotary: tuple[str, str],
    mask: str,
    shapes: dict[str, str],
) -> tuple[str, str]:
    """One decoder block on ``x`` ``[B, T, hidden]``; returns its output and its keys/values
    ``[2, B, kv_heads, P+T, D]``."""
    import numpy as np

    c = model.config
    d = c.head_dim
    w = model.weight
    block = f"blk.{i}."
    h = _rms_norm(g, x, w(block + "attn_norm.weight"), c.eps)
    qkv_weight = np.concatenate(
        [w(block + "attn_q.weight"), w(block + "attn_k.weight"), w(block + "attn_v.weight")]
    )
    qkv = g.linear(h, qkv_weight, "qkv")
    sizes = [c.heads * d, c.kv_heads * d, c.kv_heads * d]
    q, k, v = g.ops("Split", [qkv, g.const(sizes, "split", "int64")], 3, axis=-1)

    def heads(t: str, n: int) -> str:  # [B, T, n*D] -> [B, n, T, D]
        shaped = g.op("Reshape", [t, g.const([0, 0, n, d], "shape", "int64")])
        return g.op("Transpose", [shaped], perm=[0, 2, 1, 3])

    q, k, v = heads(q, c.heads), heads(k, c.kv_heads), heads(v, c.kv_heads)
    if c.gemma:
        q = _rms_norm(g, q, w(block + "attn_q_norm.weight"), c.eps)
        k = _rms_norm(g, k, w(block + "attn_k_norm.weight"), c.eps)
    cos, sin = rotary
    q = _rotate(g, q, cos, sin, d)
    k = _rotate(g, k, cos, sin, d)
    # past[i]: [2, kv, P, D], the same for every row: its keys [1, kv, P, D] (and values)
    # expanded to [B, kv, P, D]; keys and values of this layer over P+T positions.
    layer_past = g.op("Gather", [past, g.const(i, "layer", "int64")], axis=0)
    past_k, past_v = g.ops("Split", [layer_past, g.const([1, 1], "split", "int64")], 2, axis=0)
    k = g.op("Concat", [g.op("Expand", [past_k, shapes["batch"]]), k], axis=2)
    v = g.op("Concat", [g.op("Expand", [past_v, shapes["batch"]]), v], axis=2)
    first = g.const([0], "axis", "int64")
    present = g.op("Concat", [g.op("Unsqueeze", [k, first]), g.op("Unsqueeze", [v, first])], axis=0)
    group = c.heads // c.kv_heads
    grouped_q = g.op("Reshape", [q, g.const([0, c.kv_heads, group, -1, d], "shape", "int64")])
    unsq = g.const([2], "axis", "int64")
    keys_t = g.op("Transpose", [g.op("Unsqueeze", [k, unsq])], perm=[0, 1, 2, 4, 3])
    scores = g.op("MatMul", [grouped_q, keys_t])  # [B, kv, G, T, P+T]
    scores = g.op("Add", [g.op("Mul", [scores, g.const(c.attention_scale, "scale")]), mask])
    probs = g.op("Softmax", [scores], axis=-1)
    attended = g.op("MatMul", [probs, g.op("Unsqueeze", [v, unsq])])  # [B, kv, G, T, D]
    attended = g.op("Reshape", [attended, g.const([0, c.heads, -1, d], "shape", "int64")])
    attended = g.op("Transpose", [attended], perm=[0, 2, 1, 3])
    attended = g.op("Reshape", [attended, shapes["flat"]])
    out = g.linear(attended, w(block + "attn_output.weight"), "o_proj")
    if c.gemma:
        out = _rms_norm(g, out, w(block + "post_attention_norm.weight"), c.eps)
    x = g.op("Add", [x, out])
    h = _rms_norm(g, x, w(block + "ffn_norm.weight"), c.eps)
    gate_up = np.concatenate([w(block + "ffn_gate.weight"), w(block + "ffn_up.weight")])
    both = g.linear(h, gate_up, "gate_up")
    gate, up = g.ops("Split", [both, g.const([c.ffn, c.ffn], "split", "int64")], 2, axis=-1)
    act = _gelu_tanh(g, gate) if c.gemma else g.op("Mul", [gate, g.op("Sigmoid", [gate])])
    down = g.linear(g.op("Mul", [act, up]), w(block + "ffn_down.weight"), "down")
    if c.gemma:
        down = _rms_norm(g, down, w(block + "post_ffw_norm.weight"), c.eps)
    return g.op("Add", [x, down]), present


def build_graph(
    model: GGUFDecoder, *, int8: bool = False, sink: _DataFile | None = None
) -> tuple[Any, dict[str, Any]]:
    """The ONNX graph (initializers not yet attached) and its weights by initializer name
    (none: with ``sink``, each weight is written there as it is made);
    ``int8``: every weight matrix in int8 (the layers' and the output layer's products in
    dynamic int8, see :meth:`_Graph.int8_matmul`; the embedding one int8 table shared with
    the tied output layer)."""
    import numpy as np
    from onnx import TensorProto, helper

    c: DecoderConfig = model.config
    g = _Graph(int8=int8, sink=sink)
    embedding = model.weight("token_embd.weight")
    table: tuple[str, str, str] | None = None
    if int8:
        # One int8 table [hidden, vocab] (a quarter of float32's bytes) serves the lookup
        # (a column per token, times its scale) and, when tied, the output layer.
        table = g.quantize(embedding, "embedding")
        columns = g.op("Gather", [table[0], "ids"], axis=1)  # [hidden, B, T]
        rows = g.op("Transpose", [columns], perm=[1, 2, 0])
        scales = g.op("Gather", [table[1], "ids"], axis=0)  # [B, T]
        x = g.op(
            "Mul",
            [
                g.op("Cast", [rows], to=TensorProto.FLOAT),
                g.op("Unsqueeze", [scales, g.const([-1], "axis", "int64")]),
            ],
        )
    else:
        g.store("embedding", embedding)
        x = g.op("Gather", ["embedding", "ids"], axis=0)
    del embedding  # the float32 table is not kept alive past this point
    if c.gemma:
        x = g.op("Mul", [x, g.const(np.float32(c.hidden**0.5), "embed_scale")])
    past_shape = g.op("Shape", ["past"])
    past_len = g.op("Gather", [past_shape, g.const(3, "axis3", "int64")], axis=0)
    ids_shape = g.op("Shape", ["ids"])
    length = g.op("Gather", [ids_shape, g.const(1, "axis1", "int64")], axis=0)
    batch = g.op("Gather", [ids_shape, g.const([0], "axis0", "int64")], axis=0)
    total = g.op("Add", [past_len, length])
    one = g.const(1, "one", "int64")
    positions = g.op("Cast", [g.op("Range", [past_len, total, one])], to=TensorProto.FLOAT)
    rotaries = {
        base: _rotary(g, positions, base, c.head_dim) for base in {c.rope_base, c.local_rope_base}
    }
    global_mask = _mask(g, past_len, total, length, 0)
    local_mask = _mask(g, past_len, total, length, c.sliding_window) if c.sliding_window else None
    shapes = {
        "flat": g.const([0, 0, c.heads * c.head_dim], "shape", "int64"),
        "batch": g.op("Concat", [batch, g.const([1, 1, 1], "ones", "int64")], axis=0),
    }
    presents = []
    for i in range(c.layers):
        local = bool(c.local_layers and c.local_layers[i])
        rotary = rotaries[c.local_rope_base if local else c.rope_base]
        mask = local_mask if local and local_mask is not None else global_mask
        x, present = _layer(g, model, i, x, "past", rotary, mask, shapes)
        presents.append(g.op("Unsqueeze", [present, g.const([0], "axis", "int64")]))
    g.nodes.append(helper.make_node("Concat", presents, ["present"], name="present", axis=0))
    flat = g.op("Reshape", [x, g.const([-1, c.hidden], "shape", "int64")])  # [B*T, hidden]
    picked = g.op("Gather", [flat, "rows"], axis=0)
    final = _rms_norm(g, picked, model.weight("output_norm.weight"), c.eps)
    if table is not None and c.tied_output:
        logits = g.int8_matmul(final, table, "output")
    elif int8:
        logits = g.linear(final, model.weight("output.weight"), "output")
    else:
        head = "embedding"
        if not c.tied_output:
            g.store("output", model.weight("output.weight"))
            head = "output"
        logits = g.op("Gemm", [final, head], transB=1)
    logprobs = g.op("LogSoftmax", [logits], axis=-1)
    chosen = g.op("GatherElements", [logprobs, g.op("Unsqueeze", ["targets", one])], axis=1)
    g.nodes.append(
        helper.make_node("Reshape", [chosen, g.const([-1], "shape", "int64")], ["logprobs"])
    )
    floats, ints = TensorProto.FLOAT, TensorProto.INT64
    graph = helper.make_graph(
        g.nodes,
        f"ragmeter-{c.architecture}-target-logprobs",
        inputs=[
            helper.make_tensor_value_info("ids", ints, ["B", "T"]),
            helper.make_tensor_value_info(
                "past", floats, [c.layers, 2, c.kv_heads, "P", c.head_dim]
            ),
            helper.make_tensor_value_info("rows", ints, ["N"]),
            helper.make_tensor_value_info("targets", ints, ["N"]),
        ],
        outputs=[
            helper.make_tensor_value_info("logprobs", floats, ["N"]),
            helper.make_tensor_value_info(
                "present", floats, [c.layers, 2, "B", c.kv_heads, "S", c.head_dim]
            ),
        ],
    )
    return graph, g.weights


def write_model(model: GGUFDecoder, target: Path, *, int8: bool = False) -> None:
    """Write ``target`` (the graph) and ``target`` + ``.data`` (its weights, page-aligned,
    each written as soon as it is made)."""
    from onnx import helper, save_model

    sink = _DataFile(target.parent / (target.name + ".data"))
    try:
        graph, _ = build_graph(model, int8=int8, sink=sink)
    finally:
        sink.close()
    graph.initializer.extend(sink.tensors)
    onnx_model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="ragmeter",
        producer_version=str(CONVERTER_VERSION),
    )
    onnx_model.ir_version = 8
    save_model(onnx_model, str(target))
