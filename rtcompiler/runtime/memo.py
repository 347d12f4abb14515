"""The streaming memo: what a table remembers of feeds, and how a feed is replayed.

Standard library only (the ``memo`` section). Streams of one template meet the same
situations again: the same prompt tail (a chat template ends every prompt alike),
the same header arriving token by token. :class:`StreamMemo` keeps, per table, the
state a prompt tail leaves (``remember``/``resume``), what a short feed did from a
given state (``remember_transition``/``replay``) and where a search pended
(``answer_key``/``remember_answer``), so that the next stream does it without a
search. Every memo is bounded (the constants below).
"""

from __future__ import annotations

from .whole import _FORM_HELD

# isort: split

###{standalone memo
# Answers a regex remembers for the unsent text (see answer): at most this many per
# regex, each for at most _FORM_HELD characters.
_PARTIALS = 4096
# Prompt tails whose state a table keeps (see ResponseStream.remember), and how long one may be.
_PROMPT_STATES = 16
_PROMPT_TAIL = 256
# Feeds that find at most this much text unsent, their piece included, get their
# transitions remembered (see ResponseStream.transition_key; -1: none), at most
# _TRANSITIONS of them per table: a header arriving token by token, not a long pending
# run, which is not met again.
_TRANSITION_HELD = _FORM_HELD
_TRANSITIONS = 4096


class StreamMemo:
    """``ResponseStream``'s memo of feeds (a mixin: the state is the stream's)."""

    __slots__ = ()

    # A chat template ends every prompt alike (its generation prompt, "<think>\n"
    # for some), and processing that tail is a large part of a short parse. What it
    # leaves depends only on the table and the tail, unless a region closed in it (its
    # value may depend on the tools): then nothing is kept. The state is read and set
    # attribute by attribute: going through ``__dict__`` would give the instance a
    # plain dict, which slows every attribute access of the stream.
    _KEPT = (
        "base", "end", "pos", "fresh", "fresh_start", "examined", "rescans",
        "retired_steps", "retired_searched", "opened", "marks_from", "current", "danger",
        "dirty", "held_by",
    )
    _COPIED = ("pieces", "body", "tail", "captures", "fixed_seen")

    def remember(self, truncated):
        """Keep the state the prompt's tail left, for the table's next stream with
        the same tail: when it holds no scanner, no pending answer, no closed region.
        (What held the text, ``held_by``, is kept: a thinking prompt's "<think>\n" leaves
        its newline held where a call's open begins with whitespace, as Qwen3-Coder's
        does in its yielding reasoning.)"""
        states = self.table.prompt_states
        if (
            len(truncated) > _PROMPT_TAIL or len(states) >= _PROMPT_STATES or self.scanners
            or self.known is not None
            or any(e["type"] == "region_close" for e in self.initial_events)
            or self.strings is not None or self.resume_to is not None or self.resumed
        ):
            return
        kept = tuple(getattr(self, name) for name in self._KEPT)
        # Copies: this stream goes on changing its own lists and dicts.
        copied = tuple(type(v)(v) for v in (getattr(self, name) for name in self._COPIED))
        states[truncated] = (kept, copied, [dict(e) for e in self.initial_events])

    def resume(self, saved):
        """The state :meth:`remember` kept, copied so that this stream owns it."""
        kept, copied, events = saved
        # _KEPT, written out: one unpacking, not a setattr per name (a test checks the order).
        (
            self.base, self.end, self.pos, self.fresh, self.fresh_start, self.examined,
            self.rescans, self.retired_steps, self.retired_searched, self.opened,
            self.marks_from, self.current, self.danger, self.dirty, self.held_by,
        ) = kept
        self.pieces, self.body, self.tail, self.captures, self.fixed_seen = (
            list(copied[0]), list(copied[1]), list(copied[2]), dict(copied[3]),
            dict(copied[4]),
        )
        self.initial_events = [dict(e) for e in events]

    def remember_transition(self, key, plan):
        """Keep, for ``key`` (see transition_key), what the feed did: ``plan`` is its
        commits, where its emitted text ends and who holds the rest, relative to
        where it began (see replay). The state it leaves, unless nothing is
        unsent, gets a new number."""
        if key is None:
            return
        table = self.table
        node = None
        if self.pos < self.end:
            node = next(table.states)
            self.node = (node, self.end)
        transitions = table.transitions
        if len(transitions) >= _TRANSITIONS:
            transitions.clear()  # the headers of the tools in use now fill it again
        transitions[key] = (*plan, node)

    def transition_key(self, text, end):
        """The key of feeding ``text`` now (``end``: where the buffer ends before it),
        or None when the state is not known.

        What a feed does -- the commits, where the emitted text ends, who holds
        the rest -- depends only on the state it finds: the mode, whether its
        region has text yet, the unsent text, and the character before it when a
        watched pattern reads it. Everything else the stream keeps (scanners,
        what is known to hold no literal, who held the text) only saves work.
        A state is named by that description (see described), or by a number
        that a feed which left it gave it (``node``), valid while no other text
        came: the same state, reached from the same state by the same piece. So
        a key costs the piece, not the held text, along a header; and a stream
        that meets a header met before, cut alike (the same tool's, in a later
        answer, token by token), replays each feed (see replay) with none of the
        searches.
        """
        if end + len(text) - self.pos > _TRANSITION_HELD or self.resume_to is not None:
            return None
        if self.strings is not None and self.strings_read().at != self.pos:
            return None  # the strings were read past here: the state is not known
        self.examined += len(text)
        node = self.node
        if node is not None and node[1] == end:
            return node[0], text
        held, base = self.held()
        lo = self.pos - base
        if lo == 0 and base and not self.table.context_free[self.current]:
            return None  # the character before is not kept
        return self.described(held[lo:], held[lo - 1 : lo] if lo else ""), text

    def described(self, held, before):
        """The state with ``held`` unsent after ``before`` (the character before it),
        named by what it is."""
        self.examined += len(held)
        strings = self.strings
        if strings is not None:
            # In a region whose close counts outside strings, read up to here: whether
            # this is inside a string, and what the read left pending (see strings.py).
            return (
                self.current, self.opened, held, before, self.resume_to, self.resumed,
                strings.inside, strings.pending,
            )
        if self.resume_to is not None or self.resumed:
            # What a close does depends on the yielding region (docs/extensions.md) too.
            return self.current, self.opened, held, before, self.resume_to, self.resumed
        if self.table.context_free[self.current]:
            return self.current, self.opened, held
        return self.current, self.opened, held, before

    def replay(self, events, plan):
        """Do what a feed remembered by ``remember_transition`` did, from ``pos``
        (its piece appended): its commits, making the region events and values as
        ``process`` makes them, and its emitted text."""
        commits, emitted, held_by, node = plan
        start = self.pos
        if held_by is not None:
            held_by = (held_by[0], start + held_by[1], held_by[2])
        self.held_by = held_by
        if node is not None:
            self.node = (node, self.end)
        if not commits and not emitted:
            return  # a header still arriving: the buffer is as trim left it
        for opens, region, at, end, captures in commits:
            at += start
            if at > self.pos:
                self.accumulate(events, self.text(self.pos, at))
            self.pos = start + end
            decoded = self.decoded
            if decoded is not None and not opens and self.strings is not None:
                # The body a feed's key decoded (see strings_keyed), when it ends here.
                self.decoded = None
                self.close_current(events, False, decoded[1] if decoded[0] == at else None)
            elif self.opened or self.resume_to is not None or self.resumed:
                self.close_current(events)  # (else nothing is open: see process)
            if opens:
                self.open_region(events, region, dict(captures))
        emitted += start
        if emitted > self.pos:
            held, base = self.held()
            self.accumulate(events, held[self.pos - base : emitted - base])
            self.pos = emitted
        self.trim()

    def answer_key(self, regex):
        """What a search from ``pos`` answers according to: the unsent text, and the
        context the character before gives when the pattern reads it (None when that
        character is not kept)."""
        held, base = self.held()
        lo = self.pos - base
        self.examined += len(held) - lo
        if regex.context_free:
            return held[lo:]
        if lo == 0 and base:
            return None
        return (regex.prev_context(held, lo), held[lo:])

    def remember_answer(self, regex, key, known):
        """Keep, for ``key`` (see answer_key), where a search pends (an offset from
        ``pos``) or -1 for no match and nothing pending."""
        if key is None:
            return
        partials = regex.partials
        if len(partials) >= _PARTIALS:
            partials.clear()  # the headers of the tools in use now fill it again
        partials[key] = known

    def forget(self):
        """Drop what the stream knows about the state it is in (see transition_key,
        scan): kept only to save work, it can be wrong once a commit has raised."""
        self.node = self.held_by = self.known = None
###}
