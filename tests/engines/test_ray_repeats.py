"""``--repeats`` on the Ray engine: the run record's judge noise and the summary's interval
over rows and repeats, as the local engine gives them."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.settings import Settings
from ragmeter.testing import TestServer

ROWS = [
    {
        "question": f"What about {i}?",
        "answer": f"Paris is in France. Row {i} has a tower.",
        "contexts": ["Paris is the capital of France."],
    }
    for i in range(6)
]


def test_the_ray_engine_records_the_judges_noise_as_the_local_engine(tmp_path):
    pytest.importorskip("ray.data", reason="Ray Data is not installed: pip install 'ragmeter[ray]'")
    from ragmeter.engines import RayEngine

    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    with TestServer() as server:
        settings = Settings(
            judge="openai:test-model",
            base_url=server.base_url,
            api_key="sk-repeats-test-key",
            use_cache=False,
            repeats=2,
        )
        local = ragmeter.evaluate(str(data), ["faithfulness"], settings=settings, progress=False)
        ray_run = ragmeter.evaluate(
            data,
            ["faithfulness"],
            settings=settings,
            out=tmp_path / "out.jsonl",
            engine=RayEngine(num_workers=1),
            progress=False,
        )
    assert ray_run.info["judge_noise"] == local.info["judge_noise"]
    assert ray_run.info["judge_noise"]["faithfulness"]["repeats"] == 2
    assert ray_run.summary["faithfulness"].ci_method == "rows+repeats"
