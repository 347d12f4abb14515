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

    A position is inside a value when the last delimiter that ends at or before it is
    one that opens a value (one that opens wins a tie); after one that closes, or
    before any, it is outside. Values hold no escapes, so the last delimiter in a
    stretch is found with ``str.rfind``, at C speed. A delimiter may fall across two
    reads: ``pending`` keeps the end of the text read that begins a delimiter (most
    often nothing), which is searched again with the start of the next stretch. Built
    from ``plan``, which the trackers of a region share (see prepare).
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
        """A region's plan: ``((delimiter, its length, whether it opens), ...)``, the
        longest ``pending`` can be, and the delimiters' first characters."""
        delimiters = tuple((s, len(s), True) for s in opens)
        delimiters += tuple((s, len(s), False) for s in closes)
        heads = "".join(sorted({s[0] for s, _, _ in delimiters}))
        return delimiters, max(n for _, n, _ in delimiters) - 1, heads

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
        pending = self.pending
        seam = None
        last = -1
        inside = self.inside
        for delimiter, n, opens in self.plan[0]:
            j = held.rfind(delimiter, i, s)
            if j >= 0:
                end = j + n
            elif pending:
                # (none begins in the stretch: one may begin in the pending text)
                if seam is None:
                    seam = pending + held[i : min(s, i + self.plan[1])]
                j = seam.rfind(delimiter, max(0, len(pending) - n + 1))
                if j < 0:
                    continue
                end = i + j + n - len(pending)
            else:
                continue
            if end > last or end == last and opens:
                last, inside = end, opens
        self.inside = inside
        self.pending = self.beginning(held, i, s)
        self.at = stop
        return s - i

    def skip(self, held, base, end):
        """From inside a value: ``(the position after the delimiter that ends it, or
        None when none ends it before ``end``; characters read)``."""
        i = first = self.at - base
        s = end - base
        pending = self.pending
        w = len(pending)
        seam = pending + held[i : min(s, i + self.plan[1])] if pending else None
        best = s + 1
        for delimiter, n, opens in self.plan[0]:
            if opens:
                continue
            if seam is not None:
                # (one across the seam ends before any that begins after it)
                j = seam.find(delimiter, max(0, w - n + 1))
                if j >= 0:
                    best = min(best, i + j + n - w)
                    continue
            j = held.find(delimiter, i, min(s, best))
            if j >= 0:
                best = j + n
        if best > s:
            self.pending = self.beginning(held, i, s)
            self.at = end
            return None, s - first
        self.pending = self.beginning(held, i, best)
        self.inside = False
        self.at = base + best
        return self.at, best - first

    def beginning(self, held, i, s):
        """The end of the text read up to ``s`` (from ``i`` in ``held``, after
        ``pending``) that is the beginning of a delimiter: its longest such end."""
        delimiters, keep, heads = self.plan
        lo = s - keep
        if lo < i:
            held = self.pending + held[i:s]
            s = len(held)
            lo = max(0, s - keep)
        start = s
        for head in heads:
            j = held.find(head, lo, start)
            while j >= 0:
                rest = held[j:s]
                if any(d.startswith(rest) for d, _, _ in delimiters):
                    start = j
                    break
                j = held.find(head, j + 1, start)
        return held[start:s]

    def value_start(self, text):
        """Where, in ``text`` (a region's body read while ``inside``), the value that is
        open at its end began: after the last delimiter that opens one."""
        start = 0
        for delimiter, n, opens in self.plan[0]:
            if opens:
                j = text.rfind(delimiter)
                if j >= 0 and j + n > start:
                    start = j + n
        return start
###}
