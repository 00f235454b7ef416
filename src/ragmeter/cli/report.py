"""``ragmeter report`` and ``ragmeter compare``: added to the main app by ``register(app)``.

Errors end the command with exit code 2, a failed ``--fail-if-worse`` gate ``compare`` with
exit code 1 (:mod:`ragmeter.cli.output`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.output import EXIT_GATE, fail, parse_assignments
from ragmeter.errors import ConfigError, RagmeterError, param_names

__all__ = ["register"]

#: How the errors of ``report`` and ``compare`` name their parameters on the command line.
REPORT_FLAGS = {
    "group_by": "--group-by",
    "pair_by_index": "ragmeter compare A B --pair-by-index",
    "risk_thresholds": "--risk-threshold",
}


REPORT_EXAMPLES = """Examples:

  ragmeter report results.jsonl
  ragmeter report results.jsonl -o report.html --group-by metadata.category
  ragmeter report new.jsonl --baseline old.jsonl --risk-threshold poor_share=0.1
  ragmeter report results.jsonl --risk-threshold context_relevance.poor_score=0.05"""

COMPARE_EXAMPLES = """Examples:

  ragmeter compare old.jsonl new.jsonl
  ragmeter compare old.jsonl new.jsonl --fail-if-worse faithfulness=0.02
  ragmeter compare old.jsonl edited.jsonl --pair-by-index"""


def report_command(
    results: Annotated[
        Path, typer.Argument(metavar="RESULTS", help="Results .jsonl written by a run.")
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="HTML file to write (default: RESULTS with the suffix .html).",
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="RESULTS",
            help="Results .jsonl of a baseline run to compare with.",
        ),
    ] = None,
    group_by: Annotated[
        str | None,
        typer.Option(
            "--group-by",
            metavar="FIELD",
            help="Row field to group by, e.g. metadata.category.",
        ),
    ] = None,
    risk_threshold: Annotated[
        list[str] | None,
        typer.Option(
            "--risk-threshold",
            metavar="NAME=VALUE",
            help="Change a risk threshold: poor_score, poor_share, skew, spread, "
            "missing_share, min_samples, for every metric (--risk-threshold poor_share=0.1) "
            "or one metric and those it prefixes (--risk-threshold "
            "context_relevance.poor_score=0.05). Repeatable.",
        ),
    ] = None,
    top_signs: Annotated[
        int,
        typer.Option(
            "--top-signs",
            min=1,
            metavar="N",
            help="Signs of risk shown first; the rest fold under 'N more signs'.",
        ),
    ] = 5,
    worst_n: Annotated[
        int, typer.Option("--worst", min=0, metavar="N", help="Worst samples shown per metric.")
    ] = 5,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            metavar="FILE",
            help="The input the run scored, to show the question, answer and contexts of the "
            "worst samples beside their claims (default: the input file the run record names, "
            "when it is still there unchanged). Read with the canonical column names.",
        ),
    ] = None,
) -> None:
    """Write one self-contained HTML report (statistics, plots, risk signs, worst samples)."""
    from ragmeter.io.paths import check_outputs
    from ragmeter.report.html import report_inputs, write_report
    from ragmeter.report.risk import RiskThresholds

    out = output or results.with_suffix(".html")
    try:
        check_outputs(
            report_inputs(
                results, baseline=baseline, data=data, names=("RESULTS", "--baseline", "--data")
            ),
            {"--output": out},
        )
        thresholds = RiskThresholds().with_overrides(
            parse_assignments(
                risk_threshold or [], option="--risk-threshold", example="poor_share=0.1"
            )
        )
        with param_names(REPORT_FLAGS):
            written = write_report(
                results,
                out,
                baseline=baseline,
                group_by=group_by,
                thresholds=thresholds,
                worst_n=worst_n,
                top_signs=top_signs,
                data=data,
            )
    except (RagmeterError, ImportError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"Cannot write {out}: {exc.strerror or exc}.")
    typer.echo(f"Report written to {written}")


def compare_command(
    a: Annotated[Path, typer.Argument(metavar="A", help="Baseline results .jsonl (A).")],
    b: Annotated[Path, typer.Argument(metavar="B", help="New results .jsonl (B).")],
    fail_if_worse: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if-worse",
            metavar="METRIC=DELTA",
            help="metric=delta: exit 1 when B's mean is worse than A's by more than delta "
            "(direction-aware). Repeatable.",
        ),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", min=0, metavar="N", help="Changed samples listed.")
    ] = 3,
    pair_by_index: Annotated[
        bool,
        typer.Option(
            "--pair-by-index",
            metavar="",
            help="Pair row i of A with row i of B even when the run records name different "
            "inputs or the rows' ids differ (a warning says what differs).",
        ),
    ] = False,
) -> None:
    """Paired comparison of two runs over the same inputs (B - A), with optional CI gates."""
    from ragmeter.report.compare import compare_runs

    try:
        gates = {
            metric: _delta(metric, raw)
            for metric, raw in parse_assignments(
                fail_if_worse or [], option="--fail-if-worse", example="faithfulness=0.02"
            ).items()
        }
        with param_names(REPORT_FLAGS):
            comparison = compare_runs(a, b, top=top, pair_by_index=pair_by_index)
        results = [comparison.worse_than(metric, delta) for metric, delta in gates.items()]
    except RagmeterError as exc:
        fail(str(exc))

    for warning in comparison.warnings:
        typer.echo(f"Warning: {warning}", err=True)
    typer.echo(
        f"A = {a}\nB = {b}\n{comparison.paired} rows paired by {comparison.match_by}"
        f" ({comparison.unmatched_a} only in A, {comparison.unmatched_b} only in B)\n"
    )
    if not comparison.metrics:
        typer.echo("No metric is present in both runs.")
    for mc in comparison.metrics.values():
        arrow = "higher" if mc.higher_is_better else "lower"
        typer.echo(
            f"{mc.metric} ({arrow} is better): mean A {_n(mc.mean_a)}, mean B {_n(mc.mean_b)}"
        )
        typer.echo(f"  {mc.verdict()}")
        for c in mc.top_changes:
            who = f"row {c.index}" + (f" (id {c.id})" if c.id is not None else "")
            typer.echo(f"    {who}: {c.a:.3f} -> {c.b:.3f} ({c.delta:+.3f})")
    _print_calibrated_differences(a, b)
    if results:
        typer.echo("")
    for gate in results:
        typer.echo(gate.message)
    failed = [g for g in results if g.failed]
    if failed:
        typer.echo(f"{len(failed)} of {len(results)} gates failed.", err=True)
        raise typer.Exit(EXIT_GATE)


def _print_calibrated_differences(a: Path, b: Path) -> None:
    """When both run records hold a calibration (``evaluate --labels``): each metric's
    calibrated difference B - A (paired PPI++ when both runs labelled the same rows)."""
    from ragmeter.report.calibration.compare import compare_calibrations

    try:
        differences = compare_calibrations(a, b)
    except RagmeterError as exc:
        typer.echo(f"Warning: no calibrated comparison: {exc}", err=True)
        return
    if differences:
        typer.echo("\nCalibrated with human labels (B - A, 95% interval):")
    for metric, d in differences.items():
        c = d["calibrated"]
        if c["mean"] is None:
            typer.echo(f"  {metric}: no calibrated difference ({d.get('why')})")
            continue
        how = (
            f"paired on {d['n_shared_labels']} rows labelled in both runs"
            if d["paired"]
            else "unpaired: the runs' labelled rows differ"
        )
        judge = d["judge"]
        raw = "" if judge["mean"] is None else f"; the judges' own difference {judge['mean']:+.3f}"
        typer.echo(
            f"  {metric}: {c['mean']:+.3f} [{c['ci'][0]:+.3f}, {c['ci'][1]:+.3f}] ({how}{raw})"
        )


def _delta(metric: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(
            f"--fail-if-worse {metric}=... needs a number (the allowed worsening). Got {raw!r}."
        ) from None
    if value < 0:
        raise ConfigError(
            f"--fail-if-worse {metric}: the allowed worsening must be >= 0. Got {raw}."
        )
    return value


def _n(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def register(app: typer.Typer) -> None:
    """Add ``report`` and ``compare`` to ``app``."""
    app.command("report", epilog=REPORT_EXAMPLES)(report_command)
    app.command("compare", epilog=COMPARE_EXAMPLES)(compare_command)
