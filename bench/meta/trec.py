"""Meta-evaluation suite ``trec``: ranking metrics vs trec_eval's reference output.

The suite is :mod:`ragmeter.metaeval.trec`; ``ragmeter meta-eval trec`` runs it too::

    PYTHONPATH=src python bench/meta/trec.py [--judge J] [--metrics a,b] [--limit N] [--out DIR]
"""

from __future__ import annotations

from common import main

if __name__ == "__main__":
    raise SystemExit(main("trec"))
