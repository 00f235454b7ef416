"""Meta-evaluation suite ``unitxt``: parity with Unitxt 1.26.10's own scores (1e-9).

The suite is :mod:`ragmeter.metaeval.unitxt`; ``ragmeter meta-eval unitxt`` runs it too::

    PYTHONPATH=src python bench/meta/unitxt.py [--judge J] [--metrics a,b] [--limit N] [--out DIR]
"""

from __future__ import annotations

from common import main

if __name__ == "__main__":
    raise SystemExit(main("unitxt"))
