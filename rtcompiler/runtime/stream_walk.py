"""The stream's walk: pieces of tens or hundreds of characters, from landmark to landmark.

Standard library only (the ``stream_walk`` section). :class:`StreamWalk` is the part of
``ResponseStream`` that finds the next commit in long unsent text the way the
whole-text pass does (whole.py, ``WholePass.walk``): at the first landmark of the mode,
with each entry's stdlib form, instead of asking every watcher (docs/automaton.md).
"""

from __future__ import annotations

# A generated module defines these in the sections before this one.
from .match import Match
from .whole import _FORM_READ, _SLOW, _WHOLE_READS, _form_match

# isort: split

###{standalone stream_walk


class StreamWalk:
    """``ResponseStream``'s walk (a mixin: the state is the stream's)."""

    __slots__ = ()

    def walk_step(self):
        """The next commit from ``pos``, found as the whole-text walk finds it (see
        WholePass.walk): ``(kind, region, Match)``; ``_HELD`` when an entry pends right
        at ``pos`` (see held_here); or None when the watchers must be asked (then
        nothing is committed here).

        In a walked mode every match begins at a landmark, or in the run of lead
        characters before it, which holds no landmark. So at the first landmark of the
        mode from ``pos``, the earliest of the complete matches its watch entries have
        there (each from its run of lead characters, with its stream form), compared as
        scan compares them, is what scan would commit, when none of them may still
        pend: an entry whose form does not match there, or whose match runs to the end
        of the text (and may grow), or whose longer literal the text may still complete.
        Then the walk stops and scan decides, reading the same text again, unless the
        entry begins at ``pos``, where held_here may tell without it. In a region
        whose close counts only outside the body's JSON strings, a landmark in a string
        is passed over, and only the region's own close is committed; before any of
        its strings is read, a body that decodes as JSON up to the first landmark
        proves that one outside them. So the walk
        reads at most _FORM_READ characters to a landmark, and is asked (see process)
        only where the text held before the last piece is short: a landmark where it
        stops (a header still arriving) is tried again with the next piece, reading at
        most that piece and _QUICK_HELD characters more. What its matches read is
        bounded by _WHOLE_READS times the text, as in the whole-text pass: linear.
        """
        table = self.table
        spots = table.stream_walks.get(self.current)
        if spots is None or self.formed > _WHOLE_READS * self.end:
            return None
        probe = None
        strung = self.current in table.string_modes
        if strung:
            decode = decoded = None
            # A close that counts only outside the body's strings (see
            # scan_outside_strings): they are read up to pos, then, on a copy (the
            # region ends at the commit), up to each landmark. One in a string is region
            # text, as scan_outside_strings finds it: the walk goes on after it.
            strings = self.strings
            if strings is None:
                return None
            # Where a feed's key decoded the body (see strings_keyed): outside every string.
            known_at = -1 if self.decoded is None else self.decoded[0]
            if strings.start == strings.at:
                # Nothing read yet: a body that decodes as JSON up to the first landmark
                # ends outside every string there, as the whole-text walk finds, and its
                # content is the close's (see process). Tried once a region: linear.
                decode = table.by_name[self.current].decode
        pieces = self.pieces
        if len(pieces) == 1:  # held, written out for the usual case
            held, base = pieces[0], self.base
        else:
            held, base = self.held()
        lo = self.pos - base
        n = len(held)
        hi = min(n, lo + _FORM_READ)
        search = table.landmarks.search
        found = search(held, lo, hi)
        while found is not None:
            plan = spots.get(found.group(), _SLOW)
            if plan is not _SLOW:
                if not strung:
                    break
                if found.start() + base == known_at:
                    break
                if decode is not None:
                    strings.start = -1
                    body = "".join(self.body) + "".join(self.tail) + held[lo : found.start()]
                    self.examined += len(body)
                    try:
                        decoded = (found.start() + base, (decode(body),))
                    except (ValueError, RecursionError):
                        decode = None
                    else:
                        break
                if probe is None:
                    probe = self.strings_probe()
                self.examined += probe.advance(held, base, found.start() + base)
                if not probe.inside:
                    break
            found = search(held, found.end(), hi)
        else:
            self.examined += hi - lo
            return None
        at = found.start()
        self.examined += found.end() - lo
        if plan is None:
            return None
        best = None
        best_start = best_end = best_rank = 0
        for kind, region, regex, lead, form, literals, longest, entry, rank in plan:
            if literals is not None and not held.startswith(literals, at):
                if n - at < longest:
                    rest = held[at:n]
                    if any(s.startswith(rest) for s in literals):
                        # One may still be written: where the unsent text begins, the
                        # entry pends there when its beginnings say so.
                        if at == lo and not strung:
                            return self.held_here(regex, entry, held, at, at, n)
                        return None
                continue  # none of its literals here: no match of it begins here
            if regex is None:
                # A fixed literal cannot grow (see can_grow): it commits even where it
                # ends the text, as an output's end-of-turn marker does.
                start, end = at, found.end()
                m = None
            else:
                start = at if lead is None else lead.lead_start(held, lo, at)
                m = (form if start + base or not regex.form_start else regex.captures_first).match(
                    held, start
                )
                if m is None or m.end() >= n:
                    self.formed += n - start
                    if m is None and start == lo and not strung:
                        return self.held_here(regex, entry, held, at, start, n)
                    return None  # (it may pend, or grow)
                end = m.end()
                self.examined += end - start
                self.formed += end - start
            # (scan's order: the earliest start, then the longest match, then ``rank``)
            if best is not None and (
                start > best_start or start == best_start and (
                    end < best_end or end == best_end and rank > best_rank
                )
            ):
                continue
            best_start, best_end, best_rank = start, end, rank
            best = kind, region, regex, m
        if best is None:
            return None
        kind, region, regex, m = best
        start, end = best_start, best_end
        if strung:
            if kind != "close" or region.name != self.current or start != at:
                return None  # (scan_outside_strings decides any other commit)
            if decoded is not None:  # (else a feed's key may have decoded it: strings_keyed)
                self.decoded = decoded
        if m is None:
            return kind, region, Match(start + base, end + base, False)
        return kind, region, _form_match(regex, m, base)

    def strings_probe(self):
        """A copy of the open region's string tracker, read up to pos, to read on from
        there to a landmark (the region's own is not moved past pos: it may not close
        there)."""
        strings = self.strings
        if strings.at < self.pos:
            self.strings_read()
        return strings.copy()

    def held_here(self, regex, entry, held, at, start, n):
        """``_HELD`` when the watch ``entry``, which has no match at ``pos`` (``start``,
        its landmark at ``at``) but may have one there, pends there; else None (scan
        decides). A literal delimiter (``regex`` None) whose literal the text may still
        become pends there.

        It pends there when the text from ``pos`` to the end begins a match (the search
        of its beginnings; not its loose form, which may say so of a text that does
        not) and no other of its literals follows, at which a complete match would be
        its answer instead (see ``answer``). Then nothing can commit and nothing is
        emitted, as scan finds after asking the watchers (a tool-call header still
        arriving): the hold names the entry, as scan's does."""
        if regex is not None:  # (a literal delimiter pends where its beginning stands)
            begins = regex.beginning()
            if begins is None:
                return None
            self.examined += 2 * (n - start)
            if regex.prefilter.find(held, at + 1, n) >= 0 or begins(held, start) is None:
                return None
        self.held_by = (entry, self.pos, self.table.watches[self.current])
        return _HELD


_HELD = object()  # walk_step: a watcher pends at pos (see StreamWalk.held_here)
###}
