"""Flat memory: the CLI streams rows to --out without keeping them; scores spill to disk."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.result import sidecar_path
from ragmeter.runner import Accumulator, accumulator, pipeline
from ragmeter.scoring.statistics import summarize
from ragmeter.types import RowResult

METRICS = ["k_precision", "token_recall", "mrr", "map"]


def _write_rows(path: Path, n: int, *, seed: int = 3) -> Path:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "the", "a", "river", "stone", "light", "paris"]
    ids = [f"d{i}" for i in range(12)]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            contexts = [" ".join(rng.choices(words, k=rng.randint(3, 12))) for _ in range(3)]
            row = {
                "question_id": f"q{i}",
                "question": "what?",
                "contexts": contexts if i % 50 else [],  # some undefined k_precision
                "contexts_ids": rng.sample(ids, 4),
                "answer": " ".join(rng.choices(words, k=rng.randint(1, 8))),
                "reference_answers": [" ".join(rng.choices(words, k=rng.randint(1, 6)))],
                "reference_context_ids": rng.sample(ids, 2),
            }
            if i % 97 == 5:
                row["answer"] = 12  # a bad field: failures for the answer metrics
            fh.write(json.dumps(row) + "\n")
    return path


def _summaries(result: ragmeter.RunResult) -> dict[str, dict]:
    return {name: s.as_dict() for name, s in result.summary.items()}


def test_run_without_keeping_rows_gives_the_same_summaries_and_file(tmp_path, monkeypatch):
    data = _write_rows(tmp_path / "data.jsonl", 3000)
    monkeypatch.setattr(accumulator, "SPILL_AFTER", 256)  # spill many times over 3,000 rows
    kept = ragmeter.evaluate(data, METRICS, out=tmp_path / "kept.jsonl", progress=False)
    streamed = ragmeter.evaluate(
        data, METRICS, out=tmp_path / "streamed.jsonl", progress=False, keep_rows=False
    )
    assert len(kept.rows) == 3000
    assert streamed.rows == []
    assert streamed.info["n_rows"] == 3000
    assert _summaries(streamed) == _summaries(kept)
    assert (tmp_path / "streamed.jsonl").read_bytes() == (tmp_path / "kept.jsonl").read_bytes()
    # the kept rows give the same summaries when recomputed from scratch
    for name in METRICS:
        values = [r.scores[name] for r in kept.rows if r.scores.get(name) is not None]
        assert kept.summary[name] == summarize(
            values,
            undefined=kept.summary[name].undefined,
            failed=kept.summary[name].failed,
        )
    assert kept.summary["k_precision"].undefined > 0
    assert kept.summary["k_precision"].failed > 0


def test_cli_with_out_does_not_keep_rows(tmp_path, monkeypatch):
    data = _write_rows(tmp_path / "data.jsonl", 400)
    seen: list[bool] = []
    original = pipeline.score_data

    async def spy(*args, **kwargs):
        seen.append(kwargs["keep_rows"])
        result = await original(*args, **kwargs)
        seen.append(len(result.rows))
        return result

    monkeypatch.setattr(pipeline, "score_data", spy)
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(
        app, ["evaluate", str(data), "-m", ",".join(METRICS), "--out", str(out), "-q"]
    )
    assert res.exit_code == 0, res.output
    assert seen == [False, 0]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["index"] for line in lines] == list(range(400))


def test_cli_without_out_keeps_rows_to_print_failures(tmp_path, monkeypatch):
    data = _write_rows(tmp_path / "data.jsonl", 30)
    seen: list[bool] = []
    original = pipeline.score_data

    async def spy(*args, **kwargs):
        seen.append(kwargs["keep_rows"])
        return await original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "score_data", spy)
    res = CliRunner().invoke(app, ["evaluate", str(data), "-m", "k_precision", "-q"])
    assert res.exit_code == 0, res.output
    assert seen == [True]


def test_resume_of_a_streamed_run_gives_the_same_summaries(tmp_path):
    data = _write_rows(tmp_path / "data.jsonl", 600)
    full = ragmeter.evaluate(data, METRICS, out=tmp_path / "full.jsonl", progress=False)
    out = tmp_path / "part.jsonl"
    lines = (tmp_path / "full.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:250]) + lines[250][:40], encoding="utf-8")  # torn last line
    # The run record, as a killed run leaves it (written with its first row).
    sidecar_path(out).write_text(sidecar_path(tmp_path / "full.jsonl").read_text())
    resumed = ragmeter.evaluate(
        data, METRICS, out=out, progress=False, resume=True, keep_rows=False
    )
    assert resumed.rows == []
    assert _summaries(resumed) == _summaries(full)
    assert out.read_bytes() == (tmp_path / "full.jsonl").read_bytes()


def _row(i: int, value: float | None, *, failed: bool = False) -> RowResult:
    row = RowResult(index=i, id=None)
    row.scores["m"] = value
    if failed:
        row.failures["m"] = "boom"
    return row


@pytest.mark.parametrize("n", [0, 1, 2, 9, 500, 12_345])
def test_spilled_accumulator_matches_the_in_memory_one(n):
    rng = np.random.default_rng(n)
    values = np.round(rng.random(n), 3)  # ties, as real scores have
    spilled = Accumulator(spill_after=7)
    memory = Accumulator(spill_after=10**9)
    for i, v in enumerate(values):
        for acc in (spilled, memory):
            acc.add(_row(i, float(v)), "m")
    for acc in (spilled, memory):
        acc.add(_row(n, None), "m")
        acc.add(_row(n + 1, None, failed=True), "m")
    assert spilled.count == memory.count == n
    assert len(spilled.values) < 7
    if n >= 7:
        assert spilled.spilled > 0 and memory.spilled == 0
    assert np.array_equal(spilled.scores(), values)
    a, b = spilled.summary(), memory.summary()
    assert a == b
    assert (a.count, a.undefined, a.failed) == (n, 1, 1)
    assert a == summarize(values.tolist(), undefined=1, failed=1)


def test_accumulator_extend_spills_and_summary_releases_the_file():
    acc = Accumulator(spill_after=100)
    chunks = [np.linspace(0, 1, 37), np.linspace(0.2, 0.3, 250), np.array([0.5])]
    for chunk in chunks:
        acc.extend(chunk.tolist())
    assert acc.spilled == 287 and len(acc.values) == 1
    expected = np.concatenate(chunks)
    assert np.array_equal(acc.scores(), expected)
    spill = acc._spill
    assert spill is not None and not spill.closed
    assert acc.summary() == summarize(expected.tolist())
    assert spill.closed and acc._spill is None


def test_accumulator_memory_stays_bounded_over_a_million_scores():
    acc = Accumulator(spill_after=4096)
    block = np.random.default_rng(0).random(10_000).tolist()
    for _ in range(100):
        acc.extend(block)
        assert len(acc.values) < 4096
    assert acc.count == 1_000_000
    summary = acc.summary()
    assert summary.count == 1_000_000
    assert summary.mean == pytest.approx(float(np.mean(block)), abs=1e-12)
