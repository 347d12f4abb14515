"""What a batch worker process runs: the generated module, loaded from its file.

Standard library only, on purpose: a worker needs the module ``rtc compile`` wrote and
nothing else (no rtcompiler, no transformers, no ``regex``). The batch benchmark starts
its workers with the ``spawn`` method, so nothing leaks in from the parent either.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

_module: Any = None
_tools: list | None = None


def load(path: str, tools: list | None) -> None:
    """Pool initializer: import the generated parser from ``path``."""
    global _module, _tools
    spec = importlib.util.spec_from_file_location("rtc_batch_parser", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load a parser from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _module, _tools = module, tools


def parse_batch(items: list[tuple[str, str]]) -> list[dict]:
    parse = _module.parse_response
    return [parse(text, prefix=prefix, tools=_tools) for text, prefix in items]


def imported() -> list[str]:
    """The third-party packages this worker has imported (should be none)."""
    return sorted(name for name in ("rtcompiler", "transformers", "regex", "jinja2")
                  if name in sys.modules)
