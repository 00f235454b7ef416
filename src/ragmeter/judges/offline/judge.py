"""``OfflineJudge``: the deterministic claim judge of the offline default (no LLM, no hub).

Small instruct LLMs that ship on PyPI were measured at chance on entailment, so the offline
judge is a calibrated verifier instead:

* **analyze** cuts the answer and each reference into atomic claims
  (:mod:`ragmeter.judges.offline.claim_split`: framing and generation artefacts removed, each
  sentence split by spaCy's dependency parse into coordinated clauses, appositives, participial and
  relative clauses and list items, a leading "It/They/He/She/This" replaced by the previous
  subject, hedges dropped; a labelled regular-expression splitter without spaCy), extracts entities
  (spaCy through :mod:`ragmeter.models.entities` when installed, else a labelled regular
  expression fallback), and for ``response_relevancy`` returns the *offline-answer-sentences*
  variant: the answer's leading claims written as questions, and a pattern-based noncommittal
  flag ("I don't know", "cannot answer", "no information", "has not been provided"...). Its
  ``questions_method`` starts with "offline", so the response_relevancy family scores with its
  own offline variant ("offline-typed-coverage") rather than with these stand-in questions.
* **verify** scores every (claim, premise) cell with a logistic model over lexical evidence
  (K-Precision, content-word precision over the whole premise, its best window of two
  sentences and its best sentence, the same weighted by IDF computed from the block's own
  texts, 5-letter prefix matches, bigram precision, trigram cover, numbers and capitalised
  words missing from the premise, a negation the premise lacks, claim length) and the
  probabilities of ragmeter's own entailment model (:mod:`ragmeter.models.claim_verifier`,
  a MiniLM cross-encoder on onnxruntime), which reads the claim against its best
  three-sentence window only where more than ``min_content_share`` of the claim's content
  words occur in the premise (:mod:`ragmeter.judges.offline.model_features`). With ``semantic=True``
  the lexical features are joined instead by the highest MiniLM cosine between the claim and
  a premise sentence. A cell is entailed when its support reaches the calibrated threshold
  and there is no hard conflict: every number (digits or number words), month and weekday
  of the claim must occur in the premise, a negation of the claim must have one in the
  premise, more than ``min_content_share`` of its content words must be there, and the
  premise clauses that hold all of them must not say the opposite (a negation the claim
  lacks, an antonym, the subject and object swapped:
  :mod:`ragmeter.judges.offline.conflicts`). Each
  premise is judged on its own (the IDF weights count the block's claims and that premise's
  sentences, never another premise; the model reads one pair at a time).

This module holds the judge's settings, models, worker processes and store; its two tasks
are its bases: ``analyzing`` (claims, entities, questions) and ``verify`` (the cells'
support, conflicts, evidence and verdicts). The pieces live beside them in
``judges/offline/``: the features (``features``, ``model_features``, ``conflicts``,
``binding``, ``quantities``), what is checked (``checks``, ``answer_reading``), the
calibrations (``calibration``), the model-decides path (``verdict``), the analyze helpers
(``analysis``, ``claim_split``, ``regex_claims``, ``reference_reading``), the worker
processes (``processes``, ``frames``, ``worker``) and the verdict store (``stored``).

``MODEL_CALIBRATION`` (the default when onnxruntime is installed) and
``LEXICAL_CALIBRATION`` (the fallback without it) were fitted by
``bench/meta/fit_verifier_sources.py`` across four sources with equal weight (LFQA
sentences, WiCE's held-out half, RAGChecker's examples, unseen SNLI pairs), never on one;
the script prints leave-one-source-out numbers next to K-Precision's, and
``docs/validity.md`` shows them. ``describe()`` reports the constants.
``Verification.meta["support"]`` carries the support probabilities (same shape as the
verdict matrices): the graded metrics ``faithfulness_support`` and
``claim_precision_support`` read them.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from ragmeter.cache import JudgeCache
from ragmeter.errors import ConfigError
from ragmeter.judges.base import (
    Analysis,
    AnalyzeRequest,
    ClaimBlock,
    Verification,
)
from ragmeter.judges.offline.analyzing import ClaimAnalyzing
from ragmeter.judges.offline.batching import CallBatcher, outcomes_of
from ragmeter.judges.offline.calibration import (
    ALL_FEATURES,
    LEXICAL_CALIBRATION,
    MODEL_CALIBRATION,
    SEMANTIC_CALIBRATION,
    VERSION,
    Calibration,
)
from ragmeter.judges.offline.claim_split import (
    atomic_claims,
)
from ragmeter.judges.offline.model_features import (
    NLI_FEATURES,
)
from ragmeter.judges.offline.processes import JudgeProcesses, WorkerFailed
from ragmeter.judges.offline.reference_reading import read_references
from ragmeter.judges.offline.stored import BlockVerdict, OfflineStore, runtime_versions
from ragmeter.judges.offline.verdict import (
    RULE_NO_SHARED,
    RULE_RESTATES,
    RULE_VERBATIM,
    ModelDecision,
)
from ragmeter.judges.offline.verify import ClaimVerifying
from ragmeter.models.claim_verifier import shipped_model_available
from ragmeter.settings import Settings

__all__ = ["MODEL_DECISION", "OfflineJudge"]

T = TypeVar("T")


#: How the trained model's probabilities become verdicts (``verdict``): fitted by
#: ``bench/meta/fit_model_decision.py`` across sources, never on the probe set.
MODEL_DECISION = ModelDecision(
    w_entail=0.3883,
    w_contra=-1.2712,
    w_share=3.1274,
    bias=-1.4686,
    data="lfqa, wice, ragchecker, snli (equal weight); bench/meta/fit_model_decision.py",
)


class OfflineJudge(ClaimAnalyzing, ClaimVerifying):
    """The offline claim judge: claims by splitting, entailment by a calibrated verifier.

    Parameters
    ----------
    settings : Settings, optional
        Run settings; ``settings.embedder`` names the embedder used when ``semantic`` is on.
    semantic : bool, default False
        Add the MiniLM similarity feature (better agreement with humans, slower: every
        premise sentence is embedded). Off, the verifier is purely lexical.
    embedder : object with ``embed(texts) -> ndarray``, optional
        Embedder to use for the semantic feature (implies ``semantic=True``).
    calibration : Calibration, optional
        Overrides the shipped coefficients (used by the calibration script).
    model : ClaimVerifierModel, "shipped" or None, default "shipped"
        The trained entailment model the verifier combines with lexical support
        (:mod:`ragmeter.models.claim_verifier`). ``"shipped"`` loads the package's model on
        first use when onnxruntime is installed, else the verifier is lexical only (its
        name and :meth:`describe` say so); ``None`` turns the model off.
    skip_decided : bool, default True
        With ``calibration``: run the model only on cells whose verdict it can still change
        (same verdicts, faster; a skipped cell's support is its lexical support). The
        calibration script turns it off to see the model on every cell above the gate.
    decision : ModelDecision, optional
        Let the model decide every cell the words cannot settle, its probabilities made
        verdicts by ``decision`` (:data:`MODEL_DECISION`; see
        :mod:`ragmeter.judges.offline.verdict`). Not the default: measured across sources it
        ranks claims below the calibrated combination (``docs/validity.md``).
    cache : JudgeCache, optional
        Where analyses and verdicts are kept between runs
        (:mod:`ragmeter.judges.offline.stored`): a rerun of the same inputs reads them back
        and runs no model. None (default): always computed.
    chunk_rows : int, optional
        Most rows whose concurrent ``analyze`` or ``verify`` calls are computed together
        (one spaCy batch, one model batch; default :attr:`chunk_rows`). 1 computes each
        call alone. The verdicts are the same at any size.

    With ``settings.workers`` (default: every core) of 2 or more, the chunks run in that
    many worker processes (:mod:`~ragmeter.judges.offline.processes`); with 1, in a thread
    beside the event loop.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        semantic: bool = False,
        embedder: Any = None,
        calibration: Calibration | None = None,
        model: Any = "shipped",
        skip_decided: bool = True,
        decision: ModelDecision | None = None,
        cache: JudgeCache | None = None,
        chunk_rows: int | None = None,
    ) -> None:
        self._settings = settings
        if chunk_rows is not None:
            if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
                raise ConfigError(
                    f"chunk_rows must be an integer >= 1 (rows per chunk of work). "
                    f"Got {chunk_rows!r}."
                )
            self.chunk_rows = chunk_rows
        self._embedder = embedder
        self.semantic = semantic or embedder is not None
        with_model = model is not None and (model != "shipped" or shipped_model_available())
        if self.semantic:
            default = SEMANTIC_CALIBRATION
        else:
            default = MODEL_CALIBRATION if with_model else LEXICAL_CALIBRATION
        self.calibration = calibration or default
        self._uses_model = any(f in NLI_FEATURES for f in self.calibration.features)
        if self._uses_model and not with_model:
            raise ConfigError(
                "This calibration uses the trained claim verifier, and it is not available "
                "(model=None, or onnxruntime is not installed). Install it with: "
                "pip install 'ragmeter[local]'; or pass LEXICAL_CALIBRATION."
            )
        self._model = None if isinstance(model, str) else model
        #: How a worker process builds the same model: "shipped", None (off), or False when
        #: it cannot (a model object was given).
        self._model_spec: str | bool | None = (
            "shipped" if isinstance(model, str) else None if model is None else False
        )
        #: With ``decision`` (and the model) the model decides
        #: (:mod:`~ragmeter.judges.offline.verdict`); else the calibrated features do.
        self.decision: ModelDecision | None = None
        if decision is not None:
            if not with_model:
                raise ConfigError(
                    "decision= needs the trained claim verifier, and it is not available "
                    "(model=None, or onnxruntime is not installed). Install it with: "
                    "pip install 'ragmeter[local]'."
                )
            self.decision = decision
            self._uses_model = True
        #: (premise, claim) pairs the model checked so far (the gate skips the rest).
        self.model_pairs = 0
        self._count_lock = threading.Lock()
        if self.semantic and "semantic" not in self.calibration.features:
            raise ConfigError(
                "A semantic verifier needs a calibration whose features end with 'semantic'. "
                f"Got features {self.calibration.features}. Pass SEMANTIC_CALIBRATION or none."
            )
        unknown = [f for f in self.calibration.features if f not in ALL_FEATURES]
        if unknown:
            raise ConfigError(
                f"Unknown verifier feature(s) {unknown} in the calibration. "
                f"Known features: {', '.join(ALL_FEATURES)}."
            )
        self._weights = np.asarray(self.calibration.weights, dtype=float)
        self._columns = np.asarray([ALL_FEATURES.index(f) for f in self.calibration.features])
        #: Positions of the model's features among the calibration's, in NLI_FEATURES order.
        self._nli_weights = np.asarray(
            [self.calibration.features.index(f) for f in NLI_FEATURES if self._uses_model],
            dtype=int,
        )
        self.skip_decided = skip_decided
        #: For ``_model_decides``: the calibration's non-model columns, how far the model's
        #: features can move a checked cell's logit down and up (``nli_checked`` is 1 on every
        #: cell the model reads; the probabilities lie in [0, 1]), and the threshold's logit.
        w = self._weights[self._nli_weights]
        checked = w[-1] if len(w) else 0.0
        self._model_reach = (
            np.delete(np.arange(len(self._columns)), self._nli_weights),
            checked + np.minimum(w[:-1], 0).sum(),
            checked + np.maximum(w[:-1], 0).sum(),
            np.log(self.calibration.threshold / (1 - self.calibration.threshold)),
        )
        suffix = ("+minilm" if self.semantic else "") + ("+nli" if self._uses_model else "")
        if self.decision is not None:
            suffix = "+nli-decides"
        self.name = f"offline:{VERSION}{suffix}"
        self._entities_method: str | None = None
        #: spaCy's parser for claims and the role rule: None until loaded, False when
        #: unavailable.
        self._parser: Any = None
        self._cache = cache
        #: The cache as this judge reads it: None until first used, False when not cached.
        self._store: OfflineStore | bool | None = None
        #: Cores the judge keeps busy (``Settings.workers``): with 2 or more, chunks of rows
        #: run in that many worker processes (:mod:`~ragmeter.judges.offline.processes`);
        #: with 1 (or a judge a process cannot rebuild), in threads beside the event loop.
        self.workers = settings.cores if settings is not None else Settings().cores
        self._pool: ThreadPoolExecutor | None = None
        self._processes: JudgeProcesses | None = None
        #: Why the worker processes were given up (None while they are used, or unused).
        self.process_failure: str | None = None
        self._processes_started = False
        self._processes_loop: asyncio.AbstractEventLoop | None = None
        #: Concurrent analyze / verify calls gathered into chunks (one parse batch and one
        #: model batch per chunk; :mod:`~ragmeter.judges.offline.batching`).
        self._analyses: CallBatcher[AnalyzeRequest, Analysis] = CallBatcher(
            self._analyze_chunk, chunk=self.chunk_rows, workers=self.workers
        )
        self._verifications: CallBatcher[tuple[ClaimBlock, ...], Verification] = CallBatcher(
            self._verify_chunk, chunk=self.chunk_rows, workers=self.workers
        )

    #: Most rows in one chunk of work (one spaCy batch, one model batch, one worker's turn).
    #: CPU for 200 realistic rows in one process: 11.9-12.3 s at 16, 11.2-11.6 s at 32,
    #: 13.8-16.4 s at 1 (each call alone); smaller chunks share the last rows of a run
    #: between the workers more evenly.
    chunk_rows: int = 24
    #: Fewest rows arriving together that start the worker processes: each worker loads
    #: spaCy and the model itself (over a second of CPU), a row costs well under 0.1 s, so
    #: a few rows are done sooner in this process. The runner's second batch (16 rows, after
    #: a first of 8) starts them: at 64, a 200-row run kept its first 56 rows in one process
    #: (12.5 rows/s against 21.0 at 16 with --workers 2, bench/offline_speed.py).
    process_min_rows: int = 16

    # -- protocol -----------------------------------------------------------------------

    async def analyze(self, request: AnalyzeRequest) -> Analysis:
        store = self.store()
        if store is None:
            return await self._analyses.submit(request)
        found = store.analysis(request)
        if found is not None:
            return found
        analysis = await self._analyses.submit(request)
        store.put_analysis(request, analysis)
        return analysis

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification:
        store = self.store()
        if store is not None:
            return await self._verify_stored(store, blocks)
        return await self._verifications.submit(tuple(blocks))

    async def _analyze_chunk(self, requests: list[AnalyzeRequest], turn: int) -> list[Any]:
        return await self._run_chunk("analyze", requests, turn)

    async def _verify_chunk(self, calls: list[tuple[ClaimBlock, ...]], turn: int) -> list[Any]:
        return await self._run_chunk("verify", calls, turn)

    async def _run_chunk(self, op: str, items: list[Any], turn: int) -> list[Any]:
        """Outcomes of :meth:`analyze_many` or :meth:`verify_many` on ``items`` (a chunk
        of ``turn`` calls that came together): in a worker process when the judge has
        them, else (or when they fail) in a thread."""
        processes = self._worker_processes(turn)
        if processes is not None:
            try:
                outcomes, pairs = await processes.run(op, items)
            except WorkerFailed as exc:  # logged once by the pool; this process computes it
                self.process_failure = str(exc)
            else:
                with self._count_lock:
                    self.model_pairs += pairs
                return outcomes
        work = self.analyze_many if op == "analyze" else self.verify_many
        return await self._in_pool(work, items)

    def process_spec(self) -> dict[str, Any] | None:
        """The keyword arguments a worker process builds the same judge from, or None when
        it cannot (an embedder or a model object was given: those stay in this process)."""
        if self.semantic or self._model_spec is False:
            return None
        return {
            "calibration": self.calibration,
            "model": self._model_spec,
            "skip_decided": self.skip_decided,
            "decision": self.decision,
        }

    def _worker_processes(self, turn: int) -> JudgeProcesses | None:
        """The worker processes, started when ``turn`` calls came together and that is at
        least :attr:`process_min_rows` (fewer rows are done sooner in threads than two
        processes start); None when the judge works in threads."""
        if self.workers < 2:
            return None
        loop = asyncio.get_running_loop()
        if self._processes is not None and self._processes_loop is not loop:
            self._processes.kill()  # left by a run on another event loop
            self._processes = None
        if self._processes is None:
            if turn < self.process_min_rows:
                return None
            spec = self.process_spec()
            if spec is None:
                return None
            self._processes = JudgeProcesses(spec, self.workers)
            self._processes_loop = loop
            self._processes_started = True
        return self._processes

    @property
    def runs_in(self) -> str:
        """Where the chunks ran: "processes" (worker processes) or "threads" (this
        process: ``workers`` is 1, too few rows came together, a worker failed, or the
        judge holds an embedder or a model object a process cannot rebuild)."""
        if self._processes_started and self.process_failure is None:
            return "processes"
        return "threads"

    def warm_up(self) -> None:
        """Load spaCy's parser and the entailment model now (a worker process does, before
        its first chunk)."""
        self._parser_or_none()
        if self._uses_model:
            self._model_or_load()

    def analyze_many(self, requests: Sequence[AnalyzeRequest]) -> list[Analysis | Exception]:
        """:meth:`analyze_sync` of each request (an exception standing for a request that
        failed), the claims of all of them parsed in one spaCy batch."""
        nlp = self._parser_or_none()
        if nlp is not None and len(requests) > 1:
            texts: list[str] = []
            for request in requests:
                wants = request.wants or frozenset({"answer_claims", "reference_claims"})
                if "answer_claims" in wants:
                    texts.append(request.answer or "")
                if "reference_claims" in wants:
                    texts += read_references(request.question, request.references, nlp)
            # Fills claim_split's memo (same claims, one batch); on an error each request is
            # split again alone below, and fails alone.
            with contextlib.suppress(Exception):
                atomic_claims(texts, nlp)
        return outcomes_of(self.analyze_sync, requests)

    def verify_many(self, calls: Sequence[Sequence[ClaimBlock]]) -> list[Verification | Exception]:
        """:meth:`verify_sync` of each call's blocks (an exception standing for a call that
        failed), all blocks verified together: one parse batch and one model batch. Each
        block's verdicts depend on that block alone, so they equal the separate calls'."""
        if len(calls) == 1:
            return outcomes_of(self.verify_sync, calls)
        try:
            together = self.verify_sync([block for blocks in calls for block in blocks])
        except Exception:
            return outcomes_of(self.verify_sync, calls)
        return split_verification(together, [len(blocks) for blocks in calls])

    async def _in_pool(self, work: Callable[[Any], T], arg: Any) -> T:
        """``work(arg)`` in one of the judge's ``workers`` threads (the event loop stays free
        for the other rows and families)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="ragmeter-offline")
        return await asyncio.get_running_loop().run_in_executor(self._pool, work, arg)

    async def aclose(self) -> None:
        """Let the worker threads and processes go (a later call starts new ones)."""
        await self._analyses.aclose()
        await self._verifications.aclose()
        processes, self._processes = self._processes, None
        if processes is not None:
            await processes.aclose()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    async def _verify_stored(
        self, store: OfflineStore, blocks: Sequence[ClaimBlock]
    ) -> Verification:
        """:meth:`verify` with the blocks verified before read from the cache, the others
        computed in one call and stored."""
        found = store.verdicts(blocks)
        missing = [b for b, verdict in enumerate(found) if verdict is None]
        if missing:
            todo = [blocks[b] for b in missing]
            computed = await self._verifications.submit(tuple(todo))
            fresh = _block_verdicts(computed)
            store.put_verdicts(todo, fresh)
            for b, verdict in zip(missing, fresh, strict=True):
                found[b] = verdict
        verdicts = [v for v in found if v is not None]
        meta: dict[str, Any] = {
            "method": "offline",
            "judge": self.name,
            "cached": not missing,
            "support": tuple(support for _, support, _ in verdicts),
            "evidence": tuple(evidence or () for _, _, evidence in verdicts),
        }
        return Verification(matrices=tuple(m for m, _, _ in verdicts), meta=meta)

    def store(self) -> OfflineStore | None:
        """The cache as this judge reads it (None: not cached, see :meth:`cache_identity`)."""
        if self._store is None:
            identity = self.cache_identity() if self._cache is not None else None
            if self._cache is None or identity is None or not self._cache.enabled:
                self._store = False
            else:
                self._store = OfflineStore(self._cache, identity, name=self.name)
        return self._store or None

    def cache_identity(self) -> dict[str, Any] | None:
        """Everything besides the inputs that can change this judge's output (its name,
        calibration or decision, the model's weights by hash, the embedder, library
        versions), or None when a part cannot be identified (a model or embedder object
        without a ``name``): such a judge is never cached."""
        model = None
        if self._uses_model:
            if self._model is None:
                from ragmeter.models.claim_verifier import model_name

                model = model_name()
            else:
                model = getattr(self._model, "name", None)
                if not isinstance(model, str):
                    return None
        embedder = None
        if self.semantic:
            given = self._embedder
            if given is None:
                given = getattr(self._settings, "embedder", "offline")
            embedder = given if isinstance(given, str) else getattr(given, "name", None)
            if not isinstance(embedder, str):
                return None
        return {
            "judge": self.name,
            "calibration": self.calibration.as_dict(),
            "decision": self.decision.as_dict() if self.decision is not None else None,
            "skip_decided": self.skip_decided,
            "model": model,
            "embedder": embedder,
            "versions": runtime_versions(),
        }

    def describe(self) -> dict[str, Any]:
        if self.decision is not None:
            return {
                "name": self.name,
                "method": "offline-verifier: atomic claims; the trained entailment model "
                "decides every cell the words cannot settle",
                "model": self._model_description(),
                "questions": "offline-answer-sentences",
                "decision": self.decision.as_dict(),
                "rules": {
                    RULE_RESTATES: "an answer read with its question gives no support to a "
                    "claim that only restates the question",
                    RULE_NO_SHARED: "not entailed when at most "
                    f"{self.decision.min_share:.0%} of the claim's content words are in "
                    "the premise",
                    RULE_VERBATIM: "entailed when the premise holds the claim word for word",
                },
            }
        return {
            "name": self.name,
            "method": "offline-verifier: atomic claims, calibrated lexical"
            + (" + MiniLM" if self.semantic else "")
            + (" + trained entailment model (gated)" if self._uses_model else "")
            + " entailment",
            "model": self._model_description(),
            "questions": "offline-answer-sentences",
            "calibration": self.calibration.as_dict(),
            "hard_conflicts": "no entailment when a number, month or weekday of the claim is "
            f"missing from the premise, at most {self.calibration.min_content_share:.0%} of "
            "its content words are present, or the premise clause holding the claim's words "
            "has the opposite polarity, an antonym, or the claim's subject and object swapped",
        }


def split_verification(together: Verification, sizes: Sequence[int]) -> list[Verification]:
    """One :class:`Verification` of many calls' blocks cut back into one per call
    (``sizes``: each call's number of blocks)."""
    meta = together.meta
    out: list[Verification] = []
    start = 0
    for size in sizes:
        part = slice(start, start + size)
        start += size
        own = dict(meta)
        for key in ("support", "evidence"):
            if key in meta:
                own[key] = tuple(meta[key][part])
        out.append(Verification(matrices=tuple(together.matrices[part]), meta=own))
    return out


def _block_verdicts(verification: Verification) -> list[BlockVerdict]:
    """Each block's matrix, support and evidence from one :meth:`OfflineJudge.verify_sync`."""
    meta = verification.meta
    evidence = meta.get("evidence") or [None] * len(verification.matrices)
    return [
        (matrix, support, cells)
        for matrix, support, cells in zip(
            verification.matrices, meta["support"], evidence, strict=True
        )
    ]
