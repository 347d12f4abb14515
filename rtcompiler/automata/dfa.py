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
serialisation, a whole row at a time: away from the end of the text, the
closure of a state depends on the next character only through whether it is a
word character, and the step only through which of the state's character sets
hold it, so the classes are grouped and each group is stepped once. Its work is
counted (NFA states read, table cells written) and bounded by ``MAX_DFA_WORK``,
so that a pattern whose tables would blow up is refused after bounded work.

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
from ..runtime.dfa import DfaTables  # noqa: F401
from ..runtime.pikevm import CUR, EOF, PREV_OTHER, PREV_START, PREV_WORD, Machine  # noqa: F401
from .alphabet import Alphabet
from .nfa import CHAR, Nfa

_UNSET = -1  # a thread's end register before it reaches MATCH

MAX_DFA_STATES = 10_000
# Bound on the work of building the complete tables: NFA states read while computing
# closures and steps, plus one per table cell and per class a state's sets hold. The
# tables (and so a generated module and its import) grow with this work; the largest
# bundled grammar's pattern needs about 10,600 (gpt-oss's tool-call header).
MAX_DFA_WORK = 500_000
# Bound on the work of building the tables of all of one template's patterns together:
# each fits MAX_DFA_WORK, but a few hundred fields could each bring one near it.
MAX_TEMPLATE_DFA_WORK = 1_000_000

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
        self.work = 0  # what build_all cost: NFA states read, cells written
        self.complete = False  # whether build_all has built every state
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
        return self._finish_step(self.machine.step(out, c), seeking, match, c)

    def _finish_step(
        self, stepped: list, seeking: bool, match: Any, c: int
    ) -> tuple[int, tuple[int, ...], Any]:
        """Number the registers of the threads ``stepped`` over class ``c`` and intern
        the state they make."""
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
            found = self.eof_answers[sid] = self._compute_eof(sid)
        return found

    def _compute_eof(self, sid: int) -> tuple[Any, Any]:
        _, _, prev = self.keys[sid]
        _, match, hit = self.machine.closure(
            self._threads_with_seed(sid), prev, EOF, _keep, _end_here
        )
        return match, None if hit is None else hit[0]

    # -- eager construction and serialisation -----------------------------------

    def build_all(self, max_states: int = MAX_DFA_STATES, max_work: int = MAX_DFA_WORK) -> None:
        """Build every state reachable from every initial context, or raise
        ``PatternError`` once more than ``max_states`` states or ``max_work`` units of
        work (see :attr:`work`) are needed.

        Every row is computed afresh, even where some steps were taken lazily before,
        so the work and the verdict depend on the pattern alone. Once complete, the
        build is not done again.
        """
        if self.complete:
            return
        counted = _CountedStates(self.nfa.states, max_work)
        self.machine.states = counted
        try:
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
                        detail=f"the pattern needs more than {max_states} DFA states, "
                        "rtcompiler's limit",
                    )
                self.eof_answers[sid] = self._compute_eof(sid)
                if self.is_dead(sid):
                    continue
                counted.charge(self.alphabet.size)  # the row's cells
                row = self._compute_row(sid, counted)
                for c, found in enumerate(row):
                    self.transitions[(sid, c)] = found
                todo.extend(found[0] for found in row)
            self.complete = True
        except _OverBudget:
            raise PatternError(
                "pattern too complex", 0, self.nfa.source,
                detail=f"building the pattern's DFA tables needs more than {max_work} units "
                f"of work, rtcompiler's limit ({len(self.keys)} states of "
                f"{self.alphabet.size} character classes so far)",
            ) from None
        finally:
            self.work = counted.reads
            self.machine.states = self.nfa.states

    def _compute_row(
        self, sid: int, counted: _CountedStates
    ) -> list[tuple[int, tuple[int, ...], Any]]:
        """Every class's transition out of ``sid``, as :meth:`_compute_step` gives it.

        Away from the end of the text, the closure depends on the class only through
        its word-ness (assertions), and the step only through which character sets of
        the threads (lookahead bodies included) hold it: one closure per word-ness,
        one step per group of classes that no set of the state tells apart.
        """
        _, seeking, prev = self.keys[sid]
        is_word = self.alphabet.is_word
        accepts = self.alphabet.accepts
        states = self.machine.states
        # Per word-ness: the closure, its match, each class's sets, the threads reading
        # each set, and the steps made so far.
        contexts: dict[bool, tuple] = {}
        row = []
        for c in range(self.alphabet.size):  # in class order: states are numbered as met
            context = contexts.get(is_word[c])
            if context is None:
                out, match, _ = self.machine.closure(
                    self._threads_with_seed(sid), prev, c, _keep, _end_here
                )
                readers: dict[int, list[int]] | None = {}
                if any(ob for _, ob, _ in out):
                    readers = None  # lookahead obligations: the machine steps every thread
                    charsets = self._charsets(out)
                else:
                    # Without obligations every thread is a CHAR state: a step keeps
                    # exactly those whose set holds the class, in order.
                    for k, (s, _, _) in enumerate(out):
                        readers.setdefault(states[s][1], []).append(k)
                    charsets = set(readers)
                holding: dict[int, list[int]] = {}
                for charset in sorted(charsets):
                    counted.charge(len(accepts[charset]))
                    for k in accepts[charset]:
                        holding.setdefault(k, []).append(charset)
                context = contexts[is_word[c]] = (out, match, holding, readers, {})
            out, match, holding, readers, steps = context
            signature = tuple(holding.get(c, ()))
            found = steps.get(signature)
            if found is None:
                if readers is None:
                    stepped = self.machine.step(out, c)
                else:
                    kept = sorted(k for charset in signature for k in readers[charset])
                    counted.charge(len(kept))
                    stepped = []
                    for k in kept:
                        s, ob, payload = out[k]
                        stepped.append((states[s][2], ob, payload))
                found = steps[signature] = self._finish_step(stepped, seeking, match, c)
            row.append(found)
        return row

    def _charsets(self, threads) -> set[int]:
        """The character sets the CHAR states of ``threads`` read, lookahead bodies too."""
        states = self.machine.states
        found: set[int] = set()
        stack = [(s, ob) for s, ob, _ in threads]
        while stack:
            s, ob = stack.pop()
            if s >= 0:
                state = states[s]
                if state[0] == CHAR:
                    found.add(state[1])
            for _, body in ob:
                stack.extend(body)
        return found

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


class WorkBudget:
    """What is left of :data:`MAX_TEMPLATE_DFA_WORK` for one template's tables.

    :meth:`build` builds a pattern's complete tables within the smaller of
    :data:`MAX_DFA_WORK` and what is left, counting each pattern once; a build
    already complete (compiling is cached) is counted at what it cost.
    """

    def __init__(self, total: int = MAX_TEMPLATE_DFA_WORK) -> None:
        self.left = total
        self.counted: set[str] = set()

    def build(self, dfa: Dfa) -> None:
        """Build ``dfa``'s tables and count their work, or raise ``PatternError``."""
        source = dfa.nfa.source
        if source in self.counted:
            return
        limit = min(MAX_DFA_WORK, self.left)
        try:
            dfa.build_all(max_work=limit)
        except PatternError:
            if limit < MAX_DFA_WORK and dfa.work > limit:
                raise self._spent(source) from None
            raise
        if dfa.work > self.left:
            raise self._spent(source)
        self.left -= dfa.work
        self.counted.add(source)

    @staticmethod
    def _spent(source: str) -> PatternError:
        return PatternError(
            "template too complex", 0, source,
            detail="building the DFA tables of all the template's patterns needs more than "
            f"{MAX_TEMPLATE_DFA_WORK} units of work, rtcompiler's limit for a template "
            "(this pattern's tables went past it)",
        )


class _OverBudget(Exception):
    """Raised from inside the closure machinery when the build's budget is spent."""


class _CountedStates:
    """The NFA's states as :class:`Machine` reads them, counting every read.

    Every unit of closure and step work reads a state, so the count is the
    builder's work; it stops the build, wherever it is, once over ``limit``.
    """

    __slots__ = ("states", "reads", "limit")

    def __init__(self, states: tuple, limit: int) -> None:
        self.states = states
        self.reads = 0
        self.limit = limit

    def __getitem__(self, index: int) -> tuple:
        self.reads += 1
        if self.reads > self.limit:
            raise _OverBudget
        return self.states[index]

    def charge(self, amount: int) -> None:
        self.reads += amount
        if self.reads > self.limit:
            raise _OverBudget


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

