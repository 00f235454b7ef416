"""A reference answer read as the answer to its question: a leading pronoun takes the
question's subject.

Short references lean on their question: "It was completed in 1889." states that the Eiffel
Tower was completed in 1889 only as the answer to "When was the Eiffel Tower completed?".
Cut into claims on its own, the reference gives "It was completed in 1889.", a claim that
nothing can entail or contradict. :func:`read_reference` writes the question's subject in
place of the pronoun before the reference is cut into claims:

* **The subject** is the question's ``nsubj`` / ``nsubjpass`` noun phrase in spaCy's parse
  ("When was *the Eiffel Tower* completed?"), or, when the subject is the question word
  ("*Who* painted *the Mona Lisa*?"), its direct object, which only a passive reference
  refers back to ("It was painted by Leonardo." but not "It was Leonardo." or "He painted
  it."). A subject that holds a question word ("Which element ...") is what is asked, not
  known, and nothing is replaced.
* **The pronoun** is the first word of the reference's first sentence: "It", "This" (as a
  pronoun, not "This tower"), "He", "She", "They", or the possessives "Its", "His", "Her",
  "Their" (written "<subject>'s"). It must agree with the subject: "He"/"She" a person (a
  name without an article, or a noun like "president"), "They" a plural, "It" not a plural.
  "It was in 1889." answering a "When" question is about the event, not the subject, and
  stays as it is.
* **Without spaCy** a careful pattern finds capitalised names after the question's auxiliary
  ("When was the Eiffel Tower completed?", "Where is Lake Geneva?") and the object of "Who
  <verb>ed <Name>?"; anything else is left unchanged.

The reading only ever replaces the pronoun; a reference whose subject cannot be found is
returned as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragmeter.text import is_polar_question

__all__ = ["question_subject", "read_reference", "read_references", "yes_no_statement"]

_SUBJECT_PRONOUNS = frozenset({"it", "this", "he", "she", "they"})
_POSSESSIVES = frozenset({"its", "his", "her", "their"})
_PERSONAL = frozenset({"he", "she", "his", "her"})
_PLURAL = frozenset({"they", "their"})
_WH = frozenset({"who", "whom", "whose", "what", "which", "when", "where", "why", "how"})
_PERSON_NOUNS = frozenset(
    str.split(
        """person man woman boy girl child president king queen prince princess emperor empress
    author writer poet novelist painter artist sculptor composer musician singer actor actress
    director inventor founder ceo chairman leader scientist physicist chemist mathematician
    philosopher explorer astronaut pilot player captain coach minister chancellor pope
    general emperor monarch ruler governor mayor senator architect engineer designer
    discoverer creator son daughter father mother wife husband"""
    )
)
_BE = frozenset({"is", "was", "are", "were"})
_PREPOSITIONS = frozenset(
    {"in", "on", "at", "during", "around", "about", "after", "before", "since", "until", "by"}
)
_LEAD_RE = re.compile(r"^(\s*)([A-Za-z]+)\b")


def _first_sentence_lead(reference: str) -> tuple[str, str, str] | None:
    """(leading space, pronoun as written, rest of the text) when the reference opens with
    one of the pronouns, else None."""
    match = _LEAD_RE.match(reference)
    if match is None:
        return None
    word = match.group(2)
    if word.lower() not in _SUBJECT_PRONOUNS | _POSSESSIVES or not word[0].isupper():
        return None
    return match.group(1), word, reference[match.end() :]


# ----------------------------------------------------------------------------- the subject


class _Subject:
    """The question's subject phrase and what a pronoun must agree with."""

    __slots__ = ("by_object", "either", "person", "phrase", "plural", "when")

    def __init__(
        self,
        phrase: str,
        *,
        plural: bool,
        either: bool = False,
        person: bool,
        by_object: bool,
        when: bool,
    ) -> None:
        self.phrase = phrase
        self.plural = plural
        #: The number cannot be told from the phrase: "It" and "They" both agree.
        self.either = either
        self.person = person
        #: The phrase is the object of a "Who <verb> X?" question.
        self.by_object = by_object
        #: The question asks "When ...?".
        self.when = when


def _phrase_of(noun: Any) -> str | None:
    tokens = list(noun.subtree)
    if any(t.lower_ in _WH for t in tokens):
        return None
    text = "".join(t.text_with_ws for t in tokens).strip()
    return text or None


def _parsed_subject(doc: Any) -> _Subject | None:
    sent = next(iter(doc.sents), None)
    if sent is None:
        return None
    when = sent[0].lower_ == "when"
    root = sent.root
    verbs = [root] + [t for t in sent if t.dep_ in ("aux", "auxpass") and t.head.i == root.i]
    subject = next((c for v in verbs for c in v.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    by_object = False
    if subject is not None and subject.lower_ in _WH and subject.pos_ == "PRON":
        # "Who painted the Mona Lisa?": what a passive reference is about is the object.
        subject = next((c for c in root.children if c.dep_ == "dobj"), None)
        by_object = True
    if subject is None or subject.pos_ not in ("NOUN", "PROPN"):
        return None
    phrase = _phrase_of(subject)
    if phrase is None:
        return None
    has_article = subject.left_edge.lower_ in ("the", "a", "an")
    person = (subject.pos_ == "PROPN" and not has_article) or subject.lower_ in _PERSON_NOUNS
    plural = subject.tag_ in ("NNS", "NNPS") or any(c.dep_ == "conj" for c in subject.children)
    # "the Federalist Papers" (tagged NNP), "the United States": "It" or "They".
    either = subject.pos_ == "PROPN" and has_article and _looks_plural(subject.text)
    return _Subject(
        phrase, plural=plural, either=either, person=person, by_object=by_object, when=when
    )


def _looks_plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


_NAME = r"(?-i:[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|of|de|da|von|van|the))*)"
_AUX_QUESTION_RE = re.compile(
    r"^(?P<wh>when|where|why|how(?:\s+\w+)?)\s+(?:is|was|are|were|did|does|do|has|have|had)\s+"
    rf"(?P<subject>(?:the\s+)?{_NAME})(?:\s+[a-z][\w-]*)*\s*\?\s*$",
    re.IGNORECASE,
)
_WHO_QUESTION_RE = re.compile(
    rf"^who\s+[a-z]+(?:ed|ote|ilt|ew|ang|ung|ound|ade|ent)\s+(?P<object>(?:the\s+)?{_NAME})\s*\?\s*$",
    re.IGNORECASE,
)


def _pattern_subject(question: str) -> _Subject | None:
    text = " ".join(question.split())
    match = _AUX_QUESTION_RE.match(text)
    by_object = False
    if match is None:
        match = _WHO_QUESTION_RE.match(text)
        by_object = True
        if match is None:
            return None
        phrase = match.group("object")
    else:
        phrase = match.group("subject")
    # The name's words must start with capitals (the pattern is case-blind for "When").
    words = phrase.split()
    content = [w for w in words if w.lower() not in ("the", "of", "de", "da", "von", "van")]
    if not content or not all(w[0].isupper() for w in content):
        return None
    has_article = words[0].lower() == "the"
    return _Subject(
        phrase,
        plural=False,
        either=has_article and _looks_plural(words[-1]),
        person=not has_article,
        by_object=by_object,
        when=text.lower().startswith("when"),
    )


def question_subject(question: str | None, nlp: Any | None = None) -> str | None:
    """The noun phrase a question asks about, or None when none can be found.

    Parameters
    ----------
    question : str or None
        The question.
    nlp : spaCy pipeline or None
        A pipeline with a parser (:func:`ragmeter.models.syntax.load_parser`); ``None``
        uses the pattern fallback (capitalised names only).

    Examples
    --------
    >>> question_subject("When was the Eiffel Tower completed?")
    'the Eiffel Tower'
    >>> question_subject("What is the capital of France?") is None
    True
    """
    found = _subject(question, nlp)
    return found.phrase if found is not None else None


def _subject(question: str | None, nlp: Any | None) -> _Subject | None:
    if not question or not question.strip():
        return None
    if nlp is None:
        return _pattern_subject(question)
    from ragmeter.models.syntax import parse

    return _parsed_subject(parse(nlp, [question.strip()])[0])


# ----------------------------------------------------------------------------- the reading


def _agrees(pronoun: str, subject: _Subject) -> bool:
    word = pronoun.lower()
    if word in _PERSONAL:
        return subject.person and not subject.plural and not subject.by_object
    if word in _PLURAL:
        return subject.plural or subject.either
    return not subject.plural or subject.either  # it, its, this


_PASSIVE_RE = re.compile(
    r"^\s*(?:is|was|are|were|has\s+been|have\s+been|had\s+been)\s+(?:\w+ly\s+)?"
    r"[a-z]+(?:ed|en|wn|ilt|ght|ung|ote|ade|ound|ept|eld|ent|old|ld|t)\b"
)


def _refers_to_subject(pronoun: str, rest: str, subject: _Subject) -> bool:
    """Whether the pronoun, followed by ``rest``, is the question's subject."""
    words = rest.split()
    first = words[0].lower().strip(",.;:") if words else ""
    if pronoun.lower() == "this" and first not in _BE and first not in ("has", "had", "was"):
        return False  # "This tower ...": a determiner, not a pronoun
    if subject.by_object:
        # Only a passive clause is about the object of "Who painted X?".
        return pronoun.lower() in ("it", "they") and _PASSIVE_RE.match(rest) is not None
    if subject.when and first in _BE and len(words) > 1:
        after = words[1].lower()
        if after in _PREPOSITIONS or after[:1].isdigit():
            return False  # "It was in 1889.": the event, not the subject
    return True


def _capitalised(phrase: str) -> str:
    return phrase[0].upper() + phrase[1:] if phrase else phrase


def read_reference(question: str | None, reference: str, nlp: Any | None = None) -> str:
    """``reference`` with its leading pronoun replaced by the question's subject.

    Parameters
    ----------
    question : str or None
        The question the reference answers.
    reference : str
        A reference answer.
    nlp : spaCy pipeline or None
        A pipeline with a parser; ``None`` uses the pattern fallback.

    Returns
    -------
    str
        The reference as it reads for its question; unchanged when it opens with no pronoun
        or the question's subject cannot be found or does not agree with the pronoun.

    Examples
    --------
    >>> read_reference("When was the Eiffel Tower completed?", "It was completed in 1889.")
    'The Eiffel Tower was completed in 1889.'
    >>> read_reference("Where is Lake Geneva?", "Its shores touch France.")
    "Lake Geneva's shores touch France."
    >>> read_reference("When was the Eiffel Tower completed?", "In 1889.")
    'In 1889.'
    """
    if _first_sentence_lead(reference) is None:
        return reference
    return _read(reference, _subject(question, nlp))


def _read(reference: str, subject: _Subject | None) -> str:
    lead = _first_sentence_lead(reference)
    if lead is None or subject is None:
        return reference
    space, pronoun, rest = lead
    if not _agrees(pronoun, subject) or not _refers_to_subject(pronoun, rest, subject):
        return reference
    phrase = _capitalised(subject.phrase)
    if pronoun.lower() in _POSSESSIVES:
        phrase += "'" if phrase.endswith("s") and subject.plural else "'s"
    return f"{space}{phrase}{rest}"


def read_references(
    question: str | None, references: Sequence[str], nlp: Any | None = None
) -> list[str]:
    """:func:`read_reference` for each of ``references``, a bare "Yes." or "No." made the
    statement it answers (:func:`yes_no_statement`); the question is parsed once."""
    references = [yes_no_statement(question, r, nlp) or r for r in references]
    if not any(_first_sentence_lead(r) for r in references):
        return list(references)
    subject = _subject(question, nlp)
    return [_read(r, subject) for r in references]


_BARE_YES_NO = re.compile(r"^\s*(yes|no)\b[\s.!,]*$", re.IGNORECASE)


def yes_no_statement(question: str | None, reference: str, nlp: Any | None) -> str | None:
    """The statement a bare "Yes." or "No." makes of a yes/no question, or None.

    "Does the Pro plan include single sign-on?" answered "No." states "The Pro plan does not
    include single sign-on."; the question's subject is found by spaCy's parse (None
    without it, and for any other question or reference).

    >>> from ragmeter.models.syntax import load_parser
    >>> yes_no_statement("Is the silver warbler endangered?", "No.", load_parser())
    'The silver warbler is not endangered.'
    """
    answer = _BARE_YES_NO.match(reference)
    if answer is None or not question or nlp is None:
        return None
    words = question.strip().rstrip("?").split()
    if len(words) < 3 or not is_polar_question(question):
        return None
    doc = nlp(" ".join(words))
    subjects = [t for t in doc if t.dep_ in ("nsubj", "nsubjpass", "expl") and t.i > 0]
    if not subjects:
        return None
    head = subjects[0]
    # the subject's words up to a verb that describes it ("Brightvane Robotics | listed on
    # a stock exchange"), its other right-hand words kept ("the capital of France")
    end = head.right_edge.i + 1
    for token in doc[head.i + 1 : end]:
        if token.tag_.startswith("VB"):
            end = token.i
            break
    span = doc[head.left_edge.i : end]
    rest = doc[span.end :].text
    if span.start != 1 or not rest:
        return None
    negation = " not" if answer.group(1).lower() == "no" else ""
    subject = span.text[:1].upper() + span.text[1:]
    return f"{subject} {words[0].lower()}{negation} {rest}.".replace(" .", ".")
