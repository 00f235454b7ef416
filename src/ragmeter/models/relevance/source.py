"""Which context-relevance model to run, and on which runtime, found without loading it.

``Settings.relevance_model`` names one of:

- ``"offline"``: the first installed of :data:`OFFLINE_PREFERENCE` (Gemma 3 270M, then
  SmolLM2-135M-Instruct), or a packaged model by key (``"gemma3-270m"``, ``"smollm2"``;
  see :mod:`ragmeter.models.relevance.gguf.packaged`);
- a ``.gguf`` file of a Llama or Gemma 3 model;
- a local folder of a transformers model, or a model name in the local Hugging Face cache.

Runtimes (``runtime``, or ``RAGMETER_RELEVANCE_RUNTIME``):

- ``"onnx"``: the GGUF converted once to ONNX, run by onnxruntime (no torch) in int8 by
  default, or float32 (see :func:`ragmeter.models.relevance.loader.load_question_likelihood`);
  for GGUF models only. Needs onnxruntime and tokenizers (and gguf + onnx to convert).
- ``"torch"``: transformers (``pip install 'ragmeter[lm]'``); any transformers model, a
  GGUF converted by transformers once; the only runtime with bfloat16.
- ``"auto"`` (default): ``"onnx"`` for a GGUF model when it can run, else ``"torch"``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragmeter.errors import ConfigError, ModelUnavailableError, param
from ragmeter.models._runtime import (
    cache_dir,
    in_hf_cache,
    require_torch_stack,
    sha256_of,
    staging_beside,
)
from ragmeter.models.relevance.gguf.packaged import PACKAGED, PackagedGGUF

__all__ = [
    "OFFLINE_DEFAULT",
    "OFFLINE_PREFERENCE",
    "RUNTIMES",
    "ModelSource",
    "convert_for_transformers",
    "onnx_folder",
    "requested_runtime",
    "resolve_relevance_model",
]

#: The packaged models ``"offline"`` names, best first: the first one installed runs.
#: Gemma 3 270M ranks MS MARCO's selected passage above its hard negative more often than
#: SmolLM2 (pairwise accuracy 0.635 against 0.565 over 200 queries, same runtime; see
#: ``bench/context_relevance_onnx.py``) and installs as an ordinary dependency.
OFFLINE_PREFERENCE = ("gemma3-270m", "smollm2")
OFFLINE_DEFAULT = OFFLINE_PREFERENCE[0]
Runtime = Literal["onnx", "torch"]
RUNTIMES = ("auto", "onnx", "torch")
_RUNTIME_ENV = "RAGMETER_RELEVANCE_RUNTIME"
_DONE_MARK = "ragmeter-converted.txt"
_INSTALL_LM = "Install it with: pip install 'ragmeter[lm]'"
_INSTALL_LOCAL = "Install it with: pip install 'ragmeter[local]'"


@dataclass(frozen=True, slots=True)
class ModelSource:
    """Where a relevance model comes from, found without loading it."""

    #: Stable identity for results, e.g. ``"SmolLM2-135M-Instruct-Q4_1"`` or a path.
    name: str
    #: A local folder or HF cache name given to ``from_pretrained`` (torch); ``None`` for a
    #: GGUF that still has to be converted.
    location: str | None
    #: A GGUF file given by path.
    gguf: Path | None = None
    #: A GGUF shipped in PyPI packages.
    packaged: PackagedGGUF | None = None
    runtime: Runtime = "torch"

    def open_gguf(self) -> Callable[[Path], AbstractContextManager[Path]]:
        """``open(scratch)`` yielding the GGUF file (packaged parts joined under ``scratch``)."""
        if self.packaged is not None:
            return self.packaged.file
        gguf = self.gguf
        if gguf is None:
            raise ModelUnavailableError(f"The relevance model {self.name!r} is not a GGUF.")
        return lambda scratch: nullcontext(gguf)


def requested_runtime(runtime: str = "auto") -> str:
    """``runtime``, or ``RAGMETER_RELEVANCE_RUNTIME`` when ``runtime`` is ``"auto"``."""
    if runtime not in RUNTIMES:
        raise ConfigError(
            f"The relevance runtime must be one of {', '.join(RUNTIMES)}. Got {runtime!r}."
        )
    if runtime == "auto":
        env = os.environ.get(_RUNTIME_ENV, "").strip().lower()
        if env and env not in RUNTIMES:
            raise ConfigError(
                f"{_RUNTIME_ENV} must be one of {', '.join(RUNTIMES)}. Got {env!r}. Unset it "
                "to let ragmeter choose."
            )
        return env or "auto"
    return runtime


def _onnx_missing(source: ModelSource) -> list[str]:
    """Packages the ONNX runtime still needs for ``source`` (conversion included)."""
    needed = ["onnxruntime", "tokenizers", "jinja2"]
    if source.packaged is None or not _onnx_converted(source.packaged):
        needed += ["gguf", "onnx"]
    return [m for m in needed if importlib.util.find_spec(m) is None]


def _onnx_converted(packaged: PackagedGGUF) -> bool:
    """Whether a conversion of ``packaged`` is on disk (int8, the default, or float32); the
    other one still converts on first use, and says what it needs then."""
    from ragmeter.models.relevance.gguf.convert import conversion_folder, converted

    return any(
        converted(conversion_folder(packaged.name, packaged.sha256, int8=int8))
        for int8 in (True, False)
    )


def onnx_folder(source: ModelSource, *, int8: bool = False) -> Path:
    """The ONNX conversion of ``source`` (converting it the first time); ``int8``: the one
    with int8 matrix products."""
    from ragmeter.models.relevance.gguf.convert import convert_gguf

    if source.packaged is not None:
        sha256 = source.packaged.sha256
    elif source.gguf is not None:
        sha256 = sha256_of(source.gguf)
    else:
        raise ModelUnavailableError(f"The relevance model {source.name!r} is not a GGUF.")
    return convert_gguf(source.name, sha256, source.open_gguf(), int8=int8)


def _torch_folder(packaged: PackagedGGUF) -> Path:
    return cache_dir() / "models" / f"{packaged.name}-{packaged.sha256[:16]}"


def _gguf_source(
    name: str, runtime: str, *, gguf: Path | None = None, packaged: PackagedGGUF | None = None
) -> ModelSource:
    source = ModelSource(name, None, gguf, packaged, "onnx")
    missing = _onnx_missing(source)
    if runtime == "onnx" and missing:
        raise ModelUnavailableError(
            f"The ONNX runtime for context relevance needs {', '.join(missing)}. {_INSTALL_LOCAL}"
        )
    if runtime != "torch" and not missing:
        return source
    if runtime == "auto" and importlib.util.find_spec("torch") is None:
        raise ModelUnavailableError(
            f"Context relevance needs {', '.join(missing)} to run {name} without torch. "
            f"{_INSTALL_LOCAL}"
        )
    require_torch_stack("Context relevance on torch")
    if packaged is not None:
        done = _torch_folder(packaged)
        if (done / _DONE_MARK).is_file():
            return ModelSource(name, str(done), None, packaged, "torch")
    for module in ("gguf", "accelerate"):
        if importlib.util.find_spec(module) is None:
            raise ModelUnavailableError(
                f"Converting {name} for transformers needs {module!r}. {_INSTALL_LM}"
            )
    return ModelSource(name, None, gguf, packaged, "torch")


def resolve_relevance_model(spec: str = "offline", *, runtime: str = "auto") -> ModelSource:
    """Find the relevance model named by ``spec``, and its runtime, without loading it.

    Parameters
    ----------
    spec : str
        ``"offline"``, a packaged model's key, a ``.gguf`` file, a transformers model folder,
        or a model name present in the local Hugging Face cache.
    runtime : {"auto", "onnx", "torch"}
        See the module docstring.

    Raises
    ------
    ModelUnavailableError
        The model or its runtime is missing; the message says how to supply it.
    """
    spec = spec.strip()
    if not spec:
        raise ConfigError("The relevance model is empty. Use 'offline' for the default.")
    runtime = requested_runtime(runtime)
    key = spec
    if spec == "offline":
        found = [k for k in OFFLINE_PREFERENCE if PACKAGED[k].installed()]
        key = found[0] if found else OFFLINE_DEFAULT
    if key in PACKAGED:
        packaged = PACKAGED[key]
        if not packaged.installed():
            raise ModelUnavailableError(
                f"The context-relevance model {packaged.name} is not installed. Install it "
                f"with: pip install {packaged.install}, or pass a local model's path as "
                f"{param('relevance_model')} (a .gguf file, or a transformers folder such as a "
                "copy of google/flan-t5-small)."
            )
        return _gguf_source(packaged.name, runtime, packaged=packaged)
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return _gguf_source(str(path), runtime, gguf=path)
    if runtime == "onnx":
        raise ModelUnavailableError(
            f"The ONNX runtime runs GGUF models only; {spec!r} is not a .gguf file or a "
            f"packaged model ({', '.join(['offline', *PACKAGED])}). Use runtime 'torch'."
        )
    require_torch_stack("Context relevance")
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(
                f"{param('relevance_model')} {spec!r} is a folder without config.json; expected a "
                "transformers model folder (config.json, weights, tokenizer files)."
            )
        return ModelSource(str(path), str(path))
    if in_hf_cache(spec):
        return ModelSource(spec, spec)
    raise ModelUnavailableError(
        f"The relevance model {spec!r} is neither a local folder nor in the local Hugging "
        "Face cache, and models cannot be downloaded here. Pass a local copy's path as "
        f"{param('relevance_model')}, or use the default 'offline'."
    )


def convert_for_transformers(source: ModelSource) -> str:
    """Convert a GGUF to a float32 transformers folder, once; its path.

    A packaged model's folder lives in ragmeter's cache dir; a GGUF given by path is
    converted to a temporary folder for this process.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    packaged = source.packaged
    if packaged is not None:
        target = _torch_folder(packaged)
    else:
        target = Path(tempfile.mkdtemp(prefix="ragmeter-gguf-")) / "model"
    staging = staging_beside(target)
    try:
        with source.open_gguf()(staging) as gguf:
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # The weights were dequantised to float32 at load; drop the GGUF bookkeeping so the
        # model saves (and later loads) as a plain float32 checkpoint.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / _DONE_MARK).write_text(f"converted from {source.name}\n")
        if target.exists():
            shutil.rmtree(target)  # an interrupted conversion: no done mark
        os.replace(staging, target)
    except OSError:
        if not (target / _DONE_MARK).is_file():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return str(target)
