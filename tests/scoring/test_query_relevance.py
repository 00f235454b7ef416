from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from ragmeter.scoring.query_relevance import (
    TermWeights,
    bm25_fraction,
    idf_coverage,
    inverse_document_frequencies,
)

DOCS = [
    ["paris", "is", "capital", "of", "france"],
    ["rome", "is", "old"],
    ["paris", "has", "museums", "paris"],
]


def test_idf_follows_bm25_formula_and_rare_terms_weigh_more():
    idf = inverse_document_frequencies(DOCS)
    assert idf("paris") == pytest.approx(math.log(1 + (3 - 2 + 0.5) / (2 + 0.5)))
    assert idf("rome") == pytest.approx(math.log(1 + 2.5 / 1.5))
    assert idf("london") == pytest.approx(math.log(1 + 3.5 / 0.5))
    assert idf("london") > idf("rome") > idf("paris") > 0
    # a term repeated inside one document counts once
    assert inverse_document_frequencies([["a", "a"], ["b"]])("a") == pytest.approx(
        math.log(1 + 1.5 / 1.5)
    )


def test_idf_of_an_empty_collection_is_an_error():
    with pytest.raises(ValueError, match="Got 0 documents"):
        inverse_document_frequencies([])


def test_bm25_fraction_matches_hand_computation():
    idf = TermWeights({"paris": 0.5, "museums": 1.5}, unseen=2.0)
    passage = DOCS[2]
    k1, b, avg = 1.2, 0.75, 4.0
    norm = k1 * (1 - b + b * len(passage) / avg)
    expected = (0.5 * 2 * 2.2 / (2 + norm) + 1.5 * 1 * 2.2 / (1 + norm)) / ((0.5 + 1.5 + 2.0) * 2.2)
    got = bm25_fraction(["paris", "museums", "louvre", "paris"], passage, idf, average_length=avg)
    assert got == pytest.approx(expected)


def test_bm25_fraction_bounds_and_order():
    idf = inverse_document_frequencies(DOCS)
    avg = sum(map(len, DOCS)) / len(DOCS)
    query = ["paris", "capital"]
    scores = [bm25_fraction(query, d, idf, average_length=avg) for d in DOCS]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[0] > scores[2] > scores[1] == 0.0
    assert bm25_fraction([], DOCS[0], idf, average_length=avg) == 0.0
    # saturated: many repeats approach, never pass, the ceiling
    assert bm25_fraction(["x"], ["x"] * 10_000, idf, average_length=1.0, b=0.0) < 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"average_length": 0.0}, "'average_length' parameter must be > 0. Got 0.0"),
        ({"average_length": 3.0, "k1": -1.0}, "'k1' parameter must be >= 0. Got -1.0"),
        ({"average_length": 3.0, "b": 1.5}, r"'b' parameter must be in \[0, 1\]. Got 1.5"),
    ],
)
def test_bm25_fraction_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bm25_fraction(["a"], ["a"], TermWeights({}, unseen=1.0), **kwargs)


def test_idf_coverage_weights_terms_and_ignores_repeats():
    idf = TermWeights({"red": 1.0, "car": 3.0}, unseen=5.0)
    assert idf_coverage(["red", "car"], ["red"], idf) == pytest.approx(0.25)
    assert idf_coverage(["red", "car", "car"], ["car", "red"], idf) == 1.0
    assert idf_coverage(["red", "zebra"], ["red"], idf) == pytest.approx(1 / 6)
    assert idf_coverage([], ["red"], idf) == 0.0
    assert idf_coverage(["red"], [], idf) == 0.0


def test_scores_do_not_depend_on_the_hash_seed():
    # Sums of these weights change in the last bit with the order they are added in; the
    # query's terms are a set, whose order follows the per-process string hash seed.
    code = (
        "from ragmeter.scoring.query_relevance import TermWeights, bm25_fraction, idf_coverage\n"
        "w = TermWeights({t: v for t, v in zip('abcdefgh', "
        "[0.1, 0.2, 0.3, 1e16, 1.0, 3.3, 0.7, 1e-3])}, unseen=1.0)\n"
        "q = list('abcdefgh')\n"
        "print(repr(idf_coverage(q, list('abcdfh'), w)), "
        "repr(bm25_fraction(q, list('abcdfhh'), w, average_length=5.0)))\n"
    )
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        seen.add(done.stdout)
    assert len(seen) == 1, seen
