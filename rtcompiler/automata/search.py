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
from dataclasses import dataclass, field
from typing import Any

from .alphabet import Alphabet
from .dfa import CUR, Dfa
from .nfa import MATCH, Nfa, compile_nfa
from .threads import EOF, PREV_OTHER, PREV_START, PREV_WORD, Machine


@dataclass(frozen=True)
class Match:
    """What ``regex`` reports for a match: span, partial flag, named groups."""

    start: int
    end: int
    partial: bool
    groups: dict[str, str | None] = field(default_factory=dict)

    def span(self) -> tuple[int, int]:
        return self.start, self.end

    def groupdict(self) -> dict[str, str | None]:
        return dict(self.groups)


class Regex:
    """A compiled delimiter pattern."""

    def __init__(self, nfa: Nfa, dfa: Dfa | None = None) -> None:
        self.nfa = nfa
        self.dfa = dfa or Dfa(nfa)
        self.alphabet: Alphabet = self.dfa.alphabet
        self.machine: Machine = self.dfa.machine
        self._class_cache: dict[str, int] = {}

    @property
    def pattern(self) -> str:
        return self.nfa.source

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

    # -- capture groups, by Pike's VM on the matched span -----------------------

    def groups_at(self, text: str, start: int, end: int, partial: bool) -> dict[str, str | None]:
        """Named groups of the match found at ``start`` (complete: ending at ``end``)."""
        if not self.nfa.group_names:
            return {}
        slots = (-1,) * (2 * (self.nfa.group_count + 1))
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
        self.text = offset_text if offset_text is not None else text_before
        self.start = len(text_before)
        self.pos = self.start
        self.state = self.dfa.initial(regex.prev_context(text_before, len(text_before)))
        self.registers: list[int] = []
        self.best: tuple[int, int] | None = None
        self.steps = 0  # DFA transitions taken: the work counter of the linear-time tests
        self.dead = False

    def feed(self, chunk: str) -> None:
        self.text += chunk
        self.feed_range(self.pos, len(self.text))

    def feed_range(self, begin: int, end: int) -> None:
        if self.dead:
            self.pos = end
            return
        dfa, text, class_of = self.dfa, self.text, self.regex.class_of
        state, registers, i = self.state, self.registers, begin
        while i < end:
            state, sources, match = dfa.step(state, class_of(text[i]))
            self.steps += 1
            if match is not None:
                self.best = (_value(match[0], registers, i), _value(match[1], registers, i))
            registers = [i if s == CUR else registers[s] for s in sources]
            i += 1
            if dfa.is_dead(state):
                self.dead = True
                break
        self.state, self.registers, self.pos = state, registers, end

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
            return Match(start, end, False, rx.groups_at(self.text[:n], start, end, False))
        if not partial:
            return None
        if hit is not None and hit < n:
            return Match(hit, n, True, rx.groups_at(self.text[:n], hit, n, True))
        if rx.nfa.min_width > 0 and not rx.nfa.anchored:
            return Match(n, n, True, {name: None for name in rx.nfa.group_names})
        if hit is not None:
            return Match(n, n, True, rx.groups_at(self.text[:n], n, n, True))
        return None


def _value(source: int, registers: list[int], here: int) -> int:
    return here if source == CUR else registers[source]


def _save_slot(position: int):
    def save(payload: Any, slot: int) -> Any:
        slots, end = payload
        return slots[:slot] + (position,) + slots[slot + 1 :], end

    return save


def _end_at(position: int):
    def mark(payload: Any) -> Any:
        return payload if payload[1] != -1 else (payload[0], position)

    return mark


def _group_text(text: str, slots: tuple[int, ...], index: int) -> str | None:
    start, end = slots[2 * index], slots[2 * index + 1]
    if start < 0 or end < 0 or end < start:
        return None
    return text[start:end]


@functools.lru_cache(maxsize=512)
def compile_regex(pattern: str) -> Regex:
    """Compile ``pattern`` in the delimiter dialect, or raise ``PatternError``."""
    return Regex(compile_nfa(pattern))


__all__ = ["Match", "Regex", "Scanner", "compile_regex", "PREV_START", "PREV_OTHER", "PREV_WORD"]
