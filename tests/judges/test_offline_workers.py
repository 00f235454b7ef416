"""The offline judge's chunks and worker processes change its speed, never its verdicts.

Rows like a RAG run's (an LFQA-Verification question, 3 of its documents cut to 95 words, an
answer, another system's answer as the reference), read by path from ../shared/data.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Settings, evaluate
from ragmeter.io.results import read_results
from ragmeter.judges.base import AnalyzeRequest, ClaimBlock
from ragmeter.judges.offline import processes
from ragmeter.judges.offline.batching import CallBatcher, chunk_sizes
from ragmeter.judges.offline.judge import OfflineJudge, split_verification
from ragmeter.models.claim_verifier import shipped_model_available

needs_model = pytest.mark.skipif(
    not shipped_model_available(), reason="the claim verifier needs onnxruntime"
)

METRICS = "faithfulness,noise_sensitivity_relevant,noise_sensitivity_irrelevant,claim_recall"


def _rows(shared: Path, n: int) -> list[dict[str, Any]]:
    from ragmeter.metaeval.lfqa import load_answers

    answers = load_answers(shared / "data" / "lfqa_verification")
    by_question: dict[int, list[Any]] = {}
    for a in answers:
        by_question.setdefault(a.question_id, []).append(a)
    rows = []
    for a in answers:
        docs = [" ".join(d.split()[:95]) for d in a.documents if len(d.split()) >= 80][:3]
        others = [b for b in by_question[a.question_id] if b.system != a.system]
        if len(docs) < 2 or not others:
            continue
        sentences = [s.replace("</s>", "").strip() for s in a.sentences]
        reference = [s.replace("</s>", "").strip() for s in others[0].sentences]
        rows.append(
            {
                "id": f"{a.system}-{a.question_id}",
                "question": a.question,
                "contexts": docs,
                "answer": " ".join(sentences[: 1 + len(rows) % 3]),
                "reference_answers": [" ".join(reference[:2])],
            }
        )
        if len(rows) == n:
            break
    return rows


def _scored(path: Path) -> dict[str, Any]:
    """Each row's scores, reasons, failures and details (the evidence of every verdict)."""
    rows = (row for _, row in read_results(path))
    return {r["id"]: (r["scores"], r["reasons"], r["failures"], r["details"]) for r in rows}


# -- chunks ---------------------------------------------------------------------------------


def test_chunks_are_at_most_the_chunk_size_one_per_worker_and_even() -> None:
    assert chunk_sizes(0, chunk=16, workers=2) == []
    assert chunk_sizes(10, chunk=16, workers=2) == [5, 5]
    assert chunk_sizes(40, chunk=16, workers=2) == [14, 13, 13]
    assert chunk_sizes(3, chunk=16, workers=8) == [1, 1, 1]
    assert chunk_sizes(200, chunk=16, workers=1) == [16] * 5 + [15] * 8
    assert sum(chunk_sizes(1001, chunk=7, workers=3)) == 1001


def test_calls_of_one_turn_run_in_chunks_and_a_failing_call_fails_alone() -> None:
    seen: list[list[int]] = []

    async def run_chunk(items: list[int], turn: int) -> list[Any]:
        assert turn == 10
        seen.append(items)
        return [ValueError(f"row {i} is bad") if i == 3 else i * 10 for i in items]

    async def main() -> list[Any]:
        batcher: CallBatcher[int, int] = CallBatcher(run_chunk, chunk=4, workers=2)
        return await asyncio.gather(*(batcher.submit(i) for i in range(10)), return_exceptions=True)

    results = asyncio.run(main())
    assert sorted(len(chunk) for chunk in seen) == [3, 3, 4]
    assert sorted(i for chunk in seen for i in chunk) == list(range(10))
    assert [r for k, r in enumerate(results) if k != 3] == [0, 10, 20, 40, 50, 60, 70, 80, 90]
    assert isinstance(results[3], ValueError) and "row 3" in str(results[3])


def test_a_chunk_that_fails_as_a_whole_fails_each_of_its_callers() -> None:
    async def run_chunk(items: list[int], turn: int) -> list[Any]:
        raise RuntimeError("the worker is gone")

    async def main() -> list[Any]:
        batcher: CallBatcher[int, int] = CallBatcher(run_chunk, chunk=8, workers=1)
        return await asyncio.gather(*(batcher.submit(i) for i in range(3)), return_exceptions=True)

    assert [str(r) for r in asyncio.run(main())] == ["the worker is gone"] * 3


def test_chunk_rows_must_be_a_positive_integer() -> None:
    with pytest.raises(Exception, match="chunk_rows must be an integer >= 1.*Got 0"):
        OfflineJudge(chunk_rows=0, model=None)


# -- same verdicts --------------------------------------------------------------------------


@needs_model
def test_verdicts_of_many_calls_together_equal_each_call_alone(shared: Path) -> None:
    """The unbatched path (each row's analyze and verify alone, as before chunks) and the
    batched one (one spaCy batch, one model batch) give the same claims and verdicts."""
    rows = _rows(shared, 12)
    judge = OfflineJudge(Settings(workers=1))
    requests = [
        AnalyzeRequest(
            question=r["question"],
            answer=r["answer"],
            references=tuple(r["reference_answers"]),
            contexts=tuple(r["contexts"]),
            wants=frozenset({"answer_claims", "reference_claims"}),
        )
        for r in rows
    ]
    alone = [judge.analyze_sync(r) for r in requests]
    together = judge.analyze_many(requests)
    assert together == alone
    calls = [
        (
            ClaimBlock(claims=a.answer_claims, premises=tuple(r["contexts"])),
            ClaimBlock(claims=a.reference_claims[0], premises=(r["answer"],)),
        )
        for a, r in zip(alone, rows, strict=True)
    ]
    one_by_one = [judge.verify_sync(blocks) for blocks in calls]
    batched = judge.verify_many(calls)
    assert batched == one_by_one
    assert sum(len(b.claims) for blocks in calls for b in blocks) > 30  # enough to matter
    assert any(any(any(row) for row in m) for v in batched for m in v.matrices)


def test_a_verification_of_many_calls_is_cut_back_per_call() -> None:
    from ragmeter.judges.base import Verification

    together = Verification(
        matrices=(((True,),), ((False, True),), ((True,), (False,))),
        meta={"judge": "j", "support": ("a", "b", "c"), "evidence": ("x", "y", "z")},
    )
    first, second = split_verification(together, [1, 2])
    assert first.matrices == (((True,),),)
    assert first.meta == {"judge": "j", "support": ("a",), "evidence": ("x",)}
    assert second.matrices == (((False, True),), ((True,), (False,)))
    assert second.meta["support"] == ("b", "c")


@needs_model
def test_a_run_on_two_worker_processes_scores_like_one_worker_and_like_no_chunks(
    shared: Path, tmp_path: Path
) -> None:
    rows = _rows(shared, 24)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    runs = {
        "one worker": (Settings(workers=1, use_cache=False), None),
        "two workers": (Settings(workers=2, use_cache=False), None),
        "no chunks": (Settings(workers=1, use_cache=False), 1),
    }
    scored = {}
    for name, (settings, chunk_rows) in runs.items():
        judge = OfflineJudge(settings, chunk_rows=chunk_rows)
        judge.process_min_rows = 1  # the workers start for 24 rows
        out = tmp_path / f"{name}.jsonl"
        evaluate(data, METRICS, judge=judge, settings=settings, out=out, progress=False)
        assert judge.runs_in == ("processes" if settings.workers == 2 else "threads")
        scored[name] = _scored(out)
    assert len(scored["one worker"]) == 24
    assert scored["two workers"] == scored["one worker"]
    assert scored["no chunks"] == scored["one worker"]
    faithfulness = [s[0]["faithfulness"] for s in scored["one worker"].values()]
    assert len(set(faithfulness)) > 3  # real, varied scores, not all 0 or all failures


@needs_model
def test_workers_that_cannot_start_leave_the_chunks_to_this_process(
    shared: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(processes, "WORKER_MODULE", "ragmeter.no_such_worker_module")
    rows = _rows(shared, 6)
    expected = evaluate(rows, METRICS, settings=Settings(workers=1, use_cache=False))
    judge = OfflineJudge(Settings(workers=2))
    judge.process_min_rows = 1
    with caplog.at_level("WARNING", logger="ragmeter"):
        got = evaluate(rows, METRICS, judge=judge, settings=Settings(workers=2, use_cache=False))
    assert judge.runs_in == "threads"
    assert "worker processes did not start" in caplog.text
    assert "no_such_worker_module" in caplog.text
    for metric in METRICS.split(","):
        assert got.scores(metric) == expected.scores(metric)
    assert not got.failures()


def test_a_judge_a_process_cannot_rebuild_keeps_its_chunks_in_threads() -> None:
    class Verifier:
        name = "custom"

    assert OfflineJudge(Settings(workers=2), model=Verifier()).process_spec() is None
    spec = OfflineJudge(Settings(workers=2), model=None).process_spec()
    assert spec is not None and spec["model"] is None


@needs_model
def test_a_small_run_stays_in_threads(shared: Path) -> None:
    judge = OfflineJudge(Settings(workers=2))
    rows = _rows(shared, 4)
    evaluate(rows, METRICS, judge=judge, settings=Settings(workers=2, use_cache=False))
    assert judge.process_min_rows > 4
    assert judge.runs_in == "threads"


def test_a_worker_that_dies_fails_its_chunk_and_each_waiting_one_without_hanging() -> None:
    spec = OfflineJudge(model=None).process_spec()
    assert spec is not None
    request = AnalyzeRequest(
        question="Where is Paris?",
        answer="Paris is in France. It is the capital.",
        references=(),
        contexts=(),
        wants=frozenset({"answer_claims"}),
    )

    async def main() -> tuple[Any, list[Any], str | None]:
        pool = processes.JudgeProcesses(spec, workers=1)
        try:
            (analysis,), _ = await pool.run("analyze", [request])
            worker = pool._all[0].process
            worker.kill()
            await worker.wait()
            calls = (pool.run("analyze", [request]) for _ in range(3))
            # a guard against a hang, not a speed bound
            failed = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 300)
            return analysis, failed, pool.failed
        finally:
            await pool.aclose()

    analysis, failed, reason = asyncio.run(main())
    assert analysis == OfflineJudge(model=None).analyze_sync(request)
    assert [type(f) for f in failed] == [processes.WorkerFailed] * 3
    assert reason is not None and "stopped" in reason
