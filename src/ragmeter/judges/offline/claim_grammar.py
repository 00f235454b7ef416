"""The grammar the offline claim splitter reads from spaCy's parse: dependency labels,
word classes, verb and noun forms ("was" or "were", a finite verb in the past), commas, and
appositives the parser missed. Used by :mod:`~ragmeter.judges.offline.sentence_claims`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AGREE",
    "COMMAS",
    "CONTRAST_MARKS",
    "COPULAS",
    "DETERMINERS",
    "NOT_LISTED_AFTER",
    "NOUNS",
    "PRONOUNS",
    "SUBJECTS",
    "be_form",
    "comma_before",
    "comma_next_to",
    "finite_form",
    "is_past",
    "is_plural",
    "is_verb",
    "loose_appositives",
    "shares_auxiliary",
    "subject_of",
    "subtree_of",
    "word_list",
]


# Dependency labels (spaCy's English scheme, ClearNLP style).
SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
PRONOUNS = frozenset({"it", "they", "he", "she", "this"})
CONTRAST_MARKS = frozenset({"while", "whereas", "although", "though"})
NOT_LISTED_AFTER = frozenset({"between", "among", "amongst"})
NOUNS = frozenset({"NOUN", "PROPN", "NUM"})
DETERMINERS = frozenset({"The", "A", "An", "This", "These", "That", "Those"})
_PAST_AUX = frozenset({"was", "were", "had", "did"})
COPULAS = frozenset(
    {"is", "are", "was", "were", "be", "been", "remains", "remained", "becomes", "became"}
)
COMMAS = frozenset({",", "—", "–"})
AGREE = {"are": "is", "were": "was", "have": "has"}
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


def word_list(text: str) -> list[str]:
    return text.split()


def is_verb(token: Any) -> bool:
    return token.pos_ in ("VERB", "AUX")


def subtree_of(token: Any) -> set[int]:
    return {t.i for t in token.subtree}


def subject_of(verb: Any) -> Any | None:
    for child in verb.children:
        if child.dep_ in SUBJECTS:
            return child
    return None


def comma_next_to(sent: Any, token: Any) -> bool:
    """A comma (or dash) right before or right after ``token``'s subtree."""
    doc = token.doc
    before = token.left_edge.i - 1
    after = token.right_edge.i + 1
    return (before >= sent.start and doc[before].text in {",", "—", "–"}) or (
        after < sent.end and doc[after].text in {",", "—", "–"}
    )


def comma_before(sent: Any, token: Any) -> bool:
    before = token.left_edge.i - 1
    return before >= sent.start and token.doc[before].text in {",", "—", "–", "-"}


def is_past(verb: Any) -> bool:
    if verb.tag_ == "VBD":
        return True
    return any(c.dep_ in ("aux", "auxpass") and c.lower_ in _PAST_AUX for c in verb.children)


def is_plural(noun: Any) -> bool:
    return noun.tag_ in ("NNS", "NNPS") or any(c.dep_ == "conj" for c in noun.children)


def be_form(noun: Any | None, past: bool) -> str:
    plural = noun is not None and (is_plural(noun) or noun.lower_ in ("they", "we", "these"))
    if past:
        return "were" if plural else "was"
    return "are" if plural else "is"


def finite_form(nlp: Any, verb: Any, past: bool, plural: bool) -> str:
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
    word_list(
        """died lived moved returned retired grew became went came remained arrived worked
    served fell rose ran left began ended started continued stayed lasted existed"""
    )
)


def shares_auxiliary(first: Any, verb: Any) -> bool:
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


def loose_appositives(
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
