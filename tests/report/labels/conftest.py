"""A run to label, written by ``ragmeter.evaluate`` with a scripted judge, and a headless
Chromium driven through the Chrome DevTools Protocol (CDP) over a pipe: real key presses and
clicks (``Input.dispatchKeyEvent``, ``Input.dispatchMouseEvent``) and real downloads.

The suite runs with --import-mode=importlib, so tests reach these helpers through fixtures.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.judges.base import Analysis, AnalyzeRequest
from ragmeter.judges.fake import FakeJudge, judged_by, verbatim

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)

#: Rows whose answers' sentences are the claims; a sentence found verbatim in a context is
#: supported there, and the context's span is its evidence.
CONTEXTS = ["Paris is the capital of France. It has 2 million people.", "The Seine runs there."]


def make_inputs(n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        rows.append(
            {
                "question_id": f"q{i}",
                "question": f"Tell me about Paris ({i}) <script>document.title='PWNED'</script>",
                "answer": f"Paris is the capital of France. The Seine runs there. Row {i} is odd.",
                "contexts": CONTEXTS,
            }
        )
    return rows


def _sentences(request: AnalyzeRequest) -> Analysis:
    parts = [s.strip() for s in (request.answer or "").split(". ") if s.strip()]
    return Analysis(answer_claims=tuple(p if p.endswith(".") else p + "." for p in parts))


@pytest.fixture(scope="session")
def labelled_run(tmp_path_factory) -> Path:
    """Results of faithfulness and k_precision on 12 rows (3 claims each), with the input
    file the run record names beside them."""
    folder = tmp_path_factory.mktemp("label_run")
    data = folder / "input.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in make_inputs(12)), encoding="utf-8")
    judge = FakeJudge(analyze=_sentences, verify=judged_by(verbatim))
    out = folder / "results.jsonl"
    ragmeter.evaluate(
        str(data), ["faithfulness", "k_precision"], judge=judge, out=str(out), progress=False
    )
    return out


def _sentences_of_both(request: AnalyzeRequest) -> Analysis:
    def split(text: str | None) -> tuple[str, ...]:
        return tuple(s.strip() + "." for s in (text or "").split(".") if s.strip())

    return Analysis(
        answer_claims=split(request.answer),
        reference_claims=tuple(split(r) for r in request.references),
    )


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory) -> Path:
    """Results of claim_recall (reference claims checked against the answer) and
    noise_sensitivity_relevant on 6 rows: two references of 2 and 1 claims each, of which the
    answer states "Paris is the capital of France." and "The Seine runs there."."""
    folder = tmp_path_factory.mktemp("reference_run")
    rows = [
        {
            "question_id": f"q{i}",
            "question": f"Tell me about Paris ({i})",
            "answer": f"Paris is the capital of France. The Seine runs there. Row {i}.",
            "contexts": CONTEXTS,
            "reference_answers": [
                "Paris is the capital of France. It has a tower.",
                "The Seine runs there.",
            ],
        }
        for i in range(6)
    ]
    data = folder / "input.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    judge = FakeJudge(analyze=_sentences_of_both, verify=judged_by(verbatim))
    out = folder / "results.jsonl"
    ragmeter.evaluate(
        str(data),
        ["claim_recall", "noise_sensitivity_relevant"],
        judge=judge,
        out=str(out),
        progress=False,
    )
    return out


#: (code, Windows virtual key code, text) of the keys that are not a letter or a digit.
_KEYS = {"Enter": ("Enter", 13, "\r"), ".": ("Period", 190, "."), "Escape": ("Escape", 27, "")}


class Browser:
    """One headless Chromium page, driven by CDP messages over ``--remote-debugging-pipe``
    (NUL-terminated JSON on file descriptors 3 and 4)."""

    def __init__(self, profile: Path, downloads: Path) -> None:
        assert CHROMIUM is not None
        profile.mkdir(parents=True, exist_ok=True)
        downloads.mkdir(parents=True, exist_ok=True)
        self.downloads = downloads
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds() -> None:
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.call(
            "Browser.setDownloadBehavior",
            {"behavior": "allowAndName", "downloadPath": str(downloads), "eventsEnabled": True},
        )
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.call("Page.enable", session=self.session)
        self.call("Runtime.enable", session=self.session)

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_chrome], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("Chromium sent nothing in time")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise EOFError("Chromium closed its pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read(60)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, match=lambda params: True, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and match(event.get("params", {})):
                    return self.events.pop(i)["params"]
            self.events.append(self._read(max(deadline - time.monotonic(), 0)))

    def open(self, page: Path) -> None:
        self.events.clear()
        self.call("Page.navigate", {"url": page.resolve().as_uri()}, session=self.session)
        self.wait_event("Page.loadEventFired")

    def reload(self) -> None:
        self.events.clear()
        self.call("Page.reload", session=self.session)
        self.wait_event("Page.loadEventFired")

    def reload_until(self, expression: str, expected: Any, timeout: float = 60.0) -> Any:
        """Reload until ``expression`` gives ``expected`` (or ``timeout`` passes), and return
        what it gave last. The page hands its localStorage writes to the browser process
        asynchronously: on a loaded machine a reload at once read the state before them
        (the writes were not lost; a later reload saw them, now that opening the page no
        longer writes its state back)."""
        deadline = time.monotonic() + timeout
        while True:
            self.reload()
            value = self.js(expression)
            if value == expected or time.monotonic() > deadline:
                return value
            time.sleep(0.2)

    def js(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session=self.session,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def press(self, key: str) -> None:
        """A real key press (down, then up) as a person's keyboard sends it."""
        code, vk, text = _KEYS.get(key) or (
            (f"Key{key.upper()}", ord(key.upper()), key)
            if key.isalpha()
            else (f"Digit{key}", ord(key), key)
        )
        for kind in ("keyDown", "keyUp"):
            params = {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": vk}
            if kind == "keyDown" and text:
                params["text"] = text
            self.call("Input.dispatchKeyEvent", params, session=self.session)

    def type(self, text: str) -> None:
        for char in text:
            self.press(char)

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the first element ``selector`` finds."""
        box = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                session=self.session,
            )

    def download(self, selector: str) -> tuple[str, bytes]:
        """Click ``selector`` and return the download's suggested name and bytes."""
        self.click(selector)
        began = self.wait_event("Browser.downloadWillBegin")
        self.wait_event(
            "Browser.downloadProgress",
            lambda p: p.get("guid") == began["guid"] and p.get("state") == "completed",
        )
        return began["suggestedFilename"], (self.downloads / began["guid"]).read_bytes()

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, TimeoutError, RuntimeError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


@pytest.fixture
def browser(tmp_path):
    if CHROMIUM is None:
        pytest.skip(
            "headless Chromium not found on PATH: install the Debian package with "
            "'apt-get install -y chromium' to run the labelling page's browser tests"
        )
    opened = Browser(tmp_path / "profile", tmp_path / "downloads")
    yield opened
    opened.close()
