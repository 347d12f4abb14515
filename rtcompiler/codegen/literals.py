"""Data as Python source: how compiled tables and template values enter a module.

Everything a template supplies -- names, literals, patterns, transform values,
defaults -- is emitted through :func:`literal`, which writes JSON-like data as
Python literals (``repr`` of strings is always a closed, inert literal), never
by pasting text into code. Output is deterministic and wrapped for reading.

Python's parser refuses brackets nested more than 200 deep ("too many nested
parentheses"), so :func:`assignment` writes data nested deeper than
:data:`MAX_NESTING` in parts, each assigned to a name before the part holding it.
"""

from __future__ import annotations

import math

WIDTH = 96
# Deepest nesting of brackets written in one literal (Python's parser takes 200).
MAX_NESTING = 50


class _Name:
    """A part assigned earlier (see :func:`assignment`), written as its name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def nesting(value: object) -> int:
    """How deeply containers nest in ``value`` (0 for a scalar, 1 for ``[1]``)."""
    if isinstance(value, dict):
        return 1 + max((nesting(v) for v in value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return 1 + max((nesting(v) for v in value), default=0)
    return 0


def assignment(name: str, value: object) -> str:
    """Source lines assigning ``value`` to ``name``, parts first when it nests deeply.

    Each container nested :data:`MAX_NESTING` deep (counted from the bottom) becomes
    a part ``name_partK`` assigned before the part or the value that holds it, so no
    line nests deeper than that. The value built is the same.
    """
    parts: list[str] = []

    def split(item: object) -> tuple[object, int]:
        if isinstance(item, dict):
            pairs = [(k, split(v)) for k, v in item.items()]
            out: object = {k: v for k, (v, _) in pairs}
            depth = 1 + max((d for _, (_, d) in pairs), default=0)
        elif isinstance(item, (list, tuple)):
            pairs_ = [split(v) for v in item]
            values = [v for v, _ in pairs_]
            out = values if isinstance(item, list) else tuple(values)
            depth = 1 + max((d for _, d in pairs_), default=0)
        else:
            return item, 0
        if depth < MAX_NESTING:
            return out, depth
        part = f"{name}_part{len(parts)}"
        parts.append(f"{part} = {literal(out)}\n")
        return _Name(part), 0

    whole, _ = split(value)
    return "".join(parts) + f"{name} = {literal(whole)}\n"


def literal(value: object, indent: int = 0) -> str:
    """Python source that evaluates to ``value`` (JSON-compatible data only)."""
    return _literal(value, indent, {})


def _literal(value: object, indent: int, flats: dict[int, str]) -> str:
    # ``flats`` keeps each container's one-line form, by id, for the length of the
    # call: written anew at each level, a value nested n deep was written n times.
    flat = _flat(value, flats)
    if len(flat) + indent <= WIDTH or not isinstance(value, (list, tuple, dict)) or not value:
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = [
            f"{pad}{_flat(k, flats)}: {_literal(v, indent + 4, flats)}," for k, v in value.items()
        ]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    opener, closer = ("[", "]") if isinstance(value, list) else ("(", ")")
    items = [f"{pad}{_literal(v, indent + 4, flats)}," for v in value]
    return opener + "\n" + "\n".join(items) + "\n" + " " * indent + closer


def _flat(value: object, flats: dict[int, str]) -> str:
    if isinstance(value, _Name):
        return value.name
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
    known = flats.get(id(value))
    if known is not None:
        return known
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"only string keys can be emitted, got {type(key).__name__}")
        flat = "{" + ", ".join(
            f"{_flat(k, flats)}: {_flat(v, flats)}" for k, v in value.items()
        ) + "}"
    elif isinstance(value, list):
        flat = "[" + ", ".join(_flat(v, flats) for v in value) + "]"
    elif isinstance(value, tuple):
        inner = ", ".join(_flat(v, flats) for v in value)
        flat = "(" + inner + ("," if len(value) == 1 else "") + ")"
    else:
        raise TypeError(f"cannot emit {type(value).__name__} as data")
    flats[id(value)] = flat
    return flat
