"""The Ray engine gives the local engine's rows and summaries, on a local 2-CPU Ray instance."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.engines import RayEngine
from ragmeter.engines.ray_engine import worker_concurrency
from ragmeter.errors import ConfigError
from ragmeter.result import sidecar_path
from ragmeter.results import read_run

#: A stalled Ray pipeline (say, actors holding every CPU) fails the test instead of the suite.
pytestmark = pytest.mark.timeout(300)

#: Lexical, retrieval and two judged metrics (offline judge: async judge calls inside actors).
METRICS = [
    "k_precision",
    "token_recall",
    "token_f1",
    "mrr",
    "map",
    "ndcg_at_3",
    "faithfulness",
    "claim_f1",
]
#: Offline verdicts are cached: a second engine would read the first one's (details say
#: ``cached``), so each run here computes its own.
FRESH = ragmeter.Settings(use_cache=False)


def _ray():
    try:
        import ray
        import ray.data
    except ImportError:
        pytest.skip("Ray Data is not installed; install it with pip install 'ragmeter[ray]'")
    return ray


@pytest.fixture(scope="module")
def local_ray():
    ray = _ray()
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


def _good_rows(n: int = 50, *, seed: int = 11) -> list[dict]:
    rng = random.Random(seed)
    words = ["the", "tower", "was", "built", "in", "paris", "1889", "iron", "a", "river", "of"]
    ids = [f"d{i}" for i in range(10)]
    rows = []
    for i in range(n):
        contexts = [" ".join(rng.choices(words, k=rng.randint(4, 15))) for _ in range(3)]
        rows.append(
            {
                "question_id": f"q{i}",
                "question": "When was the tower built?",
                "metadata": {"category": rng.choice(["history", "science"])},
                "contexts": contexts if i % 9 else [],  # undefined k_precision
                "contexts_ids": rng.sample(ids, 4),
                "answer": " ".join(rng.choices(words, k=rng.randint(2, 9))),
                "reference_answers": [" ".join(rng.choices(words, k=rng.randint(2, 7)))],
                "reference_context_ids": rng.sample(ids, 2),
            }
        )
    return rows


def _jsonl_with_problems(path: Path) -> Path:
    rows = _good_rows()
    lines = [json.dumps(r) for r in rows]
    lines[3] = json.dumps({**rows[3], "answer": 7})  # wrong type
    del rows[4]["contexts_ids"]
    lines[4] = json.dumps(rows[4])  # a field mrr needs is missing
    lines.insert(10, "")  # blank line: no row, but line numbers move on
    lines.insert(20, "{not json")  # unreadable row: failures naming its line
    lines.insert(30, "[1, 2]")  # not an object
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _compare(tmp_path: Path, data: Path, engine: RayEngine) -> tuple[list[str], ragmeter.RunResult]:
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    local = ragmeter.evaluate(data, METRICS, out=local_out, progress=False, settings=FRESH)
    result = ragmeter.evaluate(
        data, METRICS, out=ray_out, progress=False, keep_rows=True, settings=FRESH, engine=engine
    )
    local_lines = local_out.read_text(encoding="utf-8").splitlines()
    ray_lines = ray_out.read_text(encoding="utf-8").splitlines()
    assert len(ray_lines) == len(local_lines)
    for mine, theirs in zip(ray_lines, local_lines, strict=True):
        assert json.loads(mine) == json.loads(theirs)
        assert mine == theirs
    assert {k: s.as_dict() for k, s in result.summary.items()} == {
        k: s.as_dict() for k, s in local.summary.items()
    }
    assert [r.to_json() for r in result.rows] == [r.to_json() for r in local.rows]
    sidecar = json.loads(sidecar_path(ray_out).read_text(encoding="utf-8"))
    local_sidecar = json.loads(sidecar_path(local_out).read_text(encoding="utf-8"))
    assert sidecar["summary"] == local_sidecar["summary"]
    assert sidecar["n_rows"] == local_sidecar["n_rows"] == len(local_lines)
    assert sidecar["engine"]["name"] == "ray"
    return ray_lines, result


def test_jsonl_rows_and_summaries_match_the_local_engine_row_by_row(local_ray, tmp_path):
    data = _jsonl_with_problems(tmp_path / "data.jsonl")
    lines, result = _compare(tmp_path, data, RayEngine(num_workers=2))
    assert result.info["engine"]["workers"] == 2
    rows = [json.loads(line) for line in lines]
    assert [r["index"] for r in rows] == list(range(len(rows)))
    # failure messages name the row's line in the file, as the local reader does
    assert "line 21 of data.jsonl is not valid JSON" in rows[19]["failures"]["mrr"]
    assert "line 31 of data.jsonl holds a JSON list" in rows[29]["failures"]["mrr"]
    assert rows[3]["failures"]["k_precision"].startswith("line 4, field 'answer'")
    assert "contexts_ids" in rows[4]["failures"]["mrr"]
    assert rows[9]["scores"]["k_precision"] is None and rows[9]["reasons"]["k_precision"]
    assert rows[0]["metadata"] == {"category": json.loads(lines[0])["metadata"]["category"]}


def test_parquet_and_csv_inputs_match_the_local_engine(local_ray, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = _good_rows(40, seed=5)
    parquet = tmp_path / "data.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet, row_group_size=16)
    (tmp_path / "pq").mkdir()
    _compare(tmp_path / "pq", parquet, RayEngine(num_workers=2))

    csv_path = tmp_path / "data.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {k: json.dumps(v) if not isinstance(v, str) else v for k, v in row.items()}
            )
    (tmp_path / "csv").mkdir()
    _compare(tmp_path / "csv", csv_path, RayEngine(num_workers=1))


def _resume_on_ray(data: Path, out: Path) -> ragmeter.RunResult:
    """``out`` resumed on two Ray workers, its rows streamed (not kept)."""
    return ragmeter.evaluate(
        data,
        METRICS,
        out=out,
        resume=True,
        engine=RayEngine(num_workers=2),
        progress=False,
        settings=FRESH,
        keep_rows=False,
    )


def test_resume_writes_only_the_missing_rows(local_ray, tmp_path):
    data = _jsonl_with_problems(tmp_path / "data.jsonl")
    full = tmp_path / "full.jsonl"
    expected = ragmeter.evaluate(data, METRICS, out=full, progress=False, settings=FRESH)
    lines = full.read_text(encoding="utf-8").splitlines(keepends=True)
    out = tmp_path / "out.jsonl"
    out.write_text("".join(lines[:17]) + lines[17][:25], encoding="utf-8")  # torn last line
    sidecar_path(out).write_text(sidecar_path(full).read_text())  # as a killed run leaves it
    result = _resume_on_ray(data, out)
    assert out.read_bytes() == full.read_bytes()
    assert result.info["n_rows"] == len(lines)
    assert {k: s.as_dict() for k, s in result.summary.items()} == {
        k: s.as_dict() for k, s in expected.summary.items()
    }


def test_resume_on_ray_computes_metrics_added_since_the_first_run(local_ray, tmp_path):
    data = _jsonl_with_problems(tmp_path / "data.jsonl")
    expected = ragmeter.evaluate(data, METRICS, progress=False, settings=FRESH)
    out = tmp_path / "out.jsonl"
    ragmeter.evaluate(data, METRICS[:2], out=out, progress=False, settings=FRESH)
    result = _resume_on_ray(data, out)
    assert {k: s.as_dict() for k, s in result.summary.items()} == {
        k: s.as_dict() for k, s in expected.summary.items()
    }
    # Each row is written again with every metric; a report reads each row once, the last.
    rows = read_run(out).rows
    assert len(rows) == len(expected.rows) and len(out.read_text().splitlines()) == 2 * len(rows)
    assert {r.index: dict(r.scores) for r in rows} == {r.index: r.scores for r in expected.rows}


def test_evaluate_on_ray_writes_the_report_and_reports_rows_to_a_progress_function(
    local_ray, tmp_path
):
    """The one pipeline: ``engine="ray"`` gets what follows a run (the report) and the
    progress function, as the local engine."""
    data = _jsonl_with_problems(tmp_path / "data.jsonl")
    seen: list[tuple[int, int | None]] = []
    result = ragmeter.evaluate(
        data,
        ["k_precision", "mrr"],
        engine="ray",
        out=tmp_path / "ray.jsonl",
        report=tmp_path / "report.html",
        progress=lambda done, total: seen.append((done, total)),
        settings=FRESH,
    )
    assert result.info["engine"]["name"] == "ray"
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!")
    assert seen and seen[-1][0] == result.info["n_rows"] == len(result.rows)


def test_cli_engine_ray_writes_the_local_engines_rows(local_ray, tmp_path):
    data = _jsonl_with_problems(tmp_path / "data.jsonl")
    metrics = ",".join(METRICS)
    runner = CliRunner()
    args = ["evaluate", str(data), "-m", metrics, "-q", "--no-progress", "--no-cache"]
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "local.jsonl")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        app, [*args, "--out", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--workers", "2"]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()


def test_cli_rejects_ray_options_without_the_ray_engine(tmp_path):
    data = _jsonl_with_problems(tmp_path / "data.jsonl")
    res = CliRunner().invoke(app, ["evaluate", str(data), "-m", "mrr", "--ray-address", "auto"])
    assert res.exit_code == 2
    assert "--engine ray" in res.output
    res = CliRunner().invoke(app, ["evaluate", str(data), "-m", "mrr", "--engine", "spark"])
    assert res.exit_code == 2
    assert "Unknown --engine 'spark'" in res.output


def test_in_memory_data_is_refused_with_a_pointer_to_the_local_engine():
    with pytest.raises(ConfigError, match="local engine"):
        ragmeter.evaluate([{"answer": "a", "contexts": ["a"]}], ["k_precision"], engine="ray")


def test_bad_worker_count_is_refused_before_any_work(tmp_path):
    data = _jsonl_with_problems(tmp_path / "data.jsonl")
    with pytest.raises(ConfigError, match="'num_workers' option must be >= 1. Got 0"):
        ragmeter.evaluate(data, ["mrr"], engine=RayEngine(num_workers=0))


@pytest.mark.parametrize(
    ("limit", "workers", "each"), [(16, 1, 16), (16, 2, 8), (16, 3, 5), (2, 4, 1), (1, 1, 1)]
)
def test_max_concurrency_is_divided_across_workers(limit, workers, each):
    assert worker_concurrency(limit, workers) == each
    assert each * workers <= max(limit, workers)


def test_worker_concurrency_rejects_nonsense():
    with pytest.raises(ConfigError, match="must be >= 1. Got 0"):
        worker_concurrency(0, 2)
    with pytest.raises(ConfigError, match="must be >= 1. Got 0"):
        worker_concurrency(4, 0)


def test_connect_turns_rays_usage_statistics_off_before_it_starts(monkeypatch):
    from ragmeter.engines.ray_engine import _connect

    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    seen = {}

    class FakeRay:
        def is_initialized(self) -> bool:
            return False

        def init(self, **kwargs) -> None:
            import os

            seen["stats"] = os.environ.get("RAY_USAGE_STATS_ENABLED")

    assert _connect(FakeRay(), None, 2) is True
    assert seen["stats"] == "0"
