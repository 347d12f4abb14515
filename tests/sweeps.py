"""How many examples the heavier property tests draw.

The default run keeps ``python -m pytest -n 2`` within CI's budget; ``--runslow`` (which
sets ``RTC_FULL_SWEEPS=1`` before any test module is imported) restores the full counts.
The properties that are the suite's backbone keep their full count in every run: parity
against transformers (tests/parity) and the regex engine against ``regex``
(tests/automata/test_differential.py). What draws fewer examples by default are the
checks that an optimisation changes nothing, which run on the same code paths many other
tests reach.
"""

from __future__ import annotations

import os


def full_sweeps() -> bool:
    return os.environ.get("RTC_FULL_SWEEPS") == "1"


def examples(default: int, full: int) -> int:
    """``default`` in the default run, ``full`` with ``--runslow``."""
    return full if full_sweeps() else default
