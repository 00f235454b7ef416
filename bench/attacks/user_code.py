"""Issue 36's attacks on user code, resume, early errors and exit codes (items 1, 2, 3, 11,
13, 14, 16, 17), as a hostile user runs them: the real ``ragmeter`` command in a subprocess,
real signals, real files. Each attack prints HELD or FAILED with what it saw; the script
exits 1 when any failed, so the next round starts from here.

Usage::

    python bench/attacks/user_code.py               # every attack
    python bench/attacks/user_code.py --only hang_deadline,disk_full
    python bench/attacks/user_code.py --list

Nothing here needs a model or the network: the metrics are a plugin written into a temporary
folder, the judge is ragmeter's test server in this process. ``disk_full`` mounts a 64 KiB
tmpfs (root only; otherwise a file size limit stands in for it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = str(ROOT / "src")
sys.path.insert(0, SRC)

#: name -> (function, what it attacks)
ATTACKS: dict[str, tuple[Callable[[Path], tuple[bool, str]], str]] = {}

HOSTILE = """
import asyncio
import sys
import time

import ragmeter

print("printed as the plugin is imported")


@ragmeter.metric(name="hostile", needs=("answer",))
def hostile(sample):
    kind = sample.answer
    if kind == "tuple_key":
        return ragmeter.Score(0.5, details={(1, 2): "x"})
    if kind == "cycle":
        details = {}
        details["self"] = details
        return ragmeter.Score(0.5, details=details)
    if kind == "exit":
        sys.exit(3)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "print":
        print("printed by the metric")
    if kind == "hang":
        while True:
            time.sleep(0.05)
    return 1.0


@ragmeter.metric(name="hostile_async", needs=("answer",))
async def hostile_async(sample):
    if sample.answer == "cancel":
        raise asyncio.CancelledError
    if sample.answer == "exit":
        raise SystemExit(4)
    if sample.answer == "print":
        print("printed by the async metric")
    return 1.0
"""


def attack(name: str, what: str) -> Callable[..., object]:
    def register(fn: Callable[[Path], tuple[bool, str]]) -> Callable[[Path], tuple[bool, str]]:
        ATTACKS[name] = (fn, what)
        return fn

    return register


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC}


def ragmeter(
    *args: str, cwd: Path, timeout: float = 300, preexec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "ragmeter", *args],
            cwd=cwd,
            env=env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            preexec_fn=preexec,
        )
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, -1, "", f"still running after {timeout} s")


def project(folder: Path, answers: list[str]) -> Path:
    (folder / "hostile.py").write_text(HOSTILE)
    rows = [{"question_id": f"q{i}", "answer": a, "contexts": ["c"]} for i, a in enumerate(answers)]
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def complete_rows(path: Path) -> dict[int, dict]:
    if not path.exists():
        return {}
    text = path.read_text()
    return {r["index"]: r for r in map(json.loads, text[: text.rfind("\n") + 1].splitlines())}


def tail(text: str) -> str:
    return " | ".join(text.strip().splitlines()[-2:])[:300]


PLUGIN = ("evaluate", "data.jsonl", "--plugin", "hostile")


@attack("unwritable_details", "item 1: a Score with a tuple key or a cycle in its details")
def unwritable_details(tmp: Path) -> tuple[bool, str]:
    project(tmp, ["fine", "tuple_key", "cycle", "fine"])
    proc = ragmeter(*PLUGIN, "-m", "hostile", "--out", "out.jsonl", "-q", cwd=tmp)
    rows = complete_rows(tmp / "out.jsonl")
    ok = proc.returncode == 0 and len(rows) == 4 and "hostile" in rows[1]["failures"]
    return ok, f"exit {proc.returncode}, {len(rows)} rows; {tail(proc.stderr)}"


@attack("exits_and_interrupts", "item 1: sys.exit, KeyboardInterrupt, CancelledError inside")
def exits_and_interrupts(tmp: Path) -> tuple[bool, str]:
    project(tmp, ["fine", "exit", "interrupt", "cancel", "fine"])
    proc = ragmeter(*PLUGIN, "-m", "hostile,hostile_async", "--out", "out.jsonl", "-q", cwd=tmp)
    rows = complete_rows(tmp / "out.jsonl")
    failed = sum(len(r["failures"]) for r in rows.values())
    ok = proc.returncode == 0 and len(rows) == 5 and failed == 4
    return ok, f"exit {proc.returncode}, {len(rows)} rows, {failed} failures; {tail(proc.stderr)}"


@attack("prints_on_stdout", "item 2: prints of a plugin and its metrics with --out -")
def prints_on_stdout(tmp: Path) -> tuple[bool, str]:
    project(tmp, ["print", "fine", "print"])
    proc = ragmeter(*PLUGIN, "-m", "hostile,hostile_async", "--out", "-", "-q", cwd=tmp)
    bad = [line for line in proc.stdout.splitlines() if not line.startswith("{")]
    ok = proc.returncode == 0 and not bad and len(proc.stdout.splitlines()) == 3
    return ok, f"exit {proc.returncode}, non-JSON lines on stdout: {bad[:3]}"


def _hanging(tmp: Path) -> list[str]:
    project(tmp, ["fine"] * 4 + ["hang"] + ["fine"] * 3)
    return [*PLUGIN, "-m", "hostile", "--out", "out.jsonl", "--batch-size", "2"]


@attack("hang_deadline", "item 3: a sync metric that never returns, --deadline 5")
def hang_deadline(tmp: Path) -> tuple[bool, str]:
    started = time.monotonic()
    proc = ragmeter(*_hanging(tmp), "--deadline", "5", "-q", cwd=tmp, timeout=120)
    took = time.monotonic() - started
    rows = complete_rows(tmp / "out.jsonl")
    ok = proc.returncode == 2 and "deadline" in proc.stderr and len(rows) >= 1
    return ok, f"exit {proc.returncode} after {took:.0f} s, {len(rows)} rows kept"


def _signalled(tmp: Path, sig: signal.Signals) -> tuple[bool, str]:
    out = tmp / "out.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", *_hanging(tmp)],
        cwd=tmp,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while len(complete_rows(out)) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    try:
        _, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        return False, f"{sig.name} ignored: killed after 60 s"
    rows = complete_rows(out)
    ok = proc.returncode == 128 + sig and "Continue with:" in stderr and len(rows) >= 4
    ok = ok and "Exception ignored" not in stderr
    return ok, f"exit {proc.returncode}, {len(rows)} rows kept; {tail(stderr)}"


@attack("hang_sigterm", "item 3: SIGTERM while a sync metric hangs")
def hang_sigterm(tmp: Path) -> tuple[bool, str]:
    return _signalled(tmp, signal.SIGTERM)


@attack("hang_sigint", "item 3: one Ctrl-C (SIGINT) while a sync metric hangs")
def hang_sigint(tmp: Path) -> tuple[bool, str]:
    return _signalled(tmp, signal.SIGINT)


def _cut(path: Path, keep: int) -> None:
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:keep]))


@attack("edited_plugin_resume", "item 11: --resume after the metric's code changed")
def edited_plugin_resume(tmp: Path) -> tuple[bool, str]:
    project(tmp, ["fine"] * 6)
    args = (*PLUGIN, "-m", "hostile", "--out", "out.jsonl", "-q")
    first = ragmeter(*args, cwd=tmp)
    _cut(tmp / "out.jsonl", 3)
    (tmp / "hostile.py").write_text(HOSTILE.replace("return 1.0\n\n\n@", "return 0.0\n\n\n@"))
    proc = ragmeter(*args, "--resume", cwd=tmp)
    ok = first.returncode == 0 and proc.returncode == 2 and "other code" in proc.stderr
    return ok, f"exit {proc.returncode}; {tail(proc.stderr)}"


@attack("fewer_metrics_resume", "item 16: --resume with fewer metrics than the file")
def fewer_metrics_resume(tmp: Path) -> tuple[bool, str]:
    project(tmp, ["fine"] * 6)
    ragmeter(*PLUGIN, "-m", "hostile,hostile_async", "--out", "out.jsonl", "-q", cwd=tmp)
    _cut(tmp / "out.jsonl", 2)
    proc = ragmeter(*PLUGIN, "-m", "hostile", "--out", "out.jsonl", "--resume", "-q", cwd=tmp)
    ok = proc.returncode == 2 and "does not compute: hostile_async" in proc.stderr
    return ok, f"exit {proc.returncode}; {tail(proc.stderr)}"


@attack("broken_labels", "item 13: a broken --labels file, reported before scoring?")
def broken_labels(tmp: Path) -> tuple[bool, str]:
    project(tmp, ["fine"] * 20)
    (tmp / "labels.jsonl").write_text('{"id": "q1", "metric": "hostile", "label": 1}\n{"id": \n')
    proc = ragmeter(
        *PLUGIN, "-m", "hostile", "--out", "out.jsonl", "--labels", "labels.jsonl", cwd=tmp
    )
    ok = proc.returncode == 2 and not (tmp / "out.jsonl").exists()
    return ok, f"exit {proc.returncode}, results written: {(tmp / 'out.jsonl').exists()}"


def _mount_small(folder: Path) -> bool:
    folder.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    return made.returncode == 0


@attack("disk_full", "item 13: the results file's disk fills up (tmpfs, or RLIMIT_FSIZE)")
def disk_full(tmp: Path) -> tuple[bool, str]:
    project(tmp, [f"fine and a long answer number {i}" for i in range(2000)])
    small = tmp / "small"
    mounted = _mount_small(small)
    out = small / "out.jsonl" if mounted else tmp / "out.jsonl"

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))

    try:
        proc = ragmeter(
            *PLUGIN,
            "-m",
            "hostile",
            "--out",
            str(out),
            "--batch-size",
            "16",
            "-q",
            cwd=tmp,
            preexec=None if mounted else limit,
        )
    finally:
        if mounted:
            subprocess.run(["umount", str(small)], check=False)
    named = f"Writing the results to {out} failed" in proc.stderr
    ok = proc.returncode == 2 and named and "Continue with:" in proc.stderr
    how = "tmpfs" if mounted else "RLIMIT_FSIZE"
    return ok, f"{how}: exit {proc.returncode}; {tail(proc.stderr)}"


@attack("dry_run_resume", "item 13: --dry-run --resume on a results file with a broken line")
def dry_run_resume(tmp: Path) -> tuple[bool, str]:
    project(tmp, ["fine"] * 10)
    args = (*PLUGIN, "-m", "hostile", "--out", "out.jsonl", "-q")
    ragmeter(*args, cwd=tmp)
    lines = (tmp / "out.jsonl").read_text().splitlines(keepends=True)
    (tmp / "out.jsonl").write_text("".join(lines[:3]) + "{broken\n" + "".join(lines[4:6]))
    real = ragmeter(*args, "--resume", cwd=tmp)
    dry = ragmeter(*args, "--resume", "--dry-run", cwd=tmp)
    ok = real.returncode == dry.returncode == 2 and real.stderr == dry.stderr
    return ok, f"run exit {real.returncode}, dry run exit {dry.returncode}; {tail(dry.stderr)}"


@attack("criteria_judge_failures", "item 14: every criterion fails on the judge's replies")
def criteria_judge_failures(tmp: Path) -> tuple[bool, str]:
    from ragmeter.testing.server import TestServer

    project(tmp, ["See POL-1.", "See POL-2."])
    (tmp / "criteria.toml").write_text(
        '[[criteria]]\nname = "cites_policy"\nquestion = "Does it cite a policy?"\n'
        'fields = ["answer"]\n'
    )
    with TestServer() as server:
        server.configure(faults=("malformed",), fault_rate=1.0)
        proc = ragmeter(
            "evaluate", "data.jsonl", "--criteria", "criteria.toml",
            "-m", "k_precision,cites_policy", "--judge", "openai:test-model",
            "--base-url", server.base_url, "--no-cache", "--max-retries", "0", "-q",
            cwd=tmp,
        )  # fmt: skip
    ok = proc.returncode == 2 and "failed on the judge's replies" in proc.stderr
    return ok, f"exit {proc.returncode}; {tail(proc.stderr)}"


@attack("huge_repeats", "item 14: --repeats 100000000 --dry-run")
def huge_repeats(tmp: Path) -> tuple[bool, str]:
    project(tmp, ["fine"])
    started = time.monotonic()
    proc = ragmeter(
        "evaluate", "data.jsonl", "-m", "faithfulness", "--judge", "openai:gpt-4o-mini",
        "--repeats", "100000000", "--dry-run", cwd=tmp, timeout=120,
    )  # fmt: skip
    took = time.monotonic() - started
    ok = proc.returncode == 2 and "--repeats must be" in proc.stderr
    return ok, f"exit {proc.returncode} after {took:.1f} s; {tail(proc.stderr)}"


@attack("sigkill_resume_calls", "item 17: SIGKILL mid-run, calls asked again <= concurrency")
def sigkill_resume_calls(tmp: Path) -> tuple[bool, str]:
    test = ROOT / "tests/reliability/test_crash_resume.py"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return proc.returncode == 0, tail(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated attack names")
    parser.add_argument("--list", action="store_true", help="list the attacks")
    args = parser.parse_args()
    if args.list:
        for name, (_, what) in ATTACKS.items():
            print(f"{name:26} {what}")
        return 0
    chosen = args.only.split(",") if args.only else list(ATTACKS)
    failed = 0
    for name in chosen:
        fn, what = ATTACKS[name]
        with tempfile.TemporaryDirectory(prefix=f"ragmeter-{name}-") as folder:
            try:
                held, seen = fn(Path(folder))
            except Exception as exc:  # an attack that crashed is a failure to look at
                held, seen = False, f"{type(exc).__name__}: {exc}"
        failed += not held
        print(f"{'HELD  ' if held else 'FAILED'} {name:26} {what}\n       {seen}", flush=True)
    print(f"{len(chosen) - failed} held, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
