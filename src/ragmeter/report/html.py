"""One self-contained HTML report of a run: no script, no network, everything escaped.

The page reads from the top: what to look at first (the signs of risk in a few words, the
good scores to check, who judged), an overview of every metric (mean, interval, direction,
a small histogram, its signs), the signs grouped by what they say, the good claim scores that
rest on uncertain or weak verdicts ("Check these"), a table of every row with its texts
(sorted and filtered by the stylesheet, :mod:`ragmeter.report.rows_table`), then the metrics
folded by family, each with its plot, signs and worst rows.

Every piece of text that comes from data (scores' reasons, details, metadata, ids, metric
names, settings) passes through :func:`html.escape` after secrets are scrubbed
(:mod:`ragmeter.io.redact`). Plots are compact inline SVG (:mod:`ragmeter.report.svg`)
styled by the page's one stylesheet. The page carries a Content-Security-Policy that forbids
scripts and any network fetch, as a second net behind the escaping. Long parts fold into
``<details>`` elements, which need no script.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.errors import DataError, RagmeterError, param
from ragmeter.io.paths import check_outputs, make_parent, sidecar_path
from ragmeter.io.redact import redact_everywhere, redact_tree
from ragmeter.report.answerability_html import answerability_section
from ragmeter.report.calibration_html import calibration_section
from ragmeter.report.checks import LOW_SUPPORT, RowCheck, check_rows, doubts, good_count
from ragmeter.report.compare import Comparison, compare_runs
from ragmeter.report.interval import interval_text
from ragmeter.report.load import (
    RESTS_ON,
    MetricInfo,
    ReportRow,
    Run,
    as_run,
    load_run,
    read_details,
    read_inputs,
    recorded_input,
)
from ragmeter.report.noise import judge_noise_section, repeats_interval
from ragmeter.report.risk import (
    SHORT_REFERENCE_SHARE,
    UNCERTAIN_SHARE,
    RiskSign,
    RiskThresholds,
    rank_signs,
    risk_signs,
    short_reference_sign,
    uncertain_sign,
    weak_sign,
)
from ragmeter.report.rows_table import rows_table
from ragmeter.report.svg import PLOT_CSS, distribution_svg, spark_svg
from ragmeter.report.writer import MAX_TEXT, Writer, num
from ragmeter.scoring.statistics import Summary

__all__ = ["render_report", "report_inputs", "shown_indices", "worst_rows", "write_report"]

_MAX_TEXT = MAX_TEXT
_MAX_ITEMS = 25
#: A context (or reference, or answer) longer than this shows only windows around its
#: evidence spans, each reaching this far either side of its span.
_MAX_PREMISE = 700
_SPAN_WINDOW = 160
#: Windows shown per text; contexts shown per sample.
_MAX_WINDOWS = 6
_MAX_CONTEXTS = 10
#: Row indices a sign lists before "and N more".
_MAX_SIGN_ROWS = 12

_PAGE_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2327;
background:#f6f7f7}
main{max-width:1100px;margin:0 auto;padding:16px 24px 48px;background:#fff}
h1{font-size:24px;margin:8px 0}h2{font-size:19px;margin-top:32px;border-bottom:2px solid #2b7a78}
h3{font-size:16px;margin-top:22px}h4{font-size:14px;margin:14px 0 6px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #dcdcde;padding:3px 7px;text-align:left;vertical-align:top;
overflow-wrap:break-word}td.any{overflow-wrap:anywhere;min-width:6em}
th{background:#f0f6f6}td.n{text-align:right;font-variant-numeric:tabular-nums;
overflow-wrap:normal;white-space:nowrap}
.note{color:#50575e;font-size:13px}.risk{color:#8a2424}.ok{color:#1e6b3a}
.fail{color:#8a2424;font-weight:600}
ul.signs li{margin:3px 0}.rows{color:#50575e;font-size:12px}
details{margin:6px 0}summary{cursor:pointer;color:#2b7a78;font-weight:600}
.txt{white-space:pre-wrap;overflow-wrap:anywhere}b,h3,h4,dd,a{overflow-wrap:anywhere}
code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;
overflow-wrap:anywhere}
.sample{border:1px solid #dcdcde;border-radius:4px;padding:6px 10px;margin:8px 0}
.sample dl{margin:4px 0;display:grid;grid-template-columns:max-content minmax(0,1fr);
gap:3px 12px}.sample dt{font-weight:600}.sample dd{margin:0}
nav ul{columns:3;font-size:13px}.scroll{overflow-x:auto}
mark{background:#fff1a8;padding:0 1px}.unc{color:#8a5a00;font-weight:600}
.premise{margin:3px 0 6px;padding:3px 6px;border-left:3px solid #dcdcde}
.key{border:1px solid #c5dcdb;background:#f3f9f9;border-radius:4px;padding:4px 14px;margin:8px 0}
.key li{margin:4px 0}.ov td,.ov th{padding:2px 6px}.ov tr.fam th{background:#e4efee;
text-align:left}.ov small,.same{color:#50575e;font-weight:400}
details.fam{border-top:1px solid #dcdcde;padding:2px 0}
details.fam>summary{font-size:16px;padding:4px 0}.stats{font-size:13px;color:#3c434a}
"""
_CSS = _PAGE_CSS.replace("\n", "") + PLOT_CSS

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)


_Writer = Writer
_num = num


def _ci(s: Summary) -> str:
    return interval_text(s, template="[{low:.3f}, {high:.3f}]")


def worst_rows(run: Run, metric: str, n: int) -> list[ReportRow]:
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
_CHECK_SAMPLES = 3


def shown_indices(run: Run, worst_n: int) -> set[int]:
    """Indices of the rows a report shows in full: per metric the worst and the unscored,
    and for claim metrics the first good scores to check."""
    out: set[int] = set()
    for metric in run.metrics:
        out.update(r.index for r in worst_rows(run, metric, worst_n))
        out.update(r.index for r in _unscored_rows(run, metric, worst_n))
        out.update(d.index for d in _checked(run, metric)[:_CHECK_SAMPLES])
    return out


def _checked(run: Run, metric: str) -> list[Any]:
    """The doubts of ``metric`` (:func:`ragmeter.report.checks.doubts`), the weakest first."""
    found = doubts(run, metric)
    return sorted(found, key=lambda d: (d.weak[0] if d.weak else LOW_SUPPORT, -d.uncertain))


def _load_lean(obj: Any, worst_n: int, data: Any = None) -> Run:
    """A results path is read without details, then details of the shown rows only; the
    shown rows get their input texts when the input can be read again (:func:`_inputs`)."""
    if not isinstance(obj, str | os.PathLike):
        run = as_run(obj)
        texts = shown_indices(run, worst_n) | _table_indices(run)
        return run.with_inputs(_inputs(obj, run, texts, data))
    run = load_run(obj, keep_details=False)
    shown = shown_indices(run, worst_n)
    texts = shown | _table_indices(run)
    return run.with_details(read_details(obj, shown)).with_inputs(_inputs(obj, run, texts, data))


def _table_indices(run: Run) -> set[int]:
    """The rows whose texts the table of rows shows."""
    from ragmeter.report.rows_table import MAX_ROWS

    return {row.index for row in run.rows[:MAX_ROWS]}


def _inputs(obj: Any, run: Run, indices: set[int], data: Any) -> dict[int, dict[str, Any]]:
    """The input texts of the rows at ``indices``, from ``data`` (the input as ``evaluate``
    took it, or ``(data, column_map)``), else from a RunResult's own input, else from the
    file its run record names when it is still there unchanged; ``{}`` when none can be read
    (the report then shows what the results hold)."""
    if not indices:
        return {}
    column_map = None
    given = data is not None
    if data is None:
        source = getattr(obj, "source", None)
        if isinstance(source, tuple) and len(source) == 2:
            data, column_map = source
        elif isinstance(obj, str | os.PathLike):
            data = recorded_input(run.info, obj)
    elif isinstance(data, tuple) and len(data) == 2:
        data, column_map = data
    if data is None or isinstance(data, Iterator):
        return {}
    if given and isinstance(data, str | os.PathLike) and not Path(data).is_file():
        raise DataError(
            f"The input {os.fspath(data)!r} is not a file. Give the file the run scored."
        )
    try:
        return read_inputs(data, indices, column_map=column_map)
    except (RagmeterError, OSError, ValueError, TypeError):
        if given and isinstance(data, str | os.PathLike):
            raise
        return {}


def _unscored_rows(run: Run, metric: str, n: int) -> list[ReportRow]:
    col = run.column(metric)
    return [run.rows[p] for p in sorted(col.undefined + col.failed)[:n]]


# -- pieces -------------------------------------------------------------------------------
def _uncertain_cell(s: Summary) -> str:
    share = s.uncertain_share
    if share is None:
        return "—"
    return f"{share:.0%} ({s.uncertain_verdicts} of {s.verdicts})"


def _signs_for(run: Run, info: MetricInfo, thresholds: RiskThresholds) -> list[RiskSign]:
    """The signs of one metric: its scores', then its verdicts' and references' (claims)."""
    col = run.column(info.name)
    signs = _score_signs(run, info, thresholds)
    counts = run.verdict_counts(info.name)
    found = [
        None
        if counts is None
        else uncertain_sign(
            info.name,
            uncertain=counts[0],
            verdicts=counts[1],
            rows=run.uncertain_rows(info.name),
            scored=len(col.values),
            thresholds=thresholds,
        ),
        short_reference_sign(
            info.name,
            rows=run.short_reference_rows(info.name),
            scored=len(col.values),
            thresholds=thresholds,
        ),
        None
        if counts is None and not any(info.name in r.weakest for r in run.rows)
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


def _score_signs(run: Run, info: MetricInfo, thresholds: RiskThresholds) -> list[RiskSign]:
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


def _rows_note(w: _Writer, sign: RiskSign) -> str:
    if not sign.rows:
        return ""
    shown = ", ".join(str(i) for i in sign.rows[:_MAX_SIGN_ROWS])
    more = f" and {len(sign.rows) - _MAX_SIGN_ROWS} more" if len(sign.rows) > _MAX_SIGN_ROWS else ""
    return f' <span class="rows">(rows {w.t(shown)}{more})</span>'


def _signs_list(
    w: _Writer,
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
        _signs_list(w, rest)
        w.add("</details>")


def _thresholds_option() -> str:
    """How the caller changes the risk thresholds: the CLI's ``--risk-threshold``, else the
    Python API's."""
    return param("risk_thresholds", "RiskThresholds().with_overrides({...})")


def _no_sign(run: Run, info: MetricInfo, thresholds: RiskThresholds) -> str:
    """What to say when a metric raised no sign: nothing risky, or too few rows to tell."""
    need = thresholds.for_metric(info.name).min_samples
    have = len(run.values(info.name))
    if have < need:
        return (
            f"Too few scores for a sign ({have}; a sign needs {need}: set min_samples=N with "
            f"{_thresholds_option()})."
        )
    return "No sign of high risk."


def _scalar(w: _Writer, value: Any) -> str:
    if isinstance(value, str):  # kept line breaks need pre-wrap; other text wraps as is
        return f'<span class="txt">{w.t(value)}</span>' if "\n" in value else w.t(value)
    if isinstance(value, Mapping):
        parts = [f"<b>{w.t(k, limit=80)}</b>: {_scalar(w, v)}" for k, v in value.items()]
        return "; ".join(parts[:_MAX_ITEMS])
    if isinstance(value, list | tuple):
        return _list(w, value)
    if isinstance(value, float):
        return _num(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"<code>{w.t(json.dumps(value, ensure_ascii=False, default=str))}</code>"


def _records(w: _Writer, items: Sequence[Mapping[str, Any]]) -> str:
    """A list of objects (e.g. ``[{"claim": ..., "correct": ...}]``) as a table."""
    columns: list[str] = []
    for item in items:
        columns.extend(str(k) for k in item if str(k) not in columns)
    head = "".join(f"<th>{w.t(c, limit=80)}</th>" for c in columns)
    body = []
    for i, item in enumerate(items[:_MAX_ITEMS]):
        cells = "".join(f"<td>{_scalar(w, item[c]) if c in item else ''}</td>" for c in columns)
        body.append(f"<tr><td class=n>{i + 1}</td>{cells}</tr>")
    if len(items) > _MAX_ITEMS:
        body.append(
            f"<tr><td colspan={len(columns) + 1}><i>… {len(items) - _MAX_ITEMS} more</i></td></tr>"
        )
    return f"<table><thead><tr><th>#</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _list(w: _Writer, items: Sequence[Any]) -> str:
    if not items:
        return "<i>(empty)</i>"
    if all(isinstance(v, Mapping) for v in items):
        return _records(w, items)
    shown = [f"<li>{_scalar(w, v)}</li>" for v in items[:_MAX_ITEMS]]
    more = f"<li><i>… {len(items) - _MAX_ITEMS} more</i></li>" if len(items) > _MAX_ITEMS else ""
    return f"<ol>{''.join(shown)}{more}</ol>"


def _details(w: _Writer, details: Any) -> str:
    """Render a metric's details dict: claims with verdicts as a table, the rest compactly."""
    if not isinstance(details, Mapping):
        return _scalar(w, details)
    rest = dict(details)
    out: list[str] = []
    claims, verdicts = rest.get("claims"), rest.get("verdicts")
    if (
        isinstance(claims, list | tuple)
        and isinstance(verdicts, list | tuple)
        and len(claims) == len(verdicts)
        and claims
    ):
        rest.pop("claims")
        rest.pop("verdicts")
        out.append("<table><thead><tr><th>#</th><th>claim</th><th>verdict</th></tr></thead><tbody>")
        for i, (claim, verdict) in enumerate(zip(claims, verdicts, strict=True)):
            if i >= _MAX_ITEMS:
                out.append(f"<tr><td colspan=3><i>… {len(claims) - i} more</i></td></tr>")
                break
            out.append(
                f"<tr><td class=n>{i + 1}</td><td>{_scalar(w, claim)}</td>"
                f"<td>{_scalar(w, verdict)}</td></tr>"
            )
        out.append("</tbody></table>")
    flat = {k: v for k, v in rest.items() if not isinstance(v, Mapping | list | tuple)}
    if flat:
        items = [f"<b>{w.t(k, limit=80)}</b>: {_scalar(w, v)}" for k, v in flat.items()]
        out.append(f"<div>{' · '.join(items)}</div>")
    nested = {k: v for k, v in rest.items() if k not in flat}
    if nested:
        out.append("<dl>")
        for key, value in nested.items():
            out.append(f"<dt>{w.t(key, limit=80)}</dt><dd>{_scalar(w, value)}</dd>")
        out.append("</dl>")
    return "".join(out)


#: What a claim was checked against: the texts' name, and its verdict in words.
_AGAINST: Mapping[str, tuple[str, str, str]] = {
    "contexts": ("context", "in a context", "in no context"),
    "references": ("reference", "correct", "incorrect (no reference entails it)"),
    "answer": ("answer", "in the answer", "not in the answer"),
}

#: Marks in a text: (start, end, label of the claim), by (what text, its index).
_Marks = dict[tuple[str, int], list[tuple[int, int, str]]]


def _claim_items(details: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(label, claim item)`` of the answer's claims ("1", "2") and the references' ("r1.2")."""
    items: list[tuple[str, Mapping[str, Any]]] = []
    answer = details.get("answer_claims")
    for i, item in enumerate(answer if isinstance(answer, list) else ()):
        if isinstance(item, Mapping):
            items.append((str(i + 1), item))
    references = details.get("reference_claims")
    for r, claims in enumerate(references if isinstance(references, list) else ()):
        for i, item in enumerate(claims if isinstance(claims, list) else ()):
            if isinstance(item, Mapping):
                items.append((f"r{r + 1}.{i + 1}", item))
    return items


def _span_pairs(cell: Mapping[str, Any]) -> list[tuple[int, int]]:
    spans = cell.get("spans")
    return [
        (sp[0], sp[1])
        for sp in (spans if isinstance(spans, list) else ())
        if isinstance(sp, list | tuple)
        and len(sp) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in sp)
    ]


def _claim_evidence(w: _Writer, details: Mapping[str, Any], metric: str = "") -> tuple[str, _Marks]:
    """The claims with their verdicts and what each rests on, as a table, and the evidence
    spans to mark in the texts; ``("", {})`` when no claim carries evidence."""
    items = _claim_items(details)
    if not any(isinstance(item.get("evidence"), Mapping) for _, item in items):
        return "", {}
    marks: _Marks = {}
    body: list[str] = []
    for label, item in items[: 2 * _MAX_ITEMS]:
        evidence = item.get("evidence")
        claim = _scalar(w, item.get("claim", ""))
        verdicts = evidence.items() if isinstance(evidence, Mapping) else ()
        shown = 0
        claims_key = "reference_claims" if label.startswith("r") else "answer_claims"
        for against, verdict in verdicts:
            if against not in _AGAINST or not isinstance(verdict, Mapping):
                continue
            if metric in RESTS_ON and (claims_key, against) not in RESTS_ON[metric]:
                continue
            kind, yes, no = _AGAINST[against]
            cells = [c for c in verdict.get("rests_on") or () if isinstance(c, Mapping)]
            where = []
            for c in cells:
                index = c.get("index", 0)
                index = index if isinstance(index, int) and not isinstance(index, bool) else 0
                where.append(kind if kind == "answer" else f"{kind} {index}")
                for start, end in _span_pairs(c):
                    marks.setdefault((kind, index), []).append((start, end, label))
            first = cells[0] if cells else {}
            support = first.get("support")
            decided = first.get("decided_by")
            said = yes if verdict.get("entailed") else no
            unsure = ' <span class="unc">uncertain</span>' if verdict.get("uncertain") else ""
            body.append(
                f"<tr><td class=n>{w.t(label, limit=20)}</td><td>{claim}</td>"
                f"<td>{w.t(said, limit=None)}{unsure}</td>"
                f"<td class=n>{_num(support, 2) if isinstance(support, float | int) else '—'}"
                f"</td><td>{w.t(decided, limit=80) if isinstance(decided, str) else '—'}</td>"
                f"<td>{w.t(', '.join(where), limit=200) or '—'}</td></tr>"
            )
            shown += 1
            claim = "″"  # the same claim on the next line
        if not shown:
            body.append(
                f"<tr><td class=n>{w.t(label, limit=20)}</td><td>{claim}</td>"
                "<td colspan=4>—</td></tr>"
            )
    if len(items) > 2 * _MAX_ITEMS:
        body.append(f"<tr><td colspan=6><i>… {len(items) - 2 * _MAX_ITEMS} more</i></td></tr>")
    table = (
        "<table><thead><tr><th>#</th><th>claim</th><th>verdict</th><th>support</th>"
        "<th>decided by</th><th>rests on</th></tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )
    return table, marks


def _windows(length: int, spans: Sequence[tuple[int, int]], plain: int) -> list[tuple[int, int]]:
    """The parts of a text of ``length`` characters to show: all of it when short, else
    windows around ``spans`` (merged), else its first ``plain`` characters."""
    if length <= (_MAX_PREMISE if spans else plain):
        return [(0, length)]
    if not spans:
        return [(0, plain)]
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        lo = max(0, start - _SPAN_WINDOW)
        hi = min(length, end + _SPAN_WINDOW, start + _MAX_PREMISE)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out[:_MAX_WINDOWS]


def _marked(
    w: _Writer, text: str, marks: Sequence[tuple[int, int, str]], *, plain: int = 240
) -> str:
    """``text`` escaped, its evidence spans in ``<mark>`` (titled with their claims), cut to
    windows around them when long (an ellipsis where text is left out)."""
    clean = redact_everywhere(text, env=w.env)
    if clean != text:
        marks = ()  # a secret was scrubbed: the offsets no longer hold
    merged: list[list[Any]] = []
    for start, end, label in sorted(m for m in marks if 0 <= m[0] < m[1] <= len(clean)):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            if label not in merged[-1][2]:
                merged[-1][2].append(label)
        else:
            merged.append([start, end, [label]])
    windows = _windows(len(clean), [(m[0], m[1]) for m in merged], plain)
    parts: list[str] = []
    for lo, hi in windows:
        if lo > 0:
            parts.append("… ")
        at = lo
        for start, end, labels in merged:
            start, end = max(start, lo), min(end, hi)
            if end <= start:
                continue
            title = html.escape("claim " + ", ".join(labels), quote=True)
            parts.append(html.escape(clean[at:start]))
            parts.append(f'<mark title="{title}">{html.escape(clean[start:end])}</mark>')
            at = end
        parts.append(html.escape(clean[at:hi]))
        if hi < len(clean):
            parts.append(f" … ({len(clean) - hi} more characters)" if hi == windows[-1][1] else " ")
    return f'<span class="txt">{"".join(parts)}</span>'


def _texts(w: _Writer, kind: str, texts: Sequence[str], marks: _Marks) -> str:
    shown = [
        f'<div class="premise"><b>{kind} {j}</b>: {_marked(w, text, marks.get((kind, j), []))}'
        "</div>"
        for j, text in enumerate(texts[:_MAX_CONTEXTS])
    ]
    if len(texts) > _MAX_CONTEXTS:
        shown.append(f"<i>… {len(texts) - _MAX_CONTEXTS} more</i>")
    return "".join(shown) or "<i>(none)</i>"


def _the_runs_judge(key: str, value: Any, judge: str | None) -> bool:
    """Whether a claim metric's ``analyze`` / ``verify`` detail only names the run's judge."""
    return (
        key in ("analyze", "verify")
        and isinstance(value, Mapping)
        and value.get("judge") == judge
        and not value.get("cached")
    )


def _sample(
    w: _Writer, row: ReportRow, metric: str, info: MetricInfo, run_judge: str | None = None
) -> None:
    value = row.scores.get(metric)
    head = f"row {row.index}" + (f" · id {w.t(row.id, limit=200)}" if row.id is not None else "")
    score = "undefined" if value is None else _num(value)
    details = row.details.get(metric)
    table, marks = _claim_evidence(w, details, metric) if isinstance(details, Mapping) else ("", {})
    w.add(f'<div class="sample"><b>{head}</b> · {w.t(metric)} = <b>{score}</b><dl>')
    if metric in row.failures:
        w.add(f'<dt>failure</dt><dd class="txt fail">{w.t(row.failures[metric])}</dd>')
    if metric in row.reasons:
        w.add(f'<dt>reason</dt><dd class="txt">{w.t(row.reasons[metric])}</dd>')
    if row.question is not None:
        w.add(f'<dt>question</dt><dd class="txt">{w.t(row.question)}</dd>')
    if row.answer is not None:
        answer = _marked(w, row.answer, marks.get(("answer", 0), []), plain=_MAX_TEXT)
        w.add(f"<dt>answer</dt><dd>{answer}</dd>")
    if row.contexts is not None:
        w.add(f"<dt>contexts</dt><dd>{_texts(w, 'context', row.contexts, marks)}</dd>")
    if row.reference_answers is not None:
        refs = _texts(w, "reference", row.reference_answers, marks)
        w.add(f"<dt>references</dt><dd>{refs}</dd>")
    if table:
        w.add(f"<dt>claims</dt><dd>{table}</dd>")
        details = {
            k: v for k, v in details.items() if k not in ("answer_claims", "reference_claims")
        }
    if isinstance(details, Mapping):
        # Which judge analysed and verified: the run's, named once at the top and in the
        # configuration; a row's own is shown only when it differs (a cached reply).
        details = {k: v for k, v in details.items() if not _the_runs_judge(k, v, run_judge)}
    if details:
        w.add(f"<dt>details</dt><dd>{_details(w, details)}</dd>")
    if row.metadata:
        w.add(f"<dt>metadata</dt><dd>{_scalar(w, row.metadata)}</dd>")
    w.add("</dl></div>")


def _plot(w: _Writer, run: Run, info: MetricInfo, *, group_by: str | None = None) -> None:
    if group_by:
        groups = {label: sub.values(info.name) for label, sub in run.groups(group_by).items()}
    else:
        groups = {info.name: run.values(info.name)}
    w.add(distribution_svg(groups, info))


def _samples(
    w: _Writer, rows: Sequence[ReportRow], info: MetricInfo, title: str, judge: str | None = None
) -> None:
    """Rows in full, folded under a summary that lists them with their scores (``judge``:
    the run's judge, whose name the rows' details need not repeat)."""
    listed = ", ".join(
        f"{r.index} ({'—' if r.scores.get(info.name) is None else _num(r.scores[info.name], 2)})"
        for r in rows
    )
    w.add(f"<details><summary>{title}: rows {listed}</summary>")
    for row in rows:
        _sample(w, row, info.name, info, judge)
    w.add("</details>")


def _judge_name(info: Mapping[str, Any]) -> str | None:
    judge = info.get("judge")
    name = judge.get("name") if isinstance(judge, Mapping) else None
    return name if isinstance(name, str) else None


def _claim_details(row: ReportRow, metric: str) -> bool:
    """Whether ``row``'s details of ``metric`` hold claims (shown in full, as a table)."""
    details = row.details.get(metric)
    return isinstance(details, Mapping) and bool(
        {"claims", "answer_claims", "reference_claims"} & set(details)
    )


def _has_claims(run: Run, metric: str) -> bool:
    """Whether ``metric``'s rows carry claims and verdicts (a claim metric's details)."""
    return any(metric in row.verdict_counts or metric in row.weakest for row in run.rows)


def _rows_brief(w: _Writer, rows: Sequence[ReportRow], info: MetricInfo, title: str) -> None:
    """Rows as one table line each: the row (a link to it in the table of rows), its score
    and the reason or failure; folded under ``title``."""
    w.add(
        f"<details><summary>{title}</summary><table><thead><tr><th>row</th><th>id</th>"
        "<th>score</th><th>reason</th></tr></thead><tbody>"
    )
    for row in rows:
        value = row.scores.get(info.name)
        failure = row.failures.get(info.name)
        why = (
            f'<span class="fail">{w.t(failure, limit=300)}</span>'
            if failure
            else w.t(row.reasons.get(info.name, ""), limit=300)
        )
        w.add(
            f'<tr><td class=n><a href="#row-{row.index}">{row.index}</a></td>'
            f"<td class=any>{w.t(row.id or '', limit=60)}</td>"
            f"<td class=n>{'undefined' if value is None else _num(value)}</td>"
            f'<td class="txt">{why}</td></tr>'
        )
    w.add("</tbody></table></details>")


def _stats_line(run: Run, info: MetricInfo) -> str:
    s = run.summary(info.name)
    parts = [
        f"n {s.count}",
        f"undefined {s.undefined}",
        f"failed {s.failed}",
        *(
            f"{label} {_num(value)}"
            for label, value in (
                ("mean", s.mean),
                ("median", s.median),
                ("std", s.std),
                ("min", s.min),
                ("max", s.max),
            )
        ),
        f"95% interval {_ci(s)}",
    ]
    if s.uncertain_share is not None:
        parts.append(f"uncertain verdicts {_uncertain_cell(s)}")
    return f'<p class="stats">{info.direction} · {" · ".join(parts)}</p>'


def _metric_section(
    w: _Writer,
    run: Run,
    info: MetricInfo,
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
            f'<p class="same">= {w.t(same_as)}: {w.t(_alias_note(info.name, same_as))} '
            f"Its plot, signs and rows are {link}'s.</p>"
        )
        return
    w.add(_stats_line(run, info))
    _plot(w, run, info)
    _signs_list(
        w, rank_signs(_signs_for(run, info, thresholds)), none=_no_sign(run, info, thresholds)
    )
    worst = worst_rows(run, info.name, worst_n)
    claims = _has_claims(run, info.name) or any(_claim_details(r, info.name) for r in worst)
    if worst:
        title = f"{len(worst)} worst samples ({w.t(info.direction)})"
        if claims:
            _samples(w, worst, info, title, _judge_name(run.info))
        else:
            _rows_brief(w, worst, info, title)
    checked = _checked(run, info.name)
    if checked:
        by_index = {row.index: row for row in run.rows}
        shown = [by_index[d.index] for d in checked[:_CHECK_SAMPLES]]
        _samples(
            w,
            shown,
            info,
            f"{len(checked)} good score{'s' if len(checked) != 1 else ''} to check "
            f"(uncertain or weak verdicts; the first {len(shown)})",
            _judge_name(run.info),
        )
    unscored = _unscored_rows(run, info.name, worst_n)
    if unscored:
        undefined, failed = run.counts(info.name)
        _rows_brief(
            w, unscored, info, f"Rows without a score ({undefined} undefined, {failed} failed)"
        )


def _group_section(
    w: _Writer,
    run: Run,
    group_by: str,
    metrics: Sequence[MetricInfo],
    thresholds: RiskThresholds,
    top_signs: int,
) -> None:
    """Signs by group first, then the means of every metric by group in one table, then
    each metric's statistics and box plot by group (folded unless the metric has a sign)."""
    groups = run.groups(group_by)
    by = w.t(group_by)
    w.add(
        f'<h2 id="groups">By {by}</h2>',
        f'<p class="note">{len(groups)} groups over {len(run.rows)} rows. A group raises a sign '
        f"only with at least {thresholds.min_samples} rows (per-metric entries apply).</p>",
    )
    same_as = _same_as(run, metrics)
    by_group: dict[str, list[RiskSign]] = {}
    flagged: set[str] = set()
    for label, sub in groups.items():
        found = rank_signs(
            s for m in metrics if m.name not in same_as for s in _signs_for(sub, m, thresholds)
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
            kinds = ", ".join(dict.fromkeys(_SIGN_WORD.get(x.kind, x.kind) for x in found))
            w.add(
                f"<details><summary>{w.t(label, limit=120)} ({len(groups[label].rows)} rows): "
                f"{len(found)} sign{'s' if len(found) != 1 else ''} ({w.t(kinds)})</summary>"
            )
            _signs_grouped(w, found, top=len(found))
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
        w.add(*(f"<td class=n>{_num(sub.summary(info.name).mean)}</td>" for sub in groups.values()))
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
            s = sub.summary(info.name)
            w.add(
                f"<tr><td class=any>{w.t(label, limit=120)}</td><td class=n>{len(sub.rows)}</td>"
                f"<td class=n>{s.count}</td><td class=n>{s.undefined}</td>"
                f"<td class=n>{s.failed}</td><td class=n>{_num(s.mean)}</td>"
                f"<td class=n>{_num(s.median)}</td><td class=n>{_num(s.std)}</td>"
                f"<td class=n>{_ci(s)}</td></tr>"
            )
        w.add("</tbody></table>")
        _plot(w, run, info, group_by=group_by)
        w.add("</details>")


def _baseline_section(w: _Writer, comparison: Comparison, baseline: Run) -> None:
    src = f" ({w.t(baseline.source)})" if baseline.source else ""
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
            f"<td class=n>{_num(mc.mean_a)}</td><td class=n>{_num(mc.mean_b)}</td>"
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
                    f"<td class=n>{_num(c.a)}</td><td class=n>{_num(c.b)}</td>"
                    f"<td class=n>{c.delta:+.3f}</td>"
                    f'<td class="txt">{w.t(c.reason_a or "", limit=400)}</td>'
                    f'<td class="txt">{w.t(c.reason_b or "", limit=400)}</td></tr>'
                )
            w.add("</tbody></table>")


def _usage_section(w: _Writer, info: Mapping[str, Any]) -> None:
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


def _cost(w: _Writer, value: Any, info: Mapping[str, Any]) -> str:
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


def _thresholds_note(w: _Writer, t: RiskThresholds, metrics: Sequence[MetricInfo]) -> None:
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
        f"them with <code>{html.escape(_thresholds_option())}</code>: <code>name=value</code> "
        "or <code>metric.name=value</code>.</p></details>"
    )


def _skipped(w: _Writer, info: Mapping[str, Any]) -> None:
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


def _input_text(w: _Writer, info: Mapping[str, Any]) -> str:
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


def _config_section(w: _Writer, run: Run) -> None:
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
    if run.source is not None:
        w.add(f"<tr><th>results file</th><td>{w.t(run.source)}</td></tr>")
    w.add("</tbody></table>")

    w.add(
        f"<details><summary>Metrics ({len(run.metrics)})</summary><table><thead><tr>"
        "<th>metric</th><th>family</th><th>direction</th><th>range</th><th>description</th>"
        "</tr></thead><tbody>"
    )
    for m in run.metrics.values():
        w.add(
            f"<tr><td>{w.t(m.name)}</td><td>{w.t(m.family or '—')}</td>"
            f"<td>{w.t(m.direction)}{' (guessed from the name)' if m.inferred else ''}</td>"
            f"<td>[{m.lower:g}, {m.upper:g}]</td><td>{w.t(m.description)}</td></tr>"
        )
    w.add("</tbody></table></details>")

    judge = info.get("judge")
    if isinstance(judge, Mapping) and judge:
        w.add("<h3>Judge</h3><table><tbody>")
        for key, value in judge.items():
            if key == "prompts":
                continue
            shown = _scalar(w, value)
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


# -- the top of the page ----------------------------------------------------------------
#: What each kind of sign says, as the headings the signs are grouped under.
_SIGN_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Verdicts to check", ("weak", "uncertain")),
    ("Rows that failed or have no score", ("missing",)),
    ("Many poor scores", ("poor_share",)),
    ("References much shorter than answers", ("short_reference",)),
    ("Shape of the scores", ("skew", "spread")),
)
#: A sign's kind in one word, for the overview's signs column.
_SIGN_WORD = {
    "missing": "unscored",
    "poor_share": "poor",
    "skew": "skew",
    "spread": "spread",
    "uncertain": "uncertain",
    "weak": "check",
    "short_reference": "short refs",
}
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


def _same_as(run: Run, metrics: Sequence[MetricInfo]) -> dict[str, str]:
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


def _alias_notes(metrics: Sequence[MetricInfo]) -> list[str]:
    """The explanations of the aliases among ``metrics``."""
    names = {m.name for m in metrics}
    return [
        why
        for a, b, why in _ALIASES
        if any(n.startswith(a) for n in names) and any(n.startswith(b) for n in names)
    ]


def _alias_note(metric: str, other: str) -> str:
    """Why ``metric`` has ``other``'s scores: equal by definition, or on this run only."""
    for a, b, why in _ALIASES:
        for x, y in ((metric, other), (other, metric)):
            if x.startswith(a) and y == b + x[len(a) :]:
                return why
    return (
        f"Same scores as {other} on every row of this run: the two agree on these rows, not "
        "in general."
    )


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


def _key_box(
    w: _Writer,
    run: Run,
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


def _overview(
    w: _Writer,
    run: Run,
    metrics: Sequence[MetricInfo],
    anchors: Mapping[str, str],
    signs: Sequence[RiskSign],
    same_as: Mapping[str, str],
) -> None:
    """Every metric on one line, by family: direction, counts, mean, interval, a small
    histogram, the share of uncertain verdicts, its signs."""
    kinds: dict[str, list[str]] = {}
    for sign in signs:
        for name in sign.metrics:
            kinds.setdefault(name, []).append(_SIGN_WORD.get(sign.kind, sign.kind))
    verdicts = any(run.summary(m.name).verdicts is not None for m in metrics)
    w.add(
        '<div class="scroll"><table class="ov"><thead><tr><th>metric</th><th>dir</th>'
        "<th>n</th><th>undefined</th><th>failed</th><th>mean</th>"
        "<th>95% bootstrap interval</th><th>distribution</th>",
        "<th>uncertain verdicts</th>" if verdicts else "",
        "<th>signs</th></tr></thead><tbody>",
    )
    width = 9 + verdicts
    for family, infos in _families(metrics).items():
        notes = "".join(f' <span class="same">{w.t(n)}</span>' for n in _alias_notes(infos))
        w.add(f'<tr class="fam"><th colspan={width}>{w.t(family)} ({len(infos)}){notes}</th></tr>')
        for info in infos:
            s = run.summary(info.name)
            same = same_as.get(info.name)
            name = f'<a href="#{anchors[info.name]}">{w.t(info.name)}</a>'
            if same is not None:
                name += f' <small title="{w.t(_alias_note(info.name, same))}">= {w.t(same)}</small>'
            arrow = "↑" if info.higher_is_better else "↓"
            guessed = " (guessed)" if info.inferred else ""
            found = list(dict.fromkeys(kinds.get(info.name, ())))
            sign_cell = (
                f'<a class="risk" href="#signs">{w.t(", ".join(found))}</a>' if found else ""
            )
            w.add(
                f'<tr><td>{name}</td><td title="{w.t(info.direction)}">{arrow}{guessed}</td>',
                f"<td class=n>{s.count}</td><td class=n>{s.undefined}</td>"
                f"<td class=n>{s.failed}</td><td class=n>{_num(s.mean)}</td>",
                f"<td class=n>{_ci(s)}{repeats_interval(run.info, info.name)}</td>",
                f"<td>{spark_svg(run.values(info.name), info)}</td>",
                f"<td class=n>{_uncertain_cell(s)}</td>" if verdicts else "",
                f"<td>{sign_cell}</td></tr>",
            )
    w.add("</tbody></table></div>")


def _families(metrics: Sequence[MetricInfo]) -> dict[str, list[MetricInfo]]:
    out: dict[str, list[MetricInfo]] = {}
    for info in metrics:
        out.setdefault(info.family or "other", []).append(info)
    return out


def _signs_grouped(w: _Writer, signs: Sequence[RiskSign], *, top: int) -> None:
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
                _signs_list(w, found)

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
_MAX_CHECKS = 25


def _check_section(w: _Writer, run: Run, checks: Sequence[RowCheck]) -> None:
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
    texts = {row.index: row for row in run.rows}
    w.add(
        '<div class="scroll"><table><thead><tr><th>row</th><th>question · answer</th>'
        "<th>good scores</th><th>why check</th></tr></thead><tbody>"
    )
    for check in checks[:_MAX_CHECKS]:
        row = texts[check.index]
        ident = f"<br><small>{w.t(check.id, limit=40)}</small>" if check.id is not None else ""
        text = "".join(
            f'<div class="txt">{w.t(value, limit=limit)}</div>'
            for value, limit in ((row.question, 120), (row.answer, 200))
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
    if len(checks) > _MAX_CHECKS:
        w.add(
            f'<p class="note">… and {len(checks) - _MAX_CHECKS} more: the table of rows below '
            "shows them all (“check these”).</p>"
        )


def _row_groups(run: Run, group_by: str | None) -> dict[str, list[int]]:
    """The groups the table of rows filters by: ``group_by``'s, else ``metadata.category``'s
    when the rows have 2 to 20 of them; ``{}`` otherwise."""
    path = group_by or "metadata.category"
    found: dict[str, list[int]] = {}
    for row in run.rows:
        value = row.lookup(path)
        if value is not None:
            found.setdefault(str(value), []).append(row.index)
    if group_by is None and not 2 <= len(found) <= 20:
        return {}
    return dict(sorted(found.items(), key=lambda kv: -len(kv[1])))


def _linked(run: Run, checks: Sequence[RowCheck], worst_n: int) -> set[int]:
    """Rows the report links to (worst, unscored, to check): the table of rows holds them."""
    out = {c.index for c in checks[:_MAX_CHECKS]}
    return out | shown_indices(run, worst_n)


# -- entry points -------------------------------------------------------------------------
def render_report(
    run: Any,
    *,
    baseline: Any = None,
    group_by: str | None = None,
    thresholds: RiskThresholds | None = None,
    worst_n: int = 5,
    top_signs: int = 5,
    title: str | None = None,
    data: Any = None,
) -> str:
    """The report as an HTML string (see :func:`write_report`)."""
    if worst_n < 0:
        raise ValueError(f"The 'worst_n' parameter must be >= 0. Got {worst_n!r}.")
    if top_signs < 1:
        raise ValueError(f"The 'top_signs' parameter must be >= 1. Got {top_signs!r}.")
    r = _load_lean(run, worst_n, data)
    t = thresholds or RiskThresholds()
    base = None if baseline is None else as_run(baseline)
    comparison = None if base is None else compare_runs(base, r)
    metrics = list(r.metrics.values())
    anchors = {m.name: f"metric-{i}" for i, m in enumerate(metrics)}

    w = _Writer()
    name = title or (f"ragmeter report: {r.source.name}" if r.source else "ragmeter report")
    w.add(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="referrer" content="no-referrer"><title>{w.t(name, limit=200)}</title>',
        f"<style>{_CSS}</style></head><body><main>",
        f"<h1>{w.t(name, limit=200)}</h1>",
    )
    created = r.info.get("created")
    data_name = redact_tree(dict(r.info)).get("data")
    w.add(
        f'<p class="note">{len(r.rows)} rows, {len(metrics)} metrics'
        f"{f'; input {w.t(data_name)}' if data_name is not None else ''}"
        f"{f'; run created {w.t(created)}' if created else ''}"
        f"; report written {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.</p>"
    )
    if r.directions_inferred:
        w.add(
            '<p class="note risk">No direction recorded for '
            f"{w.t(', '.join(r.directions_inferred))}: assumed higher is better, except "
            "noise_sensitivity* and hallucination (lower is better).</p>"
        )

    same_as = _same_as(r, metrics)
    signs = rank_signs(s for m in metrics if m.name not in same_as for s in _signs_for(r, m, t))
    claim_metrics = [m.name for m in metrics if m.name not in same_as and _has_claims(r, m.name)]
    checks = check_rows(r, claim_metrics)
    links = [
        ("summary", "Overview"),
        ("signs", "Signs of risk"),
        *([("check", "Check these")] if claim_metrics else []),
        ("rows", "All rows"),
        ("metrics", "Metrics by family"),
        *([("groups", f"By {group_by}")] if group_by else []),
        *([("baseline", "Baseline comparison")] if comparison is not None else []),
        ("usage", "Judge usage"),
        ("config", "Configuration"),
    ]
    w.add(
        '<nav class="note">'
        + " · ".join(f'<a href="#{anchor}">{w.t(label)}</a>' for anchor, label in links)
        + "</nav>"
    )
    if not metrics:
        w.add('<h2 id="summary">Overview</h2><p>This run has no metric scores.</p>')
    else:
        _key_box(w, r, signs, checks, judged=bool(claim_metrics))
        w.add(
            '<h2 id="summary">Overview</h2>',
            '<p class="note">Every metric by family: ↑ higher is better, ↓ lower is better; '
            "the distribution is a histogram of the scores over the metric's range, worst on "
            "the left, the mean in red; “= name”: the same scores as that metric. A metric's "
            "name leads to its section (plot, signs, worst rows).</p>",
        )
        _overview(w, r, metrics, anchors, signs, same_as)
        w.add(f'<h3 id="signs">Signs of risk ({len(signs)})</h3>')
        _signs_grouped(w, signs, top=top_signs)
        _thresholds_note(w, t, metrics)
        _skipped(w, r.info)
        if claim_metrics:
            _check_section(w, r, checks)
        groups = _row_groups(r, group_by)
        uncertain = {r_.index for r_ in r.rows if any(k for k, _ in r_.verdict_counts.values())}
        unscored = {
            r_.index for r_ in r.rows if r_.failures or any(v is None for v in r_.scores.values())
        }
        flags = {
            "c": ("check these", {c.index for c in checks}),
            "u": ("uncertain verdicts", uncertain),
            "x": ("unscored", unscored),
        }
        flags = {k: v for k, v in flags.items() if v[1]}
        rows_table(w, r, flags=flags, groups=groups, also=sorted(_linked(r, checks, worst_n)))
        w.add(
            '<h2 id="metrics">Metrics by family</h2>',
            '<p class="note">Each family is folded: open one to read its metrics, each with '
            "its statistics, plot, signs and worst rows; claim metrics show their rows in "
            "full, claims and evidence marked.</p>",
        )
        for family, infos in _families(metrics).items():
            flagged = sum(1 for m in infos if any(m.name in sign.metrics for sign in signs))
            note = f" · {flagged} with signs" if flagged else ""
            w.add(
                f'<details class="fam"><summary>{w.t(family)} · {len(infos)} metric'
                f"{'s' if len(infos) != 1 else ''}{note}</summary>"
            )
            for m in infos:
                same = same_as.get(m.name)
                _metric_section(w, r, m, anchors[m.name], t, worst_n, same, anchors.get(same or ""))
            w.add("</details>")
    if group_by and metrics:
        _group_section(w, r, group_by, metrics, t, top_signs)
    if comparison is not None and base is not None:
        _baseline_section(w, comparison, base)
    w.add(answerability_section(r.info))  # refusal statistics; else nothing
    w.add(calibration_section(r.info))  # a run calibrated with labels; else nothing
    w.add(judge_noise_section(r.info, w.t))  # a run with repeats; else nothing
    _usage_section(w, r.info)
    _config_section(w, r)
    w.add("</main></body></html>\n")
    return w.html()


def report_inputs(
    run: Any,
    *,
    baseline: Any = None,
    data: Any = None,
    names: tuple[str, str, str] = ("run", "baseline", "data"),
) -> dict[str, Any]:
    """The files a report reads, by label, for :func:`ragmeter.io.paths.check_outputs`: the
    results files given as paths and their run records, and the input ``data`` (alone or as
    ``(data, column_map)``). ``names`` label ``run``, ``baseline`` and ``data``."""
    if isinstance(data, tuple) and data:
        data = data[0]
    inputs: dict[str, Any] = {}
    for name, value in zip(names, (run, baseline, data), strict=True):
        if isinstance(value, str | os.PathLike):
            inputs[name] = value
            if value is not data:
                inputs[f"the run record of {name}"] = sidecar_path(value)
    return inputs


def write_run_report(
    result: Any,
    out_path: str | os.PathLike[str],
    *,
    results: str | os.PathLike[str] | None = None,
    group_by: str | None = None,
) -> Path:
    """Write the HTML report at the end of a run (``evaluate(report=...)``).

    The rows are read from ``results`` (the results file they were streamed to) when given,
    else from the rows ``result`` (a RunResult) kept; ``out_path``'s folder is made.
    """
    if results is not None:
        run = load_run(results)
    else:
        run = Run.from_parts([r.to_json() for r in result.rows], result.info)
    make_parent(out_path)
    source = getattr(result, "source", None)
    return write_report(run, out_path, group_by=group_by, data=source)


def write_report(
    run: Any,
    out_path: str | os.PathLike[str],
    *,
    baseline: Any = None,
    group_by: str | None = None,
    thresholds: RiskThresholds | None = None,
    worst_n: int = 5,
    top_signs: int = 5,
    title: str | None = None,
    data: Any = None,
) -> Path:
    """Write ONE self-contained HTML report of ``run`` to ``out_path``; returns the path.

    ``run`` and ``baseline`` may be RunResults, :class:`Run` objects or results paths.
    ``group_by`` names a row field such as ``metadata.category``. ``thresholds`` decide
    the signs of risk (per-metric defaults included); the ``top_signs`` most important show
    first, the rest fold. ``worst_n`` rows per metric are shown in full. The file needs no
    network and runs no script; all data is escaped and secrets are scrubbed.

    The rows shown in full show their question, answer, contexts and references, with the
    claims' evidence spans marked, when the input can be read again: ``data`` (the input
    as ``evaluate`` took it, or ``(data, column_map)``), else a RunResult's own input, else
    the input file its run record names, when it is still there unchanged (read with the
    canonical column names).
    """
    check_outputs(report_inputs(run, baseline=baseline, data=data), {"out_path": out_path})
    text = render_report(
        run,
        baseline=baseline,
        group_by=group_by,
        thresholds=thresholds,
        worst_n=worst_n,
        top_signs=top_signs,
        title=title,
        data=data,
    )
    out = Path(out_path)
    data = _encoded(text)
    # Written beside it, then moved over it: a report that fails leaves the earlier one whole.
    part = out.with_name(f".{out.name}.{os.getpid()}.part")
    try:
        part.write_bytes(data)
        os.replace(part, out)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return out


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _encoded(text: str) -> bytes:
    """The report as UTF-8: a lone surrogate (``"\\ud800"`` is valid JSON, so a row may hold
    one; UTF-8 has no encoding for it) becomes U+FFFD, the replacement character."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")
