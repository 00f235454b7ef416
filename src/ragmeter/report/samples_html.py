"""The report's rows shown in full: scores, reasons, input texts with the claims' evidence
spans marked, the claim table (verdict, support, what decided, what it rests on) and the
rest of a metric's details; and rows in brief (one table line each)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.io.redact import redact_everywhere
from ragmeter.report.claim_flags import (
    RESTS_ON,
)
from ragmeter.report.writer import MAX_TEXT, Writer, num
from ragmeter.result import RunResult
from ragmeter.types import MetricSpec, RowResult

_MAX_ITEMS = 25


#: A context (or reference, or answer) longer than this shows only windows around its
#: evidence spans, each reaching this far either side of its span.
_MAX_PREMISE = 700


_SPAN_WINDOW = 160


#: Windows shown per text; contexts shown per sample.
_MAX_WINDOWS = 6


_MAX_CONTEXTS = 10


def scalar_html(w: Writer, value: Any) -> str:
    if isinstance(value, str):  # kept line breaks need pre-wrap; other text wraps as is
        return f'<span class="txt">{w.t(value)}</span>' if "\n" in value else w.t(value)
    if isinstance(value, Mapping):
        parts = [f"<b>{w.t(k, limit=80)}</b>: {scalar_html(w, v)}" for k, v in value.items()]
        return "; ".join(parts[:_MAX_ITEMS])
    if isinstance(value, list | tuple):
        return _list(w, value)
    if isinstance(value, float):
        return num(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"<code>{w.t(json.dumps(value, ensure_ascii=False, default=str))}</code>"


def _records(w: Writer, items: Sequence[Mapping[str, Any]]) -> str:
    """A list of objects (e.g. ``[{"claim": ..., "correct": ...}]``) as a table."""
    columns: list[str] = []
    for item in items:
        columns.extend(str(k) for k in item if str(k) not in columns)
    head = "".join(f"<th>{w.t(c, limit=80)}</th>" for c in columns)
    body = []
    for i, item in enumerate(items[:_MAX_ITEMS]):
        cells = "".join(f"<td>{scalar_html(w, item[c]) if c in item else ''}</td>" for c in columns)
        body.append(f"<tr><td class=n>{i + 1}</td>{cells}</tr>")
    if len(items) > _MAX_ITEMS:
        body.append(
            f"<tr><td colspan={len(columns) + 1}><i>… {len(items) - _MAX_ITEMS} more</i></td></tr>"
        )
    return f"<table><thead><tr><th>#</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _list(w: Writer, items: Sequence[Any]) -> str:
    if not items:
        return "<i>(empty)</i>"
    if all(isinstance(v, Mapping) for v in items):
        return _records(w, items)
    shown = [f"<li>{scalar_html(w, v)}</li>" for v in items[:_MAX_ITEMS]]
    more = f"<li><i>… {len(items) - _MAX_ITEMS} more</i></li>" if len(items) > _MAX_ITEMS else ""
    return f"<ol>{''.join(shown)}{more}</ol>"


def _details(w: Writer, details: Any) -> str:
    """Render a metric's details dict: claims with verdicts as a table, the rest compactly."""
    if not isinstance(details, Mapping):
        return scalar_html(w, details)
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
                f"<tr><td class=n>{i + 1}</td><td>{scalar_html(w, claim)}</td>"
                f"<td>{scalar_html(w, verdict)}</td></tr>"
            )
        out.append("</tbody></table>")
    flat = {k: v for k, v in rest.items() if not isinstance(v, Mapping | list | tuple)}
    if flat:
        items = [f"<b>{w.t(k, limit=80)}</b>: {scalar_html(w, v)}" for k, v in flat.items()]
        out.append(f"<div>{' · '.join(items)}</div>")
    nested = {k: v for k, v in rest.items() if k not in flat}
    if nested:
        out.append("<dl>")
        for key, value in nested.items():
            out.append(f"<dt>{w.t(key, limit=80)}</dt><dd>{scalar_html(w, value)}</dd>")
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


def _claim_evidence(w: Writer, details: Mapping[str, Any], metric: str = "") -> tuple[str, _Marks]:
    """The claims with their verdicts and what each rests on, as a table, and the evidence
    spans to mark in the texts; ``("", {})`` when no claim carries evidence."""
    items = _claim_items(details)
    if not any(isinstance(item.get("evidence"), Mapping) for _, item in items):
        return "", {}
    marks: _Marks = {}
    body: list[str] = []
    for label, item in items[: 2 * _MAX_ITEMS]:
        evidence = item.get("evidence")
        claim = scalar_html(w, item.get("claim", ""))
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
                f"<td class=n>{num(support, 2) if isinstance(support, float | int) else '—'}"
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
    w: Writer, text: str, marks: Sequence[tuple[int, int, str]], *, plain: int = 240
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


def _texts(w: Writer, kind: str, texts: Sequence[str], marks: _Marks) -> str:
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
    w: Writer,
    row: RowResult,
    metric: str,
    texts: Mapping[str, Any],
    run_judge: str | None = None,
) -> None:
    value = row.scores.get(metric)
    head = f"row {row.index}" + (f" · id {w.t(row.id, limit=200)}" if row.id is not None else "")
    score = "undefined" if value is None else num(value)
    details = row.details.get(metric)
    table, marks = _claim_evidence(w, details, metric) if isinstance(details, Mapping) else ("", {})
    w.add(f'<div class="sample"><b>{head}</b> · {w.t(metric)} = <b>{score}</b><dl>')
    if metric in row.failures:
        w.add(f'<dt>failure</dt><dd class="txt fail">{w.t(row.failures[metric])}</dd>')
    if metric in row.reasons:
        w.add(f'<dt>reason</dt><dd class="txt">{w.t(row.reasons[metric])}</dd>')
    if texts.get("question") is not None:
        w.add(f'<dt>question</dt><dd class="txt">{w.t(texts["question"])}</dd>')
    if texts.get("answer") is not None:
        answer = _marked(w, texts["answer"], marks.get(("answer", 0), []), plain=MAX_TEXT)
        w.add(f"<dt>answer</dt><dd>{answer}</dd>")
    if texts.get("contexts") is not None:
        w.add(f"<dt>contexts</dt><dd>{_texts(w, 'context', texts['contexts'], marks)}</dd>")
    if texts.get("reference_answers") is not None:
        refs = _texts(w, "reference", texts["reference_answers"], marks)
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
        w.add(f"<dt>metadata</dt><dd>{scalar_html(w, row.metadata)}</dd>")
    w.add("</dl></div>")


def samples(
    w: Writer, run: RunResult, rows: Sequence[RowResult], info: MetricSpec, title: str
) -> None:
    """Rows of ``run`` in full, folded under a summary that lists them with their scores (the
    run's judge is named once, not in each row's details)."""
    judge = judge_name(run.info)
    listed = ", ".join(
        f"{r.index} ({'—' if r.scores.get(info.name) is None else num(r.scores[info.name], 2)})"
        for r in rows
    )
    w.add(f"<details><summary>{title}: rows {listed}</summary>")
    for row in rows:
        _sample(w, row, info.name, run.texts.get(row.index, {}), judge)
    w.add("</details>")


def judge_name(info: Mapping[str, Any]) -> str | None:
    judge = info.get("judge")
    name = judge.get("name") if isinstance(judge, Mapping) else None
    return name if isinstance(name, str) else None


def has_claim_details(row: RowResult, metric: str) -> bool:
    """Whether ``row``'s details of ``metric`` hold claims (shown in full, as a table)."""
    details = row.details.get(metric)
    return isinstance(details, Mapping) and bool(
        {"claims", "answer_claims", "reference_claims"} & set(details)
    )


def rows_brief(w: Writer, rows: Sequence[RowResult], info: MetricSpec, title: str) -> None:
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
            f"<td class=n>{'undefined' if value is None else num(value)}</td>"
            f'<td class="txt">{why}</td></tr>'
        )
    w.add("</tbody></table></details>")
