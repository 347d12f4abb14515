"""The NFA's thread semantics: Pike's VM with lookahead obligations, and its tables.

Standard library only (the ``pikevm`` section, copied into every generated parser).
A compiled pattern's program (:class:`Program`, built by ``rtcompiler.automata.nfa``)
is a list of states; :class:`Machine` steps sets of threads through it, one
character class at a time (:class:`CharClasses` maps a character to its class),
keeping per thread the obligations of the lookaheads it passed. The DFA builder
(``rtcompiler.automata.dfa``) determinises these steps; a search runs them only to
read a match's groups (see compiled_regex.py). The register helpers at the end keep a
thread's capture slots.

See ``docs/regex-dialect.md`` for the semantics.
"""

from __future__ import annotations

###{standalone pikevm
from bisect import bisect_right as _bisect_right

CHAR, SPLIT, ASSERT, LOOK, SAVE, MATCH = range(6)
START = "start"
END = "end"
DOLLAR = "dollar"
WORD_BOUNDARY = "word_boundary"
NOT_WORD_BOUNDARY = "not_word_boundary"
CUR = -2  # register source: the position being consumed (or the end, at EOF)

GHOST = -1  # state id of a ghost thread
EOF = -1  # class id for "no next character"
PREV_START, PREV_WORD, PREV_OTHER = 0, 1, 2

SAT, FAIL, PENDING = 0, 1, 2


_NO_OBLIGATIONS = ()


class Machine:
    """Closure and stepping over an NFA given as plain data."""

    def __init__(self, states, accepts, is_word) -> None:
        self.states = states
        self.accepts = accepts
        self.is_word = is_word

    # -- assertions ----------------------------------------------------------

    def holds(self, kind: str, prev: int, c: int) -> bool:
        if kind == START:
            return prev == PREV_START
        if kind == END:
            return c == EOF
        boundary = (prev == PREV_WORD) != (c != EOF and self.is_word[c])
        return boundary if kind == WORD_BOUNDARY else not boundary

    # -- lookahead bodies (sets, existence semantics) -------------------------

    def settle(self, obligations: tuple, prev: int, c: int):
        """Advance a thread's obligations (oldest first) to this position.

        Returns ``(obligations still open, or None if the thread dies; whether a
        lookahead body ran into the end of the text; the obligations a ghost
        must keep when the thread dies)``. A backtracking matcher decides each
        lookahead before going on, so when one fails, the older ones that are
        still open were already being explored: they live on as a ghost.
        """
        if not obligations:
            return obligations, False, None
        still_open = []
        hit = False
        for look, body in obligations:
            status, post, body_hit = self.run_body(body, prev, c)
            hit = hit or (body_hit and not self.states[look][4])
            if status == PENDING:
                still_open.append((look, post))
            elif (status == SAT) == self.states[look][1]:
                return None, hit, tuple(still_open)
        return tuple(still_open), hit, None

    def run_body(self, body, prev: int, c: int):
        """Close a lookahead body's sub-threads at this position.

        ``body`` is ordered by priority, like the main thread list: a backtracking
        matcher explores the body's paths in that order, and in a partial search
        the first path to run into the end makes the match partial even if a
        later path would satisfy the lookahead.

        Returns ``(SAT | FAIL | PENDING, the sub-threads waiting for the next
        character, in priority order, whether a path ran into the end before
        any path matched)``.
        """
        post: list = []
        posted: set = set()
        seen: set = set()
        hit = False
        for state0, obligations0 in body:
            settled, settled_hit, ghost = self.settle(obligations0, prev, c)
            hit = hit or settled_hit
            if settled is None:
                if ghost:
                    stack = [(GHOST, ghost)]
                else:
                    continue
            else:
                stack = [(state0, settled)]
            while stack:
                s, ob = stack.pop()
                if (s, ob) in seen:
                    continue
                seen.add((s, ob))
                if s == GHOST:
                    if ob and (s, ob) not in posted:
                        posted.add((s, ob))
                        post.append((s, ob))
                    continue
                st = self.states[s]
                kind = st[0]
                if kind == CHAR:
                    if c == EOF:
                        hit = True
                    else:
                        posted.add((s, ob))
                        post.append((s, ob))
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
                    status, look_post, look_hit = self.run_body(
                        ((st[2], _NO_OBLIGATIONS),), prev, c
                    )
                    hit = hit or (look_hit and not st[4])
                    if status == PENDING:
                        stack.append((st[3], ob + ((s, look_post),)))
                    elif (status == SAT) != st[1]:
                        stack.append((st[3], ob))
                    elif ob:
                        stack.append((GHOST, ob))
                else:  # MATCH
                    if not ob:
                        return SAT, (), hit
                    posted.add((s, ob))
                    post.append((s, ob))
        if c == EOF or not post:
            return FAIL, (), hit
        return PENDING, tuple(post), hit

    # -- the main thread list (ordered, with payloads) ------------------------

    def closure(
        self,
        threads,
        prev: int,
        c: int,
        save,
        mark_end,
        accept: bool = True,
    ):
        """Follow every epsilon path at this position, in priority order.

        Returns ``(threads waiting for the next character, in priority order;
        payload of the first confirmed match or None; payload of the first
        thread whose path ran into the end of the text or None)``. A confirmed
        match cuts every thread of lower priority, as in a backtracking matcher.
        """
        out = []
        seen: set[tuple] = set()
        hit = None
        for state0, obligations0, payload0 in threads:
            settled, settled_hit, ghost = self.settle(obligations0, prev, c)
            if settled_hit and hit is None:
                hit = payload0
            if settled is None:
                if not ghost:
                    continue
                stack = [(GHOST, ghost, payload0)]
            else:
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
                    status, look_post, look_hit = self.run_body(
                        ((st[2], _NO_OBLIGATIONS),), prev, c
                    )
                    if look_hit and not st[4] and hit is None:
                        hit = payload
                    if status == PENDING:
                        stack.append((st[3], ob + ((s, look_post),), payload))
                    elif (status == SAT) != st[1]:
                        stack.append((st[3], ob, payload))
                    elif ob:
                        stack.append((GHOST, ob, payload))
                elif accept:  # MATCH
                    if not ob:
                        return out, mark_end(payload), hit
                    out.append((s, ob, mark_end(payload)))
        return out, None, hit

    def step(self, threads, c):
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

    def step_obligations(self, obligations: tuple, c: int) -> tuple:
        return tuple((look, self.step_body(body, c)) for look, body in obligations)

    def step_body(self, body: tuple, c: int) -> tuple:
        out: dict = {}  # ordered, first occurrence wins (priority order)
        for s, ob in body:
            stepped = self.step_obligations(ob, c) if ob else ob
            if s >= 0 and self.states[s][0] == CHAR:
                if c in self.accepts[self.states[s][1]]:
                    out.setdefault((self.states[s][2], stepped), None)
                elif stepped:
                    out.setdefault((GHOST, stepped), None)
            else:
                out.setdefault((s, stepped), None)
        return tuple(out)


class CharClasses:
    """Code point -> class number: sorted interval starts, each mapped to a class."""

    __slots__ = ("starts", "interval_class", "accepts", "is_word")

    def __init__(self, starts, interval_class, accepts, is_word) -> None:
        self.starts = starts
        self.interval_class = interval_class
        self.accepts = accepts  # per character set of the NFA: frozenset of classes
        self.is_word = is_word  # per class: inside \\w (only filled when \\b/\\B are used)

    @property
    def size(self) -> int:
        return len(self.is_word)

    def class_of(self, code_point: int) -> int:
        return self.interval_class[_bisect_right(self.starts, code_point) - 1]


class Program:
    """The NFA of a pattern and the facts search needs about it, as plain data."""

    __slots__ = (
        "source", "states", "start", "group_names", "group_count",
        "needs_input", "anchored", "uses_word_boundary", "uses_start",
    )

    def __init__(self, source, states, start, group_names, group_count,
                 needs_input, anchored, uses_word_boundary, uses_start) -> None:
        self.source = source
        self.states = states
        self.start = start
        self.group_names = group_names
        self.group_count = group_count
        self.needs_input = needs_input
        self.anchored = anchored
        self.uses_word_boundary = uses_word_boundary
        self.uses_start = uses_start


def _value(source: int, registers: list[int], here: int) -> int:
    return here if source == CUR else registers[source]


def _save_slot(position: int):
    """Capture slots per group: (committed start, committed end, open start).

    A group's value changes only when it closes, as in a backtracking matcher: a
    new iteration that opens the group but runs out of text leaves the value of
    the last completed iteration in place.
    """

    def save(payload, slot):
        slots, end = payload
        group, closing = divmod(slot, 2)
        base = 3 * group
        if closing:
            committed = (slots[base + 2], position)
            return slots[:base] + committed + slots[base + 2 :], end
        return slots[: base + 2] + (position,) + slots[base + 3 :], end

    return save


def _end_at(position: int):
    def mark(payload):
        return payload if payload[1] != -1 else (payload[0], position)

    return mark


def _group_text(text: str, slots: tuple[int, ...], index: int) -> str | None:
    start, end = slots[3 * index], slots[3 * index + 1]
    if start < 0 or end < 0 or end < start:
        return None
    return text[start:end]
###}
