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
    )


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    return write_run(tmp_path / "out.jsonl", make_rows(), make_info())


@pytest.fixture
def writer(tmp_path: Path) -> Callable[..., Path]:
    def _write(name: str, rows: list[dict[str, Any]], info: dict[str, Any] | None = None) -> Path:
        return write_run(tmp_path / name, rows, info)

    return _write
