"""Data as Python source: how compiled tables and template values enter a module.

Everything a template supplies -- names, literals, patterns, transform values,
defaults -- is emitted through :func:`literal`, which writes JSON-like data as
Python literals (``repr`` of strings is always a closed, inert literal), never
by pasting text into code. Output is deterministic and wrapped for reading.
"""

from __future__ import annotations

import math

WIDTH = 96


def literal(value: object, indent: int = 0) -> str:
    """Python source that evaluates to ``value`` (JSON-compatible data only)."""
    flat = _flat(value)
    if len(flat) + indent <= WIDTH or not isinstance(value, (list, tuple, dict)) or not value:
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = [f"{pad}{_flat(k)}: {literal(v, indent + 4)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    opener, closer = ("[", "]") if isinstance(value, list) else ("(", ")")
    items = [f"{pad}{literal(v, indent + 4)}," for v in value]
    return opener + "\n" + "\n".join(items) + "\n" + " " * indent + closer


def _flat(value: object) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"only string keys can be emitted, got {type(key).__name__}")
        return "{" + ", ".join(f"{_flat(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_flat(v) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    raise TypeError(f"cannot emit {type(value).__name__} as data")
