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

A template compiles to a :class:`RegionTable` -- plain data plus, per field, a
``process(body, captures)`` function specialised to that field's content
parser and transform -- and :class:`ResponseStream` runs it.
"""

from __future__ import annotations

###{standalone stream
import bisect as _bisect
import copy as _copy
import itertools as _itertools
import re as _re

# Held text short enough to search again, with the new piece, in one stdlib call.
_QUICK_HELD = 64
_QUICK_PIECE = 256  # longer pieces go to the scanners, which skip text at C speed
_HOLD_FIRST = 8  # after a held text, pieces this short get the hold search alone (see feed)
# Unsent text this short is answered for without a scanner while it holds no
# literal (see answer); beyond it a scanner, which keeps its state, takes over,
# so that a long pending run is not re-read on every feed.
_SHORT_HELD = 16
# Unsent text this short that holds a literal is matched with the pattern's stdlib
# form before a scanner is made for it (see answer).
_FORM_HELD = 96
# Answers a regex remembers for the unsent text (see answer): at most this many per
# regex, each for at most _FORM_HELD characters.
_PARTIALS = 4096
_BODY_RUN = 64  # region pieces joined together (see ResponseStream.tail)
_WHOLE_FAILURES = 32  # failed stdlib matches a whole-text parse tries (see complete)
# What the stdlib matches of a whole-text parse may go through, in all: this many times
# the text (see complete). A delimiter's stdlib form reads a bounded number of characters
# past the match it returns (its ``tail`` fact), but a match that another delimiter's
# commit cuts into is looked for again, from further on.
_WHOLE_READS = 4
_SLOW = object()  # ResponseStream.complete: this delimiter goes to its scanner
_PEND_STOPS_SCAN = True  # see scan (tests switch it off for a baseline)
# Prompt tails whose state a table keeps (see ResponseStream.remember), and how long one may be.
_PROMPT_STATES = 16
_PROMPT_TAIL = 256
# Feeds that find at most this much text unsent, their piece included, get their
# transitions remembered (see ResponseStream.transition_key; -1: none), at most
# _TRANSITIONS of them per table: a header arriving token by token, not a long pending
# run, which is not met again.
_TRANSITION_HELD = _FORM_HELD
_TRANSITIONS = 4096


class Delimiter:
    """One open or close delimiter, as the region machine watches it."""

    __slots__ = ("regex", "is_literal", "can_extend", "fixed", "longest", "danger")

    def __init__(self, regex, is_literal, can_extend, literals=None) -> None:
        self.regex = regex  # a CompiledRegex
        # A literal delimiter fully present before the end of the buffer cannot
        # grow, unless another literal of its list extends it.
        self.is_literal = is_literal
        self.can_extend = can_extend
        pre = regex.prefilter
        # The search that finds, from a position, everything that could leave
        # this delimiter matched or pending there (see Prefilter.quiet), or None.
        self.danger = None if pre is None or pre.danger is None else pre.quiet_search
        # Literals none of which begins another: at most one matches at a start,
        # so what a search answers is known from str.find and the literals'
        # beginnings, without a scanner (see ResponseStream.fixed_search).
        self.fixed = None
        if (
            is_literal and not can_extend and literals and pre is not None and pre.simple
            and not pre.lead and pre.lead_class is None and set(pre.literals) == set(literals)
        ):
            self.fixed = tuple(literals)
            self.longest = max(len(s) for s in literals)


class Region:
    """One field of the template."""

    __slots__ = ("name", "open", "close", "streamable", "repeats", "join", "optional", "process")

    def __init__(self, name, open, close, streamable, repeats, join, optional, process) -> None:
        self.name = name
        self.open = open
        self.close = close
        self.streamable = streamable  # chunks are part of the final value (dirty=False)
        self.repeats = repeats
        self.join = join
        self.optional = optional
        self.process = process  # (body, captures) -> value


class RegionTable:
    """The compiled template: regions in declaration order, and what to watch when."""

    __slots__ = (
        "regions", "by_name", "implicit", "defaults", "flat_defaults", "start_anchor", "quiet",
        "anchor_literals", "required", "watches", "landmarks", "walks", "modes", "prompt_states",
        "context_free",
        "transitions", "states",
    )

    def __init__(self, regions, implicit, defaults, start_anchor) -> None:
        self.regions = regions
        self.by_name = {r.name: r for r in regions}
        self.required = tuple(r.name for r in regions if not r.optional)
        self.implicit = implicit
        self.defaults = defaults
        # Defaults holding no container (the usual {"role": "assistant"}) are copied
        # with dict(): deepcopy cost a few microseconds a parse.
        self.flat_defaults = all(
            v is None or type(v) in (str, int, float, bool) for v in defaults.values()
        )
        self.start_anchor = start_anchor  # a CompiledRegex
        # The anchor's literals, when it matches them only and they never overlap:
        # its last match is then the last occurrence of one, found by rfind from the
        # end of the prompt instead of a search through all of it.
        self.anchor_literals = anchor_literals(start_anchor)
        # Outside explicit regions: every open, in field order, then the
        # implicit field's close. Inside region r: only r's close. An entry is
        # (kind, region, delimiter, key of the stream's per-watcher state).
        watch = [("open", r, r.open, ("open", r.name)) for r in regions if r.open is not None]
        if implicit is not None and self.by_name[implicit].close is not None:
            region = self.by_name[implicit]
            watch.append(("close", region, region.close, ("close", implicit)))
        self.watches = {None: watch, implicit: watch}
        for r in regions:
            if r.open is not None and r.name != implicit:
                self.watches[r.name] = (
                    [("close", r, r.close, ("close", r.name))] if r.close is not None else []
                )
        # Per mode, a stdlib pattern that finds, in a piece of text searched from
        # its start, everything that could leave a watched delimiter matched or
        # pending (see Prefilter.danger). A piece it does not match is all
        # region text. None when some watched delimiter has no such pattern.
        self.quiet: dict = {}
        modes = [implicit] + [r.name for r in regions if r.open is not None]
        for mode in modes:
            pres = [
                delimiter.regex.prefilter for _, _, delimiter, _ in self.watch(mode)
            ]
            if any(pre is None or pre.danger is None for pre in pres):
                self.quiet[mode] = None
                continue
            # The watchers' danger patterns together (Prefilter.danger), with the
            # beginnings of all their literals in one tree: the delimiters of a mode
            # often share a beginning (gpt-oss's "<|channel|>"), which a tree per
            # watcher would make sre walk once per watcher.
            literals = sorted({s for p in pres for s in p.literals})
            leads = list(dict.fromkeys(p.lead_source for p in pres if p.lead_source))
            beginnings = _beginnings(literals)
            danger = _re.compile(
                "|".join(
                    [_re.escape(s) for s in literals]
                    + ([f"(?:{beginnings})\\Z"] if beginnings is not None else [])
                    + [f"{lead}\\Z" for lead in leads]
                ) or "(?!)",
                _re.DOTALL,
            )
            if all(p.simple for p in pres):
                whole = "|".join(_re.escape(s) for s in literals)
                # One search that finds a literal first, or where the earliest
                # watcher pends (see Prefilter.hold): the work of the danger
                # search, the literal search and one pending() per watcher. The
                # watchers without a lead pend where the rest of the text begins
                # one of their literals: one tree for all of them.
                bare = _beginnings([s for p in pres if p.lead_source is None for s in p.literals])
                tails = [p.hold for p in pres if p.hold and p.lead_source is not None]
                if bare is not None:
                    tails.append(f"(?:{bare})\\Z")
                hold = _re.compile("|".join([f"(?P<literal>{whole})"] + tails), _re.DOTALL)
                # Any watcher's lead character: the hold search begins where the
                # run of them before the danger search's find does.
                lead = _re.compile("|".join(leads), _re.DOTALL).match if leads else None
                self.quiet[mode] = (
                    danger.search, _re.compile(whole, _re.DOTALL).search, hold.search, lead,
                    _first_characters(pres),
                )
            else:
                self.quiet[mode] = (danger.search, None, None, None, _first_characters(pres))
            # One character that every literal begins with (Gemma's "<", every
            # delimiter of Qwen3's or of a region of gpt-oss), and the lead characters:
            # the danger search finds a literal or its beginning, or a lead character
            # at the end, so a piece without the one and not ending with the other is
            # region text, told by ``in`` at a fraction of the search's cost. (No
            # gate when the lead characters are too many to list; they are None
            # when there are none, else a string of them.)
            heads = {s[0] for p in pres for s in p.literals}
            spaces = "".join(sorted({
                chr(c) for p in pres for lo, hi in p.lead_ranges for c in range(lo, hi + 1)
            })) if self.quiet[mode][4] is not None else None
            gate = next(iter(heads)) if len(heads) == 1 and spaces is not None else None
            self.quiet[mode] += (gate, spaces or None)

        self.landmarks = _landmarks(regions)
        # Per mode, for a whole-text parse: each landmark -> the watchers whose
        # matches can begin there (see ResponseStream.walk), when every watcher of
        # the mode only matches where one of its literals begins.
        self.walks = {} if self.landmarks is None else _walks(self.watches)
        # Prompt tail -> the stream's state after it (see ResponseStream.remember).
        self.prompt_states: dict = {}
        # Per mode, whether no watched delimiter reads the character before where
        # its search starts (no ^, \b or \B); what a feed did from a state, and
        # the numbers given to states (see ResponseStream.transition_key): next() on
        # a count is one step, so streams of one table in threads never share one.
        self.context_free = {
            mode: all(d.regex.context_free for _, _, d, _ in self.watch(mode))
            for mode in self.watches
        }
        self.transitions: dict = {}
        self.states = _itertools.count(1)
        # Per mode, what entering it sets: the quick path's searches, and whether
        # the region's chunks are dirty (not part of the final value).
        self.modes = {
            mode: (self.quiet.get(mode), mode is not None and not self.by_name[mode].streamable)
            for mode in modes
        }
        self.modes.setdefault(None, (self.quiet.get(None), False))

    def watch(self, current):
        """What the machine watches in mode ``current``: (kind, region, delimiter, key)s."""
        return self.watches[current]


def _first_characters(prefilters):
    """The characters a one-character piece, with nothing held, must be for the danger
    pattern to find anything in it: a literal's first character or a lead character
    (None when the lead characters are too many to list)."""
    if sum(hi - lo + 1 for p in prefilters for lo, hi in p.lead_ranges) > 4096:
        return None
    first = {s[0] for p in prefilters for s in p.literals}
    first.update(
        chr(c) for p in prefilters for lo, hi in p.lead_ranges for c in range(lo, hi + 1)
    )
    return frozenset(first)


def _landmarks(regions):
    """One stdlib search that finds every occurrence of every delimiter's literal, or None.

    A whole-text parse then reads the text once, instead of once per watched
    delimiter that has no match left (each such search runs to the end). It
    needs an alternation sre searches fast (one first character for all) and
    literals whose occurrences never overlap (none begins inside another or
    itself, none begins another), so that ``finditer`` meets every occurrence.
    """
    literals = set()
    for region in regions:
        for delimiter in (region.open, region.close):
            if delimiter is not None:
                pre = delimiter.regex.prefilter
                if pre is None:
                    return None
                literals.update(pre.literals)
    if not literals or len({s[0] for s in literals}) != 1 or not _apart(literals):
        return None
    ordered = sorted(literals, key=lambda s: (-len(s), s))
    return _re.compile("|".join(_re.escape(s) for s in ordered), _re.DOTALL)


def _apart(literals):
    """Whether no two occurrences of ``literals`` in any text overlap: none begins
    another, and none begins inside another or itself. Every occurrence is then a
    match of their alternation, in a search from the start or by ``rfind``.

    Read off the trie of the literals with its failure links (Aho-Corasick): a
    literal beginning or inside another ends at a node on the other's path before
    its last (a literal is a suffix of the node's text); one overlapping another's
    end begins with a proper suffix of it (the failure link of its last node is not
    the root). Linear in their total length, where comparing every pair was
    quadratic in their number (minutes at import for thousands of literals).
    """
    children = [{}]  # the trie: node -> {character: node}; 0 is the root
    ends = [False]  # whether a literal ends at the node
    for literal in literals:
        node = 0
        for ch in literal:
            nxt = children[node].get(ch)
            if nxt is None:
                nxt = children[node][ch] = len(children)
                children.append({})
                ends.append(False)
            node = nxt
        ends[node] = True
    # fail[n]: the node of the longest proper suffix of n's text that is in the trie;
    # ends[n] becomes whether some literal is a suffix of n's text. Breadth first.
    fail = [0] * len(children)
    order = list(children[0].values())
    for node in order:
        for ch, child in children[node].items():
            link = fail[node]
            while link and ch not in children[link]:
                link = fail[link]
            link = children[link].get(ch, 0)
            fail[child] = link
            ends[child] = ends[child] or ends[link]
            order.append(child)
    for literal in literals:
        node = 0
        for ch in literal[:-1]:
            node = children[node][ch]
            if ends[node]:
                return False
        if fail[children[node][literal[-1]]]:
            return False
    return True


def _single(entries):
    """``(kind, region, form)`` for a landmark that begins a match of one watch entry
    only, when no candidates need comparing there (see ``_walks``); else None."""
    if len(entries) != 1:
        return None
    kind, region, delimiter, _ = entries[0]
    if delimiter.fixed is not None:
        return kind, region, None
    pre = delimiter.regex.prefilter
    if pre.lead or pre.lead_class is not None:
        return None
    return kind, region, delimiter.regex


def anchor_literals(anchor):
    """The literals ``anchor`` (a CompiledRegex) matches, when it matches nothing
    else and they never overlap; else None (see ``truncate_at_last_anchor``)."""
    pre = anchor.prefilter
    return pre.literals if pre is not None and pre.exact and _apart(pre.literals) else None


def _walks(watches):
    """Per mode whose every watcher's matches begin where one of its literals does,
    or at the run of its lead characters before it (literals none of which begins
    another, or a stdlib form with no bounded lead): each literal -> the watch
    entries it can begin a match of, and ``(kind, region, form)`` when that is one
    delimiter (nothing to compare), else None. ``form``: None for a literal
    delimiter (the landmark is its match), else its regex, which has no lead (a
    match begins at the landmark).

    A lead is allowed when no literal holds a lead character: a run of them then
    holds no landmark, so matches begin in the order of their landmarks.
    """
    # Every character of every literal, as sorted code points: whether a lead holds one
    # is then a look-up per range of the lead (asking each lead about every literal's
    # characters was quadratic in the number of delimiters).
    characters = sorted({
        ord(c) for watch in watches.values() for entry in watch
        for s in entry[2].regex.prefilter.literals for c in s
    })

    def holds_a_literal_character(pre):
        for lo, hi in pre.lead_ranges:
            k = _bisect.bisect_left(characters, lo)
            if k < len(characters) and characters[k] <= hi:
                return True
        return False

    walks = {}
    for mode, watch in watches.items():
        by_literal: dict = {}
        for entry in watch:
            delimiter = entry[2]
            regex = delimiter.regex
            pre = regex.prefilter
            if delimiter.fixed is None and (
                regex.captures is None or not regex.tail or pre.lead
                or pre.lead_class is not None and holds_a_literal_character(pre)
            ):
                break
            for literal in pre.literals:
                by_literal.setdefault(literal, []).append(entry)
        else:
            walks[mode] = {
                literal: (entries, _single(entries)) for literal, entries in by_literal.items()
            }
    return walks


def _literal_at(delimiter, held, j, base):
    """The match of the one literal of ``delimiter.fixed`` that begins at ``held[j]``."""
    for literal in delimiter.fixed:
        if held.startswith(literal, j):
            return Match(j + base, j + base + len(literal), False)
    raise AssertionError("no literal at the position its prefilter found")


def _form_groups(regex, found):
    """The groups of ``found``, a match of the stdlib form of ``regex``, by name (None
    for one that took no part), or None when the pattern names none: each name takes
    the value of the one alias that took part (see automata/capture.py)."""
    names = regex.nfa.group_names
    if not names:
        return None
    values = found.groupdict()
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


def truncate_at_last_anchor(anchor, prefix, literals=None):
    """The prefix after the last match of the start anchor (all of it if none).

    ``literals``: what the anchor matches, when they never overlap (see
    ``RegionTable.anchor_literals``): the last match is the last occurrence.
    """
    if literals is not None:
        last, last_end = -1, None
        for literal in literals:
            at = prefix.rfind(literal)
            if at > last:
                last, last_end = at, at + len(literal)
        return prefix if last_end is None else prefix[last_end:]
    # The stdlib form finds regex's spans (see automata/capture.py) where its search is
    # linear; stepping the automata over a long chat prompt costs tens of microseconds.
    last_end = anchor.last_end(prefix)
    return prefix if last_end is None else prefix[last_end:]


class ResponseStream:
    """Streaming parse of one generation (the state behind ``ResponseParser``)."""

    # Slots, not an instance dict: CPython shares a dict's keys between instances,
    # and reads attributes fastest, only up to 30 of them.
    __slots__ = (
        "table", "coerce", "pieces", "base", "end", "pos", "fresh", "fresh_start",
        "examined", "rescans", "retired_steps", "retired_searched", "output", "captures",
        "body", "tail", "opened", "finalized", "scanners", "fixed_seen", "held_by", "known",
        "node", "whole", "marks", "marks_from", "failures", "current", "danger", "dirty",
        "initial_events", "formed",
    )

    def __init__(self, table, prefix, coerce=None) -> None:
        if prefix is None:
            raise ValueError(
                "a prefix is required: pass the chat prompt that preceded the generation "
                "(the chat template may have opened a region, such as <think>, before the "
                'model started), or prefix="" if the generation holds the whole message'
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
        # _BODY_RUN of them are joined into one string on ``body``. A token-sized
        # piece costs ~50 bytes of object header, ten times its text: kept apart,
        # they made a streamed region hold several times the reference's memory.
        self.body: list = []
        self.tail: list = []
        self.opened = False
        self.finalized = False
        self.scanners: dict = {}
        self.fixed_seen: dict = {}  # per literal watcher: (a, b), no literal begins in [a, b)
        # (watch entry, position, watch list): what held the text at the last scan
        self.held_by = None
        self.known = None  # (watcher, its answer from pos), already asked for this scan
        self.node = None  # (number of the state, end of the buffer then); see transition_key
        self.whole = None  # parse_whole: per watcher, the last stdlib search's answer
        self.marks = None  # parse_whole: literal -> where it occurs (see _landmarks)
        self.marks_from = 0
        self.failures = 0  # parse_whole: stdlib matches tried that failed (see complete)
        self.formed = 0  # parse_whole: characters its successful stdlib matches went through
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

    # A chat template ends every prompt alike (its generation prompt, "<think>\n"
    # for some), and processing that tail cost a short parse several microseconds.
    # What it leaves depends only on the table and the tail, unless a region closed
    # in it (its value may depend on the tools): then nothing is kept. The state is
    # read and set attribute by attribute: going through ``__dict__`` made CPython
    # give the instance a plain dict, and every attribute access of the stream
    # after that slower (a third slower streaming).
    _KEPT = (
        "base", "end", "pos", "fresh", "fresh_start", "examined", "rescans",
        "retired_steps", "retired_searched", "opened", "marks_from", "current", "danger",
        "dirty",
    )
    _COPIED = ("pieces", "body", "tail", "captures", "fixed_seen")

    def remember(self, truncated):
        """Keep the state the prompt's tail left, for the table's next stream with
        the same tail: when it holds no scanner, no pending answer, no closed region."""
        states = self.table.prompt_states
        if (
            len(truncated) > _PROMPT_TAIL or len(states) >= _PROMPT_STATES or self.scanners
            or self.held_by is not None or self.known is not None
            or any(e["type"] == "region_close" for e in self.initial_events)
        ):
            return
        kept = tuple(getattr(self, name) for name in self._KEPT)
        # Copies: this stream goes on changing its own lists and dicts.
        copied = tuple(type(v)(v) for v in (getattr(self, name) for name in self._COPIED))
        states[truncated] = (kept, copied, [dict(e) for e in self.initial_events])

    def resume(self, saved):
        """The state :meth:`remember` kept, copied so that this stream owns it."""
        kept, copied, events = saved
        for name, value in zip(self._KEPT, kept, strict=True):
            setattr(self, name, value)
        self.pieces, self.body, self.tail, self.captures, self.fixed_seen = (
            list(copied[0]), list(copied[1]), list(copied[2]), dict(copied[3]),
            dict(copied[4]),
        )
        self.initial_events = [dict(e) for e in events]

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
            # (then it was looked up above) or, made when needed, by what it is.
            keyed = len(unsent) <= _TRANSITION_HELD
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
            raise RuntimeError("the parser was already finalized")
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
            raise RuntimeError("the parser was already finalized")
        if not text:
            return ""
        if isinstance(text, str):
            return str.__str__(text)
        raise TypeError(f"feed takes text (a str), not {type(text).__name__}")

    def keep_unsent(self, before, unsent, text):
        """Append ``text`` (``unsent``: the text from ``pos`` to the new end),
        keeping only the unsent text and ``before``, the character before it."""
        end = self.end
        self.pieces = [before + unsent]
        self.base = self.pos - len(before)
        self.fresh, self.fresh_start = text, end
        self.end = end + len(text)
        self.examined += len(unsent)

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
            raise RuntimeError("the parser was already finalized")
        if text:
            self.append(text)
        self.whole = {}
        self.failures = 0
        self.formed = 0
        self.whole_pass()
        return self.finish()

    def finalize(self):
        if self.finalized:
            raise RuntimeError("the parser was already finalized")
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
                raise ValueError(f"required fields missing from the parsed output: {missing}")
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
            best, hold_start = self.scan(self.table.watch(self.current), eos)
            if best is not None:
                kind, region, m = best
                if m.start > self.pos:
                    self.accumulate(events, self.text(self.pos, m.start))
                self.pos = m.end
                if kind == "open":
                    captures = m.captured()
                    if record is not None:
                        record.append((True, region, m.start - start, m.end - start, captures))
                    self.close_current(events)
                    self.open_region(events, region, captures)
                else:
                    if record is not None:
                        record.append((False, region, m.start - start, m.end - start, None))
                    had_content = self.opened
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
                    self.accumulate(events, self.text(self.pos, self.end))
                    self.pos = self.end
                self.close_current(events)
                break
            if hold_start > self.pos:
                self.accumulate(events, self.text(self.pos, hold_start))
                self.pos = hold_start
            break
        if record is not None:
            held_by = self.held_by
            if held_by is not None:
                held_by = (held_by[0], held_by[1] - start, held_by[2])
            self.remember_transition(key, (tuple(record), self.pos - start, held_by))
        self.trim()

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
        if end + len(text) - self.pos > _TRANSITION_HELD:
            return None
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
            self.close_current(events)
            if opens:
                self.open_region(events, region, dict(captures))
        emitted += start
        if emitted > self.pos:
            held, base = self.held()
            self.accumulate(events, held[self.pos - base : emitted - base])
            self.pos = emitted
        self.trim()

    def whole_pass(self):
        """``process(events, eos=True)`` for ``parse_whole``: the same commits, in a
        loop of its own that makes no events (nobody reads them) and asks each
        watcher's remembered answer first (see :meth:`complete`)."""
        whole = self.whole
        held, base = self.held()
        table = self.table
        if self.current in table.walks and self.walk(held, base, table.walks):
            return
        watches = table.watches
        while True:
            pos = self.pos
            best = best_kind = best_region = None
            for kind, region, delimiter, watcher in watches[self.current]:
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
                        (m.start - m.end, 0 if kind == "open" else 1, region.name)
                        < (best.start - best.end, 0 if best_kind == "open" else 1,
                           best_region.name)
                    )
                ):
                    best, best_kind, best_region = m, kind, region
            if best is None or best.start >= self.end:
                break  # nothing, or only an empty match at the very end: no commit
            if not self.commit_whole(
                held, base, best.start, best.end, best_kind, best_region,
                best.captured() if best_kind == "open" else None,
            ):
                return
        self.end_whole(held, base)

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
        if kind == "open":
            self.close_current(None)
            self.open_region(None, region, {} if captures is None else captures)
            return True
        had_content = self.opened
        self.close_current(None)
        return had_content or start != end

    def end_whole(self, held, base):
        """The end of a whole-text pass: the rest goes to the open region, which closes."""
        if self.pos < self.end:
            if self.current is not None:
                self.opened = True
                self.tail.append(held[self.pos - base :])
            self.pos = self.end
        self.close_current(None)

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
        self.examined += len(held) - lo
        table = self.table
        implicit = table.implicit
        close_with = self.close_with
        # The stream's state, kept in locals while walking: the open region's name and
        # captures are written back before close_with (which reads them), all of it
        # before returning.
        pos, current, opened, captures = self.pos, self.current, self.opened, self.captures
        by_literal = walks[current]
        before = bool(self.body or self.tail)  # text the prompt's tail left in the region
        done = True  # False: the loop goes on from here
        cut = False
        reads = _WHOLE_READS * self.end - self.formed  # what stdlib matches may go through
        for found in table.landmarks.finditer(held, lo):
            spot = by_literal.get(found.group())
            if spot is None:
                continue
            at = found.start()
            if at + base < pos:
                continue
            entries, single = spot
            if single is not None:
                kind, region, form = single
                if form is None:
                    start, end, caught = at + base, found.end() + base, None
                else:
                    # (best_at for one delimiter: its match begins at the landmark.)
                    if reads < 0:
                        done = False
                        break
                    matched = form.captures.match(held, at)
                    if matched is None:
                        self.failures += 1
                        if self.failures > _WHOLE_FAILURES:
                            done = False
                            break
                        continue
                    end = matched.end()
                    self.examined += end - at
                    reads -= end - at
                    start, end = at + base, end + base
                    caught = _form_captures(form, matched) if kind == "open" else None
            else:
                self.pos = pos
                self.formed = _WHOLE_READS * self.end - reads
                best = self.best_at(held, base, found, at, entries)
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
            # The commit: commit_whole, written out (a few calls less a landmark).
            had_content = opened
            if current is not None and (opened or start > pos):
                had_content = True
                text = held[pos - base : start - base]
                if before:
                    text = "".join(self.body) + "".join(self.tail) + text
                    self.body, self.tail = [], []
                    before = False
                self.current, self.captures = current, captures
                close_with(text, None)
            elif before:
                self.body, self.tail = [], []
                before = False
            pos = end
            if kind == "open":
                current, captures, opened = region.name, ({} if caught is None else caught), True
            else:
                current, captures, opened = implicit, {}, False
                if not (had_content or start != end):
                    # A zero-width close of an empty region would fire forever: the
                    # pass ends here, the rest unread.
                    cut = True
                    break
            by_literal = walks.get(current)
            if by_literal is None:
                done = False
                break
        self.pos, self.current, self.captures, self.opened = pos, current, captures, opened
        self.formed = _WHOLE_READS * self.end - reads
        self.danger, self.dirty = table.modes[current]
        if done and not cut:
            self.end_whole(held, base)
        return done

    def best_at(self, held, base, found, at, entries):
        """The walk's choice among the watch ``entries`` whose literal is ``found``
        (at ``at`` in ``held``): ``(start, end, kind, region, regex, stdlib match)``,
        None when none matches there, False when the rest is left to the loop."""
        # Candidates as tuples: (start, end, kind, region, regex, stdlib match).
        best = None
        for kind, region, delimiter, _ in entries:
            if delimiter.fixed is not None:
                start, end, regex, matched = at + base, found.end() + base, None, None
            else:
                regex = delimiter.regex
                # (complete's attempt: from the run of lead characters before.)
                t = regex.prefilter.lead_start(held, self.pos - base, at)
                if self.formed > _WHOLE_READS * self.end:
                    return False
                matched = regex.captures.match(held, t)
                if matched is None:
                    if t != at:
                        return False  # a later start may match: its scanner decides
                    self.failures += 1
                    if self.failures > _WHOLE_FAILURES:
                        return False
                    continue
                self.examined += matched.end() - t
                self.formed += matched.end() - t
                start, end = matched.start() + base, matched.end() + base
            # The earliest start wins; ties (one literal opening two regions) go
            # as in whole_pass.
            if best is None or start < best[0] or start == best[0] and (
                (start - end, 0 if kind == "open" else 1, region.name)
                < (best[0] - best[1], 0 if best[2] == "open" else 1, best[3].name)
            ):
                best = (start, end, kind, region, regex, matched)
        return best

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
        pre = regex.prefilter
        key = None
        if pre is not None and pre.simple and self.end - self.pos <= _FORM_HELD:
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
                if not eos and held_by is not None and held_by[0][3] is watcher:
                    key = self.answer_key(regex)
                    known = regex.partials.get(key)
                    if known is not None:
                        return None if known < 0 else Match(self.pos + known, self.end, True)
                held, base = self.held()
                lo = self.pos - base
                n = len(held)
                # A simple pattern (a lead loop then a literal, or a literal first)
                # matches only where a literal is, preceded by lead characters alone.
                j = pre.find(held, lo, n)
                if j < 0:
                    # No literal, no match; what pends is known from the literals'
                    # beginnings and the lead (Prefilter.pending), as in the quick
                    # path of feed. Over longer text a scanner, which keeps its
                    # state, takes over: a pending run is not re-read every feed.
                    if eos or n - lo <= _SHORT_HELD:
                        self.examined += n - lo
                        if eos:
                            return None
                        p = pre.pending(held, lo)
                        self.examined += n - lo
                        if key is not None:  # asked by the holder: kept (see above)
                            self.remember_answer(regex, key, p + base - self.pos if p < n else -1)
                        return Match(p + base, self.end, True) if p < n else None
                elif regex.captures is not None:
                    # A literal: the leftmost match, if any, begins where the run of
                    # lead characters before it does. The stdlib form takes the same
                    # path as regex there, on the text so far (a complete match is
                    # what the search answers even while a longer one may still
                    # come; see Scanner.result). If none begins there, the scanner
                    # decides, partial matches included.
                    t = pre.lead_start(held, lo, j)
                    found = regex.captures.match(held, t)
                    self.examined += j - lo + (0 if found is None else found.end() - j)
                    if found is not None:
                        return _form_match(regex, found, base)
                    if not eos and key is None:
                        key = self.answer_key(regex)
                        known = regex.partials.get(key)
                        if known is not None:
                            return None if known < 0 else Match(self.pos + known, self.end, True)
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
        pre = regex.prefilter
        if delimiter.fixed is not None:
            # Literals none of which begins another: the first one found is the match.
            held, base = self.held()
            lo = pos - base
            hit = self.find_whole(pre, held, lo, len(held))
            m = None if hit < 0 else _literal_at(delimiter, held, hit, base)
            self.whole[key] = (pos, m)
            return m
        form = regex.captures
        if (
            form is None or pre is None or pre.lead or not regex.tail
            or self.formed > _WHOLE_READS * self.end
        ):
            self.whole[key] = _SLOW
            return _SLOW
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
            found = form.match(held, t)
            if found is not None:
                break
            # No match begins at t. When t is the literal's own start, none
            # begins before the next literal's run of lead characters either:
            # try there, a bounded number of times a parse (a failed match
            # may have read far), then leave the delimiter to its scanner.
            self.failures += 1
            if t != hit or self.failures > _WHOLE_FAILURES:
                self.whole[key] = _SLOW
                return _SLOW
            lo = hit + 1
        self.examined += found.end() - t
        self.formed += found.end() - t
        m = _form_match(regex, found, base)
        self.whole[key] = (pos, m)
        return m

    def find_whole(self, pre, held, lo, hi):
        """``pre.find`` over the whole text, answered from one search for every
        delimiter's literals (the table's landmarks) when there is one.

        Counts what it reads in ``examined``: the text up to the hit (or ``hi``)
        for a search of its own; the landmarks' one pass, once a parse.
        """
        marks = self.marks
        if marks is None:
            landmarks = self.table.landmarks
            if landmarks is None:
                return self._find_counted(pre, held, lo, hi)
            marks = self.marks = {}
            for m in landmarks.finditer(held, lo):
                marks.setdefault(m.group(), []).append(m.start())
            self.marks_from = lo
            self.examined += len(held) - lo
        if lo < self.marks_from:
            return self._find_counted(pre, held, lo, hi)
        best = -1
        for literal in pre.literals:
            starts = marks.get(literal)
            if starts:
                i = _bisect.bisect_left(starts, lo)
                if i < len(starts) and starts[i] < hi - len(literal) + 1:
                    if best < 0 or starts[i] < best:
                        best = starts[i]
        return best

    def _find_counted(self, pre, held, lo, hi):
        hit = pre.find(held, lo, hi)
        self.examined += (hi if hit < 0 else hit) - lo
        return hit

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
        self.danger, self.dirty = self.table.modes[mode]
        self.captures = captures
        self.body = []
        self.tail = []
        self.opened = True
        if events is not None:  # None: parse_whole, where nobody reads them
            events.append({"type": "region_open", "field": region.name})

    def close_current(self, events):
        if self.current is None or not self.opened:
            self.reset()
            return
        tail = self.tail
        if tail:
            self.body.append("".join(tail))
            tail.clear()
        try:
            self.close_with("".join(self.body), events)
        except BaseException:
            # The region's parser (or its join, its tool typing) refused its text. As
            # in the reference, the region stays open with that text, once, and the
            # next finalize, or a close after more text, parses it again; the state
            # a replayed feed announced (see replay) was not reached.
            self.forget()
            raise
        self.reset()

    def forget(self):
        """Drop what the stream knows about the state it is in (see transition_key,
        scan): kept only to save work, it can be wrong once a commit has raised."""
        self.node = self.held_by = self.known = None

    def close_with(self, text, events):
        """Give the open region's value (its whole text is ``text``) to the message;
        the caller then leaves the region."""
        region = self.table.by_name[self.current]
        value = region.process(text, self.captures)
        if self.coerce is not None and type(value) is not str:  # a string holds no tool call
            value = self.coerce(value)
        name = self.current
        if region.join is not None:
            if not isinstance(value, str):
                raise ValueError(
                    f"field {name!r}: 'join' needs every match to parse to a string, "
                    f"got {type(value).__name__}"
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
        else:
            self.output[name] = value
        if events is not None:
            events.append({"type": "region_close", "field": name, "value": value})

    def reset(self):
        table = self.table
        mode = self.current = table.implicit  # enter, written out (a call less per region)
        self.danger, self.dirty = table.modes[mode]
        self.captures = {}
        self.body = []
        self.tail = []
        self.opened = False
###}

# The generated module defines Match before this section; here it comes from the engine.
from .engine import Match, _beginnings  # noqa: E402
