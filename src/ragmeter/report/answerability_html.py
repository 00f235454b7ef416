"""The report's *Answerability* section: how well the answers refuse unanswerable questions
(``answerability_accuracy``'s refusal statistics, :class:`ragmeter.scoring.answerability.
RefusalCounts`, kept in the run record's ``summary.answerability_accuracy.refusals``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.scoring.answerability import RefusalCounts

__all__ = ["answerability_section"]

METRIC = "answerability_accuracy"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def refusal_counts(info: Mapping[str, Any]) -> RefusalCounts | None:
    """The run's refusal counts from its run record, or ``None`` when it has none."""
    summary = info.get("summary")
    found = summary.get(METRIC) if isinstance(summary, Mapping) else None
    return RefusalCounts.from_dict(found.get("refusals") if isinstance(found, Mapping) else None)


def answerability_section(info: Mapping[str, Any]) -> str:
    """The section's HTML, or ``""`` for a run without refusal statistics (no
    ``is_answerable_label``, or ``answerability_accuracy`` not run)."""
    counts = refusal_counts(info)
    if counts is None:
        return ""
    unanswerable = counts.refused_unanswerable + counts.answered_unanswerable
    answerable = counts.refused_answerable + counts.answered_answerable
    rates = (
        (
            "precision",
            counts.precision,
            "of the refusals, the share whose question was unanswerable",
        ),
        ("recall", counts.recall, "of the unanswerable questions, the share refused"),
        ("F1", counts.f1, "the harmonic mean of precision and recall"),
        (
            "false-refusal rate",
            counts.false_refusal_rate,
            "of the answerable questions, the share refused",
        ),
    )
    return "".join(
        [
            '<h2 id="answerability">Answerability</h2><p class="note">Refusing unanswerable '
            f"questions, over the {counts.rows} rows with an <code>is_answerable_label</code> "
            "and a reading of the answer: a refusal of an unanswerable question is a hit. A "
            "partial answer (it declines, then answers anyway) counts as answering. A rate "
            "with nothing to divide by is shown as —.</p>",
            "<table><thead><tr><th></th><th>refused</th><th>answered</th></tr></thead><tbody>",
            f"<tr><td>unanswerable ({unanswerable})</td><td class=n>"
            f"{counts.refused_unanswerable}</td><td class=n>{counts.answered_unanswerable}"
            "</td></tr>",
            f"<tr><td>answerable ({answerable})</td><td class=n>{counts.refused_answerable}"
            f"</td><td class=n>{counts.answered_answerable}</td></tr></tbody></table>",
            "<table><thead><tr><th>statistic</th><th>value</th><th>what it is</th></tr>"
            "</thead><tbody>",
            *(
                f"<tr><td>{name}</td><td class=n>{_rate(value)}</td><td>{what}</td></tr>"
                for name, value, what in rates
            ),
            "</tbody></table>",
        ]
    )
