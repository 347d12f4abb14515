"""Where a region's body is inside a string: the trackers of ``close-outside-strings``.

Standard library only (the ``json_strings`` section). The stream's scan and the
whole-text walk read a tool-call body for its strings with them, so that a close counts
only where it begins outside every string (docs/extensions.md): ``JsonStrings`` for a
JSON body, ``ValueSpans`` for a body whose values are raw text between literal
delimiters (XML formats). Both keep ``at``, ``inside``, ``pending`` and ``start`` and
read with ``advance``, ``skip`` and ``value_start``; ``tracker`` makes a region's.
"""

from __future__ import annotations

###{standalone json_strings
import re as _re

# A run of backslashes and the quote after it (see JsonStrings.escaped).
_BACKSLASHES_QUOTE = _re.compile(r'\\+"')


class JsonStrings:
    """Where an open region's body is inside a JSON string, read as it grows.

    A ``"`` begins or ends a string unless an odd run of backslashes comes right before
    it: inside a string that is JSON's own rule (``\\`` escapes the next character),
    and outside one a backslash is not JSON. So the strings are found by counting
    quotes with ``str.count`` and ``str.find``, at C speed; escaped quotes are told by
    counting ``\\"`` too, and only a quote after two backslashes or more has its run
    measured.

    The state at ``at``: ``inside`` a string or not, and ``pending``: whether an odd
    run of backslashes ends right before ``at`` (it may go on after it). A position is
    inside a string from after its opening quote up to its closing quote.
    """

    __slots__ = ("at", "inside", "pending", "start")

    # Its strings are JSON's: the stream's scan skips a piece with no quote itself.
    json = True

    def __init__(self, start) -> None:
        self.at = start
        self.inside = False
        self.pending = False
        # Where reading began, while a stream's walk may still decode the body instead
        # of reading it (see StreamWalk.walk_step); -1 once it has tried.
        self.start = start

    def advance(self, held, base, stop):
        """Read the body from ``at`` to ``stop`` (``held`` starts at ``base``); returns
        how many characters that was."""
        i = self.at - base
        s = stop - base
        if i >= s:
            return 0
        quotes = held.count('"', i, s)
        if quotes and (self.pending or held.find("\\", i, s) >= 0):
            quotes -= self.escaped(held, i, s)
        if quotes & 1:
            self.inside = not self.inside
        if held[s - 1] == "\\":
            self.tail(held, i, s)
        else:
            self.pending = False
        self.at = stop
        return s - i

    def copy(self):
        """A tracker in this one's state, to read on from ``at`` without moving it."""
        probe = JsonStrings(self.at)
        probe.inside, probe.pending = self.inside, self.pending
        return probe

    def value_start(self, text):
        """Where, in ``text`` (a region's body read while ``inside``), the string that is
        open at its end began: after its opening quote, the last that no odd run of
        backslashes escapes."""
        q = len(text)
        while True:
            q = text.rfind('"', 0, q)
            k = q - 1
            while k >= 0 and text[k] == "\\":
                k -= 1
            if not (q - 1 - k) & 1:
                return q + 1

    def escaped(self, held, i, s):
        """How many quotes in ``held[i:s]`` an odd run of backslashes comes right before."""
        escaped = 0
        if self.pending:
            # The run before i may go on: measured up to its first other character.
            j = i
            while j < s and held[j] == "\\":
                j += 1
            if j < s and held[j] == '"':
                escaped += (j - i + 1) & 1
                j += 1
            i = j
        if held.count('\\\\"', i, s):
            for m in _BACKSLASHES_QUOTE.finditer(held, i, s):
                escaped += (m.end() - m.start() - 1) & 1
        else:
            escaped += held.count('\\"', i, s)  # each after a run of one
        return escaped

    def tail(self, held, i, s):
        """Set ``pending`` for the run of backslashes ending at ``s``, read back to ``i``."""
        k = s - 1
        while k >= i and held[k] == "\\":
            k -= 1
        run = s - 1 - k
        self.pending = bool((run + (self.pending if k < i else 0)) & 1)

    def skip(self, held, base, end):
        """From inside a string: ``(the position after its closing quote, or None when
        it does not end before ``end``; characters read)``."""
        i = first = self.at - base
        s = end - base
        odd = self.pending
        while True:
            j = held.find('"', i, s)
            if j < 0:
                if i < s:
                    if held[s - 1] == "\\":
                        self.tail(held, i, s)
                    else:
                        self.pending = False
                self.at = end
                return None, s - first
            k = j - 1
            while k >= i and held[k] == "\\":
                k -= 1
            if not (j - 1 - k + (odd if k < i else 0)) & 1:
                self.inside = False
                self.pending = False
                self.at = base + j + 1
                return self.at, j + 1 - first
            i = j + 1
            odd = False
            self.pending = False

def tracker(spans, start):
    """The string tracker of a region whose ``outside_strings`` is ``spans`` (True: JSON
    strings; else ``ValueSpans.prepare(opens, closes)``), reading from ``start``.
    (ValueSpans is in its own section, which a module has when a field of its template
    names value delimiters.)"""
    return JsonStrings(start) if spans is True else ValueSpans(start, spans)
###}


###{standalone value_spans

class ValueSpans:
    """Where an open region's body is inside a value written between literal delimiters,
    read as it grows: the strings of a format whose values are raw text, as XML tool
    calls write them (``<parameter=city>`` ... ``</parameter>``).

    A position is inside a value when the last delimiter written before it opens one;
    after one that closes, or before any, it is outside. (No delimiter is written inside
    another, so the last to begin is the last to end.) Values hold no escapes, so the
    last delimiter of a stretch is found from its end: the last of the delimiters' first
    characters (``str.rfind``, at C speed), where one of them begins or not, then the
    one before. A delimiter may fall across two reads: ``pending`` keeps the end of the
    text read that begins one (most often nothing), which is read again with the start
    of the next stretch. Built from ``plan``, which the trackers of a region share (see
    prepare).
    """

    __slots__ = ("at", "inside", "pending", "start", "plan")

    json = False

    def __init__(self, start, plan) -> None:
        self.at = start
        self.inside = False
        self.pending = ""
        self.start = start
        self.plan = plan

    @staticmethod
    def prepare(opens, closes):
        """A region's plan: the match of the last delimiter of a text (its group 1 is
        one that opens), the search for the first that closes, the longest ``pending``
        can be, the search for the end of a text that begins a delimiter (the leftmost
        such end is the longest), the delimiters' first characters, and the match of a
        delimiter where one begins."""
        delimiters = (*opens, *closes)

        def either(literals):
            return "|".join(_re.escape(s) for s in sorted(literals, key=len, reverse=True))

        one = f"(?:({either(opens)})|{either(closes)})"
        last = _re.compile(f"(?s:.*){one}")
        first_close = _re.compile(either(closes))
        beginnings = {s[:k] for s in delimiters for k in range(1, len(s))}
        pending = _re.compile(f"(?:{either(beginnings)})\\Z")
        heads = "".join(sorted({s[0] for s in delimiters}))
        return (
            last, first_close, max(map(len, delimiters)) - 1, pending, heads, _re.compile(one)
        )

    def copy(self):
        """A tracker in this one's state, to read on from ``at`` without moving it."""
        probe = ValueSpans(self.at, self.plan)
        probe.inside, probe.pending = self.inside, self.pending
        return probe

    def advance(self, held, base, stop):
        """Read the body from ``at`` to ``stop`` (``held`` starts at ``base``); returns
        how many characters that was."""
        i = self.at - base
        s = stop - base
        if i >= s:
            return 0
        plan = self.plan
        pending = self.pending
        if pending:
            # One may begin in the pending text: read with it (a short piece, or the
            # pending text and the next characters; the rest of the stretch after).
            w = len(pending)
            m = plan[0].match(pending + held[i : min(s, i + plan[2])])
            if m is not None and m.end() > w:
                self.inside = m.start(1) >= 0
        self.at = stop
        lo = s - plan[2]
        head = plan[4]
        if len(head) == 1:
            # The last delimiter begins at one of the last of its first characters.
            j = last = held.rfind(head, i, s)
            while j >= 0:
                m = plan[5].match(held, j, s)
                if m is not None:
                    self.inside = m.start(1) >= 0
                    break
                j = held.rfind(head, i, j)
            if last < lo:  # (and nothing begins a delimiter at the end)
                self.pending = "" if lo >= i else self.beginning(held, i, s)
                return s - i
        else:
            m = plan[0].match(held, i, s)
            if m is not None:
                self.inside = m.start(1) >= 0
        if lo >= i:  # (beginning, written out for a stretch as long as pending can be)
            m = plan[3].search(held, lo, s)
            self.pending = "" if m is None else held[m.start() : s]
        else:
            self.pending = self.beginning(held, i, s)
        return s - i

    def skip(self, held, base, end):
        """From inside a value: ``(the position after the delimiter that ends it, or
        None when none ends it before ``end``; characters read)``."""
        i = first = self.at - base
        s = end - base
        close = self.plan[1]
        stop = -1
        pending = self.pending
        if pending:
            # One across the seam ends before any that begins after it. (The pending
            # text begins a delimiter and holds none: no delimiter is part of another.)
            m = close.search(pending + held[i : min(s, i + self.plan[2])])
            if m is not None:
                stop = i + m.end() - len(pending)
        if stop < 0:
            m = close.search(held, i, s)
            if m is not None:
                stop = m.end()
        if stop < 0:
            self.pending = self.beginning(held, i, s)
            self.at = end
            return None, s - first
        self.pending = self.beginning(held, i, stop)
        self.inside = False
        self.at = base + stop
        return self.at, stop - first

    def beginning(self, held, i, s):
        """The end of the text read up to ``s`` (from ``i`` in ``held``, after
        ``pending``) that is the beginning of a delimiter: its longest such end."""
        lo = s - self.plan[2]
        if lo < i:
            held = self.pending + held[i:s]
            s = len(held)
            lo = max(0, s - self.plan[2])
        m = self.plan[3].search(held, lo, s)
        return "" if m is None else held[m.start() : s]

    def value_start(self, text):
        """Where, in ``text`` (a region's body read while ``inside``), the value that is
        open at its end began: after the last delimiter, which opens one."""
        m = self.plan[0].match(text)
        return 0 if m is None else m.end()
###}
