"""Shared helpers of the meta-evaluation scripts in ``bench/meta/``.

The suites themselves live in the package (:mod:`ragmeter.metaeval`) so that
``ragmeter meta-eval SUITE`` runs them; each script here is a thin entry point::

    PYTHONPATH=src python bench/meta/ragchecker.py [--judge offline] [--metrics a,b]
        [--limit N] [--out DIR] [--data ../shared/data]

This module re-exports the statistics (Spearman, Kendall, Pearson through scipy; pairwise
accuracy; AUROC) and the table helpers for any script that wants them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The team's data folder, beside the checkout (the package assumes none: --data).
DATA = ROOT.parent / "shared" / "data"
try:
    import ragmeter  # noqa: F401
except ImportError:  # a source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from ragmeter.metaeval import SUITES, run_suite  # noqa: E402
from ragmeter.metaeval.common import (  # noqa: E402
    SuiteOptions,
    SuiteResult,
    markdown_table,
    score_samples,
    shared_data_dir,
)
from ragmeter.metaeval.stats import (  # noqa: E402
    Correlation,
    auroc,
    correlation,
    impute_median,
    minmax_to_range,
    pairwise_accuracy,
)
from ragmeter.metrics.base import Settings  # noqa: E402

__all__ = [
    "DATA",
    "SUITES",
    "Correlation",
    "SuiteOptions",
    "SuiteResult",
    "auroc",
    "correlation",
    "impute_median",
    "main",
    "markdown_table",
    "minmax_to_range",
    "pairwise_accuracy",
    "parser_for",
    "score_samples",
    "shared_data_dir",
]


def parser_for(suite: str) -> argparse.ArgumentParser:
    """The common options of every suite script."""
    parser = argparse.ArgumentParser(description=f"ragmeter meta-evaluation suite {suite!r}")
    parser.add_argument("--judge", default="offline", help="'offline' or 'openai:MODEL'")
    parser.add_argument("--metrics", default=None, help="comma-separated metrics")
    parser.add_argument("--limit", type=int, default=None, help="only the first N items")
    parser.add_argument("--out", type=Path, default=None, help="write SUITE.md and SUITE.json")
    parser.add_argument("--data", type=Path, default=DATA, help=f"data folder (default {DATA})")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint")
    return parser


def main(suite: str, argv: Sequence[str] | None = None) -> int:
    """Run ``suite``, print its Markdown table, optionally write it; 1 when a check fails."""
    args = parser_for(suite).parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    metrics = (
        tuple(m.strip() for m in args.metrics.split(",") if m.strip()) if args.metrics else None
    )
    options = SuiteOptions(
        judge=args.judge,
        metrics=metrics,
        limit=args.limit,
        settings=replace(Settings(), base_url=args.base_url),
    )
    result = run_suite(suite, args.data, options)
    print(result.to_markdown())
    if args.out is not None:
        md, js = result.write(args.out)
        print(f"Wrote {md} and {js}", file=sys.stderr)
    return 1 if result.passed is False else 0
