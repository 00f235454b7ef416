"""One interface over the question-likelihood runtimes (torch and onnxruntime).

:class:`QuestionScorer` is what the context-relevance metric, the meta-evaluation and the
benches use: ``score(contexts, questions)``, ``prompt_ids``/``target_ids``, ``numerics()``
and ``describe()``. It builds the token ids of every pair the same way for both runtimes
(Unitxt's prompt, the context cut, the chat template or the plain prompt, the end token) and
leaves only the model pass to each runtime's :meth:`QuestionScorer._score_pairs`.

Each runtime reaches its tokenizer through :class:`PromptTokens`: the ``tokenizers``-based
GGUF tokenizer of the onnxruntime path fits it as it is; transformers' tokenizers are wrapped
by :class:`TransformersTokens`. No model library is imported here.

The numerics a caller may ask for (``dtype``) are named here too, with the environment
variable that overrides ``"auto"``; which runtime serves which dtype is
:func:`ragmeter.models.relevance.loader.load_question_likelihood`'s choice.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from ragmeter.errors import ConfigError
from ragmeter.models._runtime import encodable
from ragmeter.models.relevance.prompt import RELEVANCE_PROMPT, check_pairs, cut_contexts

__all__ = [
    "DTYPES",
    "INT8_ONNX_ONLY",
    "Dtype",
    "PromptFormat",
    "PromptTokens",
    "QuestionScorer",
    "TransformersTokens",
    "requested_dtype",
]

Dtype = Literal["auto", "float32", "bfloat16", "int8"]
#: How a prompt is laid out: the chat template's user turn, the prompt plus a newline after
#: BOS, or a seq2seq model's encoder input.
PromptFormat = Literal["chat", "plain", "seq2seq"]

DTYPES: tuple[str, ...] = ("auto", "float32", "bfloat16", "int8")
_DTYPE_ENV = "RAGMETER_RELEVANCE_DTYPE"

INT8_ONNX_ONLY = (
    "The int8 context relevance runs on onnxruntime, for a GGUF model (the offline default "
    "among them): its layers' matrix products in dynamic int8, faster and not float32's "
    "scores (docs/speed.md). Use runtime 'onnx' or 'auto' with a GGUF model, or dtype "
    "'float32'."
)


def requested_dtype(dtype: str) -> Dtype:
    """``dtype``, or ``RAGMETER_RELEVANCE_DTYPE`` when ``dtype`` is ``"auto"`` and it is set."""
    if dtype not in DTYPES:
        raise ConfigError(f"dtype must be one of {', '.join(DTYPES)}. Got {dtype!r}.")
    if dtype == "auto":
        env = os.environ.get(_DTYPE_ENV, "").strip().lower()
        if env:
            if env not in DTYPES:
                raise ConfigError(
                    f"{_DTYPE_ENV} must be one of {', '.join(DTYPES)}. Got {env!r}. "
                    "Unset it to let ragmeter choose."
                )
            return env  # type: ignore[return-value]
    return dtype  # type: ignore[return-value]


class PromptTokens(Protocol):
    """What building a pair's token ids needs from a tokenizer."""

    def encode(self, texts: list[str], *, add_special_tokens: bool) -> list[list[int]]: ...

    def decode(self, ids: list[int]) -> str: ...

    def chat(self, user: str) -> str: ...


class TransformersTokens:
    """A transformers tokenizer seen as :class:`PromptTokens`."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def encode(self, texts: list[str], *, add_special_tokens: bool) -> list[list[int]]:
        return self.tokenizer(list(texts), add_special_tokens=add_special_tokens)["input_ids"]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids)

    def chat(self, user: str) -> str:
        return self.tokenizer.apply_chat_template(
            [{"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
        )


class QuestionScorer(ABC):
    """Scores ``P(question | "Generate a question based on the given content: " + context)``.

    The score of a pair is ``exp(mean log P(target token))`` over the question's tokens and the
    end token (a causal LM) or the tokenizer's own ``</s>`` (a seq2seq model): a number in
    (0, 1]. Subclasses load their model on first use and implement :meth:`_score_pairs`.
    """

    name: str
    max_context_tokens: int

    @property
    @abstractmethod
    def tokens(self) -> PromptTokens:
        """The model's tokenizer (loads the model)."""

    @property
    @abstractmethod
    def prompt_format(self) -> PromptFormat:
        """How prompts are laid out (loads the model)."""

    @property
    @abstractmethod
    def end_id(self) -> int | None:
        """The end token appended to a causal LM's target; None for a seq2seq model."""

    @property
    @abstractmethod
    def dtype(self) -> str:
        """The numerics the model body runs in (``"auto"`` resolved; loads the model)."""

    @abstractmethod
    def numerics(self) -> dict[str, Any]:
        """How the scores were computed (dtype, method...), for each result's details."""

    @abstractmethod
    def _score_pairs(self, pairs: list[tuple[list[int], list[int]]]) -> list[float]:
        """One score per (prompt ids, target ids) pair, in order; ``pairs`` is not empty."""

    @property
    def backend(self) -> Literal["causal", "seq2seq"]:
        return "seq2seq" if self.prompt_format == "seq2seq" else "causal"

    def describe(self) -> dict[str, Any]:
        """The model, backend, prompt format and numerics behind the scores."""
        return {
            "model": self.name,
            "backend": self.backend,
            "prompt_format": self.prompt_format,
            "prompt": RELEVANCE_PROMPT,
            "max_context_tokens": self.max_context_tokens,
            **self.numerics(),
        }

    def prompt_ids(self, contexts: Sequence[str]) -> list[list[int]]:
        """Token ids of each context's prompt (cut to ``max_context_tokens``, laid out)."""
        tokens = self.tokens
        ids = tokens.encode(list(contexts), add_special_tokens=False)
        cut = cut_contexts(contexts, ids, tokens.decode, self.max_context_tokens)
        prompts = [RELEVANCE_PROMPT.format(context=c) for c in cut]
        if self.prompt_format == "chat":
            return tokens.encode([tokens.chat(p) for p in prompts], add_special_tokens=False)
        if self.prompt_format == "plain":
            return tokens.encode([p + "\n" for p in prompts], add_special_tokens=True)
        return tokens.encode(prompts, add_special_tokens=True)

    def target_ids(self, questions: Sequence[str]) -> list[list[int]]:
        """Token ids of each question, then the end token (a seq2seq model: as Unitxt, the
        tokenizer's own special tokens; T5 appends ``</s>``)."""
        end = self.end_id
        if end is None:
            return self.tokens.encode(list(questions), add_special_tokens=True)
        rows = self.tokens.encode(list(questions), add_special_tokens=False)
        return [[*row, end] for row in rows]

    def score(self, contexts: Sequence[str], questions: Sequence[str]) -> list[float]:
        """One score in (0, 1] per (context, question) pair, in order.

        Raises
        ------
        ValueError
            ``contexts`` and ``questions`` differ in length.
        """
        check_pairs(contexts, questions)
        if not contexts:
            return []
        pairs = list(
            zip(
                self.prompt_ids(encodable(contexts)),
                self.target_ids(encodable(questions)),
                strict=True,
            )
        )
        return self._score_pairs(pairs)
