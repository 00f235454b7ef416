"""What the test server answers, without the HTTP: a simulator of a judge and an embedder.

Deterministic and plausible, so runs against :class:`ragmeter.testing.TestServer` give real,
non-trivial scores:

- claims are the sentences of the text it is given; entities are runs of capitalised words
  (leading words of :data:`ragmeter.text.NOT_NAMES` dropped) and numbers
  (:data:`ragmeter.text.NUMBER_RE`); generated questions are built from the answer's
  sentences; an answer is noncommittal when it says it does not know;
- a premise entails a claim when it holds at least 70 % of the claim's content words (words
  not in :data:`ragmeter.text.STOP_WORDS`) and every number in it;
- embeddings are hashed bags of content words, L2-normalised (:func:`embed`,
  :class:`HashingEmbedder` in process);
- a yes/no criterion is answered "yes" when every term its question puts in quotes occurs
  in the texts it reads (with no quoted term: when most of the question's content words do),
  its quote the first sentence holding the first term; a rubric gets the level whose
  description shares most content words with the texts (the first on a tie), quote "".

:func:`chat_reply` answers ragmeter's own prompts (analyze, verify, criteria) and Ragas-style
prompts the same way (the benchmark's peer).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from typing import Any

from ragmeter.scoring.refusal import read_refusal
from ragmeter.text import NOT_NAMES, NUMBER_RE, STOP_WORDS

__all__ = ["HashingEmbedder", "chat_reply", "count_tokens", "embed", "entails", "entities"]

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ENTITY = re.compile(r"\b(?:[A-Z][\w'\-]*)(?:\s+(?:of|the|de|and)?\s*[A-Z][\w'\-]*)*")
_NONCOMMITTAL = re.compile(
    r"\b(i don'?t know|i do not know|not sure|cannot answer|can'?t answer|no idea|unclear)\b", re.I
)


def count_tokens(text: str) -> int:
    """Approximate tokens: words and punctuation marks."""
    return len(_TOKEN.findall(text))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s.strip()]


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in NUMBER_RE.findall(text)}


def entails(premise: str, claim: str) -> bool:
    words = _content_words(claim)
    if not words:
        return False
    found = _content_words(premise)
    if not _numbers(claim) <= _numbers(premise):
        return False
    return len(words & found) / len(words) >= 0.7


def entities(text: str) -> list[str]:
    out: list[str] = []
    for match in _ENTITY.finditer(text):
        words = match.group(0).split()
        while words and words[0] in NOT_NAMES:
            words = words[1:]
        if words:
            out.append(" ".join(words))
    out.extend(NUMBER_RE.findall(text))
    return list(dict.fromkeys(out))


def _questions(answer: str, n: int) -> list[str]:
    sentences = _sentences(answer) or [answer or "this"]
    out = []
    for i in range(n):
        words = sentences[i % len(sentences)].rstrip(".!?").split()
        stem = " ".join(words[:10])
        prefix = ("What is known about", "What can be said about", "Which facts describe")[i % 3]
        out.append(f"{prefix} {stem}?")
    return out


def _last_json_user_message(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        try:
            data = json.loads(content or "")
        except (TypeError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None


def _system_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")


def _analyze_reply(data: dict[str, Any], system: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if '"answer_claims":' in system:
        out["answer_claims"] = _sentences(data.get("answer", ""))
    if '"reference_claims":' in system:
        out["reference_claims"] = [
            {"reference": i, "claims": _sentences(ref)}
            for i, ref in enumerate(data.get("references", []), start=1)
        ]
    if '"reference_entities":' in system:
        out["reference_entities"] = list(
            dict.fromkeys(e for ref in data.get("references", []) for e in entities(ref))
        )
        out["context_entities"] = [
            {"context": i, "entities": entities(ctx)}
            for i, ctx in enumerate(data.get("contexts", []), start=1)
        ]
    if '"questions":' in system:
        match = re.search(r"(\d+) different questions", system)
        n = int(match.group(1)) if match else 3
        answer = data.get("answer", "")
        out["questions"] = _questions(answer, n)
        out["noncommittal"] = bool(_NONCOMMITTAL.search(answer))
    if '"refusal":' in system:
        reading = read_refusal(data.get("answer", ""))
        out["refusal"] = reading.kind
        out["refusal_quote"] = reading.sentence or ""
    return out


def _verify_reply(data: dict[str, Any]) -> dict[str, Any]:
    premises = {p["id"]: p["text"] for p in data.get("premises", [])}
    verdicts = []
    for group in data.get("groups", []):
        for claim in group.get("claims", []):
            chosen = [
                n for n in group.get("check_against", []) if entails(premises[n], claim["text"])
            ]
            verdicts.append({"claim": claim["id"], "entailed_by": chosen})
    return {"verdicts": verdicts}


_QUOTED = re.compile(r"[\"'\u201c\u2018]([^\"'\u201d\u2019]+)[\"'\u201d\u2019]")


def _criterion_reply(criterion: dict[str, Any], texts: dict[str, Any]) -> dict[str, str]:
    read: list[str] = []
    for name in criterion.get("reads", []):
        value = texts.get(name)
        read.extend(value if isinstance(value, list) else [value or ""])
    joined = " ".join(read)
    answers = criterion.get("answer_with")
    if isinstance(answers, dict) and answers:
        found = _content_words(joined)
        levels = list(answers)
        best = max(
            levels, key=lambda n: (len(_content_words(str(answers[n])) & found), -levels.index(n))
        )
        return {
            "reason": "the level whose description the texts match best",
            "quote": "",
            "answer": best,
        }
    question = str(criterion.get("question", ""))
    terms = _QUOTED.findall(question)
    lowered = joined.lower()
    if terms:
        met = all(t.lower() in lowered for t in terms)
    else:
        words = _content_words(question)
        met = bool(words) and len(words & _content_words(joined)) / len(words) >= 0.5
    quote = ""
    if met and terms:
        quote = next(
            (s for text in read for s in _sentences(text) if terms[0].lower() in s.lower()), ""
        )
    return {
        "reason": "the texts hold the terms the question names" if met else "they do not",
        "quote": quote,
        "answer": "yes" if met else "no",
    }


def _criteria_reply(data: dict[str, Any]) -> dict[str, Any]:
    texts = data.get("texts") or {}
    return {
        str(c.get("name")): _criterion_reply(c, texts)
        for c in data.get("criteria", [])
        if isinstance(c, dict)
    }


_SCHEMA_MARK = "as specified in JSON Schema:"
_INPUT_MARK = "Now perform the same with the following input"


def _peer_reply(text: str) -> dict[str, Any] | None:
    """Answer a Ragas-style prompt (JSON schema + examples + ``input: {...}``) the same way.

    Used by the benchmark to run a peer tool against this server on equal terms: claims are
    sentences, verdicts come from the same word-overlap rule, entities from the same pattern.
    """
    start = text.find(_SCHEMA_MARK)
    at = text.rfind(_INPUT_MARK)
    if start < 0 or at < 0:
        return None
    decoder = json.JSONDecoder()
    try:
        schema, _ = decoder.raw_decode(text[start + len(_SCHEMA_MARK) :].lstrip())
        brace = text.index("{", at)
        data, _ = decoder.raw_decode(text[brace:])
    except ValueError:
        return None
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if "statements" in props and isinstance(data.get("statements"), list):
        context = str(data.get("context", ""))
        return {
            "statements": [
                {
                    "statement": st,
                    "reason": "word overlap with the context",
                    "verdict": int(entails(context, st)),
                }
                for st in data["statements"]
            ]
        }
    if "statements" in props:
        return {"statements": _sentences(str(data.get("answer", data.get("response", ""))))}
    if "entities" in props:
        return {"entities": entities(str(data.get("text", "")))}
    if "question" in props and "noncommittal" in props:
        response = str(data.get("response", ""))
        return {
            "question": _questions(response, 1)[0],
            "noncommittal": int(bool(_NONCOMMITTAL.search(response))),
        }
    return None


def chat_reply(body: dict[str, Any]) -> tuple[str, str]:
    """(task, reply text) for a chat request."""
    messages = body.get("messages", [])
    data = _last_json_user_message(messages)
    system = _system_text(messages)
    if data is not None and "premises" in data and "groups" in data:
        return "verify", json.dumps(_verify_reply(data))
    if data is not None and "criteria" in data and "texts" in data:
        return "criteria", json.dumps(_criteria_reply(data))
    if data is not None and ("answer" in data or "references" in data):
        return "analyze", json.dumps(_analyze_reply(data, system))
    text = "\n".join(str(m.get("content", "")) for m in messages)
    peer = _peer_reply(text)
    if peer is not None:
        return "peer", json.dumps(peer)
    return "other", json.dumps({"text": "This server only answers ragmeter's prompts."})


@functools.lru_cache(maxsize=65536)
def _bucket(word: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dim, 1.0 if digest[4] & 1 else -1.0


def embed(text: str, dim: int = 256) -> list[float]:
    # Sparse: a text touches a few of the ``dim`` buckets, so only those are summed and divided
    # (the zeros add nothing to the norm; the result is the same as over the dense vector).
    buckets: dict[int, float] = {}
    for word in _content_words(text):
        idx, sign = _bucket(word, dim)
        buckets[idx] = buckets.get(idx, 0.0) + sign
    norm = math.sqrt(sum(buckets[i] * buckets[i] for i in sorted(buckets)))
    vec = [0.0] * dim
    if norm == 0:
        vec[0] = 1.0
        return vec
    for idx, value in buckets.items():
        vec[idx] = value / norm
    return vec


class HashingEmbedder:
    """A deterministic bag-of-words embedder (the server's /v1/embeddings, in process).

    A test double with the Embedder interface (``name``, ``embed(texts) -> ndarray``); not a
    language model.
    """

    name = "hashing-bow-256"

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        return np.asarray([embed(t) for t in texts], dtype=np.float32)
