"""Meta-evaluation suite ``msmarco``: context relevance, MS MARCO positive vs hard negative.

The suite is :mod:`ragmeter.metaeval.msmarco`; ``ragmeter meta-eval msmarco`` runs it too::

    PYTHONPATH=src python bench/meta/msmarco.py [--judge J] [--metrics a,b] [--limit N] [--out DIR]
"""

from __future__ import annotations

from common import main

if __name__ == "__main__":
    raise SystemExit(main("msmarco"))
