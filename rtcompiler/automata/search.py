"""Search with ``regex``'s answers: complete, partial, groups, and streaming.

``regex.compile(p, regex.DOTALL).search(s, pos, partial=True)`` behaves like
this (learned by experiment; each rule is pinned by a named test in
``tests/automata/test_partial_rules.py``):

1. a complete leftmost-first match anywhere in ``s[pos:]`` wins;
2. otherwise, the leftmost start from which some path of the matcher ran into
   the end of the text (needed one more character, there or inside a
   lookahead) gives a partial match ending at ``len(s)``;
3. at ``len(s)`` itself, a pattern that needs at least one character reports a
   partial match without evaluating anything -- unless it is anchored at the
   start of the string.

:class:`Scanner` is the streaming form: text is fed in pieces, each character
is stepped through the DFA exactly once, and :meth:`Scanner.result` answers as
if the text ended where the feeding stopped -- the question a streaming parser
asks after every chunk. :class:`Regex` is the one-shot form.

>>> rx = compile_regex(r"<tool_call>")
>>> sc = rx.scanner()
>>> sc.feed("Sure. <tool")
>>> sc.result(partial=True).span()
(6, 11)
>>> sc.feed("_call>{")
>>> sc.result(partial=True).span()
(6, 17)
"""

from __future__ import annotations

import functools
from typing import Any

from .alphabet import Alphabet
from ..dialect.charsets import CharSet
from .dfa import CUR, Dfa, DfaTables
from .nfa import MATCH, SPLIT, Nfa, compile_nfa
from .threads import EOF, PREV_OTHER, PREV_START, PREV_WORD, Machine


class Match:
    """What ``regex`` reports for a match: span, partial flag, named groups.

    Groups are worked out on first request only: a streaming parser asks for
    spans after every chunk, and for groups once, when it commits a match.
    """

    __slots__ = ("start", "end", "partial", "_groups", "_resolve")

    def __init__(self, start: int, end: int, partial: bool, groups=None, resolve=None) -> None:
        self.start = start
        self.end = end
        self.partial = partial
        self._groups = groups
        self._resolve = resolve

    def span(self) -> tuple[int, int]:
        return self.start, self.end

    def groupdict(self) -> dict[str, str | None]:
        if self._groups is None:
            self._groups = self._resolve() if self._resolve is not None else {}
            self._resolve = None
        return dict(self._groups)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Match):
            return NotImplemented
        return (self.span(), self.partial, self.groupdict()) == (
            other.span(), other.partial, other.groupdict()
        )

    def __repr__(self) -> str:
        return f"Match(span={self.span()}, partial={self.partial}, groups={self.groupdict()})"


class Regex:
    """A compiled delimiter pattern."""

    def __init__(self, nfa: Nfa, dfa: Dfa | DfaTables | None = None) -> None:
        self.nfa = nfa
        self.dfa = dfa or Dfa(nfa)
        self.alphabet: Alphabet = self.dfa.alphabet
        self.machine: Machine = self.dfa.machine
        self._class_cache: dict[str, int] = {}

    @property
    def pattern(self) -> str:
        return self.nfa.source

    def to_data(self) -> dict:
        """The whole compiled pattern as JSON-able data: NFA, alphabet, full DFA.

        This is the intermediate representation the code generator embeds;
        :meth:`from_data` reads it back into a working :class:`Regex`.
        """
        nfa = self.nfa
        return {
            "format": "rtcompiler.regex/1",
            "pattern": nfa.source,
            "nfa": {
                "states": [list(_jsonable(s)) for s in nfa.states],
                "start": nfa.start,
                "charsets": [[list(r) for r in cs.ranges] for cs in nfa.charsets],
                "group_names": dict(nfa.group_names),
                "group_count": nfa.group_count,
                "min_width": nfa.min_width,
                "anchored": nfa.anchored,
                "uses_word_boundary": nfa.uses_word_boundary,
                "uses_start": nfa.uses_start,
            },
            "alphabet": self.alphabet.to_data(),
            "dfa": self.dfa.to_data(),
        }

    @staticmethod
    def from_data(data: dict) -> Regex:
        if data.get("format") != "rtcompiler.regex/1":
            raise ValueError(f"not a serialised rtcompiler regex: format {data.get('format')!r}")
        n = data["nfa"]
        nfa = Nfa(
            source=data["pattern"],
            states=tuple(_state_from_data(s) for s in n["states"]),
            start=n["start"],
            charsets=tuple(CharSet(tuple((lo, hi) for lo, hi in cs)) for cs in n["charsets"]),
            group_names=dict(n["group_names"]),
            group_count=n["group_count"],
            min_width=n["min_width"],
            anchored=n["anchored"],
            uses_word_boundary=n["uses_word_boundary"],
            uses_start=n["uses_start"],
        )
        alphabet = Alphabet.from_data(data["alphabet"])
        machine = Machine(nfa.states, alphabet)
        return Regex(nfa, DfaTables(data["dfa"], alphabet, machine, nfa))

    def class_of(self, ch: str) -> int:
        c = self._class_cache.get(ch)
        if c is None:
            c = self._class_cache[ch] = self.alphabet.class_of(ord(ch))
        return c

    def prev_context(self, text: str, pos: int) -> int:
        if pos == 0:
            return PREV_START
        return PREV_WORD if self.alphabet.is_word[self.class_of(text[pos - 1])] else PREV_OTHER

    def scanner(self, text_before: str = "") -> Scanner:
        """A streaming search starting after ``text_before`` (context for ``\\b``, ``^``)."""
        return Scanner(self, text_before)

    def search(self, text: str, pos: int = 0, partial: bool = False) -> Match | None:
        pos = min(max(pos, 0), len(text))
        scanner = Scanner(self, text[:pos], offset_text=text)
        scanner.feed_range(pos, len(text))
        return scanner.result(partial)

    def finditer(self, text: str):
        """Successive matches, as ``regex.finditer(p, text, regex.DOTALL)`` yields them.

        After an empty match at ``e`` the next match may start at ``e`` only if it
        is not empty; after a non-empty match ending at ``e`` an empty match at
        ``e`` is allowed.
        """
        pos, n = 0, len(text)
        while pos <= n:
            m = self.search(text, pos)
            if m is None:
                return
            yield m
            if m.end > m.start:
                pos = m.end
                continue
            retry = self._nonempty_at(text, m.end)
            if retry is None:
                pos = m.end + 1
            else:
                yield retry
                pos = retry.end

    def _nonempty_at(self, text: str, start: int) -> Match | None:
        """The leftmost-first match at ``start`` that is not empty, if any."""
        slots = (-1,) * (3 * (self.nfa.group_count + 1))
        prev = self.prev_context(text, start)
        threads: list = [(self.nfa.start, frozenset(), (slots, -1))]
        best = None
        i = start
        while threads or i == start:
            c = EOF if i == len(text) else self.class_of(text[i])
            out, match, _ = self.machine.closure(
                threads, prev, c, _save_slot(i), _end_at(i), accept=i > start
            )
            if match is not None:
                best = match
            if c == EOF:
                break
            threads = self.machine.step(out, c)
            prev = PREV_WORD if self.alphabet.is_word[c] else PREV_OTHER
            i += 1
        if best is None:
            return None
        captured, end = best
        groups = {name: _group_text(text, captured, index) for name, index in self.nfa.group_names.items()}
        return Match(start, end, False, groups)

    # -- capture groups, by Pike's VM on the matched span -----------------------

    def groups_at(self, text: str, start: int, end: int, partial: bool) -> dict[str, str | None]:
        """Named groups of the match found at ``start`` (complete: ending at ``end``)."""
        if not self.nfa.group_names:
            return {}
        slots = (-1,) * (3 * (self.nfa.group_count + 1))
        prev = self.prev_context(text, start)
        threads: list = [(self.nfa.start, frozenset(), (slots, -1))]
        best = None
        i = start
        while True:
            c = EOF if i == len(text) else self.class_of(text[i])
            out, match, hit = self.machine.closure(
                threads, prev, c, _save_slot(i), _end_at(i)
            )
            if c == EOF:
                if match is not None:
                    best = match
                chosen = hit if partial else best
                break
            if match is not None:
                best = match
                if not partial and best[1] == end and not self._pending_matches(out):
                    # Lower-priority threads were cut; higher-priority ones could
                    # only end later than ``end``, which the DFA ruled out.
                    chosen = best
                    break
            threads = self.machine.step(out, c)
            if not threads:
                chosen = best
                break
            prev = PREV_WORD if self.alphabet.is_word[c] else PREV_OTHER
            i += 1
        captured = chosen[0] if chosen is not None else slots
        return {
            name: _group_text(text, captured, index)
            for name, index in self.nfa.group_names.items()
        }


    def _pending_matches(self, threads: list) -> bool:
        states = self.nfa.states
        return any(s >= 0 and states[s][0] == MATCH for s, _, _ in threads)


class Scanner:
    """Incremental leftmost-first search over text that arrives in pieces."""

    def __init__(self, regex: Regex, text_before: str = "", offset_text: str | None = None):
        self.regex = regex
        self.dfa = regex.dfa
        # The whole text so far (for groups and for ``$``'s context); positions
        # are absolute, counted from the start of ``text_before``.
        self._chunks = [offset_text if offset_text is not None else text_before]
        self.start = len(text_before)
        self.pos = self.start
        self.state = self.dfa.initial(regex.prev_context(text_before, len(text_before)))
        self.registers: list[int] = []
        self.best: tuple[int, int] | None = None
        self.steps = 0  # DFA transitions taken: the work counter of the linear-time tests
        self.dead = False

    @property
    def text(self) -> str:
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0]

    def feed(self, chunk: str) -> None:
        self._chunks.append(chunk)
        self._step(chunk, self.pos)
        self.pos += len(chunk)

    def feed_range(self, begin: int, end: int) -> None:
        self._step(self.text[begin:end], begin)
        self.pos = end

    def _step(self, chunk: str, offset: int) -> None:
        if self.dead:
            return
        dfa, class_of = self.dfa, self.regex.class_of
        state, registers, i = self.state, self.registers, offset
        for ch in chunk:
            state, sources, match = dfa.step(state, class_of(ch))
            self.steps += 1
            if match is not None:
                self.best = (_value(match[0], registers, i), _value(match[1], registers, i))
            registers = [i if s == CUR else registers[s] for s in sources]
            i += 1
            if dfa.is_dead(state):
                self.dead = True
                break
        self.state, self.registers = state, registers

    def result(self, partial: bool = False) -> Match | None:
        """What ``search(text, start, partial=partial)`` returns for the text so far."""
        n = self.pos
        best, hit = self.best, None
        if not self.dead:
            match, hit_source = self.dfa.at_eof(self.state)
            if match is not None:
                best = (_value(match[0], self.registers, n), _value(match[1], self.registers, n))
            if hit_source is not None:
                hit = _value(hit_source, self.registers, n)
        rx = self.regex
        if best is not None:
            start, end = best
            return Match(start, end, False, resolve=self._groups(start, end, False))
        if not partial:
            return None
        if hit is not None and hit < n:
            return Match(hit, n, True, resolve=self._groups(hit, n, True))
        if rx.nfa.min_width > 0 and not rx.nfa.anchored:
            return Match(n, n, True, {name: None for name in rx.nfa.group_names})
        if hit is not None:
            return Match(n, n, True, resolve=self._groups(n, n, True))
        return None

    def _groups(self, start: int, end: int, partial: bool):
        if not self.regex.nfa.group_names:
            return None
        n = self.pos
        return lambda: self.regex.groups_at(self.text[:n], start, end, partial)


def _jsonable(state: tuple) -> tuple:
    return tuple(list(x) if isinstance(x, tuple) else x for x in state)


def _state_from_data(state: list) -> tuple:
    if state[0] == SPLIT:
        return (SPLIT, tuple(state[1]))
    return tuple(state)


def _value(source: int, registers: list[int], here: int) -> int:
    return here if source == CUR else registers[source]


def _save_slot(position: int):
    """Capture slots per group: (committed start, committed end, open start).

    A group's value changes only when it closes, as in a backtracking matcher: a
    new iteration that opens the group but runs out of text leaves the value of
    the last completed iteration in place.
    """

    def save(payload: Any, slot: int) -> Any:
        slots, end = payload
        group, closing = divmod(slot, 2)
        base = 3 * group
        if closing:
            committed = (slots[base + 2], position)
            return slots[:base] + committed + slots[base + 2 :], end
        return slots[: base + 2] + (position,) + slots[base + 3 :], end

    return save


def _end_at(position: int):
    def mark(payload: Any) -> Any:
        return payload if payload[1] != -1 else (payload[0], position)

    return mark


def _group_text(text: str, slots: tuple[int, ...], index: int) -> str | None:
    start, end = slots[3 * index], slots[3 * index + 1]
    if start < 0 or end < 0 or end < start:
        return None
    return text[start:end]


@functools.lru_cache(maxsize=512)
def compile_regex(pattern: str) -> Regex:
    """Compile ``pattern`` in the delimiter dialect, or raise ``PatternError``."""
    return Regex(compile_nfa(pattern))


__all__ = ["Match", "Regex", "Scanner", "compile_regex", "PREV_START", "PREV_OTHER", "PREV_WORD"]
