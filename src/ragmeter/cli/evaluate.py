"""``ragmeter evaluate``: parse the options, call :func:`ragmeter.evaluate`, print the outcome.

The settings' options come from the table of settings (:func:`ragmeter.cli.options.
with_settings`); the errors of the call name the command's flags (:data:`EVALUATE_FLAGS`,
made from the same table). Before the call: the options that conflict, the ``--group-by``
field read from the first rows, the plugins, the gates (:mod:`ragmeter.cli.gates`); a dry run
stops there (:mod:`ragmeter.cli.dry_run`). The call runs on the engine ``--engine`` names
(``local``, or ``ray`` with ``--ray-address`` and ``--workers``); Ctrl-C and SIGTERM keep the
rows scored (:mod:`ragmeter.cli.interrupt`). After it: the summary
(:mod:`ragmeter.cli.summary`), the calibration, the gates.
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Annotated, Any

import typer

import ragmeter
from ragmeter.cli import calibrate as cal
from ragmeter.cli.dry_run import DryRunOption, JsonOption, print_dry_run
from ragmeter.cli.gates import (
    check_gates,
    check_gates_asked,
    parse_thresholds,
    print_gates,
    unusable_run,
)
from ragmeter.cli.interrupt import (
    continue_with,
    exit_code,
    interrupted_message,
    record_since,
    signals_as_interrupt,
)
from ragmeter.cli.options import PluginOption, flags_of, load_plugins, with_settings
from ragmeter.cli.output import EXIT_GATE, err_console, fail, out_console
from ragmeter.cli.summary import print_summary
from ragmeter.engines import RayEngine
from ragmeter.errors import ConfigError, RagmeterError, UnavailableError, param_names
from ragmeter.io.columns import ColumnMap, to_sample
from ragmeter.io.paths import is_stdout
from ragmeter.io.readers import open_rows
from ragmeter.report.groups import check_group_path
from ragmeter.result import RunResult
from ragmeter.settings import Settings, setting_flags
from ragmeter.types import RowResult

__all__ = ["EVALUATE_FLAGS", "register"]

#: The settings ``ragmeter evaluate`` takes as options: every one the table gives a flag.
SETTINGS = tuple(setting_flags())

#: How ``evaluate``'s errors name its parameters (and ``Settings``' fields) on the command
#: line: lower layers word them through ``ragmeter.errors.param``, the command passes this to
#: ``param_names`` around its calls. A setting without a flag keeps its Python name.
EVALUATE_FLAGS = {
    "data": "the input",
    "metrics": "--metrics",
    "data_path": "the input",
    "out": "--out",
    "report": "--report",
    "resume": "--resume",
    "column_map": "--column FIELD=COLUMN",
    "input_format": "--format",
    "local_engine": "--engine local",
    "ray_engine": "--engine ray",
    "num_workers": "--workers",
    "group_by": "--group-by",
    "risk_thresholds": "ragmeter report --risk-threshold",
    "labels": "--labels",
    **flags_of(SETTINGS),
}

EXAMPLES = """Examples:

  ragmeter evaluate data.jsonl -m faithfulness,mrr --out results.jsonl
  ragmeter evaluate data.csv -c contexts=pred.contexts -c answer=response
  ragmeter evaluate data.jsonl --judge openai:gpt-4o-mini --fail-under faithfulness=0.8
  ragmeter evaluate data.jsonl --out - -q | jq .scores
  ragmeter evaluate data.jsonl --report report.html --group-by metadata.category

'ragmeter metrics' lists the metric names and the fields each needs."""

# -- the options that are not settings ----------------------------------------------------

DataArgument = Annotated[
    Path, typer.Argument(metavar="DATA", help="JSONL, JSON, CSV or Parquet file.")
]
MetricsOption = Annotated[
    str | None,
    typer.Option(
        "--metrics",
        "-m",
        metavar="NAME,...",
        help="Comma-separated metric names (see 'ragmeter metrics'); default: every "
        "metric whose fields the data has.",
    ),
]
ColumnOption = Annotated[
    list[str] | None,
    typer.Option(
        "--column",
        "-c",
        metavar="FIELD=PATH",
        help="Where a field comes from: a column or a dotted path such as "
        "pred.contexts; repeatable.",
    ),
]
FormatOption = Annotated[
    str | None,
    typer.Option(
        "--format",
        metavar="FORMAT",
        help="Read another tool's input as it is: 'ragchecker' (checking_inputs.json) or "
        "'ragas' (EvaluationDataset JSONL/CSV); default: detected from the columns when "
        "they identify one.",
    ),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        metavar="FILE",
        help="Results JSONL (one line per row); '-' writes it to stdout.",
    ),
]
FailUnderOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-under",
        metavar="METRIC=VALUE",
        help="Exit 1 when the mean is below VALUE (above it for a "
        "lower-is-better metric, marked ↓); repeatable.",
    ),
]
ReportOption = Annotated[
    Path | None, typer.Option(metavar="FILE", help="Write an HTML report here.")
]
GroupByOption = Annotated[
    str | None,
    typer.Option(
        metavar="FIELD",
        help="--report: also show the scores by this row field, e.g. metadata.category.",
    ),
]
ResumeOption = Annotated[bool, typer.Option(metavar="", help="Skip rows already in --out.")]
ProgressOption = Annotated[
    bool | None, typer.Option("--progress/--no-progress", metavar="", help="Progress bar.")
]
QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", metavar="", help="No summary table, and no progress unless --progress."
    ),
]
EngineOption = Annotated[
    str,
    typer.Option(metavar="ENGINE", help="'local' (this process) or 'ray' (needs the ray extra)."),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        metavar="ADDRESS",
        help="Ray cluster to use: 'ray://HOST:PORT' or 'auto'. Default: start one.",
    ),
]
LabelsOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        help="Human labels (JSONL or CSV) to calibrate the judge with after the run: "
        "agreement, bias, PPI++ intervals (docs/calibration.md).",
    ),
]
GateOption = Annotated[
    str,
    typer.Option(
        metavar="WHAT",
        help="What --fail-under compares: 'mean' (the judge's mean) or 'calibrated' (the "
        "calibrated 95% interval's bound; needs --labels).",
    ),
]


@dataclass(frozen=True, slots=True)
class Asked:
    """What the command line asks of a run, besides its settings."""

    data: Path
    metrics: str | None
    plugins: list[str]
    column: list[str]
    input_format: str | None
    out: Path | None
    fail_under: list[str]
    report: Path | None
    group_by: str | None
    resume: bool
    progress: bool | None
    quiet: bool
    engine: str
    ray_address: str | None
    labels: Path | None
    gate: str
    dry_run: bool
    json_output: bool

    @property
    def to_stdout(self) -> bool:
        """Whether the results go to standard output (``--out -``)."""
        return is_stdout(self.out)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A run ready to start: its settings, its column map, its gates, and with ``--engine
    ray`` its number of scoring workers (``--workers``)."""

    settings: Settings
    columns: Any
    gates: dict[str, float]
    ray_workers: int | None = None


def register(app: typer.Typer) -> None:
    """Add the ``evaluate`` command to ``app``."""

    @app.command(epilog=EXAMPLES)
    @with_settings(SETTINGS)
    def evaluate(
        data: DataArgument,
        metrics: MetricsOption = None,
        plugin: PluginOption = None,
        column: ColumnOption = None,
        input_format: FormatOption = None,
        out: OutOption = None,
        fail_under: FailUnderOption = None,
        settings: dict[str, Any] | None = None,
        report: ReportOption = None,
        group_by: GroupByOption = None,
        resume: ResumeOption = False,
        progress: ProgressOption = None,
        quiet: QuietOption = False,
        engine: EngineOption = "local",
        ray_address: RayAddressOption = None,
        labels: LabelsOption = None,
        gate: GateOption = "mean",
        dry_run: DryRunOption = False,
        json_output: JsonOption = False,
    ) -> None:
        """Score DATA with the chosen metrics; print a summary; exit 1 when a gate fails."""
        asked = Asked(
            data=data,
            metrics=metrics,
            plugins=plugin or [],
            column=column or [],
            input_format=input_format,
            out=out,
            fail_under=fail_under or [],
            report=report,
            group_by=group_by,
            resume=resume,
            progress=progress,
            quiet=quiet,
            engine=engine,
            ray_address=ray_address,
            labels=labels,
            gate=gate,
            dry_run=dry_run,
            json_output=json_output,
        )
        run_command(asked, settings or {})


def run_command(asked: Asked, settings: dict[str, Any]) -> None:
    """Check, run and print: ``ragmeter evaluate`` from its parsed options."""
    begun = time.time()
    try:
        prepared = prepare(asked, settings)
        if asked.dry_run:
            _dry_run(asked, prepared)
            return
        result = _run(asked, prepared)
    except RagmeterError as exc:
        # A run that stopped after writing rows (a judge gone, the deadline, a full disk,
        # where its record may not say "stopped"): how to go on.
        wrote = not asked.to_stdout and record_since(asked.out, begun) is not None
        fail(
            f"{exc} {continue_with()}" if wrote and isinstance(exc, UnavailableError) else str(exc)
        )
    print_outcome(asked, prepared.gates, result)


def prepare(asked: Asked, values: dict[str, Any]) -> Prepared:
    """Everything checked before the first row is read for scoring: options that conflict,
    the ``--group-by`` field, the plugins, the settings and the gates."""
    refuse_conflicts(asked)
    columns = column_map(asked.column, asked.input_format)
    if asked.group_by is not None:
        with param_names(EVALUATE_FLAGS):
            check_group_by(asked.data, columns, asked.group_by)
    # What a plugin prints as it is imported stays out of results on stdout.
    with contextlib.redirect_stdout(sys.stderr) if asked.to_stdout else contextlib.nullcontext():
        load_plugins(asked.plugins)
    ray_workers = None
    if asked.engine != "local":  # --workers: Ray's scoring workers
        ray_workers, values = values.get("workers"), {**values, "workers": None}
    with param_names(EVALUATE_FLAGS):
        settings = Settings(**values)
    gates = parse_thresholds(asked.fail_under, "--fail-under", criteria=settings.criteria)
    check_gates_asked(gates, asked.metrics, settings.criteria)
    cal.check_gate_option(asked.gate, asked.labels)
    if asked.labels is not None and asked.to_stdout:
        raise ConfigError("--labels reads the results back: give --out a file, not '-'.")
    if asked.json_output and not asked.dry_run:
        raise ConfigError("--json prints the plan of --dry-run: add --dry-run.")
    return Prepared(settings, columns, gates, ray_workers)


def refuse_conflicts(asked: Asked) -> None:
    """Options that cannot go together, refused before anything is read."""
    if asked.to_stdout and (asked.resume or asked.engine != "local"):
        raise ConfigError(
            "--out - (standard output) works with the local engine and without --resume: "
            "give --out a file to resume a run or to run on Ray."
        )
    if asked.group_by is not None and asked.report is None:
        raise ConfigError("--group-by groups the report: add --report FILE.")


def column_map(column: list[str], input_format: str | None) -> Any:
    """What --column and --format give ``evaluate``'s ``column_map``."""
    if input_format is None:
        return column or None
    return ColumnMap.from_any(column or None, input_format=input_format)


def check_group_by(data: Path, column: Any, group_by: str) -> None:
    """Stop before scoring when the first rows have nothing at --group-by (a typo)."""
    cmap = ColumnMap.from_any(column)
    rows = []
    unread = None
    for row in islice(open_rows(data), 200):
        if row.data is not None:
            sample, problems = to_sample(row.data, cmap)
            if unread is None and "metadata" in problems:
                unread = f"The metadata of {row.where} cannot be read: {problems['metadata']}."
            rows.append(RowResult(row.index, sample.question_id, metadata=sample.metadata))
    check_group_path(group_by, rows, unread=unread)


def _dry_run(asked: Asked, prepared: Prepared) -> None:
    """Plan the run and print the plan; nothing is sent."""
    from ragmeter.runner.dry_run import plan_run

    with param_names(EVALUATE_FLAGS):
        planned = plan_run(
            asked.data,
            asked.metrics,
            column_map=prepared.columns,
            settings=prepared.settings,
            out=asked.out,
            resume=asked.resume,
        )
    print_dry_run(planned, as_json=asked.json_output, console=out_console)


def _run(asked: Asked, prepared: Prepared) -> RunResult:
    """The run, on the engine asked for; Ctrl-C and SIGTERM keep the rows scored."""
    started = time.time()
    try:
        with signals_as_interrupt() as received, param_names(EVALUATE_FLAGS):
            return ragmeter.evaluate(
                asked.data,
                asked.metrics,
                column_map=prepared.columns,
                settings=prepared.settings,
                out=sys.stdout if asked.to_stdout else asked.out,
                report=asked.report,
                group_by=asked.group_by,
                labels=asked.labels,
                progress=False if asked.quiet and asked.progress is None else asked.progress,
                resume=asked.resume,
                # With --out FILE rows stream to the file (flat memory); the report and the
                # calibration read them back.
                keep_rows=asked.out is None,
                engine=_engine(asked, prepared),
            )
    except KeyboardInterrupt:
        record = None if asked.to_stdout else record_since(asked.out, started)
        cached = prepared.settings.use_cache  # LLM replies and offline verdicts alike
        err_console.print(
            interrupted_message(asked.out, record, received, None, cached=cached),
            highlight=False,
            markup=False,
            soft_wrap=True,  # the command line stays one line to copy
        )
        raise typer.Exit(exit_code(received)) from None


def _engine(asked: Asked, prepared: Prepared) -> str | RayEngine:
    """``--engine``: "local", or Ray with ``--ray-address`` and ``--workers``."""
    if asked.engine == "ray":
        return RayEngine(address=asked.ray_address, num_workers=prepared.ray_workers)
    if asked.engine != "local":
        raise ConfigError(f"Unknown --engine {asked.engine!r}. Choose 'local' or 'ray'.")
    if asked.ray_address is not None:
        raise ConfigError("--ray-address needs --engine ray.")
    return "local"


def print_outcome(asked: Asked, gates: dict[str, float], result: RunResult) -> None:
    """The summary, where the results and the report are, the calibration and the gates;
    the exit code of a gate failed (1) or of a run that cannot be trusted (2)."""
    # With the results on stdout, everything else goes to stderr.
    console = err_console if asked.to_stdout else out_console
    calibration = result.info.get("calibration")
    if not asked.quiet:
        print_summary(result, console=console, keep=gates)
    if asked.out is not None and not asked.to_stdout:
        err_console.print(f"Results: {asked.out}", markup=False)
    if asked.report is not None:
        err_console.print(f"Report: {asked.report}", markup=False)
    if calibration is not None and not asked.quiet:
        cal.print_calibration(calibration, console=console)
    problem = unusable_run(result, gates)
    if problem is not None:
        fail(problem)
    if asked.gate == "calibrated":
        failed = cal.check_calibrated_gates(calibration, gates)
    else:
        failed = check_gates(result, gates)
    print_gates(result, gates, failed, means=asked.gate != "calibrated")
    if failed:
        raise typer.Exit(EXIT_GATE)
