"""Meta-evaluation suite ``wikieval``: pairwise accuracy on labelled WikiEval pairs.

The suite is :mod:`ragmeter.metaeval.wikieval`; ``ragmeter meta-eval wikieval`` runs it too::

    PYTHONPATH=src python bench/meta/wikieval.py [--judge J] [--metrics a,b] [--limit N] [--out DIR]
"""

from __future__ import annotations

from common import main

if __name__ == "__main__":
    raise SystemExit(main("wikieval"))
