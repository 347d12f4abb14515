"""rtcompiler: response templates compiled to standalone, linear-time Python parsers.

The pipeline, one package per stage:

- ``rtcompiler.dialect``  -- the delimiter regex dialect: syntax tree and parser.
- ``rtcompiler.automata`` -- Thompson NFA, leftmost-first DFA, search and streaming.
"""

__version__ = "0.1.0"

from .api import CompiledParser, compile_template  # noqa: E402
from .runtime.functions import tool_schema  # noqa: E402

__all__ = ["CompiledParser", "__version__", "compile_template", "tool_schema"]
