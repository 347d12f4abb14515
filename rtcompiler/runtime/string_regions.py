"""Streamed regions whose close counts only outside the body's strings.

Standard library only (the ``string_regions`` section). :class:`StringRegions` is the
part of ``ResponseStream`` for ``close-outside-strings`` (docs/extensions.md): the scan
of such a region, which checks where its close begins against the body's strings
(read with a tracker of strings.py: JSON strings, or values between literal
delimiters), and the region text it gives on the way.
"""

from __future__ import annotations

# A generated module defines these in the sections before this one.
from .strings import tracker

# isort: split

###{standalone string_regions
_BODY_RUN = 64  # region pieces joined together (see ResponseStream.tail)


class StringRegions:
    """``ResponseStream``'s string-tracking regions (a mixin: the state is the stream's)."""

    __slots__ = ()

    def scan_outside_strings(self, eos, events, scan=None):
        """``scan`` in a region whose close counts only where it begins outside the
        body's strings (docs/extensions.md): ``(("close", region, Match) or None,
        where the held text begins)``. ``scan``: the search to use instead of the
        watchers' (the whole-text pass's, WholePass.whole_scan).

        The close is searched for as in any region, from ``pos``; only then is the
        place where its match (or the earliest pending one) begins checked against the
        body's strings, which the region's tracker reads (JsonStrings by counting
        quotes, ValueSpans by finding delimiters). A match beginning inside a string
        does not count, and no match begins in the string after it: the text up to the
        string's end is region text (given to the region here, into ``events``,
        or with None, as parse_whole does), not searched, and the search goes on after
        it. A string still open when the output ends is searched then (see
        close_in_open_string). Each search starts where the last one stopped, and the
        strings are read once: linear.
        """
        strings = self.strings
        if strings is None:
            strings = self.strings = tracker(
                self.table.by_name[self.current].outside_strings, self.pos
            )
        elif strings.at < self.pos:
            self.strings_read()
        # In a region opened inside a yielding one, the yielding region's close is
        # watched too (and counts, as the region's own, only outside strings).
        watch = self.table.watches[
            self.current if self.resume_to is None else (self.current, self.resume_to)
        ]
        self.held_by = None  # (set only by this scan's own searches, and cleared after)
        given = 0 if events is None else len(events)
        if scan is None:
            scan = self.scan
        while True:
            held, base = self.held()
            n = self.end
            if strings.inside:
                # Nothing begins before the string ends.
                i = strings.at - base
                s = n - base
                if strings.json and i < s and held[s - 1] != "\\" and held.find('"', i, s) < 0:
                    # (skip, written out for the usual piece of a JSON string: no quote)
                    self.examined += s - i
                    strings.at = n
                    strings.pending = False
                    stop = None
                else:
                    stop, read = strings.skip(held, base, n)
                    self.examined += read
                if stop is None:
                    if eos:
                        return self.close_in_open_string(watch)
                    return None, n
                self.region_text(events, stop, given)
            best, hold_start = scan(watch, eos)
            self.held_by = None
            at = hold_start if best is None else best[2].start
            if at >= n:
                self.examined += strings.advance(held, base, n)
                return best, hold_start
            self.examined += strings.advance(held, base, at)
            if not strings.inside:
                return best, hold_start
            self.region_text(events, at, given)

    def close_in_open_string(self, watch):
        """The end of the output, inside a string that never ended (a stray or a cut
        quote, a value with no end): the first match of the close inside that string
        counts after all, so that the text after it is parsed as usual. Returns what
        scan_outside_strings does. The region's text (its body, then the unsent text)
        is searched from where the string began, once; nothing is emitted again."""
        tail = self.tail
        if tail:
            self.body.append("".join(tail))
            tail.clear()
        body = "".join(self.body)
        held, base = self.held()
        text = body + held[self.pos - base :]
        start = self.pos - len(body)
        q = self.strings.value_start(text)
        self.examined += len(text) - q + 1
        self.forget()
        self.pieces = [text]
        self.base = start
        self.pos = start + q
        self.body = [text[:q]]
        best = self.scan(watch, True)[0]
        stop = self.end if best is None else best[2].start
        self.body.append(text[q : stop - start])
        self.pos = stop
        return best, stop

    def strings_read(self):
        """The open region's string tracker, read up to ``pos``. The paths that give text to
        a string-tracking region do not read it for its strings (most tokens of a call
        body can hold no close); what needs them reads the text given since, from the
        region's own text, once: each character is read once."""
        strings = self.strings
        decoded = self.decoded
        if decoded is not None and strings.at < decoded[0] <= self.pos:
            # The body decodes up to there (see strings_keyed and walk_step): it ends
            # outside every string, after no backslash (JSON has none outside strings).
            strings.at, strings.inside, strings.pending = decoded[0], False, False
        need = self.pos - strings.at
        if need > 0:
            tail = self.tail
            if tail:
                self.body.append("".join(tail))
                tail.clear()
            body = self.body
            k = len(body)
            got = 0
            while got < need and k:
                k -= 1
                got += len(body[k])
            text = body[k] if k == len(body) - 1 else "".join(body[k:])
            self.examined += strings.advance(text, self.pos - len(text), self.pos)
        return strings

    def strings_keyed(self, unsent, at):
        """The open region's string tracker read up to ``pos``, for a feed's transition key
        (``unsent``: the text from ``pos``, where a close may begin at ``at``). Before
        they are first read, the body up to ``at`` is decoded instead, once a region: a
        body that decodes ends outside every string (as the walk finds, see walk_step).
        With no backslash just before ``pos`` or after it up to ``at``, every quote
        between toggles, so their count says whether ``pos`` is inside a string. The
        value is kept for the close that begins at ``at`` (see process)."""
        strings = self.strings
        if strings.start == strings.at:
            decode = self.table.by_name[self.current].decode
            if decode is not None and unsent.find("\\", 0, at) < 0:
                strings.start = -1
                tail = self.tail
                if tail:
                    self.body.append("".join(tail))
                    tail.clear()
                head = "".join(self.body)
                self.examined += len(head) + at
                if not head.endswith("\\"):
                    try:
                        value = decode(head + unsent[:at])
                    except (ValueError, RecursionError):
                        pass
                    else:
                        strings.at = self.pos
                        strings.inside = bool(unsent.count('"', 0, at) & 1)
                        self.decoded = (self.pos + at, (value,))
                        return strings
        return self.strings_read()

    def region_text(self, events, stop, given):
        """Give the text from ``pos`` to ``stop`` to the open region (``events`` None:
        a whole-text pass, which makes no events; see give for ``given``)."""
        if stop > self.pos:
            text = self.text(self.pos, stop)
            if events is None:
                self.opened = True
                self.tail.append(text)
            else:
                self.give(events, text, given)
            self.pos = stop

    def give(self, events, text, given):
        """``accumulate``, adding to the region's chunk when the last of ``events`` is
        one made after the first ``given``: a pass through a string-tracking region gives
        the text of the strings it passes, then the rest, as one chunk, as a replay of
        the feed does (see StreamMemo.replay)."""
        if len(events) > given:
            last = events[-1]
            if last["type"] == "region_chunk" and last["field"] == self.current:
                last["text"] += text
                tail = self.tail
                tail.append(text)
                if len(tail) >= _BODY_RUN:
                    self.body.append("".join(tail))
                    tail.clear()
                return
        self.accumulate(events, text)
###}
