"""Stage 3: the leftmost-first DFA of a pattern, built lazily from its NFA.

A DFA state is the whole ordered thread list of an unanchored search at some
position: which NFA states are alive, with which lookahead obligations, in which
priority order, plus whether the search still starts new attempts (it stops once
a match is found: later starts have lower priority) and the kind of the previous
character (for ``\\b``, ``\\B``, ``^``). Positions are not part of a state: each
thread names a *register* holding its start (and, for a match waiting on a
lookahead, its end); a transition says how to fill the next state's registers
from the current ones or from the current position. This is a tagged DFA in the
sense of Laurikari; for patterns without lookahead a thread has one register,
its start, and the register list is the list of live attempts.

Each transition therefore yields ``(next_state, register_sources, match)``:

- ``register_sources[k]`` is the index of the old register that becomes
  register ``k``, or :data:`CUR` for the position of the character consumed;
- ``match`` is ``None`` or ``(start_source, end_source)`` in the same terms: the
  best complete match found so far, which a later transition may supersede with
  a higher-priority (longer greedy, or earlier-branch) one.

:meth:`Dfa.at_eof` answers the same question at the end of the text, and also
where the leftmost path that ran into the end started (partial matching).

States are built on first use and memoised, so each step costs one dictionary
look-up once warm; :meth:`Dfa.build_all` builds every reachable state for
serialisation.

>>> from rtcompiler.automata.nfa import compile_nfa
>>> dfa = Dfa(compile_nfa("ab"))
>>> s = dfa.initial(PREV_START)
>>> s, sources, match = dfa.step(s, dfa.alphabet.class_of(ord("a")))
>>> match is None
True
"""

from __future__ import annotations

from typing import Any

from ..dialect.charsets import derive
from ..dialect.errors import PatternError
from ..runtime.engine import CUR, EOF, PREV_OTHER, PREV_START, PREV_WORD, DfaTables, Machine  # noqa: F401
from .alphabet import Alphabet
from .nfa import Nfa

_UNSET = -1  # a thread's end register before it reaches MATCH

MAX_DFA_STATES = 10_000

StateKey = tuple  # (threads, seeking, prev)


class Dfa:
    def __init__(self, nfa: Nfa) -> None:
        self.nfa = nfa
        word = derive(r"\w") if nfa.uses_word_boundary else None
        self.alphabet = Alphabet.build(nfa.charsets, word)
        self.machine = Machine(nfa.states, self.alphabet.accepts, self.alphabet.is_word)
        self.keys: list[StateKey] = []
        self.index: dict[StateKey, int] = {}
        self.transitions: dict[tuple[int, int], tuple[int, tuple[int, ...], Any]] = {}
        self.eof_answers: dict[int, tuple[Any, Any]] = {}
        # The table interface of DfaTables, built on demand.
        self.rows = _LazyRows(self)
        self.fresh = frozenset(self.initial(p) for p in (PREV_START, PREV_WORD, PREV_OTHER))

    # -- states ---------------------------------------------------------------

    def prev_kind(self, prev: int) -> int:
        """Collapse previous-character kinds the pattern cannot tell apart."""
        if prev == PREV_START and not self.nfa.uses_start:
            prev = PREV_OTHER
        if prev == PREV_WORD and not self.nfa.uses_word_boundary:
            prev = PREV_OTHER
        return prev

    def intern(self, key: StateKey) -> int:
        sid = self.index.get(key)
        if sid is None:
            sid = self.index[key] = len(self.keys)
            self.keys.append(key)
        return sid

    def initial(self, prev: int) -> int:
        return self.intern(((), True, self.prev_kind(prev)))

    def is_dead(self, sid: int) -> bool:
        threads, seeking, _ = self.keys[sid]
        return not threads and not seeking

    # -- transitions ------------------------------------------------------------

    def _threads_with_seed(self, sid: int) -> list:
        threads, seeking, _ = self.keys[sid]
        seeded = list(threads)
        if seeking:
            seeded.append((self.nfa.start, (), (CUR, _UNSET)))
        return seeded

    def step(self, sid: int, c: int) -> tuple[int, tuple[int, ...], Any]:
        found = self.transitions.get((sid, c))
        if found is None:
            found = self.transitions[(sid, c)] = self._compute_step(sid, c)
        return found

    def _compute_step(self, sid: int, c: int) -> tuple[int, tuple[int, ...], Any]:
        _, seeking, prev = self.keys[sid]
        out, match, _ = self.machine.closure(
            self._threads_with_seed(sid), prev, c, _keep, _end_here
        )
        stepped = self.machine.step(out, c)
        sources: list[int] = []
        renumber: dict[int, int] = {}

        def register(source: int) -> int:
            if source == _UNSET:
                return _UNSET
            if source not in renumber:
                renumber[source] = len(sources)
                sources.append(source)
            return renumber[source]

        threads = tuple(
            (s, ob, (register(start), register(end))) for s, ob, (start, end) in stepped
        )
        prev_next = self.prev_kind(PREV_WORD if self.alphabet.is_word[c] else PREV_OTHER)
        next_sid = self.intern((threads, seeking and match is None, prev_next))
        return next_sid, tuple(sources), match

    def at_eof(self, sid: int) -> tuple[Any, Any]:
        """``(match, hit)`` at the end of the text, in register-source terms.

        ``match`` is ``(start_source, end_source)`` of the best complete match
        ending here (or None); ``hit`` is the start source of the first thread
        whose path ran into the end (or None).
        """
        found = self.eof_answers.get(sid)
        if found is None:
            _, _, prev = self.keys[sid]
            _, match, hit = self.machine.closure(
                self._threads_with_seed(sid), prev, EOF, _keep, _end_here
            )
            found = self.eof_answers[sid] = (match, None if hit is None else hit[0])
        return found

    # -- eager construction and serialisation -----------------------------------

    def build_all(self, max_states: int = MAX_DFA_STATES) -> None:
        """Build every state reachable from every initial context."""
        todo = [self.initial(p) for p in (PREV_START, PREV_WORD, PREV_OTHER)]
        done: set[int] = set()
        while todo:
            sid = todo.pop()
            if sid in done:
                continue
            done.add(sid)
            if len(self.keys) > max_states:
                raise PatternError(
                    "pattern too complex", 0, self.nfa.source,
                    detail=f"pattern needs more than {max_states} DFA states",
                )
            self.at_eof(sid)
            if self.is_dead(sid):
                continue
            for c in range(self.alphabet.size):
                todo.append(self.step(sid, c)[0])

    def to_data(self) -> dict:
        """The complete DFA as JSON-able data (builds every state first)."""
        self.build_all()
        table: list[list] = []
        cells: dict[tuple, int] = {}
        rows = []
        for sid in range(len(self.keys)):
            row = []
            for c in range(self.alphabet.size):
                if self.is_dead(sid):
                    row.append(-1)
                    continue
                nxt, sources, match = self.transitions[(sid, c)]
                cell = (nxt, sources, match)
                if cell not in cells:
                    cells[cell] = len(table)
                    table.append([nxt, list(sources), None if match is None else list(match)])
                row.append(cells[cell])
            rows.append(row)
        return {
            "initial": [self.initial(p) for p in (PREV_START, PREV_WORD, PREV_OTHER)],
            "dead": [sid for sid in range(len(self.keys)) if self.is_dead(sid)],
            "cells": table,
            "rows": rows,
            "eof": [
                [None if m is None else list(m), h]
                for m, h in (self.eof_answers[sid] for sid in range(len(self.keys)))
            ],
        }


class _LazyRows:
    """``rows[state][class]`` as :class:`DfaTables` has it, each cell built on first use."""

    def __init__(self, dfa: Dfa) -> None:
        self.dfa = dfa

    def __getitem__(self, sid: int) -> _LazyRow | None:
        return None if self.dfa.is_dead(sid) else _LazyRow(self.dfa, sid)


class _LazyRow:
    def __init__(self, dfa: Dfa, sid: int) -> None:
        self.dfa = dfa
        self.sid = sid

    def __getitem__(self, c: int) -> tuple[int, tuple[int, ...], Any]:
        return self.dfa.step(self.sid, c)


def _keep(payload: Any, slot: int) -> Any:
    return payload


def _end_here(payload: tuple[int, int]) -> tuple[int, int]:
    return payload if payload[1] != _UNSET else (payload[0], CUR)

