"""A dense DFA as tables: one look-up per character.

Standard library only (the ``dfa`` section). ``rtcompiler.automata.Dfa`` builds the
DFA lazily at compile time and writes it out with ``to_data``; a generated parser
reads it back here, with the same interface and no NFA work.
"""

from __future__ import annotations


###{standalone dfa
class DfaTables:
    """A fully built DFA read back from :meth:`Dfa.to_data`: same interface, no NFA work.

    This is the form the code generator embeds: every answer is a table look-up.
    """

    def __init__(self, data: dict) -> None:
        self._data = data
        self._initial = data["initial"]
        self._dead = frozenset(data["dead"])
        cells = [
            (nxt, tuple(sources), None if match is None else tuple(match))
            for nxt, sources, match in data["cells"]
        ]
        self._cells = cells
        # rows[state][class] -> (next state, register sources, match); None for a dead state.
        # Sources that leave the registers as they are -- (0, ..., k-1) out of a state
        # with k registers, as while an attempt runs through a literal -- are None here,
        # so that Scanner.advance keeps its list instead of building an equal one.
        registers = dict.fromkeys(self._initial, 0)
        for nxt, sources, _ in cells:
            registers[nxt] = len(sources)
        kept: dict = {}

        def cell(sid: int, k: int):
            found = cells[k]
            count = registers.get(sid)
            if count and found[1] == tuple(range(count)):
                same = kept.get(k)
                if same is None:
                    same = kept[k] = (found[0], None, found[2])
                return same
            return found

        self.rows = [
            None if sid in self._dead else [cell(sid, k) for k in row]
            for sid, row in enumerate(data["rows"])
        ]
        # The states with no live attempt that still seek one: where a prefilter may skip.
        self.fresh = frozenset(self._initial)
        self._eof = [
            (None if m is None else tuple(m), h) for m, h in data["eof"]
        ]

    def to_data(self) -> dict:
        return self._data

    def initial(self, prev: int) -> int:
        return self._initial[prev]

    def is_dead(self, sid: int) -> bool:
        return sid in self._dead

    def step(self, sid: int, c: int):
        assert sid not in self._dead, "stepped a dead state"
        return self._cells[self._data["rows"][sid][c]]

    def at_eof(self, sid: int):
        return self._eof[sid]
###}
