"""Thread semantics (Pike's VM with lookahead obligations) -- see the runtime engine.

The code lives in :mod:`rtcompiler.runtime.engine` because generated parsers
run it too; this module names it for the compiler side.
"""

from ..runtime.engine import (  # noqa: F401
    EOF,
    FAIL,
    GHOST,
    PENDING,
    PREV_OTHER,
    PREV_START,
    PREV_WORD,
    SAT,
    Machine,
)
