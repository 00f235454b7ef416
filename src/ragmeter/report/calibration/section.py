"""The report's calibration section: a run record's ``calibration`` (``evaluate(labels=...)``) as
one small table (judge, labels only, calibrated with 95% intervals, bias, agreement)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_TARGET_WIDTH", "budget_text", "calibration_section"]

#: The width the section projects a label budget for when the record names none.
DEFAULT_TARGET_WIDTH = 0.05


def budget_text(entry: Mapping[str, Any]) -> str | None:
    """About how many labelled rows bring the calibrated interval to a width: the record's
    ``budget`` (``calibrate --target-width``) when it has one, else a projection to
    :data:`DEFAULT_TARGET_WIDTH` from the width now (scaling as one over the square root of
    the labelled rows); ``None`` without a calibrated interval."""
    budget = entry.get("budget")
    if isinstance(budget, Mapping):
        needed = budget.get("needed")
        if not isinstance(needed, int):
            return f"to reach a width of {budget.get('target_width')}: {budget.get('why')}"
        more = budget.get("more", 0)
        return (
            f"about {needed} labelled rows in all ({more} more) for an interval "
            f"{budget.get('target_width')} wide"
        )
    calibrated = entry.get("calibrated")
    ci = calibrated.get("ci") if isinstance(calibrated, Mapping) else None
    n = entry.get("n_labelled_rows")
    if not isinstance(ci, list) or len(ci) != 2 or not isinstance(n, int) or n < 1:
        return None
    width = float(ci[1]) - float(ci[0])
    needed = max(n, int(n * (width / DEFAULT_TARGET_WIDTH) ** 2 + 0.999))
    return (
        f"interval {width:.3f} wide from {n} labelled rows; about {needed} in all "
        f"({needed - n} more) for {DEFAULT_TARGET_WIDTH} (a projection: calibrate "
        "--target-width W gives the figure from the labels)"
    )


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
            budget = budget_text(entry)
            if budget:
                out.append(f'<p class="note">{e(f"{name} label budget: {budget}")}</p>')
    for note in record.get("notes") or ():
        out.append(f'<p class="note">{e(str(note))}</p>')
    return "".join(out)
