from __future__ import annotations

import json

import pytest

from ragmeter.errors import ConfigError
from ragmeter.testing import assert_scores
from ragmeter.types import RowResult, Score

INFO = {
    "metrics": {
        "faithfulness": {"higher_is_better": True},
        "noise_sensitivity": {"higher_is_better": False},
    }
}


class Result:
    """Stands for the runner's RunResult: .rows (RowResult) and .info."""

    def __init__(self, faith: list[float | None], noise: list[float]) -> None:
        self.rows = []
        for i, (f, n) in enumerate(zip(faith, noise, strict=True)):
            row = RowResult(index=i, id=f"q{i}")
            row.record(
                "faithfulness",
                Score(f, reason=f"{i}: claim 'Paris is in Spain' unsupported")
                if f is not None
                else Score.undefined("answer has no claims"),
            )
            row.record("noise_sensitivity", Score(n))
            self.rows.append(row)
        self.info = INFO


def test_passes_when_every_mean_meets_its_bound():
    result = Result([0.9, 0.8, 1.0], [0.1, 0.2, 0.0])
    assert_scores(result, faithfulness=0.8, noise_sensitivity=0.2)


def test_failure_lists_means_and_worst_samples_with_reasons():
    result = Result([0.9, 0.2, 0.6, None], [0.1, 0.2, 0.0, 0.1])
    with pytest.raises(AssertionError) as info:
        assert_scores(result, faithfulness=0.8, noise_sensitivity=0.5)
    msg = str(info.value)
    assert msg.startswith("1 of 2 score checks failed:")
    assert "faithfulness (higher is better): mean 0.567 < minimum 0.8" in msg
    assert "(n=3, 1 undefined, 0 failed)" in msg
    lines = msg.splitlines()
    worst = lines[lines.index("    worst samples:") + 1 :]
    assert worst[0].startswith("      row 1 (id q1): 0.200 — 1: claim 'Paris is in Spain'")
    assert worst[1].startswith("      row 2 (id q2): 0.600")
    assert "noise_sensitivity" not in msg


def test_lower_is_better_bound_is_a_maximum():
    result = Result([1.0, 1.0], [0.4, 0.6])
    with pytest.raises(AssertionError, match=r"mean 0.500 > maximum 0.3"):
        assert_scores(result, noise_sensitivity=0.3)
    assert_scores(result, noise_sensitivity=0.5)


def test_metric_without_defined_scores_fails():
    result = Result([None, None], [0.0, 0.0])
    with pytest.raises(AssertionError, match="faithfulness: no defined score"):
        assert_scores(result, faithfulness=0.0)


def test_unknown_metric_and_bad_bound_are_config_errors():
    result = Result([1.0], [0.0])
    with pytest.raises(ConfigError, match="Did you mean 'faithfulness'"):
        assert_scores(result, faithfulnes=0.5)
    with pytest.raises(ConfigError, match="must be a number"):
        assert_scores(result, faithfulness="high")
    with pytest.raises(ConfigError, match="at least one bound"):
        assert_scores(result)


def test_accepts_a_results_path(tmp_path):
    path = tmp_path / "out.jsonl"
    rows = [
        {"index": i, "id": None, "scores": {"hallucination": v}} for i, v in enumerate([0.1, 0.9])
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # no sidecar: hallucination is known to be lower-is-better
    with pytest.raises(AssertionError, match=r"hallucination \(lower is better\): mean 0.500"):
        assert_scores(path, hallucination=0.2)
    assert_scores(str(path), hallucination=0.5)
