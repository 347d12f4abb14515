"""Where a region's body is inside a JSON string: the tracker of ``close-outside-strings``.

Standard library only (the ``json_strings`` section). The stream's scan and the
whole-text walk read a tool-call body for its strings with it, so that a close counts
only where it begins outside every string (docs/extensions.md).
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

    The state at ``at``: ``inside`` a string or not, and ``odd``: whether an odd run
    of backslashes ends right before ``at`` (it may go on after it). A position is
    inside a string from after its opening quote up to its closing quote.
    """

    __slots__ = ("at", "inside", "odd", "start")

    def __init__(self, start) -> None:
        self.at = start
        self.inside = False
        self.odd = False
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
        if quotes and (self.odd or held.find("\\", i, s) >= 0):
            quotes -= self.escaped(held, i, s)
        if quotes & 1:
            self.inside = not self.inside
        if held[s - 1] == "\\":
            self.tail(held, i, s)
        else:
            self.odd = False
        self.at = stop
        return s - i

    def escaped(self, held, i, s):
        """How many quotes in ``held[i:s]`` an odd run of backslashes comes right before."""
        escaped = 0
        if self.odd:
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
        """Set ``odd`` for the run of backslashes ending at ``s``, read back to ``i``."""
        k = s - 1
        while k >= i and held[k] == "\\":
            k -= 1
        run = s - 1 - k
        self.odd = bool((run + (self.odd if k < i else 0)) & 1)

    def skip(self, held, base, end):
        """From inside a string: ``(the position after its closing quote, or None when
        it does not end before ``end``; characters read)``."""
        i = first = self.at - base
        s = end - base
        odd = self.odd
        while True:
            j = held.find('"', i, s)
            if j < 0:
                if i < s:
                    if held[s - 1] == "\\":
                        self.tail(held, i, s)
                    else:
                        self.odd = False
                self.at = end
                return None, s - first
            k = j - 1
            while k >= i and held[k] == "\\":
                k -= 1
            if not (j - 1 - k + (odd if k < i else 0)) & 1:
                self.inside = False
                self.odd = False
                self.at = base + j + 1
                return self.at, j + 1 - first
            i = j + 1
            odd = False
            self.odd = False
###}
