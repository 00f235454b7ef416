"""Issue 36's attacks on worker processes, caches, output paths, secrets and the install
(items 4, 5, 6, 7, 12, 15, 18), as a hostile user runs them: the real ``ragmeter`` command
in a subprocess, real signals, real files. Each attack prints HELD or FAILED with what it saw;
the script exits 1 when any failed, so the next round starts from here.

Usage::

    python bench/attacks/workers_caches_paths.py              # every attack but the install
    python bench/attacks/workers_caches_paths.py --install    # also pip install into a venv
    python bench/attacks/workers_caches_paths.py --only outputs,secrets
    python bench/attacks/workers_caches_paths.py --list

The worker attacks need the [local] extra (spaCy and the claim verifier); the converted-model
attacks need the packaged Gemma GGUF (they copy the converted model into a private cache, so
the user's own is never damaged; a first run converts it, tens of seconds).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import venv
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = str(ROOT / "src")
sys.path.insert(0, SRC)

#: Rows of the offline-judge runs: enough for the worker processes (64 or more) and to
#: still be running when a worker is stopped.
ROWS_OFFLINE = 400
#: name -> (function, what it attacks)
ATTACKS: dict[str, tuple[Callable[[Path], tuple[bool, str]], str]] = {}


def attack(name: str, what: str) -> Callable[..., object]:
    def register(fn: Callable[[Path], tuple[bool, str]]) -> Callable[[Path], tuple[bool, str]]:
        ATTACKS[name] = (fn, what)
        return fn

    return register


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, **extra}


def ragmeter(
    *args: str, cwd: Path, timeout: float = 900, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env(**extra),
        timeout=timeout,
    )


def rag_rows(n: int) -> list[dict[str, object]]:
    places = ("Paris", "Rome", "Vienna", "Warsaw", "Berlin")
    return [
        {
            "question_id": f"q{i}",
            "question": f"Where was person {i} born, and when?",
            "answer": f"Person {i} was born in {places[i % 5]} in {1900 + i}. "
            f"They later moved to {places[(i + 2) % 5]}.",
            "contexts": [
                f"Person {i} was born in {places[i % 5]} in {1900 + i}.",
                f"Person {i} lived in {places[(i + 1) % 5]} for ten years.",
            ],
            "reference_answers": [f"In {places[i % 5]}, {1900 + i}."],
        }
        for i in range(n)
    ]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


# -- item 4 and 5: worker processes --------------------------------------------------------


def _workers_of(pid: int) -> list[int]:
    """The offline judge's worker processes of ``pid`` (started ``python -I``)."""
    found = []
    for child in children(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"-I" in argv:
            found.append(child)
    return found


def _offline_run(folder: Path, *, stop: bool) -> tuple[subprocess.CompletedProcess[str], list[int]]:
    write_jsonl(folder / "data.jsonl", rag_rows(ROWS_OFFLINE))
    args = [
        *("evaluate", "data.jsonl", "-m", "faithfulness", "--workers", "2"),
        *("--out", "out.jsonl", "--no-cache", "--no-progress"),
    ]
    # -P: the working directory is not on the parent's sys.path, as with the installed
    # `ragmeter` command (python -m would import the folder's pickle.py in the parent itself).
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "ragmeter", *args],
        cwd=folder,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stopped: list[int] = []
    out = folder / "out.jsonl"
    give_up = time.monotonic() + 600
    while stop and not stopped and proc.poll() is None and time.monotonic() < give_up:
        # once rows are coming, the workers have loaded and hold chunks
        if out.exists() and out.read_bytes().count(b"\n") >= 8:
            for pid in _workers_of(proc.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    stopped.append(pid)
                    break
        time.sleep(0.05)
    try:
        stdout, stderr = proc.communicate(timeout=900)
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr), stopped


@attack("stopped-worker", "item 4: SIGSTOP one of two offline-judge workers mid-run")
def stopped_worker(folder: Path) -> tuple[bool, str]:
    proc, stopped = _offline_run(folder, stop=True)
    if not stopped:
        return False, "no worker process was seen (did the run use its processes?)"
    rows = (
        (folder / "out.jsonl").read_text().splitlines() if (folder / "out.jsonl").exists() else []
    )
    warned = "is stopped" in proc.stderr
    held = proc.returncode == 0 and len(rows) == ROWS_OFFLINE and warned
    return held, f"exit {proc.returncode}, {len(rows)}/{ROWS_OFFLINE} rows, warning: {warned}"


@attack("pickle-in-cwd", "item 5: a pickle.py and sitecustomize.py beside the data")
def pickle_in_cwd(folder: Path) -> tuple[bool, str]:
    marker = folder / "ran.txt"
    for name in ("pickle", "struct", "sitecustomize"):
        (folder / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n")
    proc, _ = _offline_run(folder, stop=False)
    ran = marker.read_text().split() if marker.exists() else []
    started = "did not start" not in proc.stderr
    held = not ran and started and proc.returncode == 0
    return held, f"exit {proc.returncode}, imported from the cwd: {ran or 'nothing'}"


# -- item 6 and 18: caches -------------------------------------------------------------------


def _relevance_scores(
    folder: Path, cache: Path, name: str
) -> tuple[subprocess.CompletedProcess[str], list[object]]:
    rows = [{"question": r["question"], "contexts": r["contexts"]} for r in rag_rows(3)]
    write_jsonl(folder / "rel.jsonl", rows)
    proc = ragmeter(
        *("evaluate", "rel.jsonl", "-m", "context_relevance", "--out", name, "--no-cache"),
        cwd=folder,
        RAGMETER_CACHE_DIR=str(cache),
    )
    out = folder / name
    scores = (
        [json.loads(x)["scores"]["context_relevance"] for x in out.read_text().splitlines()]
        if out.exists()
        else []
    )
    return proc, scores


def _damaged_model(folder: Path, damage: Callable[[Path], None]) -> tuple[bool, str]:
    from ragmeter.models._runtime import cache_dir

    user_cache = cache_dir()
    proc, intact = _relevance_scores(folder, user_cache, "intact.jsonl")
    if proc.returncode != 0:
        return False, f"the intact run failed: {proc.stderr[-300:]}"
    converted = sorted((user_cache / "onnx").glob("gemma*int8*"))
    if not converted:
        return False, "no converted Gemma found in the user cache"
    private = folder / "cache"
    copy = private / "onnx" / converted[-1].name
    shutil.copytree(converted[-1], copy)
    damage(copy / "model.onnx.data")
    proc, again = _relevance_scores(folder, private, "again.jsonl")
    said = "is damaged" in proc.stderr
    held = proc.returncode == 0 and again == intact and said
    return held, f"exit {proc.returncode}, scores {again} vs intact {intact}, warning: {said}"


@attack("overwritten-model", "item 6: 4 MiB of the converted relevance model overwritten")
def overwritten_model(folder: Path) -> tuple[bool, str]:
    def overwrite(path: Path) -> None:
        with path.open("r+b") as fh:
            fh.seek(path.stat().st_size // 2)
            fh.write(b"\0" * (4 << 20))

    return _damaged_model(folder, overwrite)


@attack("truncated-model", "item 18: the converted model's weights truncated")
def truncated_model(folder: Path) -> tuple[bool, str]:
    return _damaged_model(folder, lambda path: os.truncate(path, path.stat().st_size // 3))


@attack("verdict-cache", "item 6: cached offline verdicts with support 7.5 and NaN")
def verdict_cache(folder: Path) -> tuple[bool, str]:
    from ragmeter.cache import _checksum

    write_jsonl(folder / "data.jsonl", rag_rows(6))
    cache = folder / "cache.sqlite3"
    args = (
        "evaluate",
        "data.jsonl",
        "-m",
        "faithfulness_support",
        "--cache",
        str(cache),
        "--workers",
        "1",
    )
    first = ragmeter(*args, "--out", "first.jsonl", cwd=folder)
    if first.returncode != 0:
        return False, first.stderr[-300:]
    seen = []
    for value in (7.5, math.nan):
        with sqlite3.connect(cache) as conn:
            for key, reply in conn.execute(
                "SELECT key, reply FROM replies WHERE prompt = 'offline-verify'"
            ).fetchall():
                data = json.loads(reply)
                data["support"] = [[value for _ in row] for row in data["support"]]
                text = json.dumps(data)
                conn.execute(
                    "UPDATE replies SET reply = ?, checksum = ? WHERE key = ?",
                    (text, _checksum(text), key),
                )
        again = ragmeter(*args, "--out", f"again-{value}.jsonl", cwd=folder)
        if again.returncode != 0:
            return False, f"{value}: exit {again.returncode} {again.stderr[-300:]}"
        same = [
            json.loads(x)["scores"] for x in (folder / "first.jsonl").read_text().splitlines()
        ] == [
            json.loads(x)["scores"]
            for x in (folder / f"again-{value}.jsonl").read_text().splitlines()
        ]
        seen.append(f"{value}: {'same scores' if same else 'CHANGED scores'}")
        if not same:
            return False, "; ".join(seen)
    return True, "; ".join(seen)


@attack("cache-warning-once", "item 18: a garbage judge cache is warned about once")
def cache_warning_once(folder: Path) -> tuple[bool, str]:
    write_jsonl(folder / "data.jsonl", rag_rows(4))
    (folder / "garbage.sqlite3").write_bytes(os.urandom(64 * 1024))
    proc = ragmeter(
        "evaluate",
        "data.jsonl",
        "-m",
        "faithfulness",
        "--cache",
        "garbage.sqlite3",
        "--workers",
        "1",
        cwd=folder,
    )
    count = proc.stderr.count("is not used")
    held = proc.returncode == 0 and count == 1 and "RuntimeWarning" not in proc.stderr
    return held, f"exit {proc.returncode}, said {count} time(s)"


@attack("ragchecker-result", "item 18: a RAGChecker file with 'result' for 'results'")
def ragchecker_result(folder: Path) -> tuple[bool, str]:
    row = {
        "query_id": "1",
        "query": "Where?",
        "response": "Paris.",
        "retrieved_context": [{"doc_id": "a", "text": "Paris."}],
    }
    (folder / "checking_inputs.json").write_text(json.dumps({"result": [row]}))
    proc = ragmeter("evaluate", "checking_inputs.json", "-m", "k_precision", cwd=folder)
    flat = " ".join(proc.stderr.split())
    held = proc.returncode == 2 and "Did you mean 'results'?" in flat
    return held, flat[:200]


# -- item 7: outputs ----------------------------------------------------------------------


@attack("outputs", "item 7: every file a command reads, given as its output")
def outputs(folder: Path) -> tuple[bool, str]:
    write_jsonl(folder / "data.jsonl", rag_rows(5))
    write_jsonl(folder / "labels.jsonl", [{"id": "q1", "metric": "token_f1", "value": 0.5}])
    done = ragmeter(
        "evaluate", "data.jsonl", "-m", "token_f1", "--out", "results.jsonl", cwd=folder
    )
    if done.returncode != 0:
        return False, done.stderr[-300:]
    cases = {
        "--labels L --out L": (
            "evaluate",
            "data.jsonl",
            "-m",
            "token_f1",
            "--labels",
            "labels.jsonl",
            "--out",
            "labels.jsonl",
        ),
        "--labels L --report L": (
            "evaluate",
            "data.jsonl",
            "-m",
            "token_f1",
            "--labels",
            "labels.jsonl",
            "--out",
            "o.jsonl",
            "--report",
            "labels.jsonl",
        ),
        "label R -o DATA": ("label", "results.jsonl", "--sample", "2", "-o", "data.jsonl"),
        "report R -o DATA": ("report", "results.jsonl", "-o", "data.jsonl"),
    }
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    failed = []
    for name, args in cases.items():
        proc = ragmeter(*args, cwd=folder)
        after = {
            p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name in before
        }
        if proc.returncode != 2 or after != before:
            failed.append(f"{name}: exit {proc.returncode}")
    return not failed, "; ".join(failed) or f"{len(cases)} refused, every file as it was"


# -- item 12: secrets ---------------------------------------------------------------------


@attack("secrets", "item 12: the resume command after SIGINT with --base-url user:password@")
def secrets(folder: Path) -> tuple[bool, str]:
    from ragmeter.testing.server import TestServer

    write_jsonl(folder / "data.jsonl", rag_rows(40))
    password = "Tr0ub4dor-and-3"
    with TestServer(latency=0.05) as server:
        url = server.base_url.replace("://", f"://alice:{password}@", 1)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ragmeter",
                "evaluate",
                "data.jsonl",
                "-m",
                "faithfulness",
                "--judge",
                "openai:test-model",
                "--base-url",
                url,
                "--out",
                "out.jsonl",
                "--batch-size",
                "2",
                "--max-concurrency",
                "1",
                "--no-cache",
            ],
            cwd=folder,
            env=env(OPENAI_API_KEY="test-key"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        give_up = time.monotonic() + 120
        out = folder / "out.jsonl"
        while proc.poll() is None and time.monotonic() < give_up:
            if out.exists() and out.read_bytes().count(b"\n") >= 2:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    held = proc.returncode == 130 and password not in err and "Continue with" in err
    return held, f"exit {proc.returncode}, password on stderr: {password in err}"


# -- item 15: the core install --------------------------------------------------------------


@attack(
    "core-install", "item 15: pip install ragmeter (core only) in a bare venv, then ragmeter --help"
)
def core_install(folder: Path) -> tuple[bool, str]:
    target = folder / "venv"
    venv.EnvBuilder(with_pip=True).create(target)
    python = target / "bin" / "python"
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if pip.returncode != 0:
        return False, f"pip install failed: {pip.stderr[-300:]}"
    helped = subprocess.run(
        [str(target / "bin" / "ragmeter"), "--help"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
    )
    return (
        helped.returncode == 0,
        f"ragmeter --help exit {helped.returncode} {helped.stderr[-200:]}",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated attack names")
    parser.add_argument("--install", action="store_true", help="also run core-install (slow)")
    parser.add_argument("--list", action="store_true", help="list the attacks and exit")
    args = parser.parse_args()
    if args.list:
        for name, (_, what) in ATTACKS.items():
            print(f"{name:20} {what}")
        return
    names = (
        args.only.split(",")
        if args.only
        else [n for n in ATTACKS if n != "core-install" or args.install]
    )
    unknown = [n for n in names if n not in ATTACKS]
    if unknown:
        sys.exit(f"unknown attack(s): {', '.join(unknown)}; --list shows them")
    failed = 0
    for name in names:
        fn, what = ATTACKS[name]
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"attack-{name}-") as tmp:
            try:
                held, detail = fn(Path(tmp))
            except Exception as exc:  # an attack that crashes the script failed
                held, detail = False, f"{type(exc).__name__}: {exc}"
        failed += not held
        print(
            f"{'HELD  ' if held else 'FAILED'} {name:20} {time.monotonic() - started:6.1f} s  "
            f"{what}: {detail}",
            flush=True,
        )
    print(f"{len(names) - failed} held, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
