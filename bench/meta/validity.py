# ruff: noqa: E501  (a markdown table of earlier numbers, kept on one line a row)
"""Regenerate ``docs/validity.md``: every meta-evaluation suite on the offline default.

Runs ragchecker, msmarco, wikieval, trec and unitxt (``ragmeter.metaeval``) and the lfqa
script (``bench/meta/lfqa.py``, when present), then writes the page: a summary against the
targets of the meta-evaluation issue, each suite's table, and how long each took::

    PYTHONPATH=src python bench/meta/validity.py [--out docs/validity.md] [--json-dir DIR]
        [--skip lfqa,msmarco]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import DATA, ROOT, SuiteOptions, SuiteResult, markdown_table, run_suite

SUITES = ("verifier", "lfqa", "ragchecker", "msmarco", "wikieval", "trec", "unitxt")
#: The lexical features (the verifier without its model), for the lexical-only fit.
LEXICAL = (
    "token_precision,content_precision,window_precision,bigram_precision,trigram_cover,"
    "missing_numbers,missing_names,missing_content,log_length,idf_precision,idf_window,"
    "sentence_precision,prefix_precision,idf_missing,content_share,negation_mismatch,"
    "missing_dates"
)
#: The earlier offline verifiers (v2, v3, v4) as this page reported them, with their commits.
PREVIOUS = """\
Earlier offline verifiers as this page reported them: `offline:verifier-v2` (sentence/clause
claims, a lexical calibration fitted on LFQA alone) on 2026-11-22 (commit c83ae71),
`offline:verifier-v3+nli` (atomic claims, the trained model, a calibration fitted across four
sources) on 2026-11-24 (commit f7d3be3), `offline:verifier-v4+nli` (conflict rules for
polarity, antonyms and swapped roles; acronyms; the model reads a 3-sentence window) on
2026-11-24 (commit d6df390), and `offline:verifier-v5+nli` (a 2-sentence window) on
2026-11-25 (commit 49a9a59). verifier-v6 keeps v5's combination, refitted on a model
retrained with hard cases (its model card), with claims that keep their meaning, references
read as the answer to their question, and evidence with every verdict. verifier-v7 keeps
v6's model and weights and binds claims to their subject and values (names, quantities with
units, short references read with their question); verifier-v8 keeps v7's model and weights and
corrects what its rules read (articles, hyphenated words, kinds, numbers by their digits,
the answer rule's scope): the numbers of both on realistic RAG rows are in
[verdicts.md](verdicts.md). LOSysO:
leave-one-system-out, answer ρ averaged over systems / pooled / sentence ρ (support:
`faithfulness_support`, verdicts: `faithfulness`; r: Pearson). The claim-probe row is
`bench/claim_probes.py --old-model build/cv5` (v5's model and constants) run on 2026-11-27.
Today's numbers for the same rows are in the tables below and in each suite's section:

| what | verifier-v2 | verifier-v3+nli | verifier-v4+nli | verifier-v5+nli |
|---|---|---|---|---|
| lfqa support, LOSysO | 0.621 / 0.879 / 0.774 | 0.551 / 0.856 / 0.745 | 0.543 / 0.855 / 0.745 | 0.554 / 0.854 / 0.744 |
| lfqa verdicts, LOSysO | 0.554 / 0.858 / 0.721 | 0.545 / 0.854 / 0.705 | 0.548 / 0.851 / 0.702 | 0.551 / 0.853 / 0.699 |
| ragchecker claim precision / support, r×100 | 31.37 / 40.23 | 25.54 / 29.54 | 24.79 / 28.89 | 24.42 / 28.26 |
| wikieval faithfulness, pairwise accuracy | 0.900 | 0.900 | 0.900 | 0.850 |
| hand-written probes (79, ours), balanced accuracy | 0.609 | 0.781 | 0.924 | 0.936 |
| claim probes (dev, 202, the team's), balanced accuracy | — | — | — | 0.402 |
"""
COMMAND = "PYTHONPATH=src python bench/meta/validity.py"

INTRO = """\
# How far can each metric be trusted?

ragmeter measures its metrics against human judgments and reference tools on public data
(`ragmeter meta-eval SUITE`, or the scripts in `bench/meta/`). This page holds the latest
numbers for the **offline default**: no API key, no model hub; claim metrics use the offline
verifier (`judge="offline"`), embeddings MiniLM int8 ONNX. With an LLM judge the claim metrics
are different metrics in practice: run `ragmeter meta-eval SUITE --judge openai:MODEL` to
measure yours.

The data is read by path from the team's shared folder (`../shared/data`, or
`--data` / `RAGMETER_SHARED_DATA`); it is not shipped with ragmeter. What each number is:

- **lfqa**: LFQA-Verification (Chen et al. 2023), 600 long-form answers of 6 systems with 3,993
  sentences labelled supported / partially / not by 3 people. Spearman (ρ) and Kendall (τ) of a
  faithfulness score with the human support score: per answer (averaged over the 6 systems, and
  pooled) and per sentence. Targets: answer ρ ≥ 0.70 averaged, ≥ 0.90 pooled, sentence ρ ≥ 0.80.
  The verifier's constants (feature weights, verdict threshold) were fitted on these 600
  answers and three other sources (`bench/meta/fit_verifier_sources.py`), so its plain rows
  are in-sample; the rows marked "leave-one-system-out refit" are the out-of-sample estimate
  (refit on the other sources and 5 systems, scored on the 6th, for each system), and
  "leave-one-source-out fit" rows come from a fit without LFQA at all.
  `faithfulness_support` is a separate, graded metric: the mean over claims of the
  verifier's calibrated support probability for the best context, where
  `faithfulness` counts the claims whose verdict is "entailed". One human annotator against
  the others' mean reaches 0.665 / 0.864 / 0.784 on these three numbers. With
  `--judge openai:MODEL` the suite scores an LLM judge's faithfulness sentence by sentence.
- **ragchecker**: RAGChecker's meta-evaluation (Ru et al. 2024), 280 pairs of answers, 2
  annotators. Pearson / Spearman × 100 of a metric's score difference with the preference label,
  with RAGChecker's own procedure. Target: correctness Pearson ≥ 45 (RAGChecker with a 70B judge
  49.66; the annotators agree with each other at 63.67). Six answers are empty: ragmeter's claim
  metrics leave them undefined ("the answer has no claims", median-imputed by the procedure)
  where RAGChecker scores them 0, which the humans agree with; the line "RAGChecker, empty
  answers undefined" recomputes RAGChecker's own scores under ragmeter's policy for a like-for-
  like comparison. `claim_precision_support` is the graded twin of `claim_precision` (mean
  support probability that the reference entails each claim). No constant was fitted on this
  data. `new_token_precision` / `_recall` / `_f1` are the token metrics with every word of the
  question left out of the answer and the reference; that idea came from reading this data's
  disagreements, so their rows are not an independent test of it (no constant was fitted).
  `PYTHONPATH=src python bench/meta/ragchecker_new_tokens.py` gives the paired bootstrap of
  the gain over `token_precision` (+4.7, 95 % interval [-2.9, 13.1]), the per-dataset numbers
  (better on 3 of 4 sources) and the agreement with RAGChecker's own per-answer precision
  (Pearson 0.627, against 0.579 for `token_precision`).
- **msmarco**: 200 MS MARCO queries, the selected passage vs a hard negative (TruLens' set).
  Pairwise accuracy (tie = ½) and AUROC. Labels are noisy. Target: pairwise ≥ 0.75.
- **wikieval**: the 10 WikiEval questions whose variants are labelled (of 50). Pairwise accuracy;
  one question is 0.1. Targets 0.9 / 0.8 / 0.7 (Ragas with GPT-3.5 on all 50: 0.95 / 0.78 / 0.70).
- **trec** and **unitxt**: exactness, not agreement: trec_eval's reference output for MAP, MRR,
  P@k, recall@k, nDCG@k; Unitxt 1.26.10's own scores (within 1e-9). These two run in the tests.
"""


def _run_lfqa(out_dir: Path) -> dict[str, Any]:
    script = ROOT / "bench" / "meta" / "lfqa.py"
    if not script.is_file():
        return {"error": f"{script.relative_to(ROOT)} not found"}
    started = time.perf_counter()
    target = out_dir / "lfqa.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run(
        [sys.executable, str(script), "--loso", "--json", str(target)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=ROOT,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"], "seconds": seconds}
    return {
        "markdown": done.stdout.strip(),
        "report": json.loads(target.read_text(encoding="utf-8")),
        "seconds": seconds,
    }


def _cell(value: float | None, digits: int = 3) -> str:
    return "not measured" if value is None else f"{value:.{digits}f}"


def _row_of(result: SuiteResult | None, metric: str) -> dict[str, Any] | None:
    if result is None:
        return None
    return next((r for r in result.rows if r.get("metric") == metric), None)


def summary(results: dict[str, Any]) -> str:
    """One line per target of the issue: measured value, target, met or not."""
    rows: list[dict[str, Any]] = []

    def add(suite: str, what: str, value: float | None, target: float, digits: int = 3) -> None:
        rows.append(
            {
                "suite": suite,
                "what": what,
                "measured": _cell(value, digits),
                "target": f"≥ {target:g}",
                "met": "—" if value is None else ("yes" if value >= target else "no"),
            }
        )

    lfqa = results.get("lfqa") or {}
    lfqa_results = (lfqa.get("report") or {}).get("results", {})
    faith = lfqa_results.get("faithfulness", {})
    add("lfqa", "faithfulness, answer ρ (mean of 6 systems)", _get(faith, "answer_average"), 0.70)
    add("lfqa", "faithfulness, answer ρ (pooled 600)", _get(faith, "answer_pooled"), 0.90)
    add("lfqa", "faithfulness, sentence ρ (3,993)", _get(faith, "sentence"), 0.80)
    for name, label in (
        ("faithfulness, leave-one-system-out refit", "faithfulness, out-of-sample"),
        ("faithfulness_support", "faithfulness_support (graded)"),
        ("faithfulness_support, leave-one-system-out refit", "faithfulness_support, out-of-sample"),
    ):
        block = lfqa_results.get(name)
        if block is None:
            continue
        add("lfqa", f"{label}, answer ρ (mean of 6 systems)", _get(block, "answer_average"), 0.70)
        add("lfqa", f"{label}, answer ρ (pooled 600)", _get(block, "answer_pooled"), 0.90)
        add("lfqa", f"{label}, sentence ρ (3,993)", _get(block, "sentence"), 0.80)

    rc = _row_of(results.get("ragchecker"), "claim_precision")
    add(
        "ragchecker",
        "claim_precision vs correctness, Pearson × 100",
        _g(rc, "correctness r"),
        45,
        2,
    )
    rc_support = _row_of(results.get("ragchecker"), "claim_precision_support")
    if rc_support is not None:
        add(
            "ragchecker",
            "claim_precision_support vs correctness, Pearson × 100",
            _g(rc_support, "correctness r"),
            45,
            2,
        )
    same_policy = results.get("ragchecker_same_policy")
    if same_policy is not None:
        rows.append(
            {
                "suite": "ragchecker",
                "what": "for comparison: RAGChecker (70B judge) with the 6 empty answers "
                "undefined as ragmeter leaves them, Pearson × 100",
                "measured": _cell(same_policy["correctness"], 2),
                "target": "—",
                "met": "—",
            }
        )
    rc_best = _best(results.get("ragchecker"), "correctness r")
    if rc_best is not None:
        add("ragchecker", f"best: {rc_best[0]} vs correctness, Pearson × 100", rc_best[1], 45, 2)

    ms = _row_of(results.get("msmarco"), "context_relevance")
    add("msmarco", "context_relevance, pairwise accuracy", _g(ms, "pairwise accuracy"), 0.75)
    ms_best = _best(results.get("msmarco"), "pairwise accuracy")
    if ms_best is not None:
        add("msmarco", f"best: {ms_best[0]}, pairwise accuracy", ms_best[1], 0.75)

    wiki = results.get("wikieval")
    for metric, target in (
        ("faithfulness", 0.9),
        ("response_relevancy", 0.8),
        ("context_relevance", 0.7),
    ):
        add(
            "wikieval",
            f"{metric}, pairwise accuracy (n=10)",
            _g(_row_of(wiki, metric), "pairwise accuracy"),
            target,
        )

    for name in ("trec", "unitxt"):
        res = results.get(name)
        passed = None if res is None else res.passed
        rows.append(
            {
                "suite": name,
                "what": "every check agrees with the reference",
                "measured": "—"
                if passed is None
                else f"{sum(c['ok'] for c in res.checks)} / {len(res.checks)}",
                "target": "all",
                "met": "—" if passed is None else ("yes" if passed else "no"),
            }
        )
    return markdown_table(["suite", "what", "measured", "target", "met"], rows)


def ragchecker_same_policy(data: Path | None) -> dict[str, float | None]:
    """RAGChecker's own scores (70B judge) with its six empty answers left undefined, as
    ragmeter's claim metrics leave them: Pearson x 100 per aspect, same procedure."""
    from ragmeter.metaeval import shared_data_dir
    from ragmeter.metaeval.ragchecker import ASPECTS, delta_correlation, load

    pairs, _ = load(shared_data_dir(data))
    out: dict[str, float | None] = {}
    for aspect in ASPECTS:
        labels = [label for p in pairs for label in p["labels"][aspect]]
        columns = [
            [None if not p["responses"][i].strip() else p["ragchecker"][aspect][i] for p in pairs]
            for i in (0, 1)
        ]
        out[aspect] = delta_correlation(columns[0], columns[1], labels)["pearson"]
    return out


def _get(block: dict[str, Any], key: str) -> float | None:
    return (block.get(key) or {}).get("spearman")


def _g(row: dict[str, Any] | None, key: str) -> float | None:
    return None if row is None else row.get(key)


def _best(result: SuiteResult | None, key: str) -> tuple[str, float] | None:
    if result is None:
        return None
    cands = [
        (r["metric"], r[key])
        for r in result.rows
        if isinstance(r.get(key), float)
        and "recomputed" not in r["metric"]
        and "published" not in r["metric"]
    ]
    return max(cands, key=lambda c: c[1]) if cands else None


#: The commit whose shipped model verifier-v5 used, and where it is unpacked for comparison.
V5_COMMIT = "49a9a59"
V5_MODEL = ROOT / "build" / "cv5"


def _unpack_v5_model() -> None:
    """verifier-v5's model files from git, into ``build/cv5`` (once)."""
    V5_MODEL.mkdir(parents=True, exist_ok=True)
    for name in ("model.onnx", "tokenizer.json"):
        target = V5_MODEL / name
        if not target.is_file():
            path = f"{V5_COMMIT}:src/ragmeter/models/data/claim-verifier/{name}"
            blob = subprocess.run(["git", "show", path], capture_output=True, check=True, cwd=ROOT)
            target.write_bytes(blob.stdout)


def _run_verifier() -> dict[str, Any]:
    """The cross-source fit of the shipped verifier and of its lexical-only variant
    (``fit_verifier_sources.py``), the model-decides fit (``fit_model_decision.py``), and
    the probe sets (``bench/verifier_probes.py``, ``bench/claim_probes.py``)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    _unpack_v5_model()
    runs = {
        "shipped (lexical + model)": ["bench/meta/fit_verifier_sources.py", "--min-share", "0.5"],
        "lexical only": [
            "bench/meta/fit_verifier_sources.py", "--min-share", "0.5", "--features", LEXICAL,
        ],
        "probes": ["bench/verifier_probes.py"],
        "the model decides (verifier-v6), leave-one-source-out": [
            "bench/meta/fit_model_decision.py",
        ],
        "claim probes (dev half), by kind": [
            "bench/claim_probes.py", "--old-model", "build/cv5",
        ],
    }  # fmt: skip
    out: dict[str, Any] = {}
    for name, command in runs.items():
        done = subprocess.run(
            [sys.executable, *command], capture_output=True, text=True, env=env, cwd=ROOT
        )
        if done.returncode != 0:
            return {"error": f"{' '.join(command)}: " + done.stderr.strip()[-300:]}
        text = done.stdout.replace("features ...\n", "").replace(f"{ROOT}/", "")
        if "Calibration(" in text:
            text = text[: text.index("MODEL_CALIBRATION")]
        if not text.lstrip().startswith("|"):  # a plain-text table: keep its layout
            text = f"```\n{text.strip()}\n```"
        out[name] = f"`python {' '.join(command)}`\n\n" + text.strip()
    return out


VERIFIER_INTRO = """\
### The claim verifier across sources

Every claim metric is arithmetic over claims and the verdict "does this premise entail this
claim". The offline verifier's combination (lexical features + the trained model's
probabilities, `src/ragmeter/judges/offline/model_features.py`) is fitted on four sources (LFQA's
3,993 sentences, WiCE's held-out half, RAGChecker's two examples labelled by its LLM checker,
SNLI pairs the model never saw) and checked on six it is never fitted on. Each fitted
source's first row comes from a fit without that source (leave-one-source-out); "in-sample"
rows are the shipped fit; "check only" sources are scored by the shipped fit. AUROC is of
the graded support (a sentence's mean over its claims), balanced accuracy of the verdicts
(an item is entailed when at least half its claims are); K-Precision's AUROC is the peer
("lexical-only" columns: the shipped lexical-only calibration, the fallback without
onnxruntime, in-sample on the four fitted sources). The LFQA rows below give the three
Spearman numbers of the LFQA targets under two protocols. "The model decides" is the other
verdict (`OfflineJudge(decision=MODEL_DECISION)`: rules settle what the words can, the model
reads every other cell, a logistic over its probabilities and the claim's content share
fitted across the same four sources); it is not the default because it ranks below the
combination on the human-labelled sources. The claim probes are the team's hand-labelled
dev half, scored by kind as the team scores them (the CLI column), next to the model alone,
the words alone, verifier-v5 and the model-decides verdict.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "validity.md")
    parser.add_argument("--json-dir", type=Path, default=None, help="also keep each suite's JSON")
    parser.add_argument("--skip", default="", help="comma-separated suites to leave out")
    parser.add_argument("--data", type=Path, default=DATA, help=f"data folder (default {DATA})")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    json_dir = args.json_dir or Path(tempfile.mkdtemp(prefix="ragmeter-validity-"))
    json_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    sections: list[str] = []
    for suite in SUITES:
        if suite in skip:
            continue
        print(f"running {suite} ...", file=sys.stderr)
        started = time.perf_counter()
        if suite == "verifier":
            out = _run_verifier()
            results[suite] = out
            if "error" in out:
                sections.append(f"### verifier\n\nNot measured: {out['error']}")
            else:
                parts = [f"#### {name}\n\n{text}" for name, text in out.items()]
                sections.append(VERIFIER_INTRO + "\n" + PREVIOUS + "\n" + "\n\n".join(parts))
        elif suite == "lfqa":
            out = _run_lfqa(json_dir)
            results[suite] = out
            if "markdown" in out:
                sections.append(
                    "### lfqa: faithfulness vs human sentence support\n\n" + out["markdown"]
                )
            else:
                sections.append(f"### lfqa\n\nNot measured: {out['error']}")
        else:
            res = run_suite(suite, args.data, SuiteOptions())
            res.write(json_dir)
            results[suite] = res
            section = res.to_markdown().strip()
            if suite == "ragchecker":
                same = ragchecker_same_policy(args.data)
                results["ragchecker_same_policy"] = same
                section += (
                    "\n- RAGChecker's own scores with the six empty answers left undefined "
                    "(ragmeter's policy for claim metrics), same procedure: Pearson x 100 "
                    + " / ".join(f"{k} {v:.2f}" for k, v in same.items() if v is not None)
                    + "."
                )
            sections.append(section)
        seconds[suite] = time.perf_counter() - started
        print(f"  {suite}: {seconds[suite]:.0f} s", file=sys.stderr)
    today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    timing = ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())
    page = [
        INTRO,
        f"_Generated {today} by `{COMMAND}` (Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs). Wall time per suite: {timing}._",
        "",
        "## Against the targets",
        "",
        summary(results),
        "",
        "## Suites",
        "",
        "\n\n".join(sections),
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(page), encoding="utf-8")
    print(f"Wrote {args.out} (JSON in {json_dir})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
