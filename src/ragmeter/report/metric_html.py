"""One metric's section of the report: its statistics, plot, signs of risk, worst rows, good
scores to check and rows without a score; and the row choices the page shares (the worst
rows, the rows shown in full)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.errors import param
from ragmeter.report.aliases import alias_note
from ragmeter.report.checks import LOW_SUPPORT, doubts, good_count
from ragmeter.report.claim_flags import (
    flags_of,
    short_reference_rows,
    uncertain_rows,
    verdict_counts,
)
from ragmeter.report.groups import groups as groups_of
from ragmeter.report.interval import interval_text
from ragmeter.report.risk import (
    RiskSign,
    RiskThresholds,
    rank_signs,
    risk_signs,
    short_reference_sign,
    uncertain_sign,
    weak_sign,
)
from ragmeter.report.samples_html import has_claim_details, rows_brief, samples
from ragmeter.report.scale import direction
from ragmeter.report.svg import distribution_svg
from ragmeter.report.writer import Writer, num
from ragmeter.result import RunResult
from ragmeter.results import summaries
from ragmeter.runner.repeats import REPEAT_CI_METHOD
from ragmeter.scoring.statistics import Summary
from ragmeter.types import MetricSpec, RowResult

#: Row indices a sign lists before "and N more".
_MAX_SIGN_ROWS = 12


def ci_text(s: Summary) -> str:
    return interval_text(s, template="[{low:.3f}, {high:.3f}]")


def worst_rows(run: RunResult, metric: str, n: int) -> list[RowResult]:
    """The ``n`` rows with the worst defined score of ``metric`` (direction-aware; ties by
    row index)."""
    info = run.metric(metric)
    col = run.column(metric)
    if not col.values or n == 0:
        return []
    values = np.asarray(col.values)
    goodness = values if info.higher_is_better else -values
    indices = np.asarray([run.rows[p].index for p in col.positions])
    order = np.lexsort((indices, goodness))[:n]
    return [run.rows[col.positions[i]] for i in order]


#: Good scores to check shown in full per claim metric.
CHECK_SAMPLES = 3


def shown_indices(run: RunResult, worst_n: int) -> set[int]:
    """Indices of the rows a report shows in full: per metric the worst and the unscored,
    and for claim metrics the first good scores to check."""
    out: set[int] = set()
    for metric in run.metrics:
        out.update(r.index for r in worst_rows(run, metric, worst_n))
        out.update(r.index for r in unscored_rows(run, metric, worst_n))
        out.update(d.index for d in doubts_shown(run, metric)[:CHECK_SAMPLES])
    return out


def doubts_shown(run: RunResult, metric: str) -> list[Any]:
    """The doubts of ``metric`` (:func:`ragmeter.report.checks.doubts`), the weakest first."""
    found = doubts(run, metric)
    return sorted(found, key=lambda d: (d.weak[0] if d.weak else LOW_SUPPORT, -d.uncertain))


def unscored_rows(run: RunResult, metric: str, n: int) -> list[RowResult]:
    col = run.column(metric)
    return [run.rows[p] for p in sorted(col.undefined + col.failed)[:n]]


def rows_summary(run: RunResult, metric: str) -> Summary:
    """``metric``'s summary with the bootstrap interval over the rows' scores: the run's,
    except for a run with repeats, whose recorded interval resamples rows and repeats (the
    report shows that one beside it, :func:`~ragmeter.report.noise.repeats_interval`)."""
    found = run.summary[metric]
    if found.ci_method != REPEAT_CI_METHOD:
        return found
    return run.memo(f"rows_summary:{metric}", lambda: summaries(run.rows, [metric])[metric])


def uncertain_cell(s: Summary) -> str:
    share = s.uncertain_share
    if share is None:
        return "—"
    return f"{share:.0%} ({s.uncertain_verdicts} of {s.verdicts})"


def metric_signs(run: RunResult, info: MetricSpec, thresholds: RiskThresholds) -> list[RiskSign]:
    """The signs of one metric: its scores', then its verdicts' and references' (claims)."""
    col = run.column(info.name)
    signs = _score_signs(run, info, thresholds)
    counts = verdict_counts(run, info.name)
    found = [
        None
        if counts is None
        else uncertain_sign(
            info.name,
            uncertain=counts[0],
            verdicts=counts[1],
            rows=uncertain_rows(run, info.name),
            scored=len(col.values),
            thresholds=thresholds,
        ),
        short_reference_sign(
            info.name,
            rows=short_reference_rows(run, info.name),
            scored=len(col.values),
            thresholds=thresholds,
        ),
        None
        if counts is None and not any(info.name in f.weakest for f in flags_of(run))
        else weak_sign(
            info.name,
            rows=[d.index for d in doubts(run, info.name)],
            good=good_count(run, info.name),
            scored=len(col.values),
            low_support=LOW_SUPPORT,
            thresholds=thresholds,
        ),
    ]
    return signs + [sign for sign in found if sign is not None]


def _score_signs(run: RunResult, info: MetricSpec, thresholds: RiskThresholds) -> list[RiskSign]:
    col = run.column(info.name)
    return risk_signs(
        col.values,
        metric=info.name,
        higher_is_better=info.higher_is_better,
        lower=info.lower,
        upper=info.upper,
        missing=len(col.undefined) + len(col.failed),
        failed=len(col.failed),
        thresholds=thresholds,
        indices=[run.rows[p].index for p in col.positions],
        missing_indices=[run.rows[p].index for p in col.undefined + col.failed],
    )


def _rows_note(w: Writer, sign: RiskSign) -> str:
    if not sign.rows:
        return ""
    shown = ", ".join(str(i) for i in sign.rows[:_MAX_SIGN_ROWS])
    more = f" and {len(sign.rows) - _MAX_SIGN_ROWS} more" if len(sign.rows) > _MAX_SIGN_ROWS else ""
    return f' <span class="rows">(rows {w.t(shown)}{more})</span>'


def signs_list(
    w: Writer,
    signs: Sequence[RiskSign | tuple[str, RiskSign]],
    *,
    top: int | None = None,
    none: str = "No sign of high risk.",
) -> None:
    """Signs (or ``(label, sign)`` pairs) as a list: the first ``top`` shown, the rest folded
    under "N more signs"."""
    if not signs:
        w.add(f'<p class="ok">{w.t(none, limit=None)}</p>')
        return
    shown = signs if top is None else signs[:top]
    w.add('<ul class="signs">')
    for item in shown:
        prefix, sign = item if isinstance(item, tuple) else ("", item)
        label = f"[{w.t(prefix, limit=120)}] " if prefix else ""
        w.add(f'<li class="risk">{label}{w.t(sign.message, limit=None)}{_rows_note(w, sign)}</li>')
    w.add("</ul>")
    rest = signs[len(shown) :]
    if rest:
        w.add(f"<details><summary>{len(rest)} more sign{'s' if len(rest) > 1 else ''}</summary>")
        signs_list(w, rest)
        w.add("</details>")


def thresholds_option() -> str:
    """How the caller changes the risk thresholds: the CLI's ``--risk-threshold``, else the
    Python API's."""
    return param("risk_thresholds", "RiskThresholds().with_overrides({...})")


def _no_sign(run: RunResult, info: MetricSpec, thresholds: RiskThresholds) -> str:
    """What to say when a metric raised no sign: nothing risky, or too few rows to tell."""
    need = thresholds.for_metric(info.name).min_samples
    have = len(run.values(info.name))
    if have < need:
        return (
            f"Too few scores for a sign ({have}; a sign needs {need}: set min_samples=N with "
            f"{thresholds_option()})."
        )
    return "No sign of high risk."


def plot_html(w: Writer, run: RunResult, info: MetricSpec, *, group_by: str | None = None) -> None:
    if group_by:
        groups = {label: sub.values(info.name) for label, sub in groups_of(run, group_by).items()}
    else:
        groups = {info.name: run.values(info.name)}
    w.add(distribution_svg(groups, info))


def has_claims(run: RunResult, metric: str) -> bool:
    """Whether ``metric``'s rows carry claims and verdicts (a claim metric's details)."""
    return any(metric in f.verdict_counts or metric in f.weakest for f in flags_of(run))


def _stats_line(run: RunResult, info: MetricSpec) -> str:
    s = rows_summary(run, info.name)
    parts = [
        f"n {s.count}",
        f"undefined {s.undefined}",
        f"failed {s.failed}",
        *(
            f"{label} {num(value)}"
            for label, value in (
                ("mean", s.mean),
                ("median", s.median),
                ("std", s.std),
                ("min", s.min),
                ("max", s.max),
            )
        ),
        f"95% interval {ci_text(s)}",
    ]
    if s.uncertain_share is not None:
        parts.append(f"uncertain verdicts {uncertain_cell(s)}")
    return f'<p class="stats">{direction(info)} · {" · ".join(parts)}</p>'


def metric_section(
    w: Writer,
    run: RunResult,
    info: MetricSpec,
    anchor: str,
    thresholds: RiskThresholds,
    worst_n: int,
    same_as: str | None = None,
    same_anchor: str | None = None,
) -> None:
    w.add(f'<h3 id="{anchor}">{w.t(info.name)}</h3>')
    if info.description:
        w.add(f'<p class="note">{w.t(info.description)}</p>')
    if same_as is not None:
        link = f'<a href="#{same_anchor}">{w.t(same_as)}</a>' if same_anchor else w.t(same_as)
        w.add(
            f'<p class="same">= {w.t(same_as)}: {w.t(alias_note(info.name, same_as))} '
            f"Its plot, signs and rows are {link}'s.</p>"
        )
        return
    w.add(_stats_line(run, info))
    plot_html(w, run, info)
    signs_list(
        w, rank_signs(metric_signs(run, info, thresholds)), none=_no_sign(run, info, thresholds)
    )
    worst = worst_rows(run, info.name, worst_n)
    claims = has_claims(run, info.name) or any(has_claim_details(r, info.name) for r in worst)
    if worst:
        title = f"{len(worst)} worst samples ({w.t(direction(info))})"
        if claims:
            samples(w, run, worst, info, title)
        else:
            rows_brief(w, worst, info, title)
    checked = doubts_shown(run, info.name)
    if checked:
        by_index = {row.index: row for row in run.rows}
        shown = [by_index[d.index] for d in checked[:CHECK_SAMPLES]]
        samples(
            w,
            run,
            shown,
            info,
            f"{len(checked)} good score{'s' if len(checked) != 1 else ''} to check "
            f"(uncertain or weak verdicts; the first {len(shown)})",
        )
    unscored = unscored_rows(run, info.name, worst_n)
    if unscored:
        undefined, failed = run.counts(info.name)
        rows_brief(
            w, unscored, info, f"Rows without a score ({undefined} undefined, {failed} failed)"
        )
