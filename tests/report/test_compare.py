from __future__ import annotations

import pytest

from ragmeter.errors import ConfigError, DataError
from ragmeter.report.compare import compare_runs
from ragmeter.results import run_from_rows

INFO = {
    "metrics": {
        "faithfulness": {"higher_is_better": True},
        "noise_sensitivity": {"higher_is_better": False},
    }
}


def run(values, *, metric="faithfulness", ids=True, info=INFO, order=None):
    order = order or range(len(values))
    return run_from_rows(
        [
            {
                "index": i,
                "id": f"q{i}" if ids else None,
                "scores": {metric: values[i]},
                "reasons": {metric: f"reason {i}"},
            }
            for i in order
        ],
        info,
    )


def test_paired_differences_interval_and_sign_test():
    a = run([0.5] * 10)
    b = run([0.6] * 9 + [0.4])
    mc = compare_runs(a, b).get("faithfulness")
    assert mc.n_pairs == 10
    assert mc.mean_diff == pytest.approx(0.08)
    assert (mc.improved, mc.worsened, mc.unchanged) == (9, 1, 0)
    assert mc.p_value == pytest.approx(0.021484375)  # two-sided binomial, 9 of 10
    assert mc.ci_low is not None and mc.ci_low <= mc.mean_diff <= mc.ci_high
    assert mc.worsening == pytest.approx(-0.08)
    assert "better by 0.080" in mc.verdict()


def test_top_changes_are_the_largest_moves():
    a = run([0.5, 0.5, 0.5, 0.5])
    b = run([0.5, 0.1, 0.6, 0.9])
    changes = compare_runs(a, b, top=2).get("faithfulness").top_changes
    assert [(c.index, round(c.delta, 3)) for c in changes] == [(1, -0.4), (3, 0.4)]
    assert changes[0].reason_a == "reason 1"


def test_lower_is_better_metric_improves_when_it_drops():
    a = run([0.6, 0.6, 0.6], metric="noise_sensitivity")
    b = run([0.2, 0.3, 0.6], metric="noise_sensitivity")
    comparison = compare_runs(a, b)
    mc = comparison.get("noise_sensitivity")
    assert (mc.improved, mc.worsened, mc.unchanged) == (2, 0, 1)
    assert not comparison.worse_than("noise_sensitivity", 0.0).failed
    assert compare_runs(b, a).worse_than("noise_sensitivity", 0.1).failed


def test_worse_than_gate_is_direction_aware_and_uses_delta():
    a = run([0.8, 0.8, 0.8, 0.8])
    b = run([0.7, 0.8, 0.75, 0.8])  # worse by 0.0375
    comparison = compare_runs(a, b)
    assert not comparison.worse_than("faithfulness", 0.05).failed
    gate = comparison.worse_than("faithfulness", 0.01)
    assert gate.failed and gate.worsening == pytest.approx(0.0375)
    assert "FAIL" in gate.message and "worse by 0.038" in gate.message


def test_gate_fails_when_nothing_can_be_compared():
    a = run([None, None])
    b = run([0.5, None])
    comparison = compare_runs(a, b)
    mc = comparison.get("faithfulness")
    assert mc.n_pairs == 0 and mc.only_b == 1
    assert comparison.worse_than("faithfulness", 1.0).failed


def test_unknown_gate_metric_and_negative_delta_are_config_errors():
    comparison = compare_runs(run([0.5]), run([0.5]))
    with pytest.raises(ConfigError, match="Did you mean 'faithfulness'"):
        comparison.worse_than("faithfulnes", 0.1)
    with pytest.raises(ConfigError, match=">= 0"):
        comparison.worse_than("faithfulness", -0.1)


def test_rows_pair_by_id_when_ids_are_unique_even_if_reordered():
    a = run([0.1, 0.2, 0.3])
    b = run([0.1, 0.2, 0.9], order=[2, 0, 1])
    # shuffle b's indices so index pairing would be wrong
    b = run_from_rows(
        [{"index": j, "id": r.id, "scores": dict(r.scores)} for j, r in enumerate(b.rows)],
        INFO,
    )
    comparison = compare_runs(a, b)
    assert comparison.match_by == "id"
    mc = comparison.get("faithfulness")
    assert (mc.improved, mc.unchanged) == (1, 2)


def test_index_pairing_refuses_conflicting_ids():
    a = run_from_rows(
        [{"index": 0, "id": "x", "scores": {"m": 1.0}}, {"index": 1, "scores": {}}], {}
    )
    b = run_from_rows([{"index": 0, "id": "y", "scores": {"m": 1.0}}], {})
    with pytest.raises(DataError, match="id 'x' in A but 'y' in B"):
        compare_runs(a, b)


def test_unmatched_rows_are_counted():
    a = run([0.5, 0.5, 0.5], ids=False)
    b = run([0.5, 0.5], ids=False)
    comparison = compare_runs(a, b)
    assert (comparison.paired, comparison.unmatched_a, comparison.unmatched_b) == (2, 1, 0)


def test_conflicting_directions_refuse_to_compare():
    flipped = {"metrics": {"faithfulness": {"higher_is_better": False}}}
    with pytest.raises(DataError, match="higher-is-better in one run"):
        compare_runs(run([0.5]), run([0.5], info=flipped))


def test_an_unchanged_mean_is_said_once():
    mc = compare_runs(run([0.5, 0.5, 0.5]), run([0.75, 0.25, 0.5])).get("faithfulness")
    assert mc.verdict() == "B is unchanged on average (1 improved, 1 worsened, 1 unchanged)."


def _context_precision_run(description):
    info = {
        "metrics": {"context_precision": {"higher_is_better": True, "description": description}}
    }
    return run([0.5, 0.7, 0.9], metric="context_precision", info=info)


def test_compare_refuses_context_precision_with_two_meanings():
    from ragmeter.metrics.registry import CHANGED_MEANING, get_spec

    old = _context_precision_run(CHANGED_MEANING["context_precision"].old_description)
    new = _context_precision_run(get_spec("context_precision").description)
    for a, b in ((old, new), (new, old)):
        with pytest.raises(DataError, match="context_claim_precision") as exc:
            compare_runs(a, b)
        assert "not compared" in str(exc.value)


def test_compare_accepts_two_runs_with_the_old_context_precision():
    from ragmeter.metrics.registry import CHANGED_MEANING

    old = CHANGED_MEANING["context_precision"].old_description
    comparison = compare_runs(_context_precision_run(old), _context_precision_run(old))
    assert comparison.get("context_precision").n_pairs == 3
