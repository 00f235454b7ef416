"""Redacting a batch's rows hands the event loop back between rows once it has run a while,
so the other batch's judge replies are read and the judge's free slots refilled meanwhile
(a judge's rows take about half a millisecond each to redact)."""

from __future__ import annotations

import asyncio
from itertools import pairwise

import pytest

from ragmeter.io.columns import ColumnMap
from ragmeter.io.readers import open_rows
from ragmeter.io.redact import register_secret
from ragmeter.metrics.base import RunContext
from ragmeter.runner import batch_scorer
from ragmeter.runner.batch_scorer import BatchScorer
from ragmeter.runner.plan import Plan

SECRET = "sk-redaction-yield-test-0123456789"
ROWS = [
    {
        "question_id": f"q{i}",
        "answer": f"The answer {i} says {SECRET}.",
        "contexts": [f"A context about answer {i}."],
    }
    for i in range(12)
]


def redacted_batch(monkeypatch: pytest.MonkeyPatch, yield_after: float) -> tuple[list, list]:
    """Score ROWS as one batch with a secret known; return the results and, for each
    row redacted, how many times a task beside the batch had run by then."""
    register_secret(SECRET)
    monkeypatch.setattr(batch_scorer, "YIELD_AFTER", yield_after)
    seen: list[int] = []
    ticks = 0
    redact = batch_scorer._redact_row

    def recording(row, secrets):  # type: ignore[no-untyped-def]
        seen.append(ticks)
        redact(row, secrets)

    monkeypatch.setattr(batch_scorer, "_redact_row", recording)

    async def run() -> list:
        nonlocal ticks
        cmap = ColumnMap.from_any(None)
        source = open_rows(ROWS)
        plan = Plan.make(["k_precision"], cmap, source)
        ctx = RunContext()
        plan.build_families(ctx)

        async def beside() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.ensure_future(beside())
        try:
            return await BatchScorer(plan, cmap, ctx).score(list(source))
        finally:
            ticker.cancel()

    return asyncio.run(run()), seen


def test_other_tasks_run_between_rows_while_a_batch_is_redacted(monkeypatch) -> None:
    results, seen = redacted_batch(monkeypatch, yield_after=0.0)
    assert len(seen) == len(ROWS)
    # Every row after the first is redacted after a yield: the task beside it ran each time.
    assert all(later > earlier for earlier, later in pairwise(seen))
    assert [r.index for r in results] == list(range(len(ROWS)))


def test_a_short_redaction_runs_through_and_scores_are_the_same(monkeypatch) -> None:
    yielding, _ = redacted_batch(monkeypatch, yield_after=0.0)
    through, seen = redacted_batch(monkeypatch, yield_after=3600.0)
    assert len(set(seen)) == 1  # no yield: nothing else ran while the batch was redacted
    assert [r.to_json() for r in yielding] == [r.to_json() for r in through]
    assert all(r.scores["k_precision"] is not None for r in through)
