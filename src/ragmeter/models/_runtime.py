"""Process-wide plumbing shared by the local models: threads, cache dir, offline mode.

Nothing here imports a heavy library at module import time.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from ragmeter.errors import ModelCacheError, ModelUnavailableError, not_installed

__all__ = [
    "cache_dir",
    "cached_model",
    "default_threads",
    "enable_offline_hub",
    "encodable",
    "fast_bfloat16",
    "import_spacy",
    "require_torch_stack",
    "sha256_of",
    "staging_beside",
    "torch_setup",
    "use_threads",
]

T = TypeVar("T")

_LOCK = threading.Lock()
_MODELS: dict[tuple[str, str], object] = {}


#: Threads set for this process's runs (``Settings.workers``), see :func:`use_threads`.
_THREADS: int | None = None


def use_threads(workers: int | None) -> int | None:
    """Give the models loaded from now on ``workers`` threads each (``Settings.workers``, set
    by the runner for a run); None goes back to :func:`default_threads`' rule. Returns the
    value it replaces, for the runner to put back when the run ends."""
    global _THREADS
    before, _THREADS = _THREADS, workers
    return before


def default_threads() -> int:
    """Threads for one model's math: the run's ``workers`` (:func:`use_threads`), else
    ``RAGMETER_THREADS``, else the CPU count, at most 8."""
    if _THREADS is not None:
        return _THREADS
    raw = os.environ.get("RAGMETER_THREADS")
    if raw:
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            raise ModelUnavailableError(
                f"RAGMETER_THREADS must be an integer >= 1. Got {raw!r}. "
                "Unset it to use every core (at most 8)."
            )
        return value
    return max(1, min(os.cpu_count() or 1, 8))


def cache_dir() -> Path:
    """ragmeter's user cache dir: ``RAGMETER_CACHE_DIR``, else the platform's user cache."""
    env = os.environ.get("RAGMETER_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ragmeter"))


def staging_beside(target: Path) -> Path:
    """A fresh, empty folder beside ``target`` (its parents made first), where a model is
    written before it is moved into place.

    A folder that cannot be made (a read-only file system, no permission, a file in the way)
    fails every row alike: :class:`~ragmeter.errors.ModelCacheError` stops the run, naming the
    folder and how to choose another, instead of failing each row as bad data.
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".converting-", dir=target.parent))
    except OSError as exc:
        raise ModelCacheError(
            f"Cannot write the model folder {target.parent} ({exc.strerror or exc}). Models "
            f"are converted once into ragmeter's cache dir, now {cache_dir()}; set "
            "RAGMETER_CACHE_DIR to a writable folder, e.g. "
            "export RAGMETER_CACHE_DIR=/tmp/ragmeter-cache."
        ) from None


def disable_telemetry() -> None:
    """Turn off the telemetry of the libraries ragmeter runs models with, before they load.

    onnxruntime's is on by default: it writes a device id and an event store under
    ``~/.cache/Microsoft/`` and uploads events to Microsoft; it reads ``ORT_DISABLE_TELEMETRY``
    when it is imported. huggingface_hub reads ``HF_HUB_DISABLE_TELEMETRY``. Set either to 0
    to opt in.
    """
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


# Every model module imports this one before any runtime library.
disable_telemetry()


def enable_offline_hub() -> None:
    """Make Hugging Face libraries fail fast instead of retrying an unreachable hub.

    Users who can reach the hub and want downloads set ``HF_HUB_OFFLINE=0`` themselves.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def require_torch_stack(what: str) -> None:
    """Raise :class:`ModelUnavailableError` naming what ``what`` needs when torch or
    transformers is not installed (found without importing them)."""
    missing = not_installed(("torch", "transformers"))
    if missing:
        raise ModelUnavailableError(
            f"{what} needs {' and '.join(missing)}. Install it with: pip install 'ragmeter[lm]'"
        )


class _NoTorchHere(importlib.abc.MetaPathFinder):
    """Makes ``import torch`` (and its submodules) fail in one thread; other threads are
    not affected."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] == "torch" and threading.get_ident() == self.thread:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden while spaCy loads)")
        return None


def import_spacy() -> ModuleType:
    """``import spacy`` without importing torch.

    thinc, spaCy's machine-learning library, probes for torch once, when ``thinc.compat``
    is first imported (``try: import torch ... except ImportError: has_torch = False``): with
    torch installed, loading spaCy's small English pipeline (numpy and blis layers, nothing
    from torch) would import torch and its CUDA probe for nothing. thinc has no setting to
    skip the probe, so while ``spacy`` (and with it ``thinc.compat``) is imported, a finder
    first on ``sys.meta_path`` (the import system's documented hook) raises
    ModuleNotFoundError for ``torch`` in this thread only; it is removed right after, and
    other threads (a torch model loading beside spaCy) import torch as usual. The cost:
    thinc's PyTorch shims are off in this process, so a spaCy pipeline with torch layers
    (spacy-transformers) would not load; ragmeter loads none. When torch or thinc is
    already imported, nothing is hidden.

    Raises ImportError when spaCy is not installed.
    """
    if "torch" in sys.modules or "thinc.compat" in sys.modules:
        import spacy

        return spacy
    finder = _NoTorchHere()
    sys.meta_path.insert(0, finder)
    try:
        import spacy
    finally:
        sys.meta_path.remove(finder)
    return spacy


def encodable(texts: Sequence[str]) -> list[str]:
    """``texts`` with lone surrogates (invalid in UTF-8) replaced by ``?``.

    Tokenizers written in Rust reject a Python string they cannot encode as UTF-8; one such
    text would fail a whole batch.
    """
    out = []
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "replace").decode("utf-8")
        out.append(text)
    return out


def sha256_of(path: Path, *, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def cached_model(kind: str, key: str, load: Callable[[], T]) -> T:
    """Load a model once per process: later calls with the same ``(kind, key)`` reuse it."""
    with _LOCK:
        found = _MODELS.get((kind, key))
        if found is None:
            found = load()
            _MODELS[(kind, key)] = found
        return found  # type: ignore[return-value]


_TORCH_READY = False


def torch_setup() -> None:
    """Set torch's intra-op threads once (see :func:`default_threads`)."""
    global _TORCH_READY
    if _TORCH_READY:
        return
    import torch

    torch.set_num_threads(default_threads())
    _TORCH_READY = True


def in_hf_cache(name: str) -> bool:
    """True when ``name`` is a model id whose config is in the local Hugging Face cache."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        found = try_to_load_from_cache(name, "config.json")
    except ValueError:  # not a valid repo id (e.g. a path that does not exist)
        return False
    return isinstance(found, str)


def fast_bfloat16() -> bool:
    """True when this CPU multiplies bfloat16 matrices natively (AMX or AVX512-BF16).

    Elsewhere bfloat16 is emulated and slower than float32.
    """
    import torch

    for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        check = getattr(torch.cpu, probe, None)
        try:
            if check is not None and check():
                return True
        except RuntimeError:  # pragma: no cover - a torch build without the probe
            continue
    return False
