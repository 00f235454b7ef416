"""The accumulator's counts from a row's details: verdicts and refusals are counted whatever
shape the details take (a dict, another mapping), and details that hold neither (a lexical
or retrieval score's) add nothing, on the fast path that passes them over."""

from __future__ import annotations

from types import MappingProxyType

from ragmeter.runner.accumulator import Accumulator
from ragmeter.types import RowResult


def row(index: int, value: float | None, details: object = None) -> RowResult:
    result = RowResult(index, f"q{index}", scores={"m": value})
    if details is not None:
        result.details = {"m": details}
    return result


def test_verdicts_and_refusals_are_counted_from_dicts_and_other_mappings() -> None:
    acc = Accumulator()
    acc.add_rows(
        [
            row(0, 0.5, {"verdict_count": 4, "uncertain_verdicts": 1}),
            row(1, 1.0, MappingProxyType({"verdict_count": 2, "uncertain_verdicts": 2})),
            row(2, 1.0, {"refused": True, "answerable": False}),
            row(3, 0.0, MappingProxyType({"refused": False, "answerable": True})),
        ],
        "m",
    )
    summary = acc.summary()
    assert (summary.verdicts, summary.uncertain_verdicts) == (6, 3)
    assert summary.refusals is not None
    assert summary.refusals.as_counts() == acc.refusals.as_counts()  # type: ignore[union-attr]
    assert sum(summary.refusals.as_counts().values()) == 2


def test_details_without_counts_add_none_and_scores_are_kept_in_order() -> None:
    acc = Accumulator()
    acc.add_rows(
        [
            row(0, 0.25, {"best_context": 0, "common_tokens": 1, "answer_tokens": 4}),
            row(1, None, {"reason": "no contexts"}),
            row(2, 0.75, {"first_relevant_rank": 2}),
            row(3, 1.0),
        ],
        "m",
    )
    failed = RowResult(4, "q4", scores={"m": None}, failures={"m": "bad row"})
    acc.add(failed, "m")
    assert acc.scores().tolist() == [0.25, 0.75, 1.0]
    assert (acc.undefined, acc.failed) == (1, 1)
    summary = acc.summary()
    assert summary.verdicts is None and summary.refusals is None
