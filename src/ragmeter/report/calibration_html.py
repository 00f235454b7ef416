"""The report's calibration section: a run record's ``calibration`` (``evaluate(labels=...)``) as
one small table (judge, labels only, calibrated with 95% intervals, bias, agreement)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

__all__ = ["calibration_section"]


def _value(entry: Any) -> str:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("mean"), int | float):
        reason = entry.get("refused") if isinstance(entry, Mapping) else None
        return "—" if not reason else "refused"
    ci = entry.get("ci")
    text = f"{entry['mean']:.3f}"
    if isinstance(ci, list) and len(ci) == 2:
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text


def _agreement(entry: Mapping[str, Any]) -> str:
    agreement = entry.get("agreement")
    if not isinstance(agreement, Mapping):
        return "—"
    parts = []
    for key, stats in agreement.items():
        if not isinstance(stats, Mapping):
            continue
        shown = [
            f"{name.replace('_', ' ')} {stats[name]:.2f}"
            for name in ("balanced_accuracy", "cohen_kappa", "auroc", "spearman", "mae")
            if isinstance(stats.get(name), int | float)
        ]
        parts.append(f"{key} (n={stats.get('n')}): {', '.join(shown) or 'undefined'}")
    if entry.get("level") == "rows":
        shown = [
            f"{name} {agreement[name]:.2f}"
            for name in ("spearman", "mae", "balanced_accuracy", "cohen_kappa", "auroc")
            if isinstance(agreement.get(name), int | float)
        ]
        parts.append(f"rows (n={agreement.get('n')}): {', '.join(shown) or 'undefined'}")
    return "; ".join(parts) or "—"


def calibration_section(info: Mapping[str, Any]) -> str:
    """HTML for ``info["calibration"]``, or ``""`` when the run record has none."""
    record = info.get("calibration")
    if not isinstance(record, Mapping) or not isinstance(record.get("metrics"), Mapping):
        return ""
    e = html.escape
    out = [
        '<h2 id="calibration">Calibration against human labels</h2>',
        f'<p class="note">Labels: {e(str(record.get("labels")))} (selection: '
        f"{e(str(record.get('selection') or 'not said; taken as uniform'))}). Calibrated: "
        "prediction-powered inference (PPI++) — the judge's scores on every row corrected by "
        "its errors on the labelled rows; 95% intervals.</p>",
        "<table><thead><tr><th>metric</th><th>labels</th><th>judge</th><th>labels only</th>"
        "<th>calibrated</th><th>bias (judge − people)</th><th>agreement</th></tr></thead><tbody>",
    ]
    for name, entry in record["metrics"].items():
        if not isinstance(entry, Mapping):
            continue
        out.append(
            f"<tr><td>{e(str(name))}</td><td>{e(str(entry.get('n_labels')))}</td>"
            f"<td>{_value(entry.get('judge'))}</td><td>{_value(entry.get('labels'))}</td>"
            f"<td><b>{_value(entry.get('calibrated'))}</b></td>"
            f"<td>{_value(entry.get('bias'))}</td><td>{e(_agreement(entry))}</td></tr>"
        )
    out.append("</tbody></table>")
    for name, entry in record["metrics"].items():
        if isinstance(entry, Mapping):
            why = (entry.get("calibrated") or {}).get("refused")
            what = f"{name}: {why}" if why else f"{name}: {entry.get('how', '')}"
            out.append(f'<p class="note">{e(what)}</p>')
    for note in record.get("notes") or ():
        out.append(f'<p class="note">{e(str(note))}</p>')
    return "".join(out)
