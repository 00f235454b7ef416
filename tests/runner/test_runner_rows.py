"""A batch of rows gets what each row gets alone: the runner's shortcuts for the common row
(samples made column by column, rows with every field sent to each family whole, scores
recorded and counted a batch at a time, redaction skipped for a batch without a URL) change
no score, message, failure, redaction or summary."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import numpy as np
import pytest

import ragmeter
from ragmeter.metrics import registry
from ragmeter.metrics.base import Settings
from ragmeter.runner.core import Accumulator
from ragmeter.types import Failure, MetricSpec, RowResult, Score

SECRET_URL = "https://user:hunter2hunter2@api.example/v1?api_key=abcdefgh123"


class _Odd(Score):
    """A Score subclass: not the exact type the runner's check looks for first."""


class _AnswerFamily:
    """answer_len, with an outcome of every kind the runner checks, chosen by the answer."""

    async def score_batch(self, samples: Any, metrics: Any) -> list[dict[str, Any]]:
        out = []
        for s in samples:
            outcome: Any
            if s.answer == "url":
                outcome = Failure("answer_len", f"server said: {SECRET_URL}", cause="judge")
            elif s.answer == "big":
                outcome = Score(1.5)
            elif s.answer == "odd big":
                outcome = _Odd(2.0)
            elif s.answer == "none":
                outcome = Score.undefined(f"nothing at {SECRET_URL}")
            elif s.answer == "float":
                outcome = 0.5
            else:
                outcome = Score(min(len(s.answer) / 100, 1.0), "by length", {"n": len(s.answer)})
            out.append(dict.fromkeys(metrics, outcome))
        return out


@pytest.fixture
def answer_family(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("ragmeter_test_rows_family")
    module.SPECS = (  # type: ignore[attr-defined]
        MetricSpec("answer_len", "answerfam", ("answer",), "length of the answer"),
    )
    module.build = lambda ctx: _AnswerFamily()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ragmeter_test_rows_family", module)
    modules = {**registry.FAMILY_MODULES, "answerfam": "ragmeter_test_rows_family"}
    monkeypatch.setattr(registry, "FAMILY_MODULES", modules)
    registry.builtin_specs.cache_clear()
    registry.family_module.cache_clear()
    yield
    registry.builtin_specs.cache_clear()
    registry.family_module.cache_clear()


METRICS = ["k_precision", "token_recall", "mrr", "map", "answer_len"]


def good(i: int, answer: str | None = None) -> dict[str, Any]:
    return {
        "question_id": f"q{i}",
        "contexts": [f"Paris is in France {i}.", "Berlin is in Germany."],
        "answer": answer if answer is not None else f"Paris is in France, row {i}.",
        "reference_answers": ["Paris is in France."],
        "contexts_ids": [f"d{i % 3}", "d9"],
        "reference_context_ids": ["d1"],
    }


def tricky_rows() -> list[Any]:
    deep: Any = ["x"]
    for _ in range(120):
        deep = [deep]
    rows: list[Any] = [good(i) for i in range(7)]
    rows += [
        {**good(7), "answer": 7},  # a mistyped field
        {k: v for k, v in good(8).items() if k != "contexts_ids"},  # a missing field
        "not a row",  # not a mapping
        {**good(10), "metadata": {"deep": deep}},  # nested too deep
        {**good(11), "contexts": '["Paris is in France.", "b"]'},  # a list given as JSON text
        {**good(12), "contexts_ids": [1, 2], "reference_context_ids": []},  # ints, no reference
        {**good(13), "metadata": {"source": "web"}, "is_answerable_label": True},
        good(14, "url"),
        good(15, "big"),
        good(16, "odd big"),
        good(17, "none"),
        good(18, "float"),
        {**good(19), "reference_answers": ["Paris", 3]},  # a bad item in a list
    ]
    rows += [good(i) for i in range(20, 30)]
    return rows


def run(rows: list[Any], batch_size: int, **kwargs: Any) -> tuple[list[str], dict[str, Any]]:
    result = ragmeter.evaluate(
        rows, METRICS, settings=Settings(batch_size=batch_size), progress=False, **kwargs
    )
    lines = [json.dumps(row.to_json(), sort_keys=True) for row in result.rows]
    return lines, {name: s.as_dict() for name, s in result.summary.items()}


@pytest.mark.usefixtures("answer_family")
def test_tricky_rows_get_the_same_results_in_batches_of_any_size() -> None:
    rows = tricky_rows()
    alone = run(rows, 1)
    assert run(rows, 3) == alone
    assert run(rows, 256) == alone
    lines = [json.loads(line) for line in alone[0]]
    assert all(set(line["scores"]) == set(METRICS) for line in lines)
    assert [line["scores"]["mrr"] for line in lines[:3]] == [0.0, 1.0, 0.0]
    assert lines[7]["failures"]["k_precision"] == "row 7, field 'answer': expected text, got int 7"
    assert "field 'contexts_ids' is missing" in lines[8]["failures"]["mrr"]
    assert lines[9]["failures"]["mrr"].startswith("row 9: expected a mapping")
    assert "nested deeper than 100" in lines[10]["failures"]["map"]
    assert lines[11]["failures"] == {}
    assert lines[12]["reasons"]["mrr"].startswith("No reference context ids")
    assert lines[13]["metadata"] == {"source": "web"}
    assert "hunter2" not in alone[0][14] and "abcdefgh123" not in alone[0][14]
    assert lines[14]["failures"]["answer_len"].startswith("server said: https://user:***@")
    assert lines[14]["failure_causes"] == {"answer_len": "judge"}
    assert "outside [0.0, 1.0]" in lines[15]["failures"]["answer_len"]
    assert "outside [0.0, 1.0]" in lines[16]["failures"]["answer_len"]
    assert "hunter2" not in lines[17]["reasons"]["answer_len"]
    assert "returned no score" in lines[18]["failures"]["answer_len"]
    assert lines[19]["failures"]["token_recall"].startswith("row 19, field 'reference_answers'")
    assert lines[20]["details"]["answer_len"] == {"n": len(good(20)["answer"])}


@pytest.mark.usefixtures("answer_family")
def test_mapped_columns_and_column_functions_give_the_same_results_in_batches() -> None:
    def answer(row: dict[str, Any]) -> str:
        if row["question_id"] == "q3":
            raise ValueError(f"cannot reach {SECRET_URL}")
        return row["text"]

    rows = [{**good(i), "text": good(i)["answer"]} for i in range(8)]
    for row in rows:
        del row["answer"]
    mapped = {"answer": answer, "contexts_ids": "contexts_ids"}
    alone = run(rows, 1, column_map=mapped)
    assert run(rows, 256, column_map=mapped) == alone
    line = json.loads(alone[0][3])
    assert line["failures"]["k_precision"].startswith(
        "row 3, field 'answer': column function raised ValueError: cannot reach https://user:***@"
    )
    assert "hunter2" not in alone[0][3]


def test_resumed_rows_limited_to_some_metrics_get_what_they_got_alone(tmp_path: Any) -> None:
    rows = [good(i) for i in range(6)] + [{**good(6), "answer": 6}]
    for batch_size in (1, 256):
        out = tmp_path / f"out{batch_size}.jsonl"
        ragmeter.evaluate(rows, ["k_precision", "mrr"], out=out, progress=False)
        result = ragmeter.evaluate(
            rows,
            ["k_precision", "mrr", "map"],
            out=out,
            resume=True,
            progress=False,
            settings=Settings(batch_size=batch_size),
        )
        assert all(set(r.scores) == {"k_precision", "mrr", "map"} for r in result.rows)
        assert "expected text, got int 6" in result.rows[6].failures["k_precision"]
        assert "map" not in result.rows[6].failures and result.rows[6].scores["map"] == 0.0
    assert (tmp_path / "out1.jsonl").read_text() == (tmp_path / "out256.jsonl").read_text()


def _row(i: int, value: float | None, *, failed: bool = False) -> RowResult:
    row = RowResult(index=i, id=None, scores={"m": value})
    if failed:
        row.failures["m"] = "boom"
    return row


@pytest.mark.parametrize("spill_after", [3, 10**9])
def test_adding_rows_at_once_counts_as_adding_them_one_by_one(spill_after: int) -> None:
    values = np.random.default_rng(0).random(40).round(2).tolist()
    rows = [_row(i, None if i % 7 == 0 else v, failed=i % 11 == 0) for i, v in enumerate(values)]
    one_by_one, at_once = Accumulator(spill_after=spill_after), Accumulator(spill_after=spill_after)
    for row in rows:
        one_by_one.add(row, "m")
    at_once.add_rows(rows[:25], "m")
    at_once.add_rows(rows[25:], "m")
    assert len(at_once.values) < spill_after
    assert (at_once.failed, at_once.undefined) == (one_by_one.failed, one_by_one.undefined)
    assert (at_once.failed, at_once.undefined) == (4, 5)
    assert np.array_equal(at_once.scores(), one_by_one.scores())
    assert at_once.summary() == one_by_one.summary()
