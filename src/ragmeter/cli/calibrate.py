"""``ragmeter calibrate RESULTS --labels L``: the judge against human labels, the mean three ways.

Also the pieces ``ragmeter evaluate --labels L --gate calibrated`` uses: :func:`print_calibration`
and :func:`check_calibrated_gates`. Errors end the command with exit code 2; a failed
``--fail-under`` gate (on the calibrated interval) with exit code 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

import ragmeter
from ragmeter.cli.gates import parse_thresholds
from ragmeter.cli.output import EXIT_GATE, err_console, fail, out_console
from ragmeter.errors import ConfigError, RagmeterError

__all__ = ["GATES", "check_calibrated_gates", "print_calibration", "register"]

#: What a ``--fail-under`` gate compares: the judge's mean, or the calibrated interval.
GATES: tuple[str, ...] = ("mean", "calibrated")

CALIBRATE_EXAMPLES = """Examples:

  ragmeter calibrate results.jsonl --labels labels.jsonl
  ragmeter calibrate results.jsonl --labels labels.csv --json
  ragmeter calibrate results.jsonl --labels labels.jsonl --fail-under faithfulness=0.8
  ragmeter calibrate results.jsonl --labels labels.jsonl --target-width 0.05

Label lines: {"id": ROW_ID, "metric": NAME, "value": NUMBER} or
{"id": ROW_ID, "claim": INDEX, "label": "supported"|"not_supported"|"unsure"}.
See docs/calibration.md."""


def _ci(value: dict[str, Any]) -> str:
    ci = value.get("ci")
    if value.get("mean") is None:
        return "-"
    mean = f"{value['mean']:.3f}"
    return mean if ci is None else f"{mean} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _agreement(entry: dict[str, Any]) -> str:
    agreement = entry["agreement"]
    parts = []
    if entry["level"] == "claims":
        for key, stats in agreement.items():
            if isinstance(stats, dict) and key != "rows":
                shown = ", ".join(
                    f"{name} {stats[name]:.2f}"
                    for name in ("balanced_accuracy", "cohen_kappa", "auroc")
                    if stats.get(name) is not None
                )
                parts.append(f"{key} (n={stats['n']}): {shown or 'undefined'}")
    else:
        shown = ", ".join(
            f"{name} {agreement[name]:.2f}"
            for name in ("spearman", "mae", "balanced_accuracy", "cohen_kappa", "auroc")
            if agreement.get(name) is not None
        )
        parts.append(f"rows (n={agreement['n']}): {shown or 'undefined'}")
    return "; ".join(parts)


def print_calibration(record: dict[str, Any], *, console: Console) -> None:
    """A table of every calibrated metric of ``record`` (a run record's ``calibration``:
    ``Calibration.as_record()``), then agreement, how, and notes (on ``console``)."""
    data = record["metrics"]
    table = Table(title=f"calibration against {record['labels']}")
    for col in ("metric", "labels", "judge", "labels only", "calibrated (PPI++)", "bias"):
        table.add_column(col, no_wrap=col == "metric", justify="left")
    for name, entry in data.items():
        table.add_row(
            name,
            f"{entry['n_labels']} ({entry['n_labelled_rows']} rows)",
            _ci(entry["judge"]),
            _ci(entry["labels"]),
            _ci(entry["calibrated"]),
            _ci(entry["bias"]),
        )
    Console(file=console.file, width=max(console.width, 132)).print(table)
    for name, entry in data.items():
        console.print(f"{name}: agreement {_agreement(entry)}", highlight=False, markup=False)
        console.print(f"  how: {entry['how']}", highlight=False, markup=False)
        for note in entry["notes"]:
            console.print(f"  note: {note}", highlight=False, markup=False)
    for note in record["notes"]:
        console.print(f"note: {note}", highlight=False, markup=False)


def budget_line(name: str, budget: dict[str, Any]) -> str:
    """One line saying about how many more labels bring ``name``'s interval to the target."""
    width = budget["target_width"]
    have = budget["labelled_rows"]
    needed = budget.get("needed")
    if needed is None:
        return f"{name}: to reach a width of {width:g}: {budget.get('why', 'unknown')}."
    more = budget.get("more", 0)
    head = f"{name}: {have} labelled rows; "
    if more == 0:
        text = f"{head}the calibrated interval is about {width:g} wide or narrower already"
    else:
        text = (
            f"{head}label about {more} more ({needed} in all) to bring the calibrated interval "
            f"to a width of {width:g}"
        )
    why = budget.get("why")
    return f"{text} ({why})." if why else f"{text}."


def check_calibrated_gates(record: dict[str, Any], gates: dict[str, float]) -> list[str]:
    """Messages for every gate the calibrated interval of ``record`` (as
    :func:`print_calibration`'s) fails: a higher-is-better metric fails when the interval's
    lower bound is below the gate, a lower-is-better one when its upper bound is above; a
    metric without a calibrated interval fails, saying why."""
    data = record["metrics"]
    failed = []
    for name, threshold in gates.items():
        entry = data.get(name)
        if entry is None:
            failed.append(
                f"{name}: no labels cover it, so no calibrated interval (gate {threshold})"
            )
            continue
        calibrated = entry["calibrated"]
        ci = calibrated.get("ci")
        if ci is None:
            why = calibrated.get("refused") or "too few labelled rows"
            failed.append(f"{name}: no calibrated interval ({why}) (gate {threshold})")
        elif entry["higher_is_better"] and ci[0] < threshold:
            failed.append(
                f"{name}: calibrated interval [{ci[0]:.4f}, {ci[1]:.4f}] reaches below {threshold}"
            )
        elif not entry["higher_is_better"] and ci[1] > threshold:
            failed.append(
                f"{name}: calibrated interval [{ci[0]:.4f}, {ci[1]:.4f}] reaches above "
                f"{threshold} (lower is better)"
            )
    return failed


def calibrate_command(
    results: Annotated[
        Path, typer.Argument(metavar="RESULTS", help="Results .jsonl written by a run.")
    ],
    labels: Annotated[
        Path,
        typer.Option(
            "--labels",
            "-l",
            metavar="FILE",
            help="Human labels, JSONL or CSV (docs/calibration.md).",
        ),
    ],
    as_json: Annotated[
        bool,
        typer.Option("--json", metavar="", help="Print one JSON object keyed by metric."),
    ] = False,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            metavar="METRIC=VALUE",
            help="Exit 1 when the calibrated 95% interval reaches below VALUE (above it for a "
            "lower-is-better metric); repeatable.",
        ),
    ] = None,
    target_width: Annotated[
        float | None,
        typer.Option(
            "--target-width",
            metavar="W",
            help="Say about how many more labels bring each metric's calibrated 95% interval "
            "to this width (upper minus lower, e.g. 0.05).",
        ),
    ] = None,
) -> None:
    """Agreement of the run's judge with human labels, its bias, and each labelled metric's
    mean from the judge, from the labels, and prediction-powered (PPI++), with 95% intervals."""
    try:
        gates = parse_thresholds(fail_under or [], "--fail-under")
        if target_width is not None and not 0.0 < target_width < float("inf"):
            raise ConfigError(f"--target-width must be a number > 0. Got {target_width!r}.")
        calibration = ragmeter.calibrate(results, labels, target_width=target_width)
    except RagmeterError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(calibration.as_dict(), indent=2, ensure_ascii=False))
    else:
        print_calibration(calibration.as_record(), console=out_console)
        for name, entry in calibration.as_dict().items():
            if entry.get("budget"):
                out_console.print(
                    f"budget: {budget_line(name, entry['budget'])}", highlight=False, markup=False
                )
    failed = check_calibrated_gates(calibration.as_record(), gates)
    if failed:
        for line in failed:
            err_console.print(f"FAIL {line}", highlight=False, markup=False)
        raise typer.Exit(EXIT_GATE)


def check_gate_option(gate: str, labels: Path | None) -> None:
    """``--gate`` is 'mean' or 'calibrated'; 'calibrated' needs ``--labels``."""
    if gate not in GATES:
        raise ConfigError(f"Unknown --gate {gate!r}. Choose 'mean' or 'calibrated'.")
    if gate == "calibrated" and labels is None:
        raise ConfigError("--gate calibrated gates on the calibrated interval: add --labels FILE.")


def register(app: typer.Typer) -> None:
    app.command("calibrate", epilog=CALIBRATE_EXAMPLES)(calibrate_command)
