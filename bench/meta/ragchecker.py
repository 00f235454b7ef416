"""Meta-evaluation suite ``ragchecker``: claim and token metrics vs RAGChecker's human preferences.

The suite is :mod:`ragmeter.metaeval.ragchecker`; ``ragmeter meta-eval ragchecker`` runs it too::

    PYTHONPATH=src python bench/meta/ragchecker.py [--judge J] [--metrics a,b] [--limit N]
        [--out DIR]
"""

from __future__ import annotations

from common import main

if __name__ == "__main__":
    raise SystemExit(main("ragchecker"))
