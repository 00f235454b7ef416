"""A Python metric on the Ray engine gives the local engine's scores and failures."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import ragmeter
from ragmeter.metrics import registry

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def local_ray() -> Iterator[None]:
    try:
        import ray
        import ray.data
    except ImportError:
        pytest.skip("Ray Data is not installed; install it with pip install 'ragmeter[ray]'")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield
    if started:
        ray.shutdown()


def test_a_python_metric_scores_on_ray_as_on_the_local_engine(local_ray, tmp_path) -> None:
    from ragmeter.engines import RayEngine

    @ragmeter.metric(needs=("answer",))
    def short_answer(sample: ragmeter.Sample) -> float:
        if sample.answer == "boom":
            raise ValueError("no answer to measure")
        return 1.0 if len(sample.answer.split()) <= 3 else 0.0

    try:
        rows = [{"answer": a} for a in ("Paris.", "It is a long answer here.", "boom")]
        data = tmp_path / "data.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in rows))
        local = ragmeter.evaluate(data, [short_answer], progress=False)
        on_ray = ragmeter.evaluate(
            data, ["short_answer"], engine=RayEngine(num_workers=1), keep_rows=True
        )
    finally:
        registry.undefine("short_answer")
    assert on_ray["short_answer"] == local["short_answer"] == [1.0, 0.0, None]
    assert "short_answer raised ValueError" in on_ray.rows[2].failures["short_answer"]
