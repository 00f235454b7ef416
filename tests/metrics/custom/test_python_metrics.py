"""Python metrics (``@ragmeter.metric``) in the Python API: defined, scored beside built-in
metrics, and every bad outcome a failure of its row only."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator

import pytest

import ragmeter
from ragmeter.metrics import registry
from ragmeter.report.compare import compare_runs

ROWS = [
    {"question_id": "ok", "answer": "Paris is the capital.", "contexts": ["Paris is the capital."]},
    {"question_id": "raises", "answer": "boom", "contexts": ["x"]},
    {"question_id": "nan", "answer": "nan", "contexts": ["x"]},
    {"question_id": "too_big", "answer": "big", "contexts": ["x"]},
    {"question_id": "undefined", "answer": "none", "contexts": ["x"]},
    {"question_id": "a_string", "answer": "text", "contexts": ["x"]},
]


@pytest.fixture(autouse=True)
def _forget_defined_metrics() -> Iterator[None]:
    """Metrics defined by a test leave the registry after it (other tests list every metric)."""
    before = set(registry.all_specs())
    yield
    for name in set(registry.all_specs()) - before:
        registry.undefine(name)


def _picky() -> object:
    @ragmeter.metric(name="picky", needs=("answer",))
    def picky(sample: ragmeter.Sample) -> object:
        """Scores rows by their answer, badly on purpose."""
        if sample.answer == "boom":
            raise ZeroDivisionError("no words to divide by")
        if sample.answer == "nan":
            return math.nan
        if sample.answer == "big":
            return 1.5
        if sample.answer == "none":
            return None
        if sample.answer == "text":
            return "0.5"
        return 0.75

    return picky


def test_each_bad_outcome_fails_its_row_only_and_names_the_metric() -> None:
    picky = _picky()
    result = ragmeter.evaluate(ROWS, metrics=[picky, "k_precision"], progress=False)
    by_id = {row.id: row for row in result.rows}
    assert by_id["ok"].scores["picky"] == 0.75
    assert (
        "picky raised ZeroDivisionError: no words to divide by" in by_id["raises"].failures["picky"]
    )
    assert "test_python_metrics.py" in by_id["raises"].failures["picky"]  # the line that raised
    assert "picky returned NaN" in by_id["nan"].failures["picky"]
    assert "1.5, outside its range [0, 1]" in by_id["too_big"].failures["picky"]
    assert "picky returned str '0.5'" in by_id["a_string"].failures["picky"]
    assert by_id["undefined"].scores["picky"] is None
    assert "picky" not in by_id["undefined"].failures
    assert "returned None" in by_id["undefined"].reasons["picky"]
    # The built-in metric scored every row, the failing ones included.
    assert all(row.scores["k_precision"] is not None for row in result.rows)
    summary = result.summary["picky"]
    assert (summary.count, summary.undefined, summary.failed) == (1, 1, 4)
    assert [(i, m) for i, m, _ in result.failures()] == [
        (1, "picky"),
        (2, "picky"),
        (3, "picky"),
        (5, "picky"),
    ]


def test_an_async_metric_and_a_score_with_a_reason_and_details() -> None:
    @ragmeter.metric(name="mentions_context", needs=("answer", "contexts"))
    async def mentions_context(sample: ragmeter.Sample) -> ragmeter.Score:
        await asyncio.sleep(0)
        hit = any(ctx.split()[0] in sample.answer for ctx in sample.contexts)
        return ragmeter.Score(
            float(hit),
            reason="first word seen" if hit else "not seen",
            details={"contexts": len(sample.contexts)},
        )

    result = ragmeter.evaluate(ROWS[:2], metrics=[mentions_context], progress=False)
    assert result["mentions_context"] == [1.0, 0.0]
    assert result.rows[0].reasons["mentions_context"] == "first word seen"
    assert result.rows[0].details["mentions_context"] == {"contexts": 1}


def test_an_async_metric_that_raises_fails_only_its_row() -> None:
    @ragmeter.metric(needs=("answer",))
    async def shaky(sample: ragmeter.Sample) -> float:
        if sample.answer == "boom":
            raise RuntimeError("the service said no")
        return 1.0

    result = ragmeter.evaluate(ROWS[:3], metrics=["shaky"], progress=False)
    assert result["shaky"][0] == 1.0 and result["shaky"][2] == 1.0
    assert "shaky raised RuntimeError: the service said no" in result.rows[1].failures["shaky"]


def test_a_row_without_a_needed_field_fails_with_the_field_named() -> None:
    @ragmeter.metric(needs=("answer", "reference_answers"))
    def same_as_reference(sample: ragmeter.Sample) -> float:
        return float(sample.answer in sample.reference_answers)

    rows = [{"answer": "a", "reference_answers": ["a"]}, {"answer": "a"}]
    result = ragmeter.evaluate(rows, metrics=[same_as_reference], progress=False)
    assert result["same_as_reference"][0] == 1.0
    assert "field 'reference_answers' is missing" in result.rows[1].failures["same_as_reference"]


def test_without_metrics_a_defined_metric_runs_where_its_fields_exist() -> None:
    @ragmeter.metric(needs=("answer",))
    def has_answer(sample: ragmeter.Sample) -> float:
        return float(bool(sample.answer))

    @ragmeter.metric(needs=("reference_contexts",))
    def never_here(sample: ragmeter.Sample) -> float:
        return 1.0

    result = ragmeter.evaluate([{"answer": "a", "contexts": ["a"]}], progress=False)
    assert result["has_answer"] == [1.0]
    assert "never_here" not in result.metrics
    assert result.info["skipped"]["never_here"] == "no column for reference_contexts"


def test_direction_range_and_description_reach_the_run_record(tmp_path) -> None:
    @ragmeter.metric(name="words", needs="answer", higher_is_better=False, lower=0, upper=100)
    def words(sample: ragmeter.Sample) -> int:
        """Words in the answer."""
        return len(sample.answer.split())

    out = tmp_path / "out.jsonl"
    result = ragmeter.evaluate(ROWS[:1], metrics=[words], out=out, progress=False)
    assert result["words"] == [4.0]
    record = json.loads((tmp_path / "out.jsonl.run.json").read_text())
    version = record["metrics"]["words"].pop("version")  # what --resume checks
    assert record["metrics"]["words"] == {
        "family": "python",
        "requires": ["answer"],
        "higher_is_better": False,
        "lower": 0.0,
        "upper": 100.0,
        "description": "Words in the answer.",
    }
    assert version == words.__ragmeter_metric__.spec.version
    assert version.startswith("source sha256:")


def test_compare_reads_a_python_metric_from_the_results(tmp_path) -> None:
    scores = iter([0.9, 0.4])

    @ragmeter.metric(needs=("answer",))
    def drifting(sample: ragmeter.Sample) -> float:
        return next(scores)

    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    ragmeter.evaluate(ROWS[:1], metrics=[drifting], out=old, progress=False)
    ragmeter.evaluate(ROWS[:1], metrics=[drifting], out=new, progress=False)
    comparison = compare_runs(old, new)
    assert comparison.get("drifting").mean_diff == pytest.approx(-0.5)
    assert comparison.worse_than("drifting", 0.1).failed


def test_resume_scores_only_the_rows_not_done(tmp_path) -> None:
    seen: list[str] = []

    @ragmeter.metric(needs=("answer",))
    def counted(sample: ragmeter.Sample) -> float:
        seen.append(sample.answer)
        return 0.5

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:3]))
    out_data = tmp_path / "resumed.jsonl"
    ragmeter.evaluate(data, metrics=[counted], out=out_data, progress=False)
    lines = out_data.read_text().splitlines()
    out_data.write_text("\n".join(lines[:2]) + "\n")  # the run stopped after two rows
    seen.clear()
    result = ragmeter.evaluate(data, metrics=[counted], out=out_data, resume=True, progress=False)
    assert seen == ["nan"]
    assert result.summary["counted"].count == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "faithfulness", "needs": ("answer",)}, "ragmeter has a metric of that name"),
        ({"name": "Not Snake", "needs": ("answer",)}, "snake_case"),
        ({"needs": ("answers",)}, "Did you mean 'answer'"),
        ({"needs": ("answer",), "higher_is_better": "yes"}, "True or False"),
        ({"needs": ("answer",), "lower": 1, "upper": 0}, "lower < upper"),
    ],
)
def test_a_bad_definition_is_refused_with_what_to_change(options, message) -> None:
    with pytest.raises(ragmeter.ConfigError, match=message):

        @ragmeter.metric(**options)
        def scored(sample: ragmeter.Sample) -> float:
            return 1.0


def test_a_plain_function_is_refused_with_how_to_make_it_a_metric() -> None:
    def plain(sample: ragmeter.Sample) -> float:
        return 1.0

    with pytest.raises(ragmeter.ConfigError, match=r"decorate the function with @ragmeter.metric"):
        ragmeter.evaluate(ROWS[:1], metrics=[plain], progress=False)


def test_the_decorated_function_stays_callable_as_written() -> None:
    picky = _picky()
    assert picky(ragmeter.Sample(answer="x")) == 0.75
    assert picky.__ragmeter_metric__.spec.description.startswith("Scores rows by their answer")


def test_a_plugin_file_that_defines_no_metric_is_refused(tmp_path) -> None:
    from ragmeter.metrics.custom.plugins import load_plugin

    empty = tmp_path / "no_metrics_here.py"
    empty.write_text("VALUE = 1\n")
    with pytest.raises(ragmeter.ConfigError, match="defines no metric"):
        load_plugin(str(empty))
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("raise RuntimeError('half written')\n")
    with pytest.raises(ragmeter.ConfigError, match="raised RuntimeError while being imported"):
        load_plugin(str(broken))


def test_an_entry_point_that_fails_names_its_package(monkeypatch) -> None:
    from importlib.metadata import EntryPoint

    from ragmeter.metrics.custom import entry_points

    point = EntryPoint(name="team", value="no_such_module_for_ragmeter", group="ragmeter.metrics")
    monkeypatch.setattr(entry_points, "entry_points", lambda group: [point])
    with pytest.raises(ragmeter.ConfigError, match="entry point 'team'.*could not be loaded"):
        entry_points.load_entry_points()
