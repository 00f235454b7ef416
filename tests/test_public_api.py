"""The flat public namespace: ``ragmeter.__all__`` is exactly the API, and each name resolves."""

from __future__ import annotations

import ragmeter

PUBLIC = {
    "CacheError",
    "ConfigError",
    "Criterion",
    "DataError",
    "Failure",
    "JudgeError",
    "JudgeReplyError",
    "MetricSpec",
    "MissingColumnError",
    "ModelUnavailableError",
    "RagmeterError",
    "RowResult",
    "RunResult",
    "Sample",
    "Score",
    "Settings",
    "Summary",
    "UnknownMetricError",
    "Usage",
    "__version__",
    "aevaluate",
    "calibrate",
    "evaluate",
    "list_metrics",
    "metric",
}


def test_all_lists_exactly_the_public_api() -> None:
    assert set(ragmeter.__all__) == PUBLIC
    assert len(ragmeter.__all__) == len(PUBLIC)


def test_every_public_name_resolves() -> None:
    missing = [name for name in ragmeter.__all__ if not hasattr(ragmeter, name)]
    assert missing == []


def test_an_unknown_metric_raises_the_exported_error_type() -> None:
    result = ragmeter.evaluate(
        [{"answer": "Paris", "contexts": ["Paris"]}], ["k_precision"], progress=False
    )
    try:
        result.scores("k_precison")
    except ragmeter.UnknownMetricError as exc:
        assert "k_precision" in str(exc)  # the close name is suggested
    else:
        raise AssertionError("an unknown metric name was accepted")


def test_ragmeter_testing_is_reachable_after_a_bare_import() -> None:
    """The README's gate, ``ragmeter.testing.assert_scores(...)`` after ``import ragmeter``,
    works in a fresh interpreter (issue 37, item 7), and a plain import loads no test double."""
    import subprocess
    import sys

    code = (
        "import sys, ragmeter\n"
        "assert 'ragmeter.testing' not in sys.modules\n"
        "assert ragmeter.testing.assert_scores is not None\n"
        "try:\n    ragmeter.no_such_name\nexcept AttributeError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "module 'ragmeter' has no attribute 'no_such_name'"
