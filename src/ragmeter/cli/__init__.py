"""Command line: parse, call the API, print. The one place errors are worded for humans.

Exit codes: 0 success, 1 a quality gate failed (--fail-under) and nothing else, 2 bad input or
options, a judge that refused or went away (the run stops), rows that failed on the judge's or a
model's endpoint or on the judge's replies (the run ends; --resume retries them), or any other
error (always with a line starting "Error:").
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from ragmeter.cli import verifier as nli
from ragmeter.cli.dry_run import CriteriaOption, DryRunOption, JsonOption, print_dry_run
from ragmeter.cli.interrupt import (
    continue_with,
    exit_code,
    interrupted_message,
    signals_as_interrupt,
)
from ragmeter.cli.output import (
    EXIT_BROKEN_PIPE,
    EXIT_GATE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    err_console,
    fail,
    out_console,
    parse_assignments,
    print_error,
)
from ragmeter.errors import ConfigError, RagmeterError, UnavailableError, param_names
from ragmeter.settings import DEFAULT_DEADLINE

log = logging.getLogger("ragmeter")


class _Commands(TyperGroup):
    """ragmeter's commands, ended the same way whichever runs: Ctrl-C prints "Interrupted."
    (exit 130); a reader that closed standard output (``--out - | head``) stops the command
    with a message (exit 141, as a shell reports SIGPIPE), never the failed-gate code 1."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            err_console.print("Interrupted.", highlight=False)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            # Whatever is still buffered for stdout goes nowhere, also at exit.
            with contextlib.suppress(OSError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            err_console.print(
                "Stopped: standard output was closed (broken pipe) before the command ended; "
                "what it wrote there is incomplete. Write to a file with --out FILE to keep "
                "everything.",
                highlight=False,
                markup=False,
            )
            raise typer.Exit(EXIT_BROKEN_PIPE) from None

    # typer writes a flag's type beside it in --help ("--help <bool>"): a flag takes no value.
    # Options and commands are read by their attributes, not their classes: typer 0.29 runs
    # on its own copy of click (typer._click), older typers on click, which is not a
    # dependency of ragmeter (issue 36).
    def get_help_option(self, ctx: typer.Context) -> Any:
        return _without_type(super().get_help_option(ctx))

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _flags_without_type(command, ctx)
        return command


def _without_type(option: Any) -> Any:
    if option is not None and getattr(option, "is_flag", False) and option.metavar is None:
        option.metavar = ""
    return option


def _flags_without_type(command: Any, ctx: typer.Context) -> None:
    """No "<bool>" beside ``command``'s flags and help option in --help (nor its
    subcommands')."""
    _without_type(command.get_help_option(ctx))
    for param in command.params:
        _without_type(param)
    if callable(getattr(command, "list_commands", None)):
        for name in command.list_commands(ctx):
            if (sub := command.get_command(ctx, name)) is not None:
                _flags_without_type(sub, ctx)


app = typer.Typer(
    cls=_Commands,
    name="ragmeter",
    help="Evaluate retrieval-augmented generation: score, explain, aggregate, gate.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


#: How ``evaluate``'s errors name its parameters (and ``Settings``' fields) on the command
#: line: lower layers word them through ``ragmeter.errors.param``, the command passes this to
#: ``param_names`` around its calls. A setting without a flag keeps its Python name.
EVALUATE_FLAGS = {
    "data": "the input",
    "metrics": "--metrics",
    "data_path": "the input",
    "out": "--out",
    "report": "--report",
    "cache_path": "--cache",
    "use_cache": "--no-cache",
    "resume": "--resume",
    "column_map": "--column FIELD=COLUMN",
    "input_format": "--format",
    "local_engine": "--engine local",
    "ray_engine": "--engine ray",
    "num_workers": "--workers",
    "group_by": "--group-by",
    "risk_thresholds": "ragmeter report --risk-threshold",
    "labels": "--labels",
    "criteria": "--criteria",
    "judge": "--judge",
    "verifier": "--verifier",
    "verifier_label": "--verifier-label",
    "verifier_threshold": "--verifier-threshold",
    "device": "--device",
    "allow_download": "--allow-download",
    "base_url": "--base-url",
    "max_concurrency": "--max-concurrency",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "judge_id": "--judge-id",
    "max_reply_bytes": "--max-reply-bytes",
    "max_claims": "--max-claims",
    "max_no_reply": "--max-no-reply",
    "repeats": "--repeats",
    "price_in": "--price-in",
    "price_out": "--price-out",
    "embedder": "--embedder",
    "relevance_model": "--relevance-model",
    "relevance_dtype": "--relevance-dtype",
    "reward_model": "--reward-model",
    "batch_size": "--batch-size",
    "deadline": "--deadline",
    "workers": "--workers",
}


PluginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--plugin",
        metavar="MODULE",
        help="Import MODULE (package.module, importable from the working directory, or a .py "
        "file) for the metrics it defines with @ragmeter.metric; repeatable.",
    ),
]


def load_plugins(modules: list[str] | None) -> None:
    """Import each ``--plugin`` module, defining its Python metrics."""
    from ragmeter.metrics.custom.plugins import load_plugin

    for module in modules or ():
        load_plugin(module)


def parse_thresholds(
    specs: list[str], option: str, *, criteria: Collection[Any] = ()
) -> dict[str, float]:
    """Parse ``metric=value`` pairs given to a gate option (``criteria``: the run's own
    metrics, scored in [0, 1])."""
    from ragmeter.metrics.criteria import specs_for
    from ragmeter.metrics.registry import get_spec

    out: dict[str, float] = {}
    own = {spec.name: spec for spec in specs_for(criteria)}
    for name, raw in parse_assignments(specs, option=option, example="faithfulness=0.8").items():
        metric = own[name] if name in own else get_spec(name)
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"Bad {option} {name}={raw}: {raw!r} is not a number.") from None
        if not metric.lower <= value <= metric.upper:
            raise ConfigError(
                f"Bad {option} {name}={raw}: {name} scores lie in [{metric.lower:g}, "
                f"{metric.upper:g}], so a gate at {raw} can never be met or never fail."
            )
        out[name] = value
    return out


def _print_version(value: bool) -> None:
    if value:
        import ragmeter

        typer.echo(f"ragmeter {ragmeter.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            metavar="",
            help="Print ragmeter's version and exit.",
        ),
    ] = False,
) -> None:
    """Evaluate retrieval-augmented generation: score, explain, aggregate, gate."""


EVALUATE_EXAMPLES = """Examples:

  ragmeter evaluate data.jsonl -m faithfulness,mrr --out results.jsonl
  ragmeter evaluate data.csv -c contexts=pred.contexts -c answer=response
  ragmeter evaluate data.jsonl --judge openai:gpt-4o-mini --fail-under faithfulness=0.8
  ragmeter evaluate data.jsonl --out - -q | jq .scores
  ragmeter evaluate data.jsonl --report report.html --group-by metadata.category

'ragmeter metrics' lists the metric names and the fields each needs."""


@app.command(epilog=EVALUATE_EXAMPLES)
def evaluate(
    data: Annotated[Path, typer.Argument(metavar="DATA", help="JSONL, JSON, CSV or Parquet file.")],
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            "-m",
            metavar="NAME,...",
            help="Comma-separated metric names (see 'ragmeter metrics'); default: every "
            "metric whose fields the data has.",
        ),
    ] = None,
    plugin: PluginOption = None,
    criteria: CriteriaOption = None,
    column: Annotated[
        list[str] | None,
        typer.Option(
            "--column",
            "-c",
            metavar="FIELD=PATH",
            help="Where a field comes from: a column or a dotted path such as "
            "pred.contexts; repeatable.",
        ),
    ] = None,
    input_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="Read another tool's input as it is: 'ragchecker' (checking_inputs.json) or "
            "'ragas' (EvaluationDataset JSONL/CSV); default: detected from the columns when "
            "they identify one.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Results JSONL (one line per row); '-' writes it to stdout.",
        ),
    ] = None,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            metavar="METRIC=VALUE",
            help="Exit 1 when the mean is below VALUE (above it for a "
            "lower-is-better metric, marked ↓); repeatable.",
        ),
    ] = None,
    judge: Annotated[
        str,
        typer.Option(metavar="JUDGE", help="'offline' (no key needed) or 'openai:MODEL'."),
    ] = "offline",
    verifier: nli.VerifierOption = "judge",
    verifier_label: nli.VerifierLabelOption = None,
    verifier_threshold: nli.VerifierThresholdOption = None,
    device: nli.DeviceOption = None,
    allow_download: nli.AllowDownloadOption = False,
    base_url: Annotated[
        str | None,
        typer.Option(metavar="URL", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)."),
    ] = None,
    max_concurrency: Annotated[
        int, typer.Option(metavar="N", help="Judge calls in flight at once.")
    ] = 16,
    timeout: Annotated[
        float,
        typer.Option(metavar="SECONDS", help="Seconds a judge call may take in all (each try)."),
    ] = 60.0,
    max_retries: Annotated[
        int,
        typer.Option(metavar="N", help="Retries of a judge call that timed out or got 429 / 5xx."),
    ] = 5,
    judge_id: Annotated[
        str | None,
        typer.Option(
            metavar="ID",
            help="Who answers behind --judge openai:MODEL, for the cache (default: the model "
            "name); set it when servers serve different weights under one name.",
        ),
    ] = None,
    max_reply_bytes: Annotated[
        int,
        typer.Option(metavar="BYTES", help="Largest judge reply accepted; a row past it fails."),
    ] = 1_000_000,
    max_claims: Annotated[
        int,
        typer.Option(
            metavar="N", help="Most claims a judge may find in one answer; a row past it fails."
        ),
    ] = 1000,
    max_no_reply: Annotated[
        int,
        typer.Option(
            metavar="N",
            help="Stop the run after N requests in a row got no reply at all (timeouts, dropped "
            "connections), from the judge or the embedder; 0: never.",
        ),
    ] = 10,
    repeats: Annotated[
        int,
        typer.Option(
            metavar="N",
            help="Ask an LLM judge N times per row (each repeat cached apart; at most 100): "
            "scores are the mean, and the summary says how much the judge disagrees with itself.",
        ),
    ] = 1,
    cache: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Judge cache file (SQLite).")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", metavar="", help="Do not read or write the cache.")
    ] = False,
    price_in: Annotated[
        float | None, typer.Option(metavar="PRICE", help="Price per 1M prompt tokens.")
    ] = None,
    price_out: Annotated[
        float | None, typer.Option(metavar="PRICE", help="Price per 1M completion tokens.")
    ] = None,
    embedder: Annotated[
        str,
        typer.Option(
            metavar="EMBEDDER",
            help="'offline', a sentence-transformers name/path, or 'openai:MODEL'.",
        ),
    ] = "offline",
    relevance_model: Annotated[
        str,
        typer.Option(
            metavar="MODEL", help="Context relevance LM: 'offline' or a local model path."
        ),
    ] = "offline",
    relevance_dtype: Annotated[
        str,
        typer.Option(
            metavar="DTYPE",
            help="Context relevance numerics: 'auto' (int8 for a GGUF model on onnxruntime, "
            "the default: faster and smaller, its agreement with float32 in docs/speed.md; "
            "for a transformers model on torch, bfloat16 on CPUs with native bfloat16, else "
            "float32), 'float32' (Unitxt's), 'bfloat16' (torch only) or 'int8' (onnxruntime "
            "only).",
        ),
    ] = "auto",
    reward_model: Annotated[
        str | None, typer.Option(metavar="PATH", help="Reward model path for answer_reward.")
    ] = None,
    batch_size: Annotated[int, typer.Option(metavar="N", help="Rows scored per batch.")] = 256,
    deadline: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            help="Stop the run after this long, keeping the rows scored (--resume scores the "
            "rest); 0: no deadline. Default: 6 hours.",
        ),
    ] = DEFAULT_DEADLINE,
    report: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write an HTML report here.")
    ] = None,
    group_by: Annotated[
        str | None,
        typer.Option(
            metavar="FIELD",
            help="--report: also show the scores by this row field, e.g. metadata.category.",
        ),
    ] = None,
    resume: Annotated[bool, typer.Option(metavar="", help="Skip rows already in --out.")] = False,
    progress: Annotated[
        bool | None, typer.Option("--progress/--no-progress", metavar="", help="Progress bar.")
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", metavar="", help="No summary table, and no progress unless --progress."
        ),
    ] = False,
    engine: Annotated[
        str,
        typer.Option(
            metavar="ENGINE", help="'local' (this process) or 'ray' (needs the ray extra)."
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            metavar="ADDRESS",
            help="Ray cluster to use: 'ray://HOST:PORT' or 'auto'. Default: start one.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Cores to use (default: every core): the local models' threads and the offline "
            "judge's; with --engine ray, Ray scoring workers (they share --max-concurrency).",
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Human labels (JSONL or CSV) to calibrate the judge with after the run: "
            "agreement, bias, PPI++ intervals (docs/calibration.md).",
        ),
    ] = None,
    gate: Annotated[
        str,
        typer.Option(
            metavar="WHAT",
            help="What --fail-under compares: 'mean' (the judge's mean) or 'calibrated' (the "
            "calibrated 95% interval's bound; needs --labels).",
        ),
    ] = "mean",
    dry_run: DryRunOption = False,
    json_output: JsonOption = False,
) -> None:
    """Score DATA with the chosen metrics; print a summary; exit 1 when a gate fails."""
    import ragmeter
    from ragmeter.config.criteria import load_criteria
    from ragmeter.io.paths import is_stdout
    from ragmeter.result import sidecar_path
    from ragmeter.settings import Settings

    to_stdout = is_stdout(out)
    begun = time.time()
    try:
        if to_stdout and (resume or engine != "local"):
            raise ConfigError(
                "--out - (standard output) works with the local engine and without --resume: "
                "give --out a file to resume a run or to run on Ray."
            )
        columns = _column_map(column, input_format)
        if group_by is not None:
            if report is None:
                raise ConfigError("--group-by groups the report: add --report FILE.")
            with param_names(EVALUATE_FLAGS):
                _check_group_by(data, columns, group_by)
        # What a plugin prints as it is imported stays out of results on stdout.
        with contextlib.redirect_stdout(sys.stderr) if to_stdout else contextlib.nullcontext():
            load_plugins(plugin)
        own = load_criteria(criteria) if criteria is not None else ()
        gates = parse_thresholds(fail_under or [], "--fail-under", criteria=own)
        check_gates_asked(gates, metrics, own)
        from ragmeter.cli import calibrate as cal

        cal.check_gate_option(gate, labels)
        if labels is not None and to_stdout:
            raise ConfigError("--labels reads the results back: give --out a file, not '-'.")
        with param_names(EVALUATE_FLAGS):
            settings = Settings(
                judge=judge,
                **nli.verifier_settings(
                    verifier, verifier_label, verifier_threshold, device, allow_download
                ),
                base_url=base_url,
                embedder=embedder,
                relevance_model=relevance_model,
                relevance_dtype=relevance_dtype,
                reward_model=reward_model,
                max_concurrency=max_concurrency,
                timeout=timeout,
                max_retries=max_retries,
                judge_id=judge_id,
                max_reply_bytes=max_reply_bytes,
                max_claims=max_claims,
                max_no_reply=max_no_reply,
                repeats=repeats,
                cache_path=str(cache) if cache else None,
                use_cache=not no_cache,
                price_in=price_in,
                price_out=price_out,
                batch_size=batch_size,
                workers=workers if engine == "local" else None,
                deadline=deadline or None,
                criteria=own,
            )
        if json_output and not dry_run:
            raise ConfigError("--json prints the plan of --dry-run: add --dry-run.")
        if dry_run:
            from ragmeter.runner.dry_run import plan_run

            with param_names(EVALUATE_FLAGS):
                planned = plan_run(
                    data, metrics, column_map=columns, settings=settings, out=out, resume=resume
                )
            print_dry_run(planned, as_json=json_output, console=out_console)
            return
        if engine == "ray":
            from contextlib import nullcontext

            from ragmeter.engines import run_ray
            from ragmeter.io.labels import read_labels
            from ragmeter.io.paths import results_lock

            label_set = read_labels(labels) if labels is not None else None  # before any work
            lock = results_lock(out, record=sidecar_path(out)) if out is not None else None
            with param_names(EVALUATE_FLAGS), lock or nullcontext():
                result = run_ray(
                    data,
                    metrics,
                    column_map=columns,
                    settings=settings,
                    out=out,
                    address=ray_address,
                    num_workers=workers,
                    resume=resume,
                    keep_rows=out is None,
                    progress=progress,
                    outputs={"report": report},
                    inputs={"labels": labels},
                )
            with param_names(EVALUATE_FLAGS):
                ragmeter.finish_run(result, out, report=report, group_by=group_by, labels=label_set)
        elif engine == "local":
            if ray_address is not None:
                raise ConfigError("--ray-address needs --engine ray.")
            started = time.time()
            try:
                with signals_as_interrupt() as received, param_names(EVALUATE_FLAGS):
                    result = ragmeter.evaluate(
                        data,
                        metrics,
                        column_map=columns,
                        settings=settings,
                        out=sys.stdout if to_stdout else out,
                        report=report,
                        group_by=group_by,
                        labels=labels,
                        progress=False if quiet and progress is None else progress,
                        resume=resume,
                        # With --out FILE rows stream to the file (flat memory); the report
                        # and the calibration read them back.
                        keep_rows=out is None,
                    )
            except KeyboardInterrupt:
                record = None if to_stdout else _record_since(out, started)
                cached = not no_cache  # LLM replies and offline verdicts alike
                err_console.print(
                    interrupted_message(out, record, received, None, cached=cached),
                    highlight=False,
                    markup=False,
                    soft_wrap=True,  # the command line stays one line to copy
                )
                raise typer.Exit(exit_code(received)) from None
        else:
            raise ConfigError(f"Unknown --engine {engine!r}. Choose 'local' or 'ray'.")
        calibration = result.info.get("calibration")
    except RagmeterError as exc:
        # A run that stopped after writing rows (a judge gone, the deadline, a full disk,
        # where its record may not say "stopped"): how to go on.
        wrote = not to_stdout and _record_since(out, begun) is not None
        fail(
            f"{exc} {continue_with()}" if wrote and isinstance(exc, UnavailableError) else str(exc)
        )
        return
    if not quiet:
        # With the results on stdout, everything else goes to stderr.
        print_summary(result, console=err_console if to_stdout else out_console, keep=gates)
    if out is not None and not to_stdout:
        err_console.print(f"Results: {out}", markup=False)
    if report is not None:
        err_console.print(f"Report: {report}", markup=False)
    if calibration is not None and not quiet:
        cal.print_calibration(calibration, console=err_console if to_stdout else out_console)
    problem = unusable_run(result, gates)
    if problem is not None:
        fail(problem)
        return
    if gate == "calibrated":
        failed = cal.check_calibrated_gates(calibration, gates)
    else:
        failed = check_gates(result, gates)
    if failed:
        for line in failed:
            err_console.print(f"[bold red]FAIL[/] {escape(line)}", highlight=False)
        raise typer.Exit(EXIT_GATE)
    if gates:
        line = passed_line(result, gates, with_means=gate != "calibrated")
        err_console.print(f"[bold green]PASS[/] {escape(line)}", highlight=False)


def _column_map(column: list[str] | None, input_format: str | None) -> Any:
    """What --column and --format give ``evaluate``'s ``column_map``."""
    if input_format is None:
        return column or None
    from ragmeter.io.columns import ColumnMap

    return ColumnMap.from_any(column or None, input_format=input_format)


def _record_since(out: Path | None, started: float) -> dict[str, Any] | None:
    """The run record of ``out`` when this command wrote it (since ``started``), else None."""
    from ragmeter.result import read_sidecar, sidecar_path

    record = None if out is None else sidecar_path(out)
    if record is None or not record.exists() or record.stat().st_mtime < started - 1:
        return None
    with contextlib.suppress(RagmeterError):
        return read_sidecar(out)
    return None


def _check_group_by(data: Path, column: Any, group_by: str) -> None:
    """Stop before scoring when the first rows have nothing at --group-by (a typo)."""
    from itertools import islice

    from ragmeter.io.columns import ColumnMap, to_sample
    from ragmeter.io.readers import open_rows
    from ragmeter.report.load import ReportRow, check_group_path

    cmap = ColumnMap.from_any(column)
    rows = []
    unread = None
    for row in islice(open_rows(data), 200):
        if row.data is not None:
            sample, problems = to_sample(row.data, cmap)
            if unread is None and "metadata" in problems:
                unread = f"The metadata of {row.where} cannot be read: {problems['metadata']}."
            rows.append(ReportRow(row.index, sample.question_id, {}, metadata=sample.metadata))
    check_group_path(group_by, rows, unread=unread)


def check_gates_asked(gates: dict[str, float], metrics: str | None, criteria: Any) -> None:
    """Refuse, before any row is scored, a gate on a metric that ``--metrics`` leaves out
    (the run would score every row and then fail on the option)."""
    from ragmeter.metrics.criteria import specs_for

    if metrics is None:
        return
    named = [m.strip() for m in metrics.split(",") if m.strip()]
    asked = {*named, *(spec.name for spec in specs_for(criteria))}
    missing = [name for name in gates if name not in asked]
    if missing:
        them = "it" if len(missing) == 1 else "them"
        raise ConfigError(
            f"--fail-under names {', '.join(missing)}, which --metrics does not ask for "
            f"({', '.join(named)}). Add {them} to --metrics "
            f"(-m {','.join([*named, *missing])}) or drop the gate."
        )


def unusable_run(result: Any, gates: dict[str, float]) -> str | None:
    """Why the run's outcome cannot be trusted as a pass (exit 2), or None.

    Every row failing on every metric means bad input or a bad column mapping, not a
    score; a gate on a metric the run did not compute is a bad option; a score that failed on
    the judge's or a model's endpoint (a timeout, HTTP 5xx, 429 after every retry), or on the
    judge's reply (invalid twice, a criterion without a verdict), leaves the run incomplete.
    """
    missing = [name for name in gates if name not in result.summary]
    if missing:
        skipped = result.info.get("skipped") or {}
        why = "; ".join(f"{name}: {skipped[name]}" for name in missing if name in skipped)
        return (
            f"--fail-under names {', '.join(missing)}, which this run did not compute"
            + (f" ({why})" if why else "")
            + ". Add it to --metrics or map the columns it needs with --column."
        )
    causes = result.info.get("failure_causes") or {}
    infrastructure, judged = causes.get("infrastructure", 0), causes.get("judge", 0)
    if infrastructure:
        first = result.info.get("first_infrastructure_failure")
        where = f" First: row {first[0]} {first[1]}: {first[2]}" if first else ""
        return (
            f"{infrastructure} score{'s' if infrastructure != 1 else ''} failed on the judge's or "
            f"a model's endpoint, not on the data, so the run is incomplete.{where} Rerun with "
            "the same --out and --resume: only the failed rows are scored again."
        )
    if judged:  # the same rule: not the data's failure, and a resumed run asks again
        first = result.info.get("first_judge_failure")
        where = f" First: row {first[0]} {first[1]}: {first[2]}" if first else ""
        return (
            f"{judged} score{'s' if judged != 1 else ''} failed on the judge's replies (invalid "
            f"after the corrective retry), not on the data, so the run is incomplete.{where} "
            "Rerun with the same --out and --resume: only the failed rows are asked again (a "
            "judge that keeps failing them needs another model)."
        )
    summaries = list(result.summary.values())
    if summaries and all(s.count == 0 and s.undefined == 0 and s.failed > 0 for s in summaries):
        failures = first_failures(result)
        first = (
            f" First: row {failures[0][0]} {failures[0][1]}: {failures[0][2]}" if failures else ""
        )
        return f"Every row failed on every metric; nothing was scored.{first}"
    return None


def first_failures(result: Any) -> list[tuple[Any, ...]]:
    """(row, metric, message) of the run's failures; rows streamed to --out are not kept in
    memory, so then the first ones the run recorded."""
    return result.failures() or [tuple(f) for f in result.info.get("first_failures", ())]


def check_gates(result: Any, gates: dict[str, float]) -> list[str]:
    """Messages for every gate the run fails; a metric with no defined score fails."""
    failed = []
    for name, threshold in gates.items():
        summary = result.summary.get(name)
        if summary is None:
            failed.append(f"{name}: not computed in this run (gate {threshold})")
            continue
        spec = result.specs[name]
        mean = summary.mean
        if mean is None:
            failed.append(f"{name}: no defined score (gate {threshold})")
        elif spec.higher_is_better and mean < threshold:
            failed.append(f"{name}: mean {mean:.4f} < {threshold}")
        elif not spec.higher_is_better and mean > threshold:
            failed.append(f"{name}: mean {mean:.4f} > {threshold} (lower is better)")
    return failed


def passed_line(result: Any, gates: dict[str, float], *, with_means: bool = True) -> str:
    """One line for gates that all passed (after "PASS"): each gate, with the run's mean
    when asked."""
    parts = []
    for name, threshold in gates.items():
        spec, summary = result.specs.get(name), result.summary.get(name)
        op = ">=" if spec is None or spec.higher_is_better else "<="
        mean = summary.mean if with_means and summary is not None else None
        parts.append(f"{name}: {'' if mean is None else f'mean {mean:.4f} '}{op} {threshold}")
    return "; ".join(parts)


def print_summary(
    result: Any, *, console: Console | None = None, keep: Collection[str] = ()
) -> None:
    """The summary table on ``console`` (stdout by default), metrics grouped by family and
    a long run's tail folded (``keep``: metrics never folded, such as gated ones); notes on
    stderr."""
    from ragmeter.cli.summary_table import judge_line, summary_table
    from ragmeter.io.redact import redact

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
    from ragmeter.models.entities import spacy_unavailable

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


@app.command("metrics")
def list_metrics(
    plugin: PluginOption = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            metavar="",
            help="JSON: name, family, needs, optional, direction, range, description (a list "
            "on a terminal; piped, one object per line).",
        ),
    ] = False,
) -> None:
    """List every metric with the fields it needs and its direction.

    On a terminal a table; piped, one tab-separated line per metric (full names, nothing cut).
    """
    import json

    from ragmeter.metrics.registry import all_specs
    from ragmeter.result import spec_record

    try:
        load_plugins(plugin)
    except RagmeterError as exc:
        fail(str(exc))
    specs = all_specs().values()
    if as_json:
        records = [
            {
                "name": spec.name,
                **spec_record(spec),
                "optional": list(spec.optional),
                "needs_judge": spec.needs_judge,
            }
            for spec in specs
        ]
        if out_console.is_terminal:
            typer.echo(json.dumps(records, indent=2, ensure_ascii=False))
        else:  # piped: one object per line, for jq and line-based tools
            for record in records:
                typer.echo(json.dumps(record, ensure_ascii=False))
        return
    rows = [
        (
            spec.name,
            spec.family,
            ", ".join(spec.requires),
            "↑" if spec.higher_is_better else "↓",
            spec.description,
        )
        for spec in specs
    ]
    header = ("metric", "family", "needs", "dir", "description")
    if not out_console.is_terminal:
        for line in (header, *rows):
            typer.echo("\t".join(line))
        return
    table = Table(title="ragmeter metrics")
    for col in header:
        table.add_column(col, no_wrap=col in ("metric", "dir"))
    for row in rows:
        table.add_row(*row)
    out_console.print(table)


def _register_commands() -> None:
    """Commands defined beside the code they drive (reports, meta-evaluation, labels)."""
    from ragmeter.cli.calibrate import register as register_calibrate
    from ragmeter.cli.label import register as register_label
    from ragmeter.cli.metaeval import register as register_metaeval
    from ragmeter.cli.report import register as register_report

    register_report(app)
    register_metaeval(app)
    register_calibrate(app)
    register_label(app)


_register_commands()


def main() -> None:
    # Other libraries' bars (model loading, GGUF conversion) are noise beside ragmeter's.
    from ragmeter.runner.progress import quiet_third_party_bars

    quiet_third_party_bars()
    logging.basicConfig(
        level=os.environ.get("RAGMETER_LOG", "WARNING"), format="%(levelname)s %(message)s"
    )
    try:
        app()
    except RagmeterError as exc:  # raised from a command without its own handler
        print_error(str(exc))
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:  # before a command runs (a command's own: _Commands)
        err_console.print("Interrupted.")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # a bug, or trouble no check foresaw: never the gate code 1
        log.debug("Unexpected error", exc_info=True)
        print_error(_unexpected(exc))
        sys.exit(EXIT_USAGE)


def _unexpected(exc: BaseException) -> str:
    """An unexpected error, worded for the terminal (no traceback; RAGMETER_LOG shows it)."""
    detail = str(exc) or "(no message)"
    return (
        f"{type(exc).__name__}: {detail}. This is unexpected; set RAGMETER_LOG=DEBUG to see "
        "where it happened, and please report it."
    )


if __name__ == "__main__":
    main()
