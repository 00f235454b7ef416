"""Offline verdicts read back from the judge cache are range-checked (issue 36, item 6).

Cache entries whose support was 7.5 or NaN (checksums recomputed, as any program writing the
SQLite file can) silently changed every ``faithfulness_support``. Such an entry is now a
miss: the block is verified again and the scores are the honest ones. A real cache file,
edited with sqlite3.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Settings, evaluate
from ragmeter.cache import _checksum
from ragmeter.models.claim_verifier import shipped_model_available

pytestmark = pytest.mark.skipif(
    not shipped_model_available(), reason="the claim verifier needs onnxruntime"
)

ROWS = [
    {
        "question": "Who built the Eiffel Tower and when?",
        "contexts": [
            "The Eiffel Tower is a wrought-iron lattice tower in Paris, finished in 1889.",
            "Bananas are yellow and grow in warm places.",
        ],
        "answer": "The Eiffel Tower was finished in 1889. It is in Rome.",
    },
    {
        "question": "What colour are bananas?",
        "contexts": ["Bananas are yellow when ripe.", "Paris is in France."],
        "answer": "Bananas are yellow. They are a kind of fish.",
    },
]
METRICS = ["faithfulness", "faithfulness_support"]


def _scores(cache: Path) -> dict[str, list[Any]]:
    settings = Settings(cache_path=str(cache), workers=1)
    result = evaluate(ROWS, METRICS, settings=settings, progress=False)
    assert not result.failures()
    return {m: result.scores(m) for m in METRICS}


def _tamper(cache: Path, value: Any, *, matrix: Any = None) -> int:
    """Every stored offline verdict's support set to ``value`` (and its verdicts to
    ``matrix``), with checksums that match; returns how many entries were edited."""
    with sqlite3.connect(cache) as conn:
        rows = conn.execute(
            "SELECT key, reply FROM replies WHERE prompt = 'offline-verify'"
        ).fetchall()
        for key, reply in rows:
            data = json.loads(reply)
            data["support"] = [[value for _ in row] for row in data["support"]]
            if matrix is not None:
                data["matrix"] = [[matrix for _ in row] for row in data["matrix"]]
            text = json.dumps(data)  # NaN is written as NaN, as json.loads reads it back
            conn.execute(
                "UPDATE replies SET reply = ?, checksum = ? WHERE key = ?",
                (text, _checksum(text), key),
            )
    return len(rows)


@pytest.mark.parametrize(
    ("support", "matrix"),
    [(7.5, None), (math.nan, None), (-0.5, None), (0.5, "yes"), (0.5, 2)],
    ids=["support 7.5", "support NaN", "support -0.5", "verdict 'yes'", "verdict 2"],
)
def test_a_verdict_entry_out_of_range_is_a_miss_and_scores_stay_honest(
    tmp_path: Path, support: float, matrix: Any
) -> None:
    cache = tmp_path / "cache.sqlite3"
    honest = _scores(cache)
    assert any(v not in (None, 0.0, 1.0) for v in honest["faithfulness_support"])
    assert _tamper(cache, support, matrix=matrix) > 0
    assert _scores(cache) == honest
    # the entries were computed again and stored over the bad ones
    with sqlite3.connect(cache) as conn:
        replies = conn.execute("SELECT reply FROM replies WHERE prompt = 'offline-verify'")
        for (reply,) in replies:
            stored = json.loads(reply)
            assert all(0 <= v <= 1 for row in stored["support"] for v in row)
