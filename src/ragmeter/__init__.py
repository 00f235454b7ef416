"""ragmeter: evaluate retrieval-augmented generation.

>>> import ragmeter
>>> result = ragmeter.evaluate(
...     [{"answer": "Paris is the capital", "contexts": ["Paris is the capital of France"]}],
...     metrics=["k_precision"],
...     progress=False,
... )
>>> result.summary["k_precision"].mean
1.0
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from ragmeter.errors import (
    CacheError,
    ConfigError,
    DataError,
    JudgeError,
    JudgeReplyError,
    MissingColumnError,
    ModelUnavailableError,
    RagmeterError,
)
from ragmeter.result import RunResult
from ragmeter.runner import aevaluate, evaluate
from ragmeter.scoring.statistics import Summary
from ragmeter.settings import Settings
from ragmeter.types import Failure, MetricSpec, RowResult, Sample, Score, Usage

try:
    __version__ = version("ragmeter")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+src"


def list_metrics() -> list[MetricSpec]:
    """Every registered metric with what it needs."""
    from ragmeter.metrics.registry import all_specs

    return list(all_specs().values())


__all__ = [
    "CacheError",
    "ConfigError",
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
    "Usage",
    "__version__",
    "aevaluate",
    "evaluate",
    "list_metrics",
]
