"""Repeats of the judge's work combined into one row: the mean, the spread, flipped claims,
and the run's judge noise (flaky rows, flip share, the interval over rows and repeats)."""

from __future__ import annotations

import asyncio

import pytest

from ragmeter.judges.repeat import current_repeat
from ragmeter.runner.repeats import NoiseTally, combine, score_repeats
from ragmeter.types import Failure, MetricSpec, RowResult, Score

SPEC = MetricSpec("faithfulness", "claims", ("answer", "contexts"), "share supported")


def claims(*verdicts: bool) -> dict:
    return {
        "answer_claims": [
            {"claim": f"Claim {i}.", "contexts": [0] if v else []} for i, v in enumerate(verdicts)
        ]
    }


def test_each_repeat_runs_as_its_own_repeat_and_comes_back_in_order():
    async def work():
        await asyncio.sleep(0.01 * (3 - current_repeat()))  # later repeats finish first
        return [{"m": Score(float(current_repeat()), reason="r")}]

    got = asyncio.run(score_repeats(work, 3))
    assert [r[0]["m"].value for r in got] == [0.0, 1.0, 2.0]
    assert current_repeat() == 0


def test_rows_reach_the_progress_once_whatever_the_repeats():
    from ragmeter.metrics.progress import reporting_to, scored

    reports: list[int] = []

    async def work():
        for _ in range(4):  # four samples, reported one by one
            await asyncio.sleep(0)
            scored(1)
        return [{"m": Score(1.0, reason="r")}] * 4

    async def run_all():
        with reporting_to(reports.append):
            return await score_repeats(work, 3)

    asyncio.run(run_all())
    assert sum(reports) == 4


def test_a_row_is_the_mean_of_its_repeats_with_the_spread_and_flipped_claims():
    repeats = [
        [{"faithfulness": Score(1.0, reason="2 of 2.", details=claims(True, True))}],
        [{"faithfulness": Score(0.5, reason="1 of 2.", details=claims(True, False))}],
        [{"faithfulness": Score(1.0, reason="2 of 2.", details=claims(True, True))}],
    ]
    (row,) = combine(["faithfulness"], repeats, {"faithfulness": SPEC})
    score = row["faithfulness"]
    assert score.value == pytest.approx(2.5 / 3)
    assert score.details["repeats"] == {
        "values": [1.0, 0.5, 1.0],
        "spread": 0.5,
        "claims": 2,
        "flipped": ["Claim 1."],
    }
    assert score.details["answer_claims"] == claims(True, True)["answer_claims"]  # repeat 0's
    assert "Mean of 3 repeats of the judge (1, 0.5, 1), spread 0.5" in score.reason
    assert "1 of 2 claims flipped verdict" in score.reason


def test_failed_and_undefined_repeats_are_left_out_of_the_mean_and_counted():
    repeats = [
        [{"m": Failure("m", "timeout", cause="infrastructure")}],
        [{"m": Score(0.25, reason="x")}],
        [{"m": Score(None, reason="no claims")}],
    ]
    (row,) = combine(["m"], repeats)
    assert row["m"].value == 0.25
    assert row["m"].details["repeats"] == {
        "values": [None, 0.25, None],
        "spread": None,
        "failed": 1,
    }


def test_a_row_that_failed_in_every_repeat_fails_and_one_never_defined_stays_undefined():
    failed = combine(["m"], [[{"m": Failure("m", "bad reply", cause="judge")}]] * 2)[0]["m"]
    assert isinstance(failed, Failure) and failed.cause == "judge"
    assert failed.message == "Every one of the 2 repeats failed; the first: bad reply"
    undefined = combine(["m"], [[{"m": Score(None, reason="no claims")}]] * 2)[0]["m"]
    assert undefined == Score(None, reason="no claims")


def row(index: int, values: list[float], flipped: list[str] = (), claims: int = 0) -> RowResult:
    result = RowResult(index, f"q{index}")
    record = {"values": values, "spread": max(values) - min(values)}
    if claims:
        record.update(claims=claims, flipped=list(flipped))
    mean = sum(values) / len(values)
    result.record("faithfulness", Score(mean, reason="r", details={"repeats": record}))
    return result


def test_the_tally_lists_flaky_rows_most_spread_first_and_the_flip_share():
    tally = NoiseTally(repeats=3)
    for r in (
        row(0, [1.0, 1.0, 1.0], claims=4),
        row(1, [1.0, 0.5, 1.0], ["A."], claims=2),
        row(2, [0.0, 0.05, 0.0], claims=2),  # spread below a tenth of the range
        row(3, [1.0, 1.0, 1.0], ["B."], claims=2),  # a flip without a spread
        row(4, [0.0, 1.0, 0.0], claims=1),
    ):
        tally.add(r, {"faithfulness": SPEC})
    noise = tally.record()["faithfulness"]
    assert noise["repeats"] == 3 and noise["rows"] == 5
    assert noise["claims"] == 11 and noise["flipped_claims"] == 2
    assert noise["flip_share"] == pytest.approx(2 / 11)
    assert noise["flaky_rows"] == 3
    assert [f["index"] for f in noise["flaky"]] == [4, 1, 3]
    assert noise["mean_spread"] == pytest.approx((0.5 + 0.05 + 1.0) / 5)
    lo, hi = noise["ci"]
    assert lo < sum(sum(r) / 3 for r in tally.metrics["faithfulness"].rows) / 5 < hi
