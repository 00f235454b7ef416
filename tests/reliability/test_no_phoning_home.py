"""The offline default makes no network connection, its own or its dependencies' (issue 15,
item 12). onnxruntime's telemetry is on by default: it writes a device id and an event store
under ``~/.cache/Microsoft/`` and would send them to an events endpoint. ragmeter turns it off
before onnxruntime is imported.

The run happens in a fresh process with HOME in a temporary folder, proxies pointing at a
closed port, and a socket guard that records (and refuses) every connection that is not local;
where ``strace`` works, native code's connections are traced too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ragmeter

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="socket guard and strace: Linux")

GUARDED_RUN = textwrap.dedent(
    """
    import socket, sys

    attempts = []
    _connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex
    _getaddrinfo = socket.getaddrinfo

    def _local(sock, address):
        if sock.family == getattr(socket, "AF_UNIX", None):
            return True
        host = address[0] if isinstance(address, tuple) else address
        return host in ("127.0.0.1", "::1", "localhost")

    def connect(self, address):
        if not _local(self, address):
            attempts.append(repr(address))
            raise ConnectionRefusedError(f"socket guard: {address!r}")
        return _connect(self, address)

    def connect_ex(self, address):
        if not _local(self, address):
            attempts.append(repr(address))
            return 111
        return _connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host not in (None, "127.0.0.1", "::1", "localhost"):
            attempts.append(f"resolve {host!r}")
            raise socket.gaierror(f"socket guard: {host!r}")
        return _getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    socket.getaddrinfo = getaddrinfo

    import ragmeter
    rows = [
        {"question": "Where is Paris?", "answer": "Paris is in France.",
         "contexts": ["Paris is the capital of France."]},
    ] * 2
    result = ragmeter.evaluate(rows, ["response_relevancy", "faithfulness"], progress=False)
    assert not result.failures(), result.failures()
    import onnxruntime  # loaded by the run
    import time
    time.sleep(1)  # give a telemetry thread the time to try
    print("ATTEMPTS", attempts)
    sys.exit(3 if attempts else 0)
    """
)


def guarded_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ORT_DISABLE_TELEMETRY", "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK")
    }
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens there
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        HTTP_PROXY=closed,
        HTTPS_PROXY=closed,
        ALL_PROXY=closed,
        http_proxy=closed,
        https_proxy=closed,
        NO_PROXY="",
        PYTHONPATH=str(Path(ragmeter.__file__).parents[1]),
    )
    return env


def test_the_offline_default_connects_nowhere_and_writes_nothing_under_home(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", GUARDED_RUN],
        env=guarded_env(home),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ATTEMPTS []" in proc.stdout
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert not any("Microsoft" in p for p in written), written


def test_no_native_connection_under_strace(tmp_path: Path) -> None:
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed")
    probe = subprocess.run([strace, "-qq", "-o", os.devnull, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"strace cannot trace here: {probe.stderr.decode(errors='replace')[:200]}")
    home = tmp_path / "home"
    home.mkdir()
    trace = tmp_path / "connect.trace"
    command = [strace, "-f", "-qq", "-e", "trace=connect", "-o", str(trace)]
    proc = subprocess.run(
        [*command, sys.executable, "-c", GUARDED_RUN],
        env=guarded_env(home),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outbound = [
        line
        for line in trace.read_text().splitlines()
        if ("AF_INET" in line or "AF_INET6" in line)
        and "127.0.0.1" not in line
        and '"::1"' not in line
    ]
    assert outbound == []
    assert not (home / ".cache" / "Microsoft").exists()
