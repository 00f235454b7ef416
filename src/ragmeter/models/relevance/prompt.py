"""What every question-likelihood runtime shares: Unitxt's prompt, the pairs check, the
context cut and the shared prompt prefix. No model library is imported here."""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = [
    "RELEVANCE_PROMPT",
    "check_pairs",
    "cut_contexts",
    "prefix_offset",
    "shared_prefix",
]

#: Unitxt's context-relevance prompt.
RELEVANCE_PROMPT = "Generate a question based on the given content: {context}"


def check_pairs(contexts: Sequence[str], questions: Sequence[str]) -> None:
    """Raise ValueError unless there is one question per context."""
    if len(contexts) != len(questions):
        raise ValueError(
            f"score() needs one question per context. Got {len(contexts)} contexts and "
            f"{len(questions)} questions."
        )


def cut_contexts(
    contexts: Sequence[str],
    ids: Sequence[Sequence[int]],
    decode: Callable[[list[int]], str],
    max_tokens: int,
) -> list[str]:
    """Each context, or the text of its first ``max_tokens`` tokens when it has more."""
    out = []
    for text, row in zip(contexts, ids, strict=True):
        out.append(decode(list(row[:max_tokens])) if len(row) > max_tokens else text)
    return out


def shared_prefix(prompt_ids: Callable[[list[str]], list[list[int]]]) -> list[int]:
    """The leading prompt tokens every context shares (chat header and instruction).

    Found from probe contexts that share no first token (even for a tokenizer that maps two
    of them to one unknown token), never from the pairs of a call, so that a pair is split
    the same way whatever it is scored with.
    """
    first, *others = prompt_ids(["x", "0", "The"])
    n = 0
    while n < len(first) and all(n < len(o) and o[n] == first[n] for o in others):
        n += 1
    return first[:n]


def prefix_offset(prefix: Sequence[int], prompt: Sequence[int]) -> int:
    """How many leading tokens of ``prompt`` the prefix stands for (0 or all of it)."""
    n = len(prefix)
    return n if 0 < n < len(prompt) and tuple(prompt[:n]) == tuple(prefix) else 0
