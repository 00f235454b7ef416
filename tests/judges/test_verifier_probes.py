"""The offline verifier on the hand-written probe set (``verifier_probes.jsonl``, issue 13).

The probe loading and the balanced accuracy live in ``bench/verifier_probes.py``, which
prints the per-kind table; these tests import it by path.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "verifier_probes.py"


def _bench_module():
    spec = importlib.util.spec_from_file_location("verifier_probes_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is built
    spec.loader.exec_module(module)
    return module


bench = _bench_module()


@pytest.fixture(scope="module")
def probes():
    return bench.load_probes()


def test_probe_file_is_well_formed_with_every_kind_both_labels_and_no_duplicates(probes) -> None:
    assert len(probes) >= 50
    kinds = Counter(p.kind for p in probes)
    assert set(kinds) == set(bench.KINDS)
    labels = Counter(p.entailed for p in probes)
    assert labels[True] >= len(probes) // 3 and labels[False] >= len(probes) // 3
    pairs = [(p.premise, p.claim) for p in probes]
    assert len(set(pairs)) == len(pairs)
    long_premises = [p for p in probes if p.kind == "copy_in_long_context"]
    assert all(80 <= len(p.premise.split()) <= 150 for p in long_premises)


def test_balanced_accuracy_is_the_mean_recall_of_both_labels() -> None:
    assert bench.balanced_accuracy([True, True, False, False], [True, True, True, False]) == 0.75
    assert bench.balanced_accuracy([True, False, False, False], [True] * 4) == 0.5
    with pytest.raises(ValueError, match="both labels"):
        bench.balanced_accuracy([True, True], [True, False])


def test_offline_verifier_reaches_0_90_balanced_accuracy_on_the_probes(probes) -> None:
    labels = [p.entailed for p in probes]
    accuracy = bench.balanced_accuracy(labels, bench.offline_verdicts(probes))
    assert accuracy >= 0.90
