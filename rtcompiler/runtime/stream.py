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
parser and transform -- and :class:`ResponseStream` runs it. Here: the state, feed,
the buffer, the loop that makes commits (``process``) and finish. Its other parts are
mixins, one module each: what each watcher answers and the scan that takes their
answers to a commit (answers.py), the walk of long pieces (stream_walk.py), regions
whose close counts only outside strings (string_regions.py), regions' events and
values (region_values.py), the whole-text pass (whole.py) and the memo of feeds
(memo.py).

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
from .answers import _QUICK_HELD, _QUICK_PIECE, WatcherAnswers
from .memo import _TRANSITION_HELD, StreamMemo
from .region_values import RegionValues
from .regions import truncate_at_last_anchor
from .stream_walk import _HELD, StreamWalk
from .string_regions import _BODY_RUN, StringRegions
from .whole import _FORM_HELD, WholePass

# isort: split

###{standalone stream
import copy as _copy

_HOLD_FIRST = 8  # after a held text, pieces this short get the hold search alone (see feed)
# Unsent text longer than this is walked from landmark to landmark (see walk_step)
# before the watchers are asked one by one: from a header's first few characters,
# which the walk holds when they begin one.
_WALK_HELD = 8
# ... when the text held before the last piece is at most this long: each walk that stops
# (a header still arriving) reads it again with the next piece, so it is bounded, and
# longer than one of the longest headers (Harmony's, about 80 characters) that a piece of
# 64 cuts, and the rest of the header arrives with the next.
_WALK_BEFORE = 128
# In a string-tracking region, the unsent text beyond which a feed holding a whole
# literal is not named, so that its strings need not be read first (see feed).
_STRINGS_KEYED = 32


class ResponseStream(
    StreamMemo, WholePass, WatcherAnswers, StreamWalk, StringRegions, RegionValues
):
    """Streaming parse of one generation (the state behind ``ResponseParser``)."""

    # Slots, not an instance dict: CPython shares a dict's keys between instances,
    # and reads attributes fastest, only up to 30 of them.
    __slots__ = (
        "table", "coerce", "pieces", "base", "end", "pos", "fresh", "fresh_start",
        "examined", "rescans", "retired_steps", "retired_searched", "output", "captures",
        "body", "tail", "opened", "finalized", "scanners", "fixed_seen", "held_by", "known",
        "node", "whole", "marks", "marks_from", "failures", "missed", "current", "danger", "dirty",
        "initial_events", "formed", "strings", "resume_to", "resumed", "decoded",
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
        # In a string_modes region: its string tracker (strings.py), made when first scanned.
        self.strings = None
        # What the walk's decode of a string-tracking region's body gave for the close it
        # commits, ``(where the body ends, (content,))``: see walk_step and process.
        self.decoded = None
        # The yield extension (docs/extensions.md): the yielding region to go back to when
        # the open region closes, and whether the open region is such a region's next piece.
        self.resume_to = None
        self.resumed = False
        # enter(table.implicit), written out (a call less per parse)
        self.current = table.implicit
        self.danger, self.dirty = table.modes[table.implicit]
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
        quick = self.danger
        pos = self.pos
        if (
            quick is not None and type(text) is str and pos == self.end and pos and text
            and self.held_by is None and len(text) <= _QUICK_PIECE
        ):
            # The usual token, before anything else: nothing is held, and the piece holds
            # neither the mode's gate character nor a lead character at its end, so it
            # is all region text, as the quick path below would find it at more cost.
            gate = quick[5]
            if gate is not None and gate not in text:
                spaces = quick[6]
                if spaces is not None and text[-1] in spaces:
                    if quick[2] is not None:  # (the hold search: see the quick path)
                        return self.hold_lead(text, text, spaces)
                else:
                    self.pieces = [text]
                    self.base = pos
                    self.fresh = text
                    self.fresh_start = pos
                    self.end = self.pos = pos + len(text)
                    self.examined += len(text)
                    if self.opened:
                        tail = self.tail
                        tail.append(text)
                        if len(tail) >= _BODY_RUN:
                            self.body.append("".join(tail))
                            tail.clear()
                        return [
                            {"type": "region_chunk", "field": self.current, "text": text,
                             "dirty": self.dirty}
                        ]
                    events = []
                    self.accumulate(events, text)
                    return events
        elif type(text) is not str:
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
                if (
                    len(text) > _HOLD_FIRST and self.end - self.pos > _WALK_HELD
                    and start - self.pos <= _WALK_BEFORE and self.resume_to is None
                    and self.current in self.table.stream_walks
                ):
                    # A longer piece: the walk asks from pos what the holder would
                    # answer (it holds there again when the header still arrives).
                    self.held_by = None
                    events = []
                    self.process(events, False, key)
                    return events
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
        end = self.end
        if (
            quick is not None and 0 < len(text) <= _QUICK_PIECE and end - pos <= _QUICK_HELD
            and (pos or self.current not in self.table.start_modes)
        ):
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
                        return self.hold_lead(text, text, spaces)
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
                if (
                    gate is not None and gate not in unsent and self.held_by is None
                    and (spaces is None or text[-1] not in spaces
                         or hold is not None and text.strip(spaces))
                ):
                    # Held lead characters (a space before "\s*<tool_call>") and a
                    # piece passing the gate, not all lead characters itself: as for a
                    # piece fed with nothing held (the held text begins nothing
                    # without the piece). (A run of them fed one by one goes on below,
                    # where it is not read again at each.)
                    if spaces is None or text[-1] not in spaces:
                        found = None
                    else:
                        return self.hold_lead(unsent, text, spaces)
                else:
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
            # inside a string (see described). Not for a longer piece that holds a
            # whole literal in a JSON body: such pieces seldom come again, and the walk
            # may tell without reading the strings (see walk_step); value delimiters are
            # read with one match, as cheap as naming the state.
            keyed = len(unsent) <= _TRANSITION_HELD and (
                self.strings is None or self.strings.at == pos
                or (
                    len(unsent) <= _STRINGS_KEYED or found.end() == len(unsent)
                    or not self.strings.json
                )
                and self.strings_keyed(unsent, found.start()).at == pos
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

    def hold_lead(self, unsent, text, spaces):
        """Feed ``text`` (``unsent``: the text from ``pos`` to the new end) when only
        the lead characters at its end can begin anything watched (a space before
        ``\\s*<tool_call>``): they are held from the beginning of their run, as the hold
        search would hold them, and the text before them, holding no literal to
        commit, is region text."""
        pos = self.pos
        end = self.end
        stop = len(unsent.rstrip(spaces))
        if not stop:
            held, base = self.held()
            self.keep_unsent(held[pos - base - 1 : pos - base] if pos > base else "", unsent, text)
            self.examined += len(unsent)
            return []
        self.pieces = [unsent]  # (the character before the new pos is in it)
        self.base = pos
        self.fresh, self.fresh_start = text, end
        self.end = end + len(text)
        self.examined += 2 * len(unsent) - stop
        self.pos = pos + stop
        chunk = unsent[:stop]
        if self.opened:
            # accumulate, written out for the usual token ending in a space
            tail = self.tail
            tail.append(chunk)
            if len(tail) >= _BODY_RUN:
                self.body.append("".join(tail))
                tail.clear()
            return [
                {"type": "region_chunk", "field": self.current, "text": chunk,
                 "dirty": self.dirty}
            ]
        events = []
        self.accumulate(events, chunk)
        return events

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
        # (Most messages have none: every value is true, told at C speed.)
        if not all(output.values()):
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
        pieces = self.pieces
        if len(pieces) == 1:
            return pieces[0], self.base
        if not pieces:
            return "", self.base
        self.pieces = pieces = ["".join(pieces)]
        return pieces[0], self.base

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
            best = hold_start = None
            if (
                self.end - self.pos > _WALK_HELD
                and self.fresh_start - self.pos <= _WALK_BEFORE
                and not eos and self.held_by is None and self.resume_to is None
                and (self.pos or self.current not in self.table.start_modes)
            ):
                best = self.walk_step()
                if best is _HELD:
                    best, hold_start = None, self.pos
            if best is not None or hold_start is not None:
                # (The answer the feed already had, from pos, is the walk's at pos, or
                # is of a later match; after a hold, the next piece asks again.)
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
                        if self.opened or self.resume_to is not None or self.resumed:
                            self.close_current(events)
                        # (Else nothing is open, the implicit region before its first
                        # text: close_current would only enter the mode open_region leaves.)
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
                    if strung and self.decoded is not None:
                        # The body the walk decoded, when it ends where this close begins.
                        decoded, self.decoded = self.decoded, None
                        self.close_current(
                            events, False, decoded[1] if decoded[0] == m.start else None
                        )
                    elif had_content or self.resume_to is not None or self.resumed:
                        self.close_current(events)
                    # (Else nothing is open, the implicit region before its first text, as
                    # between Harmony's header tokens: close_current would only enter the
                    # same mode again.)
                    if not had_content and m.start == m.end:
                        break  # a zero-width close of an empty region would fire forever
                quick = self.danger
                if (
                    quick is not None and not eos and self.end - self.pos <= _QUICK_PIECE
                    and (self.pos or self.current not in self.table.start_modes)
                ):
                    # Short text after the delimiter (a token's rest): when the new
                    # mode's danger search finds nothing in it, it is all region
                    # text, as in the quick path of feed.
                    pieces = self.pieces
                    if len(pieces) == 1:  # held, written out for the usual case
                        held, base = pieces[0], self.base
                    else:
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
        if self.held_by is not None:
            quick = self.danger
            if (
                quick is not None and quick[6] is not None and quick[5] is not None
                and self.end - self.pos <= _QUICK_HELD
            ):
                held, base = self.held()
                if held.find(quick[5], self.pos - base) < 0:
                    # What pends is a run of lead characters (a space before
                    # "\s*<tool_call>"): the next piece is judged by the quick path
                    # as cheaply as its watcher would judge it, and at once when it
                    # passes the gate.
                    self.held_by = None
        if record is not None:
            held_by = self.held_by
            if held_by is not None:
                held_by = (held_by[0], held_by[1] - start, held_by[2])
            self.remember_transition(key, (tuple(record), self.pos - start, held_by))
        self.trim()
###}
