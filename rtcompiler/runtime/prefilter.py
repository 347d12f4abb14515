"""Where an attempt at a match can begin, found at C speed (:class:`Prefilter`).

Standard library only (the ``prefilter`` section). The compiler
(``rtcompiler.automata.prefilter``) finds a pattern's literals and the lead before
them; at run time the prefilter finds them with stdlib searches, so that the DFA and
the threads step only near them, and tells what may still pend at the end of the
text (the beginnings of the literals, see :func:`_beginnings`).
"""

from __future__ import annotations

###{standalone prefilter
import re as _re

# Occurrences of a literal's first character tried before str.find of the whole literal
# (see find_literal).
_FIRST_TRIES = 8


def find_literal(text, literal, lo, hi):
    """``text.find(literal, lo, hi)``, found first by its first character: a memchr,
    where str.find of a literal of a few characters reads about a nanosecond a character
    of text whose letters its skip table keeps (``END`` through 640 K of prose: 400 us,
    against 6 us for the memchr of ``E``). After a few occurrences of that character that
    do not begin the literal, str.find: at most one read of the text more."""
    first = literal[0]
    j = text.find(first, lo, hi)
    if j < 0 or text.startswith(literal, j, hi):
        return j  # (the usual answer, before the loop is set up)
    for _ in range(_FIRST_TRIES - 1):
        j = text.find(first, j + 1, hi)
        if j < 0 or text.startswith(literal, j, hi):
            return j
    return text.find(literal, j + 1, hi)


class Prefilter:
    """Where an attempt at a match can begin, found at C speed.

    Built from facts the compiler proved about the pattern (see
    ``rtcompiler/automata/prefilter.py``): every match, and every attempt alive
    more than ``lead`` characters plus a literal after its start, contains one
    of ``literals``, preceded by at most ``lead`` characters or by characters
    of ``lead_class`` only.
    """

    __slots__ = (
        "literals", "lead", "reach", "_one", "_any", "_window", "_order", "_lead_class", "danger",
        "_danger", "lead_loop", "simple", "_heads", "hold", "lead_source", "lead_ranges",
        "exact", "ahead", "heads_reach",
    )

    def __init__(self, data: dict) -> None:
        self.literals = tuple(data["literals"])
        self.lead = data["lead"]
        self.reach = max(len(s) for s in self.literals) - 1 + self.lead
        self._one = self.literals[0] if len(self.literals) == 1 else None
        # Literals that all begin with one character: sre searches their
        # alternation by that prefix, faster than a str.find per literal.
        self._any = _re.compile(
            "|".join(_re.escape(s) for s in self.literals), _re.DOTALL
        ) if len({s[0] for s in self.literals}) == 1 and self._one is None else None
        self._window = 1024  # see find
        self._order = list(self.literals)
        ranges = data["lead_ranges"]
        self.lead_ranges = [tuple(r) for r in ranges]
        self._lead_class = _re.compile(char_class_source(ranges), _re.DOTALL) if ranges else None
        # What a piece of text must contain for a search of it to end with an
        # attempt alive or a match: a literal, a literal's beginning at its
        # end, or (after a lead of whole classes) a lead character at its end.
        # Bounded leads of other characters are not covered: None.
        # ``core`` leaves out the lead: when only a lead character at the end is
        # found and the lead is a plain loop (``lead_loop``), the attempts alive
        # are those begun in the trailing run of lead characters.
        self.lead_loop = bool(data.get("lead_is_loop")) and self._lead_class is not None
        # With a plain-loop lead or none at all, what pends in text holding no
        # whole literal is known without the DFA (see :meth:`pending`).
        self.simple = self.lead_loop or bool(data.get("bare"))
        self.exact = bool(data.get("exact"))  # the pattern matches its literals only
        self.ahead = bool(data.get("ahead"))  # a lookahead of its literals only
        heads_source = _beginnings(self.literals)
        # A literal's proper beginning at the end of a text begins at most this many
        # characters before the end: pending searches for one there only.
        self.heads_reach = max(len(s) for s in self.literals) - 1
        self._heads = _re.compile(
            "(?:" + heads_source + ")\\Z", _re.DOTALL
        ) if heads_source is not None else None
        if self.lead:
            self.danger = None
        else:
            parts = [_re.escape(s) for s in self.literals]
            if heads_source is not None:
                parts.append("(?:" + heads_source + ")\\Z")
            if ranges:
                parts.append(char_class_source(ranges) + "\\Z")
            self.danger = "|".join(parts)
        self._danger = None if self.danger is None else _re.compile(self.danger, _re.DOTALL)
        # For simple patterns: a pattern whose leftmost match, in text holding no
        # literal, begins where :meth:`pending` says (no match: nowhere). The
        # guard lets an attempt begin only where a run of lead characters does,
        # which is where the leftmost one begins: sre then reads a run once, not
        # once per character in it. Search the unsent text alone (the guard
        # would read the character before it).
        tails = []
        # The lead characters' class, as a pattern (None: no lead).
        self.lead_source = char_class_source(ranges) if self._lead_class is not None else None
        if self._lead_class is not None:
            lead = self.lead_source
            if heads_source is not None:
                tails.append(f"(?<!{lead}){lead}*(?:{heads_source})\\Z")
            tails.append(f"(?<!{lead}){lead}+\\Z")
        elif heads_source is not None:
            tails.append(f"(?:{heads_source})\\Z")
        self.hold = "|".join(tails) if self.simple and tails else None

    @property
    def quiet_search(self):
        """The compiled search behind :meth:`quiet` (its ``search`` method), or None."""
        return None if self._danger is None else self._danger.search

    def quiet(self, text: str, lo: int, hi: int) -> bool:
        """Whether a search of ``text[lo:hi]`` from ``lo`` ends with no attempt alive
        and no match found."""
        return self._danger is not None and self._danger.search(text, lo, hi) is None

    @property
    def lead_class(self):
        """The compiled class of lead characters, or None."""
        return self._lead_class

    def pending(self, text: str, lo: int) -> int:
        """Where a search of ``text`` from ``lo`` pends (``len(text)``: nowhere).

        Only for :attr:`simple` patterns, and text where no literal begins at or
        after ``lo``: an attempt is then alive at the end exactly when it began
        where the rest of the text is lead characters, then a literal's
        beginning; the search reports the leftmost.
        """
        n = len(text)
        at = n
        if self._heads is not None:
            m = self._heads.search(text, max(lo, n - self.heads_reach))
            if m is not None:
                at = m.start()
        if self._lead_class is None:
            return at
        start = self.lead_start(text, lo, at)
        if at < n:  # the run of lead characters ending at the end, without a head
            start = min(start, self.lead_start(text, lo, n))
        return start

    def lead_start(self, text: str, lo: int, at: int) -> int:
        """Where the run of lead characters ending at ``at`` begins (not before ``lo``)."""
        lead = self._lead_class
        if lead is not None:
            while at > lo and lead.match(text, at - 1) is not None:
                at -= 1
        return at

    def find(self, text: str, lo: int, hi: int) -> int:
        """Where the first literal in ``text[lo:hi]`` begins, or -1."""
        if self._one is not None:
            return find_literal(text, self._one, lo, hi)
        if self._any is not None:
            m = self._any.search(text, lo, hi)
            return -1 if m is None else m.start()
        # Otherwise one str.find per literal, over a window that grows until some
        # literal begins in it: sre's search of an alternation without a common
        # first character tries a branch at every character that begins one
        # (every space, for " to=functions."), twenty times slower; and a plain
        # find per literal over the rest of the text would read far past a near
        # hit, again and again. The windows read a few times the distance to the
        # hit, per literal: linear over a parse.
        # The literal that hit last is tried first: its hit bounds the other
        # searches, so a literal that never occurs costs little next to one
        # that occurs on every line.
        order = self._order
        width = self._window
        while lo < hi:
            edge = lo + width
            found = -1
            for literal in order:
                j = text.find(literal, lo, min(hi, edge + len(literal) - 1))
                if j >= 0 and (found < 0 or j < found):
                    found = edge = j
                    first = literal
            if found >= 0:
                if first is not order[0]:
                    self._order = [first] + [s for s in order if s is not first]
                return found
            lo = edge
            width *= 4
        return -1

    def backoff(self, text: str, lo: int, edge: int, found: bool = False) -> int:
        """The earliest start (>= ``lo``) of an attempt alive at ``edge`` that can
        still match or reach the end of the text alive.

        No literal begins in ``text[lo:edge]``, so such an attempt holds at most
        part of one, after its lead. ``found``: a literal begins at ``edge``.
        """
        if found and self._one is not None and self.lead == 0:
            # ``edge`` is where the one literal begins. An attempt begun at
            # t < edge that matches, or is alive at the end of the text, holds the
            # literal right after its lead: found first if it began before edge,
            # so only lead characters can come between it and edge.
            t = edge
        else:
            t = edge - self.reach
        if t <= lo:
            return lo
        return self.lead_start(text, lo, t)


# Deeper nesting than this is written out flat (see _beginnings), which is quadratic in
# a literal's length: the compiler cuts a prefilter's literals to this length.
BEGINNINGS_DEPTH = 100


def _beginnings(literals) -> str | None:
    """A pattern for exactly the literals' non-empty proper beginnings (None: there are none).

    Written as a tree of shared prefixes, ``<(?:\\|(?:c(?:h)?)?)?`` for ``<|ch...``: sre
    tries an alternation of strings one string at a time at every position it
    searches from, so the flat list of a long literal's beginnings cost a search some
    microseconds; the tree is followed only as far as the text agrees with it.
    """
    tree: dict = {}
    for literal in literals:
        node = tree
        for ch in literal[:-1]:
            node = node.setdefault(ch, {})
    if not tree:
        return None
    if max(len(s) for s in literals) > BEGINNINGS_DEPTH:
        heads = sorted({s[:k] for s in literals for k in range(1, len(s))})
        return "|".join(_re.escape(h) for h in heads)

    def branch(node: dict) -> str:
        alternatives = [
            _re.escape(ch) + (f"(?:{branch(child)})?" if child else "")
            for ch, child in sorted(node.items())
        ]
        return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"

    return branch(tree)


def char_class_source(ranges) -> str:
    """A stdlib ``re`` character class for inclusive code point ranges (the compiler's
    capture and chain patterns use it too)."""
    parts = []
    for lo, hi in ranges:
        parts.append(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}")
    return "[" + "".join(parts) + "]"


# How a stdlib form lets an astral character into a run whose class is written as its
# BMP part (automata/capture.py, run_source): any one of them, checked against the rest
# of the class by a lookbehind of that one character.
ASTRAL_TURN = "[\\U00010000-\\U0010ffff](?<="
###}
