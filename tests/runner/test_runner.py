"""The runner's contract, exercised with small families defined here."""

from __future__ import annotations

import asyncio
import json
import sys
import types

import pytest

import ragmeter
from ragmeter.errors import ConfigError, MissingColumnError
from ragmeter.metrics import registry
from ragmeter.metrics.base import Settings
from ragmeter.result import sidecar_path
from ragmeter.types import Failure, MetricSpec, Score


class _LengthFamily:
    """answer_len: len(answer)/100 capped at 1; 'boom' answers raise; 'nan' gives 1.5."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    async def score_batch(self, samples, metrics):
        self.batches.append(len(samples))
        out = []
        for s in samples:
            if s.answer == "boom":
                raise RuntimeError("exploded on purpose")
            if s.answer == "":
                out.append({m: Score.undefined("empty answer") for m in metrics})
            elif s.answer == "too big":
                out.append({m: Score(1.5) for m in metrics})
            elif s.answer == "fail":
                out.append({m: Failure(m, "judge said no") for m in metrics})
            else:
                out.append({m: Score(min(len(s.answer) / 100, 1.0)) for m in metrics})
        return out


@pytest.fixture
def fake_family(monkeypatch):
    family = _LengthFamily()
    module = types.ModuleType("ragmeter_test_family")
    module.SPECS = (
        MetricSpec("answer_len", "testfam", ("answer",), "length of the answer"),
        MetricSpec(
            "answer_len_q",
            "testfam",
            ("answer", "question"),
            "length again",
            higher_is_better=False,
        ),
    )
    module.build = lambda ctx: family
    monkeypatch.setitem(sys.modules, "ragmeter_test_family", module)
    monkeypatch.setattr(registry, "FAMILY_MODULES", {"testfam": "ragmeter_test_family"})
    registry.builtin_specs.cache_clear()
    registry.family_module.cache_clear()
    yield family
    registry.builtin_specs.cache_clear()
    registry.family_module.cache_clear()


def test_scores_reasons_and_failures_per_row(fake_family):
    data = [
        {"answer": "x" * 50, "question": "q", "question_id": "a"},
        {"answer": "", "question": "q"},
        {"answer": "boom", "question": "q"},
        {"answer": 7, "question": "q"},
        {"question": "q"},
        {"answer": "too big", "question": "q"},
        {"answer": "fail"},
    ]
    result = ragmeter.evaluate(data, ["answer_len", "answer_len_q"], progress=False)
    rows = result.rows
    assert [r.index for r in rows] == list(range(7))
    assert rows[0].scores == {"answer_len": 0.5, "answer_len_q": 0.5} and rows[0].id == "a"
    assert rows[1].scores["answer_len"] is None
    assert rows[1].reasons["answer_len"] == "empty answer"
    assert rows[2].failures["answer_len"] == "exploded on purpose"
    assert rows[3].failures["answer_len"] == "row 3, field 'answer': expected text, got int 7"
    assert "field 'answer' is missing" in rows[4].failures["answer_len"]
    assert "outside [0.0, 1.0]" in rows[5].failures["answer_len"]
    assert rows[6].failures["answer_len"] == "judge said no"
    assert "field 'question' is missing" in rows[6].failures["answer_len_q"]
    s = result.summary["answer_len"]
    assert (s.count, s.undefined, s.failed) == (1, 1, 5)


def test_no_metrics_given_runs_those_whose_fields_exist(fake_family):
    result = ragmeter.evaluate([{"answer": "abc"}], progress=False)
    assert result.metrics == ["answer_len"]
    assert result.info["skipped"] == {"answer_len_q": "no column for question"}


def test_missing_column_rejected_before_any_work(fake_family):
    with pytest.raises(MissingColumnError, match="'question'"):
        ragmeter.evaluate([{"answer": "a"}], ["answer_len_q"], progress=False)
    assert fake_family.batches == []


def test_unknown_metric_suggests_close_names(fake_family):
    with pytest.raises(ConfigError, match="Did you mean 'answer_len'"):
        ragmeter.evaluate([{"answer": "a"}], ["answer_lne"], progress=False)


def test_bad_settings_rejected(fake_family):
    with pytest.raises(ConfigError, match="max_concurrency' setting must be >= 1. Got 0"):
        ragmeter.evaluate(
            [{"answer": "a"}], ["answer_len"], settings=Settings(max_concurrency=0), progress=False
        )


def test_batches_and_input_order(fake_family):
    data = [{"answer": "x" * i} for i in range(1, 24)]
    result = ragmeter.evaluate(
        data, ["answer_len"], settings=Settings(batch_size=5), progress=False
    )
    assert fake_family.batches == [5, 5, 5, 5, 3]
    assert [r.scores["answer_len"] for r in result.rows] == [i / 100 for i in range(1, 24)]


def test_out_file_and_sidecar(fake_family, tmp_path):
    out = tmp_path / "res.jsonl"
    ragmeter.evaluate(
        [{"answer": "ab", "question_id": 3}, {"answer": ""}],
        ["answer_len"],
        out=out,
        progress=False,
    )
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0] == {
        "index": 0,
        "id": "3",
        "scores": {"answer_len": 0.02},
        "reasons": {},
        "failures": {},
        "details": {},
    }
    assert lines[1]["scores"] == {"answer_len": None}
    assert lines[1]["reasons"] == {"answer_len": "empty answer"}
    info = json.loads(sidecar_path(out).read_text())
    assert info["n_rows"] == 2 and info["summary"]["answer_len"]["count"] == 1
    assert info["metrics"]["answer_len"]["higher_is_better"] is True


def test_resume_skips_rows_already_written_and_drops_a_torn_line(fake_family, tmp_path):
    out = tmp_path / "res.jsonl"
    data = [{"answer": "x" * i} for i in range(1, 11)]
    full = ragmeter.evaluate(data, ["answer_len"], progress=False)
    ragmeter.evaluate(data, ["answer_len"], out=out, progress=False)
    kept = out.read_text().splitlines(keepends=True)[:4]
    out.write_text("".join(kept) + '{"index": 4, "sco')  # a crash mid-write
    fake_family.batches.clear()
    resumed = ragmeter.evaluate(data, ["answer_len"], out=out, resume=True, progress=False)
    assert sum(fake_family.batches) == 6
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["index"] for x in lines] == list(range(10))
    assert [x["scores"] for x in lines] == [r.to_json()["scores"] for r in full.rows]
    assert resumed.summary["answer_len"].mean == pytest.approx(full.summary["answer_len"].mean)


def test_aevaluate_inside_a_loop_and_evaluate_refuses(fake_family):
    async def main():
        with pytest.raises(RuntimeError, match="aevaluate"):
            ragmeter.evaluate([{"answer": "a"}], ["answer_len"], progress=False)
        return await ragmeter.aevaluate([{"answer": "a"}], ["answer_len"], progress=False)

    result = asyncio.run(main())
    assert result.scores("answer_len") == [0.01]


def test_bad_json_line_becomes_a_failure_not_a_crash(fake_family, tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"answer": "ab"}\n{oops\n{"answer": "abc"}\n')
    result = ragmeter.evaluate(path, ["answer_len"], progress=False)
    assert result.scores("answer_len") == [0.02, None, 0.03]
    assert result.rows[1].failures["answer_len"].startswith("line 2 of d.jsonl is not valid JSON")
