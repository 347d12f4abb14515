"""The typed syntax tree of a delimiter pattern.

Character sets are resolved while parsing (see :mod:`rtcompiler.dialect.charsets`),
so every leaf that consumes a character is a :class:`Chars` holding the exact set of
code points the ``regex`` module would accept there. Everything else is structure.

Example: ``\\s*<tool_call>`` parses to::

    Concat((Repeat(Chars(<\\s>), 0, None, greedy=True), Chars('<'), Chars('t'), ...))
"""

from __future__ import annotations

from dataclasses import dataclass

from .charsets import CharSet


@dataclass(frozen=True)
class Empty:
    """Matches the empty string."""


@dataclass(frozen=True)
class Chars:
    """Consumes one character from ``chars``."""

    chars: CharSet


@dataclass(frozen=True)
class Concat:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alternation:
    """Alternatives in priority order: the first that leads to a match wins."""

    alternatives: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    """``item`` between ``min`` and ``max`` times (``max=None``: unbounded)."""

    item: Node
    min: int
    max: int | None
    greedy: bool


@dataclass(frozen=True)
class Group:
    """A capturing group (``index`` from 1, ``name`` for ``(?P<name>...)``)."""

    item: Node
    index: int
    name: str | None


# Kinds of zero-width assertion. ``$`` is kept apart from ``\Z`` because without
# MULTILINE it also matches just before a final newline.
START = "start"  # ^ and \A (no MULTILINE: only at the start of the string)
END = "end"  # \Z and \z
DOLLAR = "dollar"  # $
WORD_BOUNDARY = "word_boundary"  # \b
NOT_WORD_BOUNDARY = "not_word_boundary"  # \B


@dataclass(frozen=True)
class Assertion:
    kind: str


@dataclass(frozen=True)
class Lookahead:
    item: Node
    negative: bool


@dataclass(frozen=True)
class Backref:
    """The text group ``index`` matched, again (``\\1``, ``(?P=name)``): read only in
    xml-inline tag patterns, where :mod:`rtcompiler.automata.chain` runs them."""

    index: int
    column: int


Node = (
    Empty | Chars | Concat | Alternation | Repeat | Group | Assertion | Lookahead | Backref
)


@dataclass(frozen=True)
class Pattern:
    """A parsed pattern: its tree plus the facts search needs about it."""

    source: str
    root: Node
    group_count: int
    group_names: dict[str, int]
