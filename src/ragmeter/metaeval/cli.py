"""The ``meta-eval`` command: ``register(app)`` adds it to a Typer application.

``ragmeter meta-eval SUITE [--judge J] [--verifier V] [--metrics a,b] [--limit N] [--out DIR]
[--data DIR]`` prints the suite's Markdown table and, with ``--out``, writes ``SUITE.md`` and
``SUITE.json`` there. ``SUITE`` is one of :data:`ragmeter.metaeval.SUITES`, ``all`` (each of
them in turn), or ``lfqa``, which lives in ``bench/meta/lfqa.py`` of a source checkout and is
run from there (with ``--judge openai:MODEL`` or ``--verifier nli:PATH`` it scores that
judge's or verifier's faithfulness sentence by sentence). ``--verifier`` and its options are
``ragmeter evaluate``'s: any verifier is measured the same way.

Exit codes: 0 done, 1 an exactness suite (``trec``, ``unitxt``) found a disagreement, 2 bad
input or options.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragmeter import cli_verifier as nli
from ragmeter.errors import ConfigError, RagmeterError
from ragmeter.settings import Settings

EXIT_DISAGREES = 1
EXIT_USAGE = 2
LFQA_SCRIPT = Path("bench") / "meta" / "lfqa.py"


def _lfqa_script() -> Path | None:
    """``bench/meta/lfqa.py`` of the current directory or of this source checkout."""
    here = Path(__file__).resolve().parents[3] / LFQA_SCRIPT
    for candidate in (Path.cwd() / LFQA_SCRIPT, here):
        if candidate.is_file():
            return candidate
    return None


def _lfqa_options(settings: Settings, data: Path | None) -> list[str]:
    """``bench/meta/lfqa.py``'s arguments for the run options it takes."""
    cmd: list[str] = []
    for flag, value in (
        ("--base-url", settings.base_url),
        ("--verifier", settings.verifier if settings.verifier != "judge" else None),
        ("--verifier-label", settings.verifier_label),
        ("--verifier-threshold", settings.verifier_threshold),
        ("--device", settings.device),
        ("--data", data),
    ):
        if value is not None:
            cmd += [flag, str(value)]
    return cmd + (["--allow-download"] if settings.allow_download else [])


def _run_lfqa(
    judge: str,
    metrics: str | None,
    limit: int | None,
    out: Path | None,
    settings: Settings,
    data: Path | None = None,
) -> int:
    script = _lfqa_script()
    if script is None:
        raise ConfigError(
            "The lfqa suite is a script of the source checkout (bench/meta/lfqa.py) and was not "
            "found. Run 'ragmeter meta-eval lfqa' from the project root of a checkout."
        )
    if metrics:
        raise ConfigError("The lfqa suite measures a fixed set of metrics; drop --metrics.")
    cmd = [sys.executable, str(script), "--judge", judge, *_lfqa_options(settings, data)]
    if limit is not None:
        cmd += ["--limit", str(limit)]
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        cmd += ["--json", str(out / "lfqa.json")]
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    done = subprocess.run(cmd, env=env, check=False, capture_output=True, text=True)
    typer.echo(done.stdout, nl=False)
    if done.returncode != 0:
        typer.echo(done.stderr, err=True, nl=False)
    if out is not None and done.returncode == 0:
        (out / "lfqa.md").write_text(done.stdout, encoding="utf-8")
    return done.returncode


def register(app: typer.Typer) -> None:
    """Add the ``meta-eval`` command to ``app``."""

    @app.command("meta-eval")
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
                help="Shared data folder (default $RAGMETER_SHARED_DATA, else ../shared/data)."
            ),
        ] = None,
        base_url: Annotated[
            str | None, typer.Option(help="OpenAI-compatible endpoint for --judge openai:MODEL.")
        ] = None,
        embedder: Annotated[
            str, typer.Option(help="Embeddings: 'offline' (MiniLM ONNX) or a model name/path.")
        ] = "offline",
        verifier: nli.VerifierOption = "judge",
        verifier_label: nli.VerifierLabelOption = None,
        verifier_threshold: nli.VerifierThresholdOption = None,
        device: nli.DeviceOption = None,
        allow_download: nli.AllowDownloadOption = False,
    ) -> None:
        """Measure metrics against human judgments and reference tools (a suite of public data)."""
        from ragmeter.metaeval import SUITES, run_suite
        from ragmeter.metaeval.common import SuiteOptions

        settings = Settings(
            base_url=base_url,
            embedder=embedder,
            **nli.verifier_settings(
                verifier, verifier_label, verifier_threshold, device, allow_download
            ),
        )
        try:
            if suite == "lfqa":
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
            typer.echo(f"Error: {exc}", err=True)
            raise typer.Exit(EXIT_USAGE) from None
        if disagrees:
            raise typer.Exit(EXIT_DISAGREES)
