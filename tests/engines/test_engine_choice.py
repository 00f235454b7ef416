"""``evaluate(engine=...)`` is the one way to start a run, on either engine: names, engine
objects, and what the Ray engine refuses before any work (no Ray needed for these)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import ragmeter
from ragmeter.engines import LocalEngine, RayEngine, engine_named
from ragmeter.errors import ConfigError

ROWS = [{"answer": "Paris is the capital", "contexts": ["Paris is the capital of France"]}]


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def test_the_local_engine_by_name_or_object_is_the_default_run() -> None:
    default = ragmeter.evaluate(ROWS, ["k_precision"], progress=False)
    named = ragmeter.evaluate(ROWS, ["k_precision"], progress=False, engine="local")
    given = ragmeter.evaluate(ROWS, ["k_precision"], progress=False, engine=LocalEngine())
    assert default["k_precision"] == named["k_precision"] == given["k_precision"] == [1.0]
    assert "engine" not in default.info


def test_engine_names_resolve_and_an_unknown_one_is_refused_with_a_close_name() -> None:
    assert isinstance(engine_named("local"), LocalEngine)
    assert engine_named("ray") == RayEngine()
    given = RayEngine(address="auto", num_workers=2)
    assert engine_named(given) is given
    with pytest.raises(ConfigError, match="Got 'rays'. Did you mean 'ray'"):
        ragmeter.evaluate(ROWS, ["k_precision"], engine="rays")


def test_the_ray_engine_refuses_what_it_cannot_run_before_any_work(tmp_path: Path) -> None:
    data = _data(tmp_path)
    with pytest.raises(ConfigError, match="give out a path"):
        ragmeter.evaluate(data, ["k_precision"], engine="ray", out=io.StringIO())
    criterion = ragmeter.Criterion(name="polite", question="Is the answer polite?")
    with pytest.raises(ConfigError, match="local engine only"):
        ragmeter.evaluate(
            data, ["k_precision"], engine="ray", settings=ragmeter.Settings(criteria=(criterion,))
        )
    with pytest.raises(ConfigError, match="'num_workers' option must be >= 1. Got True"):
        RayEngine(num_workers=True)  # type: ignore[arg-type]
    assert not (tmp_path / "out.jsonl").exists()
