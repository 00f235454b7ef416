"""``NLIVerifier``: a local entailment classifier decides "premise entails claim".

``Settings(verifier="nli:PATH_OR_NAME")`` runs a Hugging Face sequence
classifier (:mod:`ragmeter.models.hf_classifier`): MiniCheck-RoBERTa/DeBERTa, an NLI
cross-encoder, HHEM-2.1-open. Claims still come from the judge's analyze step; only the
verdicts change, so no verify call is paid for.

For each block, every premise is cut into windows that fit the model with the block's
longest claim (a premise that fits stays whole; a reference answer read with its question
keeps the question in every window), each (window, claim) pair gets the model's support
probability, and a cell's support is the maximum over its premise's windows (MiniCheck's
procedure). A cell is entailed when its support reaches ``threshold`` (default 0.5).
``Verification.meta["support"]`` carries the probabilities, so ``faithfulness_support`` and
``claim_precision_support`` read them; ``meta`` also records the verifier's name (model and
revision) and the threshold.

The pairs of concurrent ``verify`` calls (the rows of a batch) are joined into one model run,
sorted by length. With the judge cache on, each pair's probability is stored under a key
over the verifier's identity (model, revision, support label, template, maximum length), the
window and the claim, in the same SQLite file (0600) as LLM replies: a rerun recomputes
nothing, and a changed threshold reuses every probability.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.errors import ConfigError, param
from ragmeter.judges.base import ClaimBlock, Premise, Verification, answer_premise
from ragmeter.settings import Settings

if TYPE_CHECKING:
    from ragmeter.cache import JudgeCache
    from ragmeter.models.hf_classifier import HFClassifier

__all__ = ["DEFAULT_THRESHOLD", "NLIVerifier", "make_nli_verifier"]

DEFAULT_THRESHOLD = 0.5
#: The judge cache's prompt column for stored probabilities.
CACHE_PROMPT = "nli-verify"

Pair = tuple[str, str]


@dataclass(slots=True)
class _Plan:
    """The (window, claim) pairs of some blocks and, per cell, which pairs hold its windows."""

    pairs: dict[Pair, int] = field(default_factory=dict)
    #: cells[b][i][j]: indices into ``pairs`` of claim i against premise j's windows.
    cells: list[list[list[list[int]]]] = field(default_factory=list)

    def index(self, pair: Pair) -> int:
        return self.pairs.setdefault(pair, len(self.pairs))


class _PairBatcher:
    """Joins the pairs of concurrent callers into one run of ``score`` in a worker thread.

    ``score(pairs) -> (probabilities, cached)``; each caller gets its pairs' values back.
    """

    def __init__(self, score: Callable[[list[Pair]], tuple[np.ndarray, np.ndarray]]) -> None:
        self._score = score
        self._pending: dict[Pair, asyncio.Future[tuple[float, bool]]] = {}
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, pairs: Sequence[Pair]) -> list[tuple[float, bool]]:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new asyncio.run: nothing of the last one is valid
            self._loop, self._pending, self._worker = loop, {}, None
        futures = []
        for pair in pairs:
            future = self._pending.get(pair)
            if future is None:
                future = loop.create_future()
                self._pending[pair] = future
            futures.append(future)
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain())
        # Shielded: one caller cancelled must not cancel a pair another caller waits for.
        return list(await asyncio.shield(asyncio.gather(*futures)))

    async def _drain(self) -> None:
        while self._pending:
            await asyncio.sleep(0)  # let the other rows of the batch add their pairs
            batch, self._pending = self._pending, {}
            try:
                probs, cached = await asyncio.to_thread(self._score, list(batch))
            except BaseException as exc:
                for future in batch.values():
                    if not future.done():
                        future.set_exception(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                continue
            for future, p, hit in zip(batch.values(), probs, cached, strict=True):
                if not future.done():
                    future.set_result((float(p), bool(hit)))

    def cancel(self) -> None:
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()


class NLIVerifier:
    """A :class:`~ragmeter.judges.base.Verifier` over a local entailment classifier.

    Parameters
    ----------
    model : HFClassifier
        The classifier (``HFClassifier("path/to/model")``).
    threshold : float, default 0.5
        A cell is entailed when its support probability is at least this.
    cache : JudgeCache, optional
        Where pair probabilities are kept between runs (none: always computed).
    """

    def __init__(
        self,
        model: HFClassifier,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        cache: JudgeCache | None = None,
    ) -> None:
        if not isinstance(threshold, int | float) or not 0.0 < threshold < 1.0:
            setting = param("verifier_threshold", "The 'verifier_threshold' setting")
            raise ConfigError(
                f"{setting} must be a number in (0, 1): the support probability a verdict "
                f"needs. Got {threshold!r}."
            )
        self.model = model
        self.threshold = float(threshold)
        self.cache = cache
        self.name = model.name
        #: Pairs the model scored and pairs read from the cache so far.
        self.pairs_computed = 0
        self.pairs_cached = 0
        self._count_lock = threading.Lock()
        self._identity: str | None = None
        self._batcher = _PairBatcher(self.score_pairs)

    # -- protocol -----------------------------------------------------------------------

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification:
        plan = await asyncio.to_thread(self.plan, blocks)
        values = await self._batcher.run(list(plan.pairs))
        probs = np.asarray([p for p, _ in values], dtype=np.float64)
        return self._verification(plan, probs, cached=all(hit for _, hit in values))

    def verify_sync(self, blocks: Sequence[ClaimBlock]) -> Verification:
        """What :meth:`verify` returns, without an event loop (no joining across calls)."""
        plan = self.plan(blocks)
        probs, cached = self.score_pairs(list(plan.pairs))
        return self._verification(plan, probs, cached=bool(np.all(cached)))

    async def preflight(self) -> None:
        """Load the model before the first row, so a bad model fails the run at once."""
        await asyncio.to_thread(self.model.load)

    async def aclose(self) -> None:
        self._batcher.cancel()

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "nli",
            "threshold": self.threshold,
            **self.model.describe(),
            "windows": "a premise longer than the model's window (with the block's longest "
            "claim) is cut into windows overlapping by a quarter; a cell takes the maximum "
            "support over its premise's windows",
            "cache": self.cache.describe() if self.cache is not None else "off",
            "pairs_computed": self.pairs_computed,
            "pairs_cached": self.pairs_cached,
        }

    # -- work ---------------------------------------------------------------------------

    def plan(self, blocks: Sequence[ClaimBlock]) -> _Plan:
        """The (window, claim) pairs ``blocks`` need, each once."""
        plan = _Plan()
        windows: dict[tuple[Premise, int], tuple[str, ...]] = {}
        for block in blocks:
            claims = list(block.claims)
            cells: list[list[list[int]]] = [[] for _ in claims]
            if claims and block.premises:
                # A very long claim leaves the premise a quarter; truncation does the rest.
                longest = max(self.model.claim_tokens(claims))
                budget = max(self.model.max_length - longest, self.model.max_length // 4)
                for premise in block.premises:
                    key = (premise, budget)
                    if key not in windows:
                        windows[key] = self._windows(premise, budget)
                    for row, claim in zip(cells, claims, strict=True):
                        row.append([plan.index((w, claim)) for w in windows[key]])
            else:
                cells = [[[] for _ in block.premises] for _ in claims]
            plan.cells.append(cells)
        return plan

    def _windows(self, premise: Premise, budget: int) -> tuple[str, ...]:
        """Windows of ``premise`` as the model reads it (:meth:`Premise.as_text`); an answer
        read with its question keeps the question at the head of each window."""
        text = premise.as_text()
        if premise.question is None or self.model.tokens(text) <= budget:
            return self.model.windows(text, budget)
        header = answer_premise(premise.question, "")
        rest = budget - self.model.tokens(header)
        return tuple(header + w for w in self.model.windows(premise.text, rest))

    def score_pairs(self, pairs: list[Pair]) -> tuple[np.ndarray, np.ndarray]:
        """Support probability of each (premise window, claim) pair, and whether it came
        from the cache; pairs missing from the cache are scored and stored."""
        probs = np.zeros(len(pairs), dtype=np.float64)
        cached = np.zeros(len(pairs), dtype=bool)
        if not pairs:
            return probs, cached
        keys = [self._key(pair) for pair in pairs] if self.cache is not None else []
        if self.cache is not None:
            stored = self.cache.get_many(keys)
            for n, key in enumerate(keys):
                value = _probability(stored.get(key))
                if value is not None:
                    probs[n], cached[n] = value, True
        todo = [n for n in range(len(pairs)) if not cached[n]]
        if todo:
            probs[todo] = self.model.probabilities([pairs[n] for n in todo])
            if self.cache is not None:
                self.cache.put_many(
                    [(keys[n], repr(float(probs[n]))) for n in todo],
                    model=self.name,
                    prompt=CACHE_PROMPT,
                )
        with self._count_lock:
            self.pairs_computed += len(todo)
            self.pairs_cached += len(pairs) - len(todo)
        return probs, cached

    def _key(self, pair: Pair) -> str:
        if self._identity is None:
            spec = self.model.spec
            self._identity = json.dumps(
                {
                    "verifier": self.name,
                    "label": spec.rule.describe(),
                    "template": spec.template,
                    "max_length": self.model.max_length,
                },
                sort_keys=True,
            )
        blob = json.dumps([self._identity, pair[0], pair[1]], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _verification(self, plan: _Plan, probs: np.ndarray, *, cached: bool) -> Verification:
        supports = tuple(
            tuple(
                tuple(float(max(probs[k] for k in cell)) if cell else 0.0 for cell in row)
                for row in cells
            )
            for cells in plan.cells
        )
        matrices = tuple(
            tuple(tuple(v >= self.threshold for v in row) for row in block) for block in supports
        )
        return Verification(
            matrices=matrices,
            meta={
                "method": f"nli: support >= {self.threshold:g}, max over premise windows",
                "judge": self.name,
                "threshold": self.threshold,
                "cached": cached,
                "support": tuple(
                    tuple(tuple(round(v, 4) for v in row) for row in block) for block in supports
                ),
            },
        )


def _probability(reply: str | None) -> float | None:
    if reply is None:
        return None
    try:
        value = float(reply)
    except ValueError:
        return None
    return value if math.isfinite(value) and 0.0 <= value <= 1.0 else None


def make_nli_verifier(spec: str, settings: Settings) -> NLIVerifier:
    """The verifier of ``verifier="nli:SPEC"`` with the run's settings (label, threshold,
    device, download permission, cache)."""
    from ragmeter.models.hf_classifier import HFClassifier

    threshold = settings.verifier_threshold
    model = HFClassifier(
        spec,
        label=settings.verifier_label,
        device=settings.device,
        allow_download=settings.allow_download,
    )
    cache = None
    if settings.use_cache:
        from ragmeter.cache import JudgeCache

        cache = JudgeCache(settings.cache_path)
    return NLIVerifier(
        model, threshold=DEFAULT_THRESHOLD if threshold is None else threshold, cache=cache
    )
