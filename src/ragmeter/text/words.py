"""Word lists shared across the package: each list lives here once.

Every module that reads words of a given kind (articles, dates, numbers, opposite words,
capitalised words that are not names) imports the list from here, so the heuristics of
the offline judge, of the metrics and of the test server agree.
"""

from __future__ import annotations

__all__ = ["ANTONYMS", "ANTONYM_OF", "ARTICLES"]

#: Words SQuAD normalisation drops.
ARTICLES: frozenset[str] = frozenset({"a", "an", "the"})


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
