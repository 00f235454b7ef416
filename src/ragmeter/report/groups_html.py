"""The report's section by group (``group_by``): signs by group, the means of every metric
by group, and each metric's statistics and plot by group."""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.report.aliases import same_scores
from ragmeter.report.groups import groups as groups_of
from ragmeter.report.metric_html import ci_text, metric_signs, plot_html
from ragmeter.report.overview_html import SIGN_WORD, signs_grouped
from ragmeter.report.risk import (
    RiskSign,
    RiskThresholds,
    rank_signs,
)
from ragmeter.report.writer import Writer, num
from ragmeter.result import RunResult
from ragmeter.types import MetricSpec


def group_section(
    w: Writer,
    run: RunResult,
    group_by: str,
    metrics: Sequence[MetricSpec],
    thresholds: RiskThresholds,
    top_signs: int,
) -> None:
    """Signs by group first, then the means of every metric by group in one table, then
    each metric's statistics and box plot by group (folded unless the metric has a sign)."""
    groups = groups_of(run, group_by)
    by = w.t(group_by)
    w.add(
        f'<h2 id="groups">By {by}</h2>',
        f'<p class="note">{len(groups)} groups over {len(run.rows)} rows. A group raises a sign '
        f"only with at least {thresholds.min_samples} rows (per-metric entries apply).</p>",
    )
    same_as = same_scores(run, metrics)
    by_group: dict[str, list[RiskSign]] = {}
    flagged: set[str] = set()
    for label, sub in groups.items():
        found = rank_signs(
            s for m in metrics if m.name not in same_as for s in metric_signs(sub, m, thresholds)
        )
        if found:
            by_group[label] = found
        for sign in found:
            flagged.update(sign.metrics)
    total = sum(len(found) for found in by_group.values())
    w.add(f"<h3>Signs of risk by group ({total})</h3>")
    if not by_group:
        w.add('<p class="ok">No sign of high risk in any group.</p>')
    else:
        # One fold per group, the groups with the most important sign first; inside, the
        # signs under the headings of what they say.
        ordered = sorted(by_group.items(), key=lambda kv: -kv[1][0].importance)
        for label, found in ordered:
            kinds = ", ".join(dict.fromkeys(SIGN_WORD.get(x.kind, x.kind) for x in found))
            w.add(
                f"<details><summary>{w.t(label, limit=120)} ({len(groups[label].rows)} rows): "
                f"{len(found)} sign{'s' if len(found) != 1 else ''} ({w.t(kinds)})</summary>"
            )
            signs_grouped(w, found, top=len(found))
            w.add("</details>")

    w.add(
        '<h3>Mean by group</h3><div class="scroll"><table><thead><tr><th>metric</th>',
        *(
            f"<th class=any>{w.t(label, limit=60)} <small>({len(sub.rows)} rows)</small></th>"
            for label, sub in groups.items()
        ),
        "</tr></thead><tbody>",
    )
    for info in metrics:
        w.add(f"<tr><td>{w.t(info.name)}</td>")
        w.add(*(f"<td class=n>{num(sub.summary[info.name].mean)}</td>" for sub in groups.values()))
        w.add("</tr>")
    w.add("</tbody></table></div>")

    for info in metrics:
        if info.name in same_as:  # its table and plot would be the other metric's
            continue
        w.add(
            f"<details{' open' if info.name in flagged else ''}><summary>{w.t(info.name)} "
            f"by {by}</summary>",
            "<table><thead><tr><th>group</th><th>rows</th><th>n</th><th>undefined</th>"
            "<th>failed</th><th>mean</th><th>median</th><th>std</th>"
            "<th>95% bootstrap interval</th></tr></thead><tbody>",
        )
        for label, sub in groups.items():
            s = sub.summary[info.name]
            w.add(
                f"<tr><td class=any>{w.t(label, limit=120)}</td><td class=n>{len(sub.rows)}</td>"
                f"<td class=n>{s.count}</td><td class=n>{s.undefined}</td>"
                f"<td class=n>{s.failed}</td><td class=n>{num(s.mean)}</td>"
                f"<td class=n>{num(s.median)}</td><td class=n>{num(s.std)}</td>"
                f"<td class=n>{ci_text(s)}</td></tr>"
            )
        w.add("</tbody></table>")
        plot_html(w, run, info, group_by=group_by)
        w.add("</details>")
