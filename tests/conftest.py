from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# tqdm reads TQDM_DISABLE once, when first imported; the CLI's main() sets it for its process.
# Imported here, before any test runs main() in this process, tqdm's bars stay on by default
# (tests/runner/test_progress.py checks that ragmeter turns them off during a run and back on
# after).
with contextlib.suppress(ImportError):
    import tqdm  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    """The team's shared folder (seeds and reference data), beside the checkout."""
    if not SHARED.is_dir():
        pytest.skip(f"../shared not found beside the checkout at {SHARED}")
    return SHARED


#: The folders of ragmeter's cache dir that hold models converted or unpacked from their
#: packages (GGUF -> ONNX graphs, torch folders): shared by every test of a session.
CONVERTED_MODEL_FOLDERS = ("onnx", "models")


@pytest.fixture(scope="session")
def model_conversion_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of converted models for the whole test session.

    Converting the packaged GGUF to ONNX takes 20-40 s on 2 cores and leaves about 290 MB (int8;
    1.1 GB in float32):
    done once here, not once per test (with pytest-xdist, one folder for every worker). Each
    test still gets its own cache dir (its judge cache is its own); only the converted-model
    folders in it point here. A test about conversion itself sets ``RAGMETER_CACHE_DIR`` to a
    folder of its own.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        shared_cache = tmp_path_factory.mktemp("converted-models")
    else:
        # pytest-xdist: the workers' temp dirs sit side by side; they share one cache (two
        # workers converting at once both succeed, the first to finish keeps its folder).
        shared_cache = tmp_path_factory.getbasetemp().parent / "converted-models"
    for name in CONVERTED_MODEL_FOLDERS:
        (shared_cache / name).mkdir(parents=True, exist_ok=True)
    return shared_cache


def isolate_user_dirs(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    model_conversion_cache: Path,
) -> None:
    """A cache dir of its own (converted models shared) and no real model endpoint: for every
    test (autouse below) and for fixtures of a wider scope, which run before it."""
    cache = tmp_path_factory.mktemp("ragmeter-cache")
    for name in CONVERTED_MODEL_FOLDERS:
        (cache / name).symlink_to(model_conversion_cache / name, target_is_directory=True)
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(scope="session", autouse=True)
def _isolated_session_dirs(
    tmp_path_factory: pytest.TempPathFactory, model_conversion_cache: Path
) -> Iterator[None]:
    """The same for fixtures of a module or session scope, which run before any test's own
    (e.g. a module's shared evaluation): they never write to the real user cache either."""
    with pytest.MonkeyPatch.context() as patch:
        isolate_user_dirs(patch, tmp_path_factory, model_conversion_cache)
        yield


@pytest.fixture(autouse=True)
def _isolated_user_dirs(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    model_conversion_cache: Path,
):
    """Never touch the real user cache; never reach a real model endpoint."""
    isolate_user_dirs(monkeypatch, tmp_path_factory, model_conversion_cache)
    # A test that runs the CLI's main() in this process sets these for "the process": they are
    # put back after every test (tqdm reads TQDM_DISABLE when it is first imported).
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)


@pytest.fixture(autouse=True)
def _secrets_registered_in_a_test_stay_in_it() -> Iterator[None]:
    """A judge registers its key as a secret for the rest of the process (io.redact): a test's
    key ("test") must not mask that word in every later test's output."""
    from ragmeter.io import redact

    saved = set(redact._registered)
    yield
    redact._registered.clear()
    redact._registered.update(saved)
