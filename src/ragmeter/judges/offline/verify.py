"""The verify side of the offline judge: every (claim, premise) cell's support, conflicts
and evidence, and the verdicts made of them (:class:`ClaimVerifying`, a base of
:class:`~ragmeter.judges.offline.judge.OfflineJudge`, which holds the settings, the models
and the processes these methods read).

The calibrated verdict (the default) and the model-decides verdict (``decision=``) are
described in :mod:`ragmeter.judges.offline.judge` and ``docs/verdicts.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError
from ragmeter.judges.base import (
    ClaimBlock,
    Premise,
    Verification,
)
from ragmeter.judges.offline.answer_reading import AnswerReading, read_as_answer
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
    hard_conflicts,
)
from ragmeter.judges.offline.checks import (
    QUESTION_WORDS,
    gated_cells,
    plan_checks,
    restated_cells,
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
from ragmeter.judges.offline.model_features import (
    ANSWER_WINDOW_SENTENCES,
    NLI_FEATURES,
    WINDOW_SENTENCES,
    fill_nli_features,
)
from ragmeter.judges.offline.quantities import unbound_quantities
from ragmeter.judges.offline.verdict import (
    MODEL,
    RULE_ANSWER,
    RULE_NO_SHARED,
    RULE_NUMBER,
    RULE_RESTATES,
    RULE_VERBATIM,
    content_share,
    evidence_dict,
    sentence_spans,
    verbatim_span,
    window_span,
)
from ragmeter.text import split_sentences, tokens

__all__ = ["ANSWER_RULE_TOKENS", "MODEL_BATCH", "ClaimVerifying"]

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
#: Pairs per onnxruntime call of the entailment model: the pairs of a chunk of rows run
#: sorted by length, so small batches waste little on padding (on the 219 pairs of 100
#: realistic rows, one thread: 4.0 s CPU at 8, 4.25 s at 16, 4.7 s at 1; the probabilities
#: are the same bit for bit at every size).
MODEL_BATCH = 8


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class ClaimVerifying:
    """The verify methods of :class:`~ragmeter.judges.offline.judge.OfflineJudge`."""

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
        whether a quantity of the claim is unbound in the premise
        (``quantities.unbound_quantities``, as the calibrated verdict's ``missing_numbers``)."""
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
                    # a quantity the premise does not give, read with its unit and
                    # converted ("10 GB" is not "10 members"; 300,000 km/s is 299,792,458 m/s)
                    said = read if question is None else claim_as
                    missing = bool(claim_of(said).numbers) and unbound_quantities(said, text) > 0
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
