"""``assert_scores``: a one-line quality gate for users' test suites.

>>> assert_scores(result, faithfulness=0.8, noise_sensitivity=0.2)  # doctest: +SKIP

Each number is a bound on the metric's mean over defined scores: a minimum for
higher-is-better metrics, a maximum for lower-is-better ones. On failure the
AssertionError lists every failing metric with its mean and the worst samples with
their reasons.
"""

from __future__ import annotations

from typing import Any

from ragmeter.errors import ConfigError, unknown_metric

__all__ = ["assert_scores"]

_WORST = 3
_REASON_LIMIT = 200


def _clip(text: str, limit: int = _REASON_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def assert_scores(result: Any, /, **bounds: float) -> None:
    """Fail with a readable message when a metric's mean misses its bound.

    ``result`` is a RunResult (anything with ``.rows`` and ``.info``) or the path of a
    results ``.jsonl``. ``bounds`` maps metric names to a minimum mean (a
    maximum for lower-is-better metrics such as ``noise_sensitivity``). A metric with no
    defined score fails. An unknown metric name raises :class:`ragmeter.errors.ConfigError`.
    """
    from ragmeter.report.load import as_run
    from ragmeter.report.metric_html import worst_rows
    from ragmeter.report.scale import direction

    if not bounds:
        raise ConfigError(
            "assert_scores needs at least one bound, e.g. assert_scores(result, faithfulness=0.8)."
        )
    run = as_run(result)
    problems: list[str] = []
    for metric, bound in bounds.items():
        if isinstance(bound, bool) or not isinstance(bound, int | float):
            raise ConfigError(f"The bound for {metric!r} must be a number. Got {bound!r}.")
        info = run.metric(metric) if metric in run.metrics else None
        if info is None:
            raise unknown_metric(metric, run.metrics, where="this result")
        values = run.values(metric)
        undefined, failed = run.counts(metric)
        counts = f"n={len(values)}, {undefined} undefined, {failed} failed"
        kind = "minimum" if info.higher_is_better else "maximum"
        if not values:
            problems.append(f"  {metric}: no defined score ({counts}); {kind} {bound:g}.")
            continue
        mean = sum(values) / len(values)
        ok = mean >= bound if info.higher_is_better else mean <= bound
        if ok:
            continue
        op = "<" if info.higher_is_better else ">"
        lines = [
            f"  {metric} ({direction(info)}): mean {mean:.3f} {op} {kind} {bound:g} ({counts})",
            "    worst samples:",
        ]
        for row in worst_rows(run, metric, _WORST):
            who = f"row {row.index}" + (f" (id {row.id})" if row.id is not None else "")
            reason = row.reasons.get(metric) or row.failures.get(metric)
            lines.append(
                f"      {who}: {row.scores[metric]:.3f}" + (f" — {_clip(reason)}" if reason else "")
            )
        problems.append("\n".join(lines))
    if problems:
        raise AssertionError(
            f"{len(problems)} of {len(bounds)} score checks failed:\n" + "\n".join(problems)
        )
