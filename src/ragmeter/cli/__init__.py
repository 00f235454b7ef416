"""Command line: parse, call the API, print. The one place errors are worded for humans.

Exit codes: 0 success, 1 a quality gate failed (--fail-under) and nothing else, 2 bad input or
options, a judge that refused or went away (the run stops), rows that failed on the judge's or a
model's endpoint or on the judge's replies (the run ends; --resume retries them), or any other
error (always with a line starting "Error:").
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import sys
from typing import Annotated, Any

import typer
from rich.table import Table
from typer.core import TyperGroup

from ragmeter.cli import calibrate, label, metaeval, report
from ragmeter.cli import evaluate as evaluate_command
from ragmeter.cli.options import PluginOption, load_plugins
from ragmeter.cli.output import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    err_console,
    fail,
    out_console,
    print_error,
)
from ragmeter.errors import RagmeterError
from ragmeter.metrics.registry import all_specs
from ragmeter.result import spec_record
from ragmeter.runner.progress import quiet_third_party_bars

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


# The commands, in the order --help lists them; each defined beside the code it drives.
evaluate_command.register(app)
app.command("metrics")(list_metrics)
report.register(app)
metaeval.register(app)
calibrate.register(app)
label.register(app)


def main() -> None:
    # Other libraries' bars (model loading, GGUF conversion) are noise beside ragmeter's.
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
