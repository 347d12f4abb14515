"""What each watched delimiter answers from ``pos``: the stream's search for a commit.

Standard library only (the ``answers`` section). :class:`WatcherAnswers` is the part of
``ResponseStream`` that asks the watchers of the mode, each the question transformers
asks (the leftmost complete match, or where a match might still begin), the cheapest
way first: a fixed delimiter's ``str.find``, a stdlib form over short unsent text, the
branches of an alternation, and only then the watcher's scanner, which keeps its state
across feeds. ``scan`` takes their answers to the commit: the earliest complete match
that starts before every pending one, or where the held text begins.
"""

from __future__ import annotations

# A generated module defines these in the sections before this one.
from .match import Match
from .whole import _FORM_HELD, _FORM_READ, _SLOW, _form_match, _literal_at

# isort: split

###{standalone answers
# Held text short enough to search again, with the new piece, in one stdlib call.
_QUICK_HELD = 64
_QUICK_PIECE = 256  # longer pieces go to the scanners, which skip text at C speed
# Unsent text this short is answered for without a scanner while it holds no
# literal (see answer); beyond it a scanner, which keeps its state, takes over,
# so that a long pending run is not re-read on every feed.
_SHORT_HELD = 16
_PEND_STOPS_SCAN = True  # see scan (tests switch it off for a baseline)
_NEXT_LITERALS = 4  # literals answer tries after the first, where a simple pattern fails
# ... where it is known which of them pend and each try reads a bounded stretch (see
# answer; Llama 3's arguments hold many a "}" of their own).
_SETTLED_LITERALS = 16


def _stands(regex, found, held, t):
    r"""Whether ``found``, a match at ``t`` of the stream form of ``regex`` (``$`` never
    holds), is the streamed answer: the form where ``$`` holds at the end of the text so
    far takes the same path. Otherwise a path through ``$`` comes first, which holds if
    the output ends there (Llama 3's ``\}\s*(?:…|$)`` before ``\}(?=\n)``)."""
    other = regex.captures.match(held, t)
    return (
        other is not None and other.span() == found.span()
        and other.groupdict() == found.groupdict()
    )


class WatcherAnswers:
    """``ResponseStream``'s answers from its watchers (a mixin: the state is the stream's)."""

    __slots__ = ()

    def scanner(self, key, delimiter):
        """The watcher's scanner, searching from ``pos`` and caught up with the buffer.

        A scanner outlives the mode that made it: when the machine comes back
        to watching its delimiter, the text it already stepped through stays
        stepped, as long as no attempt it holds began before ``pos``. Returns
        None, making none, when the delimiter's prefilter shows that a search
        from ``pos`` would find nothing to commit or hold.
        """
        scanner = self.scanners.get(key)
        pos = self.pos
        if scanner is not None and scanner.start != pos:
            if scanner.pos < pos:
                scanner = None  # it never saw the text from pos on: nothing to redo
            elif not scanner.rebase(pos):
                scanner = None
                self.rescans += 1
            if scanner is None:
                retired = self.scanners.pop(key)
                self.retired_steps += retired.steps
                self.retired_searched += retired.searched
        end = self.end
        if scanner is None:
            held, base = self.held()
            pre = delimiter.regex.prefilter
            if (
                pre is not None and pos < end <= pos + _QUICK_HELD + _QUICK_PIECE
                and pre.quiet(held, pos - base, end - base)
            ):
                self.examined += end - pos
                return None
            scanner = delimiter.regex.bare_scanner(held, pos - base, pos, self.held)
            self.scanners[key] = scanner
        if scanner.pos < end:
            if scanner.pos == self.fresh_start:
                scanner.advance(self.fresh, 0, len(self.fresh))
            else:
                held, base = self.held()
                scanner.advance(held, scanner.pos - base, end - base)
        return scanner

    def scan(self, watch, eos):
        """The earliest commit among the watchers' answers from ``pos``: ``((kind,
        region, Match) or None, where the held text begins)``. (In a region whose close
        counts only outside strings, scan_outside_strings asks it, then checks.)"""
        n = self.end
        held_by = self.held_by
        if held_by is not None and not eos and held_by[1] == self.pos and held_by[2] is watch:
            # The last scan held the text from here because of one watcher, and
            # the machine moved here. Every search now starts here, so while
            # that watcher still pends here nothing can commit (a match must
            # begin before every pending one): ask it alone. The others catch
            # up when they are asked again (scanners step on from where they
            # stopped; literals resume where they were last searched).
            _, _, delimiter, watcher = held_by[0]
            if self.pends_here(watcher, delimiter)[1]:
                return None, self.pos
        self.held_by = None
        best_key = None
        best = None
        hold_start = n
        holder = None
        whole = self.whole if eos else None
        known = self.known
        if known is not None:
            self.known = None
        # Short unsent text (a token or two): a watcher whose danger search finds
        # nothing in it has nothing to answer, and costs one stdlib call instead
        # of a search of its own. Longer text goes to the watchers, which do not
        # read again what they have read.
        short = whole is None and n - self.pos <= _FORM_HELD
        if short:
            held, base = self.held()
            lo = self.pos - base
            self.examined += n - self.pos
        for entry in watch:
            kind, region, delimiter, watcher = entry
            if known is not None and known[0] is watcher:
                m = known[1]
            elif short and delimiter.danger is not None and delimiter.danger(held, lo) is None:
                continue
            else:
                m = _SLOW if whole is None else self.complete(watcher, delimiter)
                if m is _SLOW:
                    m = self.answer(watcher, delimiter, eos)
            if m is None:
                continue
            if not eos and (m.partial or self.can_grow(delimiter, m, n)):
                if m.start < hold_start:
                    hold_start, holder = m.start, entry
                    if hold_start == self.pos and _PEND_STOPS_SCAN:
                        # Pending where every search starts: nothing can commit (a
                        # match must begin before every pending one) and nothing is
                        # emitted, whatever the others answer. They are not asked;
                        # they catch up when next asked, as with held_by.
                        break
                continue
            key = (m.start, m.start - m.end, 0 if kind == "open" else 1, region.rank)
            if best_key is None or key < best_key:
                best_key, best = key, (kind, region, m)
        if best is not None and best[2].start >= hold_start:
            best = None
        if best is None and holder is not None and whole is None:
            self.held_by = (holder, hold_start, watch)
        return best, hold_start

    def pends_here(self, watcher, delimiter):
        """The watcher's answer from ``pos``, and whether its delimiter still pends
        (partial, or able to grow) there: then nothing can commit or be emitted."""
        m = self.answer(watcher, delimiter, False)
        return m, m is not None and m.start == self.pos and (
            m.partial or self.can_grow(delimiter, m, self.end)
        )

    def answer(self, watcher, delimiter, eos):
        """One watcher's answer from ``pos``, as ``regex``'s search would give it
        (partial unless ``eos``): a Match, or None."""
        if delimiter.fixed is not None:
            return self.fixed_search(watcher, delimiter, eos)
        regex = delimiter.regex
        if self.pos:
            if regex.nfa.anchored:
                # (DeepSeek's "^<think>": a match begins at the start of the text only,
                # and a scanner made later would die at its first step, answering nothing.)
                return None
            if regex.late is not None:
                regex = regex.late  # (its scanner, if any, is still the pattern's own)
        elif regex.form_start and (eos or regex.captures_stream is not None):
            # At the start, the text held begins the output: the form with \A tried there,
            # where the leftmost match would begin (Llama 3's first call, "{" first).
            held, base = self.held()
            found = regex.captures_first.match(held, 0)
            if found is not None:
                self.examined += found.end()
                return _form_match(regex, found, base)
            if (
                regex.nfa.anchored and regex.first_beginning is not None
                and self.end <= _FORM_HELD
            ):
                # Every attempt begins here (DeepSeek's "^<think>"): it pends exactly
                # when the text begins a match, with no scanner. (Over short text only:
                # a long run pending under "^\s*" is stepped once, by the scanner.)
                if eos:
                    return None
                self.examined += self.end - self.pos
                if regex.first_beginning(held, 0) is None:
                    return None
                return Match(base, self.end, True)
        pre = regex.prefilter
        key = None
        span = self.end - self.pos
        if pre is not None and (pre.simple or regex.branch_search) and span <= _FORM_READ:
            scanner = self.scanners.get(watcher)
            if scanner is None or scanner.pos < self.pos:
                # Short unsent text and no scanner to go on with. A search from pos
                # answers according to the text from there and the character
                # before it alone, so a regex remembers what it answered, when that
                # was no match or a partial one (a complete match has groups to
                # read) and the text held a literal or was held by this delimiter:
                # a header met before (the same tool's, in an earlier answer) is
                # answered with one lookup per token. The holder asks first.
                held_by = self.held_by
                short = span <= _FORM_HELD  # answers are remembered for short text only
                if short and not eos and held_by is not None and held_by[0][3] is watcher:
                    key = self.answer_key(regex)
                    known = regex.partials.get(key)
                    if known is not None:
                        return None if known < 0 else Match(self.pos + known, self.end, True)
                held, base = self.held()
                lo = self.pos - base
                n = len(held)
                # A simple pattern (a lead loop then a literal, or a literal first)
                # matches only where a literal is, preceded by lead characters alone.
                # Text known to hold no literal is not searched again (as in
                # fixed_search): a watcher asked again from a later pos within one
                # feed, after each piece of markup before it, reads the rest once.
                seen = self.fixed_seen.get(watcher)
                if seen is not None and seen[0] <= self.pos <= seen[1]:
                    known, s = seen[0], seen[1] - base
                else:
                    known, s = self.pos, lo
                j = pre.find(held, s, n)
                sure = n - pre.heads_reach if j < 0 else min(j, n - pre.heads_reach)
                self.fixed_seen[watcher] = (known, max(s, sure) + base)
                if not pre.simple:
                    m = self.branch_answer(regex, pre, eos, held, base, s, j)
                    if m is not _SLOW:
                        return m
                elif j < 0:
                    # No literal, no match; what pends is known from the literals'
                    # beginnings and the lead (Prefilter.pending), as in the quick
                    # path of feed. Over longer text a scanner, which keeps its
                    # state, takes over: a pending run is not re-read every feed.
                    # (With no lead class, what pends is the beginning of a literal,
                    # shorter than the literal: no run is read again and again, only
                    # held text, the text before the last piece, bounded here.)
                    if eos or n - lo <= _SHORT_HELD or (
                        pre.lead_class is None and self.fresh_start - self.pos <= _FORM_HELD
                    ):
                        self.examined += n - s
                        if eos:
                            return None
                        p = pre.pending(held, lo)
                        # (With no lead class it reads the last heads_reach characters
                        # alone; otherwise the run of lead characters before them too.)
                        self.examined += (
                            n - lo if pre.lead_class is not None else min(n - lo, pre.heads_reach)
                        )
                        if key is not None:  # asked by the holder: kept (see above)
                            self.remember_answer(regex, key, p + base - self.pos if p < n else -1)
                        return Match(p + base, self.end, True) if p < n else None
                    if pre.lead_class is not None:
                        # Longer text with a lead: what pends is the run of lead
                        # characters at the end (and a literal's beginning after it),
                        # read from the end. When that run is short, so is the read;
                        # a long run (which the scanner steps once) goes on below.
                        near = max(lo, n - pre.heads_reach - _SHORT_HELD)
                        p = pre.pending(held, near)
                        self.examined += n - s + n - near
                        if p > near or near == lo:
                            return Match(p + base, self.end, True) if p < n else None
                elif regex.captures is not None and (eos or regex.captures_stream is not None):
                    # A literal: the leftmost match, if any, begins where the run of
                    # lead characters before it does. The stdlib form takes the same
                    # path as regex there, on the text so far (a complete match is
                    # what the search answers even while a longer one may still
                    # come; see Scanner.result). If none begins there, the scanner
                    # decides, partial matches included.
                    t = pre.lead_start(held, lo, j)
                    found = regex.form_at(t + base, eos).match(held, t)
                    self.examined += (j - s) + (j - t) + (0 if found is None else found.end() - j)
                    if found is not None:
                        if eos or not regex.form_dollar or _stands(regex, found, held, t):
                            return _form_match(regex, found, base)
                        # (Else a path through $ comes first, which may hold where the
                        # output ends: the scanner decides.)
                    else:
                        # No match begins in the run of lead characters before j either (a
                        # later start there reads the same literal and rest). One may pend
                        # at t, but a complete match further on is the answer even so
                        # (search rule 1): the next literals are tried (a close
                        # "</tool_call>\s*|</function>\s*<\|im_end\|>" fails at "</function>"
                        # and matches at the "</tool_call>" after it; the nested objects of
                        # Llama 3's arguments end in "}" too). Where it is known which
                        # attempts pend (the search of the beginnings says so; its loose
                        # form only that none does), and no literal is left, the answer is
                        # the first that pends, or else what pends at the end, after them.
                        # Each try reads a bounded stretch where no loop of the form reads
                        # a literal's beginning (form_runs): then up to _SETTLED_LITERALS.
                        begins = regex.beginning()
                        pends = None if eos else begins or regex.loose_beginning()
                        first = None
                        if pends is not None:
                            self.examined += n - t
                            if pends(held, t) is not None:
                                first = t
                        settled = eos or pends is not None and (begins is not None or first is None)
                        k = last = j
                        limit = _SETTLED_LITERALS if regex.form_runs else _NEXT_LITERALS
                        for tries in range(limit):
                            if tries == _NEXT_LITERALS and not settled:
                                break
                            k = pre.find(held, k + 1, n)
                            self.examined += (n if k < 0 else k) - last
                            if k < 0:
                                break
                            last = k
                            u = pre.lead_start(held, lo, k)
                            found = regex.form_at(u + base, eos).match(held, u)
                            if found is not None:
                                self.examined += found.end() - u
                                if eos or not regex.form_dollar or _stands(regex, found, held, u):
                                    return _form_match(regex, found, base)
                                settled = False  # (see above: the scanner decides)
                                break
                            if settled and pends is not None:
                                self.examined += n - u
                                if pends(held, u) is not None:
                                    if begins is None:
                                        settled = False
                                    elif first is None:
                                        first = u
                        if settled and k < 0 and (
                            first is None
                            or n - first <= _FORM_HELD and len(self.fresh) >= _QUICK_HELD
                        ):
                            # (A header that pends after a short piece goes on to its scanner,
                            # which steps each later piece alone; see below.)
                            if eos:
                                return None
                            if first is not None:
                                return Match(first + base, self.end, True)
                            p = pre.pending(held, last + 1)
                            self.examined += n - last
                            return Match(p + base, self.end, True) if p < n else None
                        if short and not eos and key is None:
                            key = self.answer_key(regex)
                            known = regex.partials.get(key)
                            if known is not None:
                                return (
                                    None if known < 0
                                    else Match(self.pos + known, self.end, True)
                                )
                        if (
                            not eos and n - t <= _FORM_HELD and len(self.fresh) >= _QUICK_HELD
                            and regex.beginnings is not None and pre.find(held, j + 1, n) < 0
                        ):
                            # No match from t, the leftmost start an attempt can have
                            # (above); none can begin after it without a literal of its own.
                            # So the search pends at t exactly when the rest of the text
                            # begins a match (a header cut by the end of a long piece): the
                            # stdlib search of the beginnings says so, where a scanner
                            # would step the header in Python. If it does not, the scanner
                            # looks on. (Pieces shorter than _QUICK_HELD keep the scanner,
                            # which steps each new piece alone.)
                            self.examined += (n - j) + (n - t)
                            if regex.beginning()(held, t) is not None:
                                if key is not None:
                                    self.remember_answer(regex, key, t + base - self.pos)
                                return Match(t + base, self.end, True)
        scanner = self.scanner(watcher, delimiter)
        if scanner is None or (scanner.best is None and scanner.quiet()):
            m = None  # no match, and nothing pending before the end
        else:
            m = scanner.result(partial=not eos)
        if key is not None:
            if m is None:
                self.remember_answer(regex, key, -1)
            elif m.partial and self.pos <= m.start < self.end:
                self.remember_answer(regex, key, m.start - self.pos)
        return m

    def branch_answer(self, regex, pre, eos, held, base, s, j):
        """:meth:`answer` for an alternation whose branches have stdlib forms or are
        lookaheads of literals (``regex.branch_search``), without a scanner, given the
        first whole literal ``j`` from ``s`` (-1: none; answer found it): _SLOW where
        the forms do not settle it.

        Every match begins with a literal, so the first whole literal from ``pos`` is
        where the leftmost match can begin, and there the first branch in order that
        matches wins. With no whole literal, what pends is a literal's beginning at
        the end (Prefilter.pending), as for a simple pattern. The unsent text is at
        most _FORM_READ long: linear.
        """
        lo = self.pos - base
        n = len(held)
        if j < 0:
            self.examined += n - s
            if eos:
                return None
            p = pre.pending(held, lo)
            self.examined += min(n - lo, pre.heads_reach)
            return Match(p + base, self.end, True) if p < n else None
        self.examined += j - s
        for form, literals, ahead in regex.branches:
            if form is None:
                if held.startswith(ahead, j):
                    return Match(j + base, j + base, False)
                continue
            for literal in literals:
                if held.startswith(literal, j):
                    found = form.match(held, j)
                    if found is None:
                        # (It may pend at the end, or the next branch match here.)
                        return _SLOW
                    self.examined += found.end() - j
                    return Match(j + base, found.end() + base, False)
        return _SLOW

    def fixed_search(self, watcher, delimiter, eos):
        """What the delimiter's scanner would answer, for literals none of which
        begins another: the leftmost whole literal from ``pos`` if there is one
        (``regex`` prefers a complete match to an earlier partial one), else,
        unless the text is final, the leftmost start where the rest of the text
        begins a literal.

        What is known to hold no literal is not searched again: text only
        grows at the end, so a literal can begin before ``longest - 1``
        characters from the end only if it did at the last search.
        """
        held, base = self.held()
        pos, end = self.pos, self.end
        seen = self.fixed_seen.get(watcher)
        if seen is not None and seen[0] <= pos <= seen[1]:
            known, start = seen[0], seen[1]
        else:
            known = start = pos
        pre = delimiter.regex.prefilter
        j = pre.find(held, start - base, end - base)
        if j >= 0:
            self.examined += j - (start - base)
            # Before j no literal begins now; near the end one still may (a
            # longer literal's beginning around a shorter whole one).
            sure = min(j + base, end - delimiter.longest + 1)
            self.fixed_seen[watcher] = (known, max(start, sure))
            return _literal_at(delimiter, held, j, base)
        self.examined += end - start
        lo = max(start, end - delimiter.longest + 1)
        if eos:
            self.fixed_seen[watcher] = (known, lo)
            return None
        # A literal can still begin at or after lo only where the rest of the
        # text begins one: from the leftmost such start on (or the end).
        p = pre.pending(held, lo - base)
        self.examined += end - lo
        self.fixed_seen[watcher] = (known, p + base)
        if p < len(held):
            return Match(p + base, end, True)
        return None

    @staticmethod
    def can_grow(delimiter, m, n):
        if m.end != n:
            return False
        if m.start == m.end:
            return True  # $ and \Z only hold at the true end of the stream
        return not delimiter.is_literal or delimiter.can_extend
###}
