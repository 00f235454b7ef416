"""Where a run writes, checked before any work: no output may be an input or another output.

A results file written over its own input, or an HTML report written over the results, loses
data that cannot be recomputed without paying for every judge call again. Inputs are every file
a command reads: the data, the labels, a results file, and what a results file's run record
names (the record itself, and the input file the run scored: ``ragmeter report R -o DATA``
would replace the data set). ``check_outputs`` compares paths as the file system sees them
(``..``, symlinks and hard links resolved), refuses an output that is a folder, and one whose
folder cannot be made because a file is in the way or the nearest existing folder is not
writable. Missing folders are made by ``make_parent`` when the output is written.

``-`` as an output means standard output, where the option allows it (``out="-"``); nothing
else may be ``-``, and only one output may take standard output. A file named ``-`` is
written as ``./-``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError, param

__all__ = [
    "SIDECAR_SUFFIX",
    "STDOUT",
    "ReplacingWriter",
    "check_outputs",
    "is_stdout",
    "make_parent",
    "results_lock",
    "sidecar_path",
]

#: The path that means standard output.
STDOUT = "-"
#: What a results file's run record adds to its path.
SIDECAR_SUFFIX = ".run.json"


def sidecar_path(results: str | os.PathLike[str]) -> Path:
    """Where the run record of the results file ``results`` lives: ``<results>.run.json``.

    Examples
    --------
    >>> sidecar_path("out/results.jsonl").as_posix()
    'out/results.jsonl.run.json'
    """
    return Path(f"{os.fspath(results)}{SIDECAR_SUFFIX}")


def is_stdout(value: Any) -> bool:
    """Whether an output path given by a user is ``-``, standard output."""
    return isinstance(value, str | os.PathLike) and os.fspath(value) == STDOUT


def _as_path(value: Any) -> Path | None:
    return Path(value) if isinstance(value, str | os.PathLike) else None


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return False


def _check_writable(label: str, path: Path) -> None:
    if path.is_dir():
        raise ConfigError(
            f"{label} {str(path)!r} is a folder; give a file path, e.g. "
            f"{str(path / 'results.jsonl')!r}."
        )
    parent = path.parent
    while not parent.exists():
        if parent.is_symlink():  # a dangling link
            raise ConfigError(
                f"{label} {str(path)!r}: its folder {str(parent)!r} is a broken link."
            )
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(
            f"{label} {str(path)!r} cannot be written: {str(parent)!r} is a file, not a folder."
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{label} {str(path)!r} cannot be written: the folder {str(parent)!r} is not "
            "writable. Choose another path."
        )


def check_outputs(
    inputs: Mapping[str, Any], outputs: Mapping[str, Any], *, stdout: Collection[str] = ()
) -> None:
    """Raise ``ConfigError`` when an output is an input, two outputs are one file, an output
    is a folder or its folder cannot be made. Labels name the option (``param("out")``);
    values that are not paths (a DataFrame, None) are left out. The outputs labelled in
    ``stdout`` may be ``-`` (standard output), at most one of them; no other may."""
    ins = [(label, p) for label, value in inputs.items() if (p := _as_path(value)) is not None]
    ins += recorded_inputs(ins)
    _check_stdout(outputs, stdout)
    outs = [
        (label, p)
        for label, value in outputs.items()
        if (p := _as_path(value)) is not None and not is_stdout(value)
    ]
    for label, path in outs:
        for in_label, in_path in ins:
            if _same_file(path, in_path):
                raise ConfigError(
                    f"{label} {str(path)!r} is the input ({in_label} {str(in_path)!r}); writing "
                    "there would destroy the data. Give another path for the output."
                )
    for i, (label, path) in enumerate(outs):
        for other_label, other in outs[i + 1 :]:
            if _same_file(path, other):
                raise ConfigError(
                    f"{label} and {other_label} are the same file ({str(path)!r}); one would "
                    "overwrite the other. Give each its own path."
                )
    for label, path in outs:
        _check_writable(label, path)


def recorded_inputs(inputs: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """What the run records beside ``inputs`` name: for each input with a run record
    (``<path>.run.json``), the record and the input file the run scored (its ``data``, as
    given or beside the results), where they exist. A record that cannot be read adds
    nothing (the command reading it says why)."""
    found: list[tuple[str, Path]] = []
    for label, path in inputs:
        record = sidecar_path(path)
        try:
            if not record.is_file():
                continue
            info = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        found.append((f"the run record of {label}", record))
        name = info.get("data") if isinstance(info, dict) else None
        if not isinstance(name, str) or not name or is_stdout(name):
            continue
        places = [Path(name)]
        if not places[0].is_absolute():
            places.append(path.parent / name)
        for place in places:
            with contextlib.suppress(OSError):
                if place.is_file():
                    found.append((f"the input the run record of {label} names", place))
    return found


def _check_stdout(outputs: Mapping[str, Any], allowed: Collection[str]) -> None:
    """At most one output on standard output, and only one whose option allows it."""
    dashed = [label for label, value in outputs.items() if is_stdout(value)]
    for label in dashed:
        if label not in allowed:
            raise ConfigError(
                f"{label} is '-': this output cannot go to standard output. Give a file path "
                "(a file named '-' is './-')."
            )
    if len(dashed) > 1:
        raise ConfigError(
            f"{' and '.join(dashed)} are both '-' (standard output); one would mix into the "
            "other. Give all but one a file path."
        )


def make_parent(path: str | os.PathLike[str]) -> None:
    """Make the folders an output needs (``check_outputs`` has said they can be made)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def results_lock(
    path: str | os.PathLike[str], *, record: str | os.PathLike[str] | None = None
) -> Iterator[None]:
    """Hold an exclusive lock on a results file while a run writes it and its run record.

    A second run on the same file (with or without resume) fails at once with ``ConfigError``
    instead of interleaving rows. The lock is advisory (``flock``), taken on the results file
    itself, and released when the run ends or its process dies. A results file this lock
    created is removed again when the run fails before writing a row, and so is its run
    ``record`` when the run made it. No lock on platforms without ``fcntl``.
    """
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    path = Path(path)
    make_parent(path)
    created = not path.exists()
    made_record = record is not None and not Path(record).exists()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"The results file {str(path)!r} is being written by another ragmeter run "
                "(it holds a lock on it). Wait for that run to finish, or give "
                f"{param('out')} another path."
            ) from None
        try:
            yield
        except BaseException:
            if created and path.exists() and path.stat().st_size == 0:
                path.unlink()
                if made_record and record is not None:
                    Path(record).unlink(missing_ok=True)
            raise
    finally:
        os.close(fd)


class ReplacingWriter:
    """A text file that takes the place of ``path`` at its first write, not before.

    The text goes to a temporary file beside ``path``; at the first :meth:`write` of some
    text (or at :meth:`close` with ``commit=True``), ``before_replace`` runs (the run record
    is written there) and the temporary file replaces ``path``. Closed without a write and
    without ``commit``, the temporary file is removed and ``path`` is left as it was: a run
    that stops before its first row never destroys earlier results. The temporary file is
    locked as ``results_lock`` locks ``path``, so the lock holds across the replacement.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, before_replace: Callable[[], None] | None = None
    ) -> None:
        self.path = Path(path)
        self._before_replace = before_replace
        make_parent(self.path)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".partial", dir=self.path.parent
        )
        self._tmp = Path(tmp)
        self._fh = os.fdopen(fd, "w", encoding="utf-8")
        with contextlib.suppress(ImportError, OSError):
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.replaced = False

    def _replace(self) -> None:
        if self._before_replace is not None:
            self._before_replace()
        os.replace(self._tmp, self.path)
        self.replaced = True

    def write(self, text: str) -> int:
        if text and not self.replaced:
            self._replace()
        return self._fh.write(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._fh.flush()

    def close(self, *, commit: bool = False) -> None:
        """Close; with ``commit`` replace ``path`` even when nothing was written."""
        try:
            if commit and not self.replaced:
                self._fh.flush()
                self._replace()
        finally:
            self._fh.close()
            if not self.replaced:
                self._tmp.unlink(missing_ok=True)
