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

The pieces live beside this module in ``judges/offline/``: the features (``features``,
``model_features``, ``conflicts``), what is checked (``checks``), the calibrations
(``calibration``), the model-decides path (``verdict``), the analyze helpers (``analysis``,
``claim_split``, ``regex_claims``, ``reference_reading``) and the verdict store (``stored``).

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
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from ragmeter.cache import JudgeCache
from ragmeter.errors import ConfigError, ModelUnavailableError
from ragmeter.judges.base import (
    Analysis,
    AnalyzeRequest,
    ClaimBlock,
    Premise,
    Verification,
)
from ragmeter.judges.offline.analysis import (
    REGEX_ENTITIES,
    SPACY_ENTITIES,
    offline_questions,
    regex_entities,
)
from ragmeter.judges.offline.answer_reading import AnswerReading, read_as_answer
from ragmeter.judges.offline.batching import CallBatcher, outcomes_of
from ragmeter.judges.offline.binding import (
    ClaimWords,
    answer_conflict,
    claim_names,
    kind_words,
    parsed_words,
    subject_conflict,
)
from ragmeter.judges.offline.calibration import (
    ALL_FEATURES,
    GATE_FEATURE,
    LEXICAL_CALIBRATION,
    MODEL_CALIBRATION,
    SEMANTIC_CALIBRATION,
    VERSION,
    Calibration,
    hard_conflicts,
)
from ragmeter.judges.offline.checks import (
    QUESTION_WORDS,
    gated_cells,
    plan_checks,
    restated_cells,
)
from ragmeter.judges.offline.claim_split import (
    ATOMIC_METHOD,
    REGEX_METHOD,
    atomic_claims,
    is_noncommittal,
)
from ragmeter.judges.offline.conflicts import (
    conflict_features,
    covering_sentences,
    role_conflicts,
)
from ragmeter.judges.offline.features import (
    ALL_LEXICAL_FEATURES,
    LEXICAL_FEATURES,
    ClaimText,
    PremiseText,
    block_features,
    claim_features,
    prepare_block,
    prepare_claim,
    prepare_premise,
    stem,
)
from ragmeter.judges.offline.features import numbers as numbers_of
from ragmeter.judges.offline.model_features import (
    ANSWER_WINDOW_SENTENCES,
    NLI_FEATURES,
    WINDOW_SENTENCES,
    fill_nli_features,
)
from ragmeter.judges.offline.processes import JudgeProcesses, WorkerFailed
from ragmeter.judges.offline.reference_reading import read_references
from ragmeter.judges.offline.stored import BlockVerdict, OfflineStore, runtime_versions
from ragmeter.judges.offline.verdict import (
    MODEL,
    RULE_ANSWER,
    RULE_NO_SHARED,
    RULE_NUMBER,
    RULE_RESTATES,
    RULE_VERBATIM,
    ModelDecision,
    content_share,
    evidence_dict,
    sentence_spans,
    verbatim_span,
    window_span,
)
from ragmeter.models.claim_verifier import shipped_model_available
from ragmeter.settings import Settings
from ragmeter.text import split_sentences, tokens

__all__ = ["MODEL_DECISION", "OfflineJudge"]

_SEMANTIC = ALL_FEATURES.index("semantic")
_NLI_COLUMNS = [ALL_FEATURES.index(name) for name in NLI_FEATURES]
#: The columns ``conflict_features`` fills (the role rule is filled from a parse batch).
_RULE_COLUMNS = [ALL_FEATURES.index(name) for name in ("polarity_conflict", "antonym_conflict")]
_ROLE = ALL_FEATURES.index("role_conflict")
_SUBJECT = ALL_FEATURES.index("subject_conflict")
_ANSWER = ALL_FEATURES.index("answer_conflict")
#: Answers read with their question that :func:`read_as_answer` decides alone: one sentence
#: of up to this many tokens (a reference like "2000 GB." or "Mary Shelley wrote
#: Frankenstein in 1818."; a longer answer, or one of several sentences, is read by the
#: calibrated verifier).
ANSWER_RULE_TOKENS = 30
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


#: Pairs per onnxruntime call of the entailment model: the pairs of a chunk of rows run
#: sorted by length, so small batches waste little on padding (on the 219 pairs of 100
#: realistic rows, one thread: 4.0 s CPU at 8, 4.25 s at 16, 4.7 s at 1; the probabilities
#: are the same bit for bit at every size).
MODEL_BATCH = 8


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class OfflineJudge:
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

    # -- analyze ------------------------------------------------------------------------

    def analyze_sync(self, request: AnalyzeRequest) -> Analysis:
        """What :meth:`analyze` returns, without an event loop."""
        wants = request.wants or frozenset({"answer_claims", "reference_claims", "entities"})
        answer = request.answer or ""
        meta: dict[str, Any] = {"method": "offline", "judge": self.name, "cached": False}
        answer_claims: tuple[str, ...] = ()
        reference_claims: tuple[tuple[str, ...], ...] = ()
        if wants & {"answer_claims", "reference_claims"}:
            texts = [answer] if "answer_claims" in wants else []
            if "reference_claims" in wants:
                # A reference is read as the answer to its question: a leading pronoun takes
                # the question's subject ("It was completed in 1889." → "The Eiffel Tower ...").
                texts += read_references(
                    request.question, request.references, self._parser_or_none()
                )
            found, meta["claims_method"] = self.claims_of(texts)
            if "answer_claims" in wants:
                answer_claims, found = found[0], found[1:]
            if "reference_claims" in wants:
                reference_claims = tuple(found)
        reference_entities: tuple[str, ...] = ()
        context_entities: tuple[tuple[str, ...], ...] = ()
        if "entities" in wants:
            references = tuple(request.references)
            found, meta["entities_method"] = self._extract_entities(
                [*references, *request.contexts]
            )
            reference_entities = _unique(e for ents in found[: len(references)] for e in ents)
            context_entities = tuple(found[len(references) :])
        questions: tuple[str, ...] = ()
        noncommittal: bool | None = None
        if "questions" in wants:
            noncommittal = is_noncommittal(answer)
            questions = offline_questions(answer, request.n_questions)
            meta["questions_method"] = "offline-answer-sentences"
        parts = []
        if wants & {"answer_claims", "reference_claims"}:
            parts.append(meta["claims_method"])
        if "entities" in wants:
            parts.append(f"entities by {meta['entities_method']}")
        if "questions" in wants:
            parts.append("questions = offline-answer-sentences, noncommittal by patterns")
        meta["method"] = "offline: " + "; ".join(parts) if parts else "offline"
        return Analysis(
            answer_claims=answer_claims,
            reference_claims=reference_claims,
            reference_entities=reference_entities,
            context_entities=context_entities,
            questions=questions,
            noncommittal=noncommittal,
            meta=meta,
        )

    def claims_of(self, texts: list[str]) -> tuple[list[tuple[str, ...]], str]:
        """Atomic claims of each text (one parse batch): by spaCy's dependency parse when it
        is installed, else by the labelled regular-expression fallback."""
        nlp = self._parser_or_none()
        if nlp is None:
            return atomic_claims(texts, None), REGEX_METHOD
        return atomic_claims(texts, nlp), ATOMIC_METHOD

    def _parser_or_none(self) -> Any:
        """spaCy's parser (for claims and the role rule), loaded once; None without it."""
        if self._parser is None:
            try:
                from ragmeter.judges.offline.claim_split import load_parser

                self._parser = load_parser()
            except (ImportError, ModelUnavailableError):
                self._parser = False
        return self._parser or None

    def _extract_entities(self, texts: list[str]) -> tuple[list[tuple[str, ...]], str]:
        """Entities of each text: spaCy when installed, else the labelled regex fallback."""
        if not texts:
            return [], self._entities_method or SPACY_ENTITIES
        if self._entities_method != REGEX_ENTITIES:
            try:
                from ragmeter.models.entities import extract_entities

                found = extract_entities(texts)
            except (ImportError, ModelUnavailableError):
                self._entities_method = REGEX_ENTITIES
            else:
                self._entities_method = SPACY_ENTITIES
                return found, SPACY_ENTITIES
        from ragmeter.models.entities import normalize_entity

        found = [_unique(filter(None, map(normalize_entity, regex_entities(t)))) for t in texts]
        return found, REGEX_ENTITIES

    # -- verify -------------------------------------------------------------------------

    def verify_sync(self, blocks: Sequence[ClaimBlock]) -> Verification:
        """Verdict matrices for ``blocks`` (claims × premises each), without an event loop."""
        if self.decision is not None:
            supports, evidence = self.decide(blocks)
            verdicts = [v >= self.decision.threshold for v in supports]
        else:
            # The features and the evidence spans read the same prepared texts.
            claims: dict[str, ClaimText] = {}
            premises: dict[str, PremiseText] = {}
            supports, conflicts, readings = self._read(blocks, claims, premises)
            threshold = self.calibration.threshold
            verdicts = [(v >= threshold) & ~c for v, c in zip(supports, conflicts, strict=True)]
            for verdict, read in zip(verdicts, readings, strict=True):
                for (i, j), reading in read.items():
                    verdict[i, j] = reading.entailed
            evidence = self._calibrated_evidence(
                blocks, supports, conflicts, readings, claims, premises
            )
        meta: dict[str, Any] = {
            "method": "offline",
            "judge": self.name,
            "cached": False,
            "support": tuple(
                tuple(tuple(round(float(v), 4) for v in row) for row in s) for s in supports
            ),
        }
        meta["evidence"] = evidence
        return Verification(
            matrices=tuple(tuple(tuple(bool(v) for v in row) for row in m) for m in verdicts),
            meta=meta,
        )

    def _calibrated_evidence(
        self,
        blocks: Sequence[ClaimBlock],
        supports: Sequence[np.ndarray],
        conflicts: Sequence[np.ndarray],
        readings: Sequence[dict[tuple[int, int], AnswerReading]],
        claim_texts: dict[str, ClaimText],
        premise_texts: dict[str, PremiseText],
    ) -> tuple[tuple[tuple[dict[str, Any], ...], ...], ...]:
        """Evidence of the calibrated verifier's cells: its support, "calibrated" (or
        "rule:hard_conflict" where a conflict vetoed it, "rule:answer" where a short
        answer read with its question decided), the span of the claim's best two-sentence
        window of the premise, and uncertain when the support is within the calibration's
        ``uncertain_margin`` of its threshold (a vetoed or ruled cell is certain).
        ``claim_texts`` and ``premise_texts``: texts prepared before (more are added)."""
        premises: dict[str, tuple[PremiseText, list[tuple[int, int]]]] = {}
        out = []
        for block, support, conflict, read in zip(
            blocks, supports, conflicts, readings, strict=True
        ):
            rows = []
            for i, claim in enumerate(block.claims):
                if claim not in claim_texts:
                    claim_texts[claim] = prepare_claim(claim)
                content = claim_texts[claim].content
                cells = []
                for j, given in enumerate(block.premises):
                    text = given.text  # spans are offsets into it
                    if text not in premises:
                        if text not in premise_texts:
                            premise_texts[text] = prepare_premise(text)
                        premise = premise_texts[text]
                        premises[text] = (premise, sentence_spans(premise))
                    premise, spans = premises[text]
                    first, last = window_span(content, premise, width=WINDOW_SENTENCES)
                    span = [(spans[first][0], spans[last - 1][1])] if last > first else []
                    value = float(support[i, j])
                    reading = read.get((i, j))
                    if reading is not None:
                        cell = evidence_dict(value, RULE_ANSWER, span)
                        cell["why"] = reading.why
                        cells.append(cell)
                    elif conflict[i, j]:
                        cells.append(evidence_dict(value, "rule:hard_conflict", span))
                    else:
                        unsure = self.calibration.uncertain(value)
                        cells.append(evidence_dict(value, "calibrated", span, uncertain=unsure))
                rows.append(tuple(cells))
            out.append(tuple(rows))
        return tuple(out)

    def support(self, blocks: Sequence[ClaimBlock]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Support probabilities and hard-conflict flags, one claims × premises array per block
        (when the model decides, a cell is entailed exactly when its support reaches the
        threshold, and no flag is set)."""
        if self.decision is not None:
            supports = self.decide(blocks)[0]
            return supports, [np.zeros(s.shape, dtype=bool) for s in supports]
        supports, conflicts, readings = self._read(blocks, {}, {})
        for support, conflict, read in zip(supports, conflicts, readings, strict=True):
            for (i, j), reading in read.items():
                # a ruled cell: entailed exactly when the rule says so
                conflict[i, j] = not reading.entailed
                if reading.entailed:
                    support[i, j] = max(support[i, j], self.calibration.threshold)
        return supports, conflicts

    def _read(
        self,
        blocks: Sequence[ClaimBlock],
        claim_texts: dict[str, ClaimText],
        premise_texts: dict[str, PremiseText],
    ) -> tuple[list[np.ndarray], list[np.ndarray], list[dict[tuple[int, int], AnswerReading]]]:
        """:meth:`support` of the calibrated verifier, and the cells a short answer read
        with its question decides (:mod:`~ragmeter.judges.offline.answer_reading`: their
        support is the rule's), the texts it prepares kept in ``claim_texts`` and
        ``premise_texts``."""
        supports: list[np.ndarray] = []
        conflicts: list[np.ndarray] = []
        readings: list[dict[tuple[int, int], AnswerReading]] = []
        features = self._features(blocks, claim_texts, premise_texts)
        for block, feats, restated in zip(blocks, *features, strict=True):
            z = feats[..., self._columns] @ self._weights + self.calibration.bias
            support = _sigmoid(z)
            support[restated] = 0.0
            conflict = hard_conflicts(feats, self.calibration.min_content_share)
            read = _answer_readings(block)
            for (i, j), reading in read.items():
                support[i, j] = reading.support
                conflict[i, j] = False
            supports.append(support)
            conflicts.append(conflict)
            readings.append(read)
        return supports, conflicts, readings

    def decide(
        self, blocks: Sequence[ClaimBlock]
    ) -> tuple[list[np.ndarray], tuple[tuple[tuple[dict[str, Any], ...], ...], ...]]:
        """Support (claims × premises per block) and each cell's evidence when the model
        decides: the rules of :mod:`~ragmeter.judges.offline.verdict` settle what the words
        can, the model reads the rest in one batch."""
        decision = self.decision
        if decision is None:
            raise ConfigError("decide() needs the trained model (a judge with a decision).")
        supports, evidence, reads = self.read_cells(blocks)
        for (b, i, j, span), (p_entail, p_contra, share, missing) in reads.items():
            if decision.number_rule and missing:
                evidence[b][i][j] = evidence_dict(0.0, RULE_NUMBER, [span])
                continue
            value = decision.support(p_entail, p_contra, share)
            supports[b][i, j] = value
            evidence[b][i][j] = evidence_dict(
                value, MODEL, [span], uncertain=decision.uncertain(value)
            )
        frozen = tuple(tuple(tuple(row) for row in cells) for cells in evidence)
        return supports, frozen

    def read_cells(
        self, blocks: Sequence[ClaimBlock]
    ) -> tuple[
        list[np.ndarray],
        list[list[list[dict[str, Any]]]],
        dict[tuple[int, int, int, tuple[int, int]], tuple[float, float, float, bool]],
    ]:
        """What :meth:`decide` reads: supports and evidence of the cells a rule settles, and
        for every other cell ``(block, claim, premise, span)`` the model's entailment and
        contradiction probabilities on its evidence window, the claim's content share, and
        whether a number of the claim is missing from the premise."""
        min_share = self.decision.min_share if self.decision is not None else 0.0
        claims: dict[str, ClaimText] = {}
        premises: dict[str, PremiseText] = {}

        def claim_of(text: str) -> ClaimText:
            if text not in claims:
                claims[text] = prepare_claim(text)
            return claims[text]

        def premise_of(text: str) -> PremiseText:
            if text not in premises:
                premises[text] = prepare_premise(text)
            return premises[text]

        supports = [np.zeros((len(b.claims), len(b.premises))) for b in blocks]
        evidence: list[list[list[dict[str, Any]]]] = []
        #: (block, claim, premise, span), the window as the model reads it, the claim, share,
        #: a claim number missing from the premise.
        asks: list[tuple[tuple[int, int, int, tuple[int, int]], str, str, float, bool]] = []
        for b, block in enumerate(blocks):
            plan = plan_checks(block)
            restated = restated_cells(block, plan, claims)
            cells: list[list[dict[str, Any]]] = [[{} for _ in block.premises] for _ in block.claims]
            evidence.append(cells)
            for j, (text, claims_as, question) in enumerate(plan):
                premise = premise_of(text)
                spans = sentence_spans(premise)
                for i, claim_as in enumerate(claims_as):
                    read = block.claims[i] if question is not None else claim_as
                    if restated[i, j]:
                        cells[i][j] = evidence_dict(0.0, RULE_RESTATES, [])
                        continue
                    share = content_share(claim_of(claim_as), premise)
                    if claim_of(claim_as).content and share <= min_share:
                        cells[i][j] = evidence_dict(0.0, RULE_NO_SHARED, [])
                        continue
                    found = verbatim_span(read, text)
                    if found is not None:
                        supports[b][i, j] = 1.0
                        cells[i][j] = evidence_dict(1.0, RULE_VERBATIM, [found])
                        continue
                    width = WINDOW_SENTENCES if question is None else ANSWER_WINDOW_SENTENCES
                    first, last = window_span(claim_of(read).content, premise, width=width)
                    window = " ".join(premise.sentences[first:last]) or text
                    if question is not None:
                        words = question.split(maxsplit=QUESTION_WORDS)[:QUESTION_WORDS]
                        window = " ".join(words) + " " + window
                    span = (spans[first][0], spans[last - 1][1]) if last > first else (0, len(text))
                    missing = (
                        not numbers_of(read if question is None else claim_as) <= premise.numbers
                    )
                    asks.append(((b, i, j, span), window, read, share, missing))
        reads: dict[tuple[int, int, int, tuple[int, int]], tuple[float, float, float, bool]] = {}
        if asks:
            probs = self._model_or_load().probabilities([(w, c) for _, w, c, _, _ in asks])
            with self._count_lock:  # verify runs in worker threads
                self.model_pairs += len(asks)
            for k, (key, _, _, share, missing) in enumerate(asks):
                p_e, p_c = float(probs.entailment[k]), float(probs.contradiction[k])
                reads[key] = (p_e, p_c, share, missing)
        return supports, evidence, reads

    def features(self, blocks: Sequence[ClaimBlock]) -> list[np.ndarray]:
        """The verifier's features: one claims × premises × ``ALL_FEATURES`` array per block.

        Features the calibration does not use are left at 0 (``semantic`` without an
        embedder, the block features for a calibration without them). Every text is
        tokenised once per call, and every sentence that needs an embedding is embedded in
        one batch.
        """
        return self._features(blocks)[0]

    def _features(
        self,
        blocks: Sequence[ClaimBlock],
        claim_cache: dict[str, ClaimText] | None = None,
        premise_cache: dict[str, PremiseText] | None = None,
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """:meth:`features`, and :func:`restates_question` of each block from the same
        prepared claims (kept in ``claim_cache`` and ``premise_cache`` when given)."""
        claim_cache = {} if claim_cache is None else claim_cache
        premise_cache = {} if premise_cache is None else premise_cache
        plans = [plan_checks(block) for block in blocks]
        for block, plan in zip(blocks, plans, strict=True):
            for c in block.claims:
                if c not in claim_cache:
                    claim_cache[c] = prepare_claim(c)
            for premise, claims_as, _ in plan:
                if premise not in premise_cache:
                    premise_cache[premise] = prepare_premise(premise)
                for c in claims_as:
                    if c not in claim_cache:
                        claim_cache[c] = prepare_claim(c)
        semantic = self._semantic_table(claim_cache, premise_cache) if self.semantic else None
        n_lex = len(LEXICAL_FEATURES)
        n_all = len(ALL_LEXICAL_FEATURES)
        out: list[np.ndarray] = []
        restated: list[np.ndarray] = []
        #: (block, claim, premise) cells a premise sentence covers, for the role rule.
        covered: list[tuple[int, int, int, str, tuple[str, ...]]] = []
        words = self._words_of(
            [c for plan in plans for _, claims_as, q in plan if q is None for c in claims_as]
        )
        for b, (block, plan) in enumerate(zip(blocks, plans, strict=True)):
            feats = np.zeros((len(block.claims), len(block.premises), len(ALL_FEATURES)))
            claims = [claim_cache[c] for c in block.claims]
            shared = prepare_block(claims) if claims else None  # the gate reads a block feature
            asked = frozenset(prepare_claim(block.question).content) if block.question else None
            for j, (premise_text, claims_as, _) in enumerate(plan):
                premise = premise_cache[premise_text]
                idf = shared.idf(premise) if shared is not None else None
                for i, claim_text in enumerate(claims_as):
                    claim = claim_cache[claim_text]
                    feats[i, j, :n_lex] = claim_features(claim, premise)
                    if idf is not None:
                        feats[i, j, n_lex:n_all] = block_features(claim, premise, idf)
                    if plan[j][2] is None:
                        found = words[claim_text]
                        # the passage may write the claim's subject as "it" or "the town"
                        bound = frozenset(stem(n) for n in found.names) | set(found.subject)
                        feats[i, j, _RULE_COLUMNS] = conflict_features(claim, premise, bound)
                        if sentences := covering_sentences(claim, premise):
                            covered.append((b, i, j, claim_text, sentences))
                        feats[i, j, _SUBJECT] = subject_conflict(
                            found.names,
                            claim,
                            premise,
                            kind_words(claim_text),
                            frozenset(found.subject),
                        )
                        if asked:
                            feats[i, j, _ANSWER] = answer_conflict(found, claim, asked, premise)
                    else:
                        feats[i, j, _RULE_COLUMNS] = conflict_features(claim, premise)
                    if semantic is not None:
                        feats[i, j, _SEMANTIC] = semantic(claim_text, premise_text)
            out.append(feats)
            restated.append(restated_cells(block, plan, claim_cache))
        self._fill_roles(out, covered)
        if self._uses_model:
            wanted = [self._model_decides(f) for f in out]
            for block, want in zip(blocks, wanted, strict=True):
                for j, premise in enumerate(block.premises):
                    if _ruled_answer(premise) is not None:
                        want[:, j] = False  # the answer reading decides these cells
            cells = gated_cells(blocks, plans, restated, claim_cache, premise_cache, wanted)
            checked = fill_nli_features(out, cells, self._model_or_load(), columns=_NLI_COLUMNS)
            with self._count_lock:  # verify runs in worker threads
                self.model_pairs += checked
        return out, restated

    def _words_of(self, claims: list[str]) -> dict[str, ClaimWords]:
        """What binding reads of each claim (:mod:`~ragmeter.judges.offline.binding`): its
        proper nouns, nouns and adjectives by spaCy's tagger, one batch; without spaCy,
        capitalised words after the first as names and no values."""
        distinct = list(dict.fromkeys(claims))
        nlp = self._parser_or_none() if distinct else None
        if nlp is None:
            return {c: ClaimWords(claim_names(c)) for c in distinct}
        from ragmeter.models.syntax import tag

        return {c: parsed_words(d) for c, d in zip(distinct, tag(nlp, distinct), strict=True)}

    def _fill_roles(
        self, feats: list[np.ndarray], covered: list[tuple[int, int, int, str, tuple[str, ...]]]
    ) -> None:
        """``role_conflict`` of the cells a premise sentence covers (left at 0 without
        spaCy's parser)."""
        nlp = self._parser_or_none() if covered else None
        if nlp is None:
            return
        found = role_conflicts(nlp, [(c, sents) for *_, c, sents in covered])
        for (b, i, j, _, _), swapped in zip(covered, found, strict=True):
            feats[b][i, j, _ROLE] = float(swapped)

    def _model_decides(self, feats: np.ndarray) -> np.ndarray:
        """Cells (claims × premises) the model is run on: above the content-share gate, and
        (``skip_decided``) whose verdict the model's features can still change, given the
        calibration's weights on them and the cell's other features (a hard conflict, or a
        lexical support so low or so high that no model output moves it across the
        threshold, decides the verdict alone)."""
        gate = feats[..., ALL_FEATURES.index(GATE_FEATURE)] > self.calibration.min_content_share
        if not self.skip_decided:
            return gate
        lexical, low, high, cut = self._model_reach
        z = feats[..., self._columns[lexical]] @ self._weights[lexical] + self.calibration.bias
        undecided = (z + high >= cut) & (z + low < cut)
        return gate & undecided & ~hard_conflicts(feats, self.calibration.min_content_share)

    def _model_or_load(self) -> Any:
        if self._model is None:
            from ragmeter.models.claim_verifier import ClaimVerifierModel

            self._model = ClaimVerifierModel(batch_size=MODEL_BATCH)
        return self._model

    def _model_description(self) -> str | None:
        if not self._uses_model:
            return None
        if self.decision is not None:
            gate = "reads every cell no rule settles, against the claim's evidence window"
        else:
            share = self.calibration.min_content_share
            gate = (
                f"checks a cell when more than {share:.0%} of the claim's content words are present"
            )
        if self._model is not None:
            name = self._model.name
        else:
            from ragmeter.models.claim_verifier import model_name

            name = model_name()
        return f"{name}; {gate}"

    def _embedder_or_make(self) -> Any:
        if self._embedder is None:
            from ragmeter.models.embeddings import make_embedder

            spec = getattr(self._settings, "embedder", "offline")
            self._embedder = make_embedder(spec, self._settings)
        return self._embedder

    def _semantic_table(
        self, claims: dict[str, ClaimText], premises: dict[str, PremiseText]
    ) -> Any:
        texts: dict[str, int] = {}
        for c in claims:
            texts.setdefault(c, len(texts))
        for p in premises.values():
            for s in p.sentences:
                texts.setdefault(s, len(texts))
        if not texts:
            return lambda c, p: 0.0
        vectors = np.asarray(self._embedder_or_make().embed(list(texts)), dtype=float)
        best: dict[tuple[str, str], float] = {}

        def similarity(c: str, p: str) -> float:
            key = (c, p)
            if key not in best:
                rows = [texts[s] for s in premises[p].sentences]
                best[key] = float(np.max(vectors[rows] @ vectors[texts[c]])) if rows else 0.0
            return best[key]

        return similarity


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


def _ruled_answer(premise: Premise) -> tuple[str, str] | None:
    """``(question, answer)`` when ``premise`` is a short answer read with its question that
    :func:`read_as_answer` decides (one sentence of at most :data:`ANSWER_RULE_TOKENS`),
    else None."""
    question, answer = premise.question, premise.text
    if question is None or len(tokens(answer)) > ANSWER_RULE_TOKENS:
        return None
    return (question, answer) if len(split_sentences(answer)) <= 1 else None


def _answer_readings(block: ClaimBlock) -> dict[tuple[int, int], AnswerReading]:
    """The cells of ``block`` whose premise is a short answer read with its question, each
    with :func:`read_as_answer`'s verdict on the claim as written."""
    out: dict[tuple[int, int], AnswerReading] = {}
    for j, premise in enumerate(block.premises):
        parts = _ruled_answer(premise)
        if parts is None:
            continue
        question, answer = parts
        for i, claim in enumerate(block.claims):
            out[i, j] = read_as_answer(claim, question, answer)
    return out


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


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
