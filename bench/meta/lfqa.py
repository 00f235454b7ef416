"""Meta-evaluation suite ``lfqa``: faithfulness metrics against human sentence support.

Data: LFQA-Verification (Chen et al. 2023), read by path from ``../shared/data`` (never copied).
600 answers (6 systems × 100 ELI5 questions) with their retrieved documents, 3,993 answer
sentences each labelled supported (1) / partially (0.5) / not_supported (0) by three people.
``annotations-gpt3_whudoc.json`` goes with ``docs-human.json``, every other file with
``docs-webgpt.json`` (the source repository's own mapping is wrong for whudoc).

Metrics compared with the human score (answer: mean over its sentences):

* ``k_precision`` — Unitxt's K-Precision, best single document (max over contexts);
* ``k_precision_joined`` — the same with the documents joined into one text;
* ``faithfulness`` — the offline verifier's claim faithfulness: share of the answer's claims
  entailed by at least one document (verdicts as the claims family uses them);
* ``faithfulness_support`` — the registered graded twin: mean over claims of the verifier's
  calibrated support probability for the best document (``Verification.meta["support"]``);
* ``hallucination`` — share of claims no document entails (LFQA has no reference answer, so
  every claim counts as unverified: 1 − faithfulness; its correlation is expected negative).

At answer level: Spearman and Kendall per system (averaged over the six) and pooled (600).
At sentence level: Spearman and Kendall pooled over the 3,993 sentences (a sentence's score is
the mean over its claims). Prints a Markdown table and writes JSON.

Run::

    PYTHONPATH=src python bench/meta/lfqa.py [--limit N] [--semantic] [--split heldout]
        [--loso] [--judge openai:MODEL --base-url URL] [--verifier nli:PATH] [--data DIR]
        [--json out.json]

``--judge openai:MODEL`` measures an LLM judge's ``faithfulness`` and
``faithfulness_support`` instead of the offline verifier: every annotated sentence is scored
as an answer of its own (two judge calls each, cached), an answer's score is the mean over
its sentences (``judged_scores``). ``--verifier nli:PATH`` (with ``--verifier-label``,
``--verifier-threshold``, ``--device``, ``--allow-download``: ``ragmeter evaluate``'s options)
measures a local entailment model the same way, on the claims of ``--judge`` (offline by
default). ``--data DIR`` is the shared data folder (default ``../shared/data``).

``--loso`` adds two rows: the verifier refitted on five systems and scored on the sixth, for
each system in turn (the calibration's features, ``fit_verifier.py``'s procedure).
``--limit N`` keeps the first N answers of each system (all six stay in the table);
``--semantic`` adds the MiniLM verifier (its embeddings are cached on disk: the first run
embeds ~10,700 texts, a few minutes on 2 idle cores).

``--split fit`` / ``--split heldout`` score one half of the questions (``question_split``).
The shipped calibration was fitted on all 600 answers, so every split is in-sample for it;
``fit_verifier.py`` prints the out-of-sample numbers (leave one system out, and two folds
of questions).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau, spearmanr

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "lfqa_verification"
SYSTEMS: tuple[str, ...] = ("alpaca", "alpaca_wdoc", "gpt3", "gpt3_wdoc", "gpt3_whudoc", "webgpt")
LABEL_SCORE = {"supported": 1.0, "partially": 0.5, "not_supported": 0.0}


@dataclass(frozen=True, slots=True)
class Answer:
    system: str
    question_id: int
    question: str
    sentences: tuple[str, ...]
    #: Mean human label of each sentence.
    human: tuple[float, ...]
    documents: tuple[str, ...]


def load_lfqa(data: Path = DATA) -> list[Answer]:
    """The 600 annotated answers, each with the documents its annotators saw."""
    if not data.is_dir():
        raise SystemExit(f"LFQA data not found at {data}; expected ../shared/data beside the repo.")
    docs = {}
    for name in ("human", "webgpt"):
        with open(data / "docs" / f"docs-{name}.json", encoding="utf-8") as f:
            docs[name] = {row["question_id"]: row for row in json.load(f)}
    out: list[Answer] = []
    for system in SYSTEMS:
        table = docs["human"] if system == "gpt3_whudoc" else docs["webgpt"]
        with open(data / "annotations" / f"annotations-{system}.json", encoding="utf-8") as f:
            rows = json.load(f)
        for row in rows:
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


def question_split(answers: Sequence[Answer], *, seed: int = 0) -> tuple[set[int], set[int]]:
    """Question ids split in two halves (fit, held out), the same for every system."""
    ids = sorted({a.question_id for a in answers})
    random.Random(seed).shuffle(ids)
    half = len(ids) // 2
    return set(ids[:half]), set(ids[half:])


# ----------------------------------------------------------------------------- correlation


def _corr(x: Sequence[float | None], y: Sequence[float]) -> dict[str, float | None]:
    """Spearman and Kendall over the items whose score is defined (``None`` left out)."""
    keep = [i for i, v in enumerate(x) if v is not None]
    x = np.asarray([x[i] for i in keep], dtype=float)
    y = np.asarray([y[i] for i in keep], dtype=float)
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return {"spearman": None, "kendall": None}
    return {
        "spearman": float(spearmanr(x, y).statistic),
        "kendall": float(kendalltau(x, y).statistic),
    }


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


# ----------------------------------------------------------------------------- embeddings


class CachedEmbedder:
    """The offline embedder with an on-disk cache, so reruns skip the slow MiniLM pass.

    The cache is a ``.npz`` of texts and rows in ``$RAGMETER_CACHE_DIR`` (else
    ``~/.cache/ragmeter``)/bench; it belongs to one embedder (the file name says which).
    """

    def __init__(self, name: str = "offline") -> None:
        from ragmeter.models.embeddings import make_embedder

        root = Path(os.environ.get("RAGMETER_CACHE_DIR", Path.home() / ".cache" / "ragmeter"))
        self.path = root / "bench" / f"lfqa-embeddings-{name}.npz"
        self.inner = make_embedder(name)
        self.rows: dict[str, np.ndarray] = {}
        if self.path.is_file():
            with np.load(self.path, allow_pickle=False) as saved:
                self.rows = dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.rows))
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                self.rows[text] = np.asarray(row, dtype=np.float32)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(
                self.path,
                texts=np.array(list(self.rows), dtype=str),
                vectors=np.stack(list(self.rows.values())),
            )
        return np.stack([self.rows[t] for t in texts]) if texts else np.zeros((0, 384))


# ----------------------------------------------------------------------------- metrics


def _k_precision_scores(answers: Sequence[Answer], *, joined: bool) -> tuple[list, list]:
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
    ``judge`` per answer, computed as the claims family computes them."""
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


def leave_one_system_out(answers: Sequence[Answer], judge: Any) -> dict[str, Any]:
    """Out-of-sample estimate: refit ``judge``'s calibration (its features, the procedure of
    ``fit_verifier.py``) on five systems, score the sixth, for each system in turn."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if getattr(judge, "_uses_model", False):
        import fit_verifier_sources as fs

        return fs.lfqa_leave_one_system_out(answers, judge)
    import fit_verifier as fv

    from ragmeter.judges.offline import ALL_FEATURES

    full = fv.build(answers, judge, clauses=True, pronouns=True)
    data = fv.select(full, [ALL_FEATURES.index(n) for n in judge.calibration.features])
    scores = fv.out_of_sample(answers, data, [a.system for a in answers])
    return {
        "faithfulness, leave-one-system-out refit": correlations(answers, *scores["verdicts"]),
        "faithfulness_support, leave-one-system-out refit": correlations(answers, *scores["soft"]),
    }


#: Metrics measured with a judge other than the offline verifier.
JUDGED_METRICS = ("faithfulness", "faithfulness_support")


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
    from ragmeter.metrics.base import Settings

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
        raise SystemExit(f"{name} cannot run with {who}: {why}")
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


def run(
    answers: Sequence[Answer],
    *,
    semantic: bool,
    loso: bool = False,
    judge: str = "offline",
    settings: Any = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    from ragmeter.judges.offline import OfflineJudge
    from ragmeter.metrics.base import Settings

    settings = settings or Settings()

    results: dict[str, Any] = {}
    timings: dict[str, float] = {}
    for name, joined in (("k_precision", False), ("k_precision_joined", True)):
        t0 = time.perf_counter()
        results[name] = correlations(answers, *_k_precision_scores(answers, joined=joined))
        timings[name] = time.perf_counter() - t0
    if judge != "offline" or settings.verifier not in ("judge", "offline"):
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
    variants = [("", OfflineJudge())]
    if semantic:
        variants.append(("+minilm", OfflineJudge(embedder=CachedEmbedder())))
    for suffix, judge in variants:
        t0 = time.perf_counter()
        scores = verifier_scores(answers, judge)
        elapsed = time.perf_counter() - t0
        for name, (answer_scores, sentence_scores) in scores.items():
            results[f"{name}{suffix}"] = correlations(answers, answer_scores, sentence_scores)
            timings[f"{name}{suffix}"] = elapsed
        log(f"{judge.name}: {len(answers)} answers in {elapsed:.1f} s")
        if loso:
            t0 = time.perf_counter()
            for name, corr in leave_one_system_out(answers, judge).items():
                results[f"{name}{suffix}"] = corr
                timings[f"{name}{suffix}"] = time.perf_counter() - t0
    return {"results": results, "seconds": timings}


def markdown(report: dict[str, Any]) -> str:
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="answers per system")
    parser.add_argument("--semantic", action="store_true", help="also the MiniLM verifier")
    parser.add_argument("--split", choices=("all", "fit", "heldout"), default="all")
    parser.add_argument(
        "--loso",
        action="store_true",
        help="also refit the calibration on 5 systems and score the 6th, for each system",
    )
    parser.add_argument(
        "--judge",
        default="offline",
        help="'offline' (the verifier, default) or an LLM judge such as 'openai:MODEL': "
        "its faithfulness is scored sentence by sentence",
    )
    parser.add_argument("--base-url", default=None, help="endpoint for --judge openai:MODEL")
    parser.add_argument(
        "--verifier",
        default="judge",
        help="who decides entailment: 'judge' (default), 'offline' or 'nli:PATH_OR_NAME'",
    )
    parser.add_argument("--verifier-label", default=None, help="nli: the support label")
    parser.add_argument("--verifier-threshold", type=float, default=None, help="nli: threshold")
    parser.add_argument("--device", default=None, help="nli: cpu, cuda, cuda:N or auto")
    parser.add_argument("--allow-download", action="store_true", help="nli: fetch the model")
    parser.add_argument(
        "--data", type=Path, default=None, help="shared data folder (default ../shared/data)"
    )
    parser.add_argument("--json", type=Path, default=Path("lfqa_meta_eval.json"))
    args = parser.parse_args(argv)
    judged = args.judge != "offline" or args.verifier not in ("judge", "offline")
    if judged and (args.semantic or args.loso):
        parser.error(
            "--semantic and --loso measure the offline verifier; drop them with --judge or "
            "--verifier"
        )
    if not args.allow_download:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from ragmeter.cli_verifier import verifier_settings
    from ragmeter.metrics.base import Settings

    settings = Settings(
        base_url=args.base_url,
        **verifier_settings(
            args.verifier,
            args.verifier_label,
            args.verifier_threshold,
            args.device,
            args.allow_download,
        ),
    )
    answers = load_lfqa(DATA if args.data is None else args.data / "lfqa_verification")
    if args.split != "all":
        fit, held = question_split(answers)
        keep = fit if args.split == "fit" else held
        answers = [a for a in answers if a.question_id in keep]
    if args.limit is not None:
        seen: dict[str, int] = {}
        limited = []
        for a in answers:
            seen[a.system] = seen.get(a.system, 0) + 1
            if seen[a.system] <= args.limit:
                limited.append(a)
        answers = limited
    t0 = time.perf_counter()
    report = run(
        answers,
        semantic=args.semantic,
        loso=args.loso,
        judge=args.judge,
        settings=settings,
        log=lambda m: print(m, file=sys.stderr),
    )
    report["split"] = args.split
    report["limit"] = args.limit
    report["total_seconds"] = time.perf_counter() - t0
    table = markdown(report)
    print(f"LFQA meta-evaluation ({args.split} questions, {len(answers)} answers)\n")
    print(table)
    args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"\nJSON written to {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
