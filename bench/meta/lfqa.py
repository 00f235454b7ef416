"""Meta-evaluation suite ``lfqa``: faithfulness metrics against human sentence support.

The suite itself is :mod:`ragmeter.metaeval.lfqa` (``ragmeter meta-eval lfqa --data DIR``
runs it); this script adds the team's variants (``--semantic``, ``--loso``, ``--split``) and
reads the team's data folder by default.

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
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lfqa_data import DATA, CachedEmbedder, load_lfqa, question_split

from ragmeter.metaeval import lfqa as suite
from ragmeter.metaeval.lfqa import (
    JUDGED_METRICS,
    LABEL_SCORE,
    SYSTEMS,
    Answer,
    correlations,
    judged_scores,
    markdown,
    sentence_claims,
    verifier_scores,
)

__all__ = [
    "DATA",
    "JUDGED_METRICS",
    "LABEL_SCORE",
    "SYSTEMS",
    "Answer",
    "CachedEmbedder",
    "correlations",
    "judged_scores",
    "leave_one_system_out",
    "load_lfqa",
    "markdown",
    "question_split",
    "run",
    "sentence_claims",
    "verifier_scores",
]


def leave_one_system_out(answers: Sequence[Answer], judge: Any) -> dict[str, Any]:
    """Out-of-sample estimate: refit ``judge``'s calibration (its features, the procedure of
    ``fit_verifier.py``) on five systems, score the sixth, for each system in turn."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if getattr(judge, "_uses_model", False):
        import fit_verifier_sources as fs

        return fs.lfqa_leave_one_system_out(answers, judge)
    import fit_verifier as fv

    from ragmeter.judges.offline.calibration import ALL_FEATURES

    full = fv.build(answers, judge, clauses=True, pronouns=True)
    data = fv.select(full, [ALL_FEATURES.index(n) for n in judge.calibration.features])
    scores = fv.out_of_sample(answers, data, [a.system for a in answers])
    return {
        "faithfulness, leave-one-system-out refit": correlations(answers, *scores["verdicts"]),
        "faithfulness_support, leave-one-system-out refit": correlations(answers, *scores["soft"]),
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
    """The suite's report, with the MiniLM verifier (``semantic``) and the
    leave-one-system-out refits (``loso``) added."""
    verifiers = None
    if semantic:
        from ragmeter.judges.offline.judge import OfflineJudge

        verifiers = [("", OfflineJudge()), ("+minilm", OfflineJudge(embedder=CachedEmbedder()))]
    return suite.run(
        answers,
        judge=judge,
        settings=settings,
        verifiers=verifiers,
        after_verifier=(lambda _, v: leave_one_system_out(answers, v)) if loso else None,
        log=log,
    )


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
    from ragmeter.settings import Settings

    settings = Settings(
        base_url=args.base_url,
        verifier=args.verifier,
        verifier_label=args.verifier_label,
        verifier_threshold=args.verifier_threshold,
        device=args.device,
        allow_download=args.allow_download,
    )
    answers = load_lfqa(DATA if args.data is None else args.data / "lfqa_verification")
    if args.split != "all":
        fit, held = question_split(answers)
        keep = fit if args.split == "fit" else held
        answers = [a for a in answers if a.question_id in keep]
    answers = suite.per_system_limit(answers, args.limit)
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
    print(f"{suite.title(args.split, len(answers))}\n")
    print(table)
    args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"\nJSON written to {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
