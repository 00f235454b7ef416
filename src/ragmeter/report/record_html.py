"""The report's sections read from the run record and a baseline: the comparison with the
baseline, judge usage and cost, skipped metrics, and the run's configuration."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragmeter.io.redact import redact_tree
from ragmeter.report.compare import Comparison
from ragmeter.report.samples_html import scalar_html
from ragmeter.report.scale import direction
from ragmeter.report.writer import Writer, num
from ragmeter.result import RunResult


def baseline_section(w: Writer, comparison: Comparison, baseline: RunResult) -> None:
    src = f" ({w.t(baseline.results_file)})" if baseline.results_file else ""
    w.add(
        f'<h2 id="baseline">Compared with the baseline{src}</h2>',
        f'<p class="note">A = baseline, B = this run; differences are B − A. '
        f"{comparison.paired} rows paired by {comparison.match_by}; "
        f"{comparison.unmatched_a} baseline rows and {comparison.unmatched_b} rows of this run "
        "have no partner.</p>",
        *(f'<p class="note risk">{w.t(warning)}</p>' for warning in comparison.warnings),
    )
    if not comparison.metrics:
        w.add("<p>No metric is present in both runs.</p>")
        return
    w.add(
        "<table><thead><tr><th>metric</th><th>pairs</th><th>mean A</th><th>mean B</th>"
        "<th>B − A</th><th>95% paired bootstrap interval</th><th>improved</th>"
        "<th>worsened</th><th>unchanged</th><th>sign test p</th></tr></thead><tbody>"
    )
    for mc in comparison.metrics.values():
        ci = "—" if mc.ci_low is None else f"[{mc.ci_low:+.3f}, {mc.ci_high:+.3f}]"
        diff = "—" if mc.mean_diff is None else f"{mc.mean_diff:+.3f}"
        w.add(
            f"<tr><td>{w.t(mc.metric)}</td><td class=n>{mc.n_pairs}</td>"
            f"<td class=n>{num(mc.mean_a)}</td><td class=n>{num(mc.mean_b)}</td>"
            f"<td class=n>{diff}</td><td class=n>{ci}</td><td class=n>{mc.improved}</td>"
            f"<td class=n>{mc.worsened}</td><td class=n>{mc.unchanged}</td>"
            f"<td class=n>{'—' if mc.p_value is None else f'{mc.p_value:.3g}'}</td></tr>"
        )
    w.add("</tbody></table>")
    for mc in comparison.metrics.values():
        w.add(f"<h4>{w.t(mc.metric)}</h4><p>{w.t(mc.verdict(), limit=None)}</p>")
        if mc.top_changes:
            w.add(
                "<table><thead><tr><th>row</th><th>id</th><th>A</th><th>B</th><th>B − A</th>"
                "<th>reason in A</th><th>reason in B</th></tr></thead><tbody>"
            )
            for c in mc.top_changes:
                w.add(
                    f"<tr><td class=n>{c.index}</td><td class=any>{w.t(c.id or '', limit=120)}</td>"
                    f"<td class=n>{num(c.a)}</td><td class=n>{num(c.b)}</td>"
                    f"<td class=n>{c.delta:+.3f}</td>"
                    f'<td class="txt">{w.t(c.reason_a or "", limit=400)}</td>'
                    f'<td class="txt">{w.t(c.reason_b or "", limit=400)}</td></tr>'
                )
            w.add("</tbody></table>")


def usage_section(w: Writer, info: Mapping[str, Any]) -> None:
    w.add('<h2 id="usage">Judge usage</h2>')
    usage = info.get("usage")
    if not isinstance(usage, Mapping) or not usage:
        w.add('<p class="note">No usage recorded for this run.</p>')
        return
    labels = {
        "calls": "judge calls",
        "cache_hits": "cache hits",
        "prompt_tokens": "prompt tokens",
        "completion_tokens": "completion tokens",
        "retries": "retries",
        "failures": "failed calls",
        "cost": "cost",
    }
    w.add("<table><tbody>")
    for key, label in labels.items():
        value = usage.get(key)
        shown = _cost(w, value, info) if key == "cost" else "—" if value is None else w.t(value)
        w.add(f"<tr><th>{label}</th><td class=n>{shown}</td></tr>")
    for key, value in usage.items():
        if key not in labels:
            w.add(f"<tr><th>{w.t(key)}</th><td class=n>{w.t(value)}</td></tr>")
    w.add("</tbody></table>")


def _cost(w: Writer, value: Any, info: Mapping[str, Any]) -> str:
    if value is not None:
        return w.t(f"{value:.4f}" if isinstance(value, int | float) else value)
    usage = info.get("usage") or {}
    judge, settings = info.get("judge"), info.get("settings")
    name = judge.get("name") if isinstance(judge, Mapping) else None
    chosen = settings.get("judge") if isinstance(settings, Mapping) else None
    if chosen == "offline" or (isinstance(name, str) and name.startswith("offline")):
        return "offline: 0"
    if not usage.get("calls"):
        return "0 (no judge calls)"
    return "not known (no prices set: Settings price_in, price_out)"


def skipped_section(w: Writer, info: Mapping[str, Any]) -> None:
    """Metrics the run asked for but could not compute, with the reason (from the sidecar)."""
    skipped = info.get("skipped")
    if not isinstance(skipped, Mapping) or not skipped:
        return
    w.add(
        f"<h3>Skipped metrics ({len(skipped)})</h3><table><thead><tr><th>metric</th>"
        "<th>reason</th></tr></thead><tbody>"
    )
    by_reason: dict[str, list[str]] = {}  # 23 retrieval metrics lacking one column: one line
    for name, reason in skipped.items():
        by_reason.setdefault(str(reason), []).append(str(name))
    for reason, names in by_reason.items():
        shown = names[0] if len(names) == 1 else f"{', '.join(names)} ({len(names)})"
        w.add(f'<tr><td>{w.t(shown)}</td><td class="txt">{w.t(reason)}</td></tr>')
    w.add("</tbody></table>")


#: A judge's setting with more values than this (a calibration's weights) shows folded.
_FOLD_ENTRIES = 8


def _leaves(value: Any) -> int:
    """How many plain values a mapping holds, nested mappings counted through."""
    if isinstance(value, Mapping):
        return sum(_leaves(v) for v in value.values())
    return 1


def _input_text(w: Writer, info: Mapping[str, Any]) -> str:
    """The input's name as the run was given it, with its sha256 and row count if known."""
    text = w.t(info["data"])
    recorded = info.get("input")
    if isinstance(recorded, Mapping) and isinstance(recorded.get("sha256"), str):
        rows = recorded.get("rows")
        count = f", {rows} rows" if isinstance(rows, int) else ""
        what = "file" if recorded.get("source") == "file" else "rows"
        text += (
            f' <span class="note">({what} sha256 <code>{w.t(recorded["sha256"][:12])}</code>…'
            f"{count})</span>"
        )
    return text


def config_section(w: Writer, run: RunResult) -> None:
    info = redact_tree(dict(run.info))
    w.add('<h2 id="config">Run configuration</h2>')
    if not run.info:
        w.add(
            '<p class="note">No run information (the <code>.run.json</code> sidecar was not '
            "found): directions were guessed from metric names.</p>"
        )
    w.add("<table><tbody>")
    for key, label in (
        ("ragmeter_version", "ragmeter version"),
        ("created", "created"),
        ("n_rows", "rows"),
    ):
        if info.get(key) is not None:
            w.add(f"<tr><th>{label}</th><td>{w.t(info[key])}</td></tr>")
    if info.get("data") is not None:
        w.add(f"<tr><th>input</th><td>{_input_text(w, info)}</td></tr>")
    column_map = info.get("column_map")
    if isinstance(column_map, Mapping) and column_map:
        shown = ", ".join(f"{field}={source}" for field, source in column_map.items())
        w.add(f"<tr><th>column map</th><td>{w.t(shown)}</td></tr>")
    if run.results_file is not None:
        w.add(f"<tr><th>results file</th><td>{w.t(run.results_file)}</td></tr>")
    w.add("</tbody></table>")

    w.add(
        f"<details><summary>Metrics ({len(run.metrics)})</summary><table><thead><tr>"
        "<th>metric</th><th>family</th><th>direction</th><th>range</th><th>description</th>"
        "</tr></thead><tbody>"
    )
    for m in run.specs.values():
        guessed = " (guessed from the name)" if m.name in run.directions_inferred else ""
        w.add(
            f"<tr><td>{w.t(m.name)}</td><td>{w.t(m.family or '—')}</td>"
            f"<td>{w.t(direction(m))}{guessed}</td>"
            f"<td>[{m.lower:g}, {m.upper:g}]</td><td>{w.t(m.description)}</td></tr>"
        )
    w.add("</tbody></table></details>")

    judge = info.get("judge")
    if isinstance(judge, Mapping) and judge:
        w.add("<h3>Judge</h3><table><tbody>")
        for key, value in judge.items():
            if key == "prompts":
                continue
            shown = scalar_html(w, value)
            if (entries := _leaves(value)) > _FOLD_ENTRIES:
                # A fitted model's weights: there for the record, folded out of the way.
                shown = f"<details><summary>{entries} values</summary>{shown}</details>"
            w.add(f"<tr><th>{w.t(key)}</th><td>{shown}</td></tr>")
        w.add("</tbody></table>")
        prompts = judge.get("prompts")
        if isinstance(prompts, Mapping) and prompts:
            w.add(
                "<h4>Prompts</h4><table><thead><tr><th>prompt id</th><th>content hash</th>"
                "</tr></thead><tbody>"
            )
            for pid, digest in prompts.items():
                w.add(f"<tr><td>{w.t(pid)}</td><td><code>{w.t(digest)}</code></td></tr>")
            w.add("</tbody></table>")
    settings = info.get("settings")
    if settings:
        w.add(
            "<details><summary>Settings</summary><pre>",
            w.t(json.dumps(settings, indent=2, ensure_ascii=False, default=str), limit=20000),
            "</pre></details>",
        )
