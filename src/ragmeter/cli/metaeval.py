"""The ``meta-eval`` command: ``register(app)`` adds it to a Typer application.

``ragmeter meta-eval SUITE [--judge J] [--verifier V] [--metrics a,b] [--limit N] [--out DIR]
[--data DIR]`` prints the suite's Markdown table and, with ``--out``, writes ``SUITE.md`` and
``SUITE.json`` there. ``SUITE`` is one of :data:`ragmeter.metaeval.SUITES`, ``all`` (each of
them in turn), or ``lfqa`` (:mod:`ragmeter.metaeval.lfqa`; with ``--judge openai:MODEL`` or
``--verifier nli:PATH`` it scores that judge's or verifier's faithfulness sentence by
sentence). ``--data DIR`` (or ``$RAGMETER_SHARED_DATA``) is the folder of public data the
suites read (:data:`ragmeter.metaeval.common.DATA_LAYOUT`); nothing is assumed about where
ragmeter runs from. ``--verifier`` and its options are
``ragmeter evaluate``'s: any verifier is measured the same way.

Exit codes: 0 done, 1 an exactness suite (``trec``, ``unitxt``) found a disagreement, 2 bad
input or options.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.cli.options import flags_of, with_settings
from ragmeter.cli.output import EXIT_GATE, fail
from ragmeter.errors import ConfigError, RagmeterError, param_names
from ragmeter.settings import Settings

#: The settings meta-eval takes as options as ``evaluate`` does (the table of settings).
VERIFIER_SETTINGS = ("verifier", "verifier_label", "verifier_threshold", "device", "allow_download")

#: How meta-eval's errors name its parameters on the command line.
METAEVAL_FLAGS = {
    "data_dir": "--data DIR",
    "judge": "--judge",
    "base_url": "--base-url",
    "embedder": "--embedder",
    **flags_of(VERIFIER_SETTINGS),
}


def _run_lfqa(
    judge: str,
    metrics: str | None,
    limit: int | None,
    out: Path | None,
    settings: Settings,
    data: Path | None = None,
) -> int:
    """The ``lfqa`` suite (:mod:`ragmeter.metaeval.lfqa`): print its table; with ``out``,
    write ``lfqa.md`` and ``lfqa.json`` there."""
    if metrics:
        raise ConfigError("The lfqa suite measures a fixed set of metrics; drop --metrics.")
    from ragmeter.metaeval import lfqa
    from ragmeter.metaeval.common import shared_data_dir

    answers = lfqa.load_answers(shared_data_dir(data) / lfqa.FOLDER)
    answers = lfqa.per_system_limit(answers, limit)
    started = time.perf_counter()
    report = lfqa.run(answers, judge=judge, settings=settings, log=lambda _: None)
    report.update(split="all", limit=limit, total_seconds=time.perf_counter() - started)
    text = f"{lfqa.title('all', len(answers))}\n\n{lfqa.markdown(report)}\n"
    typer.echo(text, nl=False)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "lfqa.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
        (out / "lfqa.md").write_text(text, encoding="utf-8")
    return 0


def register(app: typer.Typer) -> None:
    """Add the ``meta-eval`` command to ``app``."""

    @app.command("meta-eval")
    @with_settings(VERIFIER_SETTINGS, into="verifying")
    def meta_eval(
        suite: Annotated[
            str,
            typer.Argument(
                help="ragchecker, msmarco, wikieval, trec, unitxt, all (these five), or lfqa."
            ),
        ],
        judge: Annotated[
            str, typer.Option(help="'offline' (default) or 'openai:MODEL'.")
        ] = "offline",
        metrics: Annotated[
            str | None,
            typer.Option("--metrics", "-m", help="Comma-separated metrics (default: the suite's)."),
        ] = None,
        limit: Annotated[
            int | None, typer.Option(min=1, help="Use only the first N items (quick runs).")
        ] = None,
        out: Annotated[
            Path | None, typer.Option("--out", "-o", help="Write SUITE.md and SUITE.json here.")
        ] = None,
        data: Annotated[
            Path | None,
            typer.Option(
                help="The meta-evaluation data folder (default $RAGMETER_SHARED_DATA); "
                "its layout is in the README, 'Meta-evaluation data'."
            ),
        ] = None,
        base_url: Annotated[
            str | None, typer.Option(help="OpenAI-compatible endpoint for --judge openai:MODEL.")
        ] = None,
        embedder: Annotated[
            str, typer.Option(help="Embeddings: 'offline' (MiniLM ONNX) or a model name/path.")
        ] = "offline",
        verifying: dict[str, Any] | None = None,
    ) -> None:
        """Measure metrics against human judgments and reference tools (a suite of public data)."""
        from ragmeter.metaeval import SUITES, run_suite
        from ragmeter.metaeval.common import SuiteOptions

        try:
            with param_names(METAEVAL_FLAGS):
                settings = Settings(base_url=base_url, embedder=embedder, **(verifying or {}))
            if suite == "lfqa":
                with param_names(METAEVAL_FLAGS):
                    code = _run_lfqa(judge, metrics, limit, out, settings, data)
                raise typer.Exit(code)
            names = list(SUITES) if suite == "all" else [suite]
            options = SuiteOptions(
                judge=judge,
                metrics=tuple(m.strip() for m in metrics.split(",") if m.strip())
                if metrics
                else None,
                limit=limit,
                settings=settings,
            )
            disagrees = False
            for name in names:
                with param_names(METAEVAL_FLAGS):
                    result = run_suite(name, data, options)
                typer.echo(result.to_markdown())
                if out is not None:
                    md, js = result.write(out)
                    typer.echo(f"Wrote {md} and {js}", err=True)
                if result.passed is False:
                    disagrees = True
                    bad = [c for c in result.checks if not c["ok"]]
                    typer.echo(
                        f"{name}: {len(bad)} of {len(result.checks)} checks disagree with the "
                        "reference.",
                        err=True,
                    )
        except RagmeterError as exc:
            fail(str(exc))
        if disagrees:
            raise typer.Exit(EXIT_GATE)
