"""The report's table of every row: texts, a few scores, flags; sorted and filtered by CSS.

The report runs no script (its Content-Security-Policy forbids one), so the table sorts and
filters with radio buttons and the stylesheet: each row carries its rank under every score
column as a CSS variable (``style="--s0:3"``), the table body is a flex column, and the
checked radio sets ``order`` from one variable (ascending) or its negative (descending);
a filter radio hides the rows without its class. Text search is the browser's own find.
Nothing in the table comes from data unescaped: the texts pass through the writer, the
classes and variables are generated here.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.report.scale import direction
from ragmeter.report.writer import Writer, num
from ragmeter.result import RunResult
from ragmeter.types import MetricSpec, RowResult

__all__ = ["MAX_ROWS", "TABLE_METRICS", "rows_table", "table_metrics"]

#: Rows the table holds at most (the first by index, then those the report points at).
MAX_ROWS = 2000
#: Score columns at most, and the metrics shown first when the run has them.
TABLE_METRICS = 8
_PREFERRED = (
    "faithfulness",
    "claim_recall",
    "context_precision",
    "context_relevance",
    "response_relevancy",
    "mrr",
    "token_f1",
    "k_precision",
)
_BUILTIN_FAMILIES = frozenset(
    {
        "lexical",
        "retrieval",
        "claims",
        "entity_recall",
        "response_relevancy",
        "context_relevance",
        "answerability",
        "answer_reward",
    }
)
_CUT = {"question": 200, "answer": 320, "reference": 200}

_CSS = (
    ".rk{position:absolute;opacity:0;pointer-events:none}"
    ".rf{margin:6px 0;font-size:13px}.rf label,.rt label{cursor:pointer;color:#2b7a78;"
    "border:1px solid #c5dcdb;border-radius:3px;padding:0 5px;margin:1px;display:inline-block}"
    ".rt{display:block;font-size:12.5px;border:1px solid #dcdcde}"
    ".rt thead,.rt tbody{display:block}"
    ".rt tbody{display:flex;flex-direction:column;max-height:75vh;overflow-y:auto}"
    ".rt th,.rt td{border:0;border-bottom:1px solid #eee;padding:3px 5px}"
    ".rt th{font-size:11.5px;overflow-wrap:anywhere}.rt .q{font-weight:600}"
    ".rt .vn{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;"
    "display:inline-block;max-height:13em;overflow:hidden;text-overflow:ellipsis}"
    ".rt th.s{display:flex;flex-direction:column;align-items:center;justify-content:flex-end}"
    ".rt .r{color:#50575e}.rt .fl{font-size:11px;color:#8a2424}"
)


def table_metrics(run: RunResult) -> list[MetricSpec]:
    """The score columns: the run's own metrics first (criteria, Python metrics), then
    the usual headline metrics, then the first of each other family, up to
    :data:`TABLE_METRICS`."""
    scored = [m for m in run.specs.values() if run.column(m.name).values]
    own = [m for m in scored if m.family and m.family not in _BUILTIN_FAMILIES]
    by_name = {m.name: m for m in scored}
    chosen = [*own, *(by_name[n] for n in _PREFERRED if n in by_name)]
    families = {m.family for m in chosen}
    for m in scored:
        if m.family not in families:
            chosen.append(m)
            families.add(m.family)
    for m in scored:
        chosen.append(m)
    out: list[MetricSpec] = []
    for m in chosen:
        if m not in out:
            out.append(m)
    return out[:TABLE_METRICS]


def _ranks(run: RunResult, rows: Sequence[RowResult], metric: str) -> dict[int, int]:
    """Rank of each scored row's value of ``metric`` (ties by row index), by row index."""
    scored = sorted(
        (value, row.index) for row in rows if (value := row.scores.get(metric)) is not None
    )
    return {index: rank for rank, (_, index) in enumerate(scored)}


def _text(w: Writer, texts: Mapping[str, Any]) -> str:
    parts = []
    question, answer = texts.get("question"), texts.get("answer")
    if question is not None:
        parts.append(f'<div class="q txt">{w.t(question, limit=_CUT["question"])}</div>')
    if answer is not None:
        parts.append(f'<div class="txt">{w.t(answer, limit=_CUT["answer"])}</div>')
    if texts.get("reference_answers"):
        ref = w.t(texts["reference_answers"][0], limit=_CUT["reference"])
        parts.append(f'<div class="r txt">reference: {ref}</div>')
    return "".join(parts) or '<span class="note">(texts not available)</span>'


def rows_table(
    w: Writer,
    run: RunResult,
    *,
    flags: Mapping[str, tuple[str, set[int]]],
    groups: Mapping[str, Sequence[int]] | None = None,
    also: Sequence[int] = (),
) -> None:
    """The table of rows (the first :data:`MAX_ROWS`, and the rows in ``also``) with the
    score columns of :func:`table_metrics`. ``flags``: ``{class: (label, row indices)}``,
    each a filter and a mark in the rows' flags cell; ``groups``: ``{label: row indices}``
    (a filter each)."""
    columns = table_metrics(run)
    wanted = set(also)
    rows = [r for i, r in enumerate(run.rows) if i < MAX_ROWS or r.index in wanted]
    groups = dict(list((groups or {}).items())[:20])
    in_group = {i: g for g, (_, members) in enumerate(groups.items()) for i in members}
    n_cols = len(columns)
    css = [
        _CSS,
        f".rt tr{{display:grid;grid-template-columns:4.6em minmax(0,1fr) "
        f"repeat({n_cols},4.2em) 6.2em}}",
    ]
    for k in range(n_cols):
        css.append(
            f"#rs{k}a:checked~.rt tbody tr{{order:var(--s{k},999999)}}"
            f"#rs{k}d:checked~.rt tbody tr{{order:calc(-1*var(--s{k},-999999))}}"
        )
    names = [*flags, *(f"g{g}" for g in range(len(groups)))]
    for name in names:
        css.append(f"#rf-{name}:checked~.rt tbody tr:not(.{name}){{display:none}}")
    on = ",".join(
        [f"#rs{k}{d}:checked~.rt label[for=rs{k}{d}]" for k in range(n_cols) for d in "ad"]
        + [f"#rf-{name}:checked~.rf label[for=rf-{name}]" for name in ["all", *names]]
    )
    css.append(f"{on}{{background:#2b7a78;color:#fff}}")

    shown = "" if len(rows) == len(run.rows) else f" (the first {len(rows)} of {len(run.rows)})"
    w.add(
        f'<h2 id="rows">All rows{shown}</h2>',
        '<p class="note">Sort by a score with ▲ (lowest first) or ▼ (highest first) in its '
        "column's head; show only some rows with the buttons; find a text with the browser's "
        f"find (Ctrl+F). Scores of {n_cols} of {len(run.metrics)} metrics; each metric's section "
        "and the results file hold every score. A row's number links to it from the lists "
        "above.</p>",
        f"<style>{''.join(css)}</style>",
        '<div class="rw">',
        '<input type=radio class=rk name=rs id=rs-i checked aria-label="row order">',
        *(
            f'<input type=radio class=rk name=rs id=rs{k}{d} aria-label="sort">'
            for k in range(n_cols)
            for d in "ad"
        ),
        '<input type=radio class=rk name=rf id=rf-all checked aria-label="all rows">',
        *(
            f'<input type=radio class=rk name=rf id=rf-{name} aria-label="filter">'
            for name in names
        ),
        f'<div class="rf">Show: <label for=rf-all>all {len(rows)}</label>',
        *(
            f"<label for=rf-{name}>{w.t(label, limit=60)} {len(members & {r.index for r in rows})}"
            "</label>"
            for name, (label, members) in flags.items()
        ),
        *(
            f"<label for=rf-g{g}>{w.t(label, limit=40)} {len(members)}</label>"
            for g, (label, members) in enumerate(groups.items())
        ),
        " <label for=rs-i>row order</label></div>",
        '<table class="rt"><thead><tr><th>row</th><th>question · answer · reference</th>',
    )
    for k, info in enumerate(columns):
        arrow = "↑" if info.higher_is_better else "↓"
        w.add(
            f'<th class=s title="{w.t(info.name)}: {w.t(direction(info))}">'
            f"<span class=vn>{w.t(info.name)} {arrow}</span>"
            f'<span><label for=rs{k}a title="lowest first">▲</label>'
            f'<label for=rs{k}d title="highest first">▼</label></span></th>'
        )
    w.add("<th>flags</th></tr></thead><tbody>")
    ranks = [_ranks(run, rows, info.name) for info in columns]
    for row in rows:
        classes = [name for name, (_, members) in flags.items() if row.index in members]
        if row.index in in_group:
            classes.append(f"g{in_group[row.index]}")
        style = ";".join(
            f"--s{k}:{rank[row.index]}" for k, rank in enumerate(ranks) if row.index in rank
        )
        cells = "".join(f"<td class=n>{num(row.scores.get(info.name), 2)}</td>" for info in columns)
        marks = " ".join(html.escape(flags[c][0]) for c in classes if c in flags)
        ident = f"<br><small>{w.t(row.id, limit=40)}</small>" if row.id is not None else ""
        w.add(
            f'<tr id="row-{row.index}"'
            + (f' class="{" ".join(classes)}"' if classes else "")
            + (f' style="{style}"' if style else "")
            + f"><td class=n>{row.index}{ident}</td>"
            + f"<td>{_text(w, run.texts.get(row.index, {}))}</td>{cells}"
            f'<td class="fl">{marks}</td></tr>'
        )
    w.add("</tbody></table></div>")
