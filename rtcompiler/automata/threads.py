"""The thread semantics shared by the DFA builder and the capture VM.

A *thread* is one path of a backtracking matcher, kept alive in parallel with
the others (Pike's VM): ``(state, obligations, payload)``. Threads are kept in
priority order; two threads that reach the same ``(state, obligations)`` at the
same position have the same future, so only the first (higher priority) is kept.

Lookaheads cannot be decided when they are reached, since they read ahead. A
thread that passes a lookahead carries an *obligation*: the lookahead's own body
running beside it as a set of sub-threads (existence semantics: any path of the
body that matches satisfies it). An obligation settles when its body matches or
dies; until then the thread's fate is open. If the main path dies while an
obligation is open, a *ghost* keeps the obligation alive: a backtracking matcher
evaluates the lookahead before it moves on, so if that lookahead runs into the
end of the text, ``regex`` reports a partial match from that thread's start.

All positions are implicit: :meth:`Machine.closure` works at "the current
position", given the context around it -- the kind of the previous character
(``PREV_*``) and the class of the next one (or :data:`EOF`). Payloads are opaque
here; callers pass ``save`` and ``mark_end`` to give them meaning (registers for
the DFA, concrete positions for the capture VM).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..dialect import ast
from .alphabet import Alphabet
from .nfa import ASSERT, CHAR, LOOK, MATCH, SAVE, SPLIT

GHOST = -1  # state id of a ghost thread
EOF = -1  # class id for "no next character"
PREV_START, PREV_WORD, PREV_OTHER = 0, 1, 2

SAT, FAIL, PENDING = 0, 1, 2

Obligations = frozenset  # of (look_state, frozenset of (state, Obligations))
Thread = tuple  # (state, Obligations, payload)

_NO_OBLIGATIONS: frozenset = frozenset()


class Machine:
    """Closure and stepping over an NFA given as plain data."""

    def __init__(self, states: tuple[tuple, ...], alphabet: Alphabet) -> None:
        self.states = states
        self.accepts = alphabet.accepts
        self.is_word = alphabet.is_word

    # -- assertions ----------------------------------------------------------

    def holds(self, kind: str, prev: int, c: int) -> bool:
        if kind == ast.START:
            return prev == PREV_START
        if kind == ast.END:
            return c == EOF
        boundary = (prev == PREV_WORD) != (c != EOF and self.is_word[c])
        return boundary if kind == ast.WORD_BOUNDARY else not boundary

    # -- lookahead bodies (sets, existence semantics) -------------------------

    def settle(self, obligations: frozenset, prev: int, c: int) -> tuple[frozenset | None, bool]:
        """Advance a thread's obligations to this position.

        Returns ``(obligations still open, or None if the thread dies; whether a
        lookahead body ran into the end of the text)``.
        """
        if not obligations:
            return obligations, False
        still_open = []
        hit = False
        dies = False
        for look, body in obligations:
            status, post, body_hit = self.run_body(body, prev, c)
            hit = hit or body_hit
            negative = self.states[look][1]
            if status == PENDING:
                still_open.append((look, post))
            elif (status == SAT) == negative:
                dies = True
        if dies:
            return None, hit
        return frozenset(still_open), hit

    def run_body(self, body: Iterable[tuple], prev: int, c: int) -> tuple[int, frozenset, bool]:
        """Close a lookahead body's sub-threads at this position.

        Returns ``(SAT | FAIL | PENDING, the sub-threads waiting for the next
        character, whether some path ran into the end of the text)``.
        """
        post: set[tuple] = set()
        seen: set[tuple] = set()
        hit = False
        for state0, obligations0 in body:
            settled, settled_hit = self.settle(obligations0, prev, c)
            hit = hit or settled_hit
            if settled is None:
                continue
            stack = [(state0, settled)]
            while stack:
                s, ob = stack.pop()
                if (s, ob) in seen:
                    continue
                seen.add((s, ob))
                if s == GHOST:
                    if ob:
                        post.add((s, ob))
                    continue
                st = self.states[s]
                kind = st[0]
                if kind == CHAR:
                    if c == EOF:
                        hit = True
                    else:
                        post.add((s, ob))
                elif kind == SPLIT:
                    stack.extend((t, ob) for t in reversed(st[1]))
                elif kind == SAVE:
                    stack.append((st[2], ob))
                elif kind == ASSERT:
                    if self.holds(st[1], prev, c):
                        stack.append((st[2], ob))
                    elif ob:
                        stack.append((GHOST, ob))
                elif kind == LOOK:
                    status, look_post, look_hit = self.run_body(((st[2], _NO_OBLIGATIONS),), prev, c)
                    hit = hit or look_hit
                    if status == PENDING:
                        stack.append((st[3], ob | {(s, look_post)}))
                    elif (status == SAT) != st[1]:
                        stack.append((st[3], ob))
                    elif ob:
                        stack.append((GHOST, ob))
                else:  # MATCH
                    if not ob:
                        return SAT, _NO_OBLIGATIONS, hit
                    post.add((s, ob))
        if c == EOF or not post:
            return FAIL, _NO_OBLIGATIONS, hit
        return PENDING, frozenset(post), hit

    # -- the main thread list (ordered, with payloads) ------------------------

    def closure(
        self,
        threads: Iterable[Thread],
        prev: int,
        c: int,
        save: Callable[[Any, int], Any],
        mark_end: Callable[[Any], Any],
        accept: bool = True,
    ) -> tuple[list[Thread], Any, Any]:
        """Follow every epsilon path at this position, in priority order.

        Returns ``(threads waiting for the next character, in priority order;
        payload of the first confirmed match or None; payload of the first
        thread whose path ran into the end of the text or None)``. A confirmed
        match cuts every thread of lower priority, as in a backtracking matcher.
        """
        out: list[Thread] = []
        seen: set[tuple] = set()
        hit = None
        for state0, obligations0, payload0 in threads:
            settled, settled_hit = self.settle(obligations0, prev, c)
            if settled_hit and hit is None:
                hit = payload0
            if settled is None:
                continue
            stack = [(state0, settled, payload0)]
            while stack:
                s, ob, payload = stack.pop()
                if (s, ob) in seen:
                    continue
                seen.add((s, ob))
                if s == GHOST:
                    if ob:
                        out.append((s, ob, payload))
                    continue
                st = self.states[s]
                kind = st[0]
                if kind == CHAR:
                    if c == EOF:
                        if hit is None:
                            hit = payload
                    else:
                        out.append((s, ob, payload))
                elif kind == SPLIT:
                    stack.extend((t, ob, payload) for t in reversed(st[1]))
                elif kind == SAVE:
                    stack.append((st[2], ob, save(payload, st[1])))
                elif kind == ASSERT:
                    if self.holds(st[1], prev, c):
                        stack.append((st[2], ob, payload))
                    elif ob:
                        stack.append((GHOST, ob, payload))
                elif kind == LOOK:
                    status, look_post, look_hit = self.run_body(((st[2], _NO_OBLIGATIONS),), prev, c)
                    if look_hit and hit is None:
                        hit = payload
                    if status == PENDING:
                        stack.append((st[3], ob | {(s, look_post)}, payload))
                    elif (status == SAT) != st[1]:
                        stack.append((st[3], ob, payload))
                    elif ob:
                        stack.append((GHOST, ob, payload))
                elif accept:  # MATCH
                    if not ob:
                        return out, mark_end(payload), hit
                    out.append((s, ob, mark_end(payload)))
        return out, None, hit

    def step(self, threads: list[Thread], c: int) -> list[Thread]:
        """Consume one character of class ``c`` from closed threads."""
        out = []
        for s, ob, payload in threads:
            stepped = self.step_obligations(ob, c) if ob else ob
            if s >= 0 and self.states[s][0] == CHAR:
                st = self.states[s]
                if c in self.accepts[st[1]]:
                    out.append((st[2], stepped, payload))
                elif stepped:
                    out.append((GHOST, stepped, payload))
            else:  # a ghost, or a match waiting for its obligations
                out.append((s, stepped, payload))
        return out

    def step_obligations(self, obligations: frozenset, c: int) -> frozenset:
        return frozenset((look, self.step_body(body, c)) for look, body in obligations)

    def step_body(self, body: frozenset, c: int) -> frozenset:
        out = set()
        for s, ob in body:
            stepped = self.step_obligations(ob, c) if ob else ob
            if s >= 0 and self.states[s][0] == CHAR:
                if c in self.accepts[self.states[s][1]]:
                    out.add((self.states[s][2], stepped))
                elif stepped:
                    out.add((GHOST, stepped))
            else:
                out.add((s, stepped))
        return frozenset(out)

