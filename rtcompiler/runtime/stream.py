"""The region machine: turns a stream of model output into events and a message.

Standard library only; the code generator inlines the ``stream`` section into
every generated parser, after the regex engine and the per-field code.

The machine is always in one *mode*: inside an explicit region (watching only
that region's close delimiter), or outside (in the implicit field, or the null
sink when there is none, watching every open delimiter and the implicit
field's close). After each chunk it asks each watched delimiter the question
transformers asks: the leftmost complete match, or where a match might still
begin. A complete match commits when it starts before every pending one
(earliest start, then longest, then opens before closes, then field name);
text before the earliest pending delimiter is emitted; the rest is held.

A template compiles to a :class:`RegionTable` (regions.py) -- plain data plus, per
field, a ``process(body, captures)`` function specialised to that field's content
parser and transform -- and :class:`ResponseStream` runs it: here the core, feed
and finish; the whole-text pass in whole.py; the memo of feeds in memo.py.

Glossary of the words the code uses in its own sense:

- *watch*, *watcher*: a delimiter the current mode watches, with its scanner.
- *pend*: a watcher pends at a position when a match may still begin there (the
  text so far is a prefix of one); the text from the earliest pending position on
  is *held* (also *unsent*: not yet given to a region).
- *commit*: a complete match that starts before every pending one takes effect:
  a region opens or closes.
- *lead*: the characters a delimiter's match may begin with before its literal
  (the whitespace a pattern such as ``\\s*<tool_call>`` allows before ``<tool_call>``).
- *danger*: the per-mode stdlib search for anything in a piece that could leave a
  watcher matched or pending (a literal, a literal's beginning or a lead character
  at the end); a piece without danger is region text at once.
- *gate*: the one first character every literal of the mode begins with, tested
  with ``in`` before the danger search (when the lead characters can be listed).
- *form*: a delimiter's stdlib ``re`` form, giving ``regex``'s spans where it runs
  in linear time (automata/capture.py); tried before stepping the automaton.
- *landmark*: an occurrence of a delimiter's literal, found for a whole-text parse
  by one stdlib search over the text; a *walk* goes from one landmark to the next.
- *transition*: what a short feed did from a given state, remembered per table and
  *replayed* when the same feed meets the same state (memo.py).
"""

from __future__ import annotations

# A generated module defines these in the sections before this one.
from .match import Match
from .memo import _TRANSITION_HELD, StreamMemo
from .regions import truncate_at_last_anchor
from .strings import JsonStrings
from .whole import (
    _FORM_HELD,
    _FORM_READ,
    _SLOW,
    _WHOLE_READS,
    WholePass,
    _form_captures,
    _form_match,
    _literal_at,
)

# isort: split

###{standalone stream
import copy as _copy
import json as _json
import re as _re

# Held text short enough to search again, with the new piece, in one stdlib call.
_QUICK_HELD = 64
_QUICK_PIECE = 256  # longer pieces go to the scanners, which skip text at C speed
_HOLD_FIRST = 8  # after a held text, pieces this short get the hold search alone (see feed)
# Unsent text this short is answered for without a scanner while it holds no
# literal (see answer); beyond it a scanner, which keeps its state, takes over,
# so that a long pending run is not re-read on every feed.
_SHORT_HELD = 16
_BODY_RUN = 64  # region pieces joined together (see ResponseStream.tail)
_PEND_STOPS_SCAN = True  # see scan (tests switch it off for a baseline)
_NEXT_LITERALS = 4  # literals answer tries after the first, where a simple pattern fails
# ... where it is known which of them pend and each try reads a bounded stretch (see
# answer; Llama 3's arguments hold many a "}" of their own).
_SETTLED_LITERALS = 16
# Unsent text longer than this is walked from landmark to landmark (see walk_step)
# before the watchers are asked one by one.
_WALK_HELD = 32


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


class ResponseStream(StreamMemo, WholePass):
    """Streaming parse of one generation (the state behind ``ResponseParser``)."""

    # Slots, not an instance dict: CPython shares a dict's keys between instances,
    # and reads attributes fastest, only up to 30 of them.
    __slots__ = (
        "table", "coerce", "pieces", "base", "end", "pos", "fresh", "fresh_start",
        "examined", "rescans", "retired_steps", "retired_searched", "output", "captures",
        "body", "tail", "opened", "finalized", "scanners", "fixed_seen", "held_by", "known",
        "node", "whole", "marks", "marks_from", "failures", "missed", "current", "danger", "dirty",
        "initial_events", "formed", "strings", "resume_to", "resumed",
    )

    def __init__(self, table, prefix, coerce=None) -> None:
        if prefix is None:
            raise ValueError(
                "`ResponseParser`/`parse_response` requires `prefix` (the chat prompt sent to "
                "the model before generation), because chat templates often pre-write part of "
                "the assistant message (e.g. an opening `<think>` tag) that the parser must see "
                "to parse the output correctly. If the generation already contains the complete "
                'message, pass `prefix=""` to opt out explicitly.'
            )
        self.table = table
        self.coerce = coerce  # typed tool-call arguments, or None
        # The text not yet emitted, from absolute position ``base`` on, in pieces:
        # feeding appends a piece (no copy of what is held), emitting trims.
        self.pieces: list = []
        self.base = 0
        self.end = 0
        self.pos = 0
        self.fresh = ""  # the last fed piece, and where it begins: scanners catch up with it
        self.fresh_start = 0
        # Work counters for the linear-time tests (see :attr:`steps` and
        # :attr:`searched` for the scanners' own): characters the stream's
        # per-feed stdlib searches went through, and scanners restarted over
        # text another had already seen.
        self.examined = 0
        self.rescans = 0
        self.retired_steps = 0
        self.retired_searched = 0
        self.output = (
            dict(table.defaults) if table.flat_defaults else _copy.deepcopy(table.defaults)
        )
        self.captures: dict = {}
        # The open region's text: ``tail`` collects the pieces as fed, and every
        # _BODY_RUN of them are joined into one string on ``body``, so that a streamed
        # region holds about its text, not an object header per token.
        self.body: list = []
        self.tail: list = []
        self.opened = False
        self.finalized = False
        self.scanners: dict = {}
        # per literal watcher, and per watcher of a simple pattern (see answer): (a, b),
        # no literal begins in [a, b)
        self.fixed_seen: dict = {}
        # (watch entry, position, watch list): what held the text at the last scan
        self.held_by = None
        self.known = None  # (watcher, its answer from pos), already asked for this scan
        self.node = None  # (number of the state, end of the buffer then); see transition_key
        self.whole = None  # parse_whole: per watcher, the last stdlib search's answer
        self.marks = None  # parse_whole: literal -> where it occurs, absolute (find_whole)
        self.marks_from = 0
        self.failures = 0  # parse_whole: stdlib matches tried that failed (see complete)
        self.missed = 0  # ... those of forms that read apart, in a row (see failed_form)
        # Characters the stdlib matches of parse_whole (successful ones), or of a stream's
        # walk (see walk_step), went through.
        self.formed = 0
        self.strings = None  # in a string_modes region: its JsonStrings, made when first scanned
        # The yield extension (docs/extensions.md): the yielding region to go back to when
        # the open region closes, and whether the open region is such a region's next piece.
        self.resume_to = None
        self.resumed = False
        self.enter(table.implicit)
        self.initial_events: list = []
        if prefix:
            truncated = truncate_at_last_anchor(table.start_anchor, prefix, table.anchor_literals)
            if truncated:
                saved = table.prompt_states.get(truncated)
                if saved is not None:
                    self.resume(saved)
                else:
                    self.append(truncated)
                    # Even for parse_whole: the prompt is a chunk of its own, and `$`
                    # before its last newline closes a region there (as in the
                    # reference), which a pass over prompt and output together would
                    # not see.
                    self.process(self.initial_events, eos=False)
                    self.remember(truncated)

    # -- feeding -----------------------------------------------------------------

    def feed(self, text):
        if type(text) is not str:
            text = self.checked(text)
        held_by = self.held_by
        if held_by is not None and held_by[1] == self.pos and text and not self.finalized:
            if held_by[2] is self.table.watches[self.current]:
                # A delimiter pends where the unsent text begins (a tool-call
                # header still arriving): while it does, nothing can commit or be
                # emitted (see scan), so only its watcher is asked.
                start = self.end
                node = self.node
                if (
                    node is not None and node[1] == start
                    and start + len(text) - self.pos <= _TRANSITION_HELD
                ):
                    self.examined += len(text)
                    key = node[0], text  # (transition_key, written out)
                else:
                    key = self.transition_key(text, start)
                self.fresh, self.fresh_start = text, start  # append, written out
                self.pieces.append(text)
                self.end = start + len(text)
                if key is not None:
                    known = self.table.transitions.get(key)
                    if known is not None:  # met before: done as then
                        if known[0] or known[1]:
                            events = []
                            self.replay(events, known)
                            return events
                        # The header still arriving: replay's beginning, written out.
                        holder = known[2]
                        self.held_by = (
                            None if holder is None else (holder[0], self.pos + holder[1], holder[2])
                        )
                        if known[3] is not None:
                            self.node = (known[3], self.end)
                        return []
                _, _, delimiter, watcher = held_by[0]
                # Still pending: nothing emitted, the same holder (the first
                # watcher that pends here), as a pass from here would leave it.
                still = ((), 0, (held_by[0], 0, held_by[2]))
                scanner = self.scanners.get(watcher)
                if (
                    scanner is not None and scanner.pos == start
                    and (scanner.start == self.pos or scanner.rebase(self.pos))
                ):
                    # Its scanner, caught up until this piece, steps through it; an
                    # attempt still alive from pos, with no match, pends here.
                    scanner.advance(text, 0, len(text))
                    hit = scanner.alive_from()
                    if hit is not None and hit == self.pos < self.end:
                        if self.end - hit <= _FORM_HELD:
                            # What answer would have said: kept for the next stream
                            # that meets this header (see answer).
                            regex = delimiter.regex
                            self.remember_answer(regex, self.answer_key(regex), 0)
                        self.remember_transition(key, still)
                        return []
                m, pending = self.pends_here(watcher, delimiter)
                if pending:
                    self.remember_transition(key, still)
                    return []
                # It no longer pends: the scan asks every watcher, this one's
                # answer already known.
                self.held_by = None
                self.known = (watcher, m)
                events = []
                self.process(events, False, key)
                return events
        quick = self.danger
        pos, end = self.pos, self.end
        if quick is not None and 0 < len(text) <= _QUICK_PIECE and end - pos <= _QUICK_HELD:
            # Token-sized pieces: decide with one or two stdlib searches of the
            # unsent text (held text and piece) whether any watched delimiter
            # could match or pend there, and where. Unless it is all region text, the
            # buffer becomes one short string: the character before pos
            # (context for a scanner made later), the held text, the piece.
            danger, whole, hold, lead, first, gate, spaces = quick
            held_first = False
            if pos == end:
                unsent = text
                # A piece holding no character that can begin anything watched, or
                # passing the mode's gate (see RegionTable), is answered without the
                # search.
                if gate is not None:
                    if gate in text:
                        found = danger(unsent)
                    elif spaces is None or text[-1] not in spaces:
                        found = None
                    elif hold is not None:
                        # Only the lead characters at the end can begin anything (a
                        # space before "\s*<tool_call>"): held from the beginning of
                        # their run, as the hold search would, and no literal is in
                        # the piece to commit.
                        stop = len(text.rstrip(spaces))
                        self.keep_unsent(self.pieces[-1][-1:] if end else "", text, text)
                        self.examined += len(text) - stop
                        events = []
                        if stop:
                            self.pos = pos + stop
                            self.accumulate(events, text[:stop])
                        return events
                    else:
                        found = danger(unsent)
                else:
                    found = (
                        None if len(text) == 1 and first is not None and text not in first
                        else danger(unsent)
                    )
            else:
                pieces = self.pieces
                whole_held = pieces[0] if len(pieces) == 1 else self.held()[0]
                base = self.base
                unsent = whole_held[pos - base :] + text
                node = self.node
                if node is not None and node[1] == end and len(unsent) <= _TRANSITION_HELD:
                    # A state a feed numbered (see transition_key): when this piece
                    # was fed in it before, it is done as then, with no search.
                    known = self.table.transitions.get((node[0], text))
                    if known is not None:
                        before = whole_held[pos - base - 1 : pos - base] if pos > base else ""
                        self.keep_unsent(before, unsent, text)
                        self.examined += len(text)
                        events = []
                        self.replay(events, known)
                        return events
                if hold is not None and len(text) <= _HOLD_FIRST:
                    # The held text begins where a watcher pended: the hold search
                    # alone says what the unsent text holds (see below), and the
                    # danger search would only find that beginning again. (Not
                    # after a longer piece, through which sre would try the hold
                    # pattern at every character; see below.)
                    found = hold(unsent, 0)
                    held_first = True
                else:
                    found = danger(unsent)
            if found is None:
                # Nothing to watch in the unsent text (the usual token, or a held
                # space and the word after it): it is all region text. The danger
                # patterns look at no character before it, so it is searched
                # alone, and kept alone: its last character is the context a
                # later scanner reads before ``pos``.
                self.pieces = [unsent]
                self.base = pos
                self.fresh, self.fresh_start = text, end
                self.end = self.pos = end + len(text)
                self.examined += len(unsent)
                if self.opened:
                    # (In a string-tracking region, its strings are read when needed:
                    # see strings_read.)
                    # accumulate, written out for the usual token (one call less)
                    tail = self.tail
                    tail.append(unsent)
                    if len(tail) >= _BODY_RUN:
                        self.body.append("".join(tail))
                        tail.clear()
                    return [
                        {"type": "region_chunk", "field": self.current, "text": unsent,
                         "dirty": self.dirty}
                    ]
                events = []
                self.accumulate(events, unsent)
                return events
            if pos == end:
                before = self.pieces[-1][-1:] if end else ""
            else:
                before = whole_held[pos - base - 1 : pos - base] if pos > base else ""
            # The state this feed found is named (see transition_key) by its number
            # (then it was looked up above) or, made when needed, by what it is. In a
            # region whose close counts outside strings, what a feed does depends on
            # the strings before it too: a state is named there when they are read up
            # to where the unsent text begins, and its name says whether that is
            # inside a string (see described).
            keyed = len(unsent) <= _TRANSITION_HELD and (
                self.strings is None or self.strings_read().at == pos
            )
            if pos == end or node is None or node[1] != end:
                node = None
            self.keep_unsent(before, unsent, text)
            # A literal goes to the scan (the danger search found one when its
            # match ends before the end: only literals are not anchored there),
            # and so does anything the danger search finds when there is no hold
            # search. Otherwise the hold search finds where the earliest watcher
            # pends: the beginning of a literal, or of its lead, running to the
            # end. (It is not the first search: sre finds the danger pattern's
            # literals and heads much faster, and most pieces hold neither.) No
            # beginning of a literal comes before the danger search's find, so
            # what pends begins no earlier than the run of lead characters before
            # it: the hold search starts there (and its guard reads a character
            # that is not a lead character, or none).
            if not held_first:
                if hold is not None and found.end() == len(unsent):
                    at = found.start()
                    if lead is not None:
                        while at and lead(unsent, at - 1) is not None:
                            at -= 1
                    self.examined += len(unsent) - at
                    found = hold(unsent, at)
                else:
                    found = None
            commits = (
                found is None or found.lastgroup is not None or whole(unsent, found.start())
            )
            # (A hold with nothing held before, the usual token ending in a space, is
            # done as below every time, at less cost than a lookup; the state it
            # leaves is named by what it is when a feed needs it. One that holds
            # two characters or more and ends with something else, the beginning
            # of a literal ("</t"), is kept: the tokens after it, the rest of that
            # literal, are then replayed.)
            key = known = None
            if keyed and (
                commits or pos != end
                or gate is not None and found.start() < len(unsent) - 1
                and (spaces is None or unsent[-1] not in spaces)
            ):
                if node is not None:
                    key = node[0], text  # (looked up above)
                else:
                    key = self.described(unsent[: len(unsent) - len(text)], before), text
                    known = self.table.transitions.get(key)
                self.examined += len(text)
            events = []
            if commits:
                if known is not None:
                    self.replay(events, known)  # met before: done as then
                else:
                    self.process(events, False, key)
                return events
            stop = found.start()
            self.pos = pos + stop
            if stop:  # else all held
                self.accumulate(events, unsent[:stop])
            if known is not None:
                self.node = (known[3], self.end)  # as numbered then
            elif key is not None:
                self.remember_transition(key, ((), stop, None))
            return events
        if self.finalized:
            raise RuntimeError("ResponseParser already finalized")
        if text:
            self.append(text)
        events = []
        self.process(events, eos=False)
        return events

    def checked(self, text):
        """The text a fed piece that is not a ``str`` stands for, read as the reference
        reads it: none for ``None`` or another false value (an OpenAI delta's
        ``content: null``), a ``str`` subclass's own text. Anything else is refused
        (TypeError) when fed, not later, when the region holding it closes."""
        if self.finalized:
            raise RuntimeError("ResponseParser already finalized")
        if not text:
            return ""
        if isinstance(text, str):
            return str.__str__(text)
        raise TypeError(
            f'can only concatenate str (not "{type(text).__name__}") to str '
            "(feed takes text, a str)"
        )

    def keep_unsent(self, before, unsent, text):
        """Append ``text`` (``unsent``: the text from ``pos`` to the new end),
        keeping only the unsent text and ``before``, the character before it."""
        end = self.end
        self.pieces = [before + unsent]
        self.base = self.pos - len(before)
        self.fresh, self.fresh_start = text, end
        self.end = end + len(text)
        self.examined += len(unsent)

    def finalize(self):
        if self.finalized:
            raise RuntimeError("ResponseParser already finalized")
        # The final pass commits what feeds held back: the state a feed numbered is
        # gone, and a feed after a finalize that raised starts from what it left.
        self.forget()
        events = []
        self.process(events, eos=True)
        return self.finish(), events

    def finish(self):
        """The message, once the final pass has run."""
        table = self.table
        output = self.output
        if table.required:
            missing = [name for name in table.required if name not in output]
            if missing:
                raise ValueError(
                    f"Required response_template fields missing from parsed output: {missing}"
                )
        # Empty values (None, "", [], {}) are dropped in place, keeping the order of
        # the rest, unless the template gives them as defaults.
        defaults = table.defaults
        for key in [
            k for k, v in output.items() if k not in defaults and (
                v is None or isinstance(v, (list, dict, str)) and not v
            )
        ]:
            del output[key]
        self.finalized = True
        self.danger = None
        return self.output

    # -- the buffer ----------------------------------------------------------------

    def append(self, text):
        self.fresh, self.fresh_start = text, self.end
        self.pieces.append(text)
        self.end += len(text)

    def text(self, start, stop):
        """The text between absolute positions ``start`` and ``stop``."""
        return self.held()[0][start - self.base : stop - self.base]

    def held(self):
        """``(the text kept, in one piece; the absolute position it starts at)``."""
        if len(self.pieces) > 1:
            self.pieces = ["".join(self.pieces)]
        return (self.pieces[0] if self.pieces else ""), self.base

    @property
    def steps(self):
        """DFA transitions taken in Python so far, by every scanner."""
        return self.retired_steps + sum(s.steps for s in self.scanners.values())

    @property
    def work(self):
        """Everything counted: Python DFA steps plus characters searched at C speed."""
        return self.steps + self.searched + self.examined

    @property
    def searched(self):
        """Characters the scanners' C-speed prefilter searches went through so far."""
        return self.retired_searched + sum(s.searched for s in self.scanners.values())

    def trim(self):
        """Forget emitted text, keeping one character of context for ``\\b``."""
        keep = self.pos - 1
        base = self.base
        if keep > base and keep - base >= (self.end - base) // 2:
            self.pieces = [self.held()[0][keep - base :]]
            self.base = keep

    # -- the machine -------------------------------------------------------------

    def process(self, events, eos, key=None):
        """Commit what the buffer holds from ``pos``: the matches that commit, the
        region text before them and after the last, up to what is held. Given the
        ``key`` of the feed (see transition_key), what the pass did is kept for it."""
        record = None
        if key is not None:
            record = []
            start = self.pos
        while True:
            strung = self.current in self.table.string_modes
            if strung:
                # The text of the strings it passes goes out as the pass's one chunk
                # of the region's text (see give), as a replay gives it.
                given = len(events)
            best = None
            if (
                self.end - self.pos > _WALK_HELD
                and self.fresh_start - self.pos <= _QUICK_HELD
                and not eos and self.held_by is None and self.resume_to is None
            ):
                best = self.walk_step()
            if best is not None:
                # (The answer the feed already had, from pos, is the walk's at pos, or
                # is of a later match.)
                self.known = None
            elif strung:
                best, hold_start = self.scan_outside_strings(eos, events)
            else:
                best, hold_start = self.scan(
                    self.table.watches[
                        self.current if self.resume_to is None
                        else (self.current, self.resume_to)
                    ],
                    eos,
                )
            if best is not None:
                kind, region, m = best
                if m.start > self.pos:
                    if strung:
                        self.give(events, self.text(self.pos, m.start), given)
                    else:
                        self.accumulate(events, self.text(self.pos, m.start))
                self.pos = m.end
                if kind == "open":
                    captures = m.captured()
                    current = self.current
                    if current in self.table.yielding:
                        # A region the open one yields to: it resumes after it. A replay
                        # would not know: nothing is remembered.
                        record = self.node = None
                        self.close_current(events)
                        self.resume_to = current
                    else:
                        if record is not None:
                            record.append((True, region, m.start - start, m.end - start, captures))
                        self.close_current(events)
                    self.open_region(events, region, captures)
                else:
                    if record is not None:
                        record.append((False, region, m.start - start, m.end - start, None))
                    had_content = self.opened
                    if region.name != self.current:
                        record = self.node = None
                        if self.resume_to is None:
                            # The implicit field's close in a yielding region ends a piece.
                            self.resume_to = self.current
                        else:
                            # The yielding region's close, in a region opened in it: both close.
                            self.close_current(events)
                    self.close_current(events)
                    if not had_content and m.start == m.end:
                        break  # a zero-width close of an empty region would fire forever
                quick = self.danger
                if quick is not None and not eos and self.end - self.pos <= _QUICK_PIECE:
                    # Short text after the delimiter (a token's rest): when the new
                    # mode's danger search finds nothing in it, it is all region
                    # text, as in the quick path of feed.
                    held, base = self.held()
                    i = self.pos - base
                    self.examined += len(held) - i
                    if quick[0](held, i) is None:
                        if i < len(held):
                            self.accumulate(events, held[i:])
                            self.pos = self.end
                        break
                continue
            if eos:
                if self.pos < self.end:
                    self.accumulate(events, self.without_cut_open(self.text(self.pos, self.end)))
                    self.pos = self.end
                self.close_current(events, True)
                break
            if hold_start > self.pos:
                if strung:
                    self.give(events, self.text(self.pos, hold_start), given)
                else:
                    self.accumulate(events, self.text(self.pos, hold_start))
                self.pos = hold_start
            break
        if record is not None:
            held_by = self.held_by
            if held_by is not None:
                held_by = (held_by[0], held_by[1] - start, held_by[2])
            self.remember_transition(key, (tuple(record), self.pos - start, held_by))
        self.trim()

    def walk_step(self):
        """The next commit from ``pos``, found as the whole-text walk finds it (see
        WholePass.walk): ``(kind, region, Match)``, or None when the watchers must be
        asked (then nothing is committed here).

        In a walked mode every match begins at a landmark, or in the run of lead
        characters before it, which holds no landmark. So at the first landmark of the
        mode from ``pos``, the earliest of the complete matches its watch entries have
        there (each from its run of lead characters, with its stream form), compared as
        scan compares them, is what scan would commit, when none of them may still
        pend: an entry whose form does not match there, or whose match runs to the end
        of the text (and may grow), or whose longer literal the text may still complete.
        Then the walk stops and scan decides, reading the same text again. In a region
        whose close counts only outside the body's JSON strings, a landmark in a string
        is passed over, and only the region's own close is committed. So the walk
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
        if self.current in table.string_modes:
            # A close that counts only outside the body's strings (see
            # scan_outside_strings): they are read up to pos, then, on a copy (the
            # region ends at the commit), up to each landmark. One in a string is region
            # text, as scan_outside_strings finds it: the walk goes on after it.
            strings = self.strings
            if strings is None:
                return None
            if strings.at < self.pos:
                self.strings_read()
            probe = JsonStrings(strings.at)
            probe.inside, probe.odd = strings.inside, strings.odd
        held, base = self.held()
        lo = self.pos - base
        n = len(held)
        hi = min(n, lo + _FORM_READ)
        search = table.landmarks.search
        found = search(held, lo, hi)
        while found is not None:
            plan = spots.get(found.group(), _SLOW)
            if plan is not _SLOW:
                if probe is None:
                    break
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
        best = best_key = None
        for kind, region, regex, lead, form, literals, longest in plan:
            if literals is not None and not held.startswith(literals, at):
                if n - at < longest:
                    return None  # (one may still be written)
                continue  # none of its literals here: no match of it begins here
            if regex is None:
                start, end = at, found.end()
                if end >= n:
                    return None
                m = None
            else:
                start = at if lead is None else lead.lead_start(held, lo, at)
                m = (form if start + base or not regex.form_start else regex.captures_first).match(
                    held, start
                )
                if m is None or m.end() >= n:
                    self.formed += n - start
                    return None  # (it may pend, or grow)
                end = m.end()
                self.examined += end - start
                self.formed += end - start
            # (scan's order: a lone entry has nothing to be compared with)
            key = (
                None if len(plan) == 1
                else (start, start - end, 0 if kind == "open" else 1, region.name)
            )
            if best is not None and key >= best_key:
                continue
            best_key, best = key, (kind, region, regex, m, start, end)
        if best is None:
            return None
        kind, region, regex, m, start, end = best
        if probe is not None and (kind != "close" or region.name != self.current or start != at):
            return None  # (scan_outside_strings decides any other commit)
        if m is None:
            return kind, region, Match(start + base, end + base, False)
        return kind, region, _form_match(regex, m, base)

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
            key = (m.start, m.start - m.end, 0 if kind == "open" else 1, region.name)
            if best_key is None or key < best_key:
                best_key, best = key, (kind, region, m)
        if best is not None and best[2].start >= hold_start:
            best = None
        if best is None and holder is not None and whole is None:
            self.held_by = (holder, hold_start, watch)
        return best, hold_start

    def scan_outside_strings(self, eos, events):
        """``scan`` in a region whose close counts only where it begins outside the
        body's JSON strings (docs/extensions.md): ``(("close", region, Match) or None,
        where the held text begins)``.

        The close is searched for as in any region, from ``pos``; only then is the
        place where its match (or the earliest pending one) begins checked against the
        body's strings, which JsonStrings tracks by counting quotes. A close cannot
        consume a quote, so a match beginning inside a string lies in it: the text up
        to the string's end is region text (given to the region here, into ``events``,
        or with None, as parse_whole does), not searched, and the search goes on after
        it. A string still open when the output ends is searched then (see
        close_in_open_string). Each search starts where the last one stopped, and the
        strings are read once: linear.
        """
        strings = self.strings
        if strings is None:
            strings = self.strings = JsonStrings(self.pos)
        elif strings.at < self.pos:
            self.strings_read()
        # In a region opened inside a yielding one, the yielding region's close is
        # watched too (and counts, as the region's own, only outside strings).
        watch = self.table.watches[
            self.current if self.resume_to is None else (self.current, self.resume_to)
        ]
        self.held_by = None  # (set only by this scan's own searches, and cleared after)
        given = 0 if events is None else len(events)
        while True:
            held, base = self.held()
            n = self.end
            if strings.inside:
                # Nothing begins before the string ends.
                i = strings.at - base
                s = n - base
                if i < s and held[s - 1] != "\\" and held.find('"', i, s) < 0:
                    # (skip, written out for the usual piece of a string: no quote in it)
                    self.examined += s - i
                    strings.at = n
                    strings.odd = False
                    stop = None
                else:
                    stop, read = strings.skip(held, base, n)
                    self.examined += read
                if stop is None:
                    if eos:
                        return self.close_in_open_string(watch)
                    return None, n
                self.region_text(events, stop, given)
            best, hold_start = self.scan(watch, eos)
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
        quote): the first match of the close inside that string counts after all, so
        that the text after it is parsed as usual. Returns what scan_outside_strings
        does. The region's text (its body, then the unsent text) is searched from the
        string's opening quote, once; nothing is emitted again."""
        tail = self.tail
        if tail:
            self.body.append("".join(tail))
            tail.clear()
        body = "".join(self.body)
        held, base = self.held()
        text = body + held[self.pos - base :]
        start = self.pos - len(body)
        q = len(text)
        while True:  # the last quote that no odd run of backslashes escapes opened it
            q = text.rfind('"', 0, q)
            k = q - 1
            while k >= 0 and text[k] == "\\":
                k -= 1
            if not (q - 1 - k) & 1:
                break
        self.examined += len(text) - q
        self.forget()
        self.pieces = [text]
        self.base = start
        self.pos = start + q + 1
        self.body = [text[: q + 1]]
        best = self.scan(watch, True)[0]
        stop = self.end if best is None else best[2].start
        self.body.append(text[q + 1 : stop - start])
        self.pos = stop
        return best, stop

    def strings_read(self):
        """The open region's JsonStrings, read up to ``pos``. The paths that give text to
        a string-tracking region do not read it for its strings (most tokens of a call
        body can hold no close); what needs them reads the text given since, from the
        region's own text, once: each character is read once."""
        strings = self.strings
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
                        # (search rule 1): the next literals are tried (Qwen3-Coder's close
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

    # -- regions -------------------------------------------------------------------

    def accumulate(self, events, text):
        if not text or self.current is None:
            return  # no region open and no implicit field: the null sink
        if not self.opened:
            events.append({"type": "region_open", "field": self.current})
            self.opened = True
        tail = self.tail
        tail.append(text)
        if len(tail) >= _BODY_RUN:
            self.body.append("".join(tail))
            tail.clear()
        events.append(
            {"type": "region_chunk", "field": self.current, "text": text,
             "dirty": self.dirty}
        )

    def enter(self, mode):
        """Make ``mode`` current, with what the quick path of :meth:`feed` needs to know."""
        self.current = mode
        self.danger, self.dirty = self.table.modes[mode]

    def open_region(self, events, region, captures):
        mode = self.current = region.name  # enter, written out (a call less per region)
        if self.resume_to is not None:
            mode = mode, self.resume_to  # opened in a yielding region (see RegionTable)
        self.danger, self.dirty = self.table.modes[mode]
        self.captures = captures
        self.body = []
        self.tail = []
        self.opened = True
        if region.outside_strings:
            self.strings = JsonStrings(self.pos)
        if events is not None:  # None: parse_whole, where nobody reads them
            events.append({"type": "region_open", "field": region.name})

    def close_current(self, events, eos=False):
        """Leave the open region, giving its value; ``eos``: the output ended in it."""
        if self.current is None or not self.opened:
            self.reset()
            return
        tail = self.tail
        if tail:
            self.body.append("".join(tail))
            tail.clear()
        region = self.table.by_name[self.current]
        if eos and region.recover is True and region.close is not None:
            # Unfinished: never a value, however its text would parse. (A JSON body or a
            # pythonic call list is parsed: cut, it does not parse, and is recovered as
            # text below.)
            body = "".join(self.body)
            self.recovered(self.reopened(region, body) or body, _UNFINISHED, events)
            self.reset()
            return
        try:
            self.close_with("".join(self.body), events, eos)
        except BaseException:
            # The region's parser (or its join, its tool typing) refused its text. As
            # in the reference, the region stays open with that text, once, and the
            # next finalize, or a close after more text, parses it again; the state
            # a replayed feed announced (see replay) was not reached.
            self.forget()
            raise
        self.reset()

    def close_with(self, text, events, unfinished=False):
        """Give the open region's value (its whole text is ``text``) to the message;
        the caller then leaves the region (``unfinished``: the output ended in it)."""
        region = self.table.by_name[self.current]
        rest = None
        try:
            value = region.process(text, self.captures)
            if self.coerce is not None and type(value) is not str:  # a string holds no call
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError) as error:
            ended = self.json_ended(region, text) if region.json_end else None
            if ended is not None:
                value, rest = ended
            elif not region.recover:
                raise
            else:
                repaired = self.repaired(region, text, unfinished) if region.repairs else None
                if repaired is None:
                    value = self.reread(region, text)
                    if value is _FAILED:
                        inner = self.reopened(region, text)
                        if inner is not None:
                            self.close_with(inner, events, unfinished)
                        else:
                            self.recovered(text, str(error), events)
                        return
                else:
                    value, rest = repaired
        name = self.current
        if region.join is not None:
            if not isinstance(value, str):
                raise ValueError(
                    f"Field '{name}': 'join' requires each match to parse to a string, "
                    f"got {type(value).__name__}."
                )
            previous = self.output.get(name)
            self.output[name] = value if previous is None else previous + region.join + value
        elif region.repeats:
            previous = self.output.setdefault(name, [])
            if not isinstance(previous, list):
                # The reference crashes here (AttributeError); see docs/deviations.md.
                raise ValueError(
                    f"field {name!r} repeats, but its default value is a "
                    f"{type(previous).__name__}, not a list"
                )
            previous.append(value)
        elif region.extend:
            # (a new list: a default list of the template is never changed in place)
            previous = self.output.get(name)
            self.output[name] = previous + value if isinstance(previous, list) else value
        elif self.resumed:
            # The next piece of a yielding region: its value joins the pieces before.
            previous = self.output.get(name)
            if not isinstance(previous, str) or not previous:
                self.output[name] = value
            elif value:
                self.output[name] = previous + region.yield_join + value
        else:
            self.output[name] = value
        if events is not None:
            events.append({"type": "region_close", "field": name, "value": value})
        if rest:
            self.as_text(rest, events)

    def json_ended(self, region, text):
        """The value of a failed json-end region whose body is one JSON object or array
        followed by more text, and the text after it (docs/extensions.md, json-end):
        ``(value, rest)``, or None when the body is not that or the value fails too.
        ``region.json_end`` is True, or the literal that must follow the value (after
        whitespace) and belongs to the region. One decode and one parse of the value:
        linear."""
        start = len(text) - len(text.lstrip())
        if not text.startswith(("{", "["), start):
            return None
        try:
            _, end = _json_raw(text, start)
        except (ValueError, RecursionError):
            return None
        joined = None
        if region.repairs and text.startswith("[", start):
            # A list of calls, then the field's own open again and another list: the model
            # wrote more calls (two [TOOL_CALLS] arrays). They are one list.
            items = [text[start + 1 : end - 1]]
            while True:
                at = _SPACES.match(text, end).end()
                opened = self.open_at(region, text, at)
                if opened <= at:
                    break
                at = _SPACES.match(text, opened).end()
                if not text.startswith("[", at):
                    break
                try:
                    _, stop = _json_raw(text, at)
                except (ValueError, RecursionError):
                    break
                items.append(text[at + 1 : stop - 1])
                end = stop
            if len(items) > 1:
                joined = "[" + ",".join(item for item in items if item.strip()) + "]"
        after = region.json_end
        if after is True:
            rest = text[end:]
            if not rest.strip() and joined is None:
                return None  # the value alone failed: nothing to end
        else:
            at = _SPACES.match(text, end).end()
            if not text.startswith(after, at):
                return None
            rest = text[at + len(after):]
        candidate = text[:end] if joined is None else joined
        try:
            value = region.process(candidate, self.captures)
            if self.coerce is not None and type(value) is not str:
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError, RecursionError):
            if not region.repairs:
                return None
            # A lone call where the list is expected, as recover reads it.
            repaired = self.repaired(region, candidate, False)
            if repaired is None:
                return None
            value = repaired[0]
        return value, rest

    def repaired(self, region, text, unfinished):
        """The value of a JSON list of calls that failed, read leniently, and the text
        left over (docs/extensions.md, recover): a lone object as a list of one; an array
        cut by the end of the output as its finished elements, the rest as text. None
        when neither reading gives a value."""
        start = len(text) - len(text.lstrip())
        rest = ""
        try:
            if text.startswith("{", start):
                value, end = _json_raw(text, start)
                if not isinstance(value, dict) or text[end:].strip():
                    return None
                candidate = "[" + text[start:end] + "]"
            elif unfinished and text.startswith("[", start):
                # Element by element: each one decoded whole and followed by a comma is
                # finished (one the output ends right after may still have been going
                # on); the text from the first one that is not goes back to being text.
                n = len(text)
                i = start + 1
                finished = None
                while True:
                    while i < n and text[i] in " \t\n\r":
                        i += 1
                    try:
                        _, end = _json_raw(text, i)
                    except ValueError:
                        break
                    j = end
                    while j < n and text[j] in " \t\n\r":
                        j += 1
                    if j == n or text[j] != ",":
                        break
                    finished = end
                    i = j + 1
                if finished is None:
                    return None
                candidate = text[start:finished] + "]"
                rest = text[i:]
            else:
                return None
            value = region.process(candidate, self.captures)
            if self.coerce is not None and type(value) is not str:
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError, RecursionError):
            return None
        return value, rest

    def reread(self, region, text):
        """The value of a failed recovering region whose body is near-JSON with one
        string delimiter (Gemma 4's), read leniently (see LenientReader) and then
        processed as the JSON it stands for, or a pythonic region whose body is JSON
        calls (see pythonic_from_json); _FAILED when that fails too."""
        if region.recover == "pythonic":
            try:
                value = region.process(pythonic_from_json(text), self.captures)
                if self.coerce is not None:
                    value = self.coerce(value)
            except (ValueError, TypeError, KeyError, RecursionError):
                return _FAILED
            return value
        delimiter = region.lenient
        if delimiter is None:
            return _FAILED
        try:
            dumped = _json.dumps(LenientReader(text, delimiter).read(), ensure_ascii=False)
            if delimiter in dumped:
                return _FAILED  # the field's parser would read it as a delimiter
            value = region.process(dumped, self.captures)
            if self.coerce is not None and type(value) is not str:
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError, RecursionError):
            return _FAILED
        return value

    def reopened(self, region, text):
        """A failed recovering region's body after the opens it begins with (the model
        wrote the open twice), or None when it begins with none; the last open's
        captures are the region's. An open without a stdlib form is not looked for."""
        at = 0
        while True:
            start = _SPACES.match(text, at).end()
            end = self.open_at(region, text, start)
            if end <= start:
                return text[at:] if at else None
            at = end

    def open_at(self, region, text, start):
        """Where a match of the region's open that begins at ``start`` in ``text`` ends, or
        -1 (its captures become the region's). An open without a stdlib form is not
        looked for."""
        delimiter = region.open
        if delimiter.fixed is not None:
            return next(
                (start + len(s) for s in delimiter.fixed if text.startswith(s, start)), -1
            )
        regex = delimiter.regex
        form = regex.captures
        if form is None or regex.form_whole:  # (the text is no output's end)
            return -1
        found = form.match(text, start)
        if found is None:
            return -1
        if found.end() > start and regex.capture_names:
            self.captures = _form_captures(regex, found)
        return found.end()

    def recovered(self, body, error, events):
        """A recovering region that failed (``error``) gives no value; its body is text
        of the field that keeps it (see as_text)."""
        if events is not None:
            events.append({
                "type": "region_close", "field": self.current, "value": None, "error": error,
            })
        self.as_text(body, events)

    def as_text(self, body, events):
        """``body`` as text of the field that keeps the open region's text, which has
        closed (the implicit field unless the region names another): cut where that
        field's close matches in it (a marker there is no text), each piece not only
        whitespace a stretch of its own."""
        name = self.current
        if not body.strip():
            return
        table = self.table
        keeper = self.resume_to
        if keeper is None:
            keeper = table.by_name[name].recover_to or table.implicit
        close = table.by_name[keeper].close
        pieces = [body]
        if close is not None:
            pieces, at = [], 0
            for m in close.regex.finditer(body):
                start, end = m.span()
                pieces.append(body[at:start])
                at = end
            pieces.append(body[at:])
        self.current, self.captures = keeper, {}
        self.resumed = self.resume_to is not None  # a yielding region's pieces join
        dirty = table.modes[keeper][1]
        for piece in pieces:
            if not piece.strip():
                continue
            if events is not None:
                events.append({"type": "region_open", "field": keeper})
                events.append({
                    "type": "region_chunk", "field": keeper, "text": piece, "dirty": dirty,
                })
            try:
                self.close_with(piece, events)
            except BaseException:
                self.current, self.resumed = name, False
                raise
        self.current, self.resumed = name, False

    def reset(self):
        table = self.table
        mode = self.resume_to
        if mode is None:
            mode = self.current = table.implicit  # enter, written out (a call less per region)
            self.resumed = False
        else:
            # Back to the yielding region the closed one opened in: its next piece.
            self.current = mode
            self.resume_to = None
            self.resumed = True
        self.danger, self.dirty = table.modes[mode]
        self.captures = {}
        self.body = []
        self.tail = []
        self.opened = False
        self.strings = None


_UNFINISHED = "unfinished: the output ended inside the region"
_json_raw = _json.JSONDecoder().raw_decode
_SPACES = _re.compile(r"\s*")


def pythonic_from_json(text):
    """The pythonic call list that JSON calls stand for: ``text`` is one object
    ``{"name": NAME, "parameters": {...}}`` (or ``"arguments"``; a ``"type"`` key is
    allowed) or a JSON array of them, as Llama 4 writes them in its python wrapper.
    Each value is written as its Python literal; ValueError when ``text`` is not that.
    Names and keys are checked here, as they are pasted into the list's text (ASCII
    only: Python's parser would normalise other identifiers, changing the key)."""
    value = _json.loads(text)
    calls = value if isinstance(value, list) else [value]
    out = []
    for call in calls:
        if not isinstance(call, dict):
            raise ValueError("pythonic: a JSON call is an object")
        arguments = [call[k] for k in ("parameters", "arguments") if k in call]
        name = call.get("name")
        if (
            len(arguments) != 1 or not isinstance(arguments[0], dict)
            or set(call) - {"name", "parameters", "arguments", "type"}
            or not isinstance(name, str)
            or not all(_is_ascii_identifier(part) for part in name.split("."))
            or not all(_is_ascii_identifier(key) for key in arguments[0])
        ):
            raise ValueError("pythonic: not a JSON call with a name and arguments")
        out.append(name + "(" + ", ".join(
            f"{key}={value!r}" for key, value in arguments[0].items()) + ")")
    return "[" + ", ".join(out) + "]"


def _is_ascii_identifier(text):
    return text.isascii() and text.isidentifier()


_FAILED = object()
###}


###{standalone lenient
# A bare key, and a bare value (up to what ends one), of LenientReader.
_BARE_KEY = _re.compile(r"[^\s:=,{}\[\]\"']+")
_BARE_VALUE = _re.compile(r"[^,}\]]*")
# What begins the next member of an object, after a comma.
_NEXT_KEY = _re.compile(r",\s*[^\s:=,{}\[\]\"']+\s*[:=]")
# Containers nested deeper than this are refused (the reader recurses).
_LENIENT_DEPTH = 100


class LenientReader:
    """Near-JSON with one string delimiter (Gemma 4's ``<|"|>``), as models write it,
    read into a value; ValueError when it is not. Tried only on a body the field's own
    parser refused (docs/extensions.md, recover):

    - strings between the delimiter, JSON's ``"..."`` (escapes and all) or ``'...'``;
    - bare keys, and ``=`` as well as ``:`` between a key and its value;
    - a bare value that a lone delimiter ends (``{query:Paris, France<|"|>}``): the text
      up to it, when the delimiter is followed by what ends a value (``,``, ``}``, ``]``
      or the end), is a string, unless it crosses what begins the next member (in an
      object, a comma then a key and ``:`` or ``=``; elsewhere, a comma);
    - any other bare value must be a JSON number, ``true``, ``false`` or ``null``.

    Linear: each character is read once, and the next delimiter is looked for once
    past each one found (``ahead``).
    """

    __slots__ = ("text", "delimiter", "at", "ahead", "searched")

    def __init__(self, text, delimiter) -> None:
        self.text = text
        self.delimiter = delimiter
        self.at = 0
        self.ahead = -1  # where the next delimiter at or after ``at`` is (-2: none)
        self.searched = 0  # characters the searches for it went through (for the tests)

    def read(self):
        value = self.value(0, False)
        if self.skip() < len(self.text):
            raise ValueError("lenient: text after the value")
        return value

    def skip(self):
        self.at = _SPACES.match(self.text, self.at).end()
        return self.at

    def next_delimiter(self):
        if self.ahead == -2 or self.at <= self.ahead:
            return self.ahead
        self.ahead = self.text.find(self.delimiter, self.at)
        self.searched += (len(self.text) if self.ahead < 0 else self.ahead) - self.at
        if self.ahead < 0:
            self.ahead = -2
        return self.ahead

    def value(self, depth, in_object):
        if depth > _LENIENT_DEPTH:
            raise ValueError("lenient: nested too deeply")
        text, at = self.text, self.skip()
        if at >= len(text):
            raise ValueError("lenient: a value is missing")
        c = text[at]
        if c == "{" or c == "[":
            return self.container(c, depth)
        string = self.string()
        if string is not None:
            return string
        d = self.next_delimiter()
        if d >= 0:
            # A bare run up to a lone closing delimiter is a string. (The searches for a
            # next member stop at the first comma that begins one, after this value.)
            after = _SPACES.match(text, d + len(self.delimiter)).end()
            if (after == len(text) or text[after] in ",}]") and (
                _NEXT_KEY.search(text, at, d) is None if in_object
                else text.find(",", at, d) < 0
            ):
                self.at = d + len(self.delimiter)
                return text[at:d]
        end = _BARE_VALUE.match(text, at).end()
        self.at = end
        token = text[at:end].strip()
        if token in ("true", "false", "null") or token[:1] in "-0123456789" and token:
            return _json.loads(token)
        raise ValueError(f"lenient: a bare value {token!r}")

    def string(self):
        """A quoted or delimited string at ``at`` (its text), or None."""
        text, at = self.text, self.at
        if text.startswith(self.delimiter, at):
            start = at + len(self.delimiter)
            end = text.find(self.delimiter, start)
            if end < 0:
                raise ValueError("lenient: an unfinished string")
            self.at = end + len(self.delimiter)
            return text[start:end]
        if text[at] == '"':
            value, self.at = _json.decoder.scanstring(text, at + 1)
            return value
        if text[at] == "'":
            out, i = [], at + 1
            while True:
                j = text.find("'", i)
                if j < 0:
                    raise ValueError("lenient: an unfinished string")
                k = j
                while k > i and text[k - 1] == "\\":
                    k -= 1
                if (j - k) % 2 == 0:
                    out.append(text[i:j])
                    self.at = j + 1
                    return "".join(out).replace("\\'", "'")
                out.append(text[i : j + 1])
                i = j + 1
        return None

    def container(self, opening, depth):
        text = self.text
        self.at += 1
        closing = "}" if opening == "{" else "]"
        out = {} if opening == "{" else []
        if self.skip() < len(text) and text[self.at] == closing:
            self.at += 1
            return out
        while True:
            if opening == "{":
                self.skip()
                key = self.string() if self.at < len(text) else None
                if key is None:
                    found = _BARE_KEY.match(text, self.at)
                    if found is None:
                        raise ValueError("lenient: a key is missing")
                    key, self.at = found.group(), found.end()
                if self.skip() >= len(text) or text[self.at] not in ":=":
                    raise ValueError("lenient: ':' is missing after a key")
                self.at += 1
                out[key] = self.value(depth + 1, True)
            else:
                out.append(self.value(depth + 1, False))
            if self.skip() >= len(text):
                raise ValueError(f"lenient: {closing!r} is missing")
            c = text[self.at]
            self.at += 1
            if c == closing:
                return out
            if c != ",":
                raise ValueError(f"lenient: {c!r} where ',' or {closing!r} was expected")
###}
