"""Hard training pairs for the claim verifier, one generator per failure kind.

Every pair is made by a rule from a sentence of licensed, unlabelled text (the training half
of WiCE's evidence and the MNLI premises of negation_nli: see ``verifier_data``); no probe or
evaluation text is read. Each kind yields high-overlap negatives and low-overlap positives, so
that word overlap alone cannot tell the labels apart:

* entity: another entity of its type, preferably one the window mentions (not) / the entity
  named by the acronym the premise defines, "Full Name (FN)" (entailed);
* relation: a relation word swapped for a neighbour (designed/built, founded/led, won/hosted)
  / for a synonym (built/constructed, bought/acquired);
* role: subject and object exchanged, active or passive / the active sentence made passive,
  the passive one active;
* number: a number, year or conversion changed / digits as words, "about" with rounding,
  unit conversions, decades and centuries, "more than" a smaller number;
* negation: a negation flipped, "not" with the same word / "not" with an antonym, negated
  forms restated ("not allowed" / "prohibited");
* quantifier: a claim stronger than the premise (some -> all, may -> will) / weaker (all ->
  some, causes -> can cause);
* temporal: before/after, until/since, formerly/currently (not);
* chimeric: one sentence's subject with the next one's predicate (not) / the same where the
  next sentence's subject is a pronoun for it (entailed);
* extra: an unsupported phrase added (a year, a place, a person, a cause) / a prepositional
  phrase dropped;
* coreference: a later mention turned into a pronoun in the premise, the claim names it
  (entailed) or names another entity of its type that the window mentions (not);
* counterfactual: the same edit made to premise and claim (entailed: the premise counts);
* qa: a short answer read with its question, the claim restating it (entailed), changing
  the answer or adding to it (not).

``noisy`` then lowercases, PTB-tokenises or puts typos into a share of all pairs (labels kept).
Everything is deterministic given the seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: Premise format of an answer read with its question (ragmeter.types.answer_premise).
QUESTION_MARK, ANSWER_MARK = "Question: ", "\nAnswer: "

ENTAIL, NEUTRAL, CONTRA = 0, 1, 2

# ----------------------------------------------------------------------------- word lists

#: (word, synonym): swapping one for the other keeps the meaning (general English).
SYNONYMS: tuple[tuple[str, str], ...] = (
    ("built", "constructed"),
    ("bought", "purchased"),
    ("acquired", "bought"),
    ("began", "started"),
    ("begins", "starts"),
    ("started", "began"),
    ("finished", "completed"),
    ("completed", "finished"),
    ("founded", "established"),
    ("established", "set up"),
    ("died", "passed away"),
    ("wrote", "authored"),
    ("largest", "biggest"),
    ("large", "big"),
    ("small", "little"),
    ("big", "large"),
    ("fast", "quick"),
    ("quickly", "rapidly"),
    ("help", "assist"),
    ("helped", "assisted"),
    ("shows", "demonstrates"),
    ("showed", "demonstrated"),
    ("said", "stated"),
    ("says", "states"),
    ("reported", "stated"),
    ("received", "got"),
    ("obtained", "got"),
    ("allowed", "permitted"),
    ("permitted", "allowed"),
    ("banned", "prohibited"),
    ("prohibited", "forbidden"),
    ("required", "mandatory"),
    ("mandatory", "required"),
    ("approximately", "about"),
    ("roughly", "about"),
    ("around", "about"),
    ("many", "numerous"),
    ("often", "frequently"),
    ("frequently", "often"),
    ("people", "individuals"),
    ("children", "kids"),
    ("car", "automobile"),
    ("cars", "automobiles"),
    ("doctor", "physician"),
    ("doctors", "physicians"),
    ("film", "movie"),
    ("films", "movies"),
    ("movie", "film"),
    ("company", "firm"),
    ("companies", "firms"),
    ("city", "town"),
    ("begin", "start"),
    ("end", "finish"),
    ("ended", "finished"),
    ("increase", "rise"),
    ("increased", "rose"),
    ("decreased", "fell"),
    ("reduce", "lower"),
    ("reduced", "lowered"),
    ("purchase", "buy"),
    ("main", "principal"),
    ("important", "significant"),
    ("difficult", "hard"),
    ("enough", "sufficient"),
    ("nearly", "almost"),
    ("almost", "nearly"),
    ("entire", "whole"),
    ("whole", "entire"),
    ("chose", "selected"),
    ("selected", "chose"),
    ("appointed", "named"),
    ("elected", "voted in"),
    ("earned", "made"),
    ("won", "claimed"),
    ("moved", "relocated"),
    ("located", "situated"),
    ("near", "close to"),
    ("shut", "closed"),
    ("closed", "shut"),
    ("attempt", "try"),
    ("attempted", "tried"),
    ("lawyer", "attorney"),
    ("lawyers", "attorneys"),
    ("illness", "disease"),
    ("disease", "illness"),
    ("medicine", "medication"),
    ("rules", "regulations"),
    ("employees", "staff"),
    ("workers", "employees"),
    ("annual", "yearly"),
    ("yearly", "annual"),
)

#: (word, neighbour): right entities, another relation; the claim is then not supported.
RELATION_SHIFTS: tuple[tuple[str, str], ...] = (
    ("designed", "built"),
    ("built", "designed"),
    ("founded", "led"),
    ("led", "founded"),
    ("wrote", "translated"),
    ("written", "translated"),
    ("translated", "wrote"),
    ("directed", "produced"),
    ("produced", "directed"),
    ("born", "died"),
    ("died", "was born"),
    ("hosted", "won"),
    ("won", "hosted"),
    ("invented", "patented"),
    ("discovered", "named"),
    ("owns", "operates"),
    ("operates", "owns"),
    ("president", "founder"),
    ("founder", "president"),
    ("composed", "performed"),
    ("performed", "composed"),
    ("capital", "largest city"),
    ("largest", "oldest"),
    ("oldest", "largest"),
    ("married", "divorced"),
    ("elected", "nominated"),
    ("nominated", "elected"),
    ("announced", "completed"),
    ("proposed", "approved"),
    ("recommended", "approved"),
    ("approved", "proposed"),
    ("postponed", "cancelled"),
    ("cancelled", "postponed"),
    ("resigned", "was dismissed"),
    ("acquired", "merged with"),
    ("studied", "taught"),
    ("taught", "studied"),
    ("coach", "captain"),
    ("captain", "coach"),
    ("visited", "lived in"),
    ("lived", "worked"),
    ("worked", "lived"),
    ("sued", "settled with"),
    ("arrested", "convicted"),
    ("charged", "convicted"),
    ("accused", "convicted"),
    ("tested", "approved"),
    ("planned", "completed"),
    ("signed", "ratified"),
    ("funded", "founded"),
    ("father", "brother"),
    ("mother", "sister"),
    ("son", "brother"),
    ("daughter", "sister"),
    ("CEO", "founder"),
    ("member", "leader"),
    ("player", "coach"),
    ("started", "ended"),
    ("exported", "imported"),
    ("imports", "exports"),
)

#: Adjective antonyms: "not" + the antonym restates the word.
ADJECTIVE_ANTONYMS: tuple[tuple[str, str], ...] = (
    ("open", "closed"),
    ("true", "false"),
    ("possible", "impossible"),
    ("legal", "illegal"),
    ("safe", "dangerous"),
    ("alive", "dead"),
    ("present", "absent"),
    ("available", "unavailable"),
    ("correct", "incorrect"),
    ("complete", "incomplete"),
    ("visible", "invisible"),
    ("active", "inactive"),
    ("public", "private"),
    ("successful", "unsuccessful"),
    ("valid", "invalid"),
    ("married", "single"),
    ("full", "empty"),
    ("wet", "dry"),
    ("same", "different"),
    ("able", "unable"),
    ("required", "optional"),
    ("free", "paid"),
    ("included", "excluded"),
    ("accurate", "inaccurate"),
    ("common", "rare"),
    ("known", "unknown"),
    ("guilty", "innocent"),
    ("permanent", "temporary"),
)
_ANTONYM = {a: b for a, b in ADJECTIVE_ANTONYMS} | {b: a for a, b in ADJECTIVE_ANTONYMS}

#: Negated phrase and a positive restatement of it.
NEGATED_FORMS: tuple[tuple[str, str], ...] = (
    ("not allowed", "prohibited"),
    ("not permitted", "forbidden"),
    ("not required", "optional"),
    ("not possible", "impossible"),
    ("not legal", "illegal"),
    ("did not accept", "rejected"),
    ("did not agree", "disagreed"),
    ("did not win", "lost"),
    ("did not survive", "died"),
    ("not present", "absent"),
    ("not available", "unavailable"),
    ("not include", "exclude"),
    ("never", "not ever"),
    ("not guilty", "innocent"),
    ("not the same", "different"),
    ("not open", "closed"),
    ("unable to", "not able to"),
    ("cannot", "is unable to"),
)

#: (premise word, claim word, label): quantifier and modality changes.
QUANTIFIER_EDITS: tuple[tuple[str, str, int], ...] = (
    ("all", "some", ENTAIL),
    ("all", "many", ENTAIL),
    ("every", "some", ENTAIL),
    ("most", "some", ENTAIL),
    ("most", "many", ENTAIL),
    ("always", "often", ENTAIL),
    ("always", "sometimes", ENTAIL),
    ("usually", "sometimes", ENTAIL),
    ("must", "should", ENTAIL),
    ("will", "may", ENTAIL),
    ("can", "may", ENTAIL),
    ("some", "all", NEUTRAL),
    ("some", "most", NEUTRAL),
    ("many", "all", NEUTRAL),
    ("many", "most", NEUTRAL),
    ("most", "all", NEUTRAL),
    ("a few", "most", NEUTRAL),
    ("several", "all", NEUTRAL),
    ("few", "many", CONTRA),
    ("often", "always", NEUTRAL),
    ("sometimes", "always", NEUTRAL),
    ("usually", "always", NEUTRAL),
    ("may", "will", NEUTRAL),
    ("might", "will", NEUTRAL),
    ("could", "will", NEUTRAL),
    ("can", "must", NEUTRAL),
    ("should", "must", NEUTRAL),
    ("may", "must", NEUTRAL),
    ("possibly", "certainly", NEUTRAL),
    ("likely", "certain", NEUTRAL),
    ("suggests", "proves", NEUTRAL),
    ("suggest", "prove", NEUTRAL),
    ("associated with", "caused by", NEUTRAL),
    ("linked to", "caused by", NEUTRAL),
    ("is associated with", "causes", NEUTRAL),
    ("reduces", "eliminates", NEUTRAL),
    ("reduced", "eliminated", NEUTRAL),
    ("helps", "guarantees", NEUTRAL),
    ("some", "no", CONTRA),
    ("all", "no", CONTRA),
    ("always", "never", CONTRA),
)

#: Verb forms: "causes" -> "can cause" is weaker (entailed); the reverse is not.
_HEDGE_RE = re.compile(r"\b(causes|increases|reduces|improves|prevents|affects|leads to)\b")
_HEDGED = {
    "causes": "cause",
    "increases": "increase",
    "reduces": "reduce",
    "improves": "improve",
    "prevents": "prevent",
    "affects": "affect",
    "leads to": "lead to",
}

TEMPORAL_SWAPS: tuple[tuple[str, str], ...] = (
    ("before", "after"),
    ("after", "before"),
    ("until", "since"),
    ("since", "until"),
    ("formerly", "currently"),
    ("former", "current"),
    ("previously", "currently"),
    ("earlier", "later"),
    ("later", "earlier"),
    ("first", "last"),
    ("last", "first"),
    ("preceded", "followed"),
    ("followed", "preceded"),
    ("will be", "was"),
    ("was", "will be"),
    ("had been", "will be"),
    ("still", "no longer"),
    ("no longer", "still"),
    ("began", "ended"),
    ("opened", "closed"),
)

#: Past participles of irregular verbs (the rest: the past tense ending in -ed).
IRREGULAR_PARTICIPLES: dict[str, str] = {
    "wrote": "written",
    "bought": "bought",
    "built": "built",
    "won": "won",
    "made": "made",
    "took": "taken",
    "gave": "given",
    "saw": "seen",
    "led": "led",
    "sold": "sold",
    "beat": "beaten",
    "drew": "drawn",
    "chose": "chosen",
    "held": "held",
    "found": "found",
    "left": "left",
    "began": "begun",
    "sent": "sent",
    "paid": "paid",
    "met": "met",
    "hit": "hit",
    "struck": "struck",
    "caught": "caught",
    "taught": "taught",
    "brought": "brought",
    "told": "told",
    "spent": "spent",
    "lost": "lost",
    "kept": "kept",
    "ran": "run",
    "sang": "sung",
    "shot": "shot",
    "threw": "thrown",
    "stole": "stolen",
    "broke": "broken",
    "founded": "founded",
    "hid": "hidden",
    "overthrew": "overthrown",
    "forgave": "forgiven",
    "knew": "known",
    "ate": "eaten",
    "bit": "bitten",
    "fed": "fed",
    "read": "read",
    "heard": "heard",
    "sought": "sought",
    "defeated": "defeated",
}
_PAST_OF = {v: k for k, v in IRREGULAR_PARTICIPLES.items()}

_NUMBER_WORD = {
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
    11: "eleven",
    12: "twelve",
    15: "fifteen",
    20: "twenty",
    30: "thirty",
    40: "forty",
    50: "fifty",
    100: "a hundred",
}
_WORD_NUMBER = {v: k for k, v in _NUMBER_WORD.items() if not v.startswith("a ")}

#: (pattern of a unit after a number, factor, unit in the claim)
UNIT_CONVERSIONS: tuple[tuple[str, float, str], ...] = (
    (r"(?:km|kilomet(?:er|re)s?)", 0.621371, "miles"),
    (r"(?:miles?)", 1.609344, "kilometres"),
    (r"(?:m|met(?:er|re)s?)(?![a-z])", 3.28084, "feet"),
    (r"(?:feet|ft)", 0.3048, "metres"),
    (r"(?:kg|kilograms?)", 2.20462, "pounds"),
    (r"(?:pounds|lbs?)(?! sterling)", 0.453592, "kilograms"),
    (r"(?:cm|centimet(?:er|re)s?)", 0.393701, "inches"),
    (r"(?:inch(?:es)?)", 2.54, "centimetres"),
    (r"(?:litres?|liters?)", 0.264172, "US gallons"),
    (r"(?:hours?)", 60.0, "minutes"),
    (r"(?:minutes?)", 60.0, "seconds"),
    (r"(?:days?)", 24.0, "hours"),
    (r"(?:weeks?)", 7.0, "days"),
    (r"(?:years?)", 12.0, "months"),
)
_NUM = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_TEMPERATURE_RE = re.compile(_NUM + r"\s?(?:°\s?C|degrees Celsius)\b")
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20[0-2]\d)\b")
_PERCENT_RE = re.compile(_NUM + r"\s?(?:%|percent|per cent)")
_PLAIN_NUM_RE = re.compile(r"(?<![\w.,$£€])" + _NUM + r"(?![\w%])")

_PRONOUN = {"PERSON": ("He", "She"), "ORG": ("It",), "GPE": ("It",), "NORP": ("They",)}
_SUBJECT_PRONOUNS = frozenset({"he", "she", "it", "they"})


# ----------------------------------------------------------------------------- helpers


@dataclass(frozen=True, slots=True)
class Case:
    """A generated pair before it becomes a training ``Pair``: premise, claim, label, kind."""

    premise: str
    claim: str
    label: int
    kind: str


@dataclass(slots=True)
class Context:
    """A sentence with the window it sits in and its parse, and pools to draw from."""

    window: list[str]
    index: int
    doc: object  # spaCy Doc of window[index]
    pools: dict[str, list[str]]
    rng: random.Random

    @property
    def sentence(self) -> str:
        return self.window[self.index]

    def premise(self, replacement: str | None = None) -> str:
        sents = list(self.window)
        if replacement is not None:
            sents[self.index] = replacement
        return " ".join(sents)


def _sub_word(text: str, word: str, new: str, rng: random.Random) -> str | None:
    """``text`` with one whole-word occurrence of ``word`` (case kept) replaced by ``new``."""
    found = list(re.finditer(rf"\b{re.escape(word)}\b", text, flags=re.IGNORECASE))
    if not found:
        return None
    m = rng.choice(found)
    if m.group(0)[0].isupper():
        new = new[0].upper() + new[1:]
    return text[: m.start()] + new + text[m.end() :]


def _as_sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().rstrip(",;:")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def _fmt(value: float) -> str:
    if value >= 1000:
        return f"{round(value):,}"
    if value >= 20:
        return str(round(value))
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _round_about(value: float) -> float:
    if value >= 1000:
        step = 10 ** (len(str(int(value))) - 2)
    elif value >= 100:
        step = 10
    elif value >= 20:
        step = 5
    else:
        step = 1
    return round(value / step) * step


def _span_text(doc: object, token: object) -> str:
    sub = list(token.subtree)  # type: ignore[attr-defined]
    return doc[sub[0].i : sub[-1].i + 1].text  # type: ignore[index]


# ----------------------------------------------------------------------------- generators


def entity_cases(ctx: Context) -> list[Case]:
    """Another entity of the same type (from the window first); an acronym the premise
    defines."""
    out: list[Case] = []
    ents = [e for e in ctx.doc.ents if e.label_ in ctx.pools]  # type: ignore[attr-defined]
    if not ents:
        return out
    ent = ctx.rng.choice(ents)
    window_text = ctx.premise()
    in_window = [
        v
        for v in ctx.pools.get(ent.label_, [])
        if v in window_text and v != ent.text and v not in ent.text and ent.text not in v
    ]
    pool = in_window or [v for v in ctx.pools.get(ent.label_, []) if v not in window_text]
    if pool:
        other = ctx.rng.choice(pool)
        claim = ctx.sentence.replace(ent.text, other, 1)
        out.append(Case(window_text, claim, CONTRA, "entity_swap"))
    words = ent.text.split()
    if (
        len(words) >= 2
        and all(w[:1].isupper() for w in words)
        and ent.label_ in ("ORG", "GPE", "FAC", "EVENT", "LAW", "PRODUCT")
    ):
        acronym = "".join(w[0] for w in words if w.lower() not in ("of", "the", "and"))
        if len(acronym) >= 2:
            defined = ctx.sentence.replace(ent.text, f"{ent.text} ({acronym})", 1)
            later = [s.replace(ent.text, acronym) for s in ctx.window]
            premise = " ".join([*later[: ctx.index], defined, *later[ctx.index + 1 :]])
            out.append(Case(premise, ctx.sentence.replace(ent.text, acronym), ENTAIL, "acronym"))
    return out


def relation_cases(ctx: Context) -> list[Case]:
    out: list[Case] = []
    s = ctx.sentence
    shifts = [(a, b) for a, b in RELATION_SHIFTS if re.search(rf"\b{a}\b", s)]
    if shifts:
        a, b = ctx.rng.choice(shifts)
        claim = _sub_word(s, a, b, ctx.rng)
        if claim:
            out.append(Case(ctx.premise(), claim, NEUTRAL, "relation_swap"))
    syns = [(a, b) for a, b in SYNONYMS if re.search(rf"\b{a}\b", s, flags=re.IGNORECASE)]
    if syns:
        ctx.rng.shuffle(syns)
        claim = s
        for a, b in syns[:2]:  # up to two synonyms: lower overlap, same meaning
            claim = _sub_word(claim, a, b, ctx.rng) or claim
        if claim != s:
            out.append(Case(ctx.premise(), claim, ENTAIL, "synonym"))
    return out


def _participle(verb: str) -> str | None:
    if verb in IRREGULAR_PARTICIPLES:
        return IRREGULAR_PARTICIPLES[verb]
    return verb if verb.endswith("ed") else None


def _past(participle: str) -> str | None:
    if participle in _PAST_OF:
        return _PAST_OF[participle]
    return participle if participle.endswith("ed") else None


def role_cases(ctx: Context) -> list[Case]:
    """Active <-> passive (entailed), subject and object exchanged (not)."""
    doc = ctx.doc
    out: list[Case] = []
    for tok in doc:  # type: ignore[attr-defined]
        if tok.pos_ != "VERB":
            continue
        subj = [c for c in tok.children if c.dep_ == "nsubj"]
        obj = [c for c in tok.children if c.dep_ == "dobj"]
        subjpass = [c for c in tok.children if c.dep_ == "nsubjpass"]
        agent = [c for c in tok.children if c.dep_ == "agent"]
        if subj and obj and tok.tag_ == "VBD" and (vbn := _participle(tok.text.lower())):
            s_text, o_text = _span_text(doc, subj[0]), _span_text(doc, obj[0])
            if len(s_text.split()) > 6 or len(o_text.split()) > 6:
                continue
            aux = "were" if obj[0].tag_ in ("NNS", "NNPS") else "was"
            head = f"{o_text} {aux} {vbn} by {_lower_np(s_text)}"
            out.append(Case(ctx.premise(), _as_sentence(head), ENTAIL, "passive"))
            aux2 = "were" if subj[0].tag_ in ("NNS", "NNPS") else "was"
            swapped = f"{s_text} {aux2} {vbn} by {_lower_np(o_text)}"
            out.append(Case(ctx.premise(), _as_sentence(swapped), CONTRA, "role_swap"))
            active_swap = f"{o_text} {tok.text} {_lower_np(s_text)}"
            out.append(Case(ctx.premise(), _as_sentence(active_swap), CONTRA, "role_swap"))
            return out
        if subjpass and agent and (past := _past(tok.text.lower())):
            by = [c for c in agent[0].children if c.dep_ == "pobj"]
            if not by:
                continue
            s_text, a_text = _span_text(doc, subjpass[0]), _span_text(doc, by[0])
            if len(s_text.split()) > 6 or len(a_text.split()) > 6:
                continue
            active = f"{a_text} {past} {_lower_np(s_text)}"
            out.append(Case(ctx.premise(), _as_sentence(active), ENTAIL, "active"))
            swapped = f"{s_text} {past} {_lower_np(a_text)}"
            out.append(Case(ctx.premise(), _as_sentence(swapped), CONTRA, "role_swap"))
            return out
    return out


def _lower_np(text: str) -> str:
    """A noun phrase moved out of first position: lowercase a leading article only."""
    first, _, rest = text.partition(" ")
    if first in ("The", "A", "An", "This", "These", "Those", "Its", "Their", "His", "Her"):
        return first.lower() + (" " + rest if rest else "")
    return text


def number_cases(ctx: Context) -> list[Case]:
    s, rng, out = ctx.sentence, ctx.rng, []
    premise = ctx.premise()
    if m := _TEMPERATURE_RE.search(s):
        c = float(m.group(1).replace(",", ""))
        f = c * 9 / 5 + 32
        good = s[: m.start()] + f"{_fmt(f)} degrees Fahrenheit" + s[m.end() :]
        out.append(Case(premise, good, ENTAIL, "conversion"))
        bad = s[: m.start()] + f"{_fmt(c)} degrees Fahrenheit" + s[m.end() :]
        out.append(Case(premise, bad, CONTRA, "conversion_wrong"))
    for pattern, factor, unit in UNIT_CONVERSIONS:
        m = re.search(_NUM + r"[\s-]?" + pattern + r"\b", s)
        if m:
            value = float(m.group(1).replace(",", ""))
            if value <= 0:
                continue
            converted = value * factor
            about = "" if unit in ("minutes", "seconds", "hours", "days", "months") else "about "
            good = s[: m.start()] + f"{about}{_fmt(converted)} {unit}" + s[m.end() :]
            out.append(Case(premise, good, ENTAIL, "conversion"))
            wrong = converted * rng.choice([0.5, 1.6, 2.5])
            bad = s[: m.start()] + f"{about}{_fmt(wrong)} {unit}" + s[m.end() :]
            out.append(Case(premise, bad, CONTRA, "conversion_wrong"))
            break
    if m := _YEAR_RE.search(s):
        year = int(m.group(1))
        before = s[: m.start()]
        if re.search(r"\bin\s*$", before):
            decade = f"the {year // 10 * 10}s"
            out.append(Case(premise, before + decade + s[m.end() :], ENTAIL, "decade"))
            wrong = f"the {(year // 10 + rng.choice([-2, -1, 1, 2])) * 10}s"
            out.append(Case(premise, before + wrong + s[m.end() :], CONTRA, "decade_wrong"))
            cent = year // 100 + 1
            suffix = "th" if cent not in (21, 1) else ("st")
            out.append(
                Case(
                    premise,
                    before + f"the {cent}{suffix} century" + s[m.end() :],
                    ENTAIL,
                    "century",
                )
            )
        shifted = year + rng.choice([-10, -3, -1, 1, 2, 5])
        out.append(Case(premise, s[: m.start()] + str(shifted) + s[m.end() :], CONTRA, "year"))
        return out
    nums = [m for m in _PLAIN_NUM_RE.finditer(s) if not _YEAR_RE.fullmatch(m.group(1))]
    if nums:
        m = rng.choice(nums)
        raw = m.group(1).replace(",", "")
        value = float(raw)
        if value == int(value) and int(value) in _NUMBER_WORD and rng.random() < 0.6:
            word = _NUMBER_WORD[int(value)]
            out.append(Case(premise, s[: m.start()] + word + s[m.end() :], ENTAIL, "number_word"))
        elif value >= 20:
            about = _round_about(value)
            if about != value:
                text = s[: m.start()] + "about " + _fmt(about) + s[m.end() :]
                out.append(Case(premise, text, ENTAIL, "about"))
            lower = _fmt(_round_about(value * 0.8))
            text = s[: m.start()] + "more than " + lower + s[m.end() :]
            out.append(Case(premise, text, ENTAIL, "more_than"))
            higher = _fmt(_round_about(value * 1.3))
            text = s[: m.start()] + "more than " + higher + s[m.end() :]
            out.append(Case(premise, text, CONTRA, "more_than_wrong"))
        factor = rng.choice([0.5, 0.75, 1.5, 2.0, 3.0]) if value > 3 else 1.0
        changed = value * factor if value > 3 else value + rng.choice([1, 2, 3])
        new = _fmt(changed) if "." in raw else f"{round(changed):,}"
        if new.replace(",", "") != raw:
            out.append(Case(premise, s[: m.start()] + new + s[m.end() :], CONTRA, "number"))
    else:
        for word, value in _WORD_NUMBER.items():
            m = re.search(rf"\b{word}\b", s)
            if m:
                out.append(
                    Case(premise, s[: m.start()] + str(value) + s[m.end() :], ENTAIL, "digits")
                )
                other = rng.choice([w for w in _WORD_NUMBER if w != word])
                out.append(Case(premise, s[: m.start()] + other + s[m.end() :], CONTRA, "number"))
                break
    if m := _PERCENT_RE.search(s):
        value = float(m.group(1).replace(",", ""))
        if 0 < value < 100:
            rest = 100 - value
            # "X% of A do" -> the share that does not is 100 - X (only stated, not derived).
            wrong = _fmt(value + rng.choice([-7, -3, 4, 9]) if value > 10 else value + 2)
            out.append(
                Case(premise, s[: m.start()] + f"{wrong}%" + s[m.end() :], CONTRA, "percent")
            )
            if value >= 50:
                text = s[: m.start()] + "more than half" + s[m.end() :]
                out.append(Case(premise, text, ENTAIL, "percent_words"))
            elif rest > 50:
                text = s[: m.start()] + "less than half" + s[m.end() :]
                out.append(Case(premise, text, ENTAIL, "percent_words"))
    return out


_COPULA_ADJ_RE = re.compile(r"\b(is|are|was|were)\s+(?:(very|now|still)\s+)?([a-z]+)\b")


def negation_cases(ctx: Context, flip: Callable[[str], str | None]) -> list[Case]:
    s, out = ctx.sentence, []
    premise = ctx.premise()
    flipped = flip(s)
    if flipped and flipped != s:
        out.append(Case(premise, flipped, CONTRA, "negation"))
        # double negation: the flipped premise against its own flip back is the sentence
        out.append(Case(ctx.premise(flipped), s, CONTRA, "negation"))
    for m in _COPULA_ADJ_RE.finditer(s):
        adj = m.group(3)
        if adj in _ANTONYM:
            verb_end = m.start(3)
            good = s[:verb_end] + "not " + _ANTONYM[adj] + s[m.end(3) :]
            out.append(Case(premise, good, ENTAIL, "not_antonym"))
            bad = s[:verb_end] + "not " + adj + s[m.end(3) :]
            out.append(Case(premise, bad, CONTRA, "negation"))
            anti = s[:verb_end] + _ANTONYM[adj] + s[m.end(3) :]
            out.append(Case(premise, anti, CONTRA, "antonym"))
            break
    for neg, pos in NEGATED_FORMS:
        if re.search(rf"\b{neg}\b", s):
            out.append(Case(premise, _sub_word(s, neg, pos, ctx.rng) or s, ENTAIL, "negated_form"))
            break
        if re.search(rf"\b{pos}\b", s):
            out.append(Case(premise, _sub_word(s, pos, neg, ctx.rng) or s, ENTAIL, "negated_form"))
            bare = pos.replace("not ", "").replace("un", "", 1) if pos.startswith("un") else None
            if bare:
                out.append(Case(premise, _sub_word(s, pos, bare, ctx.rng) or s, CONTRA, "negation"))
            break
    return [c for c in out if c.claim != s or c.premise != premise]


def quantifier_cases(ctx: Context) -> list[Case]:
    s, out = ctx.sentence, []
    edits = [e for e in QUANTIFIER_EDITS if re.search(rf"\b{e[0]}\b", s, flags=re.IGNORECASE)]
    ctx.rng.shuffle(edits)
    for word, new, label in edits[:2]:
        claim = _sub_word(s, word, new, ctx.rng)
        if claim:
            claim = re.sub(r"\b([Ss]ome|[Mm]any|[Mm]ost) the\b", r"\1 of the", claim)
            claim = re.sub(r"\b([Nn])o of\b", r"\1one of", claim)
            out.append(Case(ctx.premise(), claim, label, "quantifier"))
    if m := _HEDGE_RE.search(s):
        hedged = (
            s[: m.start()] + ctx.rng.choice(["can ", "may "]) + _HEDGED[m.group(1)] + s[m.end() :]
        )
        out.append(Case(ctx.premise(), hedged, ENTAIL, "hedged"))
        out.append(Case(ctx.premise(hedged), s, NEUTRAL, "unhedged"))
    return out


def temporal_cases(ctx: Context) -> list[Case]:
    s = ctx.sentence
    swaps = [(a, b) for a, b in TEMPORAL_SWAPS if re.search(rf"\b{a}\b", s)]
    if not swaps:
        return []
    a, b = ctx.rng.choice(swaps)
    claim = _sub_word(s, a, b, ctx.rng)
    label = CONTRA if a in ("before", "after", "first", "last", "still", "no longer") else NEUTRAL
    return [Case(ctx.premise(), claim, label, "temporal")] if claim else []


def _subject(doc: object) -> object | None:
    for tok in doc:  # type: ignore[attr-defined]
        if tok.dep_ in ("nsubj", "nsubjpass") and tok.head.dep_ == "ROOT":
            return tok
    return None


def chimeric_cases(ctx: Context, parse: Callable[[str], object]) -> list[Case]:
    """The next sentence's predicate given this sentence's subject: entailed when the next
    sentence's subject is a pronoun for it, else a recombination (not entailed)."""
    if ctx.index + 1 >= len(ctx.window):
        return []
    subj = _subject(ctx.doc)
    if subj is None or subj.pos_ == "PRON":  # type: ignore[attr-defined]
        return []
    s_text = _span_text(ctx.doc, subj)
    if len(s_text.split()) > 7:
        return []
    nxt = ctx.window[ctx.index + 1]
    nxt_doc = parse(nxt)
    nsubj = _subject(nxt_doc)
    if nsubj is None:
        return []
    sub = list(nsubj.subtree)  # type: ignore[attr-defined]
    rest = nxt_doc[sub[-1].i + 1 :].text  # type: ignore[index]
    if len(rest.split()) < 3:
        return []
    claim = _as_sentence(f"{s_text} {rest}")
    if nsubj.text.lower() in _SUBJECT_PRONOUNS and len(sub) == 1:  # type: ignore[attr-defined]
        plural = subj.tag_ in ("NNS", "NNPS")  # type: ignore[attr-defined]
        if (nsubj.text.lower() == "they") == plural:  # type: ignore[attr-defined]
            return [Case(ctx.premise(), claim, ENTAIL, "coreference_chain")]
        return []
    other = _span_text(nxt_doc, nsubj)
    if other.lower() in s_text.lower() or s_text.lower() in other.lower():
        return []
    return [Case(ctx.premise(), claim, NEUTRAL, "chimeric")]


_EXTRA_TEMPLATES: tuple[str, ...] = (
    " in {year}",
    " for the first time",
    " in {place}",
    " with the help of {person}",
    " because of {cause}",
    " after a long delay",
    " despite strong opposition",
    " at the request of {person}",
    ", a record at the time",
    " under the leadership of {person}",
)


def extra_cases(ctx: Context) -> list[Case]:
    """An unsupported phrase added (not entailed); a prepositional phrase dropped (entailed)."""
    s, rng, out = ctx.sentence, ctx.rng, []
    body = s.rstrip(".!?")
    template = rng.choice(_EXTRA_TEMPLATES)
    people = ctx.pools.get("PERSON") or ["the mayor"]
    places = ctx.pools.get("GPE") or ["London"]
    extra = template.format(
        year=rng.randrange(1900, 2024),
        place=rng.choice(places),
        person=rng.choice(people),
        cause=rng.choice(["rising costs", "a shortage of staff", "bad weather", "public pressure"]),
    )
    if extra.strip(" ,") not in ctx.premise():
        out.append(Case(ctx.premise(), body + extra + ".", NEUTRAL, "extra_detail"))
    for tok in ctx.doc:  # type: ignore[attr-defined]
        if tok.dep_ == "prep" and tok.head.pos_ == "VERB" and tok.i > tok.head.i:
            sub = list(tok.subtree)
            start, end = sub[0].idx, sub[-1].idx + len(sub[-1].text)
            dropped = re.sub(r"\s+", " ", s[:start] + s[end:]).replace(" ,", ",").replace(" .", ".")
            if len(dropped.split()) >= 5 and dropped != s:
                out.append(Case(ctx.premise(), _as_sentence(dropped), ENTAIL, "dropped_detail"))
            break
    return out


def coreference_cases(ctx: Context) -> list[Case]:
    """A name that opens this sentence and occurs earlier in the window becomes a pronoun in
    the premise; the claim names it (entailed) or names another entity of its type (not)."""
    if ctx.index == 0:
        return []
    earlier = " ".join(ctx.window[: ctx.index])
    for ent in ctx.doc.ents:  # type: ignore[attr-defined]
        if ent.start != 0 or ent.label_ not in _PRONOUN or ent.text not in earlier:
            continue
        pronoun = ctx.rng.choice(_PRONOUN[ent.label_])
        replaced = pronoun + ctx.sentence[len(ent.text) :]
        premise = ctx.premise(replaced)
        out = [Case(premise, ctx.sentence, ENTAIL, "coreference")]
        others = [
            v
            for v in ctx.pools.get(ent.label_, [])
            if v in earlier and v != ent.text and v not in ent.text and ent.text not in v
        ]
        if others:
            wrong = ctx.rng.choice(others) + ctx.sentence[len(ent.text) :]
            out.append(Case(premise, wrong, NEUTRAL, "coreference_wrong"))
        return out
    return []


def counterfactual_cases(ctx: Context, edited: Sequence[Case]) -> list[Case]:
    """A contradiction edit made to the premise sentence too: the edited claim is then stated
    by the (counterfactual) premise and entailed."""
    picks = [c for c in edited if c.label == CONTRA and c.kind in ("entity_swap", "year", "number")]
    if not picks:
        return []
    case = ctx.rng.choice(picks)
    return [Case(ctx.premise(case.claim), case.claim, ENTAIL, "counterfactual")]


_WH = {
    "PERSON": "who",
    "ORG": "which organisation",
    "GPE": "where",
    "LOC": "where",
    "DATE": "when",
    "CARDINAL": "how many",
    "MONEY": "how much",
    "NORP": "which group",
    "WORK_OF_ART": "what",
    "FAC": "which building",
    "EVENT": "which event",
    "PRODUCT": "what",
}


def qa_cases(ctx: Context) -> list[Case]:
    """A short answer read with its question (``Question: ...\\nAnswer: ...``): an echo
    question over one entity of the sentence, the entity as the answer."""
    ents = [e for e in ctx.doc.ents if e.label_ in _WH]  # type: ignore[attr-defined]
    if not ents:
        return []
    ent = ctx.rng.choice(ents)
    s = ctx.sentence
    wh = _WH[ent.label_]
    start = ent.start_char
    prefix = s[:start]
    if ent.label_ in ("GPE", "LOC", "DATE") and re.search(r"\b(in|on|at)\s*$", prefix):
        prefix = re.sub(r"\b(in|on|at)\s*$", "", prefix)
    question = _as_sentence(prefix + wh + s[ent.end_char :]).rstrip(".") + "?"
    if ent.start == 0:
        question = wh.capitalize() + s[ent.end_char :].rstrip(".!? ") + "?"
    answer = ctx.rng.choice([f"{ent.text}.", f"{ent.text}", f"It was {ent.text}."])
    if answer.startswith("It was") and ent.label_ not in ("DATE", "PERSON", "ORG"):
        answer = f"{ent.text}."
    premise = f"{QUESTION_MARK}{question}{ANSWER_MARK}{answer}"
    out = [Case(premise, s, ENTAIL, "qa")]
    others = [v for v in ctx.pools.get(ent.label_, []) if v != ent.text and v not in s]
    if others:
        out.append(
            Case(premise, s.replace(ent.text, ctx.rng.choice(others), 1), CONTRA, "qa_wrong")
        )
    people = ctx.pools.get("PERSON") or ["the mayor"]
    extra = ctx.rng.choice(
        [f" in {ctx.rng.randrange(1900, 2024)}", f" with {ctx.rng.choice(people)}"]
    )
    out.append(Case(premise, s.rstrip(".!? ") + extra + ".", NEUTRAL, "qa_extra"))
    return out


# ----------------------------------------------------------------------------- noise


def noisy(text: str, rng: random.Random, style: str) -> str:
    """``text`` lowercased with PTB-style tokens, spaced punctuation, or a typo."""
    if style == "lower":
        return text.lower()
    if style == "ptb":
        t = text.replace("(", " -lrb- ").replace(")", " -rrb- ")
        t = re.sub(r"([,.;:!?])", r" \1", t)
        t = re.sub(r"(\w)'s\b", r"\1 's", t)
        return re.sub(r"\s+", " ", t).strip().lower()
    if style == "typo":
        words = text.split()
        long_words = [i for i, w in enumerate(words) if len(w) > 5 and w.isalpha()]
        if long_words:
            i = rng.choice(long_words)
            w = words[i]
            k = rng.randrange(1, len(w) - 2)
            words[i] = w[:k] + w[k + 1] + w[k] + w[k + 2 :]
        return " ".join(words).rstrip(".")
    return text


def add_noise(cases: list[Case], rng: random.Random, share: float) -> list[Case]:
    """A copy of ``share`` of the cases with both texts made noisy the same way."""
    out = []
    for case in cases:
        if rng.random() < share:
            style = rng.choice(["lower", "ptb", "typo"])
            premise = noisy(case.premise, rng, "lower" if style == "typo" else style)
            claim = noisy(case.claim, rng, style)
            out.append(Case(premise, claim, case.label, case.kind + "+noisy"))
    return out
