"""Context relevance on onnxruntime (no torch) against the torch path, on MS MARCO's 400 passages.

For each packaged GGUF model in ``--models``, in one run:

1. ONNX: the one-time conversion (timed in a fresh cache dir with ``--fresh``), then the
   TruLens MS MARCO suite's pairs (``--limit`` queries x their selected passage and hard
   negative, 400 pairs for all 200) scored in one call, as the ``context_relevance`` family
   does; and
   whether a pair's score is the same alone, in the batch and in reversed order.
2. torch float32 (transformers, Unitxt's numerics) on the same pairs; with
   ``--torch-auto N`` also today's default numerics (bfloat16 on CPUs with native bfloat16)
   on the first N pairs, for speed.
   With ``--int8`` also the ONNX graph with dynamic int8 matrix products (faster; its own
   gap to float32 and accuracy).
3. Side by side: pairs/s of each (wall, and an estimate for idle cores from CPU time: the
   machine is shared), max and mean |ONNX - torch float32| (target <= 1e-4), and each one's
   pairwise accuracy (the selected passage above its negative; ties count half).

With ``--speed`` (instead of the above): pairs/s of the default ONNX model before and after
batching, in the same run: ``--speed-pairs`` (question, context) pairs from realistic RAG rows
(``bench/rag_rows.py``: contexts of about 95 words) scored in a fresh subprocess per
measurement, the configurations interleaved ``--rounds`` times: one pair per onnxruntime call
(the scorer before batching, ``batch_tokens=1``) on 2 threads, padded batches on 2 threads, and
padded batches on 1 thread; each line gives wall and CPU seconds, pairs/s, the load average
and the subprocess's peak resident memory (``ru_maxrss``); then the speed ratios and the
largest |batched - one per call| score difference. ``--memory-rows N`` also runs
``ragmeter evaluate`` on N such rows with ``-m context_relevance`` in a subprocess and prints
its time and peak resident memory (``--memory-dtype int8``: with ``--relevance-dtype int8``;
``--skip-speed``: that run only).

With ``--agreement`` (instead of the above): float32 and int8 of the default ONNX model side
by side, in one run: on the TruLens MS MARCO suite (``--limit`` queries) each one's pairwise
accuracy (the selected passage above its hard negative; ties count half) and AUROC (selected
passages against hard negatives), and |int8 - float32|; on the ten labelled WikiEval
questions (``../shared/data/wikieval/wikieval_original_10_samples.jsonl``) the
``context_relevance`` family's score (the best context) of the better context list
(``context_v1``) against the worse one (``context_v2``, padded with less relevant text):
pairwise accuracy, as ``ragmeter metaeval wikieval`` counts it; and pairs/s of each on
``--speed-pairs`` pairs from realistic rows (contexts of about 95 words), the two dtypes
interleaved ``--rounds`` times in this process. It ends with the issue's condition for
making int8 the default (MS MARCO pairwise accuracy within 0.01 of float32's).
``--reference PATH`` (a ``.npy``): float32's MS MARCO scores are compared with those saved
there (max |diff|, the 1e-4 bar for a change of the float32 path) or saved there when the
file does not exist yet.

With ``--memory-stages``: one process's resident memory (anonymous and file-backed: the
weights are mapped from the converted file) after import, after the session is built, after
the first pair and after ``--speed-pairs`` pairs, in ``--memory-dtype``.

Run from the project root::

    PYTHONPATH=src python bench/context_relevance_onnx.py
    PYTHONPATH=src python bench/context_relevance_onnx.py --models gemma3-270m --limit 20
    .venv/bin/python bench/context_relevance_onnx.py --speed [--speed-pairs 24] [--rounds 2]
    .venv/bin/python bench/context_relevance_onnx.py --speed --memory-rows 100
    .venv/bin/python bench/context_relevance_onnx.py --speed --skip-speed --memory-rows 100 \
        --memory-dtype int8
    PYTHONPATH=src python bench/context_relevance_onnx.py --agreement [--limit 200] \
        [--speed-pairs 48] [--rounds 2] [--reference bench/out/relevance_float32_msmarco.npy]
    PYTHONPATH=src python bench/context_relevance_onnx.py --memory-stages --memory-dtype int8
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from offline_models import DATA, LAST_CPU, THREADS, idle_rate, load_pairs, timed

from ragmeter.models.relevance.gguf.convert import convert_gguf
from ragmeter.models.relevance.loader import load_question_likelihood
from ragmeter.models.relevance.onnx_scorer import OnnxQuestionLikelihood
from ragmeter.models.relevance.source import resolve_relevance_model


def pair_scores(scorer: Any, triples: list[tuple[str, str, str]]) -> tuple[np.ndarray, float]:
    """Raw per-pair scores (positive, negative per query) in one ``score`` call, and wall
    seconds (the ``context_relevance`` family makes exactly this call, then rounds)."""
    contexts = [c for _, pos, neg in triples for c in (pos, neg)]
    questions = [q for q, _, _ in triples for _ in (0, 1)]
    scores, seconds = timed(lambda: scorer.score(contexts, questions))
    return np.array(scores), seconds


def same_tokens(onnx: Any, torch: Any, triples: list[tuple[str, str, str]]) -> str:
    """How many pairs get the same prompt and target token ids from both tokenizers."""
    contexts = [c for _, pos, neg in triples for c in (pos, neg)]
    questions = [q for q, _, _ in triples for _ in (0, 1)]
    prompts = sum(
        a == b for a, b in zip(onnx.prompt_ids(contexts), torch.prompt_ids(contexts), strict=True)
    )
    targets = sum(
        a == b for a, b in zip(onnx.target_ids(questions), torch.target_ids(questions), strict=True)
    )
    return f"prompts {prompts}/{len(contexts)}, targets {targets}/{len(questions)}"


def accuracy(scores: np.ndarray) -> float:
    pairs = scores.reshape(-1, 2)
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in pairs)
    return wins / len(pairs)


def rate(label: str, pairs: int, seconds: float) -> str:
    return f"  {label:30s} {pairs / seconds:7.2f} pairs/s {idle_rate(pairs, THREADS)}"


def bench_model(model: str, triples: list[tuple[str, str, str]], args: argparse.Namespace) -> None:
    pairs = 2 * len(triples)
    print(f"\n== {model}: {len(triples)} queries, {pairs} pairs, threads {THREADS}")
    onnx = load_question_likelihood(model, runtime="onnx", dtype="float32")
    _, load = timed(lambda: onnx.score(["warm up"], ["warm up?"]))
    about = onnx.loaded.about
    print(
        f"  ONNX load {load:.1f} s (conversion {about['seconds']} s when it was converted; "
        f"{about['config']['architecture']}, {about['config']['layers']} layers)"
    )
    if args.tokens_only:
        torch32 = load_question_likelihood(model, runtime="torch", dtype="float32")
        print(f"  token ids equal to transformers': {same_tokens(onnx, torch32, triples)}")
        return
    fast, t_onnx = pair_scores(onnx, triples)
    line_onnx = rate("onnxruntime float32", pairs, t_onnx)
    contexts = [c for _, pos, neg in triples for c in (pos, neg)][: args.alone]
    questions = [q for q, _, _ in triples for _ in (0, 1)][: args.alone]
    alone = [onnx.score([c], [q])[0] for c, q in zip(contexts, questions, strict=True)]
    backwards = onnx.score(contexts[::-1], questions[::-1])[::-1]
    # Padded batches change only the order of float32 sums (results keep 6 decimals).
    drift = max(
        float(np.abs(np.asarray(alone) - fast[: len(alone)]).max()),
        float(np.abs(np.asarray(backwards) - fast[: len(backwards)]).max()),
    )
    same = f"{drift <= 1e-6} (max |diff| {drift:.1e})"
    if args.int8:
        source = resolve_relevance_model(model, runtime="onnx")
        folder, t_convert = timed(
            lambda: convert_gguf(source.name, source.packaged.sha256, source.open_gguf(), int8=True)
        )
        int8 = OnnxQuestionLikelihood(source.name + "-int8", lambda: folder)
        int8.score(["warm up"], ["warm up?"])
        quick, t_int8 = pair_scores(int8, triples)
        gap8 = np.abs(quick - fast)
        print(f"  int8 conversion {t_convert:.1f} s")
        print(rate("onnxruntime int8 matmuls", pairs, t_int8))
        print(
            f"  |int8 - onnx float32| max {gap8.max():.1e}, mean {gap8.mean():.1e}; "
            f"pairwise accuracy int8 {accuracy(quick):.3f}"
        )
    if args.skip_torch:
        print(line_onnx)
        print(f"  pairwise accuracy: onnx {accuracy(fast):.3f} over {len(triples)} queries")
        print(f"  a pair's score alone = batched = reversed ({len(alone)} pairs): {same}")
        return
    torch32 = load_question_likelihood(model, runtime="torch", dtype="float32")
    _, load = timed(lambda: torch32.score(["warm up"], ["warm up?"]))
    print(f"  torch load {load:.1f} s (converts the GGUF with transformers the first time)")
    print(f"  token ids equal to transformers': {same_tokens(onnx, torch32, triples)}")
    exact, t_torch = pair_scores(torch32, triples)
    line_torch = rate("torch float32", pairs, t_torch)
    print(line_onnx)
    print(line_torch)
    if args.torch_auto:
        scorer = load_question_likelihood(model, runtime="torch", dtype="auto")
        scorer.score(["warm up"], ["warm up?"])
        subset = triples[: max(1, args.torch_auto // 2)]
        _, t_auto = pair_scores(scorer, subset)
        print(
            rate(f"torch auto ({scorer.dtype}), {2 * len(subset)} pairs", 2 * len(subset), t_auto)
        )
    gap = np.abs(fast - exact)
    print(
        f"  |onnx - torch float32| over {pairs} pairs: max {gap.max():.1e}, mean {gap.mean():.1e}"
        f" (target <= 1e-4: {'met' if gap.max() <= 1e-4 else 'NOT met'})"
    )
    print(f"  a pair's score alone = batched = reversed ({len(alone)} pairs): {same}")
    print(
        f"  pairwise accuracy: onnx {accuracy(fast):.3f}, torch float32 {accuracy(exact):.3f}"
        f" over {len(triples)} queries"
    )


def speed_worker(threads: int, batch_tokens: int, pairs: int, scores_out: str) -> None:
    """One measurement in this (fresh) process: load, warm up, time one ``score`` call."""
    from rag_rows import realistic_rows

    from ragmeter.models._runtime import use_threads

    use_threads(threads)
    rows = realistic_rows(pairs)
    contexts = [c for r in rows for c in r["contexts"]][:pairs]
    questions = [r["question"] for r in rows for _ in r["contexts"]][:pairs]
    scorer = load_question_likelihood("offline", runtime="onnx", dtype="float32")
    scorer.batch_tokens = batch_tokens
    scorer.score(["warm up"], ["warm up?"])
    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    scores = scorer.score(contexts, questions)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    np.save(scores_out, np.asarray(scores))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": wall, "cpu": cpu, "load": load, "rss_mb": rss}))


def speed(args: argparse.Namespace) -> None:
    """Before (one pair per call) and after (padded batches), interleaved in subprocesses."""
    configs = [("one pair per call, 2 threads", 2, 1), ("padded batches, 2 threads", 2, 0)]
    configs.append(("padded batches, 1 thread", 1, 0))
    here = Path(__file__).resolve()
    env = {**os.environ, "PYTHONPATH": str(here.parents[1] / "src")}
    rates: dict[str, list[float]] = {label: [] for label, _, _ in configs}
    scores: dict[str, np.ndarray] = {}
    print(f"== speed: {args.speed_pairs} pairs (contexts of ~95 words), cpu count {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(0 if args.skip_speed else args.rounds):
            for label, threads, tokens in configs:
                out = str(Path(tmp) / f"{len(scores)}.npy")
                command = [sys.executable, str(here), "--speed-worker", str(threads)]
                command += [str(tokens), str(args.speed_pairs), out]
                done = subprocess.run(command, env=env, capture_output=True, text=True)
                if done.returncode:
                    raise SystemExit(done.stderr[-3000:])
                got = json.loads(done.stdout.strip().splitlines()[-1])
                rate = args.speed_pairs / got["wall"]
                rates[label].append(rate)
                scores[label] = np.load(out)
                print(
                    f"  round {round_ + 1} {label:30s} {rate:5.2f} pairs/s (wall {got['wall']:5.1f}"
                    f" s, CPU {got['cpu']:5.1f} s, {args.speed_pairs / got['cpu']:.2f} pairs per "
                    f"CPU s) load {got['load']:.1f}, peak RSS {got['rss_mb']:.0f} MB"
                )
    if not args.skip_speed:
        best = {label: max(values) for label, values in rates.items()}
        before, after, one = (best[label] for label, _, _ in configs)
        print(
            f"  best of {args.rounds}: batched / one per call {after / before:.2f}x; "
            f"2 threads / 1 thread {after / one:.2f}x"
        )
        gap = np.abs(scores[configs[1][0]] - scores[configs[0][0]]).max()
        print(f"  max |batched - one per call| over {args.speed_pairs} pairs: {gap:.1e}")
    if args.memory_rows:
        from rag_rows import write_rows

        with tempfile.TemporaryDirectory() as tmp:
            data = write_rows(Path(tmp) / "rows.jsonl", args.memory_rows)
            # A fresh parent measures it: ru_maxrss of children is the peak of all of them.
            command = [sys.executable, "-c", _MEASURED, sys.executable, "-m", "ragmeter"]
            command += ["evaluate", str(data), "-m", "context_relevance", "-q"]
            command += ["--relevance-dtype", args.memory_dtype]
            command += ["--out", str(Path(tmp) / "o.jsonl")]
            started = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - started
            if done.returncode not in (0, 1):
                raise SystemExit(done.stderr[-3000:])
            got = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"  ragmeter evaluate -m context_relevance --relevance-dtype {args.memory_dtype} "
                f"on {args.memory_rows} rows: "
                f"{wall:.0f} s, CPU {got['cpu']:.0f} s, peak RSS {got['rss_mb']:.0f} MB "
                f"(target < 1024), load {os.getloadavg()[0]:.1f}"
            )


WIKIEVAL = DATA.parents[1] / "wikieval" / "wikieval_original_10_samples.jsonl"
#: The issue's condition for an int8 default: MS MARCO pairwise accuracy within this of float32's.
INT8_DEFAULT_GAP = 0.01


def wikieval_accuracy(scorer: Any, path: Path) -> tuple[float | None, list[tuple[float, float]]]:
    """Pairwise accuracy of ``context_relevance`` (the family's best-context score) of
    ``context_v1`` over ``context_v2`` on the labelled WikiEval questions, and the pairs."""
    from ragmeter.metaeval.stats import pairwise_accuracy
    from ragmeter.metaeval.wikieval import load, pairs_for
    from ragmeter.metrics.context_relevance import ContextRelevanceFamily
    from ragmeter.types import Sample

    rows = load(path.parents[1])
    samples = [
        Sample(question=s["question"], contexts=tuple(s["contexts"]))
        for row in rows
        for s in pairs_for("context relevance", row)
    ]
    out = ContextRelevanceFamily(scorer).score_samples(samples, ["context_relevance"])
    values = [float(o["context_relevance"].value) for o in out]  # type: ignore[union-attr]
    pairs = list(zip(values[0::2], values[1::2], strict=True))
    return pairwise_accuracy([a for a, _ in pairs], [b for _, b in pairs]), pairs


def agreement(args: argparse.Namespace) -> None:
    """float32 and int8 side by side: MS MARCO, WikiEval, pairs/s on ~95-word contexts."""
    from rag_rows import realistic_rows

    from ragmeter.metaeval.stats import auroc

    triples = load_pairs(args.data, args.limit)
    scorers = {
        dtype: load_question_likelihood("offline", runtime="onnx", dtype=dtype)
        for dtype in ("float32", "int8")
    }
    print(
        f"== agreement: {scorers['float32'].name}, float32 vs int8; {len(triples)} MS MARCO "
        f"queries, threads {THREADS}, load {os.getloadavg()[0]:.1f}"
    )
    msmarco: dict[str, np.ndarray] = {}
    wiki: dict[str, tuple[float | None, list[tuple[float, float]]]] = {}
    for dtype, scorer in scorers.items():
        _, load = timed(lambda scorer=scorer: scorer.score(["warm up"], ["warm up?"]))
        print(f"  {dtype}: {scorer.name}, load {load:.1f} s, numerics {scorer.numerics()}")
        msmarco[dtype], _ = pair_scores(scorer, triples)
        wiki[dtype] = wikieval_accuracy(scorer, args.wikieval)
    rows = realistic_rows(args.speed_pairs)
    contexts = [c for r in rows for c in r["contexts"]][: args.speed_pairs]
    questions = [r["question"] for r in rows for _ in r["contexts"]][: args.speed_pairs]
    words = np.mean([len(c.split()) for c in contexts])
    rates: dict[str, list[float]] = {dtype: [] for dtype in scorers}
    per_cpu: dict[str, list[float]] = {dtype: [] for dtype in scorers}
    for _ in range(args.rounds):
        for dtype, scorer in scorers.items():
            _, seconds = timed(lambda scorer=scorer: scorer.score(contexts, questions))
            rates[dtype].append(len(contexts) / seconds)
            per_cpu[dtype].append(len(contexts) / max(LAST_CPU[0], 1e-9))
    labels = [1, 0] * len(triples)
    print(
        f"\n  {'':8s} {'MS MARCO pairwise':>17s} {'MS MARCO AUROC':>14s} "
        f"{'WikiEval pairwise':>17s} {'pairs/s (best of ' + str(args.rounds) + ')':>20s} "
        f"{'pairs per CPU s':>15s}"
    )
    for dtype in scorers:
        acc = accuracy(msmarco[dtype])
        area = auroc(msmarco[dtype].tolist(), labels)
        wacc = wiki[dtype][0]
        print(
            f"  {dtype:8s} {acc:17.3f} {area:14.3f} {wacc:17.2f} "
            f"{max(rates[dtype]):20.2f} {max(per_cpu[dtype]):15.2f}   (rounds: "
            + ", ".join(f"{r:.2f}" for r in rates[dtype])
            + ")"
        )
    print(
        f"  (MS MARCO: {len(triples)} queries, {2 * len(triples)} pairs; WikiEval: "
        f"{len(wiki['float32'][1])} questions, better vs worse context; speed: "
        f"{len(contexts)} pairs, contexts of {words:.0f} words on average; load "
        f"{os.getloadavg()[0]:.1f})"
    )
    gap = np.abs(msmarco["int8"] - msmarco["float32"])
    print(f"  |int8 - float32| on MS MARCO: max {gap.max():.1e}, mean {gap.mean():.1e}")
    flips = [
        i
        for i, ((a, b), (c, d)) in enumerate(zip(wiki["float32"][1], wiki["int8"][1], strict=True))
        if (a > b) != (c > d)
    ]
    print(f"  WikiEval questions where int8's order differs from float32's: {flips or 'none'}")
    for dtype in scorers:
        shown = " ".join(f"{a:.3f}/{b:.3f}" for a, b in wiki[dtype][1])
        print(f"  WikiEval {dtype} (better/worse per question): {shown}")
    diff = accuracy(msmarco["float32"]) - accuracy(msmarco["int8"])
    print(
        f"  int8 default condition (MS MARCO pairwise accuracy within {INT8_DEFAULT_GAP} of "
        f"float32's): {'met' if diff <= INT8_DEFAULT_GAP else 'NOT met'} (float32 - int8 = "
        f"{diff:+.3f}); int8 / float32 pairs/s {max(rates['int8']) / max(rates['float32']):.2f}x"
        f" (per CPU s {max(per_cpu['int8']) / max(per_cpu['float32']):.2f}x)"
    )
    if args.reference:
        if args.reference.is_file():
            before = np.load(args.reference)
            if before.shape != msmarco["float32"].shape:
                print(f"  reference {args.reference} has {before.shape}: use the same --limit")
            else:
                drift = float(np.abs(before - msmarco["float32"]).max())
                print(
                    f"  float32 MS MARCO scores vs {args.reference}: max |diff| {drift:.1e} "
                    f"(target <= 1e-4: {'met' if drift <= 1e-4 else 'NOT met'})"
                )
        else:
            args.reference.parent.mkdir(parents=True, exist_ok=True)
            np.save(args.reference, msmarco["float32"])
            print(f"  float32 MS MARCO scores saved to {args.reference}")


def memory_now() -> str:
    """This process's resident memory now and at its peak, and the anonymous / file-backed
    parts (mapped weight files are file-backed), from /proc/self/status, in MB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            fields[key] = int(value.split()[0]) / 1024
    return (
        f"RSS {fields['VmRSS']:6.0f} MB (anon {fields['RssAnon']:5.0f}, file "
        f"{fields['RssFile']:5.0f}), peak {fields['VmHWM']:6.0f} MB"
    )


def memory_stages(args: argparse.Namespace) -> None:
    """Resident memory of one process after each stage of scoring ``--speed-pairs`` pairs."""
    print(f"  after import:          {memory_now()}")
    from rag_rows import realistic_rows

    rows = realistic_rows(args.speed_pairs)
    contexts = [c for r in rows for c in r["contexts"]][: args.speed_pairs]
    questions = [r["question"] for r in rows for _ in r["contexts"]][: args.speed_pairs]
    scorer = load_question_likelihood("offline", runtime="onnx", dtype=args.memory_dtype)
    print(f"  scorer made:           {memory_now()}  ({scorer.name})")
    _ = scorer.loaded
    print(f"  session built:         {memory_now()}")
    scorer.score(["warm up"], ["warm up?"])
    print(f"  first pair scored:     {memory_now()}")
    started = time.perf_counter()
    scorer.score(contexts, questions)
    seconds = time.perf_counter() - started
    print(
        f"  {len(contexts)} pairs scored:      {memory_now()}  "
        f"({len(contexts) / seconds:.2f} pairs/s)"
    )


#: Runs its arguments as a command and prints the command's CPU seconds and peak RSS.
_MEASURED = (
    "import json, resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'cpu': u.ru_utime + u.ru_stime, 'rss_mb': u.ru_maxrss / 1024}))\n"
    "sys.exit(done.returncode)"
)


def main() -> None:
    if sys.argv[1:2] == ["--speed-worker"]:
        threads, tokens, pairs, out = sys.argv[2:6]
        from ragmeter.models.relevance.onnx_scorer import BATCH_TOKENS

        speed_worker(int(threads), int(tokens) or BATCH_TOKENS, int(pairs), out)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="smollm2,gemma3-270m", help="packaged model keys")
    parser.add_argument("--limit", type=int, default=200, help="MS MARCO queries (max 200)")
    parser.add_argument("--alone", type=int, default=16, help="pairs scored one by one")
    parser.add_argument("--torch-auto", type=int, default=0, help="pairs in torch's default")
    parser.add_argument("--fresh", action="store_true", help="convert in a fresh cache dir")
    parser.add_argument("--int8", action="store_true", help="also int8 matmuls (not exact)")
    parser.add_argument("--skip-torch", action="store_true", help="ONNX only")
    parser.add_argument(
        "--tokens-only", action="store_true", help="only compare token ids with transformers'"
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--speed", action="store_true", help="batched against one pair a call")
    parser.add_argument("--speed-pairs", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--memory-rows", type=int, default=0)
    parser.add_argument("--memory-dtype", default="auto", help="--relevance-dtype of that run")
    parser.add_argument("--skip-speed", action="store_true", help="with --speed: memory only")
    parser.add_argument(
        "--agreement", action="store_true", help="float32 vs int8: MS MARCO, WikiEval, pairs/s"
    )
    parser.add_argument("--wikieval", type=Path, default=WIKIEVAL)
    parser.add_argument(
        "--memory-stages",
        action="store_true",
        help="RSS after each stage of scoring --speed-pairs pairs in --memory-dtype",
    )
    parser.add_argument("--reference", type=Path, help="float32 MS MARCO scores (.npy)")
    args = parser.parse_args()
    if args.speed:
        speed(args)
        return
    if args.agreement:
        agreement(args)
        return
    if args.memory_stages:
        memory_stages(args)
        return
    if args.limit < 1 or args.alone < 1:
        parser.error("--limit and --alone must be >= 1.")
    if args.fresh:
        os.environ["RAGMETER_CACHE_DIR"] = tempfile.mkdtemp(prefix="ragmeter-bench-")
    triples = load_pairs(args.data, args.limit)
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        started = time.perf_counter()
        bench_model(model, triples, args)
        print(f"  ({time.perf_counter() - started:.0f} s for this model)")


if __name__ == "__main__":
    main()
