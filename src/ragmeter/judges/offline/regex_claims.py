"""Claims by regular expressions, the splitter used without spaCy's parser: an answer cut
into sentences (``ragmeter.text.split_sentences``), long sentences cut into clauses at
semicolons and at a comma before a coordinating conjunction, and a leading subject pronoun
("It", "They", "He", "She") replaced with the subject of the previous claim when that
subject is a short noun phrase. :func:`ragmeter.judges.offline.claim_split.regex_claims` adds the
framing and hedge filters on top.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragmeter.text import split_sentences, tokens

__all__ = ["claims_by_sentence", "split_claims"]


def _words(text: str) -> list[str]:
    return text.split()


# A clause boundary: a semicolon, or a comma before a coordinating conjunction.
_CLAUSE_RE = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|yet|so)\s)", re.IGNORECASE)
_MIN_CLAUSE_WORDS = 3
_PRONOUNS = frozenset({"it", "they", "he", "she"})
# Verbs and auxiliaries that end a simple subject noun phrase.
_SUBJECT_END = frozenset(
    _words(
        """
    is are was were be been has have had do does did can could will would should may might must
    shall helps help makes make causes cause allows allow means mean uses use becomes become
    gets get takes take gives give needs need tends tend contains contain includes include
    refers refer occurs occur happens happen"""
    )
)
_LEAD_RE = re.compile(
    r"^(?:(?:and|but|so|also|additionally|furthermore|moreover|however|finally|overall|"
    r"first|second|third|then|thus|therefore|in addition|in short|in summary)\b,?\s*)+",
    re.IGNORECASE,
)


def _subject(claim: str) -> str | None:
    """The subject noun phrase of a simple claim: the words before its first verb."""
    words = _LEAD_RE.sub("", claim).split()
    for i, word in enumerate(words[:7]):
        w = word.lower().strip(",")
        # A listed verb, or a singular noun followed by a verb in -s / -ed ("water boils").
        verb_like = 0 < i < 5 and w.endswith(("s", "ed")) and not words[i - 1].endswith("s")
        if w in _SUBJECT_END or verb_like:
            if i == 0 or words[0].lower() in _PRONOUNS:
                return None
            phrase = words[:i]
            if any(w.endswith(",") for w in phrase):
                return None
            return " ".join(phrase)
    return None


def _resolve_pronoun(claim: str, subject: str | None) -> str:
    if subject is None:
        return claim
    first, _, rest = claim.partition(" ")
    if first.lower() not in _PRONOUNS or not rest:
        return claim
    head = subject[0].upper() + subject[1:] if subject[0].islower() else subject
    return f"{head} {rest}"


def _clauses(sentence: str) -> list[str]:
    parts = [p.strip() for p in _CLAUSE_RE.split(sentence) if p.strip()]
    if len(parts) < 2:
        return [sentence]
    merged: list[str] = []
    for part in parts:
        if merged and (
            len(part.split()) < _MIN_CLAUSE_WORDS or len(merged[-1].split()) < _MIN_CLAUSE_WORDS
        ):
            merged[-1] = f"{merged[-1]}, {part}"
        else:
            merged.append(part)
    out = []
    for part in merged:
        part = re.sub(r"^(?:and|but|while|whereas|yet|so)\s+", "", part, flags=re.IGNORECASE)
        part = part[0].upper() + part[1:] if part else part
        out.append(part if part.endswith((".", "!", "?")) else part.rstrip(",;") + ".")
    return out


def split_claims(text: str, *, clauses: bool = True, resolve_pronouns: bool = True) -> list[str]:
    """Claims of ``text``: sentences, cut into clauses, leading pronouns resolved.

    Examples
    --------
    >>> split_claims("The Eiffel Tower is in Paris. It was built in 1889.")
    ['The Eiffel Tower is in Paris.', 'The Eiffel Tower was built in 1889.']
    >>> split_claims("")
    []
    """
    per_sentence = claims_by_sentence(
        split_sentences(text), clauses=clauses, resolve_pronouns=resolve_pronouns
    )
    return [claim for claims in per_sentence for claim in claims]


def claims_by_sentence(
    sentences: Sequence[str], *, clauses: bool = True, resolve_pronouns: bool = True
) -> list[list[str]]:
    """The claims of each of ``sentences`` (already split), pronouns resolved across them."""
    out: list[list[str]] = []
    subject: str | None = None
    for sentence in sentences:
        claims: list[str] = []
        if tokens(sentence):
            for clause in _clauses(sentence.strip()) if clauses else [sentence.strip()]:
                if not tokens(clause):
                    continue
                if resolve_pronouns:
                    clause = _resolve_pronoun(clause, subject)
                    subject = _subject(clause) or subject
                claims.append(clause)
        out.append(claims)
    return out
