"""Stage 2: the Thompson NFA of a pattern, with priorities.

Every state is a small tuple, so the whole NFA is plain data::

    (CHAR, set_index, next)        consume one character of ``charsets[set_index]``
    (SPLIT, (t1, t2, ...))         epsilon to each target, in priority order
    (ASSERT, kind, next)           zero-width test of the neighbouring characters
    (LOOK, negative, body, next, quiet)  lookahead: ``body`` runs to its own MATCH
                                   state (quiet: ``$``, which never counts as
                                   running into the end of the text)
    (SAVE, slot, next)             record the position in capture slot ``slot``
    (MATCH,)                       accept

Priorities follow a backtracking matcher: a greedy loop prefers another
iteration, a lazy one prefers to leave, alternatives are tried left to right.
Searching the NFA in priority order (Pike's VM, or the DFA built from it)
therefore finds the same leftmost-first match as the ``regex`` module.

>>> nfa = compile_nfa(parse_pattern("ab|a"))
>>> nfa.states[nfa.start]
(1, (2, 3))
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialect import ast
from ..dialect.charsets import CharSet
from ..dialect.errors import PatternError
from ..dialect.parser import parse_pattern

CHAR, SPLIT, ASSERT, LOOK, SAVE, MATCH = range(6)

# Bound on the NFA's size, checked on the syntax tree before anything is built:
# counted repetitions copy their body, and a template must not be able to make the
# compiler (or the generated tables) explode. The largest bundled pattern has 131.
MAX_STATES = 2_000


@dataclass(frozen=True)
class Nfa:
    source: str
    states: tuple[tuple, ...]
    start: int
    charsets: tuple[CharSet, ...]
    group_names: dict[str, int]
    group_count: int
    # The facts the ``regex`` module's partial search depends on (see search.py).
    needs_input: bool
    anchored: bool
    uses_word_boundary: bool
    uses_start: bool


def compile_nfa(pattern: ast.Pattern | str) -> Nfa:
    """Build the NFA of a parsed pattern (or of pattern source)."""
    if isinstance(pattern, str):
        pattern = parse_pattern(pattern, check=check_size)
    else:
        check_size(pattern)
    builder = _Builder(pattern.source)
    match = builder.add((MATCH,))
    start = builder.compile(pattern.root, match)
    return Nfa(
        source=pattern.source,
        states=tuple(builder.states),
        start=start,
        charsets=tuple(builder.charsets),
        group_names=dict(pattern.group_names),
        group_count=pattern.group_count,
        needs_input=needs_input(pattern.root),
        anchored=is_anchored(pattern.root),
        uses_word_boundary=builder.uses_word_boundary,
        uses_start=builder.uses_start,
    )


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.states: list[tuple] = []
        self.charsets: list[CharSet] = []
        self.charset_index: dict[CharSet, int] = {}
        self.uses_word_boundary = False
        self.uses_start = False

    def add(self, state: tuple) -> int:
        self.states.append(state)
        return len(self.states) - 1

    def charset(self, chars: CharSet) -> int:
        index = self.charset_index.get(chars)
        if index is None:
            index = self.charset_index[chars] = len(self.charsets)
            self.charsets.append(chars)
        return index

    def compile(self, node: ast.Node, nxt: int) -> int:
        """Return the entry state of ``node``, whose exits all lead to ``nxt``."""
        if isinstance(node, ast.Empty):
            return nxt
        if isinstance(node, ast.Chars):
            return self.add((CHAR, self.charset(node.chars), nxt))
        if isinstance(node, ast.Concat):
            for item in reversed(node.items):
                nxt = self.compile(item, nxt)
            return nxt
        if isinstance(node, ast.Alternation):
            targets = tuple(self.compile(alt, nxt) for alt in node.alternatives)
            return self.add((SPLIT, targets))
        if isinstance(node, ast.Group):
            close = self.add((SAVE, 2 * node.index + 1, nxt))
            return self.add((SAVE, 2 * node.index, self.compile(node.item, close)))
        if isinstance(node, ast.Assertion):
            if node.kind == ast.DOLLAR:
                # Without MULTILINE, $ is "at the end, or before a final newline": a
                # lookahead of one character. It is an assertion for regex, so it is
                # *quiet*: reading past the end inside it is not running into the end.
                match = self.add((MATCH,))
                at_end = self.add((ASSERT, ast.END, match))
                newline = self.add((CHAR, self.charset(CharSet.of("\n")), at_end))
                body = self.add((SPLIT, (newline, at_end)))
                return self.add((LOOK, False, body, nxt, True))
            if node.kind in (ast.WORD_BOUNDARY, ast.NOT_WORD_BOUNDARY):
                self.uses_word_boundary = True
            if node.kind == ast.START:
                self.uses_start = True
            return self.add((ASSERT, node.kind, nxt))
        if isinstance(node, ast.Lookahead):
            match = self.add((MATCH,))
            body = self.compile(node.item, match)
            return self.add((LOOK, node.negative, body, nxt, False))
        if isinstance(node, ast.Repeat):
            return self.compile_repeat(node, nxt)
        raise TypeError(f"unknown node {node!r}")

    def compile_repeat(self, node: ast.Repeat, nxt: int) -> int:
        if (node.max is None or node.max > 1) and min_width(node.item) == 0:
            # A backtracking matcher ends a loop after an iteration that matched
            # nothing; an automaton cannot see that. Rather than differ, refuse.
            raise PatternError(
                "repetition of a subpattern that can match the empty string", 0, self.source
            )
        cur = nxt
        if node.max is None:
            loop = self.add((SPLIT, ()))
            body = self.compile(node.item, loop)
            self.states[loop] = (SPLIT, (body, nxt) if node.greedy else (nxt, body))
            cur = loop
        else:
            for _ in range(node.max - node.min):
                body = self.compile(node.item, cur)
                cur = self.add((SPLIT, (body, nxt) if node.greedy else (nxt, body)))
        for _ in range(node.min):
            cur = self.compile(node.item, cur)
        return cur


def check_size(pattern: ast.Pattern) -> None:
    """Refuse a pattern whose NFA would have more than :data:`MAX_STATES` states.

    Worked out on the tree, before anything is built (and, through
    ``parse_pattern(check=...)``, before ``regex`` compiles the pattern: it expands
    counted repetitions too, at hundreds of bytes a copy).
    """
    size = nfa_size(pattern.root) + 1  # and the final MATCH
    if size > MAX_STATES:
        raise PatternError(
            "pattern too large", 0, pattern.source,
            detail=f"the pattern needs {size} automaton states, more than rtcompiler's "
            f"limit of {MAX_STATES} (a counted repetition x{{n}} copies x n times)",
        )


def nfa_size(node: ast.Node) -> int:
    """How many states :class:`_Builder` makes for ``node``, worked out without making
    them (a counted repetition multiplies, so ``a{1000000000}`` costs nothing to size)."""
    if isinstance(node, ast.Empty):
        return 0
    if isinstance(node, ast.Chars):
        return 1
    if isinstance(node, ast.Concat):
        return sum(nfa_size(item) for item in node.items)
    if isinstance(node, ast.Alternation):
        return sum(nfa_size(alt) for alt in node.alternatives) + 1
    if isinstance(node, ast.Group):
        return nfa_size(node.item) + 2
    if isinstance(node, ast.Assertion):
        return 5 if node.kind == ast.DOLLAR else 1
    if isinstance(node, ast.Lookahead):
        return nfa_size(node.item) + 2
    if isinstance(node, ast.Repeat):
        body = nfa_size(node.item)
        if node.max is None:
            return node.min * body + body + 1
        return node.min * body + (node.max - node.min) * (body + 1)
    raise TypeError(f"unknown node {node!r}")


def min_width(node: ast.Node) -> int:
    """The fewest characters ``node`` can consume (lookaheads and assertions: 0)."""
    if isinstance(node, ast.Chars):
        return 1
    if isinstance(node, ast.Concat):
        return sum(min_width(item) for item in node.items)
    if isinstance(node, ast.Alternation):
        return min(min_width(alt) for alt in node.alternatives)
    if isinstance(node, ast.Group):
        return min_width(node.item)
    if isinstance(node, ast.Repeat):
        return node.min * min_width(node.item)
    return 0


def needs_input(node: ast.Node) -> bool:
    """Whether every match must read a character, lookahead bodies included.

    This is what decides ``regex``'s partial fast path at the end of the text
    (rule 3 in search.py): ``(?=^x)`` counts (its positive lookahead needs a
    character), ``(?!x)`` does not, nor does anything that can match empty.
    """
    if isinstance(node, ast.Chars):
        return True
    if isinstance(node, ast.Concat):
        return any(needs_input(item) for item in node.items)
    if isinstance(node, ast.Alternation):
        return all(needs_input(alt) for alt in node.alternatives)
    if isinstance(node, ast.Group):
        return needs_input(node.item)
    if isinstance(node, ast.Repeat):
        return node.min > 0 and needs_input(node.item)
    if isinstance(node, ast.Lookahead):
        return not node.negative and needs_input(node.item)
    return False


def is_anchored(node: ast.Node) -> bool:
    """Whether ``regex`` treats the pattern as anchored at the start of the string.

    Found by experiment: a leading ``\\A`` or ``^``, through non-capturing groups,
    alternations whose every branch is anchored and repetitions of at least one,
    but not through a capturing group, an optional repetition or a lookahead.
    """
    if isinstance(node, ast.Assertion):
        return node.kind == ast.START
    if isinstance(node, ast.Repeat):
        return node.min >= 1 and is_anchored(node.item)
    if isinstance(node, ast.Concat):
        return bool(node.items) and is_anchored(node.items[0])
    if isinstance(node, ast.Alternation):
        return all(is_anchored(alt) for alt in node.alternatives)
    return False
