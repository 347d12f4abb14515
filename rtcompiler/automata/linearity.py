"""How much work a backtracking matcher can do on a pattern: decided from its syntax.

The stdlib form of a pattern (:mod:`rtcompiler.automata.capture`) runs in ``re``,
a backtracking matcher: one attempt explores the paths of the pattern's automaton
in priority order, depth first, until one reaches the end of the pattern. Its work
is the number of paths it explores, counted with the characters each one reads.
That number is what this module bounds, so that a stdlib form is used only where
backtracking provably stays linear; elsewhere our own automata do the work.

Three facts, each sound (a pattern said to have one has it on every text):

``linear``
    The automaton has a *finite degree of ambiguity* over prefixes: for every
    string ``w``, the number of paths that read ``w`` from the start is at most a
    constant ``K`` of the pattern. An attempt that reads ``m`` characters then
    explores at most ``K`` paths per character read, ``O(K m)`` in all. By the
    theorem of Weber and Seidl (1991) the degree is finite exactly when the
    automaton has neither of two shapes: two different cycles through one state
    that read the same word (*EDA*: exponential, ``(a|a)*``), nor two different
    states ``p`` and ``q`` with ``p -v-> p``, ``p -v-> q`` and ``q -v-> q`` for one
    word ``v`` (*IDA*: polynomial, ``\\s*.*?\\s*x`` with ``v`` a space). Paths are
    counted with their route through the epsilon moves, so ``(?:a?|b?)c`` reaching
    ``c`` two ways counts twice, as ``re`` tries both.

``apart``
    No character a match can begin with is read by a loop. An attempt then reads
    at most ``W`` characters where another attempt can begin (``W``: the pattern's
    characters outside loops), so a search that tries every start -- ``finditer``
    -- reads each character at most ``W + 1`` times: linear in all.

``tail``
    After the match it returns, an attempt reads a bounded number of characters
    more: no path of higher priority than a found match can loop without finding
    a better one. A whole-text parse tries a delimiter's stdlib form at one start
    and moves past the match; what it read beyond is then bounded too.

Loops the stdlib form makes atomic (``atomic``: a greedy loop over a set whose
maximal run is always the one a match takes) are modelled as such: they leave
only before a character outside their set.
"""

from __future__ import annotations

from ..dialect import ast
from ..dialect.charsets import CharSet
from .alphabet import Alphabet

# Beyond this many character-reading states (counted repetitions copy their body)
# the pattern is not analysed: no stdlib form, our automata instead.
MAX_POSITIONS = 400
# Epsilon routes followed from one state; beyond, the pattern is not analysed.
MAX_ROUTES = 4000
# States of the priority-ordered exploration behind ``tail``.
MAX_TAIL_STATES = 2000

_CHAR, _SPLIT, _MATCH = 0, 1, 2


class _TooLarge(Exception):
    pass


def backtracking_facts(root: ast.Node, atomic: frozenset[int] = frozenset()) -> dict:
    """``{"linear": bool, "apart": bool, "tail": bool}`` for the pattern ``root``.

    ``atomic`` holds the ``id`` of each greedy loop the stdlib form runs atomically.
    A pattern holding a word boundary or a negative lookahead (no stdlib form has one)
    has none of the facts; one holding a positive lookahead is not ``apart``, which a
    pattern that may match where its lookahead alone stands could not show. ``^`` and
    ``$`` read nothing and add no path: left out. ``tail`` leaves lookaheads out (what
    their loops read past a match is bounded by other means: see
    capture.capture_pattern).
    """
    try:
        graph = _Graph(root, atomic)
        # Lookaheads with loops: their bodies' paths count too (see _Nfa.compile).
        paths = _Graph(root, atomic, bodies=True) if graph.nfa.looping else graph
    except _TooLarge:
        return {"linear": False, "apart": False, "tail": False}
    linear = not paths.exponential() and not paths.polynomial()
    return {
        "linear": linear,
        "apart": linear and graph.apart() and not graph.nfa.lookahead,
        "tail": linear and graph.bounded_tail(),
    }


class _Nfa:
    """A Thompson automaton of the pattern, with guards on the exits of atomic loops.

    States: ``(_CHAR, charset, next)``, ``(_SPLIT, ((target, guard), ...))`` in
    priority order (a guard is the set the next character must belong to, or
    None), ``(_MATCH,)``. Groups are transparent: they add no path.
    """

    def __init__(self, root: ast.Node, atomic: frozenset[int], bodies: bool = False) -> None:
        self.states: list[tuple] = []
        self.atomic = atomic
        self.bodies = bodies
        self.lookahead = False  # whether a lookahead was left out (see compile)
        self.looping = False  # whether one of them has a loop
        match = self.add((_MATCH,))
        self.match = match
        self.start = self.compile(root, match)

    def add(self, state: tuple) -> int:
        if len(self.states) > 8 * MAX_POSITIONS:
            raise _TooLarge
        self.states.append(state)
        return len(self.states) - 1

    def compile(self, node: ast.Node, nxt: int) -> int:
        if isinstance(node, ast.Empty):
            return nxt
        if isinstance(node, ast.Chars):
            return self.add((_CHAR, node.chars, nxt))
        if isinstance(node, ast.Concat):
            for item in reversed(node.items):
                nxt = self.compile(item, nxt)
            return nxt
        if isinstance(node, ast.Alternation):
            branches = tuple((self.compile(a, nxt), None) for a in node.alternatives)
            return self.add((_SPLIT, branches))
        if isinstance(node, ast.Group):
            return self.compile(node.item, nxt)
        if isinstance(node, ast.Repeat):
            return self.repeat(node, nxt)
        if isinstance(node, ast.Lookahead) and not node.negative:
            # A positive lookahead of strings reads a bounded number of characters at
            # one place and consumes none. Left out, the paths a backtracking matcher
            # can take only grow in number, so what is proved linear without it is
            # linear with it. One with loops is, with ``bodies``, a branch into its
            # body that ends nowhere: each time an attempt reaches it, the matcher
            # explores the body's paths from there, then goes on (the other branch).
            self.lookahead = True
            if any(isinstance(n, ast.Repeat) and n.max is None for n in _nodes(node.item)):
                self.looping = True
                if self.bodies:
                    body = self.compile(node.item, self.add((_SPLIT, ())))
                    return self.add((_SPLIT, ((body, None), (nxt, None))))
            return nxt
        if isinstance(node, ast.Assertion) and node.kind in (ast.START, ast.END, ast.DOLLAR):
            return nxt  # reads nothing: a path it cuts is one path fewer
        raise _TooLarge  # a word boundary or a negative lookahead: no stdlib form has one

    def repeat(self, node: ast.Repeat, nxt: int) -> int:
        guard = None
        if id(node) in self.atomic and isinstance(node.item, ast.Chars):
            guard = node.item.chars.complement()
        cur = nxt
        if node.max is None:
            loop = self.add((_SPLIT, ()))
            body = self.compile(node.item, loop)
            exits = ((body, None), (nxt, guard))
            self.states[loop] = (_SPLIT, exits if node.greedy else exits[::-1])
            cur = loop
        else:
            for _ in range(node.max - node.min):
                body = self.compile(node.item, cur)
                pair = ((body, None), (nxt, None))
                cur = self.add((_SPLIT, pair if node.greedy else pair[::-1]))
        for _ in range(node.min):
            cur = self.compile(node.item, cur)
        return cur


def _nodes(node: ast.Node):
    """``node`` and every node inside it."""
    yield node
    if isinstance(node, ast.Concat):
        for item in node.items:
            yield from _nodes(item)
    elif isinstance(node, ast.Alternation):
        for alt in node.alternatives:
            yield from _nodes(alt)
    elif isinstance(node, (ast.Group, ast.Repeat, ast.Lookahead)):
        yield from _nodes(node.item)


class _Graph:
    """The automaton without epsilon moves: one node per character-reading state.

    An edge ``p -> q`` is one epsilon route from after ``p`` (from the start, for
    the node ``-1``) to ``q``, labelled with the classes ``q`` reads through it.
    Two routes to one state are two edges: a backtracking matcher follows both.
    """

    def __init__(self, root: ast.Node, atomic: frozenset[int], bodies: bool = False) -> None:
        nfa = _Nfa(root, atomic, bodies)
        self.nfa = nfa
        states = nfa.states
        chars = [i for i, s in enumerate(states) if s[0] == _CHAR]
        if len(chars) > MAX_POSITIONS:
            raise _TooLarge
        sets = [states[i][1] for i in chars]
        guards = [g for s in states if s[0] == _SPLIT for _, g in s[1] if g is not None]
        self.alphabet = Alphabet.build(sets + guards, None)
        self.everything = (1 << self.alphabet.size) - 1
        self.mask_cache: dict = {}
        self.nodes = [-1] + chars
        # edges[p] = [(q, label, route id)]: q a node, or None for the end of the pattern.
        self.edges: dict[int, list] = {}
        routes = 0
        for p in self.nodes:
            source = nfa.start if p < 0 else states[p][2]
            found = self.routes(source)
            routes += len(found)
            if routes > MAX_ROUTES:
                raise _TooLarge
            self.edges[p] = [(q, label, k) for k, (q, label) in enumerate(found)]
        self.succ = {p: [q for q, _, _ in es if q is not None] for p, es in self.edges.items()}
        # Only what an attempt can reach counts.
        live = _reachable(-1, self.succ) | {-1}
        self.nodes = [p for p in self.nodes if p in live]
        self.edges = {p: self.edges[p] for p in self.nodes}
        self.succ = {p: self.succ[p] for p in self.nodes}
        self.component = _components(self.nodes, self.succ)
        self.cyclic = {
            p for p in self.nodes
            if any(self.component[q] == self.component[p] for q in self.succ[p])
        }

    def mask(self, chars: CharSet | None) -> int:
        """The classes inside ``chars`` (a set of the pattern, or a guard), as bits."""
        if chars is None:
            return self.everything
        found = self.mask_cache.get(chars)
        if found is None:
            a = self.alphabet
            found = 0
            for k, first in enumerate(a.starts):
                if first in chars:
                    found |= 1 << a.interval_class[k]
            self.mask_cache[chars] = found
        return found

    def routes(self, source: int) -> list:
        """``[(CHAR state or None for the end, label)]`` from ``source``, in priority order."""
        states = self.nfa.states
        out: list = []
        stack = [(source, self.everything)]
        while stack:
            s, allowed = stack.pop()
            if len(out) > MAX_ROUTES:
                raise _TooLarge
            st = states[s]
            if st[0] == _CHAR:
                label = allowed & self.mask(st[1])
                if label:
                    out.append((s, label))
            elif st[0] == _SPLIT:
                for target, guard in reversed(st[1]):
                    stack.append((target, allowed & self.mask(guard)))
            else:
                out.append((None, allowed))
        return out

    # -- ambiguity ----------------------------------------------------------------

    def exponential(self) -> bool:
        """Two different cycles through one node reading one word."""
        for members in _groups(self.component, self.cyclic):
            inside = set(members)
            pairs = [(x, y) for x in members for y in members]
            succ: dict = {}
            diverging: list = []
            for x, y in pairs:
                out = []
                for qx, lx, kx in self.edges[x]:
                    if qx not in inside:
                        continue
                    for qy, ly, ky in self.edges[y]:
                        if qy in inside and lx & ly:
                            out.append((qx, qy))
                            if (x, kx) != (y, ky):
                                diverging.append(((x, y), (qx, qy)))
                succ[(x, y)] = out
            component = _components(pairs, succ)
            diagonal = {component[(x, x)] for x in members}
            for a, b in diverging:
                if component[a] == component[b] and component[a] in diagonal:
                    return True
        return False

    def polynomial(self) -> bool:
        """Two different nodes ``p``, ``q`` with ``p -v-> p``, ``p -v-> q``, ``q -v-> q``."""
        reach = {p: _reachable(p, self.succ) for p in self.cyclic}
        for p in self.cyclic:
            for q in self.cyclic:
                if p == q or q not in reach[p]:
                    continue
                if self._triple(p, q, reach):
                    return True
        return False

    def _triple(self, p: int, q: int, reach: dict) -> bool:
        loop_p = {x for x in self.cyclic if self.component[x] == self.component[p]}
        loop_q = {z for z in self.cyclic if self.component[z] == self.component[q]}
        between = {y for y in reach[p] | {p} if y == q or q in _reachable(y, self.succ)}
        start = (p, p, q)
        seen = {start}
        todo = [start]
        while todo:
            x, y, z = todo.pop()
            for qx, lx, _ in self.edges[x]:
                if qx not in loop_p:
                    continue
                for qy, ly, _ in self.edges[y]:
                    if qy not in between or not lx & ly:
                        continue
                    for qz, lz, _ in self.edges[z]:
                        if qz not in loop_q or not lx & ly & lz:
                            continue
                        nxt = (qx, qy, qz)
                        if nxt == (p, q, q):
                            return True
                        if nxt not in seen:
                            seen.add(nxt)
                            todo.append(nxt)
        return False

    # -- attempts that read where others begin --------------------------------------

    def apart(self) -> bool:
        first = 0
        for _, label, _ in self.edges[-1]:
            first |= label
        states = self.nfa.states
        return all(not self.mask(states[x][1]) & first for x in self.cyclic)

    # -- what an attempt reads past its match ---------------------------------------

    def bounded_tail(self) -> bool:
        """Explore the attempt's ordered thread lists; after a match, the threads left
        are of higher priority. Reading more is bounded unless such states can cycle
        without finding a better match."""
        start = self._closure([(-1, self.everything)])
        index: dict = {}
        edges: dict = {}
        todo = [(start[0], start[1])]
        while todo:
            key = todo.pop()
            if key in index:
                continue
            index[key] = len(index)
            if len(index) > MAX_TAIL_STATES:
                return False
            threads, found = key
            out = []
            for c in range(self.alphabet.size):
                bit = 1 << c
                stepped = [(q, allowed) for q, allowed in threads if allowed & bit]
                if not stepped:
                    continue
                nxt, matched = self._closure(stepped)
                if not nxt:
                    continue
                child = (nxt, found or matched)
                out.append((child, matched))
                todo.append(child)
            edges[key] = out
        # Post-match states joined by steps that find no better match: acyclic?
        post = [k for k in index if k[1]]
        succ = {k: [child for child, matched in edges[k] if not matched and child[1]] for k in post}
        component = _components(post, succ)
        return not any(component[child] == component[k] for k in post for child in succ[k])

    def _closure(self, threads: list) -> tuple[tuple, bool]:
        """The threads after reading one character each (``threads``: node, allowed
        classes), in priority order; a match cuts the rest, as in a backtracking
        matcher. Returns (threads waiting for a character, whether a match was found)."""
        out: list = []
        seen: set = set()
        for node, _ in threads:
            for q, label, _ in self.edges[node]:
                if q is None:
                    return tuple(out), True
                key = (q, label)
                if key not in seen:
                    seen.add(key)
                    out.append(key)
        return tuple(out), False


def _reachable(p, succ) -> set:
    """Nodes reachable from ``p`` in one step or more."""
    seen: set = set()
    todo = list(succ[p])
    while todo:
        q = todo.pop()
        if q not in seen:
            seen.add(q)
            todo.extend(succ[q])
    return seen


def _groups(component: dict, cyclic: set) -> list[list]:
    by: dict = {}
    for node in cyclic:
        by.setdefault(component[node], []).append(node)
    return list(by.values())


def _components(nodes, succ) -> dict:
    """Strongly connected components (Tarjan, iterative): node -> component id."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    component: dict = {}
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component[w] = v
                    if w == v:
                        break
    return component
