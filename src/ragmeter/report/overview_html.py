"""The top of the report: what to look at first (the key box), every metric on one line by
family, the signs grouped by what they say, how signs are raised, and "Check these" (good
claim scores resting on uncertain or weak verdicts)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.report.aliases import alias_note, alias_notes
from ragmeter.report.checks import LOW_SUPPORT, RowCheck
from ragmeter.report.metric_html import (
    ci_text,
    rows_summary,
    signs_list,
    thresholds_option,
    uncertain_cell,
)
from ragmeter.report.noise import repeats_interval
from ragmeter.report.risk import (
    SHORT_REFERENCE_SHARE,
    UNCERTAIN_SHARE,
    RiskSign,
    RiskThresholds,
)
from ragmeter.report.scale import direction
from ragmeter.report.svg import spark_svg
from ragmeter.report.writer import Writer, num
from ragmeter.result import RunResult
from ragmeter.types import MetricSpec

#: What each kind of sign says, as the headings the signs are grouped under.
_SIGN_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Verdicts to check", ("weak", "uncertain")),
    ("Rows that failed or have no score", ("missing",)),
    ("Many poor scores", ("poor_share",)),
    ("References much shorter than answers", ("short_reference",)),
    ("Shape of the scores", ("skew", "spread")),
)


#: A sign's kind in one word, for the overview's signs column.
SIGN_WORD = {
    "missing": "unscored",
    "poor_share": "poor",
    "skew": "skew",
    "spread": "spread",
    "uncertain": "uncertain",
    "weak": "check",
    "short_reference": "short refs",
}


def _judge_text(info: Mapping[str, Any]) -> str | None:
    """Who gave the verdicts: the judge's name and method, from the run record."""
    judge = info.get("judge")
    if not isinstance(judge, Mapping) or not judge.get("name"):
        return None
    name = str(judge["name"])
    method = judge.get("method")
    text = name + (f" ({method})" if isinstance(method, str) and method else "")
    if name.startswith("offline"):
        text += (
            ": ragmeter's offline judge, a small local model, not an LLM; read the good "
            "scores under Check these before trusting a mean"
        )
    return text


def key_box(
    w: Writer,
    run: RunResult,
    signs: Sequence[RiskSign],
    checks: Sequence[RowCheck],
    judged: bool,
) -> None:
    """What to look at first: the signs in a few words, the rows to check, the judge."""
    items: list[str] = []
    if signs:
        parts = []
        for title, kinds in _SIGN_GROUPS:
            names = [m for sign in signs if sign.kind in kinds for m in sign.metrics]
            names = list(dict.fromkeys(names))
            if names:
                shown = ", ".join(names[:4]) + (
                    f" and {len(names) - 4} more" if len(names) > 4 else ""
                )
                parts.append(f"{title.lower()}: {w.t(shown, limit=None)}")
        items.append(
            f'<li class="risk"><a href="#signs">{len(signs)} sign{"s" if len(signs) != 1 else ""}'
            f" of risk</a>: {'; '.join(parts)}.</li>"
        )
    else:
        items.append('<li class="ok">No sign of high risk in any metric.</li>')
    if checks:
        first = checks[0]
        weak = first.weakest
        example = ""
        if weak is not None:
            example = (
                f" The weakest: row {first.index}, “{w.t(weak[1], limit=240)}” entailed by "
                f"{w.t(weak[2])} at support {weak[0]:.2f}."
            )
        items.append(
            f'<li class="risk"><a href="#check">{len(checks)} row{"s" if len(checks) != 1 else ""}'
            f" to check</a> ({len(checks) / max(len(run.rows), 1):.0%} of the rows): good claim "
            "scores that rest on uncertain verdicts or on claims entailed with support under "
            f"{LOW_SUPPORT:.2f}.{example}</li>"
        )
    judge = _judge_text(run.info)
    if judged and judge is not None:
        items.append(f"<li>Verdicts by {w.t(judge, limit=400)}.</li>")
    w.add('<div class="key"><ul>', *items, "</ul></div>")


def overview(
    w: Writer,
    run: RunResult,
    metrics: Sequence[MetricSpec],
    anchors: Mapping[str, str],
    signs: Sequence[RiskSign],
    same_as: Mapping[str, str],
) -> None:
    """Every metric on one line, by family: direction, counts, mean, interval, a small
    histogram, the share of uncertain verdicts, its signs."""
    kinds: dict[str, list[str]] = {}
    for sign in signs:
        for name in sign.metrics:
            kinds.setdefault(name, []).append(SIGN_WORD.get(sign.kind, sign.kind))
    verdicts = any(run.summary[m.name].verdicts is not None for m in metrics)
    w.add(
        '<div class="scroll"><table class="ov"><thead><tr><th>metric</th><th>dir</th>'
        "<th>n</th><th>undefined</th><th>failed</th><th>mean</th>"
        "<th>95% bootstrap interval</th><th>distribution</th>",
        "<th>uncertain verdicts</th>" if verdicts else "",
        "<th>signs</th></tr></thead><tbody>",
    )
    width = 9 + verdicts
    for family, infos in families(metrics).items():
        notes = "".join(f' <span class="same">{w.t(n)}</span>' for n in alias_notes(infos))
        w.add(f'<tr class="fam"><th colspan={width}>{w.t(family)} ({len(infos)}){notes}</th></tr>')
        for info in infos:
            s = rows_summary(run, info.name)
            same = same_as.get(info.name)
            name = f'<a href="#{anchors[info.name]}">{w.t(info.name)}</a>'
            if same is not None:
                name += f' <small title="{w.t(alias_note(info.name, same))}">= {w.t(same)}</small>'
            arrow = "↑" if info.higher_is_better else "↓"
            guessed = " (guessed)" if info.name in run.directions_inferred else ""
            found = list(dict.fromkeys(kinds.get(info.name, ())))
            sign_cell = (
                f'<a class="risk" href="#signs">{w.t(", ".join(found))}</a>' if found else ""
            )
            w.add(
                f'<tr><td>{name}</td><td title="{w.t(direction(info))}">{arrow}{guessed}</td>',
                f"<td class=n>{s.count}</td><td class=n>{s.undefined}</td>"
                f"<td class=n>{s.failed}</td><td class=n>{num(s.mean)}</td>",
                f"<td class=n>{ci_text(s)}{repeats_interval(run.info, info.name)}</td>",
                f"<td>{spark_svg(run.values(info.name), info)}</td>",
                f"<td class=n>{uncertain_cell(s)}</td>" if verdicts else "",
                f"<td>{sign_cell}</td></tr>",
            )
    w.add("</tbody></table></div>")


def families(metrics: Sequence[MetricSpec]) -> dict[str, list[MetricSpec]]:
    out: dict[str, list[MetricSpec]] = {}
    for info in metrics:
        out.setdefault(info.family or "other", []).append(info)
    return out


def signs_grouped(w: Writer, signs: Sequence[RiskSign], *, top: int) -> None:
    """The ``top`` most important signs under the headings of what they say; the rest
    folded under "N more signs", grouped the same way."""
    if not signs:
        w.add('<p class="ok">No sign of high risk.</p>')
        return

    def grouped(items: Sequence[RiskSign]) -> None:
        for title, kinds in _SIGN_GROUPS:
            found = [sign for sign in items if sign.kind in kinds]
            if found:
                w.add(f"<h4>{title} ({len(found)})</h4>")
                signs_list(w, found)

    # The first sign of each kind of group, then the most important: every kind is seen.
    firsts = [
        next(sign for sign in signs if sign.kind in kinds)
        for _, kinds in _SIGN_GROUPS
        if any(sign.kind in kinds for sign in signs)
    ]
    picked = {id(sign) for sign in list({id(x): x for x in [*firsts, *signs]}.values())[:top]}
    shown = [sign for sign in signs if id(sign) in picked]
    rest = [sign for sign in signs if id(sign) not in picked]
    grouped(shown)
    if rest:
        w.add(f"<details><summary>{len(rest)} more sign{'s' if len(rest) > 1 else ''}</summary>")
        grouped(rest)
        w.add("</details>")


#: Rows the Check these list shows before "and N more".
MAX_CHECKS = 25


def check_section(w: Writer, run: RunResult, checks: Sequence[RowCheck]) -> None:
    """The good claim scores to check, row by row, the weakest support first."""
    w.add(
        f'<h2 id="check">Check these ({len(checks)} row{"s" if len(checks) != 1 else ""})</h2>',
        '<p class="note">Good scores of claim metrics (the good half of the range) that rest '
        "on an uncertain verdict (support in the judge's uncertain band) or on a claim entailed "
        f"with support under {LOW_SUPPORT:.2f}: a wrong verdict there makes a wrong answer look "
        "right. The lowest scores are in each metric's section; these are the high ones that "
        "may not hold. Each metric's section shows the first of them in full, claims and "
        "evidence marked.</p>",
    )
    if not checks:
        w.add('<p class="ok">No good score rests on an uncertain or weakly supported verdict.</p>')
        return
    w.add(
        '<div class="scroll"><table><thead><tr><th>row</th><th>question · answer</th>'
        "<th>good scores</th><th>why check</th></tr></thead><tbody>"
    )
    for check in checks[:MAX_CHECKS]:
        given = run.texts.get(check.index, {})
        ident = f"<br><small>{w.t(check.id, limit=40)}</small>" if check.id is not None else ""
        text = "".join(
            f'<div class="txt">{w.t(value, limit=limit)}</div>'
            for value, limit in ((given.get("question"), 120), (given.get("answer"), 200))
            if value is not None
        )
        # The metrics whose good score is a high one first (faithfulness 1.00 before
        # hallucination 0.00), three of them named.
        ordered = sorted(check.doubts, key=lambda d: not run.metric(d.metric).higher_is_better)
        scores = ", ".join(f"{w.t(d.metric)} {d.score:.2f}" for d in ordered[:3])
        if len(ordered) > 3:
            scores += f" and {len(ordered) - 3} more"
        why = []
        weak = check.weakest
        if weak is not None:
            why.append(
                f"“{w.t(weak[1], limit=200)}” entailed by {w.t(weak[2])} at support {weak[0]:.2f}"
            )
        if check.uncertain:
            most = max(check.doubts, key=lambda d: d.uncertain)
            why.append(f"{most.uncertain} of {most.verdicts} verdicts uncertain")
        w.add(
            f'<tr><td class=n><a href="#row-{check.index}">{check.index}</a>{ident}</td>'
            f"<td>{text}</td><td>{scores}</td><td>{'; '.join(why)}</td></tr>"
        )
    w.add("</tbody></table></div>")
    if len(checks) > MAX_CHECKS:
        w.add(
            f'<p class="note">… and {len(checks) - MAX_CHECKS} more: the table of rows below '
            "shows them all (“check these”).</p>"
        )


def thresholds_note(w: Writer, t: RiskThresholds, metrics: Sequence[MetricSpec]) -> None:
    """The thresholds in force, with the per-metric entries that apply to this run."""
    entries: dict[str, list[str]] = {}
    for m in metrics:
        key = t.entry_for(m.name)
        if key is not None:
            entries.setdefault(key, []).append(m.name)
    per = [
        f"{w.t(key)}{'*' if names != [key] else ''}: "
        + ", ".join(f"{field} {value:g}" for field, value in t.per_metric[key].items())
        for key, names in entries.items()
    ]
    w.add(
        "<details><summary>How signs are raised</summary>"
        f'<p class="note">A sign needs ≥ {t.min_samples} rows (skew and spread twice as many). '
        f"A score is poor on the bad side of {t.poor_score:g} of the range "
        f"(<i>poor_score</i>); raised when over {t.poor_share:.0%} of samples are poor, "
        f"|mean − median| over {t.skew:.0%} of the range, std over {t.spread:.0%} of the "
        f"range, or over {t.missing_share:.0%} of rows unscored. "
        + (f"Per metric: {'; '.join(per)}. " if per else "")
        + f"Claim metrics: raised when over {UNCERTAIN_SHARE:.0%} of a metric's verdicts were "
        f"uncertain, or over {SHORT_REFERENCE_SHARE:.0%} of its rows have references much "
        "shorter than their answers (fewer than half the answer's content words). "
        + "Signs that point at the same rows with the same numbers are merged; the most "
        "important first (failed rows, poor shares, undefined rows, skew, spread). Change "
        f"them with <code>{html.escape(thresholds_option())}</code>: <code>name=value</code> "
        "or <code>metric.name=value</code>.</p></details>"
    )
