"""Metrics with the same scores as another: equal by definition (``hit_rate_at_k`` is
``retrieval_at_k``), or on every row of this run; the report shows one and points the other
at it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.result import RunResult
from ragmeter.types import MetricSpec

#: Metrics that are the same as another by definition, and why both are kept.
_ALIASES: tuple[tuple[str, str, str], ...] = (
    (
        "retrieval_at_",
        "hit_rate_at_",
        "retrieval_at_k is Unitxt's name (its match_at_k) for what most IR tools call "
        "hit_rate_at_k: 1 when a reference id is among the first k retrieved, else 0. They are "
        "equal by definition; both are kept so that results line up with either tool.",
    ),
)


def same_scores(run: RunResult, metrics: Sequence[MetricSpec]) -> dict[str, str]:
    """Metrics whose scores equal an earlier metric's on every row (same undefined and failed
    rows too): ``{metric: the earlier one}``."""
    seen: dict[tuple[Any, ...], str] = {}
    keys: dict[str, tuple[Any, ...]] = {}
    out: dict[str, str] = {}
    for info in metrics:
        col = run.column(info.name)
        if not col.values:
            continue
        key = (tuple(col.positions), tuple(col.values), tuple(col.undefined), tuple(col.failed))
        keys[info.name] = key
        partner = _alias_of(info.name)
        if partner is not None and keys.get(partner) == key:
            out[info.name] = partner  # equal by definition: say so, not "same as mrr"
        elif key in seen:
            out[info.name] = seen[key]
        else:
            seen[key] = info.name
    return out


def _alias_of(metric: str) -> str | None:
    """The metric equal to ``metric`` by definition that comes first (hit_rate_at_3:
    retrieval_at_3), or ``None``."""
    for a, b, _ in _ALIASES:
        if metric.startswith(b) and metric[len(b) :].isdigit():
            return a + metric[len(b) :]
    return None


def alias_notes(metrics: Sequence[MetricSpec]) -> list[str]:
    """The explanations of the aliases among ``metrics``."""
    names = {m.name for m in metrics}
    return [
        why
        for a, b, why in _ALIASES
        if any(n.startswith(a) for n in names) and any(n.startswith(b) for n in names)
    ]


def alias_note(metric: str, other: str) -> str:
    """Why ``metric`` has ``other``'s scores: equal by definition, or on this run only."""
    for a, b, why in _ALIASES:
        for x, y in ((metric, other), (other, metric)):
            if x.startswith(a) and y == b + x[len(a) :]:
                return why
    return (
        f"Same scores as {other} on every row of this run: the two agree on these rows, not "
        "in general."
    )
