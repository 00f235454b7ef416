"""Which runtime scores context relevance for a model and the numerics asked for.

:func:`load_question_likelihood` returns a
:class:`~ragmeter.models.relevance.runtime.QuestionScorer` either way:
:class:`~ragmeter.models.relevance.onnx_scorer.OnnxQuestionLikelihood` (a GGUF model converted
to ONNX, no torch) or :class:`~ragmeter.models.relevance.torch_scorer.QuestionLikelihood`
(transformers).
"""

from __future__ import annotations

from ragmeter.errors import ConfigError
from ragmeter.models.relevance.onnx_scorer import OnnxQuestionLikelihood
from ragmeter.models.relevance.runtime import (
    INT8_ONNX_ONLY,
    Dtype,
    QuestionScorer,
    requested_dtype,
)
from ragmeter.models.relevance.source import onnx_folder, requested_runtime, resolve_relevance_model

__all__ = ["ONNX_AUTO_DTYPE", "load_question_likelihood"]

#: What ``dtype="auto"`` runs on onnxruntime: int8, one pair per call (so a pair's score never
#: depends on the pairs scored with it: int8 activations are quantised per call). Measured by
#: ``bench/context_relevance_onnx.py --agreement`` (docs/speed.md): MS MARCO pairwise accuracy
#: within 0.01 of float32's, about 2.4x the pairs per CPU second, a quarter of the weights.
ONNX_AUTO_DTYPE = "int8"


def load_question_likelihood(
    spec: str = "offline",
    *,
    dtype: Dtype = "auto",
    runtime: str = "auto",
    pack_tokens: int = 512,
    batch_size: int = 16,
    max_context_tokens: int = 512,
) -> QuestionScorer:
    """The question-likelihood scorer for ``spec`` (see :func:`resolve_relevance_model`).

    A GGUF model (the offline default among them) runs on onnxruntime unless ``runtime`` (or
    ``RAGMETER_RELEVANCE_RUNTIME``) says ``"torch"``, onnxruntime is missing, or bfloat16 is
    asked for by name (``dtype="bfloat16"`` or ``RAGMETER_RELEVANCE_DTYPE``): only the torch
    path has it. On onnxruntime ``"auto"`` is :data:`ONNX_AUTO_DTYPE` (int8, one pair per
    call); ``dtype="float32"`` gives Unitxt's float32 numerics. int8 is onnxruntime's only.
    The model itself is loaded on the first ``score`` call and shared by every scorer of the
    process that names the same model (and dtype). ``pack_tokens`` and ``batch_size`` are the
    torch path's (see :class:`~ragmeter.models.relevance.torch_scorer.QuestionLikelihood`).
    """
    wanted = requested_dtype(dtype)
    chosen = requested_runtime(runtime)
    if wanted == "bfloat16" and chosen == "auto":
        chosen = "torch"
    if wanted == "int8" and chosen == "torch":
        raise ConfigError(INT8_ONNX_ONLY)
    source = resolve_relevance_model(spec, runtime=chosen)
    if source.runtime == "onnx":
        if wanted == "bfloat16":
            raise ConfigError(
                "The ONNX runtime computes context relevance in float32 only (or int8 with "
                "dtype 'int8'). Use dtype 'float32' or 'auto', or runtime 'torch' for bfloat16."
            )
        if wanted == "int8" or (wanted == "auto" and ONNX_AUTO_DTYPE == "int8"):
            return OnnxQuestionLikelihood(
                source.name + "-int8",
                lambda: onnx_folder(source, int8=True),
                max_context_tokens=max_context_tokens,
                batch_tokens=1,
            )
        return OnnxQuestionLikelihood(
            source.name, lambda: onnx_folder(source), max_context_tokens=max_context_tokens
        )
    if wanted == "int8":
        raise ConfigError(INT8_ONNX_ONLY)
    from ragmeter.models.relevance.torch_scorer import QuestionLikelihood

    return QuestionLikelihood(
        source,
        dtype=dtype,
        pack_tokens=pack_tokens,
        batch_size=batch_size,
        max_context_tokens=max_context_tokens,
    )
