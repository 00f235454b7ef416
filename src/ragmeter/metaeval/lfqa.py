"""Meta-evaluation ``lfqa``: faithfulness metrics against human sentence support.

Data: LFQA-Verification (Chen et al. 2023), in ``lfqa_verification/`` of the data folder:
600 answers (6 systems x 100 ELI5 questions) with their retrieved documents, 3,993 answer
sentences each labelled supported (1) / partially (0.5) / not_supported (0) by three people.
``annotations-gpt3_whudoc.json`` goes with ``docs-human.json``, every other file with
``docs-webgpt.json`` (the source repository's own mapping is wrong for whudoc).

Metrics compared with the human score (answer: mean over its sentences):

* ``k_precision``: Unitxt's K-Precision, best single document (max over contexts);
* ``k_precision_joined``: the same with the documents joined into one text;
* ``faithfulness``: the offline verifier's claim faithfulness, the share of the answer's
  claims entailed by at least one document (verdicts as the claims family uses them);
* ``faithfulness_support``: the registered graded twin, the mean over claims of the
  verifier's calibrated support probability for the best document;
* ``hallucination``: the share of claims no document entails (LFQA has no reference answer,
  so every claim counts as unverified: 1 - faithfulness; its correlation is expected
  negative).

With a judge other than the offline verifier (``judge="openai:MODEL"``,
``Settings(verifier="nli:PATH")``), ``faithfulness`` and ``faithfulness_support`` are that
judge's, scored sentence by sentence (:func:`judged_scores`).

At answer level: Spearman and Kendall per system (averaged over the six) and pooled (600).
At sentence level: Spearman and Kendall pooled over the 3,993 sentences (a sentence's score is
the mean over its claims). ``ragmeter meta-eval lfqa --data DIR`` prints the table;
``bench/meta/lfqa.py`` adds the team's variants (the MiniLM verifier, leave-one-system-out
refits, question splits).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError
from ragmeter.metaeval.common import data_file
from ragmeter.metaeval.stats import correlation

__all__ = [
    "FOLDER",
    "JUDGED_METRICS",
    "SYSTEMS",
    "Answer",
    "correlations",
    "is_judged",
    "judged_scores",
    "k_precision_scores",
    "load_answers",
    "markdown",
    "per_system_limit",
    "run",
    "sentence_claims",
    "title",
    "verifier_scores",
]

#: The folder of the data folder that holds LFQA-Verification.
FOLDER = "lfqa_verification"
SYSTEMS: tuple[str, ...] = ("alpaca", "alpaca_wdoc", "gpt3", "gpt3_wdoc", "gpt3_whudoc", "webgpt")
LABEL_SCORE = {"supported": 1.0, "partially": 0.5, "not_supported": 0.0}
#: Metrics measured with a judge other than the offline verifier.
JUDGED_METRICS = ("faithfulness", "faithfulness_support")


@dataclass(frozen=True, slots=True)
class Answer:
    system: str
    question_id: int
    question: str
    sentences: tuple[str, ...]
    #: Mean human label of each sentence.
    human: tuple[float, ...]
    documents: tuple[str, ...]


def load_answers(folder: Path) -> list[Answer]:
    """The annotated answers of ``folder`` (``lfqa_verification/`` of the data folder), each
    with the documents its annotators saw."""
    docs = {}
    for name in ("human", "webgpt"):
        path = data_file(folder, f"docs/docs-{name}.json")
        docs[name] = {row["question_id"]: row for row in json.loads(path.read_text("utf-8"))}
    out: list[Answer] = []
    for system in SYSTEMS:
        table = docs["human"] if system == "gpt3_whudoc" else docs["webgpt"]
        path = data_file(folder, f"annotations/annotations-{system}.json")
        for row in json.loads(path.read_text("utf-8")):
            notes = row["annotations"]
            out.append(
                Answer(
                    system=system,
                    question_id=row["question_id"],
                    question=row["question"],
                    sentences=tuple(n["answer"].strip() for n in notes),
                    human=tuple(
                        float(np.mean([LABEL_SCORE[label] for label in n["labels"]])) for n in notes
                    ),
                    documents=tuple(d["text"] for d in table[row["question_id"]]["docs"]),
                )
            )
    return out


def per_system_limit(answers: Sequence[Answer], limit: int | None) -> list[Answer]:
    """The first ``limit`` answers of each system (all of them when ``limit`` is None)."""
    if limit is None:
        return list(answers)
    seen: dict[str, int] = {}
    kept = []
    for a in answers:
        seen[a.system] = seen.get(a.system, 0) + 1
        if seen[a.system] <= limit:
            kept.append(a)
    return kept


# ----------------------------------------------------------------------------- correlation


def _corr(x: Sequence[float | None], y: Sequence[float]) -> dict[str, float | None]:
    """Spearman and Kendall (tau-b) over the items whose score is defined (``None`` left
    out); both ``None`` with fewer than three items or a constant side."""
    xs = [v for v in x if v is not None]
    ys = [h for v, h in zip(x, y, strict=True) if v is not None]
    if len(xs) < 3:
        return {"spearman": None, "kendall": None}
    found = correlation(xs, ys)
    return {"spearman": found.spearman, "kendall": found.kendall}


def correlations(
    answers: Sequence[Answer],
    answer_scores: Sequence[float | None],
    sentence_scores: Sequence[Sequence[float | None]],
) -> dict[str, Any]:
    """Answer level per system, averaged and pooled; sentence level pooled. An undefined
    score (``None``) leaves its answer or sentence out."""
    human = [float(np.mean(a.human)) for a in answers]
    per_system = {}
    for system in SYSTEMS:
        idx = [i for i, a in enumerate(answers) if a.system == system]
        if idx:
            per_system[system] = _corr([answer_scores[i] for i in idx], [human[i] for i in idx])
    defined = [v for v in per_system.values() if v["spearman"] is not None]
    average = {
        key: float(np.mean([v[key] for v in defined])) if defined else None
        for key in ("spearman", "kendall")
    }
    flat_scores = [s for scores in sentence_scores for s in scores]
    flat_human = [h for a in answers for h in a.human]
    return {
        "answer_average": average,
        "answer_pooled": _corr(answer_scores, human),
        "answer_per_system": per_system,
        "sentence": _corr(flat_scores, flat_human),
        "n_answers": sum(v is not None for v in answer_scores),
        "n_sentences": sum(v is not None for v in flat_scores),
    }


# ----------------------------------------------------------------------------- metrics


def k_precision_scores(answers: Sequence[Answer], *, joined: bool) -> tuple[list, list]:
    """K-Precision of each answer and of each of its sentences against its documents (joined
    into one text with ``joined``)."""
    from ragmeter.scoring.lexical import k_precision

    def score(text: str, docs: Sequence[str]) -> float:
        value = k_precision(text, [" ".join(docs)] if joined else list(docs)).value
        return 0.0 if value is None else value

    answer_scores = [score(" ".join(a.sentences), a.documents) for a in answers]
    sentence_scores = [[score(s, a.documents) for s in a.sentences] for a in answers]
    return answer_scores, sentence_scores


def sentence_claims(judge: Any, sentences: Sequence[str]) -> list[list[str]]:
    """The claims of each sentence, cut as ``judge`` (an ``OfflineJudge``) cuts an answer at
    run time; a sentence the splitter gives no claim (framing, a hedge) is checked whole,
    so every annotated sentence has a score."""
    found, _ = judge.claims_of(list(sentences))
    return [list(c) or [s] for c, s in zip(found, sentences, strict=True)]


def verifier_scores(
    answers: Sequence[Answer], judge: Any, *, batch: int = 64
) -> dict[str, tuple[list, list]]:
    """Claim faithfulness (verdicts), faithfulness_support (graded) and hallucination of
    ``judge`` (an ``OfflineJudge``) per answer, computed as the claims family computes them."""
    from ragmeter.judges.base import ClaimBlock

    out: dict[str, tuple[list, list]] = {
        "faithfulness": ([], []),
        "faithfulness_support": ([], []),
        "hallucination": ([], []),
    }
    for start in range(0, len(answers), batch):
        chunk = answers[start : start + batch]
        per_sentence = [sentence_claims(judge, a.sentences) for a in chunk]
        blocks = [
            ClaimBlock([c for cs in claims for c in cs], a.documents)
            for a, claims in zip(chunk, per_sentence, strict=True)
        ]
        supports, conflicts = judge.support(blocks)
        threshold = judge.calibration.threshold
        for claims, s, c in zip(per_sentence, supports, conflicts, strict=True):
            verdict = ((s >= threshold) & ~c).any(axis=1) if s.size else np.zeros(len(s), bool)
            soft = s.max(axis=1) if s.size else np.zeros(len(s))
            sizes = [len(cs) for cs in claims]
            bounds = np.cumsum([0, *sizes])
            for name, values in (
                ("faithfulness", verdict.astype(float)),
                ("faithfulness_support", soft),
                ("hallucination", 1.0 - verdict.astype(float)),
            ):
                # A sentence without claims (no tokens) scores as unsupported.
                sent = [
                    float(values[b:e].mean()) if e > b else (1.0 if name == "hallucination" else 0)
                    for b, e in itertools.pairwise(bounds)
                ]
                whole = float(values.mean()) if len(values) else float(np.mean(sent))
                out[name][0].append(whole)
                out[name][1].append(sent)
    return out


def judged_scores(answers: Sequence[Answer], judge: str, *, settings: Any = None) -> dict[str, Any]:
    """The claim metrics of ``judge`` (e.g. ``openai:MODEL``) with ``settings`` (a
    ``Settings``: the endpoint, the verifier), sentence by sentence.

    Each annotated sentence is scored as an answer of its own against the answer's
    documents, through :func:`ragmeter.evaluate` (judge cache, retries, per-row failures);
    an answer's score is the mean over its sentences with a defined score, as the human
    answer score is the mean over its sentences. Undefined sentences (no claims) and failed
    ones are left out of the correlations and counted.
    """
    from ragmeter.metaeval.common import SuiteOptions, score_samples
    from ragmeter.settings import Settings

    samples = [
        {"question": a.question, "answer": sentence, "contexts": list(a.documents)}
        for a in answers
        for sentence in a.sentences
    ]
    options = SuiteOptions(judge=judge, settings=settings or Settings())
    who = options.judge_name()
    scored = score_samples(samples, JUDGED_METRICS, options)
    if scored.unavailable:
        name, why = next(iter(scored.unavailable.items()))
        raise ConfigError(f"{name} cannot run with {who}: {why}")
    results: dict[str, Any] = {}
    counts: dict[str, dict[str, int]] = {}
    for metric in JUDGED_METRICS:
        values = iter(scored.values[metric])
        per_sentence = [[next(values) for _ in a.sentences] for a in answers]
        per_answer = [
            float(np.mean(defined)) if (defined := [v for v in sent if v is not None]) else None
            for sent in per_sentence
        ]
        results[f"{metric} ({who}, per sentence)"] = correlations(answers, per_answer, per_sentence)
        counts[metric] = {
            "failed": scored.n_failed(metric),
            "undefined": scored.n_undefined(metric),
        }
    return {
        "results": results,
        "counts": counts,
        "judge": scored.judge,
        "who": who,
        "seconds": scored.seconds,
    }


def is_judged(judge: str, settings: Any) -> bool:
    """Whether ``judge`` and ``settings`` measure a judge other than the offline verifier."""
    return judge != "offline" or settings.verifier not in ("judge", "offline")


def run(
    answers: Sequence[Answer],
    *,
    judge: str = "offline",
    settings: Any = None,
    verifiers: Sequence[tuple[str, Any]] | None = None,
    after_verifier: Callable[[str, Any], dict[str, Any]] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """K-Precision, then the offline verifier's claim metrics (or ``judge``'s, sentence by
    sentence), correlated with the human scores: ``{"results", "seconds", ...}``.

    ``verifiers`` are ``(suffix, OfflineJudge)`` pairs measured in turn (default: the shipped
    verifier, no suffix); ``after_verifier(suffix, judge)`` may add rows after each.
    """
    from ragmeter.settings import Settings

    settings = settings or Settings()
    results: dict[str, Any] = {}
    timings: dict[str, float] = {}
    for name, joined in (("k_precision", False), ("k_precision_joined", True)):
        t0 = time.perf_counter()
        results[name] = correlations(answers, *k_precision_scores(answers, joined=joined))
        timings[name] = time.perf_counter() - t0
    if is_judged(judge, settings):
        judged = judged_scores(answers, judge, settings=settings)
        results.update(judged["results"])
        timings.update({name: judged["seconds"] for name in judged["results"]})
        log(
            f"{judged['who']}: {sum(len(a.sentences) for a in answers)} sentences in "
            f"{judged['seconds']:.1f} s; failed / undefined: {judged['counts']}"
        )
        return {
            "results": results,
            "seconds": timings,
            "judged": judged["counts"],
            "judge": judged["judge"],
        }
    if verifiers is None:
        from ragmeter.judges.offline.judge import OfflineJudge

        verifiers = [("", OfflineJudge())]
    for suffix, verifier in verifiers:
        t0 = time.perf_counter()
        scores = verifier_scores(answers, verifier)
        elapsed = time.perf_counter() - t0
        for name, (answer_scores, sentence_scores) in scores.items():
            results[f"{name}{suffix}"] = correlations(answers, answer_scores, sentence_scores)
            timings[f"{name}{suffix}"] = elapsed
        log(f"{verifier.name}: {len(answers)} answers in {elapsed:.1f} s")
        if after_verifier is not None:
            t0 = time.perf_counter()
            for name, corr in after_verifier(suffix, verifier).items():
                results[f"{name}{suffix}"] = corr
                timings[f"{name}{suffix}"] = time.perf_counter() - t0
    return {"results": results, "seconds": timings}


def markdown(report: dict[str, Any]) -> str:
    """The report's table: one row per metric, answer and sentence correlations."""

    def f(v: float | None) -> str:
        return "—" if v is None else f"{v:.3f}"

    lines = [
        "| metric | answer ρ avg (6 systems) | answer τ avg | answer ρ pooled | answer τ pooled "
        "| sentence ρ | sentence τ |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in report["results"].items():
        lines.append(
            f"| {name} | {f(r['answer_average']['spearman'])} | {f(r['answer_average']['kendall'])}"
            f" | {f(r['answer_pooled']['spearman'])} | {f(r['answer_pooled']['kendall'])}"
            f" | {f(r['sentence']['spearman'])} | {f(r['sentence']['kendall'])} |"
        )
    return "\n".join(lines)


def title(split: str, n_answers: int) -> str:
    """The line printed above the table."""
    return f"LFQA meta-evaluation ({split} questions, {n_answers} answers)"
