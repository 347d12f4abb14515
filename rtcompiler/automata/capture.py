"""Capture groups at C speed: a stdlib ``re`` form of a pattern, where it is provably the same.

Extracting groups with Pike's VM costs several microseconds a character in
Python; a tool call's arguments (``xml-inline``) or a Harmony header pay that on
every match. Both ``re`` and ``regex`` are backtracking matchers with the same
priorities (alternatives in order, greedy and lazy loops), so for a pattern
made only of character sets, concatenation, alternation, capturing groups,
optional parts and loops over plain character sequences, the first path that
succeeds -- and so
its groups -- is the same in both. The runtime uses it only for a complete
match whose span the DFA already found, with the search cut at its end
(``endpos``): paths that would read past it fail in both, so the first success
is the same path, and no search can wander. Anything else (assertions,
lookaheads, loops over alternatives or groups, one name on several groups)
gets no such form and keeps Pike's VM.
"""

from __future__ import annotations

import re

from ..dialect import ast
from ..runtime.engine import _char_class


def capture_pattern(pattern: ast.Pattern) -> dict | None:
    """``{"source": stdlib re source, "names": {group name: [re group names]}}``, or None.

    One name may stand on groups in different alternatives (Harmony's two
    ``name`` groups): at most one of them takes part in a match, so each gets
    its own ``re`` name and the one that matched gives the value.
    """
    # Patterns without groups get a form too: it finds the same spans, which is
    # all a start anchor's finditer (truncate_at_last_anchor) needs.
    emitter = _Emitter()
    try:
        source, _ = emitter.emit(pattern.root, in_loop=False)
    except _Unsupported:
        return None
    try:
        re.compile(source, re.DOTALL)
    except re.error:
        return None
    return {"source": source, "names": emitter.names}


class _Unsupported(Exception):
    pass


class _Emitter:
    def __init__(self) -> None:
        self.names: dict[str, list[str]] = {}

    def emit(self, node: ast.Node, in_loop: bool) -> tuple[str, frozenset]:
        """The ``re`` source of ``node`` and the group indexes it holds."""
        if isinstance(node, ast.Empty):
            return "", frozenset()
        if isinstance(node, ast.Chars):
            return (_char_class(node.chars.ranges) if node.chars.ranges else "(?!)"), frozenset()
        if isinstance(node, ast.Concat):
            parts, held = [], frozenset()
            for item in node.items:
                part, inner = self.emit(item, in_loop)
                if held & inner:
                    raise _Unsupported  # one group twice in a sequence
                parts.append(part)
                held |= inner
            return "".join(parts), held
        if isinstance(node, ast.Alternation):
            if in_loop:
                raise _Unsupported
            parts, held = [], frozenset()
            for alt in node.alternatives:
                part, inner = self.emit(alt, in_loop)
                parts.append(part)
                held |= inner  # alternatives exclude each other
            return "(?:" + "|".join(parts) + ")", held
        if isinstance(node, ast.Group):
            if in_loop:
                raise _Unsupported
            inner_source, inner = self.emit(node.item, in_loop)
            if node.index in inner:
                raise _Unsupported
            if node.name is None:
                return f"({inner_source})", inner | {node.index}
            taken = self.names.setdefault(node.name, [])
            alias = node.name if not taken else f"{node.name}__{len(taken) + 1}"
            if alias != node.name and alias in self.names:
                raise _Unsupported
            taken.append(alias)
            return f"(?P<{alias}>{inner_source})", inner | {node.index}
        if isinstance(node, ast.Repeat):
            if in_loop:
                raise _Unsupported
            if node.max is not None and node.max <= 1:
                # An optional part is tried at most once: groups and loops
                # inside it behave as in a sequence.
                inner_source, inner = self.emit(node.item, in_loop)
                lazy = "" if node.greedy else "?"
                return f"(?:{inner_source}){{{node.min},{node.max}}}{lazy}", inner
            inner_source, _ = self.emit(node.item, in_loop=True)
            upper = "" if node.max is None else str(node.max)
            lazy = "" if node.greedy else "?"
            return f"(?:{inner_source}){{{node.min},{upper}}}{lazy}", frozenset()
        raise _Unsupported  # assertions and lookaheads
