"""Error text has a size cap (issue 29, item 6).

A judge endpoint whose error body holds a 1 MB message must not put that message into the
results file, the run record or stderr: every judge error, and every failure a row records,
is cut to :data:`ragmeter.errors.MAX_ERROR_TEXT` characters, saying how much was cut.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import MAX_ERROR_TEXT, JudgeError, cap_text
from ragmeter.metrics._judged import failure_message

BIG = "E" * 1_000_000


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(404, {"error": {"message": "no models route"}})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._send(400, {"error": {"message": f"bad request: {BIG}"}})


@pytest.fixture
def wordy_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_cap_text_keeps_short_text_and_cuts_long_text_saying_so() -> None:
    assert cap_text("short") == "short"
    cut = cap_text("x" * 10_000)
    assert len(cut) <= MAX_ERROR_TEXT
    assert cut.startswith("x" * 100) and "characters in all" in cut


def test_a_judge_error_and_a_row_failure_are_capped() -> None:
    assert len(str(JudgeError("e" * 50_000))) <= MAX_ERROR_TEXT
    assert len(failure_message(ValueError("v" * 50_000))) <= MAX_ERROR_TEXT + 20


def test_a_huge_judge_error_body_stays_out_of_results_and_stderr(
    wordy_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = tmp_path / "in.jsonl"
    row = {"question": "Where is Paris?", "answer": "Paris is in France.", "contexts": ["x"]}
    data.write_text("".join(json.dumps({**row, "question_id": f"q{i}"}) + "\n" for i in range(3)))
    out = tmp_path / "r.jsonl"
    res = CliRunner().invoke(
        app,
        [
            "evaluate", str(data), "-m", "faithfulness", "--judge", "openai:m",
            "--base-url", wordy_server, "--max-retries", "0", "--no-cache",
            "--out", str(out), "--no-progress",
        ],
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "bad request: EEEE" in " ".join(res.stderr.split())
    assert len(res.stderr) < 8 * MAX_ERROR_TEXT  # the first failures and the error, each capped
    lines = out.read_text().splitlines()
    assert len(lines) == 3
    assert all(len(line) < 2 * MAX_ERROR_TEXT for line in lines)
    record = (tmp_path / "r.jsonl.run.json").read_text()
    assert len(record) < 20 * MAX_ERROR_TEXT
