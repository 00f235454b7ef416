"""Test doubles and checks for users' test suites: nothing here calls a model or the network.

- :class:`FakeJudge` (with :func:`all_entailed` / :func:`none_entailed`): a scripted judge,
  passed as ``judge=`` to :func:`ragmeter.evaluate`; it records every request.
- :func:`assert_scores`: a one-line quality gate on a run's means
  (``assert_scores(result, faithfulness=0.8)``).
- :class:`TestServer` (configured by :class:`ServerConfig`): a local OpenAI-compatible server
  that answers ragmeter's own prompts deterministically, with optional latency and faults
  (429, 500, hangs, malformed replies...), to test a run's HTTP path, retries and limits
  end to end: ``with TestServer() as server: ... base_url=server.base_url``. Also
  ``python -m ragmeter.testing.server --port 0``.
- :class:`HashingEmbedder`: a deterministic bag-of-words embedder, the server's embeddings
  in process.
- :mod:`ragmeter.testing.tiny_classifiers`: tiny random entailment checkpoints (BERT,
  RoBERTa, DeBERTa-v2, T5, HHEM's layout) to test ``verifier="nli:PATH"`` without a
  download (needs ``ragmeter[lm]``; imported on demand).

Examples
--------
>>> import ragmeter
>>> from ragmeter.testing import FakeJudge, all_entailed, assert_scores
>>> from ragmeter.judges.base import Analysis
>>> judge = FakeJudge(analyze=Analysis(answer_claims=("Paris is in France.",)),
...                   verify=all_entailed)
>>> rows = [{"question": "Where is Paris?", "answer": "Paris is in France.",
...          "contexts": ["Paris is the capital of France."]}]
>>> result = ragmeter.evaluate(rows, ["faithfulness"], judge=judge, progress=False)
>>> assert_scores(result, faithfulness=1.0)
"""

from __future__ import annotations

from typing import Any

from ragmeter.judges.fake import FakeJudge, all_entailed, none_entailed
from ragmeter.testing.assertions import assert_scores
from ragmeter.testing.simulated import HashingEmbedder

__all__ = [
    "FakeJudge",
    "HashingEmbedder",
    "ServerConfig",
    "TestServer",
    "all_entailed",
    "assert_scores",
    "none_entailed",
]


def __getattr__(name: str) -> Any:
    # The server module is imported on first use, so that ``python -m
    # ragmeter.testing.server`` does not find it already imported by this package.
    if name in ("ServerConfig", "TestServer"):
        from ragmeter.testing import server

        return getattr(server, name)
    raise AttributeError(f"module 'ragmeter.testing' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
