"""One contract over every registered metric: bounds, needed fields only, empty inputs."""

from __future__ import annotations

import math

import pytest

import ragmeter
from ragmeter.errors import ModelUnavailableError
from ragmeter.metrics.registry import all_specs

# Every registered metric on real rows: the offline judge, MiniLM and the Gemma GGUF all load.
pytestmark = pytest.mark.slow

FULL = {
    "question": "When was the Eiffel Tower completed?",
    "question_id": "q1",
    "metadata": {"category": "history"},
    "contexts": [
        "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
        "The Louvre holds the Mona Lisa.",
    ],
    "contexts_ids": ["d1", "d2"],
    "answer": "The Eiffel Tower was completed in 1889.",
    "reference_answers": ["It was completed in 1889."],
    "reference_contexts": ["The Eiffel Tower in Paris was completed in 1889."],
    "reference_context_ids": ["d1"],
    "is_answerable_label": True,
}
EMPTY_VALUES = {"text": "", "texts": [], "ids": []}
#: Metrics whose model cannot ship in a package; they refuse up front (tested below).
NEEDS_USER_MODEL = {"answer_reward"}


def _runnable() -> list[str]:
    return [name for name in all_specs() if name not in NEEDS_USER_MODEL]


def _check(result: ragmeter.RunResult, *, allow_failures: bool = False) -> None:
    specs = all_specs()
    for row in result.rows:
        for name in result.metrics:
            value = row.scores.get(name)
            if name in row.failures:
                assert allow_failures, f"{name} failed on row {row.index}: {row.failures[name]}"
                continue
            if value is None:
                assert row.reasons.get(name), f"{name} undefined without a reason"
            else:
                assert not math.isnan(value)
                assert specs[name].lower <= value <= specs[name].upper, (name, value)


@pytest.fixture(scope="module")
def full_result() -> ragmeter.RunResult:
    return ragmeter.evaluate([FULL, FULL], _runnable(), progress=False)


def test_every_metric_scores_a_complete_row_within_its_bounds(full_result):
    _check(full_result)
    for name in full_result.metrics:
        assert full_result.rows[0].scores[name] is not None or full_result.rows[0].reasons[name]


def test_every_metric_is_deterministic(full_result):
    """A second, separate run gives every score and reason again. (The two rows of one run
    cannot show it: the second row's analysis comes from the run's memo.)"""
    again = ragmeter.evaluate([FULL], _runnable(), progress=False)
    assert again.rows[0].scores == full_result.rows[0].scores
    assert again.rows[0].reasons == full_result.rows[0].reasons


@pytest.mark.parametrize("name", _runnable())
def test_metric_reads_only_the_fields_it_declares(name, full_result):
    spec = all_specs()[name]
    row = {f: FULL[f] for f in (*spec.requires, *spec.optional)}
    result = ragmeter.evaluate([row], [name], progress=False)
    _check(result)
    assert result.rows[0].scores[name] == full_result.rows[0].scores[name]
    # Without its optional fields it still scores (or says why it cannot).
    if spec.optional:
        bare = ragmeter.evaluate([{f: FULL[f] for f in spec.requires}], [name], progress=False)
        _check(bare)


def test_empty_inputs_give_a_defined_result_with_a_reason():
    from ragmeter.types import FIELD_KINDS

    rows = []
    for field, kind in FIELD_KINDS.items():
        if kind in EMPTY_VALUES:
            rows.append({**FULL, field: EMPTY_VALUES[kind]})
    result = ragmeter.evaluate(rows, _runnable(), progress=False)
    _check(result)


def test_a_metric_without_its_model_refuses_before_any_work():
    with pytest.raises(ModelUnavailableError, match="reward_model"):
        ragmeter.evaluate([FULL], ["answer_reward"], progress=False)
