"""The whole-text pass: ``parse_response`` on a complete generation, and stdlib forms.

Standard library only (the ``whole`` section). :class:`WholePass` is the part of
``ResponseStream`` that parses a whole text at once: the same commits as feeding it
in one piece, found with one stdlib search for the landmarks and the delimiters'
stdlib forms (``re`` patterns with ``regex``'s spans, see automata/capture.py)
before any scanner steps an automaton. The helpers below turn a form's match into
the engine's :class:`Match`; the stream's answers use them too.
"""

from __future__ import annotations

from .match import Match
from .prefilter import find_literal
from .regions import cut_open_length
from .strings import JsonStrings, tracker

# isort: split

###{standalone whole
import bisect as _bisect

# Unsent text this short that holds a literal is matched with the pattern's stdlib
# form before a scanner is made for it (see ResponseStream.answer).
_FORM_HELD = 96
# Unsent text up to this long is still tried with the stdlib form (its answer is not
# remembered): a feed of a few hundred characters holding a tool-call header found it
# with a scanner, stepped in Python, where the whole-text parse used the form (a 256-
# character feed cost 3.5 times the same text parsed whole). Each try reads at most
# this much, as before at most _FORM_HELD: a constant per answer.
_FORM_READ = 512
_WHOLE_FAILURES = 32  # failed stdlib matches a whole-text parse tries (see complete)
# What the stdlib matches of a whole-text parse may go through, in all: this many times
# the text (see complete). A delimiter's stdlib form reads a bounded number of characters
# past the match it returns (its ``tail`` fact), but a match that another delimiter's
# commit cuts into is looked for again, from further on.
_WHOLE_READS = 4
_SLOW = object()  # ResponseStream.complete: this delimiter goes to its scanner
_NEXT = object()  # WholePass.next_literal's keys in ``whole``, beside the watchers'


def _literal_at(delimiter, held, j, base):
    """The match of the one literal of ``delimiter.fixed`` that begins at ``held[j]``."""
    fixed = delimiter.fixed
    if len(fixed) == 1:
        return Match(j + base, j + base + len(fixed[0]), False)
    for literal in fixed:
        if held.startswith(literal, j):
            return Match(j + base, j + base + len(literal), False)
    raise AssertionError("no literal at the position its prefilter found")


def _form_groups(regex, found, aliases=None):
    """The groups of ``found``, a match of the stdlib form of ``regex`` (or of its lazy
    tail's head, whose ``aliases`` are given), by name (None for one that took no
    part), or None when the pattern names none: each name takes the value of the one
    alias that took part (see automata/capture.py)."""
    names = regex.nfa.group_names
    if not names:
        return None
    values = found.groupdict()
    if aliases is None:
        if regex.plain_groups:
            return values  # (the form's groups are the names, one each)
        aliases = regex.capture_names
    groups = {}
    for name in names:
        value = None
        for alias in aliases.get(name, ()):
            if values[alias] is not None:
                value = values[alias]
        groups[name] = value
    return groups


def _form_match(regex, found, base):
    """The Match for ``found``, a match of the stdlib form of ``regex`` in text that
    begins at absolute position ``base``."""
    return Match(found.start() + base, found.end() + base, False, _form_groups(regex, found))


def _form_captures(regex, found):
    """What a region opened by ``found`` captures: ``Match.captured`` of its Match."""
    if regex.plain_groups:
        return {k: v for k, v in found.groupdict().items() if v is not None}
    groups = _form_groups(regex, found)
    return {} if groups is None else {k: v for k, v in groups.items() if v is not None}


class WholePass:
    """``ResponseStream``'s whole-text pass (a mixin: the state is the stream's)."""

    __slots__ = ()

    def parse_whole(self, text):
        """``parse_response``: the whole generation at once; returns the message.

        The same message as ``feed(text)`` then ``finalize()``: with the text
        complete, whatever a non-final pass commits (a complete match that
        cannot grow, before every pending one) is what the final pass commits
        from the same position, and the message depends only on the commits.
        So the final pass runs alone over the output (the prompt's tail was
        processed as its own chunk, as the reference does) and finds the watched delimiters
        that have a stdlib form with ``re`` (see :meth:`complete`).
        """
        if type(text) is not str:
            text = self.checked(text)
        if self.finalized:
            raise RuntimeError("ResponseParser already finalized")
        if text:
            self.append(text)
        self.whole = {}
        self.failures = self.missed = 0
        self.formed = 0
        self.whole_pass()
        return self.finish()

    def whole_pass(self):
        """``process(events, eos=True)`` for ``parse_whole``: the same commits, in a
        loop of its own that makes no events (nobody reads them) and asks each
        watcher's remembered answer first (see :meth:`complete`)."""
        held, base = self.held()
        table = self.table
        if (
            self.current in table.walks and self.resume_to is None and not self.resumed
            and (self.strings is not None or self.current not in table.string_modes)
            and (self.pos or self.current not in table.start_modes)
            and self.walk(held, base, table.walks)
        ):
            return
        string_modes = table.string_modes
        watches = table.watches
        walks = table.walks
        while self.pos < self.end:  # (at the end, only an empty match: no commit)
            current = self.current
            if current in string_modes:
                found = self.scan_outside_strings(True, None, self.whole_scan)[0]
                best, best_kind, best_region = (
                    (None, None, None) if found is None else (found[2], found[0], found[1])
                )
            else:
                watch = watches[current if self.resume_to is None else (current, self.resume_to)]
                if len(watch) == 1:
                    # (first_complete with one watcher: its answer, nothing to compare)
                    best_kind, best_region, delimiter, watcher = watch[0]
                    best = self.complete(watcher, delimiter)
                    if best is _SLOW:
                        best = self.answer(watcher, delimiter, True)
                else:
                    best, best_kind, best_region = self.first_complete()
            if best is None or best.start >= self.end:
                break  # nothing, or only an empty match at the very end: no commit
            # A commit that leaves a mode the walk does not go through (or stops in)
            # may come back to one it does.
            left = walks and (
                current not in walks or current in string_modes
                or current in table.yielding or not self.pos
            )
            if not self.commit_whole(
                held, base, best.start, best.end, best_kind, best_region,
                best.captured() if best_kind == "open" else None,
            ):
                return
            if (
                left and self.current in table.walks and self.resume_to is None
                and not self.resumed and (self.pos or self.current not in table.start_modes)
                and self.walk(held, base, table.walks)
            ):
                return  # back from a region that is not walked, to the walk
        self.end_whole(held, base)

    def first_complete(self):
        """The earliest match from ``pos`` among the watchers of the mode, with each
        watcher's remembered answer asked first: ``(Match, kind, region)``, or Nones."""
        whole = self.whole
        pos = self.pos
        best = best_kind = best_region = None
        for kind, region, delimiter, watcher in self.table.watches[
            self.current if self.resume_to is None else (self.current, self.resume_to)
        ]:
            cached = whole.get(watcher)
            if (
                cached is not None and cached is not _SLOW and cached[0] <= pos
                and (cached[1] is None or pos <= cached[1].start)
            ):
                m = cached[1]
            else:
                m = self.complete(watcher, delimiter)
                if m is _SLOW:
                    m = self.answer(watcher, delimiter, True)
            # The earliest start wins; ties go by the order of scan's keys.
            if m is not None and (
                best is None or m.start < best.start
                or m.start == best.start and (
                    (m.start - m.end, 0 if kind == "open" else 1, region.rank)
                    < (best.start - best.end, 0 if best_kind == "open" else 1,
                       best_region.rank)
                )
            ):
                best, best_kind, best_region = m, kind, region
        return best, best_kind, best_region

    def whole_scan(self, watch, eos):
        """``scan``'s answer at the end of the output, found by first_complete: for
        scan_outside_strings in a whole-text pass (``watch`` is the mode's)."""
        m, kind, region = self.first_complete()
        return (None if m is None else (kind, region, m)), self.end

    def commit_whole(self, held, base, start, end, kind, region, captures):
        """One commit of a whole-text pass: the text before ``start`` goes to the open
        region, then the match from ``start`` to ``end`` closes it or opens ``region``
        with ``captures`` (None: nothing captured). False for a zero-width close of an
        empty region, which would fire forever: the pass ends there."""
        pos = self.pos
        if start > pos and self.current is not None:
            self.opened = True
            self.tail.append(held[pos - base : start - base])
        self.pos = end
        current = self.current
        if kind == "open":
            self.close_current(None)
            if current in self.table.yielding:
                self.resume_to = current  # it yields to the region: back to it after
            self.open_region(None, region, {} if captures is None else captures)
            return True
        had_content = self.opened
        if region.name != current:
            if self.resume_to is None:
                # The implicit field's close ends a piece of a yielding region.
                self.resume_to = current
            else:
                # The yielding region's close: the region opened in it closes, then it.
                self.close_current(None)
        self.close_current(None)
        return had_content or start != end

    def end_whole(self, held, base):
        """The end of a whole-text pass: the rest goes to the open region, which closes."""
        if self.pos < self.end:
            if self.current is not None:
                rest = self.without_cut_open(held[self.pos - base :])
                if rest:
                    self.opened = True
                    self.tail.append(rest)
            self.pos = self.end
        if self.opened:  # (a region with no text gives nothing, and the pass is over)
            self.close_current(None, True)

    def without_cut_open(self, text):
        """``text``, the end of the output in the open mode, without the beginning of an
        open marker it ends with where the mode's recovering field says so (see
        RegionTable.cut_opens): an output cut inside a marker ends with no text."""
        mode = self.current if self.resume_to is None else (self.current, self.resume_to)
        cut = self.table.cut_opens.get(mode)
        if cut is None:
            return text
        k = cut_open_length(text, cut)
        if k:
            return text[: len(text) - k]
        # The literal whole, then the beginning of the rest of the open: cut at the
        # literal (one search back and one match: linear).
        for literal, regex in self.table.cut_forms[mode]:
            at = text.rfind(literal)
            begins = None if at < 0 else regex.beginning()
            if begins is not None and begins(text, at):
                return text[:at]
        return text

    def walk(self, held, base, walks):
        """``whole_pass`` from one landmark to the next, while the mode is one of
        ``walks`` (every match of every watcher begins where one of its literals
        does): the first landmark at which a watcher of the mode matches holds the
        earliest match, found without asking each watcher for its next one.

        True when the pass is done; False, with every commit so far made, when the
        rest is left to the watcher-by-watcher loop: in a mode that is not walked,
        or after the failed stdlib matches ``complete`` allows.
        """
        lo = self.pos - base
        table = self.table
        implicit = table.implicit
        yielding = table.yielding
        close_with = self.close_with
        # The stream's state, kept in locals while walking: the open region's name and
        # captures are written back before close_with (which reads them), all of it
        # before returning.
        pos, current, opened, captures = self.pos, self.current, self.opened, self.captures
        by_literal = walks[current]
        # In a region whose close counts only outside strings, its body's strings, read
        # up to each landmark of the close (see ResponseStream.scan_outside_strings). In
        # one opened here whose strings are values between delimiters, first their plan
        # (ValueSpans.prepare, a tuple): its first landmark is read with one match, and a
        # tracker is made only if the walk goes on in the region (most often that
        # landmark is its close). ``spans_read``: that landmark was read.
        string_modes = table.string_modes
        strings = self.strings_read() if current in string_modes else None
        spans_read = False
        # The open region's body decoder while its first close landmark is ahead (see
        # Region.decode); where the body decoded there ends, the body, and (its content,).
        decode = decoded_at = body = decoded = None
        before = bool(self.body or self.tail)  # text the prompt's tail left in the region
        done = True  # False: the loop goes on from here
        cut = False
        reads = _WHOLE_READS * self.end - self.formed  # what stdlib matches may go through
        examined = 0  # (added to self.examined on the way out)
        again = lo  # where the search for landmarks (re)starts
        while again is not None:
            lo_search, again = again, None
            for found in table.landmarks.finditer(held, lo_search):
                spot = by_literal.get(found.group())
                if spot is None:
                    continue
                at = found.start()
                if at + base < pos:
                    continue
                if strings is not None:
                    if type(strings) is tuple:
                        if spans_read:
                            # (A later landmark: the body is read again, once, by a tracker.)
                            strings = tracker(strings, pos)
                            examined += strings.advance(held, base, at + base)
                            inside = strings.inside
                        else:
                            spans_read = True
                            m = strings[0].match(held, pos - base, at)  # (ValueSpans.advance)
                            examined += at + base - pos
                            inside = m is not None and m.start(1) >= 0
                            if inside:
                                strings = tracker(strings, pos)
                        if inside:
                            done = False  # (in a value: as below)
                            break
                    else:
                        if decode is not None:
                            # The region's first landmark of a close: a body that decodes
                            # as JSON ends outside every string, so the landmark does too.
                            body = held[pos - base : at]
                            try:
                                decoded = (decode(body),)
                            except (ValueError, RecursionError):
                                pass  # the strings are read, as in any body
                            else:
                                decoded_at = strings.at = at + base
                                examined += at + base - pos
                            decode = None
                        if decoded_at != at + base:
                            examined += strings.advance(held, base, at + base)
                        if strings.inside:
                            # A close written in a string: the loop gives the string to
                            # the region and looks on after it, or in it if it never ends.
                            done = False
                            break
                entries, single, longer, early = spot
                if single is not None:
                    kind, region, form, lead, named, literals, otherwise = single
                    if form is None:
                        start, end, caught = at + base, found.end() + base, None
                    elif literals is not None and not held.startswith(literals, at):
                        # None of the form's literals here: the literals' winner.
                        kind, region = otherwise
                        start, end, caught = at + base, found.end() + base, None
                    else:
                        # (best_at for one delimiter: its match begins at the landmark,
                        # or at the run of its lead characters before it.)
                        if reads < 0:
                            done = False
                            break
                        t = at if lead is None else lead.lead_start(held, pos - base, at)
                        # (form_at, written out: a call less a landmark)
                        matched = (
                            form.captures if t + base or form.captures_first is None
                            else form.captures_first
                        ).match(held, t)
                        if matched is None:
                            if t != at or self.failed_form(form):
                                # (after a lead, a later start may match: the loop asks
                                # the delimiter's scanner)
                                done = False
                                break
                            if otherwise is None:
                                continue
                            kind, region = otherwise
                            start, end, caught = at + base, found.end() + base, None
                        else:
                            self.missed = 0
                            end = matched.end()
                            examined += end - t
                            reads -= end - t
                            start, end = t + base, end + base
                            caught = (
                                _form_captures(form, matched) if named and kind == "open"
                                else None
                            )
                else:
                    self.pos = pos
                    self.formed = _WHOLE_READS * self.end - reads
                    best = self.best_at(held, base, found, at, entries, longer)
                    reads = _WHOLE_READS * self.end - self.formed
                    if best is None:
                        continue
                    if best is False:
                        done = False
                        break
                    start, end, kind, region, regex, matched = best
                    caught = (
                        _form_captures(regex, matched) if kind == "open" and matched is not None
                        else None
                    )
                if yielding and current in yielding and (kind == "open" or region.name != current):
                    # A commit that yields, or ends a piece: the loop makes it.
                    done = False
                    break
                # The commit: commit_whole, written out (a few calls less a landmark).
                had_content = opened
                if current is not None and (opened or start > pos):
                    had_content = True
                    self.current, self.captures = current, captures
                    if decoded_at is not None and decoded_at == start:
                        # (A region the walk opened: no text of the prompt's tail is in it.)
                        close_with(body, None, False, decoded)
                    else:
                        text = held[pos - base : start - base]
                        if before:
                            text = "".join(self.body) + "".join(self.tail) + text
                            self.body, self.tail = [], []
                            before = False
                        close_with(text, None)
                elif before:
                    self.body, self.tail = [], []
                    before = False
                pos = end
                if kind == "open":
                    current, opened = region.name, True
                    captures = {} if caught is None else caught
                    if region.outside_strings is True:
                        strings = JsonStrings(pos)
                        decode, decoded_at = region.decode, None
                    elif region.outside_strings:
                        strings, spans_read = region.outside_strings, False
                    else:
                        strings = None
                else:
                    current, captures, opened = implicit, {}, False
                    if strings is not None:  # (else decode and decoded_at are None too)
                        strings = decode = decoded_at = None
                    if not (had_content or start != end):
                        # A zero-width close of an empty region would fire forever: the
                        # pass ends here, the rest unread.
                        cut = True
                        break
                by_literal = walks.get(current)
                if by_literal is None or not pos and current in table.start_modes:
                    # A mode not walked, or walked past the start only: the loop goes on
                    # from here.
                    done = False
                    break
                if early and end - base < found.end():
                    # A match that ends before its landmark does, at a lookahead (Mistral's
                    # call closed where the next one opens): the next mode's landmark may
                    # begin where it ends, so the search starts again there.
                    again = end - base
                    break
            else:
                found = None
        # The search for landmarks read up to where the walk stopped, or to the end: a
        # walk left at a region that is not walked is entered again after it.
        self.examined += examined + (len(held) if found is None else found.end()) - lo
        self.pos, self.current, self.captures, self.opened = pos, current, captures, opened
        self.strings = tracker(strings, pos) if type(strings) is tuple else strings
        self.formed = _WHOLE_READS * self.end - reads
        self.danger, self.dirty = table.modes[current]
        if done and not cut:
            self.end_whole(held, base)
        return done

    def best_at(self, held, base, found, at, entries, longer=None):
        """The walk's choice among the watch ``entries`` whose literal is ``found``
        (at ``at`` in ``held``): ``(start, end, kind, region, regex, stdlib match)``,
        None when none matches there, False when the rest is left to the loop."""
        # Candidates as tuples: (start, end, kind, region, regex, stdlib match).
        best = None
        for k, (kind, region, delimiter, _) in enumerate(entries):
            if longer is not None and longer[k] is not None and not held.startswith(
                longer[k], at
            ):
                continue  # none of its literals here: no match of it begins here
            if delimiter.fixed is not None:
                start, end, regex, matched = at + base, found.end() + base, None, None
            else:
                regex = delimiter.later
                # (complete's attempt: from the run of lead characters before.)
                t = regex.prefilter.lead_start(held, self.pos - base, at)
                if self.formed > _WHOLE_READS * self.end:
                    return False
                matched = (
                    regex.captures if t + base or regex.captures_first is None
                    else regex.captures_first
                ).match(held, t)
                if matched is None:
                    if t != at:
                        return False  # a later start may match: its scanner decides
                    if self.failed_form(regex):
                        return False
                    continue
                self.missed = 0
                self.examined += matched.end() - t
                self.formed += matched.end() - t
                start, end = matched.start() + base, matched.end() + base
            # The earliest start wins; ties (one literal opening two regions) go
            # as in whole_pass.
            if best is None or start < best[0] or start == best[0] and (
                (start - end, 0 if kind == "open" else 1, region.rank)
                < (best[0] - best[1], 0 if best[2] == "open" else 1, best[3].rank)
            ):
                best = (start, end, kind, region, regex, matched)
        return best

    def complete(self, key, delimiter):
        """The leftmost complete match from ``pos`` to the end, found with ``re``
        (the text is whole), or ``_SLOW`` when only the delimiter's scanner can tell.

        For a pattern with a stdlib form (rtcompiler/automata/capture.py: ``re``
        takes the same first successful path from a start as ``regex``) whose
        prefilter has no bounded lead, every match holds a literal preceded only
        by lead characters: no match begins before the run of lead characters
        ending where the first literal begins. A match tried there, once, is
        then the leftmost; if it fails, the scanner decides. An answer holds
        until ``pos`` passes the match's start.

        Linear time: the form reads each character a bounded number of times per
        attempt and a bounded number past the match it returns (its ``linear`` and
        ``tail`` facts, rtcompiler/automata/linearity.py); no ``re`` search is ever
        retried from start to start; a bounded number of matches may fail (each
        may read to the end), and the successful ones may go through at most
        ``_WHOLE_READS`` times the text in all. Past either bound, the scanners.
        """
        cached = self.whole.get(key)
        pos = self.pos
        if cached is not None:
            if cached is _SLOW:
                return _SLOW
            at, m = cached
            if at <= pos and (m is None or pos <= m.start):
                return m
        regex = delimiter.regex
        if pos:
            if regex.nfa.anchored:
                self.whole[key] = (pos, None)  # (see ResponseStream.answer)
                return None
            if regex.late is not None:
                regex = regex.late
        elif regex.late is not None and regex.form_start:
            # At the start: a match that reads ^ begins there, so a match there, tried with
            # the form with \A, is the leftmost; else none begins there, and the leftmost is
            # the later pattern's (see ResponseStream.answer).
            held, base = self.held()
            found = regex.captures_first.match(held, 0) if not base else None
            if found is not None:
                self.examined += found.end()
                m = _form_match(regex, found, base)
                self.whole[key] = (pos, m)
                return m
            if not base:
                regex = regex.late
        pre = regex.prefilter
        if delimiter.fixed is not None:
            # Literals none of which begins another: the first one found is the match.
            pieces = self.pieces
            held, base = (pieces[0], self.base) if len(pieces) == 1 else self.held()
            lo = pos - base
            n = len(held)
            if self.table.landmarks is None:
                # (find_whole's own search, written out: two calls less on a whole
                # parse's usual close)
                hit = pre.find(held, lo, n)
                self.examined += (n if hit < 0 else hit) - lo
            else:
                hit = self.find_whole(pre, held, lo, n)
            m = None if hit < 0 else _literal_at(delimiter, held, hit, base)
            self.whole[key] = (pos, m)
            return m
        form = regex.captures
        if (
            form is None or pre is None or pre.lead or not regex.tail
            or self.formed > _WHOLE_READS * self.end
        ):
            if regex.lazy_tail is not None and pre is not None and not pre.lead and (
                self.formed <= _WHOLE_READS * self.end
            ):
                return self.complete_lazy_tail(key, regex)
            if regex.branches is not None and self.formed <= _WHOLE_READS * self.end:
                return self.complete_branches(key, regex)
            self.whole[key] = _SLOW
            return _SLOW
        form = regex.form_at(pos)
        held, base = self.held()
        lo = pos - base
        n = len(held)
        while True:
            hit = self.find_whole(pre, held, lo, n)
            if hit < 0:
                self.whole[key] = (pos, None)
                return None
            t = pre.lead_start(held, lo, hit)
            self.examined += hit - t
            if regex.apart:
                # Attempts read apart (no loop reads where one can begin): one search
                # tries every later start in linear time, and near-misses of the
                # literal stay at C speed instead of failing over to the scanner.
                found = form.search(held, t)
                if found is None:
                    self.examined += n - t
                    self.whole[key] = (pos, None)
                    return None
                break
            found = form.match(held, t)
            if found is not None:
                break
            # No match begins at t. When t is the literal's own start, none
            # begins before the next literal's run of lead characters either:
            # try there, a bounded number of times a parse (a failed match
            # may have read far; see failed_form), then leave the delimiter to
            # its scanner.
            if t != hit or self.failed_form(regex):
                self.whole[key] = _SLOW
                return _SLOW
            lo = hit + 1
        self.missed = 0
        self.examined += found.end() - t
        self.formed += found.end() - t
        m = _form_match(regex, found, base)
        self.whole[key] = (pos, m)
        return m

    def failed_form(self, regex):
        """Counts a stdlib match of ``regex`` that failed in a whole-text parse; True when
        the parse has tried enough of them (the scanners take over).

        A failed match may read far: a parse tries a bounded number in all. Where no
        loop reads where a literal begins (``form_runs``) each reads a bounded stretch,
        so only failures in a row count: nested JSON objects end in a "}" that is not
        Llama 3's call close, a few a call; many in a row (a value full of near-misses
        of a close) are stepped faster by the scanner, which jumps over literals."""
        if regex.form_runs:
            self.missed += 1
            return self.missed > _WHOLE_FAILURES
        self.failures += 1
        return self.failures > _WHOLE_FAILURES

    def complete_lazy_tail(self, key, regex):
        """:meth:`complete` for a pattern ``head S*? literal`` (``regex.lazy_tail``): the
        head's stdlib form at the first literal of the prefilter, then the first
        ``literal`` after it, found with ``str.find`` (automata/capture.py,
        lazy_tail_pattern, says why that is the match). Where that does not settle
        it (no literal after the head's match, or a character outside ``S`` before
        it), the scanner decides. Linear: the head reads a bounded number of
        characters past its match, and the stretch is read once by ``str.find``.
        """
        head, aliases, literal, excluded = regex.lazy_tail
        pre = regex.prefilter
        pos = self.pos
        pieces = self.pieces
        held, base = (pieces[0], self.base) if len(pieces) == 1 else self.held()
        lo = pos - base
        n = len(held)
        # With no landmarks search to answer from, the prefilter's own (a few calls less).
        find = self.find_whole if self.table.landmarks is not None else None
        while True:
            if find is None:
                hit = pre.find(held, lo, n)
                self.examined += (n if hit < 0 else hit) - lo
            else:
                hit = find(pre, held, lo, n)
            if hit < 0:
                self.whole[key] = (pos, None)
                return None
            found = head.match(held, hit)
            if found is not None:
                break
            # No match begins at a literal where the head fails, nor before the next one.
            self.failures += 1
            if self.failures > _WHOLE_FAILURES:
                self.whole[key] = _SLOW
                return _SLOW
            lo = hit + 1
        middle = found.end()
        at = find_literal(held, literal, middle, len(held))
        if at < 0:
            if held.find(literal, hit) < 0:
                # Every match holds the literal after its start: none from here on.
                self.examined += n - hit
                self.whole[key] = (pos, None)
                return None
            self.whole[key] = _SLOW
            return _SLOW
        for c in excluded:
            if held.find(c, middle, at) >= 0:
                self.whole[key] = _SLOW
                return _SLOW
        end = at + len(literal)
        self.examined += end - hit
        self.formed += end - hit
        m = Match(
            hit + base, end + base, False,
            found.groupdict() if aliases is None else _form_groups(regex, found, aliases),
        )
        self.whole[key] = (pos, m)
        return m

    def complete_branches(self, key, regex):
        """:meth:`complete` for an alternation whose alternatives have stdlib forms or are
        lookaheads of literals (``regex.branches``, automata/search.py ``branch_forms``):
        each alternative's leftmost match (a form matches where one of its literals
        begins; a lookahead, empty, where its literal does); the earliest wins, and at
        one start the first in order. Where the literal occurs next is remembered per
        literal, so that a literal far ahead is looked for once a parse, not once a call.
        """
        pos = self.pos
        held, base = self.held()
        lo = pos - base
        whole = self.whole
        best = None
        for form, literals, ahead in regex.branches:
            at = lo
            while True:
                hit = -1
                for literal in literals or (ahead,):
                    j = self.next_literal(whole, held, literal, at)
                    if j >= 0 and (hit < 0 or j < hit):
                        hit = j
                if hit < 0 or best is not None and hit >= best[0]:
                    break  # none, or none before an earlier alternative's
                if form is None:
                    best = (hit, hit)
                    break
                found = form.match(held, hit)
                if found is not None:
                    self.examined += found.end() - hit
                    self.formed += found.end() - hit
                    best = (hit, found.end())
                    break
                self.failures += 1
                if self.failures > _WHOLE_FAILURES:
                    whole[key] = _SLOW
                    return _SLOW
                at = hit + 1
        m = None if best is None else Match(best[0] + base, best[1] + base, False)
        whole[key] = (pos, m)
        return m

    def next_literal(self, whole, held, literal, at):
        """Where ``literal`` next occurs in ``held`` from ``at`` on (-1: nowhere), looked
        up in what an earlier search from no further on found (kept in ``whole``, at
        absolute positions: see find_whole)."""
        base = self.base
        known = whole.get((_NEXT, literal))
        if known is not None and known[0] <= at + base and (known[1] < 0 or known[1] >= at + base):
            return known[1] if known[1] < 0 else known[1] - base
        j = held.find(literal, at)
        self.examined += (len(held) if j < 0 else j) - at
        whole[_NEXT, literal] = (at + base, j if j < 0 else j + base)
        return j

    def find_whole(self, pre, held, lo, hi):
        """``pre.find`` over the whole text, answered from one search for every
        delimiter's literals (the table's landmarks) when there is one.

        Counts what it reads in ``examined``: the text up to the hit (or ``hi``)
        for a search of its own; the landmarks' one pass, once a parse. ``held``
        begins at ``base``; the landmarks are kept at absolute positions, since a
        string that never ends (close_in_open_string) rebases the held text.
        """
        marks = self.marks
        base = self.base
        if marks is None:
            landmarks = self.table.landmarks
            if landmarks is None:
                return self._find_counted(pre, held, lo, hi)
            marks = self.marks = {}
            for m in landmarks.finditer(held, lo):
                marks.setdefault(m.group(), []).append(m.start() + base)
            self.marks_from = lo + base
            self.examined += len(held) - lo
        if lo + base < self.marks_from or not all(
            self.table.landmark_of[literal] == literal for literal in pre.literals
        ):
            # (A literal found by a shorter one's landmark is searched for itself.)
            return self._find_counted(pre, held, lo, hi)
        best = -1
        for literal in pre.literals:
            starts = marks.get(literal)
            if starts:
                i = _bisect.bisect_left(starts, lo + base)
                if i < len(starts) and starts[i] < hi + base - len(literal) + 1:
                    if best < 0 or starts[i] < best:
                        best = starts[i]
        return best if best < 0 else best - base

    def _find_counted(self, pre, held, lo, hi):
        hit = pre.find(held, lo, hi)
        self.examined += (hi if hit < 0 else hit) - lo
        return hit
###}
