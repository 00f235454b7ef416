"""The ``label`` command: ``register(app)`` adds it to a Typer application.

``ragmeter label RESULTS --sample N [--seed S] [--metric M] [--strategy uniform|uncertainty]
[--stratified] [--data FILE] [--target-width W] --out labels.html [--selection-out FILE]``
writes one self-contained page where a person labels a sample of the run's rows
(:mod:`ragmeter.report.labels.page`; its export is ``labels.jsonl``) and, with
``--selection-out``, the drawn rows as JSON lines for labelling in another tool.

Exit codes: 0 written, 2 bad input or options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.output import fail
from ragmeter.errors import RagmeterError, param_names

__all__ = ["register"]

#: How the labelling page's errors name its parameters on the command line.
LABEL_FLAGS = {
    "data": "--data",
    "out": "--out",
    "sample": "--sample",
    "metric": "--metric",
    "strategy": "--strategy",
    "stratified": "--stratified",
    "target_width": "--target-width",
    "selection_out": "--selection-out",
}

LABEL_EXAMPLES = """Examples:

  ragmeter label results.jsonl --sample 100 --out labels.html
  ragmeter label results.jsonl --sample 50 --metric context_relevance --seed 7 --out cr.html
  ragmeter label results.jsonl --sample 30 --stratified --out look.html
  ragmeter label results.jsonl --sample 100 --strategy uncertainty --out labels.html
  ragmeter label results.jsonl --sample 100 --seed 1 --selection-out rows.jsonl

Open the page in a browser, label (keys on the page), then press Export: it downloads
labels.jsonl."""


def label_command(
    results: Annotated[
        Path, typer.Argument(metavar="RESULTS", help="Results .jsonl written by a run.")
    ],
    sample: Annotated[int, typer.Option("--sample", min=1, metavar="N", help="Rows to label.")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", metavar="FILE", help="The HTML page to write.")
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", metavar="S", help="Seed of the random sample.")
    ] = 0,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            "-m",
            metavar="NAME",
            help="Metric to label (default faithfulness): a claim metric's rows are labelled "
            "claim by claim, any other metric with a score per row.",
        ),
    ] = None,
    stratified: Annotated[
        bool,
        typer.Option(
            "--stratified",
            metavar="",
            help="Draw evenly from score bands instead of uniformly: for looking only; its "
            "labels are marked stratified and never used for estimates.",
        ),
    ] = False,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            metavar="FILE",
            help="The input the run scored, for the question, answer and contexts (default: "
            "the input file the run record names, when it is still there unchanged).",
        ),
    ] = None,
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy",
            metavar="NAME",
            help="uniform (every row equally likely, N rows) or uncertainty (about N rows, "
            "more where the judge is unsure, each with its probability; calibrate weights by "
            "it).",
        ),
    ] = "uniform",
    target_width: Annotated[
        float | None,
        typer.Option(
            "--target-width",
            metavar="W",
            help="Show on the page how near its labels bring the interval to this width.",
        ),
    ] = None,
    selection_out: Annotated[
        Path | None,
        typer.Option(
            "--selection-out",
            metavar="FILE",
            help="Also write the drawn rows as JSON lines (id, probability), to label in "
            "another tool; add metric and value to each line and calibrate reads it.",
        ),
    ] = None,
) -> None:
    """Write a page where a person labels a random sample of a run's rows."""
    from ragmeter.report.labels.page import write_label_page

    if out is None and selection_out is None:
        fail("Give --out FILE (the labelling page) or --selection-out FILE (the drawn rows).")
    try:
        with param_names(LABEL_FLAGS):
            page = write_label_page(
                results,
                out,
                sample=sample,
                seed=seed,
                metric=metric,
                stratified=stratified,
                data=data,
                strategy=strategy,
                target_width=target_width,
                selection_out=selection_out,
            )
    except RagmeterError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"Cannot write {exc.filename or out}: {exc.strerror or exc}.")
    if page.missing_texts is not None:
        typer.echo(
            f"Warning: the page shows no question, answer or contexts: {page.missing_texts}. "
            "Give the input the run scored with --data FILE.",
            err=True,
        )
    payload = page.payload
    what = "claims" if payload["kind"] == "claims" else "rows to score"
    written = " and ".join(str(p) for p in (out, selection_out) if p is not None)
    typer.echo(
        f"Wrote {written}: {page.rows} rows ({page.items} {what}) of {payload['population']}, "
        f"{payload['selection']} sample, seed {payload['seed']}, metric {payload['metric']}."
    )


def register(app: typer.Typer) -> None:
    """Add ``label`` to ``app``."""
    app.command("label", epilog=LABEL_EXAMPLES)(label_command)
