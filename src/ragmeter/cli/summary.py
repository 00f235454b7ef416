"""What ``ragmeter evaluate`` prints after a run: the summary table (metrics by family, a long
run's tail folded) on its console, and the notes on stderr: metrics skipped, refusals, the
regex fallback, judge noise, usage and cost, the first failures."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import Any

from rich.console import Console

from ragmeter.cli.gates import first_failures
from ragmeter.cli.output import err_console, out_console
from ragmeter.cli.summary_table import judge_line, summary_table
from ragmeter.io.redact import redact
from ragmeter.models.entities import spacy_unavailable

__all__ = ["fallback_notes", "judge_noise_lines", "print_summary", "refusal_lines"]


def print_summary(
    result: Any, *, console: Console | None = None, keep: Collection[str] = ()
) -> None:
    """The summary table on ``console`` (stdout by default), metrics grouped by family and
    a long run's tail folded (``keep``: metrics never folded, such as gated ones); notes on
    stderr."""
    console = console or out_console
    table, plan = summary_table(result, keep=keep)
    # Wide enough for every column even when piped (rich assumes 80 columns off a terminal).
    Console(file=console.file, width=max(console.width, 132)).print(table)
    if plan.folded:
        err_console.print(
            f"{plan.folded} metrics folded into the '+N more' rows: the results file (--out) "
            "and the report (--report) hold every metric; -m NAME,... picks the ones shown.",
            highlight=False,
            markup=False,
        )
    decided = judge_line(result)
    if decided is not None:
        err_console.print(decided, highlight=False, markup=False)
    skipped = result.info.get("skipped") or {}
    if skipped:
        noted = {k: v for k, v in skipped.items() if not v.startswith("no column")}
        for name, why in noted.items():
            err_console.print(f"skipped {name}: {why}", highlight=False, markup=False)
        columns = Counter(v for v in skipped.values() if v.startswith("no column"))
        if columns:
            n = sum(columns.values())
            what = ", ".join(f"{why} ({count})" for why, count in columns.items())
            err_console.print(
                f"skipped {n} metric{'s' if n != 1 else ''}: {what}. Map a column with "
                "--column FIELD=COLUMN (a dotted path such as pred.contexts works).",
                highlight=False,
                markup=False,
            )
    for line in refusal_lines(result):
        err_console.print(line, highlight=False, markup=False, soft_wrap=True)
    for note in fallback_notes(result):
        err_console.print(f"note: {note}", highlight=False, markup=False)
    for line in judge_noise_lines(result.info.get("judge_noise")):
        err_console.print(line, highlight=False, markup=False)
    usage = result.usage
    if usage.calls or usage.cache_hits:
        cost = "" if usage.cost is None else f", cost {usage.cost:.4f}"
        err_console.print(
            f"judge: {usage.calls} calls, {usage.cache_hits} cache hits, {usage.retries} retries, "
            f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens{cost}",
            highlight=False,
        )
    if usage.implausible_usage:
        err_console.print(
            f"note: {usage.implausible_usage} judge replies reported more tokens than any "
            "model's context; those counts are left out of tokens and cost.",
            highlight=False,
            markup=False,
        )
    failures = first_failures(result)
    total = sum(s.failed for s in result.summary.values())
    if total:
        err_console.print(f"{total} metric failures; first ones:", highlight=False)
        for index, metric, message in failures[:5]:
            err_console.print(
                f"  row {index} {metric}: {redact(message)}", highlight=False, markup=False
            )


def refusal_lines(result: Any) -> list[str]:
    """``answerability_accuracy``'s refusal statistics, one line, when the run has them."""
    summary = result.summary.get("answerability_accuracy")
    counts = getattr(summary, "refusals", None)
    if counts is None:
        return []

    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    unanswerable = counts.refused_unanswerable + counts.answered_unanswerable
    return [
        f"answerability: refusing the {unanswerable} unanswerable questions: precision "
        f"{rate(counts.precision)}, recall {rate(counts.recall)}, F1 {rate(counts.f1)}; "
        f"false refusals on the {counts.rows - unanswerable} answerable: "
        f"{rate(counts.false_refusal_rate)} (partial answers count as answering)"
    ]


def judge_noise_lines(noise: Any) -> list[str]:
    """What ``--repeats`` measured, a line per metric (the run record's ``judge_noise``)."""
    lines = []
    for name, found in (noise or {}).items():
        parts = [f"judge noise: {name} over {found['repeats']} repeats"]
        if found.get("flip_share") is not None:
            parts.append(
                f"{found['flipped_claims']} of {found['claims']} claims flipped verdict "
                f"({found['flip_share']:.1%})"
            )
        if found.get("mean_spread") is not None:
            parts.append(f"rows' spread {found['mean_spread']:.3f} on average")
        flaky = [str(f["index"]) for f in found.get("flaky", ())[:5]]
        more = ", ..." if found.get("flaky_rows", 0) > len(flaky) else ""
        parts.append(
            f"{found.get('flaky_rows', 0)} flaky rows"
            + (f" ({', '.join(flaky)}{more})" if flaky else "")
        )
        lines.append(
            "; ".join(parts)
            + "; its 95% CI holds the judge's variance (rows and repeats resampled)."
        )
    return lines


def fallback_notes(result: Any) -> list[str]:
    """What the offline judge did on its regex fallback because spaCy's model is missing."""
    judge = (result.info.get("settings") or {}).get("judge")
    families = {spec.family for spec in result.specs.values()}
    if not (isinstance(judge, str) and judge.startswith("offline")):
        return []
    if not families & {"claims", "entity_recall"} or (why := spacy_unavailable()) is None:
        return []
    done = []
    if "entity_recall" in families:
        done.append("context_entity_recall's entities are numbers and capitalised spans")
    if "claims" in families:
        done.append("claims are sentences and clauses cut by regular expressions")
    return [
        f"regex fallback: {' and '.join(done)}, because {why}. For spaCy's named entities "
        "and parsed atomic claims: pip install 'ragmeter[ner]'"
    ]
