"""Convert a GGUF language model to ONNX once, under ragmeter's user cache dir.

The converted folder is keyed by the GGUF's sha256 and :data:`CONVERTER_VERSION`, so a new
file or a new graph layout converts again, and holds ``model.onnx`` (+ ``model.onnx.data``,
float32 weights), ``tokenizer.json``, ``tokenizer_meta.json`` and ``ragmeter-onnx.json``
(written last: a folder without it is an interrupted conversion), which also holds the
sha256 and size of every other file. A folder is checked against them before it is used
(once per process while the files stay as they were): a damaged file (overwritten,
truncated), a missing one or a folder from a ragmeter that kept no hashes is converted again,
with a warning. Conversion needs the ``gguf`` and ``onnx`` packages; running the converted
model needs neither.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ragmeter.errors import ModelUnavailableError
from ragmeter.io.activity import notice
from ragmeter.models._runtime import cache_dir, staging_beside
from ragmeter.models.relevance.gguf.onnx_graph import CONVERTER_VERSION, INT8_VERSION

__all__ = ["DONE_MARK", "conversion_folder", "convert_gguf", "converted", "damage"]

log = logging.getLogger("ragmeter")

DONE_MARK = "ragmeter-onnx.json"
_CHUNK = 1 << 20
#: Folders found intact in this process, by their files' (name, size, mtime) at the time.
_INTACT: set[tuple[str, tuple[tuple[str, int, int], ...]]] = set()


def conversion_folder(name: str, sha256: str, *, int8: bool = False) -> Path:
    """Where the model named ``name`` with GGUF hash ``sha256`` is (or will be) converted."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)
    kind = f"-int8v{INT8_VERSION}" if int8 else ""
    return cache_dir() / "onnx" / f"{safe}-{sha256[:16]}-v{CONVERTER_VERSION}{kind}"


def conversion_notice(name: str, model: Any, target: Path, *, int8: bool = False) -> str:
    """What the run tells the reader while ``name`` converts: once, and how large it gets
    (float32 weights; with ``int8`` every matrix takes a byte an element)."""
    weights = sum(
        int(t.n_elements) * (1 if int8 and len(t.shape) == 2 else 4)
        for t in model._tensors.values()
    )
    return (
        f"Converting {name} to ONNX, once (about {weights / 1e9:.1f} GB in {target.parent}; "
        "later runs reuse it): context_relevance starts when it is done."
    )


def converted(folder: Path) -> bool:
    return (folder / DONE_MARK).is_file()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def file_hashes(folder: Path) -> dict[str, dict[str, Any]]:
    """``{name: {"sha256", "bytes"}}`` of every file of a conversion but its mark."""
    return {
        path.name: {"sha256": _sha256(path), "bytes": path.stat().st_size}
        for path in sorted(folder.iterdir())
        if path.is_file() and path.name != DONE_MARK
    }


def _stamp(folder: Path) -> tuple[str, tuple[tuple[str, int, int], ...]]:
    files = sorted(p for p in folder.iterdir() if p.is_file())
    return str(folder), tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)


def damage(folder: Path) -> str | None:
    """Why the converted ``folder`` cannot be trusted (a file whose size or sha256 is not
    the one recorded at conversion, a missing file, no hashes recorded), or None."""
    try:
        stamp = _stamp(folder)
        if stamp in _INTACT:
            return None
        about = json.loads((folder / DONE_MARK).read_text(encoding="utf-8"))
        recorded = about.get("files") if isinstance(about, dict) else None
        if not isinstance(recorded, dict):
            return "it was converted by an earlier ragmeter, which kept no hashes to check"
        for name, expected in sorted(recorded.items()):
            path = folder / name
            if not path.is_file():
                return f"{name} is missing"
            size = path.stat().st_size
            if not isinstance(expected, dict) or size != expected.get("bytes"):
                return f"{name} has {size} bytes, not the {expected.get('bytes')} converted"
            if _sha256(path) != expected.get("sha256"):
                return f"{name} is not the file converted (its sha256 differs)"
    except (OSError, ValueError, AttributeError) as exc:
        return f"it cannot be read ({exc})"
    _INTACT.add(stamp)
    return None


def convert_gguf(
    name: str,
    sha256: str,
    open_gguf: Callable[[Path], AbstractContextManager[Path]],
    *,
    int8: bool = False,
) -> Path:
    """The converted folder of ``name``, converting it first when needed.

    ``open_gguf(scratch)`` yields the GGUF file (it may create it under ``scratch``).
    ``int8``: every weight matrix in int8 (faster and a quarter of the memory, not
    float32's scores; see :func:`ragmeter.models.relevance.gguf.onnx_graph.build_graph`).
    Two processes converting at once both succeed; the first to finish keeps its folder.

    Raises
    ------
    ModelUnavailableError
        ``gguf`` or ``onnx`` is missing, or the file cannot be converted.
    """
    target = conversion_folder(name, sha256, int8=int8)
    damaged = damage(target) if converted(target) else None
    if converted(target) and damaged is None:
        return target
    if damaged is not None:
        log.warning(
            "The converted model in %s is damaged: %s. It is converted again.", target, damaged
        )
    missing = [m for m in ("gguf", "onnx") if importlib.util.find_spec(m) is None]
    if missing:
        raise ModelUnavailableError(
            f"Converting {name} to ONNX (once) needs {' and '.join(missing)}. "
            "Install it with: pip install 'ragmeter[local]'"
        )
    from ragmeter.models.relevance.gguf.onnx_graph import write_model
    from ragmeter.models.relevance.gguf.reader import read_gguf
    from ragmeter.models.relevance.gguf.tokenizer import build_tokenizer

    staging = staging_beside(target)
    try:
        started = time.perf_counter()
        with open_gguf(staging) as path:
            model = read_gguf(path)
            notice(conversion_notice(name, model, target, int8=int8))
            build_tokenizer(model.tokenizer).save(staging)
            write_model(model, staging / "model.onnx", int8=int8)
        about = {
            "name": name,
            "gguf_sha256": sha256,
            "converter_version": CONVERTER_VERSION,
            "matmul": "int8" if int8 else "float32",
            **({"int8_version": INT8_VERSION, "embedding": "int8"} if int8 else {}),
            "config": asdict(model.config),
            "seconds": round(time.perf_counter() - started, 1),
            "files": file_hashes(staging),
        }
        (staging / DONE_MARK).write_text(json.dumps(about, indent=1))
        if target.exists() and (not converted(target) or damage(target) is not None):
            shutil.rmtree(target)  # an interrupted conversion, or a damaged one
        os.replace(staging, target)
    except OSError:
        if not converted(target) or damage(target) is not None:
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
