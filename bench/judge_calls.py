"""Judge calls, prompt tokens and concurrency of the five judge metrics, counted by the server.

Runs offline against ragmeter's local OpenAI-compatible test server (a subprocess with a
fixed latency): ~50 synthetic samples with 4 contexts and 3-sentence answers, the metrics
noise_sensitivity_relevant, noise_sensitivity_irrelevant, faithfulness, context_entity_recall
and response_relevancy, max_concurrency 16. Then the same run again on the same cache.

When Ragas is importable (by default from /work/venv-ragas, or --ragas-python), Ragas 0.4.3
runs the same samples against the same server (noise_sensitivity in both modes, faithfulness,
context_entity_recall, answer relevancy) and the ratios are printed.

Concurrency efficiency is the busy share of the limit: the server integrates the number of
requests in flight over time and divides by (limit x span from first request to last reply).
A run of N fixed-latency calls cannot exceed (N / limit) / ceil(N / limit), so the figure is
measured on a longer run (--concurrency-samples) as well as on the main one. The same share
as the judge sees it (client_concurrency_efficiency) counts each call from handing the
request to the HTTP client to reading its reply: the difference is the requests' and
replies' trips between the two processes, which a loaded machine lengthens (the load
average is printed with it).

Criteria (issue 26): the same samples with the five metrics plus five criteria of the user's
(three yes/no, two rubrics; all of a row's go to the judge in one call), and the prompt size of
the criteria call with one criterion and with five, on the same samples: the share each added
criterion costs, and the part every call pays (instructions, example, the texts).

Usage: python bench/judge_calls.py [--samples 50] [--latency 0.2] [--no-ragas]
It ends with these lines: criteria_calls_per_sample=, criteria_prompt_tokens_fixed=,
criteria_prompt_tokens_per_criterion=, calls_per_sample=, prompt_tokens_per_sample=,
concurrency_efficiency=, client_concurrency_efficiency=, rerun_calls=.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragmeter import evaluate  # noqa: E402
from ragmeter.config.criteria import Criterion  # noqa: E402
from ragmeter.metrics.base import Settings  # noqa: E402

METRICS = [
    "noise_sensitivity_relevant",
    "noise_sensitivity_irrelevant",
    "faithfulness",
    "context_entity_recall",
    "response_relevancy",
]

PEOPLE = [
    "Ada Lovelace",
    "Alan Turing",
    "Grace Hopper",
    "Claude Shannon",
    "Emmy Noether",
    "Niels Bohr",
    "Marie Curie",
    "John von Neumann",
    "Lise Meitner",
    "Kurt Godel",
]
PLACES = [
    "London",
    "Manchester",
    "Princeton",
    "Vienna",
    "Paris",
    "Copenhagen",
    "Berlin",
    "Cambridge",
    "Zurich",
    "Warsaw",
]
TOPICS = [
    "computing machines",
    "cryptography",
    "compilers",
    "information theory",
    "algebra",
    "quantum theory",
    "radioactivity",
    "game theory",
    "nuclear fission",
    "logic",
]
#: Five criteria of the kinds users write: yes/no questions and rubrics.
CRITERIA = (
    Criterion(name="names_a_year", question="Does the answer give the year the person worked?"),
    Criterion(name="stays_on_topic", question="Does the answer only talk about the person asked?"),
    Criterion(
        name="gives_advice",
        question="Does the answer give personal advice?",
        higher_is_better=False,
    ),
    Criterion(
        name="completeness",
        question="How fully does the answer answer both parts of the question?",
        fields=("question", "answer"),
        levels={
            "none": "Answers neither part.",
            "partial": "Answers one part of the question.",
            "full": "Answers both parts.",
        },
    ),
    Criterion(
        name="grounding",
        question="How much of the answer do the contexts support?",
        fields=("answer", "contexts"),
        levels={
            "little": "Most statements are not in the contexts.",
            "most": "Most statements are in the contexts.",
            "all": "Every statement is in the contexts.",
        },
    ),
)

FILLER = (
    "Historians still discuss the period in detail and many letters from that time have "
    "been preserved in archives that are open to researchers from around the world."
)


def make_samples(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        person = PEOPLE[i % len(PEOPLE)]
        place = rng.choice(PLACES)
        other = rng.choice([p for p in PLACES if p != place])
        topic = TOPICS[(i * 3) % len(TOPICS)]
        year = 1900 + rng.randrange(60)
        answer = (
            f"{person} worked in {place} in {year}. "
            f"{person} is known for work on {topic}. "
            f"{person} later moved to {other}."
        )
        reference = (
            f"{person} worked in {place} in {year} and is known for work on {topic}. "
            f"{person} received many honours."
        )
        contexts = [
            f"In {year} {person} worked in {place}, where the institute had opened. {FILLER}",
            f"{person} is known for work on {topic}, a field that grew quickly. {FILLER}",
            f"{person} later moved to {other} for a few years. {FILLER}",
            f"The weather in {rng.choice(PLACES)} was unusually cold that winter. {FILLER}",
        ]
        rows.append(
            {
                "question": f"Where did {person} work in {year} and what is {person} known for?",
                "answer": answer,
                "reference": reference,
                "contexts": contexts,
            }
        )
    return rows


class Server:
    def __init__(self, latency: float) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ragmeter.testing.server",
                "--port",
                "0",
                "--latency",
                str(latency),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("PORT="):
            raise RuntimeError(f"The test server did not start: {line!r}")
        self.port = int(line.removeprefix("PORT="))
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def _call(self, path: str, method: str = "GET") -> dict[str, Any]:
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            method=method,
            data=b"{}" if method == "POST" else None,
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)

    def stats(self) -> dict[str, Any]:
        return self._call("/stats")

    def reset(self) -> None:
        self._call("/reset", "POST")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def efficiency(stats: dict[str, Any], limit: int) -> float:
    span = stats.get("span_seconds") or 0.0
    return stats["busy_seconds"] / (limit * span) if span > 0 else 0.0


class ClientCalls:
    """The judge's own view of its chat calls: each one's span from handing the request to
    the HTTP client to reading the reply (ragmeter's ``post_json``, wrapped while a run
    lasts). The server's busy share leaves out what this one counts: the request's and the
    reply's trips between the two processes (on a loaded machine, each waits its turn for a
    core)."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []

    @contextlib.contextmanager
    def watching(self) -> Iterator[ClientCalls]:
        from ragmeter.judges.llm import openai_judge

        original = openai_judge.post_json

        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.monotonic()
            try:
                return await original(*args, **kwargs)
            finally:
                self.spans.append((start, time.monotonic()))

        openai_judge.post_json = timed
        try:
            yield self
        finally:
            openai_judge.post_json = original

    def efficiency(self, limit: int) -> float:
        """Calls in flight, integrated over time, over ``limit`` x first send to last reply."""
        if not self.spans:
            return 0.0
        span = max(end for _, end in self.spans) - min(start for start, _ in self.spans)
        busy = sum(end - start for start, end in self.spans)
        return busy / (limit * span) if span > 0 else 0.0


def ragmeter_run(
    server: Server,
    rows: list[dict],
    cache: Path,
    limit: int,
    *,
    metrics: list[str] = METRICS,
    criteria: tuple[Criterion, ...] = (),
) -> dict[str, Any]:
    settings = Settings(
        judge="openai:test-model",
        base_url=server.base_url,
        embedder="openai:test-embed",
        cache_path=str(cache),
        max_concurrency=limit,
        criteria=criteria,
    )
    server.reset()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with ClientCalls().watching() as client:
        result = evaluate(rows, metrics=metrics, settings=settings, progress=False)
    wall = time.perf_counter() - started
    stats = server.stats()
    means = {name: result.summary[name].mean for name in result.summary}
    failed = {name: result.summary[name].failed for name in result.summary}
    return {
        "stats": stats,
        "wall": wall,
        "means": means,
        "failed": failed,
        "client_efficiency": client.efficiency(limit),
        "load": (load, os.getloadavg()[0]),
    }


RAGAS_PEER = r"""
import asyncio, json, sys, time
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from ragas import EvaluationDataset, evaluate
from ragas.embeddings import LangchainEmbeddingsWrapper
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import (ContextEntityRecall, Faithfulness, NoiseSensitivity,
                           ResponseRelevancy)
from ragas.run_config import RunConfig

rows = json.load(open(sys.argv[1]))
base_url, limit = sys.argv[2], int(sys.argv[3])
llm = LangchainLLMWrapper(ChatOpenAI(model="test-model", base_url=base_url, api_key="none",
                                     temperature=0, max_retries=0))
emb = LangchainEmbeddingsWrapper(OpenAIEmbeddings(model="test-embed", base_url=base_url,
                                 api_key="none", check_embedding_ctx_length=False))
data = EvaluationDataset.from_list([
    {"user_input": r["question"], "response": r["answer"], "reference": r["reference"],
     "retrieved_contexts": r["contexts"]} for r in rows])
metrics = [NoiseSensitivity(mode="relevant"), NoiseSensitivity(mode="irrelevant"),
           Faithfulness(), ContextEntityRecall(), ResponseRelevancy()]
t = time.perf_counter()
result = evaluate(data, metrics=metrics, llm=llm, embeddings=emb,
                  run_config=RunConfig(max_workers=limit, timeout=600, max_retries=1),
                  show_progress=False, raise_exceptions=False)
df = result.to_pandas()
cols = [c for c in df.columns if c not in ("user_input", "response", "reference",
                                           "retrieved_contexts")]
print(json.dumps({"wall": time.perf_counter() - t,
                  "means": {c: float(df[c].mean()) for c in cols},
                  "nan": {c: int(df[c].isna().sum()) for c in cols}}))
"""


def ragas_run(python: str, server: Server, rows: list[dict], limit: int) -> dict[str, Any] | None:
    check = subprocess.run([python, "-c", "import ragas"], capture_output=True, text=True)
    if check.returncode != 0:
        print(f"# Ragas not importable with {python}; peer skipped.")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "rows.json"
        data.write_text(json.dumps(rows))
        script = Path(tmp) / "peer.py"
        script.write_text(RAGAS_PEER)
        server.reset()
        env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "OPENAI_API_KEY": "none"}
        proc = subprocess.run(
            [python, str(script), str(data), server.base_url, str(limit)],
            capture_output=True,
            text=True,
            env=env,
            timeout=3600,
        )
    stats = server.stats()
    if proc.returncode != 0:
        print("# Ragas failed:\n" + proc.stderr[-3000:])
        return None
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"stats": stats, **out}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--concurrency-samples", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--max-concurrency", type=int, default=16)
    parser.add_argument("--ragas-python", default="/work/venv-ragas/bin/python")
    parser.add_argument("--no-ragas", action="store_true")
    args = parser.parse_args()
    limit = args.max_concurrency
    rows = make_samples(args.samples)
    server = Server(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            first = ragmeter_run(server, rows, Path(tmp) / "cache.sqlite3", limit)
            rerun = ragmeter_run(server, rows, Path(tmp) / "cache.sqlite3", limit)
            with_criteria = ragmeter_run(
                server, rows, Path(tmp) / "criteria.sqlite3", limit, criteria=CRITERIA
            )
            names = [c.name for c in CRITERIA]
            one_only = ragmeter_run(
                server,
                rows,
                Path(tmp) / "one.sqlite3",
                limit,
                metrics=names[:1],
                criteria=CRITERIA[:1],
            )
            five_only = ragmeter_run(
                server, rows, Path(tmp) / "five.sqlite3", limit, metrics=names, criteria=CRITERIA
            )
            longer = None
            if args.concurrency_samples > args.samples:
                long_rows = make_samples(args.concurrency_samples, seed=11)
                longer = ragmeter_run(server, long_rows, Path(tmp) / "long.sqlite3", limit)
        peer = None
        if not args.no_ragas and Path(args.ragas_python).exists():
            peer = ragas_run(args.ragas_python, server, rows, limit)
        elif not args.no_ragas:
            print(f"# {args.ragas_python} not found; Ragas peer skipped.")
    finally:
        server.stop()

    n = len(rows)
    s = first["stats"]
    calls = s["chat_calls"] / n
    tokens = s["prompt_tokens"] / n
    eff_main = efficiency(s, limit)
    rounds = s["chat_calls"] / limit
    print(
        f"# ragmeter, {n} samples, latency {args.latency} s, limit {limit}: "
        f"{s['chat_calls']} chat calls ({s['analyze_calls']} analyze, {s['verify_calls']} "
        f"verify), {s['embedding_calls']} embedding calls, max in flight "
        f"{s['max_in_flight']}, wall {first['wall']:.2f} s"
    )
    print(
        f"# busy share on this run {eff_main:.3f} (ceiling for {s['chat_calls']} fixed-latency "
        f"calls: {rounds / math.ceil(rounds):.3f})"
    )
    print("# means: " + ", ".join(f"{k}={v:.3f}" for k, v in first["means"].items()))
    print("# failed rows: " + ", ".join(f"{k}={v}" for k, v in first["failed"].items()))
    eff = eff_main
    client_eff = first["client_efficiency"]
    if longer is not None:
        ls = longer["stats"]
        eff = efficiency(ls, limit)
        client_eff = longer["client_efficiency"]
        lr = ls["chat_calls"] / limit
        print(
            f"# concurrency run: {args.concurrency_samples} samples, {ls['chat_calls']} calls, "
            f"busy share {eff:.3f} (ceiling {lr / math.ceil(lr):.3f}), "
            f"max in flight {ls['max_in_flight']}, wall {longer['wall']:.2f} s"
        )
        before, after = longer["load"]
        print(
            f"# the same run as the judge sees it: busy share {client_eff:.3f} (from handing a "
            f"request to the HTTP client to reading its reply); {os.cpu_count()} cores, load "
            f"average {before:.1f} before, {after:.1f} after"
        )
    if peer is not None:
        p = peer["stats"]
        p_calls = p["chat_calls"] / n
        p_tokens = p["prompt_tokens"] / n
        p_eff = efficiency(p, limit)
        print(
            f"# Ragas 0.4.3 on the same {n} samples and server: {p['chat_calls']} chat calls, "
            f"{p['embedding_calls']} embedding calls, max in flight {p['max_in_flight']}, "
            f"wall {peer['wall']:.2f} s"
        )
        print(
            "# Ragas means: "
            + ", ".join(f"{k}={v:.3f}" for k, v in peer["means"].items())
            + "; NaN rows: "
            + ", ".join(f"{k}={v}" for k, v in peer["nan"].items())
        )
        print(f"ragas_calls_per_sample={p_calls:.2f}")
        print(f"ragas_prompt_tokens_per_sample={p_tokens:.1f}")
        print(f"ragas_concurrency_efficiency={p_eff:.3f}")
        print(f"ratio_calls={calls / p_calls:.3f}")
        print(f"ratio_prompt_tokens={tokens / p_tokens:.3f}")
        print(f"ratio_concurrency_efficiency_same_samples={eff_main / p_eff:.3f}")
        print(f"ratio_wall_time={first['wall'] / peer['wall']:.3f}")
    c = with_criteria["stats"]
    failed_criteria = {k: v for k, v in with_criteria["failed"].items() if v}
    print(
        f"# with {len(CRITERIA)} criteria too: {c['chat_calls']} chat calls "
        f"({c['analyze_calls']} analyze, {c['verify_calls']} verify, {c['criteria_calls']} "
        f"criteria), failed rows: {failed_criteria or 'none'}"
    )
    one_tokens = one_only["stats"]["prompt_tokens"] / n
    five_tokens = five_only["stats"]["prompt_tokens"] / n
    per_criterion = (five_tokens - one_tokens) / (len(CRITERIA) - 1)
    print(
        f"# criteria call alone: {one_tokens:.1f} prompt tokens a sample with 1 criterion, "
        f"{five_tokens:.1f} with {len(CRITERIA)} (server's count: words and punctuation)"
    )
    from ragmeter.judges.llm.criteria import _criterion_item
    from ragmeter.testing.simulated import count_tokens

    sizes = {cr.name: count_tokens(json.dumps(_criterion_item(cr))) for cr in CRITERIA}
    print(
        "# tokens of each criterion's own entry (question, fields, answers): "
        + ", ".join(f"{k}={v}" for k, v in sizes.items())
        + "; the rest of the difference is the texts criteria 4 and 5 add (question, contexts)"
    )
    print(f"criteria_calls_per_sample={c['chat_calls'] / n:.2f}")
    print(f"criteria_prompt_tokens_fixed={one_tokens - per_criterion:.1f}")
    print(f"criteria_prompt_tokens_per_criterion={per_criterion:.1f}")
    print(f"calls_per_sample={calls:.2f}")
    print(f"prompt_tokens_per_sample={tokens:.1f}")
    print(f"concurrency_efficiency={eff:.3f}")
    print(f"client_concurrency_efficiency={client_eff:.3f}")
    print(f"rerun_calls={rerun['stats']['chat_calls']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
