"""Results files written by hand, in the runner's format (results JSONL + sidecar).

The suite runs with --import-mode=importlib, so helpers reach tests through the ``rd``
fixture rather than imports.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

#: If it ran, the title would be PWNED and the page would hold "XSS-RAN" (never in the source).
SCRIPT = "<script>document.title='PW'+'NED';document.write('XSS'+'-RAN')</script>"
IMG = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
SECRET = "sk-live-0123456789abcdefABCDEF"


def make_rows(n: int = 12) -> list[dict[str, Any]]:
    """Rows whose text carries HTML and scripts; scores spread over [0, 1]."""
    rows = []
    for i in range(n):
        faith = round(i / (n - 1), 3)
        rows.append(
            {
                "index": i,
                "id": f"q{i}",
                "scores": {
                    "faithfulness": faith,
                    "noise_sensitivity": round(1 - faith, 3),
                    "context_precision": None if i % 5 == 0 else 0.9,
                },
                "reasons": {
                    "faithfulness": f"{i} claims supported {SCRIPT}",
                    **({"context_precision": "no reference context"} if i % 5 == 0 else {}),
                },
                "failures": {},
                "details": {
                    "faithfulness": {
                        "claims": [f"claim A{i} {IMG}", f"claim B{i} <b>bold</b>"],
                        "verdicts": [{"verdict": "supported"}, {"verdict": "unsupported"}],
                        "contexts": [f"context {SCRIPT}"],
                    }
                },
                "metadata": {"category": "<i>cat-a</i>" if i % 2 else "plain"},
            }
        )
    return rows


def make_info(n_rows: int = 12) -> dict[str, Any]:
    return {
        "ragmeter_version": "0.1.0",
        "created": "2025-01-02T03:04:05+00:00",
        "metrics": {
            "faithfulness": {
                "higher_is_better": True,
                "lower": 0.0,
                "upper": 1.0,
                "description": "Share of answer claims supported by the contexts.",
                "family": "claims",
            },
            "noise_sensitivity": {
                "higher_is_better": False,
                "lower": 0.0,
                "upper": 1.0,
                "description": "Share of incorrect claims.",
                "family": "claims",
            },
            "context_precision": {
                "higher_is_better": True,
                "lower": 0.0,
                "upper": 1.0,
                "description": "Precision of retrieved contexts.",
                "family": "retrieval",
            },
        },
        "settings": {"api_key": SECRET, "max_tokens": 512, "concurrency": 4},
        "judge": {
            "name": "openai",
            "model": "gpt-test",
            "endpoint": f"https://example.invalid/v1?api_key={SECRET}",
            "prompts": {"claims.extract": "sha256:abc123", "claims.verify": "sha256:def456"},
        },
        "usage": {
            "calls": 24,
            "cache_hits": 7,
            "prompt_tokens": 12345,
            "completion_tokens": 678,
            "retries": 1,
            "failures": 0,
            "cost": 0.0421,
        },
        "summary": {},
        "n_rows": n_rows,
    }


def write_run(path: Path, rows: list[dict[str, Any]], info: dict[str, Any] | None) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if info is not None:
        Path(f"{path}.run.json").write_text(json.dumps(info), encoding="utf-8")
    return path


def typical_specs() -> dict[str, Any]:
    """The metrics of :func:`typical_run`: ragmeter's own (not the Python metrics other tests
    define), less answer_reward."""
    from ragmeter.metrics.registry import builtin_specs

    return {k: v for k, v in builtin_specs().items() if k != "answer_reward"}


def typical_run(n: int, seed: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Results of a decent RAG system on ``n`` generated rows, for every registered metric.

    Each row has a hidden answer quality (most good, a few poor) and a retrieval outcome
    (85 % find a reference id, mostly at rank 1); each metric's score follows from them on
    the metric's usual scale (context relevance around 0.25, token precision about half the
    quality, precision_at_k at most 1/k...). Claim metrics are undefined on 8 % of rows.
    answer_reward is skipped, as on a machine without its model.
    """
    from ragmeter.report.risk import DEFAULT_PER_METRIC

    rng = np.random.default_rng(seed)
    # Metrics added later draw from their own stream, so the draws of the others (and the
    # sign counts the tests pin) stay those of the same seed.
    side = np.random.default_rng(seed + 1_000)
    specs = typical_specs()

    def clip(x: float) -> float:
        return round(float(min(1.0, max(0.0, x))), 4)

    def share(m: int, p: float) -> float:
        return round(rng.binomial(m, min(1.0, max(0.0, p))) / m, 4)

    rows = []
    for i in range(n):
        q = float(rng.beta(5, 1.5))
        rank = int(rng.choice([1, 2, 3], p=[0.8, 0.15, 0.05])) if rng.random() < 0.85 else 0
        m = int(rng.integers(2, 6))  # answer claims
        no_claims = rng.random() < 0.08
        s: dict[str, float | None] = {}
        for name, spec in specs.items():
            k = int(name.rsplit("_", 1)[1]) if name.rsplit("_", 1)[-1].isdigit() else 0
            found = rank > 0 and (k == 0 or rank <= k)
            if spec.family == "retrieval":
                if name.startswith(("mrr", "map", "context_precision")):
                    v = 1 / rank if rank else 0.0
                elif name.startswith("precision_at"):
                    v = 1 / k if found else 0.0
                elif name.startswith("ndcg"):
                    v = 1 / np.log2(rank + 1) if found else 0.0
                else:
                    v = 1.0 if found else 0.0
            elif spec.family == "lexical":
                scale = 0.5 if name in DEFAULT_PER_METRIC else 1.0
                if name == "context_token_precision":
                    v = clip(0.35 + 0.4 * q + rng.normal(0, 0.1))
                elif name == "exact_match":
                    v = float(rng.random() < 0.05)
                else:
                    v = clip(scale * q + rng.normal(0, 0.1))
            elif spec.family == "claims":
                if no_claims and name not in ("context_claim_recall", "claim_recall"):
                    v = None
                elif name in ("hallucination", "noise_sensitivity_irrelevant"):
                    v = share(m, (1 - q) * 0.3)
                elif name == "noise_sensitivity_relevant":
                    v = share(m, (1 - q) * 0.4)
                elif name == "self_knowledge":
                    v = share(m, 0.05)
                elif name == "context_claim_precision":
                    v = round(rng.choice([1, 2]) / 3, 4) if rank else 0.0
                elif name in ("context_precision", "context_utilization"):
                    v = 1 / rank if rank else 0.0
                elif name.endswith("_support"):
                    v = clip(0.9 * q + rng.normal(0, 0.08))
                else:
                    v = share(m, q)
            elif spec.family == "context_relevance":
                v = clip(rng.beta(2.5, 8) * (1 if rank else 0.5))
            elif spec.family == "response_relevancy":
                v = 0.0 if rng.random() < 0.04 else clip(0.75 + rng.normal(0, 0.08))
            elif name == "answer_refusal":  # a decent system seldom declines
                v = float(side.random() < 0.05)
            elif name == "answerability_accuracy":
                v = float(side.random() < 0.9)
            else:
                v = clip(q + rng.normal(0, 0.1))
            s[name] = v
        rows.append(
            {
                "index": i,
                "id": f"row-{i:05d}",
                "scores": s,
                "reasons": {k: "no answer claims" for k, v in s.items() if v is None},
                "details": {
                    "faithfulness": {
                        "claims": [f"Claim {j} of row {i}: some stated fact." for j in range(m)],
                        "verdicts": ["supported"] * m,
                    }
                },
                "metadata": {"topic": ["history", "science", "geography", "sports"][i % 4]},
            }
        )
    info = {
        "ragmeter_version": "0.1.0",
        "created": "2026-01-01T00:00:00+00:00",
        "n_rows": n,
        "metrics": {
            name: {
                "family": spec.family,
                "higher_is_better": spec.higher_is_better,
                "lower": spec.lower,
                "upper": spec.upper,
                "description": spec.description,
            }
            for name, spec in specs.items()
        },
        "skipped": {"answer_reward": "The reward model is not in the local cache."},
        "settings": {"judge": "offline"},
        "judge": {"name": "offline:verifier"},
        "usage": {"calls": 0, "cache_hits": 0, "prompt_tokens": 0, "cost": None},
    }
    return rows, info


@pytest.fixture(scope="session")
def rd() -> SimpleNamespace:
    """The helpers and constants of this file."""
    return SimpleNamespace(
        SCRIPT=SCRIPT,
        IMG=IMG,
        SECRET=SECRET,
        make_rows=make_rows,
        make_info=make_info,
        write_run=write_run,
        typical_run=typical_run,
        typical_specs=typical_specs,
    )


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    return write_run(tmp_path / "out.jsonl", make_rows(), make_info())


@pytest.fixture
def writer(tmp_path: Path) -> Callable[..., Path]:
    def _write(name: str, rows: list[dict[str, Any]], info: dict[str, Any] | None = None) -> Path:
        return write_run(tmp_path / name, rows, info)

    return _write
