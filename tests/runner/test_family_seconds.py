"""The run record says how long each metric family's calls took (``family_seconds``)."""

from __future__ import annotations

import asyncio
import json
import sys
import types
from pathlib import Path

import pytest

import ragmeter
from ragmeter.metrics import registry
from ragmeter.result import sidecar_path
from ragmeter.types import MetricSpec, Score

PAUSE = 0.05


class _Family:
    """Scores 1.0; ``pause`` seconds per batch call."""

    def __init__(self, pause: float) -> None:
        self.pause = pause
        self.calls = 0

    async def score_batch(self, samples, metrics):
        self.calls += 1
        await asyncio.sleep(self.pause)
        return [{m: Score(1.0) for m in metrics} for _ in samples]


@pytest.fixture
def two_families(monkeypatch):
    slow, quick = _Family(PAUSE), _Family(0.0)
    modules = {}
    for family, name, built in (("slowfam", "slow_metric", slow), ("quickfam", "quick", quick)):
        module = types.ModuleType(f"ragmeter_test_{family}")
        module.SPECS = (MetricSpec(name, family, ("answer",), name),)
        module.build = lambda ctx, built=built: built
        monkeypatch.setitem(sys.modules, module.__name__, module)
        modules[family] = module.__name__
    monkeypatch.setattr(registry, "FAMILY_MODULES", modules)
    registry.builtin_specs.cache_clear()
    registry.family_module.cache_clear()
    yield slow, quick
    registry.builtin_specs.cache_clear()
    registry.family_module.cache_clear()


def test_each_family_has_its_wall_seconds_in_the_run_record(two_families, tmp_path: Path):
    slow, quick = two_families
    data = [{"answer": f"a{i}"} for i in range(5)]
    out = tmp_path / "r.jsonl"
    settings = ragmeter.Settings(batch_size=2)
    result = ragmeter.evaluate(
        data, ["slow_metric", "quick"], settings=settings, out=out, progress=False
    )
    seconds = result.info["family_seconds"]
    assert set(seconds) == {"slowfam", "quickfam"}
    assert slow.calls == quick.calls == 3  # 5 rows in batches of 2
    # Busy time: at least one call's pause (batches may run side by side, so not the sum).
    assert seconds["slowfam"] >= PAUSE * 0.9
    assert seconds["quickfam"] >= 0.0
    record = json.loads(sidecar_path(out).read_text(encoding="utf-8"))
    assert record["family_seconds"] == seconds
