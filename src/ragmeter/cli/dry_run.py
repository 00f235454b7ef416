"""``ragmeter evaluate --dry-run [--json]``: its options and the plan's printout
(:mod:`ragmeter.runner.dry_run` makes the plan)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:  # imported when a plan is printed: the CLI starts without it
    from ragmeter.runner.dry_run import DryRun

__all__ = ["DryRunOption", "JsonOption", "print_dry_run"]

DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        metavar="",
        help="Read the data and plan the run: rows, metrics run or skipped, judge calls and "
        "prompt tokens (cached / to make), cost and time. No judge or model call, no "
        "connection (docs/dry-run.md).",
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", metavar="", help="With --dry-run: print one JSON object.")
]


def print_dry_run(plan: DryRun, *, as_json: bool, console: Console) -> None:
    """The plan as one JSON object, or as lines for people."""
    from ragmeter.runner.dry_run import CALL_SECONDS, COMPLETION_TOKENS_PER_SECOND

    if as_json:
        typer.echo(json.dumps(plan.as_json()))
        return
    out = console.print
    rows = f"{plan.rows} row" + ("" if plan.rows == 1 else "s")
    if plan.reused:
        rows += f" to score ({plan.reused} kept from the results file by --resume)"
    out(f"Dry run: {rows}; nothing was sent.", markup=False)
    for name, what in plan.metrics.items():
        out(f"  {name}: {'runs' if what == 'run' else 'skipped, ' + what}", markup=False)
    calls, tokens = plan.judge_calls, plan.prompt_tokens
    how = "estimated" if plan.estimated_tokens else f"counted with {plan.tokenizer}"
    out(f"Judge calls: {calls['to_make']} to make, {calls['cached']} cached.", markup=False)
    for prompt, split in plan.calls_by_prompt().items():
        out(f"  {prompt}: {split['to_make']} to make, {split['cached']} cached", markup=False)
    out(
        f"Prompt tokens ({how}): {tokens['to_make']} to send, {tokens['cached']} cached; "
        f"completion tokens (estimated): {plan.completion_tokens['to_make']}.",
        markup=False,
    )
    cost = plan.cost
    out(
        "Cost: not priced (give --price-in and --price-out, per 1M tokens)."
        if cost is None
        else f"Cost of the calls to make: {cost:.4f} (at --price-in/--price-out).",
        markup=False,
    )
    out(
        f"Time: about {plan.seconds:.1f} s at --max-concurrency {plan.max_concurrency} "
        f"(assuming {CALL_SECONDS:g} s a call plus {COMPLETION_TOKENS_PER_SECOND:g} completion "
        "tokens a second; local models not counted).",
        markup=False,
    )
    if plan.note:
        out(f"Note: {escape(plan.note)}")
