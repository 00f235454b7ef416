"""Progress of a run shown: a bar (a terminal's or a notebook's) or the caller's function
moves as the runner counts rows done from the families' reports
(:mod:`ragmeter.metrics.progress`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from ragmeter.runner.pace import Pace, clock_text

#: The caller's progress function: ``(rows done, total rows or None)``.
ProgressFunction = Callable[[int, "int | None"], None]


class Progress(Protocol):
    """What the runner moves: rows done. A display may also have ``note(text)`` (a line
    for the reader: a model converting, rows reused) and ``tick()`` (called every second)."""

    def advance(self, rows: int) -> None: ...

    def stop(self) -> None: ...


class CallbackProgress:
    """Calls ``function(done, total)`` on every advance (at most every ``interval`` seconds
    when one is given), and at the end when the last call did not show the last count."""

    def __init__(self, function: ProgressFunction, total: int | None, interval: float = 0.0):
        self.function = function
        self.total = total
        self.interval = interval
        self.done = 0
        self._last = -float("inf")
        self._shown: int | None = None

    def advance(self, rows: int) -> None:
        self.done += rows
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self._call()

    def stop(self) -> None:
        if self._shown != self.done:
            self._call()

    def _call(self) -> None:
        self._shown = self.done
        self.function(self.done, self.total)


class RichBar:
    """rich's bar on standard error: rows done of the total, elapsed time and an ETA from
    measured throughput (:class:`~ragmeter.runner.pace.Pace`: "estimating" until enough rows
    are done). rich draws it in a terminal and, with ipywidgets installed, in a notebook."""

    def __init__(self, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.pace = Pace(total)
        self.done = 0
        self._progress = Progress(
            TextColumn("scoring"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            _eta_column(self.pace),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._progress.add_task("rows", total=total)
        self._progress.start()

    def advance(self, rows: int) -> None:
        self.done += rows
        self.pace.update(self.done, time.monotonic())
        self._progress.advance(self._task, rows)

    def note(self, text: str) -> None:
        """A line above the bar."""
        self._progress.console.print(text, highlight=False, markup=False)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            # rich leaves a notebook's widget at its last timed refresh: draw the last count.
            self._progress.refresh()
            self._progress.stop()


def _eta_column(pace: Pace) -> Any:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class EtaColumn(ProgressColumn):
        """The time left at the measured pace, or "estimating" before there is one."""

        def render(self, task: Any) -> Any:
            seconds = pace.seconds_left(time.monotonic())
            shown = "estimating" if seconds is None else clock_text(seconds)
            return Text(shown, style="progress.remaining")

    return EtaColumn()


class TextBar:
    """One line on standard error, rewritten in place (``\\r``) at most every ``interval``
    seconds: a notebook shows it where rich's bar needs ipywidgets."""

    def __init__(self, total: int | None, *, stream: Any = None, interval: float = 0.5) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.pace = Pace(total)
        self._callback = CallbackProgress(self._draw, total, interval)

    def advance(self, rows: int) -> None:
        self.pace.update(self._callback.done + rows, time.monotonic())
        self._callback.advance(rows)

    def note(self, text: str) -> None:
        (self.stream or sys.stderr).write("\n" + text + "\n")

    def stop(self) -> None:
        self._callback.stop()
        (self.stream or sys.stderr).write("\n")

    def _draw(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        line = progress_line(done, total, elapsed=now - self.started, pace=self.pace, now=now)
        (self.stream or sys.stderr).write("\r" + line)
        (self.stream or sys.stderr).flush()


class LineBar:
    """Without a terminal (a CI log, output piped to a file): a line on standard error every
    ``interval`` seconds of the run (a minute by default), rows done, total, rate and ETA; a
    last line at the end when any was written. A run shorter than ``interval`` writes nothing.

    :meth:`tick` is what writes: the run's watch (:mod:`ragmeter.runner.watch`) calls it every
    second of its clock, so a run that stops moving still gets its line."""

    def __init__(
        self,
        total: int | None,
        *,
        stream: Any = None,
        interval: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.pace = Pace(total)
        self.total = total
        self._next = self.started + interval
        self._lines = 0

    def advance(self, rows: int) -> None:
        self.done += rows
        self.pace.update(self.done, self.clock())

    def tick(self) -> None:
        now = self.clock()
        if now < self._next:
            return
        self._next = now + self.interval
        self._write(now)

    def note(self, text: str) -> None:
        self._print(text)

    def stop(self) -> None:
        if self._lines:
            self._write(self.clock())

    def _write(self, now: float) -> None:
        self._lines += 1
        self._print(
            progress_line(
                self.done, self.total, elapsed=now - self.started, pace=self.pace, now=now
            )
        )

    def _print(self, text: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(text + "\n")
        stream.flush()


def progress_line(
    done: int, total: int | None, *, elapsed: float, pace: Pace | None = None, now: float = 0.0
) -> str:
    """``"scoring 25/50 rows (50%), 0:00:12, 2.1 rows/s, ETA 0:00:12"``; the rate and ETA
    from ``pace`` measured at ``now``, "ETA estimating" until it has enough rows."""
    rate = pace.rate(now) if pace is not None else None
    speed = "" if rate is None else f", {rate:.3g} rows/s"
    if total is None:
        return f"scoring {done} rows, {clock_text(elapsed)}{speed}"
    share = done / total if total else 1.0
    seconds = pace.seconds_left(now) if pace is not None else None
    eta = "estimating" if seconds is None else clock_text(seconds)
    return f"scoring {done}/{total} rows ({share:.0%}), {clock_text(elapsed)}{speed}, ETA {eta}"


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (a notebook, JupyterLab, VS Code, Colab)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    return shell is not None and hasattr(shell, "kernel")


def _has_widgets() -> bool:
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None


def make_progress(
    setting: bool | ProgressFunction | None,
    total: int | None,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> Progress | None:
    """The progress display ``setting`` asks for: a function is called with (rows done,
    total); ``None`` shows a bar on a terminal or in a notebook and a line a minute
    elsewhere (:class:`LineBar`: a CI log), ``True`` a bar always, ``False`` nothing. In a
    notebook without ipywidgets the bar is one line of text rewritten in place."""
    if callable(setting):
        return CallbackProgress(setting, total)
    if setting is False:
        return None
    notebook = in_notebook()
    if setting is None and not (notebook or sys.stderr.isatty()):
        return LineBar(total, clock=clock)
    if notebook and not _has_widgets():
        return TextBar(total)
    return RichBar(total)


def quiet_third_party_bars() -> None:
    """For a process that is a ragmeter command: other libraries' progress bars off (tqdm's,
    Hugging Face's model-loading and conversion bars), unless the environment already says.

    tqdm reads ``TQDM_DISABLE`` when it is first imported, so this runs before any model."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")


@contextlib.contextmanager
def library_bars_off(*, tqdm: bool = True) -> Iterator[None]:
    """Other libraries' bars off for the duration of a run in a caller's process, restored
    after: Hugging Face's (those imported, and those the run imports) and, with ``tqdm``,
    every tqdm bar (transformers' GGUF conversion bar has no switch of its own)."""
    restore: list[Callable[[], Any]] = []
    previous = os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS")
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    switches = (_hub_bars, _transformers_bars, _datasets_bars) + ((_tqdm_bars,) if tqdm else ())
    try:
        for switch in switches:
            with contextlib.suppress(Exception):
                undo = switch()
                if undo is not None:
                    restore.append(undo)
        yield
    finally:
        for undo in reversed(restore):
            with contextlib.suppress(Exception):
                undo()
        if previous is None:
            os.environ.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
        else:
            os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = previous


def _hub_bars() -> Callable[[], Any] | None:
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is None or hub.are_progress_bars_disabled():
        return None
    hub.disable_progress_bars()
    return hub.enable_progress_bars


def _transformers_bars() -> Callable[[], Any] | None:
    logging = sys.modules.get("transformers.utils.logging")
    if logging is None or not logging.is_progress_bar_enabled():
        return None
    logging.disable_progress_bar()
    return logging.enable_progress_bar


def _datasets_bars() -> Callable[[], Any] | None:
    datasets = sys.modules.get("datasets.utils.logging")
    if datasets is None or not datasets.is_progress_bar_enabled():
        return None
    datasets.disable_progress_bar()
    return datasets.enable_progress_bar


#: Runs in this process that have tqdm's bars off, and tqdm's own ``__init__`` to put back
#: when the last of them ends (runs can overlap: threads, ``aevaluate`` calls gathered).
_TQDM_OFF: dict[str, Any] = {"runs": 0, "init": None}
_TQDM_LOCK = threading.Lock()


def _tqdm_bars() -> Callable[[], Any] | None:
    """Every tqdm bar made meanwhile is disabled (what ``TQDM_DISABLE=1`` does at import).

    Counted, not nested: the first run to start switches tqdm off and the last to end puts
    its own ``__init__`` back, whatever order overlapping runs end in."""
    import importlib.util

    if "tqdm.std" not in sys.modules and importlib.util.find_spec("tqdm") is None:
        return None
    from tqdm import std

    cls = std.tqdm
    with _TQDM_LOCK:
        if _TQDM_OFF["runs"] == 0:
            _TQDM_OFF["init"] = cls.__dict__["__init__"]
            cls.__init__ = functools.partialmethod(_TQDM_OFF["init"], disable=True)  # type: ignore[method-assign]
        _TQDM_OFF["runs"] += 1

    def undo() -> None:
        with _TQDM_LOCK:
            _TQDM_OFF["runs"] -= 1
            if _TQDM_OFF["runs"] == 0:
                cls.__init__ = _TQDM_OFF["init"]  # type: ignore[method-assign]
                _TQDM_OFF["init"] = None

    return undo
