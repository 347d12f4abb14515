"""Incremental search over text that arrives in pieces (:class:`Scanner`).

Standard library only (the ``scanner`` section). A scanner steps the pattern's DFA
through each piece once, and answers after any piece what ``regex``'s
``search(text, pos, partial=...)`` would; its compiled pattern
(compiled_regex.py) reads the groups of the match it found.
"""

from __future__ import annotations

# A generated module defines these in the sections before this one.
from .match import Match
from .pikevm import CUR, _value

# isort: split

###{standalone scanner
_QUIET_SPAN = 512  # pieces up to this long are first checked whole (Prefilter.quiet)
# Steps in a row that leave the DFA in its state before Scanner.advance asks for the
# characters that would not (CompiledRegex.loop_exit): fewer, and runs of a few
# characters between two exits would pay a search each.
_LOOP_RUN = 4
_UNKNOWN = object()


class Scanner:
    """Incremental leftmost-first search over text that arrives in pieces.

    Positions are absolute. A scanner made by :meth:`CompiledRegex.scanner`
    keeps the text from ``origin`` on (one character before ``start``, as
    context for ``\\b``), which it needs only to extract groups; one made by
    :meth:`CompiledRegex.bare_scanner` keeps none and asks ``source`` for it.
    :meth:`rebase` moves the search start forward without rescanning whenever
    no live attempt began before the new start.
    """

    def __init__(self, regex, text: str = "", start: int | None = None, origin: int = 0) -> None:
        self.regex = regex
        self.dfa = regex.dfa
        self.origin = origin
        # The text from ``origin`` on, in pieces; None for a bare scanner (it keeps none).
        self._chunks: list[str] | None = [text]
        self.source = self._own_text
        self.start = origin + len(text) if start is None else start
        self.pos = self.start
        self.state = self.dfa.initial(regex.prev_context(text, self.start - origin))
        self.registers: list = []
        self.best: tuple[int, int] | None = None
        # Work counters of the linear-time tests: DFA transitions taken in
        # Python; characters passed over without stepping; characters the
        # C-speed prefilter searches went through.
        self.steps = 0
        self.skipped = 0
        self.searched = 0
        self.dead = False

    @property
    def text(self) -> str:
        chunks = self._chunks
        assert chunks is not None, "a bare scanner keeps no text"
        if len(chunks) > 1:
            chunks = self._chunks = ["".join(chunks)]
        return chunks[0]

    def _own_text(self):
        return self.text, self.origin

    def feed(self, chunk: str) -> None:
        if self._chunks is not None:
            self._chunks.append(chunk)
        self.advance(chunk, 0, len(chunk))

    def feed_range(self, begin: int, end: int) -> None:
        self.advance(self.text, begin - self.origin, end - self.origin)

    def rebase(self, start: int) -> bool:
        """Search from ``start`` (>= the current start) instead, if that needs no rescan.

        True when every live attempt and the best match so far begin at or after
        ``start``: the state is then exactly that of a search begun there (the
        same threads, in the same order). Otherwise False, and nothing changes.
        """
        if self.registers and min(self.registers) < start:
            return False
        if self.best is not None and self.best[0] < start:
            return False
        self.start = start
        if self._chunks is not None:
            keep = max(start - 1, self.origin)
            if keep > self.origin:
                self._chunks = [self.text[keep - self.origin :]]
                self.origin = keep
        return True

    def advance(self, text: str, lo: int, hi: int) -> None:
        """Step ``text[lo:hi]``, which begins at absolute position ``pos``.

        Where no attempt is alive (the DFA is in an initial state) and the
        pattern has a prefilter, the characters that cannot reach a match or
        the end of the text alive are passed over at C speed: the DFA then
        restarts from the initial state the character before calls for, which
        is exactly the state it would have reached (no thread, still seeking).
        """
        pos0 = self.pos
        self.pos = pos0 + hi - lo
        if self.dead or lo >= hi:
            return
        dfa = self.dfa
        rows, fresh = dfa.rows, dfa.fresh
        classes = self.regex.class_cache
        class_of = self.regex.class_of
        pre = self.regex.prefilter
        state, registers = self.state, self.registers
        if pre is not None and hi - lo <= _QUIET_SPAN and state in fresh:
            # A short piece is searched whole once; a long one with find (below),
            # which stops at the first literal instead of going through the rest.
            self.searched += hi - lo
            if pre.quiet(text, lo, hi):
                # No attempt begun in the piece survives it, and none matches.
                self.skipped += hi - lo
                c = classes.get(text[hi - 1])
                self.state = self.regex.initial_after(class_of(text[hi - 1]) if c is None else c)
                return
        best = self.best
        i = lo
        # Below watch_from, no prefilter search is due.
        watch_from = lo if pre is not None else hi
        jump_at = -1  # where the prefilter found a literal, once the DFA gets there
        steps = 0
        stayed = 0  # steps in a row that left the state as it was
        loops = self.regex.loop_exits
        while i < hi:
            if i >= watch_from and state in fresh:
                j = pre.find(text, i, hi)
                edge = hi if j < 0 else j
                self.searched += edge - i
                t0 = pre.backoff(text, i, edge, j >= 0)
                if t0 > i:
                    self.skipped += t0 - i
                    c = classes.get(text[t0 - 1])
                    if c is None:
                        c = class_of(text[t0 - 1])
                    state = self.regex.initial_after(c)
                    registers = []
                    i = t0
                watch_from = edge + 1
                if i >= hi:
                    break
                jump_at = j
            if i == jump_at:
                # A literal begins here: its run from this state is known.
                jump_at = -1
                for literal in pre.literals:
                    if text.startswith(literal, i, hi):
                        run = self.regex.jump(state, literal, len(registers))
                        if run is not None:
                            here = pos0 + i - lo
                            state, refs, found = run
                            if found is not None:
                                best = tuple(
                                    registers[-1 - r] if r < 0 else here + r for r in found
                                )
                            registers = [registers[-1 - r] if r < 0 else here + r for r in refs]
                            self.searched += len(literal)
                            i += len(literal)
                        break
                if i >= hi:
                    break
                continue
            ch = text[i]
            c = classes.get(ch)
            if c is None:
                c = class_of(ch)
            was = state
            state, sources, match = rows[state][c]
            steps += 1
            here = pos0 + i - lo
            if match is not None:
                best = (_value(match[0], registers, here), _value(match[1], registers, here))
            if sources:
                registers = [here if s == CUR else registers[s] for s in sources]
            elif sources is not None and registers:  # None: the registers stay as they are
                registers = []
            i += 1
            if rows[state] is None:
                self.dead = True
                break
            if state == was:
                stayed += 1
                if stayed >= _LOOP_RUN and i < hi:
                    # A state that has stayed put a while: pass over, at C speed, the
                    # characters that would keep it there changing nothing.
                    stayed = 0
                    key = (state, len(registers))
                    exit = loops.get(key, _UNKNOWN)
                    if exit is _UNKNOWN:
                        exit = self.regex.loop_exit(state, len(registers))
                    if exit is not None:
                        j = exit(text, i, hi)
                        self.searched += j - i
                        self.skipped += j - i
                        self.regex.looped += j - i
                        i = j
            else:
                stayed = 0
        self.steps += steps
        self.state, self.registers, self.best = state, registers, best

    def quiet(self) -> bool:
        """True when the search so far has no match and no attempt alive, and the
        pattern needs a literal to match: the answer is then None, or a partial
        match at the very end (the text can hold nothing back)."""
        return self.regex.prefilter is not None and self.state in self.dfa.fresh

    def alive_from(self):
        """Where the attempt alive at the end of the text so far began, when the
        search has found no match and is not in an initial state; else None.

        :meth:`result` then answers a partial match from there to the end (when
        that is not empty), with no Match made here.
        """
        if self.dead or self.best is not None or self.state in self.dfa.fresh:
            return None
        match, hit_source = self.dfa.at_eof(self.state)
        if match is not None or hit_source is None:
            return None
        return _value(hit_source, self.registers, self.pos)

    def result(self, partial: bool = False):
        """What ``search(text, start, partial=partial)`` returns for the text so far.

        Read the match's groups before feeding the scanner again.
        """
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
        if rx.nfa.needs_input and not rx.nfa.anchored:
            return Match(n, n, True, {name: None for name in rx.nfa.group_names})
        if hit is not None:
            return Match(n, n, True, resolve=self._groups(n, n, True))
        return None

    def _groups(self, start: int, end: int, partial: bool):
        if not self.regex.nfa.group_names:
            return None
        stop, source = self.pos, self.source

        def resolve():
            text, origin = source()
            return self.regex.groups_at(
                text, start - origin, end - origin, partial, stop - origin, start == 0
            )

        return resolve
###}
