"""A realistic RAG evaluation set of the project's own: fictional entities, same-domain
distractors, short references and answers of known faithfulness (issue 35, item 5).

Every text is built here from templates over invented entities (towns, software plans,
medicines, novels, rivers, species, companies); nothing is copied from a dataset. Each
domain has a fixed universe of entities (the same for a seed), each with several attributes:
numbers with units, years, names, places, lower-case categories, yes/no facts and lists.

A row asks about one attribute of one entity. Its ``contexts`` are 2-5 passages of 100-160
words: exactly one gold passage about the asked entity that states the value (often naming
the entity only by "the town" / "it" in that sentence), and passages about other entities of
the same kind, each stating *their* value for the same attribute among their other facts.
The ``answer`` is of one ``kind``:

* ``faithful``: one sentence restating the question with the value;
* ``faithful_paraphrase``: other words, order or units ("2 TB" for "2000 GB");
* ``faithful_long``: the value and one or two more true facts from the gold passage;
* ``wrong_value``: a value that no passage gives;
* ``distractor_value``: the value a distractor passage gives for the same attribute, in the
  answer's own words;
* ``fabricated_extra``: a faithful sentence and a made-up one that no passage supports;
* ``wrong_subject``: a distractor's sentence for the attribute, nearly word for word, with
  the asked entity's name where the distractor said "the town" / "it" (the fact is true of
  another entity of the same kind).

``faithful`` is True for the first three; ``one_fact`` is True when the answer states only
the asked attribute. The rows carry Unitxt's RAG fields (``question``, ``contexts``,
``contexts_ids``, ``reference_context_ids``, ``reference_answers``, ``answer``,
``is_answerable_label``) besides ``id``, ``domain``, ``kind``, ``faithful``, ``one_fact`` and
``attribute``.

Run::

    python bench/data/realistic_rag.py --seed 0 --out bench/data/realistic_rag.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = (
    "faithful",
    "faithful_paraphrase",
    "faithful_long",
    "wrong_value",
    "distractor_value",
    "fabricated_extra",
    "wrong_subject",
)
FAITHFUL_KINDS = frozenset({"faithful", "faithful_paraphrase", "faithful_long"})
ONE_FACT_KINDS = frozenset(KINDS) - {"faithful_long", "fabricated_extra"}
MIN_WORDS, MAX_WORDS = 100, 160
DEFAULT_ROWS = 588  # 12 rows for each of the 7 domains x 7 kinds
FIELDS = (
    "id",
    "domain",
    "kind",
    "faithful",
    "one_fact",
    "attribute",
    "reference_form",
    "question",
    "contexts",
    "contexts_ids",
    "reference_context_ids",
    "reference_answers",
    "answer",
    "is_answerable_label",
)

Fields = dict[str, Any]
Gen = Callable[[random.Random], Fields]


# ---------------------------------------------------------------------------- values


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


_SMALL = [
    "zero",
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
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]


def words(n: int) -> str:
    """``n`` in words up to twenty, else in figures with thousands separators."""
    return _SMALL[n] if 0 <= n <= 20 else f"{n:,}"


def join_list(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def value(v: str, *, w: str | None = None, key: Any = None, **extra: Any) -> Fields:
    """A value's fields for the templates: ``v`` as passages write it, ``w`` as a paraphrase
    writes it, ``key`` what makes two values the same."""
    out = {"v": v, "V": cap(v), "w": w or v, "key": key if key is not None else v}
    out["W"] = cap(out["w"])
    out.update(extra)
    return out


def number(
    lo: int, hi: int, step: int, unit: str = "", *, alt: Callable[[int], str] | None = None
) -> Gen:
    """Whole numbers in ``[lo, hi]`` with thousands separators (none for years, below 2100)."""

    def gen(rng: random.Random) -> Fields:
        n = rng.randrange(lo, hi + 1, step)
        figure = str(n) if hi < 2100 else f"{n:,}"
        return value(f"{figure}{unit}", w=alt(n) if alt else None, key=n, n=figure)

    return gen


def choice(options: Sequence[str], *, alt: dict[str, str] | None = None) -> Gen:
    def gen(rng: random.Random) -> Fields:
        v = rng.choice(options)
        return value(v, w=(alt or {}).get(v))

    return gen


def pick_list(options: Sequence[str], k: int) -> Gen:
    def gen(rng: random.Random) -> Fields:
        items = rng.sample(list(options), k)
        shuffled = items[1:] + items[:1]
        return value(join_list(items), w=join_list(shuffled), key=frozenset(items), items=items)

    return gen


def boolean(rng: random.Random) -> Fields:
    flag = rng.random() < 0.5
    return {"key": flag, "flag": flag, "v": "yes" if flag else "no", "V": "Yes" if flag else "No"}


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def person_gen(rng: random.Random) -> Fields:
    return value(person(rng))


def people_gen(rng: random.Random) -> Fields:
    a, b = person(rng), person(rng)
    while b.split()[1] == a.split()[1]:
        b = person(rng)
    return value(f"{a} and {b}", w=f"{b} and {a}", key=frozenset((a, b)), items=[a, b])


FIRST_NAMES = [
    "Maren",
    "Tobias",
    "Elsbeth",
    "Corin",
    "Ysolde",
    "Anselm",
    "Petra",
    "Idris",
    "Halvard",
    "Linnea",
    "Oswin",
    "Rhosyn",
    "Teodor",
    "Saskia",
    "Emeric",
    "Juno",
    "Aurel",
    "Brisa",
    "Casimir",
    "Delphine",
]
LAST_NAMES = [
    "Quarle",
    "Besswick",
    "Marrow",
    "Ilvane",
    "Castellan",
    "Drummel",
    "Soltry",
    "Hagenow",
    "Verrick",
    "Amberlay",
    "Polstead",
    "Crane",
    "Oduya",
    "Fenwright",
    "Lisko",
    "Tarrant",
    "Vellacott",
    "Nyberg",
    "Galloway",
    "Sutter",
]
CITIES = [
    "Port Vessaly",
    "Calder Bay",
    "Ostrin",
    "Marlow Keys",
    "Tessaron",
    "Halbrook",
    "Greyhaven",
    "Lunsford",
    "Velmont",
    "Saint Ives-on-Tarn",
    "Ardmoor",
    "Kestrelby",
]
RIVER_ROOTS = [
    "Aske",
    "Velt",
    "Orran",
    "Mirel",
    "Tosk",
    "Quenna",
    "Brule",
    "Cavin",
    "Ellet",
    "Sarro",
    "Dovan",
    "Lisse",
    "Harl",
    "Ombra",
    "Tev",
    "Ruan",
]
PROVINCES = [
    "Arvenia",
    "Dellmark",
    "Tovaria",
    "Kessary",
    "Lunhal",
    "Ostria",
    "Brevany",
    "Sallen",
    "Corvanne",
    "Miret",
]


# ---------------------------------------------------------------------------- spec types


@dataclass(frozen=True, slots=True)
class Attr:
    """One attribute: how its value is drawn and how questions, passages, answers,
    paraphrases and references state it. Bool attributes give ``p``/``a``/``para``/``ref``
    as ``{True: [...], False: [...]}``. Templates read ``{e}``/``{E}`` (the entity's name
    mid-sentence / first), ``{S}``/``{s}`` (the passage's subject: the name or "the town"),
    the value's fields (``{v}``, ``{V}``, ``{w}``, ``{n}``) and the entity's own fields."""

    name: str
    gen: Gen
    q: tuple[str, ...]
    p: Any
    a: Any
    para: Any
    ref: Any
    is_bool: bool = False


@dataclass(slots=True)
class Entity:
    name: str  # mid-sentence form ("the River Aske", "Harrowdene")
    noun: str  # "the town", "the plan": the coreferring phrase
    extra: dict[str, str] = field(default_factory=dict)
    values: dict[str, Fields] = field(default_factory=dict)

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")

    def fields(self) -> dict[str, str]:
        return {"e": self.name, "E": cap(self.name), **self.extra}


@dataclass(frozen=True, slots=True)
class Domain:
    name: str
    entities: Callable[[random.Random], list[Entity]]
    attrs: tuple[Attr, ...]
    intros: tuple[str, ...]
    fillers: tuple[str, ...]
    fabrications: tuple[str, ...]
    pronoun_ok: bool = True


def A(name, gen, q, p, a, para, ref):
    return Attr(name, gen, tuple(q), p, a, para, ref, is_bool=gen is boolean)


def syllable_names(
    rng: random.Random, heads: Sequence[str], tails: Sequence[str], k: int
) -> list[str]:
    names: list[str] = []
    while len(names) < k:
        name = rng.choice(heads) + rng.choice(tails)
        if name not in names:
            names.append(name)
    return names


# ---------------------------------------------------------------------------- domains


def _software_entities(rng: random.Random) -> list[Entity]:
    products = rng.sample(
        ["Driftboard", "Paperlane", "Tasklume", "Quillstack", "Orbitdesk", "Ferndoc", "Loomly"], 3
    )
    out = []
    for product in products:
        for plan in rng.sample(["Starter", "Team", "Pro", "Business", "Enterprise"], 4):
            out.append(
                Entity(f"the {product} {plan} plan", "the plan", {"product": product, "plan": plan})
            )
    return out


# storage: a ladder of sizes (the members count is drawn separately, so "10 members" and
# "1000 GB" sit side by side)
_STORAGE = [5, 10, 20, 50, 100, 250, 500, 1000, 2000, 5000]


def _storage(rng: random.Random) -> Fields:
    n = rng.choice(_STORAGE)
    w = f"{n // 1000} TB" if n >= 1000 else f"{n} gigabytes"
    return value(f"{n} GB", w=w, key=n, n=str(n))


SOFTWARE = Domain(
    "software",
    _software_entities,
    (
        A(
            "storage",
            _storage,
            [
                "How much storage does {e} include?",
                "What is the storage allowance of {e}?",
                "How much shared storage comes with {e}?",
            ],
            [
                "{S} includes {v} of shared storage.",
                "Each workspace on {s} gets {v} of storage.",
                "{S} comes with {v} of file storage for the whole workspace.",
            ],
            ["{E} includes {v} of shared storage.", "A workspace on {e} gets {v} of storage."],
            ["You get {w} of storage with {e}.", "Storage on {e} is capped at {w} per workspace."],
            ["{v}.", "{v} of storage.", "{E} includes {v} of shared storage."],
        ),
        A(
            "members",
            choice(
                ["3", "5", "10", "15", "25", "50", "100", "250", "500"],
                alt={
                    "3": "three",
                    "5": "five",
                    "10": "ten",
                    "15": "fifteen",
                    "25": "twenty-five",
                    "50": "fifty",
                    "100": "a hundred",
                },
            ),
            [
                "How many members can a workspace on {e} have?",
                "What is the member limit of {e}?",
                "How many people can join a workspace on {e}?",
            ],
            [
                "{S} allows up to {v} members per workspace.",
                "Teams on {s} can invite up to {v} members.",
                "A workspace on {s} is limited to {v} members.",
            ],
            [
                "{E} allows up to {v} members per workspace.",
                "A workspace on {e} can have up to {v} members.",
            ],
            [
                "At most {w} people can share a workspace on {e}.",
                "{E} caps a workspace at {w} people.",
            ],
            ["Up to {v} members.", "{v}.", "A workspace on {e} can have up to {v} members."],
        ),
        A(
            "price",
            number(4, 59, 1, alt=lambda n: f"{n} dollars a month for each user"),
            [
                "How much does {e} cost?",
                "What is the monthly price of {e}?",
                "What does {e} cost per user?",
            ],
            [
                "{S} costs ${n} per user per month.",
                "{S} is billed at ${n} per user per month.",
                "The price of {s} is ${n} per user per month.",
            ],
            ["{E} costs ${n} per user per month.", "The monthly price of {e} is ${n} per user."],
            ["{E} is priced at {w}.", "Each user on {e} pays {w}."],
            [
                "${n} per user per month.",
                "${n} a month per user.",
                "{E} costs ${n} per user per month.",
            ],
        ),
        A(
            "single_sign_on",
            boolean,
            ["Does {e} include single sign-on?", "Is single sign-on available on {e}?"],
            {
                True: [
                    "{S} includes single sign-on through SAML.",
                    "Single sign-on is included with {s}.",
                ],
                False: [
                    "{S} does not include single sign-on.",
                    "Single sign-on is not available on {s}.",
                ],
            },
            {
                True: [
                    "Yes, {e} includes single sign-on.",
                    "Yes, single sign-on is available on {e}.",
                ],
                False: [
                    "No, {e} does not include single sign-on.",
                    "No, single sign-on is not available on {e}.",
                ],
            },
            {
                True: ["Single sign-on comes with {e}.", "{E} offers single sign-on."],
                False: ["{E} comes without single sign-on.", "Single sign-on is missing from {e}."],
            },
            {
                True: ["Yes.", "Yes, it includes single sign-on."],
                False: ["No.", "No, single sign-on is not included."],
            },
        ),
        A(
            "version_history",
            choice(
                ["7 days", "14 days", "30 days", "60 days", "90 days", "180 days", "365 days"],
                alt={
                    "7 days": "one week",
                    "14 days": "two weeks",
                    "365 days": "a full year",
                    "30 days": "thirty days",
                    "60 days": "sixty days",
                    "90 days": "ninety days",
                    "180 days": "half a year",
                },
            ),
            [
                "How long does {e} keep version history?",
                "For how long are page versions kept on {e}?",
            ],
            [
                "{S} keeps version history for {v}.",
                "Earlier versions of every page are kept for {v} on {s}.",
            ],
            ["{E} keeps version history for {v}.", "Page versions are kept for {v} on {e}."],
            [
                "{E} holds on to old page versions for {w}.",
                "With {e}, version history goes back {w}.",
            ],
            ["{V}.", "For {v}.", "{E} keeps version history for {v}."],
        ),
        A(
            "support",
            choice(
                [
                    "email support",
                    "live chat support",
                    "phone support",
                    "a dedicated account manager",
                    "community forum support",
                    "priority email support",
                    "round-the-clock phone support",
                ]
            ),
            ["What kind of support comes with {e}?", "What support does {e} offer?"],
            ["{S} comes with {v}.", "Customers on {s} get {v}."],
            ["{E} comes with {v}.", "Customers on {e} get {v}."],
            ["Support on {e} is {v}.", "If you are on {e}, help comes as {v}."],
            ["{v}.", "{V}.", "{E} comes with {v}."],
        ),
        A(
            "integrations",
            pick_list(
                [
                    "Slack",
                    "GitHub",
                    "Jira",
                    "Salesforce",
                    "Zendesk",
                    "Figma",
                    "Trello",
                    "HubSpot",
                    "Dropbox",
                    "Asana",
                ],
                3,
            ),
            ["Which integrations does {e} offer?", "Which tools does {e} connect to?"],
            ["{S} connects to {v}.", "Integrations on {s} include {v}."],
            ["{E} connects to {v}.", "The integrations of {e} are {v}."],
            ["{E} can be linked with {w}.", "You can hook {e} up to {w}."],
            ["{v}.", "{E} connects to {v}."],
        ),
    ),
    (
        "{E} is one of the paid tiers of {product}, a note-taking and project tool for teams.",
        "{product} sells its workspace software in several tiers, and {e} is one of them.",
        "{E} is aimed at teams that have outgrown the basics of {product}.",
    ),
    (
        "Billing can be switched between monthly and yearly at any time from the admin console.",
        "Workspace owners can add or remove seats whenever they like.",
        "All data is encrypted at rest and in transit.",
        "The mobile apps offer the same editor as the desktop version.",
        "Guests can be invited to single pages without taking up a seat.",
        "Templates for meeting notes, roadmaps and wikis are built in.",
        "Search covers page titles, comments and attached files.",
        "Reviewers often praise how quickly new colleagues find their way around.",
    ),
    (
        "It also includes a built-in video conferencing tool for up to {k} participants.",
        "{product} offers a {k} percent discount on it for schools and charities.",
        "It was introduced in {year} after a long public beta.",
        "Its workspaces can be hosted on servers in {city}.",
    ),
)


def _town_entities(rng: random.Random) -> list[Entity]:
    heads = [
        "Harrow",
        "Oss",
        "Kil",
        "Dray",
        "Pell",
        "Cor",
        "Brack",
        "Thorn",
        "Mar",
        "Ash",
        "Wend",
        "Sel",
        "Bram",
        "Lud",
        "Fen",
        "Quill",
    ]
    tails = [
        "mere",
        "ford",
        "haven",
        "bury",
        "wick",
        "stow",
        "dene",
        "holt",
        "thorpe",
        "ley",
        "minster",
    ]
    return [Entity(n, "the town") for n in syllable_names(rng, heads, tails, 9)]


TOWNS = Domain(
    "towns",
    _town_entities,
    (
        A(
            "population",
            number(2400, 96000, 100),
            [
                "What is the population of {e}?",
                "How many people live in {e}?",
                "How many residents does {e} have?",
            ],
            [
                "{S} has a population of {v}.",
                "Around {v} people live in {s} today.",
                "The latest census counted {v} residents in {s}.",
            ],
            ["{E} has a population of {v}.", "About {v} people live in {e}."],
            ["Roughly {w} residents call {e} home.", "{E} is home to some {w} people."],
            ["About {v}.", "{v}.", "{v} people.", "{E} has about {v} inhabitants."],
        ),
        A(
            "founded",
            number(1080, 1890, 1),
            ["When was {e} founded?", "In what year was {e} founded?"],
            ["{S} was founded in {v}.", "Records show that {s} was founded in {v}."],
            ["{E} was founded in {v}.", "{E} dates from {v}, the year it was founded."],
            ["{E} was established in {w}.", "The founding of {e} goes back to {w}."],
            ["{v}.", "In {v}.", "{E} was founded in {v}."],
        ),
        A(
            "river",
            choice([f"the River {r}" for r in RIVER_ROOTS]),
            ["On which river does {e} stand?", "Which river flows through {e}?"],
            ["{S} stands on the banks of {v}.", "{V} flows through the centre of {s}."],
            ["{E} stands on {v}.", "{V} flows through {e}."],
            ["{E} lies along {w}.", "The river that runs through {e} is {w}."],
            ["{V}.", "{E} stands on {v}."],
        ),
        A(
            "industry",
            choice(
                [
                    "tin mining",
                    "wool weaving",
                    "salt making",
                    "shipbuilding",
                    "glassblowing",
                    "clockmaking",
                    "slate quarrying",
                    "lace making",
                    "brewing",
                    "paper milling",
                ]
            ),
            [
                "What industry did {e} traditionally live from?",
                "What was the traditional trade of {e}?",
            ],
            [
                "{S} traditionally lived from {v}.",
                "For centuries the economy of {s} rested on {v}.",
            ],
            ["{E} traditionally lived from {v}.", "The traditional trade of {e} was {v}."],
            [
                "{W} was what {e} lived from for generations.",
                "In the past, {e} made its living from {w}.",
            ],
            ["{v}.", "{V}.", "{E} traditionally lived from {v}."],
        ),
        A(
            "elevation",
            number(20, 1400, 1, " metres", alt=lambda n: f"{n} m"),
            ["At what elevation does {e} lie?", "How high above sea level is {e}?"],
            ["{S} lies {v} above sea level.", "{S} sits at an elevation of {v}."],
            ["{E} lies {v} above sea level.", "{E} sits at an elevation of {v}."],
            ["The elevation of {e} is {w}.", "{E} is {w} above the sea."],
            ["{v}.", "{v} above sea level.", "{E} lies {v} above sea level."],
        ),
        A(
            "railway_station",
            boolean,
            ["Does {e} have a railway station?", "Is there a railway station in {e}?"],
            {
                True: [
                    "{S} has had a railway station since the main line opened.",
                    "Trains stop at the railway station in {s} every hour.",
                ],
                False: ["{S} has no railway station.", "There is no railway station in {s}."],
            },
            {
                True: [
                    "Yes, {e} has a railway station.",
                    "Yes, there is a railway station in {e}.",
                ],
                False: [
                    "No, {e} does not have a railway station.",
                    "No, there is no railway station in {e}.",
                ],
            },
            {
                True: [
                    "{E} can be reached by train from its own station.",
                    "A train station serves {e}.",
                ],
                False: ["{E} lacks a train station.", "You cannot take a train straight to {e}."],
            },
            {True: ["Yes.", "Yes, it has one."], False: ["No.", "No, it has none."]},
        ),
        A(
            "market_day",
            choice(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
            ["On which day is the weekly market held in {e}?", "What day is market day in {e}?"],
            ["A weekly market is held in {s} every {v}.", "Market day in {s} is {v}."],
            ["The weekly market in {e} is held every {v}.", "Market day in {e} is {v}."],
            ["Every {w}, {e} holds its weekly market.", "{E} has its market on {w}s."],
            ["{v}.", "On {v}s.", "Every {v}."],
        ),
    ),
    (
        "{E} is a market town in the hill country of the north.",
        "{E} is one of the older towns of the valley.",
        "Travellers have written about {e} for centuries.",
    ),
    (
        "Its narrow lanes and stone bridges draw walkers in the summer months.",
        "The parish church has a tall spire that can be seen from the surrounding farmland.",
        "Several old coaching inns still line the high street.",
        "A local history society keeps maps and letters from earlier centuries.",
        "The surrounding countryside is known for its hedgerows and small fields.",
        "A footpath follows the old boundary walls out to the neighbouring villages.",
        "Many of the houses are built from the grey local stone.",
        "The town hall was restored by volunteers after a long campaign.",
    ),
    (
        "It also hosts a lantern festival every October that draws {k} thousand visitors.",
        "Its medieval castle was rebuilt in {year}.",
        "The town is twinned with {city}.",
        "Its football club won the regional cup {k} times.",
    ),
)


def _drug_entities(rng: random.Random) -> list[Entity]:
    heads = ["Vel", "Tor", "Mira", "Zan", "Quor", "Lem", "Pex", "Dal", "Oro", "Nim", "Sev", "Cal"]
    tails = [
        "zolan",
        "tavir",
        "prine",
        "cortin",
        "lexin",
        "varin",
        "tinib",
        "sorel",
        "dipine",
        "mazole",
    ]
    return [Entity(n, "the drug") for n in syllable_names(rng, heads, tails, 9)]


_DRUG_CLASSES = {
    "a beta blocker": "beta blocker",
    "a kinase inhibitor": "kinase inhibitor",
    "an antihistamine": "antihistamine",
    "a monoclonal antibody": "monoclonal antibody",
    "a calcium channel blocker": "calcium channel blocker",
    "a proton pump inhibitor": "proton pump inhibitor",
    "an anticonvulsant": "anticonvulsant",
    "a statin": "statin",
    "a corticosteroid": "corticosteroid",
}


def _drug_class(rng: random.Random) -> Fields:
    v = rng.choice(list(_DRUG_CLASSES))
    return value(v, w=f"a drug of the {_DRUG_CLASSES[v]} class", bare=_DRUG_CLASSES[v])


def _dose(rng: random.Random) -> Fields:
    n = rng.choice([5, 10, 20, 25, 40, 50, 100, 150, 200, 250, 400, 500])
    often = rng.choice(["once daily", "twice daily", "three times a day"])
    return value(f"{n} mg {often}", w=f"{n} milligrams {often}", key=(n, often))


MEDICINES = Domain(
    "medicines",
    _drug_entities,
    (
        A(
            "indication",
            choice(
                [
                    "plaque psoriasis",
                    "migraine",
                    "type 2 diabetes",
                    "rheumatoid arthritis",
                    "high blood pressure",
                    "chronic insomnia",
                    "asthma",
                    "epilepsy",
                    "gout",
                    "severe acne",
                ]
            ),
            ["What is {e} used to treat?", "What condition is {e} prescribed for?"],
            ["{S} is used to treat {v}.", "Doctors prescribe {s} for {v}."],
            ["{E} is used to treat {v}.", "{E} is prescribed for {v}."],
            ["{E} is a treatment for {w}.", "Patients with {w} are given {e}."],
            ["{v}.", "{V}.", "It treats {v}."],
        ),
        A(
            "drug_class",
            _drug_class,
            ["What class of drug is {e}?", "What kind of drug is {e}?"],
            ["{S} is {v}.", "Pharmacologically, {s} is {v}."],
            ["{E} is {v}.", "{E} belongs to the class of {bare} drugs."],
            ["{E} is {w}.", "In terms of drug class, {e} is {v}."],
            ["{V}.", "{bare}.", "{E} is {v}."],
        ),
        A(
            "dose",
            _dose,
            ["What is the usual adult dose of {e}?", "How much {e} does an adult usually take?"],
            ["The usual adult dose of {s} is {v}.", "{S} is normally taken at {v} by adults."],
            ["The usual adult dose of {e} is {v}.", "Adults usually take {e} at {v}."],
            ["Adults are usually given {w} of {e}.", "A typical adult takes {w} of {e}."],
            ["{v}.", "{V}.", "The usual adult dose is {v}."],
        ),
        A(
            "approved",
            number(1975, 2021, 1),
            ["When was {e} approved?", "In which year was {e} approved?"],
            ["{S} was approved by the regulator in {v}.", "Regulators approved {s} in {v}."],
            ["{E} was approved in {v}.", "Regulators approved {e} in {v}."],
            ["The approval of {e} came in {w}.", "{E} has been approved since {w}."],
            ["{v}.", "In {v}.", "{E} was approved in {v}."],
        ),
        A(
            "manufacturer",
            choice(
                [
                    "Halden Pharma",
                    "Ostrel Biologics",
                    "Pinemark Labs",
                    "Corrow Therapeutics",
                    "Sablewood Health",
                    "Tindale Medical",
                    "Varrow Bio",
                    "Wyncourt Pharmaceuticals",
                    "Brightvane Life Sciences",
                    "Kestrel Remedies",
                ]
            ),
            ["Which company makes {e}?", "Who manufactures {e}?"],
            ["{S} is manufactured by {v}.", "{V} makes {s} at its main plant."],
            ["{E} is manufactured by {v}.", "{V} makes {e}."],
            ["{E} is produced by {w}.", "The maker of {e} is {w}."],
            ["{v}.", "{E} is made by {v}."],
        ),
        A(
            "over_the_counter",
            boolean,
            ["Is {e} available without a prescription?", "Can {e} be bought over the counter?"],
            {
                True: [
                    "{S} is sold over the counter without a prescription.",
                    "Pharmacies sell {s} without a prescription.",
                ],
                False: [
                    "{S} is available only on prescription.",
                    "{S} cannot be bought without a prescription.",
                ],
            },
            {
                True: [
                    "Yes, {e} is available without a prescription.",
                    "Yes, {e} can be bought over the counter.",
                ],
                False: [
                    "No, {e} is available only on prescription.",
                    "No, {e} cannot be bought over the counter.",
                ],
            },
            {
                True: [
                    "No prescription is needed for {e}.",
                    "{E} can be bought at a pharmacy with no prescription.",
                ],
                False: [
                    "You need a prescription to get {e}.",
                    "{E} requires a doctor's prescription.",
                ],
            },
            {
                True: ["Yes.", "Yes, it is sold over the counter."],
                False: ["No.", "No, only on prescription."],
            },
        ),
        A(
            "side_effects",
            pick_list(
                [
                    "nausea",
                    "headache",
                    "dizziness",
                    "dry mouth",
                    "fatigue",
                    "rash",
                    "insomnia",
                    "joint pain",
                    "blurred vision",
                ],
                3,
            ),
            [
                "What are the common side effects of {e}?",
                "Which side effects does {e} commonly cause?",
            ],
            ["Common side effects of {s} include {v}.", "{S} commonly causes {v}."],
            ["The common side effects of {e} are {v}.", "{E} commonly causes {v}."],
            ["{W} are common with {e}.", "People taking {e} often report {w}."],
            ["{V}.", "{E} commonly causes {v}."],
        ),
        A(
            "half_life",
            number(2, 72, 1, " hours"),
            ["What is the half-life of {e}?", "How long is the half-life of {e}?"],
            ["{S} has a half-life of about {v}.", "The half-life of {s} is about {v}."],
            ["{E} has a half-life of about {v}.", "The half-life of {e} is about {v}."],
            [
                "It takes about {w} for the body to clear half of a dose of {e}.",
                "Roughly {w} is the half-life of {e}.",
            ],
            ["About {v}.", "{v}.", "{E} has a half-life of about {v}."],
        ),
    ),
    (
        "{E} is a prescription medicine developed in the late twentieth century.",
        "{E} is one of several newer medicines in its field.",
        "{E} was developed after a long series of clinical trials.",
    ),
    (
        "It should be stored at room temperature and away from direct sunlight.",
        "Patients are advised to tell their doctor about any other medicines they take.",
        "The tablets are film-coated and should be swallowed whole with water.",
        "Regular check-ups are recommended during the first months of treatment.",
        "Doses may be adjusted for older patients or those with kidney problems.",
        "Missed doses should not be doubled the next day.",
        "The leaflet inside each pack explains how to take it safely.",
        "Pharmacists can answer questions about how it interacts with food.",
    ),
    (
        "It is also widely used off-label for {condition}.",
        "It was the best-selling medicine of its maker in {year}.",
        "It is taken by more than {k} million patients worldwide.",
        "It is also available as a syrup for children under {k}.",
    ),
)


def _book_entities(rng: random.Random) -> list[Entity]:
    adjs = [
        "Glass",
        "Salt",
        "Hollow",
        "Ninth",
        "Silent",
        "Copper",
        "Winter",
        "Amber",
        "Broken",
        "Lantern",
        "Paper",
        "Iron",
    ]
    nouns = [
        "Orchard",
        "Harbour",
        "Cartographer",
        "Bell",
        "Garden",
        "Ledger",
        "Lighthouse",
        "Heron",
        "Archive",
        "Tide",
        "Quarry",
    ]
    names = syllable_names(rng, [f"The {a} " for a in adjs], nouns, 9)
    return [Entity(n, rng.choice(["the novel", "the book"])) for n in names]


BOOKS = Domain(
    "books",
    _book_entities,
    (
        A(
            "author",
            person_gen,
            ["Who wrote {e}?", "Who is the author of {e}?"],
            ["{S} was written by {v}.", "{V} wrote {s} while living abroad."],
            ["{E} was written by {v}.", "{V} is the author of {e}."],
            ["The author of {e} is {w}.", "{E} is a novel by {w}."],
            ["{v}.", "It was written by {v}."],
        ),
        A(
            "published",
            number(1821, 2016, 1),
            ["When was {e} first published?", "In which year did {e} first appear?"],
            ["{S} was first published in {v}.", "{S} first appeared in print in {v}."],
            ["{E} was first published in {v}.", "{E} first appeared in {v}."],
            ["The first edition of {e} came out in {w}.", "{E} came out in {w}."],
            ["{v}.", "In {v}.", "{E} was first published in {v}."],
        ),
        A(
            "pages",
            number(160, 760, 1, " pages"),
            ["How many pages does {e} have?", "How long is {e} in pages?"],
            ["{S} runs to {v}.", "The first edition of {s} had {v}."],
            ["{E} has {v}.", "{E} runs to {v}."],
            ["{E} is {n} pages long.", "At {n} pages, {e} is a substantial read."],
            ["{v}.", "{n}.", "{E} has {v}."],
        ),
        A(
            "setting",
            choice(CITIES),
            ["In which city is {e} set?", "Where does {e} take place?"],
            ["{S} is set in the port city of {v}.", "The story of {s} takes place in {v}."],
            ["{E} is set in {v}.", "{E} takes place in {v}."],
            ["The action of {e} unfolds in {w}.", "{W} is the setting of {e}."],
            ["{v}.", "In {v}.", "{E} is set in {v}."],
        ),
        A(
            "genre",
            choice(
                [
                    "gothic fiction",
                    "historical fiction",
                    "science fiction",
                    "detective fiction",
                    "magical realism",
                    "epistolary fiction",
                    "literary satire",
                    "adventure fiction",
                ]
            ),
            ["What genre is {e}?", "To which genre does {e} belong?"],
            ["{S} is usually classed as {v}.", "Critics count {s} as {v}."],
            ["{E} is a work of {v}.", "{E} belongs to {v}."],
            ["{E} is generally read as {w}.", "In genre terms, {e} is {w}."],
            ["{v}.", "{V}.", "{E} is a work of {v}."],
        ),
        A(
            "vellum_prize",
            boolean,
            ["Did {e} win the Vellum Prize?", "Was {e} awarded the Vellum Prize?"],
            {
                True: [
                    "{S} won the Vellum Prize the year after its release.",
                    "{S} was awarded the Vellum Prize.",
                ],
                False: [
                    "{S} was shortlisted for the Vellum Prize but did not win it.",
                    "{S} never won the Vellum Prize.",
                ],
            },
            {
                True: ["Yes, {e} won the Vellum Prize.", "Yes, {e} was awarded the Vellum Prize."],
                False: [
                    "No, {e} did not win the Vellum Prize.",
                    "No, {e} was not awarded the Vellum Prize.",
                ],
            },
            {
                True: ["The Vellum Prize went to {e}.", "{E} took the Vellum Prize."],
                False: ["The Vellum Prize eluded {e}.", "{E} missed out on the Vellum Prize."],
            },
            {True: ["Yes.", "Yes, it won."], False: ["No.", "No, it did not."]},
        ),
        A(
            "protagonist",
            person_gen,
            ["Who is the main character of {e}?", "Who is the protagonist of {e}?"],
            ["The main character of {s} is {v}.", "{S} follows {v} over a single winter."],
            ["The main character of {e} is {v}.", "{E} follows {v}."],
            ["{W} is the protagonist of {e}.", "{E} centres on {w}."],
            ["{v}.", "The main character is {v}."],
        ),
    ),
    (
        "{E} is a novel that has remained in print since its first edition.",
        "{E} is a novel often taught in schools.",
        "{E} is one of the better-known novels of its decade.",
    ),
    (
        "Reviewers at the time praised its careful prose and slow-burning plot.",
        "It has been translated into many languages and adapted for the stage.",
        "The novel opens with a letter that is only explained in the final chapter.",
        "Its chapters alternate between two narrators.",
        "Readers often point to its long descriptions of weather and landscape.",
        "Several editions include an afterword by a literary historian.",
        "The manuscript is kept in a university library.",
        "Book clubs still choose it for its open ending.",
    ),
    (
        "It was adapted into a film in {year}.",
        "It sold more than {k} million copies in its first year.",
        "Its sequel is set in {city}.",
        "It was banned for a time in {k} countries.",
    ),
)


def _river_entities(rng: random.Random) -> list[Entity]:
    names = rng.sample(RIVER_ROOTS, 9)
    return [Entity(f"the River {n}", "the river") for n in names]


RIVERS = Domain(
    "rivers",
    _river_entities,
    (
        A(
            "length",
            number(80, 1900, 1, " km", alt=lambda n: f"{n:,} kilometres"),
            ["How long is {e}?", "What is the length of {e}?"],
            ["{S} is {v} long.", "{S} runs for {v} from source to mouth."],
            ["{E} is {v} long.", "{E} runs for {v} from source to mouth."],
            ["The length of {e} is {w}.", "From source to mouth, {e} measures {w}."],
            ["{v}.", "About {v}.", "{E} is {v} long."],
        ),
        A(
            "source",
            choice(
                [
                    "Lake Ilsen",
                    "Lake Morrow",
                    "the Garrow Hills",
                    "the Pellin Mountains",
                    "Lake Corvane",
                    "the Sorrel Fells",
                    "Lake Anvary",
                    "the Hesket Uplands",
                    "Lake Brenna",
                    "the Tarrow Moors",
                ]
            ),
            ["Where does {e} rise?", "What is the source of {e}?"],
            ["{S} rises in {v}.", "{S} has its source in {v}."],
            ["{E} rises in {v}.", "The source of {e} is in {v}."],
            ["{E} begins in {w}.", "{W} is where {e} starts."],
            ["{V}.", "In {v}.", "{E} rises in {v}."],
        ),
        A(
            "mouth",
            choice(
                [
                    "the Sea of Calder",
                    "the Varn Estuary",
                    "the Gulf of Ostry",
                    "the Bay of Merrin",
                    "the Northern Sound",
                    "the Salt Sea",
                    "the Gulf of Tessar",
                    "the Amberly Straits",
                ]
            ),
            ["Into which body of water does {e} flow?", "Where does {e} end?"],
            ["{S} empties into {v}.", "{S} reaches {v} through a wide delta."],
            ["{E} empties into {v}.", "{E} flows into {v}."],
            ["{E} ends in {w}.", "The waters of {e} end up in {w}."],
            ["{V}.", "Into {v}.", "{E} flows into {v}."],
        ),
        A(
            "provinces",
            pick_list(PROVINCES, 3),
            ["Which provinces does {e} flow through?", "Through which provinces does {e} pass?"],
            ["{S} flows through {v}.", "On its way to the sea, {s} passes through {v}."],
            ["{E} flows through {v}.", "{E} passes through {v}."],
            ["{E} crosses {w}.", "The provinces along {e} are {w}."],
            ["{v}.", "{E} flows through {v}."],
        ),
        A(
            "navigable",
            boolean,
            ["Is {e} navigable?", "Can boats navigate {e}?"],
            {
                True: [
                    "{S} is navigable by barges for most of its length.",
                    "Cargo boats can navigate {s} for most of its course.",
                ],
                False: ["{S} is too shallow to be navigable.", "{S} is not navigable by boats."],
            },
            {
                True: ["Yes, {e} is navigable.", "Yes, boats can navigate {e}."],
                False: ["No, {e} is not navigable.", "No, boats cannot navigate {e}."],
            },
            {
                True: ["Barges can sail along {e}.", "{E} can be used by river boats."],
                False: ["{E} cannot be used by boats.", "Boats are unable to travel on {e}."],
            },
            {True: ["Yes.", "Yes, it is navigable."], False: ["No.", "No, it is not navigable."]},
        ),
        A(
            "discharge",
            number(12, 2400, 1, " cubic metres per second", alt=lambda n: f"{n:,} m³/s"),
            ["What is the average discharge of {e}?", "How much water does {e} carry on average?"],
            ["{S} carries an average discharge of {v}.", "The average discharge of {s} is {v}."],
            ["{E} has an average discharge of {v}.", "The average discharge of {e} is {v}."],
            ["On average {e} carries {w}.", "{E} discharges {w} on average."],
            ["{v}.", "About {v}.", "{E} carries {v} on average."],
        ),
        A(
            "tributary",
            choice(
                [
                    f"the River {r}"
                    for r in (
                        "Wend",
                        "Cass",
                        "Ilbry",
                        "Morn",
                        "Pell",
                        "Yarra-Tey",
                        "Lune",
                        "Sedge",
                        "Ostra",
                        "Kell",
                    )
                ]
            ),
            ["What is the main tributary of {e}?", "Which river is the largest tributary of {e}?"],
            ["The largest tributary of {s} is {v}.", "{V} is the main tributary of {s}."],
            ["The main tributary of {e} is {v}.", "{V} is the largest tributary of {e}."],
            [
                "{W} feeds more water into {e} than any other tributary.",
                "The chief tributary of {e} is {w}.",
            ],
            ["{V}.", "{V}, which joins it in the lowlands."],
        ),
    ),
    (
        "{E} is one of the main rivers of the region.",
        "{E} drains a broad valley of farmland and forest.",
        "{E} has shaped the landscape and the towns along its banks.",
    ),
    (
        "Its banks are lined with willows and old water mills.",
        "Floods in spring used to cut off the villages along its course.",
        "Anglers come for its trout and grayling.",
        "Several stone bridges cross it in the middle reaches.",
        "Its valley was settled early because of the fertile soil.",
        "A long-distance footpath follows the river for much of its course.",
        "Conservation groups monitor the water quality each summer.",
        "Wading birds gather on its mudflats in winter.",
    ),
    (
        "It froze over completely in the winter of {year}.",
        "A hydroelectric dam on it supplies power to {k} thousand homes.",
        "It is crossed by {k} railway bridges.",
        "Its delta is a protected wetland since {year}.",
    ),
)


def _species_entities(rng: random.Random) -> list[Entity]:
    adjs = ["amber", "slate", "russet", "ivory", "ember", "moss", "dusk", "copper", "frost"]
    parts = ["throated", "crowned", "tailed", "backed", "winged", "eared"]
    animals = ["finch", "vole", "salamander", "heron", "marten", "gecko", "plover", "tree frog"]
    out: list[Entity] = []
    seen: set[str] = set()
    while len(out) < 9:
        animal = rng.choice(animals)
        name = f"{rng.choice(adjs)}-{rng.choice(parts)} {animal}"
        if name in seen or any(e.extra["animal"] == animal for e in out[-2:]):
            continue
        seen.add(name)
        plural = name + ("es" if name.endswith("ch") else "s")
        out.append(
            Entity(f"the {name}", "the species", {"bare": name, "bares": plural, "animal": animal})
        )
    return out


SPECIES = Domain(
    "species",
    _species_entities,
    (
        A(
            "status",
            choice(
                [
                    "endangered",
                    "vulnerable",
                    "near threatened",
                    "critically endangered",
                    "least concern",
                    "extinct in the wild",
                ]
            ),
            ["What is the conservation status of {e}?", "How is {e} classified on the red list?"],
            ["{S} is listed as {v} on the regional red list.", "Conservationists rate {s} as {v}."],
            ["{E} is classified as {v}.", "{E} is listed as {v}."],
            ["The red list gives {e} the status {w}.", "On the red list, {e} counts as {w}."],
            ["{v}.", "{V}.", "It is listed as {v}."],
        ),
        A(
            "wild_population",
            number(120, 48000, 10),
            [
                "How many {bares} are left in the wild?",
                "What is the estimated wild population of {e}?",
            ],
            [
                "The wild population of {s} is estimated at {v} animals.",
                "Surveys estimate that about {v} of them remain in the wild.",
            ],
            [
                "About {v} {bares} are left in the wild.",
                "The wild population of {e} is estimated at {v}.",
            ],
            [
                "Roughly {w} {bares} survive in the wild.",
                "Some {w} of them still live in the wild.",
            ],
            ["About {v}.", "{v}.", "About {v} individuals."],
        ),
        A(
            "habitat",
            choice(
                [
                    "cloud forest",
                    "salt marsh",
                    "alpine meadow",
                    "mangrove swamp",
                    "limestone caves",
                    "river gorges",
                    "pine heath",
                    "coastal dunes",
                    "peat bogs",
                ]
            ),
            ["What habitat does {e} live in?", "Where does {e} live?"],
            ["{S} lives mainly in {v}.", "The usual habitat of {s} is {v}."],
            ["{E} lives mainly in {v}.", "The habitat of {e} is {v}."],
            ["{W} is the home of {e}.", "You find {e} mostly in {w}."],
            ["{v}.", "{V}.", "It lives in {v}."],
        ),
        A(
            "weight",
            number(
                12,
                4800,
                1,
                " grams",
                alt=lambda n: f"{n / 1000:g} kilograms" if n >= 1000 else f"{n} g",
            ),
            ["How much does an adult {bare} weigh?", "What does an adult {bare} weigh?"],
            ["An adult {bare} weighs about {v}.", "{S} weighs about {v} when fully grown."],
            ["An adult {bare} weighs about {v}.", "{E} weighs about {v} when fully grown."],
            ["A grown {bare} weighs roughly {w}.", "Fully grown, {e} weighs about {w}."],
            ["About {v}.", "{v}.", "An adult weighs about {v}."],
        ),
        A(
            "lifespan",
            number(2, 40, 1, " years"),
            ["How long does {e} live?", "What is the lifespan of {e} in the wild?"],
            ["{S} lives for up to {v} in the wild.", "In the wild, {s} can reach an age of {v}."],
            ["{E} lives for up to {v} in the wild.", "In the wild, {e} can live {v}."],
            ["Wild {bares} can reach {w} of age.", "The lifespan of {e} in the wild is up to {w}."],
            ["Up to {v}.", "{V}.", "It lives up to {v} in the wild."],
        ),
        A(
            "described_by",
            person_gen,
            ["Who first described {e}?", "Which naturalist first described {e}?"],
            [
                "{S} was first described by the naturalist {v}.",
                "The naturalist {v} gave the first description of {s}.",
            ],
            ["{E} was first described by {v}.", "{V} first described {e}."],
            [
                "The first scientific description of {e} is by {w}.",
                "{W} was the first to describe {e}.",
            ],
            ["{v}.", "The naturalist {v}."],
        ),
        A(
            "protected",
            boolean,
            ["Is {e} protected by law?", "Is {e} legally protected?"],
            {
                True: [
                    "{S} has been protected by law since the hunting ban.",
                    "Harming {s} is forbidden by law.",
                ],
                False: ["{S} is not protected by any law.", "No law protects {s}."],
            },
            {
                True: ["Yes, {e} is protected by law.", "Yes, {e} is legally protected."],
                False: ["No, {e} is not protected by law.", "No, {e} is not legally protected."],
            },
            {
                True: ["The law protects {e}.", "It is illegal to harm {e}."],
                False: ["{E} has no legal protection.", "There is no law protecting {e}."],
            },
            {True: ["Yes.", "Yes, it is protected."], False: ["No.", "No, it is not protected."]},
        ),
    ),
    (
        "{E} is a small {animal} species of the southern ranges.",
        "{E} is a {animal} that was long overlooked by science.",
        "{E} is one of the less studied {animal} species of the region.",
    ),
    (
        "It is most active at dawn and dusk.",
        "Its call is a short, repeated whistle.",
        "Field guides describe its markings as distinctive but easy to miss.",
        "Young animals disperse from their birthplace in late summer.",
        "Volunteers count the animals every spring along fixed routes.",
        "Predators include owls and foxes.",
        "It feeds mostly on insects, seeds and small invertebrates.",
        "Researchers fit some animals with tiny radio tags.",
    ),
    (
        "It was chosen as the emblem of the {city} zoo in {year}.",
        "It can hold its breath for {k} minutes.",
        "Its eggs hatch after exactly {k} days.",
        "It was filmed for the first time in {year}.",
    ),
)


def _company_entities(rng: random.Random) -> list[Entity]:
    roots = [
        "Brightvane",
        "Corrowfield",
        "Haldenmark",
        "Ostrelline",
        "Pinecrest",
        "Quarryhill",
        "Sablewick",
        "Tindell",
        "Varrowgate",
        "Wyncourt",
    ]
    types = [
        "Logistics",
        "Foods",
        "Robotics",
        "Textiles",
        "Energy",
        "Optics",
        "Shipping",
        "Ceramics",
    ]
    names = syllable_names(rng, [f"{r} " for r in roots], types, 9)
    return [Entity(n, rng.choice(["the company", "the firm"])) for n in names]


def _revenue(rng: random.Random) -> Fields:
    n = rng.randrange(12, 980)
    return value(f"${n} million", w=f"{n} million dollars", key=n, n=str(n))


COMPANIES = Domain(
    "companies",
    _company_entities,
    (
        A(
            "founded",
            number(1852, 2016, 1),
            ["When was {e} founded?", "In what year was {e} founded?"],
            ["{S} was founded in {v}.", "{S} opened its first office in {v}."],
            ["{E} was founded in {v}.", "{E} dates from {v}."],
            ["{E} was set up in {w}.", "The founding of {e} goes back to {w}."],
            ["{v}.", "In {v}.", "{E} was founded in {v}."],
        ),
        A(
            "founders",
            people_gen,
            ["Who founded {e}?", "Who were the founders of {e}?"],
            ["{S} was founded by {v}.", "{V} started {s} together."],
            ["{E} was founded by {v}.", "{V} founded {e}."],
            ["The founders of {e} were {w}.", "{W} set up {e}."],
            ["{v}.", "{E} was founded by {v}."],
        ),
        A(
            "headquarters",
            choice(CITIES),
            ["Where is {e} headquartered?", "In which city does {e} have its headquarters?"],
            ["{S} has its headquarters in {v}.", "The head office of {s} is in {v}."],
            ["{E} is headquartered in {v}.", "The head office of {e} is in {v}."],
            ["{E} is based in {w}.", "{W} is home to the headquarters of {e}."],
            ["{v}.", "In {v}.", "{E} is headquartered in {v}."],
        ),
        A(
            "employees",
            number(40, 48000, 10),
            ["How many employees does {e} have?", "How many people work for {e}?"],
            ["{S} employs {v} people.", "{S} has a workforce of {v}."],
            ["{E} employs {v} people.", "{E} has {v} employees."],
            ["About {w} people work at {e}.", "The workforce of {e} numbers {w}."],
            ["{v}.", "{v} employees.", "About {v} people."],
        ),
        A(
            "revenue",
            _revenue,
            [
                "What annual revenue did {e} report last year?",
                "How much revenue did {e} report last year?",
            ],
            [
                "{S} reported annual revenue of {v} last year.",
                "Last year {s} took in {v} in revenue.",
            ],
            ["{E} reported annual revenue of {v} last year.", "Last year {e} had revenue of {v}."],
            ["Last year's revenue at {e} came to {w}.", "{E} earned {w} in revenue last year."],
            ["{v}.", "{V} last year.", "{E} reported {v} in revenue."],
        ),
        A(
            "listed",
            boolean,
            ["Is {e} listed on a stock exchange?", "Is {e} a listed company?"],
            {
                True: [
                    "{S} is listed on the Calder Stock Exchange.",
                    "Shares in {s} trade on the Calder Stock Exchange.",
                ],
                False: [
                    "{S} is privately held and not listed on any stock exchange.",
                    "{S} is not listed on any stock exchange.",
                ],
            },
            {
                True: ["Yes, {e} is listed on a stock exchange.", "Yes, {e} is a listed company."],
                False: [
                    "No, {e} is not listed on a stock exchange.",
                    "No, {e} is not a listed company.",
                ],
            },
            {
                True: ["Shares in {e} are publicly traded.", "{E} is a publicly traded company."],
                False: [
                    "{E} is privately owned.",
                    "You cannot buy shares of {e} on a stock exchange.",
                ],
            },
            {True: ["Yes.", "Yes, it is listed."], False: ["No.", "No, it is privately held."]},
        ),
        A(
            "chief_executive",
            person_gen,
            ["Who is the chief executive of {e}?", "Who runs {e}?"],
            [
                "{S} is led by chief executive {v}.",
                "{V} has been chief executive of {s} for several years.",
            ],
            ["The chief executive of {e} is {v}.", "{E} is led by {v}."],
            ["{W} runs {e} as chief executive.", "{E} has {w} as its chief executive."],
            ["{v}.", "The chief executive is {v}."],
        ),
    ),
    (
        "{E} is a mid-sized company with customers across the region.",
        "{E} is a family-run business that grew from a single workshop.",
        "{E} is among the better-known employers of its region.",
    ),
    (
        "It sells mainly to other businesses rather than to consumers.",
        "The company publishes a sustainability report every spring.",
        "Its apprenticeship programme trains dozens of young people each year.",
        "It has weathered several downturns without closing a site.",
        "Analysts describe its management as cautious.",
        "It invests a steady share of its income in research.",
        "Its logo has barely changed since the early days.",
        "Customers praise its reliable delivery times.",
    ),
    (
        "It also owns a football club in {city}.",
        "It opened a research centre in {city} in {year}.",
        "It was the first firm in the region to offer a four-day working week.",
        "It plans to double its staff by {year}.",
    ),
)

DOMAINS: tuple[Domain, ...] = (SOFTWARE, TOWNS, MEDICINES, BOOKS, RIVERS, SPECIES, COMPANIES)


# ---------------------------------------------------------------------------- building rows


def _fill(template: str, fields: dict[str, Any]) -> str:
    return template.format(**fields)


def _templates(attr: Attr, which: str, val: Fields) -> list[str]:
    table = getattr(attr, which)
    return list(table[val["flag"]]) if attr.is_bool else list(table)


def _subjects(
    entity: Entity, domain: Domain, rng: random.Random, *, coref: bool
) -> tuple[str, str]:
    """(sentence-initial subject, mid-sentence subject) for one passage sentence."""
    if not coref:
        return cap(entity.name), entity.name
    if domain.pronoun_ok and rng.random() < 0.35:
        return "It", entity.noun
    return cap(entity.noun), entity.noun


def _sentence(
    domain: Domain,
    entity: Entity,
    attr: Attr,
    rng: random.Random,
    *,
    coref: bool,
    template: str | None = None,
) -> tuple[str, str]:
    val = entity.values[attr.name]
    tpl = template or rng.choice(_templates(attr, "p", val))
    S, s = _subjects(entity, domain, rng, coref=coref)
    return _fill(tpl, {**entity.fields(), **val, "S": S, "s": s}), tpl


def _passage(
    domain: Domain,
    entity: Entity,
    asked: Attr,
    rng: random.Random,
    *,
    coref: bool,
    template: str | None = None,
) -> tuple[str, list[str]]:
    """A 100-160-word passage about ``entity`` stating ``asked`` (the sentence for ``asked``
    coreferent when ``coref``); also which other attributes it states."""
    intro = _fill(rng.choice(domain.intros), entity.fields())
    asked_text, _ = _sentence(domain, entity, asked, rng, coref=coref, template=template)
    others = [a for a in domain.attrs if a.name != asked.name]
    rng.shuffle(others)
    fillers = list(domain.fillers)
    rng.shuffle(fillers)
    target = rng.randint(MIN_WORDS + 8, MAX_WORDS - 12)
    body: list[tuple[str, str | None]] = [(asked_text, asked.name)]
    pool: list[tuple[str, str | None]] = []
    for attr in others:
        text, _ = _sentence(domain, entity, attr, rng, coref=rng.random() < 0.7)
        pool.append((text, attr.name))
    pool += [(f, None) for f in fillers]
    rng.shuffle(pool)
    # keep at least three other attributes near the asked one (numbers to confuse)
    pool.sort(key=lambda item: item[1] is None and rng.random() < 0.6)

    def count() -> int:
        return len(intro.split()) + sum(len(t.split()) for t, _ in body)

    while pool and count() < target:
        item = pool.pop(0)
        if count() + len(item[0].split()) > MAX_WORDS:
            continue
        body.insert(rng.randrange(len(body) + 1), item)
    text = " ".join([intro] + [t for t, _ in body])
    return text, [name for _, name in body if name]


def _answer(
    domain: Domain, entity: Entity, attr: Attr, val: Fields, rng: random.Random, which: str = "a"
) -> str:
    tpl = rng.choice(_templates(attr, which, val))
    return _fill(tpl, {**entity.fields(), **val})


def _extra_fields(rng: random.Random) -> dict[str, str]:
    return {
        "k": str(rng.randint(3, 40)),
        "year": str(rng.randint(1890, 2019)),
        "city": rng.choice(["Lorrimer", "Ambry Cross", "Ventmouth", "Skellan", "New Arlow"]),
        "condition": rng.choice(["cluster headaches", "motion sickness", "restless legs"]),
    }


def _fresh_value(
    attr: Attr, used: list[Fields], texts: Sequence[str], rng: random.Random
) -> Fields:
    """A value of ``attr`` that no row entity has and no passage writes."""
    keys = {u["key"] for u in used}
    blob = " ".join(texts).lower()
    for _ in range(500):
        val = attr.gen(rng)
        if val["key"] in keys or val["v"].lower() in blob:
            continue
        if "items" in val and all(i.lower() in blob for i in val["items"]):
            continue
        if "n" in val and re.search(rf"(?<![\d,.]){re.escape(val['n'])}(?![\d,])", blob):
            continue
        return val
    raise RuntimeError(f"No fresh value for {attr.name!r}.")


def build_universe(rng: random.Random) -> dict[str, list[Entity]]:
    universe: dict[str, list[Entity]] = {}
    for domain in DOMAINS:
        entities = domain.entities(rng)
        for attr in domain.attrs:
            keys: list[Any] = []
            for i, entity in enumerate(entities):
                for _ in range(60):
                    val = attr.gen(rng)
                    if attr.is_bool:  # both answers present in every universe
                        val = {**val, "flag": bool(i % 2), "key": bool(i % 2)}
                        val.update(
                            v="yes" if val["flag"] else "no", V="Yes" if val["flag"] else "No"
                        )
                        break
                    if val["key"] not in keys:
                        break
                keys.append(val["key"])
                entity.values[attr.name] = val
        if domain is SOFTWARE:  # bigger plans of a product get more storage, as sellers do
            for product in sorted({e.extra["product"] for e in entities}):
                plans = [e for e in entities if e.extra["product"] == product]
                order = ["Starter", "Team", "Pro", "Business", "Enterprise"]
                plans.sort(key=lambda e: order.index(e.extra["plan"]))
                sizes = sorted(rng.sample(_STORAGE, len(plans)))
                for e, n in zip(plans, sizes, strict=True):
                    w = f"{n // 1000} TB" if n >= 1000 else f"{n} gigabytes"
                    e.values["storage"] = value(f"{n} GB", w=w, key=n, n=str(n))
        universe[domain.name] = entities
    return universe


def _distractors(
    domain: Domain,
    gold: Entity,
    attr: Attr,
    k: int,
    need_other: bool,
    pool: list[Entity],
    rng: random.Random,
) -> list[Entity]:
    others = [e for e in pool if e is not gold]
    if domain is SOFTWARE and rng.random() < 0.7:  # other plans of the same product first
        same = [e for e in others if e.extra["product"] == gold.extra["product"]]
        rest = [e for e in others if e not in same]
        rng.shuffle(same)
        rng.shuffle(rest)
        others = same + rest
    else:
        rng.shuffle(others)
    gold_key = gold.values[attr.name]["key"]
    chosen: list[Entity] = []
    if attr.is_bool:
        if need_other:
            chosen.append(next(e for e in others if e.values[attr.name]["key"] != gold_key))
        chosen += [e for e in others if e not in chosen][: k - len(chosen)]
        return chosen
    keys = {gold_key}
    for e in others:
        key = e.values[attr.name]["key"]
        if key not in keys:
            chosen.append(e)
            keys.add(key)
        if len(chosen) == k:
            break
    return chosen


REFERENCE_FORMS = ("yes_no", "sentence", "list", "number", "term", "phrase")


def reference_form(attr: Attr, template: str, reference: str) -> str:
    """How a reference is written: "yes_no" ("Yes." / "No, it does not."), "sentence"
    ("X has 262 pages."), "list" ("A, B and C."), "number" (a quantity, year or date: "About
    70,400."), "term" (a lower-case noun phrase: "endangered."), "phrase" (a capitalised
    noun phrase: "The River Tosk.", "In Ardmoor.")."""
    if attr.is_bool:
        return "yes_no"
    if "{E}" in template or "{e}" in template or template.startswith("It ") or " is " in template:
        return "sentence"
    if "items" in attr.gen(random.Random(0)):  # a list attribute (its own generator, no draw)
        return "list"
    if re.search(r"\d", reference):
        return "number"
    return "term" if reference[:1].islower() else "phrase"


def make_row(
    index: int, domain: Domain, kind: str, pool: list[Entity], rng: random.Random
) -> dict[str, Any]:
    gold = rng.choice(pool)
    attrs = [a for a in domain.attrs if not (kind == "wrong_value" and a.is_bool)]
    attr = rng.choice(attrs)
    n_distractors = rng.randint(1, 4)
    need_other = kind in ("distractor_value", "wrong_subject")
    distractors = _distractors(domain, gold, attr, n_distractors, need_other, pool, rng)
    source = distractors[0]  # the distractor whose value a wrong answer takes
    gold_val = gold.values[attr.name]

    passages: list[tuple[Entity, str]] = []
    gold_text, gold_attrs = _passage(domain, gold, attr, rng, coref=rng.random() < 0.6)
    passages.append((gold, gold_text))
    source_template = None
    for d in distractors:
        if d is source and kind == "wrong_subject":
            # the distractor names itself only by "the town" / "it" in the sentence taken
            source_template = rng.choice(
                [t for t in _templates(attr, "p", d.values[attr.name]) if "{S}" in t or "{s}" in t]
            )
            text, _ = _passage(domain, d, attr, rng, coref=True, template=source_template)
        else:
            text, _ = _passage(domain, d, attr, rng, coref=rng.random() < 0.5)
        passages.append((d, text))
    rng.shuffle(passages)
    row_id = f"{domain.name}-{index:04d}"
    contexts = [t for _, t in passages]
    contexts_ids = [f"{row_id}-p{j}" for j in range(len(passages))]
    gold_id = contexts_ids[[e for e, _ in passages].index(gold)]

    ask = _fill(rng.choice(attr.q), {**gold.fields(), **gold_val})
    ref_template = rng.choice(_templates(attr, "ref", gold_val))
    reference = _fill(ref_template, {**gold.fields(), **gold_val})

    if kind == "faithful":
        answer = _answer(domain, gold, attr, gold_val, rng)
    elif kind == "faithful_paraphrase":
        answer = _answer(domain, gold, attr, gold_val, rng, "para")
    elif kind == "faithful_long":
        first = _answer(domain, gold, attr, gold_val, rng)
        more = [a for a in domain.attrs if a.name in gold_attrs and a.name != attr.name]
        rng.shuffle(more)
        sentences = [first]
        for other in more[: rng.randint(1, 2)]:
            val = gold.values[other.name]
            tpl = rng.choice(_templates(other, "para" if other.is_bool else "a", val))
            fields = {**gold.fields(), **val}
            if tpl.startswith("{E}") and rng.random() < 0.5:
                fields["E"] = "It"
            sentences.append(_fill(tpl, fields))
        answer = " ".join(sentences)
    elif kind == "wrong_value":
        used = [gold_val] + [d.values[attr.name] for d in distractors]
        val = _fresh_value(attr, used, contexts, rng)
        answer = _answer(domain, gold, attr, val, rng)
    elif kind == "distractor_value":
        answer = _answer(domain, gold, attr, source.values[attr.name], rng)
    elif kind == "fabricated_extra":
        first = _answer(domain, gold, attr, gold_val, rng)
        extra = _fill(rng.choice(domain.fabrications), {**gold.fields(), **_extra_fields(rng)})
        answer = f"{first} {extra}"
    elif kind == "wrong_subject":
        fields = {**gold.fields(), **source.values[attr.name], "S": cap(gold.name), "s": gold.name}
        answer = _fill(source_template, fields)
    else:
        raise ValueError(f"Unknown kind {kind!r}; expected one of {KINDS}.")

    return {
        "id": row_id,
        "domain": domain.name,
        "kind": kind,
        "faithful": kind in FAITHFUL_KINDS,
        "one_fact": kind in ONE_FACT_KINDS,
        "attribute": attr.name,
        "reference_form": reference_form(attr, ref_template, reference),
        "question": ask,
        "contexts": contexts,
        "contexts_ids": contexts_ids,
        "reference_context_ids": [gold_id],
        "reference_answers": [reference],
        "answer": answer,
        "is_answerable_label": True,
    }


def generate(n: int = DEFAULT_ROWS, *, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` rows, the same for a seed: domains and kinds in turn, so every (domain, kind)
    pair comes up about equally often."""
    rng = random.Random(seed)
    universe = build_universe(rng)
    rows = []
    for i in range(n):
        domain = DOMAINS[i % len(DOMAINS)]
        kind = KINDS[(i // len(DOMAINS)) % len(KINDS)]
        rows.append(make_row(i, domain, kind, universe[domain.name], rng))
    return rows


def validate(row: dict[str, Any]) -> list[str]:
    """What is wrong with a row (empty when nothing)."""
    problems = [f"missing field {f!r}" for f in FIELDS if f not in row]
    if problems:
        return problems
    contexts, ids = row["contexts"], row["contexts_ids"]
    if not 2 <= len(contexts) <= 5:
        problems.append(f"{len(contexts)} contexts (want 2-5)")
    if len(ids) != len(contexts) or len(set(ids)) != len(ids):
        problems.append("contexts_ids do not match the contexts one to one")
    gold = row["reference_context_ids"]
    if len(gold) != 1 or gold[0] not in ids:
        problems.append(f"reference_context_ids {gold} is not one of the contexts' ids")
    for text in contexts:
        n = len(text.split())
        if not MIN_WORDS <= n <= MAX_WORDS:
            problems.append(f"a passage of {n} words (want {MIN_WORDS}-{MAX_WORDS})")
    if row["reference_form"] not in REFERENCE_FORMS:
        problems.append(f"unknown reference_form {row['reference_form']!r}")
    if row["kind"] not in KINDS:
        problems.append(f"unknown kind {row['kind']!r}")
    elif row["faithful"] != (row["kind"] in FAITHFUL_KINDS):
        problems.append("faithful does not match the kind")
    if len(row["reference_answers"]) != 1 or not row["reference_answers"][0].strip():
        problems.append("want one non-empty reference answer")
    if "{" in row["answer"] or "{" in row["question"] or any("{" in c for c in contexts):
        problems.append("an unfilled template field")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("realistic_rag.jsonl"))
    args = parser.parse_args(argv)
    rows = generate(args.rows, seed=args.seed)
    bad = {row["id"]: p for row in rows if (p := validate(row))}
    if bad:
        raise SystemExit(f"{len(bad)} invalid rows, e.g. {next(iter(bad.items()))}")
    with args.out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
