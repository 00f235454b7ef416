"""Text features of the offline claim verifier: tokens, word lists and claim-vs-premise evidence.

Pure functions and small frozen values, no model and no I/O. :mod:`ragmeter.judges.offline.judge`
turns the features into entailment verdicts with calibrated coefficients.

Evidence of one claim against one premise (:func:`claim_features`)
    ``token_precision``
        K-Precision: the share of the claim's SQuAD tokens found in the premise (counts clipped).
    ``content_precision``
        The share of the claim's content words (stop words dropped, light suffix stemming) that
        occur anywhere in the premise.
    ``window_precision``
        The same share within the best window of two consecutive premise sentences.
    ``bigram_precision``
        The share of the claim's token bigrams that occur in the premise.
    ``trigram_cover``
        The share of the claim's tokens covered by a token trigram that occurs in the premise.
    ``missing_numbers`` / ``missing_names``
        How many quantities of the claim the premise does not give for the same unit
        (:mod:`~ragmeter.judges.offline.quantities`; a hard conflict) / how many capitalised
        words of the claim it lacks.
    ``missing_content``
        ``log(1 + number of the claim's content words missing from the premise)``.
    ``log_length``
        ``log(1 + number of content words)`` of the claim.
    ``semantic``
        Highest cosine between the claim's embedding and a premise sentence's (optional).

Evidence with word weights (:func:`block_features`, ``BLOCK_FEATURES``)
    ``idf_precision`` / ``idf_window``
        ``content_precision`` / ``window_precision`` with each content word weighted by its
        IDF among the block's claims and the premise's sentences (no outside corpus, no
        other premise: a premise's verdicts never depend on the other premises).
    ``sentence_precision``
        The share of content words within the premise's best single sentence.
    ``prefix_precision``
        The share of content words whose stem, or its 5-letter prefix, begins a premise stem
        (the verifier's gate: see ``GATE_FEATURE`` in :mod:`ragmeter.judges.offline.judge`).
    ``idf_missing``
        ``log(1 + IDF mass of the content words missing from the premise)``.
    ``content_share``
        Content words over all tokens of the claim (generic claims have few).
    ``negation_mismatch``
        1 when the claim has a negation word ("not", "never", "don't"...) and the premise none.
    ``missing_dates``
        How many month or weekday names of the claim the premise lacks (a hard conflict).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ragmeter.judges.offline.quantities import unbound_quantities
from ragmeter.text import DATE_WORDS, SPEAKER_WORDS, STOP_WORDS, split_sentences, tokens
from ragmeter.text import NUMBER_RE as _NUMBER_RE

__all__ = [
    "LEXICAL_FEATURES",
    "PremiseText",
    "as_named_in",
    "claim_features",
    "content_words",
    "prepare_claim",
    "prepare_premise",
]

#: Lexical features, in the order of the calibrated coefficients.
LEXICAL_FEATURES: tuple[str, ...] = (
    "token_precision",
    "content_precision",
    "window_precision",
    "bigram_precision",
    "trigram_cover",
    "missing_numbers",
    "missing_names",
    "missing_content",
    "log_length",
)


def _words(text: str) -> list[str]:
    return text.split()


#: Length of the stem prefixes that ``prefix_precision`` matches ("evaporat-" ~ "evaporation";
#: a 4-letter stem matches the start of a longer one: "larg" ~ "largest").
PREFIX = 5

#: Negation words (SQuAD tokens: "don't" is "dont").
NEGATIONS: frozenset[str] = frozenset(
    _words(
        """
    not no never nor none nothing neither cannot cant dont doesnt didnt isnt arent wasnt
    werent wont wouldnt shouldnt couldnt hasnt havent hadnt without
    """
    )
)

_SUFFIXES: tuple[str, ...] = ("ingly", "edly", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light suffix stripper: ``running`` and ``runs`` → ``run``; ``studies`` → ``stud``."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2]:
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def content_words(toks: Sequence[str]) -> list[str]:
    """Stems of the tokens that are not stop words."""
    return [stem(t) for t in toks if t not in STOP_WORDS]


_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")


#: Number words read as their digits ("one" is left out: "one of the largest" is no count).
NUMBER_WORDS: dict[str, str] = (
    {
        word: str(value)
        for value, word in enumerate(
            _words(
                """zero _ two three four five six seven eight nine ten eleven twelve thirteen
            fourteen fifteen sixteen seventeen eighteen nineteen twenty"""
            )
        )
        if word != "_"
    }
    | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70"}
    | {"eighty": "80", "ninety": "90", "hundred": "100", "dozen": "12"}
)
_NUMBER_WORD_RE = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)


def numbers(text: str) -> set[str]:
    """Numbers written with digits (without thousands separators: "1,000" → "1000") or as
    a word from two to twenty, a ten, "hundred" or "dozen" ("two" → "2").

    Examples
    --------
    >>> sorted(numbers("Mars has two small moons and 1,000 craters."))
    ['1000', '2']
    """
    found = {m.replace(",", "").rstrip(".") for m in _NUMBER_RE.findall(text)}
    found.update(NUMBER_WORDS[m.lower()] for m in _NUMBER_WORD_RE.findall(text))
    return found


def date_words(text: str) -> tuple[str, ...]:
    """Capitalised month and weekday names, lowercased ("May" counts, the verb "may" not).

    Examples
    --------
    >>> date_words("It may rain on Monday, 3 May.")
    ('monday', 'may')
    """
    found = (w.lower() for w in _WORD_RE.findall(text) if w[0].isupper())
    return tuple(dict.fromkeys(w for w in found if w in DATE_WORDS))


def capitalised_words(sentence: str) -> list[str]:
    """Normalised capitalised words that do not start the sentence (likely names)."""
    words = _WORD_RE.findall(sentence)
    out: list[str] = []
    for word in words[1:]:
        if word[0].isupper() and word not in SPEAKER_WORDS:
            out.extend(tokens(word)[:1])
    return out


# ----------------------------------------------------------------------------- evidence


@dataclass(frozen=True, slots=True)
class ClaimText:
    """A claim tokenised once."""

    text: str
    tokens: tuple[str, ...]
    #: Tokens that occur once, and (token, count) of those that occur more often.
    singles: tuple[str, ...]
    repeats: tuple[tuple[str, int], ...]
    content: tuple[str, ...]
    #: Token bigrams and trigrams as " a b " / " a b c " strings, for substring search.
    bigrams: tuple[str, ...]
    trigrams: tuple[str, ...]
    numbers: frozenset[str]
    names: tuple[str, ...]
    negated: bool = False
    #: Month and weekday names of the claim (SQuAD tokens).
    dates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PremiseText:
    """A premise tokenised once: token counts, stem sets, windows, n-grams, sentences."""

    text: str
    counts: Counter[str]
    stems: frozenset[str]
    words: frozenset[str]
    windows: tuple[frozenset[str], ...]
    #: Stems of each sentence, and the 4- and 5-letter prefixes of every stem.
    sentence_stems: tuple[frozenset[str], ...]
    prefixes: frozenset[str]
    #: The tokens joined by single spaces, with a space at each end.
    joined: str
    sentences: tuple[str, ...]
    #: Whether the premise has a negation word anywhere.
    negated: bool = False

    @property
    def numbers(self) -> frozenset[str]:
        return _numbers_of(self.text)


def prepare_claim(text: str) -> ClaimText:
    toks = tuple(tokens(text))
    return ClaimText(
        text=text,
        tokens=toks,
        singles=tuple(t for t, c in Counter(toks).items() if c == 1),
        repeats=tuple((t, c) for t, c in Counter(toks).items() if c > 1),
        content=tuple(content_words(toks)),
        bigrams=tuple(f" {a} {b} " for a, b in itertools.pairwise(toks)),
        trigrams=tuple(f" {a} {b} {c} " for a, b, c in zip(toks, toks[1:], toks[2:], strict=False)),
        numbers=frozenset(numbers(text)),
        names=tuple(capitalised_words(text)),
        negated=not NEGATIONS.isdisjoint(toks),
        dates=date_words(text),
    )


def prepare_premise(text: str) -> PremiseText:
    sentences = tuple(split_sentences(text)) or ((text,) if text.strip() else ())
    # Sentences split at whitespace, so their tokens concatenated are the text's tokens.
    sentence_tokens = [tokens(s) for s in sentences]
    sentence_stems = [frozenset(map(stem, set(t))) for t in sentence_tokens]
    if len(sentence_stems) > 1:
        windows = tuple(a | b for a, b in itertools.pairwise(sentence_stems))
    else:
        windows = tuple(sentence_stems)
    toks = [t for ts in sentence_tokens for t in ts]
    return PremiseText(
        text=text,
        counts=Counter(toks),
        stems=frozenset().union(*sentence_stems),
        words=frozenset(toks),
        windows=windows,
        sentence_stems=tuple(sentence_stems),
        prefixes=frozenset(w[:k] for ss in sentence_stems for w in ss for k in (4, PREFIX)),
        joined=f" {' '.join(toks)} ",
        sentences=sentences,
        negated=not NEGATIONS.isdisjoint(toks),
    )


@dataclass(frozen=True, slots=True)
class BlockText:
    """What the cells of one block share: how many of the block's claims hold each stem.

    With a premise, it gives the IDF weights of the claims' content stems (:meth:`idf`).
    """

    claim_df: dict[str, int]
    n_claims: int

    def idf(self, premise: PremiseText) -> dict[str, float]:
        """``log((N + 1) / (df + 0.5))`` of each claim stem, counting as documents the
        block's claims and the sentences of ``premise`` (its own texts only: no outside
        corpus, and no other premise, so each premise's verdicts stay its own)."""
        df = dict(self.claim_df)
        wanted = df.keys()
        for ss in premise.sentence_stems:
            for t in ss & wanted:
                df[t] += 1
        units = len(premise.sentence_stems) + self.n_claims
        return {t: math.log((units + 1) / (n + 0.5)) for t, n in df.items()}


def prepare_block(claims: Sequence[ClaimText]) -> BlockText:
    return BlockText(
        claim_df=Counter(t for c in claims for t in set(c.content)), n_claims=len(claims)
    )


@lru_cache(maxsize=4096)
def _numbers_of(text: str) -> frozenset[str]:
    return frozenset(numbers(text))


def _share(items: Sequence, present: frozenset | str) -> float:
    if not items:
        return 0.0
    return sum(map(present.__contains__, items)) / len(items)


def claim_features(claim: ClaimText, premise: PremiseText) -> list[float]:
    """The lexical features of ``claim`` against ``premise``, in ``LEXICAL_FEATURES`` order."""
    n = len(claim.tokens)
    counts = premise.counts
    hits = sum(map(premise.words.__contains__, claim.singles))
    if claim.repeats:
        hits += sum(min(c, counts.get(t, 0)) for t, c in claim.repeats)
    token_precision = hits / n if n else 0.0
    content = claim.content
    content_precision = _share(content, premise.stems)
    window = 0.0
    if content and content_precision > 0.0:
        window = max(sum(map(w.__contains__, content)) for w in premise.windows) / len(content)
    joined = premise.joined
    bigram = _share(claim.bigrams, joined)
    trigram_cover = 0.0
    if bigram > 0.0:
        covered = [False] * n
        for i, trigram in enumerate(claim.trigrams):
            if trigram in joined:
                covered[i] = covered[i + 1] = covered[i + 2] = True
        trigram_cover = sum(covered) / n
    # a quantity bound to its unit, converted, hedged (quantities.py), not a bare number
    missing_numbers = unbound_quantities(claim.text, premise.text) if claim.numbers else 0
    missing_names = sum(
        1 for w in claim.names if w not in premise.words and stem(w) not in premise.stems
    )
    return [
        token_precision,
        content_precision,
        window,
        bigram,
        trigram_cover,
        float(missing_numbers),
        float(missing_names),
        math.log1p(len(content) - sum(map(premise.stems.__contains__, content))),
        math.log1p(len(content)),
    ]


#: Features that look at the whole block or weigh words (appended after LEXICAL_FEATURES).
BLOCK_FEATURES: tuple[str, ...] = (
    "idf_precision",
    "idf_window",
    "sentence_precision",
    "prefix_precision",
    "idf_missing",
    "content_share",
    "negation_mismatch",
    "missing_dates",
)
ALL_LEXICAL_FEATURES: tuple[str, ...] = (*LEXICAL_FEATURES, *BLOCK_FEATURES)


def block_features(claim: ClaimText, premise: PremiseText, idf: dict[str, float]) -> list[float]:
    """The features of ``claim`` against ``premise`` that need word weights (``idf`` from
    :meth:`BlockText.idf`), in ``BLOCK_FEATURES`` order."""
    content = claim.content
    if not content:
        return [0.0] * len(BLOCK_FEATURES)
    weights = [idf[t] for t in content]
    total = sum(weights) or 1.0
    stems = premise.stems
    present = [t in stems for t in content]
    idf_precision = sum(w for w, p in zip(weights, present, strict=True) if p) / total
    idf_window = 0.0
    sentence = 0.0
    if idf_precision > 0.0:
        idf_window = (
            max(
                sum(w for t, w in zip(content, weights, strict=True) if t in win)
                for win in premise.windows
            )
            / total
        )
        sentence = max(sum(map(ss.__contains__, content)) for ss in premise.sentence_stems)
        sentence /= len(content)
    prefixes = premise.prefixes
    # a 4-letter stem matches as a prefix too ("larg", from "large", in "largest")
    prefix = sum(1 for t in content if t in stems or t[:PREFIX] in prefixes) / len(content)
    idf_missing = math.log1p(sum(w for w, p in zip(weights, present, strict=True) if not p))
    negation = 0.0
    if claim.negated:
        negation = float(not premise.negated)
    missing_dates = sum(1 for t in claim.dates if t not in premise.words)
    return [
        idf_precision,
        idf_window,
        sentence,
        prefix,
        idf_missing,
        len(content) / len(claim.tokens),
        negation,
        float(missing_dates),
    ]


# A name followed by its acronym in brackets: "Life Insurance Corporation of India (LIC)".
_ACRONYM_RE = re.compile(
    r"\b(?!(?:The|A|An|In|On)\s)((?:[A-Z][\w&'-]*)(?:\s+(?:of|and|for|the|de|&)?\s*[A-Z][\w&'-]*)+)\s+\(([A-Z][A-Za-z&]{1,9})\)"
)


def _initials_match(name: str, acronym: str) -> bool:
    initials = [w[0] for w in name.split() if w[0].isupper()]
    letters = [c for c in acronym if c.isupper()]
    it = iter(initials)
    return bool(letters) and letters[0] == initials[0] and all(c in it for c in letters)


def as_named_in(claim: str, premise: str) -> str:
    """``claim`` with a name it gives with its acronym in the form ``premise`` uses: the
    acronym alone where the premise has it and not the full name, the full name alone where
    the premise has that and not the acronym; unchanged otherwise.

    Examples
    --------
    >>> claim = "The Life Insurance Corporation of India (LIC) manages funds."
    >>> as_named_in(claim, "LIC is the largest investor.")
    'The LIC manages funds.'
    >>> as_named_in(claim, "The Life Insurance Corporation of India was founded in 1956.")
    'The Life Insurance Corporation of India manages funds.'
    >>> as_named_in(claim, "LIC, the Life Insurance Corporation of India, ...") == claim
    True
    """
    for match in _ACRONYM_RE.finditer(claim):
        name, acronym = match.group(1), match.group(2)
        if not _initials_match(name, acronym):
            continue
        has_acronym = re.search(rf"\b{re.escape(acronym)}\b", premise) is not None
        has_name = name.lower() in premise.lower()
        if has_acronym != has_name:
            kept = acronym if has_acronym else name
            return as_named_in(claim[: match.start()] + kept + claim[match.end() :], premise)
    return claim
