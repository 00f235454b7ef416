"""Word lists shared across the package: each list lives here once.

Every module that reads words of a given kind (articles, dates, numbers, opposite words,
capitalised words that are not names) imports the list from here, so the heuristics of
the offline judge, of the metrics and of the test server agree.
"""

from __future__ import annotations

import re

__all__ = [
    "ANTONYMS",
    "ANTONYM_OF",
    "ARTICLES",
    "DATE_WORDS",
    "ENTITY_OPENERS",
    "NOT_NAMES",
    "NUMBER_PATTERN",
    "NUMBER_RE",
    "QUESTION_AUXILIARIES",
    "SENTENCE_OPENERS",
    "SPEAKER_WORDS",
    "STOP_WORDS",
    "is_polar_question",
]


def _words(text: str) -> list[str]:
    return text.split()


#: Words SQuAD normalisation drops.
ARTICLES: frozenset[str] = frozenset({"a", "an", "the"})

# Function words and discourse markers that carry no checkable content (SQuAD tokens).
STOP_WORDS: frozenset[str] = frozenset(
    _words(
        """
    a an the and or but if then so of to in on at by for with from as is are was were be been
    being it its this that these those there here which who whom whose what when where why how
    i you he she they we me him her them us my your his their our not no do does did doing have
    has had having can could would should will shall may might must also than too very just
    more most such into about over under up down out off all any both each few other some only
    own same s t dont now one ones thing things way ways however therefore thus additionally
    furthermore moreover overall finally first second because while although though since until
    through during before after above below between again further once generally often usually
    many much lot lots well even still yet
    """
    )
)

#: Month and weekday names, lowercased (written capitalised in text: "May", not "may").
DATE_WORDS: frozenset[str] = frozenset(
    _words(
        """
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    """
    )
)

#: A number written with digits, with inner separators: "1,000", "3.5", "10:30", "1/2/2020".
NUMBER_PATTERN = r"\d+(?:[.,:/]\d+)*"
NUMBER_RE = re.compile(NUMBER_PATTERN)

#: "I", its contractions and "OK": capitalised mid-sentence, never a name (the offline
#: verifier's name feature skips these only).
SPEAKER_WORDS: frozenset[str] = frozenset(_words("I I'm I've I'd I'll OK"))

#: Words dropped from the front of a capitalised span taken as an entity by the offline
#: judge's regex fallback ("The Taj Mahal" -> "Taj Mahal").
ENTITY_OPENERS: frozenset[str] = frozenset(_words("The A An It This That They He She I In"))

#: Capitalised sentence openers that name nothing: articles, pronouns, prepositions,
#: conjunctions, "However", "Yes" (the answer-type check of ``response_relevancy`` skips these).
SENTENCE_OPENERS: frozenset[str] = ENTITY_OPENERS | frozenset(
    _words("Its These Those His Her Their On At By As For However And But Yes No There")
)

#: Capitalised words that name nothing: the sentence openers, "We", "I" and its contractions,
#: "OK".
NOT_NAMES: frozenset[str] = SENTENCE_OPENERS | SPEAKER_WORDS | frozenset({"We"})


#: Pairs of words of opposite meaning, each word in one pair only: a claim that holds one
#: where its premise holds the other says the opposite (the offline verifier's antonym
#: conflict). The shipped model's training data keeps its own shorter list
#: (``training/verifier_data.py``), so its recipe reproduces the model.
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("increases", "decreases"),
    ("increasing", "decreasing"),
    ("rise", "fall"),
    ("rose", "fell"),
    ("rises", "falls"),
    ("raised", "lowered"),
    ("grew", "shrank"),
    ("larger", "smaller"),
    ("largest", "smallest"),
    ("higher", "lower"),
    ("highest", "lowest"),
    ("more", "less"),
    ("most", "least"),
    ("many", "few"),
    ("before", "after"),
    ("first", "last"),
    ("north", "south"),
    ("northern", "southern"),
    ("east", "west"),
    ("eastern", "western"),
    ("early", "late"),
    ("earlier", "later"),
    ("earliest", "latest"),
    ("win", "lose"),
    ("won", "lost"),
    ("wins", "loses"),
    ("open", "closed"),
    ("public", "private"),
    ("major", "minor"),
    ("majority", "minority"),
    ("positive", "negative"),
    ("above", "below"),
    ("older", "younger"),
    ("oldest", "youngest"),
    ("long", "short"),
    ("longer", "shorter"),
    ("strong", "weak"),
    ("stronger", "weaker"),
    ("success", "failure"),
    ("succeeded", "failed"),
    ("accepted", "rejected"),
    ("allowed", "banned"),
    ("legal", "illegal"),
    ("maximum", "minimum"),
    ("best", "worst"),
    ("better", "worse"),
    ("cheap", "expensive"),
    ("cheaper", "costlier"),
    ("rich", "poor"),
    ("inside", "outside"),
    ("always", "never"),
    ("male", "female"),
    ("start", "end"),
    ("started", "ended"),
    ("joined", "left"),
    ("buy", "sell"),
    ("bought", "sold"),
    ("import", "export"),
    ("imports", "exports"),
    ("imported", "exported"),
    ("faster", "slower"),
    ("fastest", "slowest"),
    ("heavier", "lighter"),
    ("hotter", "colder"),
    ("warmer", "cooler"),
    ("true", "false"),
    ("alive", "dead"),
    ("included", "excluded"),
    ("entered", "exited"),
    ("arrived", "departed"),
    ("domestic", "foreign"),
    ("internal", "external"),
    ("ancient", "modern"),
    ("safe", "dangerous"),
    ("easy", "difficult"),
    ("same", "different"),
    ("gain", "loss"),
)
#: Each word of :data:`ANTONYMS` with its opposite.
ANTONYM_OF: dict[str, str] = {a: b for a, b in ANTONYMS} | {b: a for a, b in ANTONYMS}


#: Auxiliaries that open a yes/no question ("Does the plan ...?", "Is the river ...?").
QUESTION_AUXILIARIES: frozenset[str] = frozenset(
    _words(
        """
    do does did is are was were can could will would has have had should may might must shall
    """
    )
)


def is_polar_question(question: str) -> bool:
    """Whether ``question`` asks yes or no: it opens with an auxiliary ("Is the river
    navigable?"; not "Where does the river rise?").

    >>> is_polar_question("Can Quorvarin be bought over the counter?")
    True
    >>> is_polar_question("What is Calprine used to treat?")
    False
    """
    words = question.split()
    return bool(words) and words[0].lower() in QUESTION_AUXILIARIES
