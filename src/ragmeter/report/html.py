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

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError, RagmeterError
from ragmeter.io.paths import check_outputs, make_parent, sidecar_path
from ragmeter.io.redact import redact_tree
from ragmeter.report.aliases import same_scores
from ragmeter.report.answerability_html import answerability_section
from ragmeter.report.calibration.section import calibration_section
from ragmeter.report.checks import RowCheck, check_rows
from ragmeter.report.claim_flags import (
    claim_digest,
    flags_of,
)
from ragmeter.report.compare import compare_runs
from ragmeter.report.groups import lookup
from ragmeter.report.groups_html import group_section
from ragmeter.report.load import as_run, read_details, read_inputs, recorded_input
from ragmeter.report.metric_html import has_claims, metric_section, metric_signs, shown_indices
from ragmeter.report.noise import judge_noise_section
from ragmeter.report.overview_html import (
    MAX_CHECKS,
    check_section,
    families,
    key_box,
    overview,
    signs_grouped,
    thresholds_note,
)
from ragmeter.report.record_html import (
    baseline_section,
    config_section,
    skipped_section,
    usage_section,
)
from ragmeter.report.risk import (
    RiskSign,
    RiskThresholds,
    rank_signs,
)
from ragmeter.report.rows_table import MAX_ROWS, rows_table
from ragmeter.report.svg import PLOT_CSS
from ragmeter.report.writer import Writer
from ragmeter.result import RunResult
from ragmeter.results import read_run
from ragmeter.types import MetricSpec

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


def _load_lean(obj: Any, worst_n: int, data: Any = None) -> RunResult:
    """A results path is read without details, then details of the shown rows only; the
    shown rows get their input texts when the input can be read again (:func:`_inputs`)."""
    if not isinstance(obj, str | os.PathLike):
        run = as_run(obj)
        texts = shown_indices(run, worst_n) | _table_indices(run)
        return run.with_inputs(_inputs(obj, run, texts, data))
    run = read_run(obj, details=claim_digest)
    shown = shown_indices(run, worst_n)
    texts = shown | _table_indices(run)
    return run.with_details(read_details(obj, shown)).with_inputs(_inputs(obj, run, texts, data))


def _table_indices(run: RunResult) -> set[int]:
    """The rows whose texts the table of rows shows."""

    return {row.index for row in run.rows[:MAX_ROWS]}


def _inputs(obj: Any, run: RunResult, indices: set[int], data: Any) -> dict[int, dict[str, Any]]:
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


def _row_groups(run: RunResult, group_by: str | None) -> dict[str, list[int]]:
    """The groups the table of rows filters by: ``group_by``'s, else ``metadata.category``'s
    when the rows have 2 to 20 of them; ``{}`` otherwise."""
    path = group_by or "metadata.category"
    found: dict[str, list[int]] = {}
    for row in run.rows:
        value = lookup(row, path, run.texts.get(row.index))
        if value is not None:
            found.setdefault(str(value), []).append(row.index)
    if group_by is None and not 2 <= len(found) <= 20:
        return {}
    return dict(sorted(found.items(), key=lambda kv: -len(kv[1])))


def _linked(run: RunResult, checks: Sequence[RowCheck], worst_n: int) -> set[int]:
    """Rows the report links to (worst, unscored, to check): the table of rows holds them."""
    out = {c.index for c in checks[:MAX_CHECKS]}
    return out | shown_indices(run, worst_n)


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
    metrics = list(r.specs.values())
    anchors = {m.name: f"metric-{i}" for i, m in enumerate(metrics)}

    w = Writer()
    _head(w, r, title, len(metrics))
    same_as = same_scores(r, metrics)
    signs = rank_signs(s for m in metrics if m.name not in same_as for s in metric_signs(r, m, t))
    claim_metrics = [m.name for m in metrics if m.name not in same_as and has_claims(r, m.name)]
    checks = check_rows(r, claim_metrics)
    _nav(w, claims=bool(claim_metrics), group_by=group_by, baseline=comparison is not None)
    if not metrics:
        w.add('<h2 id="summary">Overview</h2><p>This run has no metric scores.</p>')
    else:
        key_box(w, r, signs, checks, judged=bool(claim_metrics))
        w.add(
            '<h2 id="summary">Overview</h2>',
            '<p class="note">Every metric by family: ↑ higher is better, ↓ lower is better; '
            "the distribution is a histogram of the scores over the metric's range, worst on "
            "the left, the mean in red; “= name”: the same scores as that metric. A metric's "
            "name leads to its section (plot, signs, worst rows).</p>",
        )
        overview(w, r, metrics, anchors, signs, same_as)
        w.add(f'<h3 id="signs">Signs of risk ({len(signs)})</h3>')
        signs_grouped(w, signs, top=top_signs)
        thresholds_note(w, t, metrics)
        skipped_section(w, r.info)
        if claim_metrics:
            check_section(w, r, checks)
        _rows_section(w, r, checks, group_by, worst_n)
        _families_section(w, r, metrics, signs, same_as, anchors, t, worst_n)
    if group_by and metrics:
        group_section(w, r, group_by, metrics, t, top_signs)
    if comparison is not None and base is not None:
        baseline_section(w, comparison, base)
    w.add(answerability_section(r.info))  # refusal statistics; else nothing
    w.add(calibration_section(r.info))  # a run calibrated with labels; else nothing
    w.add(judge_noise_section(r.info, w.t))  # a run with repeats; else nothing
    usage_section(w, r.info)
    config_section(w, r)
    w.add("</main></body></html>\n")
    return w.html()


def _head(w: Writer, r: RunResult, title: str | None, n_metrics: int) -> None:
    """The page's head, its title and the line that says what the run is."""
    results = r.results_file
    name = title or (f"ragmeter report: {results.name}" if results else "ragmeter report")
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
        f'<p class="note">{len(r.rows)} rows, {n_metrics} metrics'
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


def _nav(w: Writer, *, claims: bool, group_by: str | None, baseline: bool) -> None:
    """Links to the page's sections."""
    links = [
        ("summary", "Overview"),
        ("signs", "Signs of risk"),
        *([("check", "Check these")] if claims else []),
        ("rows", "All rows"),
        ("metrics", "Metrics by family"),
        *([("groups", f"By {group_by}")] if group_by else []),
        *([("baseline", "Baseline comparison")] if baseline else []),
        ("usage", "Judge usage"),
        ("config", "Configuration"),
    ]
    w.add(
        '<nav class="note">'
        + " · ".join(f'<a href="#{anchor}">{w.t(label)}</a>' for anchor, label in links)
        + "</nav>"
    )


def _rows_section(
    w: Writer, r: RunResult, checks: Sequence[RowCheck], group_by: str | None, worst_n: int
) -> None:
    """The table of every row, with its filters: rows to check, with uncertain verdicts,
    unscored; and the groups."""
    uncertain = {
        row.index
        for row, f in zip(r.rows, flags_of(r), strict=True)
        if any(k for k, _ in f.verdict_counts.values())
    }
    unscored = {
        row.index for row in r.rows if row.failures or any(v is None for v in row.scores.values())
    }
    flags = {
        "c": ("check these", {c.index for c in checks}),
        "u": ("uncertain verdicts", uncertain),
        "x": ("unscored", unscored),
    }
    flags = {k: v for k, v in flags.items() if v[1]}
    groups = _row_groups(r, group_by)
    rows_table(w, r, flags=flags, groups=groups, also=sorted(_linked(r, checks, worst_n)))


def _families_section(
    w: Writer,
    r: RunResult,
    metrics: Sequence[MetricSpec],
    signs: Sequence[RiskSign],
    same_as: Mapping[str, str],
    anchors: Mapping[str, str],
    t: RiskThresholds,
    worst_n: int,
) -> None:
    """Every metric's section, folded by family."""
    w.add(
        '<h2 id="metrics">Metrics by family</h2>',
        '<p class="note">Each family is folded: open one to read its metrics, each with '
        "its statistics, plot, signs and worst rows; claim metrics show their rows in "
        "full, claims and evidence marked.</p>",
    )
    for family, infos in families(metrics).items():
        flagged = sum(1 for m in infos if any(m.name in sign.metrics for sign in signs))
        note = f" · {flagged} with signs" if flagged else ""
        w.add(
            f'<details class="fam"><summary>{w.t(family)} · {len(infos)} metric'
            f"{'s' if len(infos) != 1 else ''}{note}</summary>"
        )
        for m in infos:
            same = same_as.get(m.name)
            metric_section(w, r, m, anchors[m.name], t, worst_n, same, anchors.get(same or ""))
        w.add("</details>")


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
    make_parent(out_path)
    run = result if results is None else results
    return write_report(run, out_path, group_by=group_by, data=result.source)


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

    ``run`` and ``baseline`` may be RunResults or results paths.
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
