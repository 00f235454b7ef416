"""A judge that refuses or goes away mid-run (issue 15, item 6).

- A refusal (401, 403, 404) or an endpoint that stops accepting connections stops the run at
  once: exit 2 with the reason; the rows scored before stay in ``--out``; ``--resume`` then
  repeats no call but those in flight at the stop.
- A row that failed on the infrastructure (a timeout, HTTP 5xx, 429 after every retry) makes
  the run exit 2, and ``--resume`` scores it again. A row whose judge reply did not validate is
  retried by ``--resume`` too, but it is the judge's answer, so it leaves the exit code alone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.cli.gates import unusable_run
from ragmeter.errors import JudgeUnavailableError
from ragmeter.io.transport.retry_policy import RetryPolicy
from ragmeter.metrics.base import Settings
from ragmeter.results import read_run
from ragmeter.testing.server import TestServer

SRC = str(Path(ragmeter.__file__).parents[1])
METRICS = ["faithfulness", "claim_recall", "context_entity_recall"]
CONCURRENCY = 4


def settings_for(base_url: str, **kw: Any) -> Settings:
    return Settings(
        judge="openai:test-model",
        base_url=base_url,
        use_cache=kw.pop("use_cache", False),
        timeout=kw.pop("timeout", 5.0),
        max_concurrency=kw.pop("max_concurrency", CONCURRENCY),
        **kw,
    )


def reference(server: TestServer, data: list[dict[str, Any]]) -> tuple[dict[int, Any], int]:
    """(scores by row, chat calls) of a fault-free run through ``server``."""
    server.reset()
    result = ragmeter.evaluate(data, METRICS, settings=settings_for(server.base_url))
    assert not result.failures()
    return {r.index: r.scores for r in result.rows}, server.stats()["chat_calls"]


def write_data(tmp_path: Path, data: list[dict[str, Any]]) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    return path


def cli(data: Path, out: Path, base_url: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "ragmeter", "evaluate", str(data)),
            *("-m", ",".join(METRICS), "--judge", "openai:test-model", "--base-url", base_url),
            *("--out", str(out), "--cache", str(out.with_suffix(".sqlite3"))),
            *("--max-concurrency", str(CONCURRENCY), "--batch-size", "5"),
            *("--no-progress", "--quiet", *extra),
        ],
        env={**os.environ, "PYTHONPATH": SRC},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """(exit code, stderr on one line) of a CLI run."""
    _, stderr = proc.communicate(timeout=120)
    assert "Traceback" not in stderr, stderr
    return proc.returncode, " ".join(stderr.split())


def scored_lines(out: Path, expected: dict[int, Any]) -> list[int]:
    """Indices of the rows in ``out``; each is complete and equals the reference run's."""
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:
        assert row["failures"] == {}, row
        assert row["scores"] == expected[row["index"]], row["index"]
    return [row["index"] for row in rows]


def assert_complete(out: Path, expected: dict[int, Any]) -> int:
    """``out`` read as a report reads it holds every row once, each as the reference run's;
    returns the number of lines in the file (a row scored again has two)."""
    run = read_run(out)
    assert sorted(r.index for r in run.rows) == sorted(expected)
    assert {r.index: dict(r.scores) for r in run.rows} == expected
    assert all(not r.failures for r in run.rows)
    return len(out.read_text().splitlines())


def prepared(
    server: TestServer, samples: Any, tmp_path: Path, n: int
) -> tuple[dict[int, Any], int, Path, Path]:
    """(reference scores, reference calls, data file, results path) for ``n`` rows."""
    data = samples(n)
    expected, calls = reference(server, data)
    return expected, calls, write_data(tmp_path, data), tmp_path / "out.jsonl"


def test_a_judge_that_starts_refusing_stops_the_run_and_resume_finishes_it(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    expected, clean_calls, path, out = prepared(server, samples, tmp_path, 40)

    server.configure(refuse_from_call=40, refuse_status=401)
    server.reset()
    code, stderr = finish(cli(path, out, server.base_url))
    stats = server.stats()
    assert code == 2, stderr
    assert "Error:" in stderr and "HTTP 401" in stderr and "OPENAI_API_KEY" in stderr
    assert "The run stopped" in stderr and "--resume" in stderr
    # At once: a refusal is not retried, and no request starts after one (at most the
    # requests already in flight meet it).
    assert 1 <= stats["refused_calls"] <= CONCURRENCY, stats
    answered = stats["chat_calls"]
    assert answered == 39
    # What was scored before the stop is in --out, whole and right.
    kept = scored_lines(out, expected)
    assert kept, "no row was kept"

    server.configure(refuse_from_call=0)
    server.reset()
    code, stderr = finish(cli(path, out, server.base_url, "--resume"))
    assert code == 0, stderr
    assert_complete(out, expected)
    # Nothing paid for was lost: every answered reply was cached; only calls in flight at the
    # stop (at most the concurrency) are made again.
    resumed_calls = server.stats()["chat_calls"]
    assert clean_calls <= answered + resumed_calls <= clean_calls + CONCURRENCY


@pytest.mark.parametrize("status", [403, 404])
def test_a_refusal_raises_with_the_reason_and_keeps_the_rows_scored(
    server: TestServer, samples: Any, tmp_path: Path, status: int
) -> None:
    data = samples(30)
    expected, _ = reference(server, data)
    out = tmp_path / "out.jsonl"
    server.configure(refuse_from_call=30, refuse_status=status)
    server.reset()
    with pytest.raises(JudgeUnavailableError, match=f"HTTP {status}") as info:
        ragmeter.evaluate(
            data, METRICS, settings=settings_for(server.base_url, batch_size=5), out=out
        )
    assert str(out) in str(info.value) and "resume=True" in str(info.value)  # Python words
    # Stopped at once: no more refused requests than were in flight.
    assert server.stats()["refused_calls"] <= CONCURRENCY
    assert scored_lines(out, expected)


@pytest.mark.timeout(300)  # a run that waited out a backoff per row would end here
def test_a_judge_server_that_dies_mid_run_stops_the_run_quickly(
    server: TestServer, spawn_server: Any, samples: Any, tmp_path: Path
) -> None:
    expected, _, path, out = prepared(server, samples, tmp_path, 60)
    doomed = spawn_server(latency=0.02)
    proc = cli(path, out, f"{doomed.url}/v1")
    while doomed.stats()["chat_calls"] < 30:
        assert proc.poll() is None, "the run ended before the server was killed"
        time.sleep(0.02)
    doomed.kill()  # connections are refused from now on
    code, stderr = finish(proc)
    # A few short connect retries (a blip is survived), then the run stops: not a full
    # backoff per remaining row. The connect retries are counted in the message.
    assert code == 2, stderr
    assert "cannot be reached any more" in stderr and "--resume" in stderr
    retries = re.search(r"cannot be reached any more: .*?, (\d+) retries", stderr)
    assert retries is not None, stderr
    assert int(retries.group(1)) <= RetryPolicy().max_connect_retries, stderr
    kept = scored_lines(out, expected)

    # The same judge back up (on another port): --resume scores the rest.
    code, stderr = finish(cli(path, out, server.base_url, "--resume"))
    assert code == 0, stderr
    assert assert_complete(out, expected) == len(expected) > len(kept)


def test_rows_that_failed_on_the_infrastructure_exit_2_and_resume_scores_them_again(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    expected, _, path, out = prepared(server, samples, tmp_path, 6)
    # The first request gets HTTP 500, and it is not retried.
    server.configure(faults=("500",), fault_on_calls=(1,))
    server.reset()
    no_retry = ("--max-retries", "0")
    code, stderr = finish(cli(path, out, server.base_url, *no_retry))
    assert code == 2, stderr
    assert "failed on the judge's or a model's endpoint" in stderr and "--resume" in stderr
    assert "HTTP 500" in stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == len(expected)
    failed = [r for r in rows if r["failures"]]
    assert len(failed) == 1
    assert failed[0]["failure_causes"] == dict.fromkeys(METRICS, "infrastructure")
    info = json.loads(Path(f"{out}.run.json").read_text())
    assert info["failure_causes"] == {"judge": 0, "infrastructure": len(METRICS)}

    server.configure(fault_on_calls=())
    server.reset()
    code, stderr = finish(cli(path, out, server.base_url, *no_retry, "--resume"))
    assert code == 0, stderr
    assert server.stats()["chat_calls"] == 2  # the failed row's analyze and verify, no more
    # The row's new line supersedes its failed one.
    assert assert_complete(out, expected) == len(expected) + 1


def test_an_invalid_judge_reply_is_retried_by_resume_but_is_not_an_infrastructure_failure(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data = samples(4)
    expected, clean_calls = reference(server, data)
    out = tmp_path / "out.jsonl"
    # Every reply is cut off, the corrective retry's too.
    server.configure(faults=("malformed",), fault_rate=1.0)
    server.reset()
    settings = settings_for(server.base_url)
    result = ragmeter.evaluate(data, METRICS, settings=settings, out=out)
    assert all(r.failure_causes == dict.fromkeys(METRICS, "judge") for r in result.rows)
    assert result.info["failure_causes"] == {"judge": 4 * len(METRICS), "infrastructure": 0}
    assert unusable_run(result, {}) is not None  # every row failed: exit 2 for that reason
    assert "endpoint" not in (unusable_run(result, {}) or "")

    server.configure(fault_rate=0.0)
    server.reset()
    resumed = ragmeter.evaluate(data, METRICS, settings=settings, out=out, resume=True)
    assert server.stats()["chat_calls"] == clean_calls
    assert not resumed.failures()
    assert assert_complete(out, expected) == 2 * len(expected)


def test_failures_on_the_judge_or_the_infrastructure_make_the_run_unusable(
    server: TestServer, samples: Any
) -> None:
    result = ragmeter.evaluate(samples(3), METRICS, settings=settings_for(server.base_url))
    assert unusable_run(result, {}) is None
    result.info["failure_causes"] = {"judge": 2, "infrastructure": 0}
    result.info["first_judge_failure"] = [1, "faithfulness", "invalid reply twice"]
    problem = unusable_run(result, {})
    assert problem is not None  # the same rule: not the data's failure; --resume asks again
    assert "2 scores failed on the judge's replies" in problem
    assert "row 1 faithfulness: invalid reply twice" in problem
    result.info["failure_causes"] = {"judge": 0, "infrastructure": 1}
    result.info["first_infrastructure_failure"] = [2, "faithfulness", "HTTP 503"]
    problem = unusable_run(result, {})
    assert problem is not None
    assert "1 score failed" in problem and "row 2 faithfulness: HTTP 503" in problem
