"""One parsed sentence into atomic claims (:func:`sentence_claims`): the clauses,
appositives, participles, relative clauses and list items that leave the main clause as
claims of their own, each readable alone (see :mod:`~ragmeter.judges.offline.claim_split`
for what is split and why).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragmeter.judges.offline.claim_grammar import (
    AGREE,
    COMMAS,
    CONTRAST_MARKS,
    COPULAS,
    DETERMINERS,
    NOT_LISTED_AFTER,
    NOUNS,
    PRONOUNS,
    SUBJECTS,
    be_form,
    comma_before,
    comma_next_to,
    finite_form,
    is_past,
    is_plural,
    is_verb,
    loose_appositives,
    shares_auxiliary,
    subject_of,
    subtree_of,
    word_list,
)

__all__ = ["sentence_claims"]


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
        self.loose_appositives: list[tuple[Any, set[int], set[int]]] = loose_appositives(
            sent, self.detached
        )

    def _detach_kind(self, token: Any) -> str | None:
        sent, dep = self.sent, token.dep_
        if dep == "appos" and comma_before(sent, token) and token.pos_ in NOUNS:
            return "appos"
        if dep == "relcl" and comma_before(sent, token):
            wh = [c for c in token.children if c.tag_ in ("WDT", "WP") and c.dep_ in SUBJECTS]
            if wh and wh[0].lower_ in ("which", "who"):
                return "relcl"
        if dep == "acl" and token.tag_ in ("VBN", "VBG") and comma_before(sent, token):
            return "participle"
        if dep == "advcl":
            marks = {c.lower_ for c in token.children if c.dep_ == "mark"}
            has_subject = subject_of(token) is not None
            participle = not has_subject and not marks and token.tag_ in ("VBN", "VBG")
            if participle and comma_next_to(sent, token):
                return "participle"
            if has_subject and (
                marks & CONTRAST_MARKS or (marks == {"as"} and comma_before(sent, token))
            ):
                return "clause"
        if dep in ("ccomp", "parataxis") and subject_of(token) is not None:
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
                if c.dep_ == "conj" and (is_verb(c) or subject_of(c) is not None)
            )
        return sorted(heads, key=lambda t: t.i)

    def own_tokens(self, head: Any, others: Sequence[Any]) -> set[int]:
        """``head``'s subtree without other clause heads' subtrees, detached parts, and the
        conjunctions and punctuation that join them."""
        keep = subtree_of(head)
        for other in others:
            if other.i != head.i and other.i in keep:
                keep -= subtree_of(other)
                for c in other.head.children:  # "and" / "," before the coordinated clause
                    if c.dep_ in ("cc", "punct") and c.i < other.i:
                        keep.discard(c.i)
        return self.without_detached(keep, head)

    def without_detached(self, keep: set[int], head: Any) -> set[int]:
        """``keep`` without the detached parts under ``head`` and the commas around them."""
        for i, (_, token) in self.detached.items():
            if i in keep and i != head.i:
                keep -= subtree_of(token)
                for edge in (token.left_edge.i - 1, token.right_edge.i + 1):
                    if self.sent.start <= edge < self.sent.end and self.doc[edge].text in COMMAS:
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
        return self.render(self.without_detached(subtree_of(noun), noun)).rstrip(".")


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
    return f"{first.lower()} {rest}" if first in DETERMINERS and rest else text


def sentence_claims(nlp: Any, sent: Any, previous: str | None) -> tuple[list[str], str | None]:
    """The claims of one parsed sentence, and the subject the next sentence's pronoun
    refers to."""
    s = _Sentence(nlp, sent)
    heads = s.clause_heads()
    heads += [t for _, (kind, t) in sorted(s.detached.items()) if kind == "clause"]
    claims: list[str] = []
    first_subject: str | None = None
    first_noun: Any | None = None
    for n, head in enumerate(heads):
        subject = subject_of(head)
        keep = s.own_tokens(head, heads)
        keep -= {c.i for c in head.children if c.dep_ == "mark"}
        text_subject: str | None = None
        if subject is not None and subject.lower_ in PRONOUNS and len(subtree_of(subject)) == 1:
            referent = first_subject if n > 0 and first_subject else previous
            text_subject = referent if referent is not None else subject.text
        elif subject is not None and subject.pos_ in NOUNS:
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
            span = subtree_of(subject) & keep
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
                if aux and shares_auxiliary(heads0, head):
                    lead += " " + " ".join(a.text for a in aux)
            lead_text: str | None = lead
        else:
            lead_text = None
        located: list[str] = []
        for variant in _adjunct_variants(head, keep):
            for prep, noun in _placed_names(s, head, variant):
                variant = variant - subtree_of(prep)
                name = s.render(subtree_of(noun) - subtree_of(prep))
                located.append(
                    f"{name} {be_form(noun, is_past(head))} {s.render(subtree_of(prep))}"
                )
            claims.extend(_listed(s, variant, replace, lead_text=lead_text, lists=is_verb(head)))
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
        claims.append(f"{phrase} {be_form(noun, is_past(heads[0]))} {s.render(span)}")
    subject_next = first_subject if first_noun is not None else previous
    if first_noun is not None and first_noun.pos_ not in NOUNS and first_subject == previous:
        subject_next = previous
    elif first_noun is not None and first_noun.pos_ not in NOUNS:
        subject_next = None  # "we", "I", an unresolved pronoun: nothing to refer back to
    return [c for c in (_sentence_end(c) for c in claims) if c], subject_next


_YEAR_RE = re.compile(r"^(?:1[0-9]{3}|20[0-9]{2})s?$")
_MONTHS = frozenset(
    word_list(
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
    if not is_verb(head) or any(c.dep_ == "neg" for c in head.children):
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
        with_date -= subtree_of(other)
    variants = [with_date, keep - subtree_of(dates[0])]
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
    if subject is None or subject.pos_ != "NOUN" or verb.lower_ not in COPULAS:
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
            head = s.doc[start].head if s.doc[start].dep_ in SUBJECTS else None
            for i in sorted(span):  # "X, Y and Z are ..." → "X is ..."
                token = s.doc[i]
                if token.dep_ in ("nsubj", "nsubjpass"):
                    head = token.head
                    break
            if head is not None and head.i in keep and head.lower_ in AGREE:
                for variant in variants:
                    variant[head.i] = ({head.i}, AGREE[head.lower_])
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
        if token.pos_ not in NOUNS or token.dep_ == "conj":
            continue
        if token.dep_ not in ("nsubj", "nsubjpass", "dobj", "attr", "pobj", "oprd", "appos"):
            continue
        if token.dep_ == "pobj" and token.head.lower_ in NOT_LISTED_AFTER:
            continue
        chain = [token]
        stack = [c for c in token.children if c.dep_ == "conj"]
        while stack:
            item = stack.pop(0)
            chain.append(item)
            stack.extend(c for c in item.children if c.dep_ == "conj")
        if len(chain) < 2 or not all(t.pos_ in NOUNS for t in chain):
            continue
        if any(c.dep_ == "cc" and c.lower_ in ("or", "nor") for t in chain for c in t.children):
            continue
        span = subtree_of(token) & keep
        phrases = []
        for item in chain:
            own = subtree_of(item) & keep
            for c in item.children:
                if c.dep_ in ("conj", "cc") or (c.dep_ == "punct" and c.i > item.i):
                    own -= subtree_of(c)
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
        and noun.head.lower_ in COPULAS
        and first_subject is not None
    ):
        return first_subject, first_noun if first_noun is not None else noun
    if noun.pos_ == "PRON" and noun.lower_ in PRONOUNS and first_subject is not None:
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
    owner = subject_of(noun.head)
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
    return f"{name}' {phrase}" if name.endswith("s") and is_plural(owner) else f"{name}'s {phrase}"


# Participles that say how a person felt, not what was done to the object before them.
_FEELINGS = frozenset(
    word_list(
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
        if child.dep_ == "dobj" and child.right_edge.i == comma - 1 and child.pos_ in NOUNS:
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
    past = is_past(heads[0])
    own = subtree_of(token)
    for i, (_, other) in s.detached.items():
        if i in own and i != token.i:
            own -= subtree_of(other)
    if kind == "appos":
        subject, noun = _antecedent(s, token.head, first_subject, first_noun)
        return f"{subject} {be_form(noun, past)} {s.render(own, _possessive_owner(s, token, own))}"
    if kind == "relcl":
        subject, noun = _antecedent(s, token.head, first_subject, first_noun)
        wh = next(c for c in token.children if c.tag_ in ("WDT", "WP") and c.dep_ in SUBJECTS)
        return s.render(own, {wh.i: ({wh.i}, subject)})
    if kind == "participle":
        obj = _object_before(s, token) if token.dep_ == "advcl" else None
        if obj is not None:
            # "Mary Shelley wrote Frankenstein, first published in 1818": the book was.
            subject, noun = _antecedent(s, obj, first_subject, first_noun)
            past = is_past(token.head) or past
        elif token.dep_ == "advcl":
            verb = token.head
            subject_token = subject_of(verb)
            if subject_token is None or subject_token.lower_ in PRONOUNS:
                subject, noun = first_subject, first_noun
            else:
                subject, noun = s.phrase(subject_token), subject_token
            past = is_past(verb) or past
        else:
            subject, noun = _antecedent(s, token.head, first_subject, first_noun)
        if subject is None:
            return None
        if token.tag_ == "VBN":
            # "The tower, completed in 1889, is tall": it was completed then.
            past = past or any(_is_date(t) for t in token.subtree)
            return f"{subject} {be_form(noun, past)} {s.render(own)}"
        plural = noun is not None and is_plural(noun)
        verb_text = finite_form(s.nlp, token, past, plural)
        rest = own - {token.i}
        rest -= {c.i for c in token.children if c.dep_ in ("aux", "neg") and c.i < token.i}
        left = {i for i in rest if i < token.i}
        before = f" {s.render(left)}" if left else ""
        return f"{subject}{before} {verb_text} {s.render(rest - left)}".strip()
    return None
