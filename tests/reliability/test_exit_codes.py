"""Exit codes and bounds (issue 36 item 14): criteria that all fail on the judge's replies
exit 2 as endpoint failures do (the run is incomplete; --resume asks again), and --repeats
is bounded before any work."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.reliability.cli_process import ragmeter_process

from ragmeter.testing.server import TestServer

CRITERIA = """
[[criteria]]
name = "cites_policy"
question = "Does the answer cite a policy number?"
fields = ["answer"]
"""


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return ragmeter_process(cwd, "evaluate", *args)


def test_criteria_failing_on_every_judge_reply_exit_2_and_resume_asks_again(
    tmp_path: Path, server: TestServer
) -> None:
    rows = [
        {"question_id": f"q{i}", "answer": f"See POL-{i}.", "contexts": ["x"]} for i in range(4)
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "criteria.toml").write_text(CRITERIA)
    args = (
        *("data.jsonl", "--criteria", "criteria.toml", "-m", "k_precision,cites_policy"),
        *("--judge", "openai:test-model", "--base-url", server.base_url, "--no-cache"),
        *("--out", "out.jsonl", "--no-progress", "--max-retries", "0"),
    )
    server.configure(faults=("malformed",), fault_rate=1.0)  # every reply cut off, twice
    proc = run(tmp_path, *args)
    assert proc.returncode == 2, proc.stderr
    assert "4 scores failed on the judge's replies" in proc.stderr
    assert "--resume" in proc.stderr
    record = json.loads((tmp_path / "out.jsonl.run.json").read_text())
    assert record["failure_causes"] == {"judge": 4, "infrastructure": 0}
    assert record["summary"]["k_precision"]["count"] == 4  # the other metric scored

    server.configure(fault_rate=0.0)
    resumed = run(tmp_path, *args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    final = {r["index"]: r for r in map(json.loads, (tmp_path / "out.jsonl").open())}
    assert all(r["scores"]["cites_policy"] is not None for r in final.values())


def test_a_huge_repeats_is_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text('{"answer": "a", "contexts": ["a"]}\n')
    proc = run(
        tmp_path,
        *("data.jsonl", "-m", "faithfulness", "--judge", "openai:gpt-4o-mini"),
        *("--repeats", "100000000", "--dry-run"),
    )
    assert proc.returncode == 2, proc.stderr
    assert "--repeats must be an integer from 1 to 100" in proc.stderr
    assert "Got 100000000" in proc.stderr
