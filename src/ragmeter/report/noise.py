"""The report's *Judge noise* section: what ``Settings.repeats`` measured (the run record's
``judge_noise``, :mod:`ragmeter.runner.repeats`), and the flaky rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["judge_noise_section", "repeats_interval"]

#: Flaky rows listed per metric.
MAX_ROWS_SHOWN = 20


def _num(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "—"


def repeats_interval(info: Mapping[str, Any], metric: str) -> str:
    """For the summary table's interval cell: ``metric``'s 95% interval over rows and repeats
    (the run record's ``judge_noise``), marked as such after a line break; ``""`` for a run
    without repeats. The cell's first interval is the report's bootstrap of the rows' scores
    (each the mean of its repeats), which leaves out the judge's own variance."""
    noise = info.get("judge_noise")
    found = noise.get(metric) if isinstance(noise, Mapping) else None
    ci = found.get("ci") if isinstance(found, Mapping) else None
    if not (isinstance(ci, list | tuple) and len(ci) == 2):
        return ""
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in ci):
        return ""
    return (
        f" <span class=note>(rows only)</span><br>[{_num(ci[0])}, {_num(ci[1])}] "
        f"<span class=note title=\"resamples rows, then each row's {found.get('repeats')} "
        "judge repeats: the judge's own variance included\">(rows and repeats)</span>"
    )


def judge_noise_section(info: Mapping[str, Any], text: Callable[[Any], str]) -> str:
    """The section's HTML, or ``""`` for a run without repeats. ``text`` escapes a value
    from the data for HTML."""
    noise = info.get("judge_noise")
    if not isinstance(noise, Mapping) or not noise:
        return ""
    parts = [
        '<h2 id="judge-noise">Judge noise</h2><p class="note">Each row was scored by several '
        "repeats of the judge, each asked on its own; a row's score is their mean. A claim "
        "flips when repeats that found it disagree on its verdict; a row is flaky when its "
        "repeats' scores spread by a tenth of the range or more, or a claim flipped. The "
        "interval resamples rows and, within each, its repeats, so it holds the judge's "
        "variance too.</p><table><thead><tr><th>metric</th><th>repeats</th><th>rows</th>"
        "<th>claims flipped</th><th>mean spread</th><th>largest spread</th>"
        "<th>flaky rows</th><th>95% CI (rows and repeats)</th></tr></thead><tbody>"
    ]
    for name, found in noise.items():
        if not isinstance(found, Mapping):
            continue
        share = found.get("flip_share")
        flipped = (
            f"{found.get('flipped_claims')} of {found.get('claims')} ({share:.1%})"
            if isinstance(share, int | float)
            else "—"
        )
        ci = found.get("ci")
        interval = (
            f"[{_num(ci[0])}, {_num(ci[1])}]"
            if isinstance(ci, list | tuple) and len(ci) == 2
            else "—"
        )
        parts.append(
            f"<tr><td>{text(name)}</td><td class=n>{text(found.get('repeats'))}</td>"
            f"<td class=n>{text(found.get('rows'))}</td><td class=n>{text(flipped)}</td>"
            f"<td class=n>{_num(found.get('mean_spread'))}</td>"
            f"<td class=n>{_num(found.get('max_spread'))}</td>"
            f"<td class=n>{text(found.get('flaky_rows'))}</td><td class=n>{interval}</td></tr>"
        )
    parts.append("</tbody></table>")
    for name, found in noise.items():
        flaky = found.get("flaky") if isinstance(found, Mapping) else None
        if not isinstance(flaky, list) or not flaky:
            continue
        total = found.get("flaky_rows", len(flaky))
        parts.append(
            f"<h3>Flaky rows of {text(name)} ({text(total)})</h3><table><thead><tr>"
            "<th>row</th><th>spread</th><th>claims flipped</th></tr></thead><tbody>"
        )
        for item in flaky[:MAX_ROWS_SHOWN]:
            if isinstance(item, Mapping):
                parts.append(
                    f"<tr><td class=n>{text(item.get('index'))}</td>"
                    f"<td class=n>{_num(item.get('spread'))}</td>"
                    f"<td class=n>{text(item.get('flipped'))}</td></tr>"
                )
        if isinstance(total, int) and total > min(len(flaky), MAX_ROWS_SHOWN):
            more = total - min(len(flaky), MAX_ROWS_SHOWN)
            parts.append(f"<tr><td colspan=3><i>… {more} more</i></td></tr>")
        parts.append("</tbody></table>")
    return "".join(parts)
