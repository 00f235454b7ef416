"""The terminal summary of a run: one table, metrics grouped by family, the long tail folded.

A run of every metric has over 50; a table that long scrolls the gates and failures out of
view. Families are sections of the table, in the run's order. With more than
:data:`FOLD_ABOVE` metrics each family shows its first :data:`PER_FAMILY` (names without a
cutoff ``_at_K`` first), and always the metrics a gate names and those with failures; the rest
of a family folds into one "+N more FAMILY" row. The results file and the report hold every
metric. Claim metrics get an "uncertain" column: the share of their verdicts in the judge's
uncertain band; :func:`judge_line` says which judge gave the verdicts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from ragmeter.report.interval import interval_text

__all__ = ["FOLD_ABOVE", "PER_FAMILY", "SummaryLayout", "judge_line", "layout", "summary_table"]

#: Runs with more metrics than this fold each family's tail.
FOLD_ABOVE = 12
#: Metrics a family shows before its tail folds (more when gates or failures need them).
PER_FAMILY = 3
_COLUMNS = ("n", "undef", "failed", "mean", "median", "std", "95% CI", "dir")


@dataclass(frozen=True, slots=True)
class SummaryLayout:
    """Which metrics the table shows, family by family, and which fold."""

    #: ``(family, shown metric names, folded metric names)`` in the run's order.
    families: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]

    @property
    def folded(self) -> int:
        return sum(len(folded) for _, _, folded in self.families)


def _has_cutoff(name: str) -> bool:
    head, _, k = name.rpartition("_at_")
    return bool(head) and k.isdigit()


def layout(
    summary: Mapping[str, Any], families: Mapping[str, str], *, keep: Collection[str] = ()
) -> SummaryLayout:
    """Group ``summary``'s metrics by family (``families``: metric -> family); fold each
    family's tail when there are more than :data:`FOLD_ABOVE` metrics. ``keep`` (gated
    metrics) and metrics with failures are never folded."""
    grouped: dict[str, list[str]] = {}
    for name in summary:
        grouped.setdefault(families.get(name, "other"), []).append(name)
    fold = len(summary) > FOLD_ABOVE
    out = []
    for family, names in grouped.items():
        if not fold or len(names) <= PER_FAMILY:
            out.append((family, tuple(names), ()))
            continue
        must = {n for n in names if n in keep or getattr(summary[n], "failed", 0)}
        ranked = sorted(names, key=lambda n: (n not in must, _has_cutoff(n)))  # stable
        chosen = set(ranked[: max(PER_FAMILY, len(must))])
        shown = tuple(n for n in names if n in chosen)
        out.append((family, shown, tuple(n for n in names if n not in chosen)))
    return SummaryLayout(tuple(out))


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _share(summary: Any) -> str:
    share = getattr(summary, "uncertain_share", None)
    return "" if share is None else f"{share:.0%}"


def judge_line(result: Any) -> str | None:
    """Which judge decided the verdicts of the run's judge metrics (claims, entities,
    relevancy, criteria), and how much of them was uncertain; ``None`` without such metrics."""
    judged = [name for name in result.summary if result.specs[name].needs_judge]
    judge = result.info.get("judge")
    if not judged or not isinstance(judge, Mapping) or not judge.get("name"):
        return None
    name = str(judge["name"])
    method = judge.get("method")
    line = f"verdicts by {name}" + (f" ({method})" if isinstance(method, str) and method else "")
    line += f" for {len(judged)} metric{'s' if len(judged) != 1 else ''}"
    if any(getattr(s, "verdicts", None) for s in result.summary.values()):
        line += "; uncertain: the share of a claim metric's verdicts in its uncertain band"
    if name.startswith("offline"):
        line += (
            ". The offline judge is a small local model, not an LLM: read the report's 'Check "
            "these' (good scores on uncertain or weak verdicts) before trusting a high mean"
        )
    return line + "."


def summary_table(result: Any, *, keep: Collection[str] = ()) -> tuple[Table, SummaryLayout]:
    """The run's summary as a rich Table (see :func:`layout`), and the layout it follows."""
    families = {name: spec.family for name, spec in result.specs.items()}
    plan = layout(result.summary, families, keep=keep)
    table = Table(title=f"ragmeter: {result.info.get('n_rows', 0)} rows")
    width = max((len(name) for name in result.summary), default=6)
    table.add_column("metric", no_wrap=True, min_width=width)
    for col in _COLUMNS:
        table.add_column(col, justify="right", no_wrap=col == "95% CI")
    uncertain = any(getattr(s, "verdicts", None) is not None for s in result.summary.values())
    if uncertain:
        table.add_column("uncertain", justify="right", no_wrap=True)
    for i, (family, shown, folded) in enumerate(plan.families):
        for name in shown:
            s = result.summary[name]
            table.add_row(
                name,
                str(s.count),
                str(s.undefined),
                str(s.failed),
                _number(s.mean),
                _number(s.median),
                _number(s.std),
                interval_text(s),
                "↑" if result.specs[name].higher_is_better else "↓",
                *([_share(s)] if uncertain else []),
            )
        if folded:
            table.add_row(f"[dim]+{len(folded)} more {family}[/]")
        if i < len(plan.families) - 1:
            table.add_section()
    return table, plan
