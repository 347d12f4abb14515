"""A compiled delimiter pattern (:class:`CompiledRegex`) and its reading back from data.

Standard library only (the ``compiled_regex`` section). It ties the stages together
in the order a search uses them: the prefilter finds where an attempt can begin, the
DFA (dfa.py) or a scanner (scanner.py) finds the match, the threads (pikevm.py) read
its groups; and where a stdlib ``re`` form of the pattern takes the same path as
``regex`` (``rtcompiler.automata.capture``), that form answers at C speed. ``finditer``
runs in linear time: a backward pass of live NFA states, then forward walks.

See ``docs/regex-dialect.md`` for the semantics, including ``regex``'s partial
matching rules.
"""

from __future__ import annotations

# A generated module defines these in the sections before this one.
from .dfa import DfaTables
from .match import Match
from .pikevm import (
    ASSERT,
    CHAR,
    CUR,
    EOF,
    LOOK,
    MATCH,
    PREV_OTHER,
    PREV_START,
    PREV_WORD,
    SAVE,
    SPLIT,
    CharClasses,
    Machine,
    Program,
    _end_at,
    _group_text,
    _save_slot,
    _value,
)
from .prefilter import Prefilter, char_class_source
from .scanner import Scanner

# isort: split

###{standalone compiled_regex
import re as _re

# Groups remembered per pattern where a match's threads settled (CompiledRegex.groups_at):
# at most this many, each after at most _SETTLED_PREFIX characters, of at most
# _SETTLED_LENGTHS different lengths (each length costs a look-up per match).
_SETTLED_KEPT = 1024
_SETTLED_PREFIX = 256
_SETTLED_LENGTHS = 8


# Exits this few are found with str.find, one per character (a memchr, several times
# faster than sre's search for a character class); more, with a class.
_FIND_EXITS = 4
_FIND_WINDOW = 256


def _find_any(chars: tuple):
    """``find(text, i, hi)``: the first of ``chars`` in ``text[i:hi]``, or ``hi``.

    Each character is looked for in a window that grows fourfold while none is
    found, and a hit narrows the others' window: a frequent character and a rare
    one read a few times the distance to the nearest hit, not the rest of the text.
    """
    if not chars:
        return lambda text, i, hi: hi

    def find(text: str, i: int, hi: int) -> int:
        window = _FIND_WINDOW
        while i < hi:
            edge = min(hi, i + window)
            best = -1
            for ch in chars:
                j = text.find(ch, i, edge)
                if j >= 0:
                    best = edge = j
            if best >= 0:
                return best
            i = edge
            window *= 4
        return hi

    return find


def _search_exit(pattern):
    def find(text: str, i: int, hi: int) -> int:
        m = pattern.search(text, i, hi)
        return hi if m is None else m.start()

    return find


_LIVE_CACHE = 4096  # live sets a pattern keeps per character class (see CompiledRegex._live_at)
_ACCELERATE = 8  # equal live sets in a row after which the pass searches ahead (see _liveness)


def _beginning_search(source):
    """The ``match`` of ``(?:source)\\Z``: whether a text from a start to the end begins a
    match, for ``source`` a pattern's beginnings (automata/capture.py)."""
    return _re.compile(f"(?:{source})\\Z", _re.DOTALL).match


def _plain_groups(names, group_names):
    """Whether a stdlib form's groups (``names``: each name's aliases) are the pattern's
    names, one each: then a match's groupdict is what _form_groups would give."""
    return all(aliases == [name] for name, aliases in names.items()) and set(names) == set(
        group_names
    )


def split_layout(form):
    """``(stride, key, value)`` for the parts of ``form.split``: per match its groups and
    the text before it, and where in them the groups ``key`` and ``value`` of an
    xml-inline tag pattern stand (None for a group it lacks)."""
    index = form.groupindex
    return form.groups + 1, index.get("key"), index.get("value")


class CompiledRegex:
    """A compiled delimiter pattern: its program (NFA), character classes and DFA.

    ``dfa`` is anything with ``initial``, ``step``, ``at_eof`` and ``is_dead``:
    the compiler's lazily built DFA, or :class:`DfaTables` in a generated module.
    """

    def __init__(
        self, program, classes, dfa, prefilter=None, captures=None, lazy_tail=None,
        branches=None, late=None,
    ) -> None:
        self.nfa = program
        # The pattern past the start of the output, where ^ never holds (see
        # automata/search.py, _late), or None: answers from a later position use it.
        self.late = late
        # A stdlib form with the same groups (see rtcompiler/automata/capture.py),
        # and for each group name the stdlib groups standing for it.
        self.captures: _re.Pattern | None = None
        # The beginnings of its matches (see automata/capture.py), compiled when first
        # asked for (see beginning).
        self.beginnings = None if captures is None else captures.get("prefix")
        # Where there is no such search: one that every text beginning a match matches,
        # and maybe more (its assertions and lookaheads read loosely, see
        # automata/capture.py): a text it does not match does not pend.
        self.loose_beginnings = None if captures is None else captures.get("loose")
        if captures is not None:
            self.captures = _re.compile(captures["source"], _re.DOTALL)
            self.capture_names = captures["names"]
        # Every match with its groups, as regex.finditer gives them: the stdlib form
        # when it has exactly our group names (no name split over aliases), since re
        # and regex then take the same first successful path from every start
        # (tests/automata/test_capture_finditer.py checks it), and when it provably
        # runs in linear time there (see stdlib_finditer); else our automata. An
        # xml-inline tag pattern runs over a whole tool-call body, where our automata
        # cost microseconds a character in Python.
        self.group_finditer = self.finditer
        # Whether the stdlib form's groups are the pattern's names, one each.
        self.plain_groups = self.captures is not None and _plain_groups(
            self.capture_names, program.group_names
        )
        # The facts of rtcompiler/automata/linearity.py about the stdlib form (which
        # exists only where one attempt reads each character a bounded number of
        # times): no loop reads where another attempt can begin (``apart``), and an
        # attempt reads a bounded number of characters past the match it returns
        # (``tail``).
        self.apart = captures is not None and bool(captures.get("apart"))
        self.tail = captures is not None and bool(captures.get("tail"))
        # Whether the form holds ^, written as a lookahead that fails: held text may begin
        # after the start of the output, so re's own ^ would not do. At the start,
        # over text that begins there, the form with \A instead (see form_at).
        self.form_start = captures is not None and "start" in captures
        self.captures_first = (
            _re.compile(captures["start"], _re.DOTALL) if self.form_start else None
        )
        # For a pattern that is ^ then the rest: whether a text from the start of the
        # output begins a match (its ``match``), or None.
        first = None if captures is None else captures.get("first_prefix")
        self.first_beginning = (
            None if first is None else _beginning_search(first)
        )
        # Whether the form is right over a whole text only ($, \Z, or a lookahead with
        # loops, which a streamed text may end inside): a stream's answers use it at
        # the end of the output alone, the whole-text pass always.
        self.form_whole = captures is not None and bool(captures.get("whole"))
        # The form a streamed answer tries before the end of the output: the form itself,
        # or for a whole one, the same with $ and \Z that never hold (a match found then
        # stands whatever follows; see automata/capture.py), or None.
        self.captures_stream = self.captures
        if self.form_whole:
            self.captures_stream = (
                _re.compile(captures["stream"], _re.DOTALL) if "stream" in captures else None
            )
        # Whether no loop of the form reads a character a literal of the prefilter begins
        # with: its attempts at literals may fail any number of times in linear time.
        self.form_runs = captures is not None and bool(captures.get("runs"))
        # Whether the stream form differs from the form by a $ or \Z (not only by a
        # lookahead with loops): its matches are checked against the form's (see
        # ResponseStream.answer).
        self.form_dollar = self.form_whole and captures.get("stream") not in (
            None, captures["source"]
        )
        # What group_split's parts are, per match: how many (its groups and the text
        # before it), and where the xml-inline groups ``key`` and ``value`` stand.
        self.split_layout = None
        if self.plain_groups:
            self.group_finditer = self.stdlib_finditer
            self.split_layout = split_layout(self.captures)
        # For a pattern ``head S*? literal`` with no such form: the head's stdlib form,
        # its groups' aliases, the literal, and the characters outside S (see
        # automata/capture.py, lazy_tail_pattern; used by WholePass.complete).
        self.lazy_tail = None
        if lazy_tail is not None:
            head = lazy_tail["head"]
            names = head["names"]
            # (None: the head's groups are the pattern's names, one each, so a match's
            # groupdict is what _form_groups would give.)
            if program.group_names and _plain_groups(names, program.group_names):
                names = None
            self.lazy_tail = (
                _re.compile(head["source"], _re.DOTALL), names,
                lazy_tail["literal"], lazy_tail["excluded"],
            )
        # For an alternation with no such form whose alternatives each have one, or are
        # a lookahead of a literal: per alternative, (its stdlib form, its literals, None)
        # or (None, (), the literal looked for); see automata/search.py, branch_forms.
        self.branches = None if branches is None else [
            (None, (), b["ahead"]) if "ahead" in b
            else (_re.compile(b["form"], _re.DOTALL), tuple(b["literals"]), None)
            for b in branches
        ]
        # Whether a streamed search can be answered from the branches with stdlib calls
        # (ResponseStream.branch_answer): every match begins with one of the
        # prefilter's literals (a form's or a lookahead's), and no literal holds
        # another after its first character, so no attempt begun before the first
        # whole literal is alive at the end of the text.
        literals = () if prefilter is None else prefilter.literals
        self.branch_search = (
            self.branches is not None and prefilter is not None and not prefilter.lead
            and prefilter.lead_class is None
            and set(literals) == {
                s for _, found, ahead in self.branches for s in (found or (ahead,))
            }
            and not any(b in a[1:] for a in literals for b in literals)
        )
        # For stdlib_searchable: None where the stdlib form never searches in linear
        # time (no form; a form with ^, which a text that is not the output cannot
        # place; or an attempt that may begin at a lead of unknown length); () where
        # it always does; else the literals an attempt that reads far begins at, at
        # most count_budget occurrences of which keep it linear.
        self.counted: tuple | None = None
        self.count_budget = 0
        # A text at most this long holds at most count_budget of them, uncounted: each
        # literal occurs at most len(text) // len(literal) times (a call body of a few
        # hundred characters is searched without reading it first).
        self.count_free = -1
        if captures is not None and not self.form_start:
            if self.apart:
                self.counted = ()
            elif prefilter is not None and prefilter._lead_class is None:
                self.counted = tuple(prefilter.literals)
                self.count_budget = self.LONG_ATTEMPTS_LIMIT // (prefilter.lead + 1)
                self.count_free = (self.count_budget // len(self.counted) + 1) * min(
                    map(len, self.counted)
                ) - 1
        self.dfa = dfa
        self.alphabet = classes
        self.machine = Machine(program.states, classes.accepts, classes.is_word)
        self.prefilter = prefilter
        self.class_cache: dict = {}
        self.jumps: dict = {}  # see jump
        # (context before, text), or the text alone when the context makes no
        # difference -> where a partial search of the text pends, as an offset, or -1
        # for no match and nothing pending; kept by ResponseStream.answer.
        self.partials: dict = {}
        self._capture_free = None  # see capture_free
        # (context, the text a match's threads settled after) -> its groups, as offsets
        # from its start, and the lengths of those texts (see groups_at).
        self.settled_at: dict = {}
        self.settled_lengths: list = []
        self.loop_exits: dict = {}  # see loop_exit
        # Work counters (tests read them): characters groups_at walked with the
        # thread machine, and left unwalked once the captures settled; characters
        # scanners passed over in a state that stays put (loop_exit).
        self.walked = 0
        self.settled = 0
        self.looped = 0
        # Whether a search starts alike after any character (no ^, \b or \B reads it).
        self.context_free = len({dfa.initial(p) for p in (PREV_START, PREV_WORD, PREV_OTHER)}) == 1

    # A search tries every start, and an attempt may read to the end of the text:
    # `<p=(?P<k>\w+)>(?P<v>.*?)</p>` over thousands of unclosed `<p=a>` reads the rest
    # of the text from each one. By the prefilter's facts, an attempt alive beyond
    # ``reach`` characters began at most ``lead`` characters before a literal, so with
    # at most this many literals in the text few attempts run long: linear still.
    LONG_ATTEMPTS_LIMIT = 64

    def form_at(self, start, eos=True):
        """The stdlib form for an attempt at ``start`` (a position in the output), over
        text that begins there when ``start`` is 0, and that is the whole output unless
        ``eos`` is False (then there must be one: ``captures_stream``)."""
        if start or not self.form_start:
            return self.captures if eos else self.captures_stream
        return self.captures_first

    def beginning(self):
        """The compiled search for a text from a start to the end that begins a match
        (its ``match`` method), or None."""
        source = self.beginnings
        if source is None or type(source) is not str:
            return source
        self.beginnings = _beginning_search(source)
        return self.beginnings

    def loose_beginning(self):
        """Where :meth:`beginning` is None, its loose form (a text it does not match does
        not pend; one it matches may not), compiled when first asked for; or None."""
        source = self.loose_beginnings
        if source is None or type(source) is not str:
            return source
        self.loose_beginnings = _beginning_search(source)
        return self.loose_beginnings

    def stdlib_searchable(self, text: str) -> bool:
        """Whether a search of ``text`` with the stdlib form, trying every start, is
        linear: always when the form's loops read no character an attempt can begin
        with; else when few attempts can read far (LONG_ATTEMPTS_LIMIT)."""
        counted = self.counted
        return counted is not None and (
            not counted or len(text) <= self.count_free
            or sum(map(text.count, counted)) <= self.count_budget
        )

    def stdlib_finditer(self, text: str):
        """``finditer`` by the stdlib form where that is linear (its own Match objects,
        whose ``groupdict`` gives our groups), else by our automata."""
        # (stdlib_searchable, written out: a call less a tag body)
        counted = self.counted
        if counted is not None and (
            not counted or len(text) <= self.count_free
            or sum(map(text.count, counted)) <= self.count_budget
        ):
            return self.captures.finditer(text)  # type: ignore[union-attr]
        return self.finditer(text)

    def group_split(self, text: str):
        """``(parts, layout)``: the stdlib form's ``split`` of ``text`` (the text before
        each match, then the match's groups, and the text after the last), where
        ``group_finditer`` would run that form (see stdlib_finditer), and its
        ``split_layout``; else None. A body of tags then costs one C call, not a
        Python step per tag."""
        layout = self.split_layout
        counted = self.counted
        if layout is not None and counted is not None and (
            not counted or len(text) <= self.count_free
            or sum(map(text.count, counted)) <= self.count_budget
        ):
            return self.captures.split(text), layout  # type: ignore[union-attr]
        return None

    def last_end(self, text: str) -> int | None:
        """Where the last match of ``finditer(text)`` ends, or None when there is none."""
        end = None
        if self.stdlib_searchable(text):
            for m in self.captures.finditer(text):  # type: ignore[union-attr]
                end = m.end()
        else:
            for m in self.finditer(text):
                end = m.end
        return end

    def class_of(self, ch: str) -> int:
        c = self.class_cache.get(ch)
        if c is None:
            c = self.class_cache[ch] = self.alphabet.class_of(ord(ch))
        return c

    def jump(self, state: int, literal: str, held: int = 0):
        """The DFA's run over ``literal`` from ``state`` with ``held`` registers:
        ``(state after it, registers, match or None)``, or None if the search dies
        in it. A register or match position is an offset from the literal's start
        (>= 0) or ``-1 - k`` for the ``k``-th register held before it.

        The run over a literal from a state is the same every time the literal
        occurs (the DFA is deterministic, and the registers it carries in are
        only copied along), so it is worked out once per state and literal and
        then taken in one step: a tool-call header's fixed part is not stepped
        character by character in Python each time it arrives.
        """
        key = (state, literal, held)
        if key in self.jumps:
            return self.jumps[key]
        rows = self.dfa.rows
        registers: list = [-1 - k for k in range(held)]
        best = None
        found = None
        for here, ch in enumerate(literal):
            state, sources, match = rows[state][self.class_of(ch)]
            if match is not None:
                best = (_value(match[0], registers, here), _value(match[1], registers, here))
            if sources:
                registers = [here if s == CUR else registers[s] for s in sources]
            elif sources is not None:
                registers = []
            if rows[state] is None:
                break
        else:
            found = (state, tuple(registers), best)
        self.jumps[key] = found
        return found

    def initial_after(self, c: int) -> int:
        """The DFA's initial state after a character of class ``c``."""
        return self.dfa.initial(PREV_WORD if self.alphabet.is_word[c] else PREV_OTHER)

    def prev_context(self, text: str, pos: int) -> int:
        if pos == 0:
            return PREV_START
        return PREV_WORD if self.alphabet.is_word[self.class_of(text[pos - 1])] else PREV_OTHER

    def scanner(self, text_before: str = ""):
        """A streaming search starting after ``text_before`` (context for ``\\b``, ``^``)."""
        return Scanner(self, text_before)

    def scanner_at(self, text: str, pos: int, origin: int = 0):
        """A streaming search from absolute ``pos``, caught up with ``text``.

        ``text`` starts at absolute position ``origin`` (<= pos, and < pos unless
        pos is 0, so that the character before ``pos`` is known).
        """
        keep = max(pos - 1, origin)
        scanner = Scanner(self, text[keep - origin :], pos, keep)
        scanner.feed_range(pos, origin + len(text))
        return scanner

    def bare_scanner(self, text: str, at: int, pos: int, source):
        """A streaming search from absolute ``pos`` that keeps no text.

        ``text[at]`` is the character at ``pos`` (``text[at - 1]`` the one
        before, when ``pos > 0``); ``source()`` returns ``(text, origin)``
        holding the match when groups are asked for. Feed it with
        :meth:`Scanner.advance`.
        """
        scanner = Scanner(self, "", pos, pos)
        scanner._chunks = None
        scanner.source = source
        if pos > 0:
            scanner.state = self.initial_after(self.class_of(text[at - 1]))
        return scanner

    def search(self, text: str, pos: int = 0, partial: bool = False):
        pos = min(max(pos, 0), len(text))
        scanner = Scanner(self, text, pos)
        scanner.feed_range(pos, len(text))
        return scanner.result(partial)

    def finditer(self, text: str):
        """Successive matches, as ``regex.finditer(p, text, regex.DOTALL)`` yields them,
        in time linear in the text.

        A search repeated from the end of each match can read far past the match it
        returns (``x.*y|x`` on many ``x`` and no ``y``: each search reads to the end),
        so matches are found another way. One backward pass works out, at every
        position, which NFA states can still reach a match from there (the live
        states, :meth:`_liveness`). A match then begins where the start state is
        live, and is read off by a forward walk that takes, at each choice, the
        first branch in priority order that is live: the branch a backtracking
        matcher's first success goes through, since a live branch holds one and the
        branches before it hold none. No walk ever backtracks, and the walks cover
        disjoint spans.

        After an empty match at ``e`` the next match may start at ``e`` only if it
        is not empty; after a non-empty match ending at ``e`` an empty match at
        ``e`` is allowed.
        """
        n = len(text)
        starts, masks = self._liveness(text)
        last = len(starts) - 1
        startbit = 1 << self.nfa.start
        k = 0
        pos = 0
        while pos <= n:
            while k < last and starts[k + 1] <= pos:
                k += 1
            while not masks[k] & startbit:
                if k == last:
                    return
                k += 1
            s = pos if pos > starts[k] else starts[k]
            end, groups = self._walk(text, s, k, starts, masks, None)
            yield Match(s, end, False, groups)
            if end > s:
                pos = end
                continue
            # An empty match at s: a non-empty one may still begin there.
            plus = self._live_at(text, s, masks[k + 1] if k < last and starts[k + 1] == s + 1
                                 else masks[k], exclude_match=True) if s < n else 0
            if plus & startbit:
                end, groups = self._walk(text, s, k, starts, masks, plus)
                yield Match(s, end, False, groups)
                pos = end
            else:
                pos = s + 1

    # -- liveness: which NFA states can still reach a match, per position ----------

    # Work counters of the linear-time tests: live sets worked out by the backward
    # pass (one per character it steps), characters it passed over with one stdlib
    # search, and NFA states the forward walks went through.
    live_steps = 0
    live_skipped = 0
    walk_steps = 0

    def _live_tables(self):
        """The NFA as the liveness pass reads it (built on first use)."""
        tables = self.__dict__.get("_tables")
        if tables is not None:
            return tables
        states = self.nfa.states
        assert states[0][0] == MATCH, "state 0 is the pattern's match state"
        # Epsilon states in an order where each comes after the states it reads at
        # the same position (its targets; a lookahead's body and next). Loops over
        # what can match empty are refused, so there is such an order.
        order: list = []
        placed: set = set()
        for root in range(len(states)):
            if root in placed or states[root][0] in (CHAR, MATCH):
                continue
            stack = [(root, False)]
            while stack:
                q, ready = stack.pop()
                if ready:
                    if q not in placed:
                        placed.add(q)
                        order.append(q)
                    continue
                if q in placed or states[q][0] in (CHAR, MATCH):
                    continue
                stack.append((q, True))
                st = states[q]
                kind = st[0]
                deps = st[1] if kind == SPLIT else (st[2], st[3]) if kind == LOOK else (st[2],)
                for t in deps:
                    if t not in placed:
                        stack.append((t, False))
        size = self.alphabet.size
        by_class: list = [[] for _ in range(size + 1)]  # the last: EOF
        for q, st in enumerate(states):
            if st[0] == CHAR:
                for c in self.alphabet.accepts[st[1]]:
                    by_class[c].append((q, st[2]))
        matches = 0
        for q, st in enumerate(states):
            if st[0] == MATCH:
                matches |= 1 << q
        targets = {}
        for q in order:
            if states[q][0] == SPLIT:
                bits = 0
                for t in states[q][1]:
                    bits |= 1 << t
                targets[q] = bits
        context = self.nfa.uses_word_boundary or self.nfa.uses_start
        tables = self.__dict__["_tables"] = (
            tuple(order), tuple(tuple(x) for x in by_class), matches, targets, context,
            [{} for _ in range(3 * (size + 1))], {},
        )
        return tables

    def _live_at(self, text: str, i: int, after: int, exclude_match: bool = False) -> int:
        """The live states at ``i``, given those at ``i + 1`` (``after``; anything at
        the end of the text). ``exclude_match``: states that reach a match only
        after reading at least one character."""
        context = self._live_tables()[4]
        c = EOF if i == len(text) else self.class_of(text[i])
        prev = self.prev_context(text, i) if context else PREV_OTHER
        return self._live_step(c, prev, after, exclude_match)

    def _live_step(self, c: int, prev: int, after: int, exclude_match: bool = False) -> int:
        """The live states at a character of class ``c`` (EOF: the end of the text)
        after a character of kind ``prev``, given the live states after it."""
        order, by_class, matches, targets, context, cache, _ = self._live_tables()
        key = (self.alphabet.size if c == EOF else c) * 3 + prev
        if not exclude_match:
            found = cache[key].get(after)
            if found is not None:
                return found
        states = self.nfa.states
        holds = self.machine.holds
        # State 0 is the pattern's own match state; the others end lookahead bodies.
        live = matches & ~1 if exclude_match else matches
        if c != EOF:
            for q, nxt in by_class[c]:
                if after >> nxt & 1:
                    live |= 1 << q
        for q in order:
            st = states[q]
            kind = st[0]
            if kind == SPLIT:
                if live & targets[q]:
                    live |= 1 << q
            elif kind == SAVE:
                if live >> st[2] & 1:
                    live |= 1 << q
            elif kind == ASSERT:
                if live >> st[2] & 1 and holds(st[1], prev, c):
                    live |= 1 << q
            elif live >> st[3] & 1 and (live >> st[2] & 1) != st[1]:  # LOOK
                live |= 1 << q
        if not exclude_match:
            if len(cache[key]) >= _LIVE_CACHE:
                cache[key].clear()
            cache[key][after] = live
        return live

    def _liveness(self, text: str):
        """``(starts, masks)``: the text cut into runs of positions with equal live
        sets, run ``k`` from ``starts[k]`` to the next start (the last one to the end
        of the text, included), its live states as the bits of ``masks[k]``.

        A live set that stays the same over most characters (the inside of a tool
        argument under ``.*?``) is passed over with one stdlib search, backwards,
        for the next character that changes it.
        """
        order, by_class, matches, targets, context, cache, leaving = self._live_tables()
        n = len(text)
        live_at = self._live_at
        classes = self.class_cache
        class_of = self.class_of
        cur = live_at(text, n, 0)
        run_starts = []
        run_masks = []
        steps = skipped = 0
        same = 0
        rev = None
        i = n - 1
        while i >= 0:
            if context:
                new = live_at(text, i, cur)
            else:
                ch = text[i]
                c = classes.get(ch)
                if c is None:
                    c = class_of(ch)
                new = cache[c * 3 + PREV_OTHER].get(cur)
                if new is None:
                    new = live_at(text, i, cur)
            steps += 1
            if new != cur:
                run_starts.append(i + 1)
                run_masks.append(cur)
                cur = new
                same = 0
            else:
                same += 1
                if same == _ACCELERATE:
                    same = 0
                    leave = leaving.get(cur)
                    if leave is None:
                        leave = leaving[cur] = self._leaving(cur)
                        if len(leaving) > _LIVE_CACHE:
                            leaving.clear()
                    if leave is not False:
                        if rev is None:
                            rev = text[::-1]
                        m = leave.search(rev, n - i)
                        k = -1 if m is None else n - 1 - m.start()
                        skipped += i - 1 - k
                        i = k
                        continue
            i -= 1
        run_starts.append(0)
        run_masks.append(cur)
        run_starts.reverse()
        run_masks.reverse()
        CompiledRegex.live_steps += steps
        CompiledRegex.live_skipped += skipped
        return run_starts, run_masks

    def _leaving(self, live: int):
        """A stdlib search for the characters after which (reading backwards) the
        live set is no longer ``live``, whatever character comes before; False
        when every character changes it."""
        a = self.alphabet
        contexts = [PREV_OTHER]
        if self.nfa.uses_word_boundary:
            contexts.append(PREV_WORD)
        if self.nfa.uses_start:
            contexts.append(PREV_START)
        keep = {
            c for c in range(a.size)
            if all(self._live_step(c, prev, live) == live for prev in contexts)
        }
        if not keep:
            return False
        ranges = []
        for k, first in enumerate(a.starts):
            if a.interval_class[k] not in keep:
                last = a.starts[k + 1] - 1 if k + 1 < len(a.starts) else 0x10FFFF
                ranges.append((first, last))
        return _re.compile(char_class_source(ranges) if ranges else "(?!)", _re.DOTALL)

    def _walk(self, text: str, s: int, k: int, starts, masks, first):
        """The match beginning at ``s`` (in run ``k``): ``(end, groups)``, following at
        each choice the first live branch. ``first``: the live set to use at ``s``
        itself instead of the run's (a match that must not be empty)."""
        states = self.nfa.states
        chains = self._chains()
        last = len(starts) - 1
        nxt_start = starts[k + 1] if k < last else len(text) + 1
        mask = masks[k] if first is None else first
        q = self.nfa.start
        i = s
        opened: dict = {}
        closed: dict = {}
        steps = 0
        while True:
            steps += 1
            st = states[q]
            kind = st[0]
            if kind == CHAR:
                q, width = chains[q]
                i += width
                if i >= nxt_start:
                    while k < last and starts[k + 1] <= i:
                        k += 1
                    nxt_start = starts[k + 1] if k < last else len(text) + 1
                mask = masks[k]
            elif kind == SPLIT:
                for t in st[1]:
                    if mask >> t & 1:
                        break
                tt = states[t]
                if tt[0] == CHAR and tt[2] == q and first is None and nxt_start > i + 1:
                    # A loop over one character: every position of this run makes the
                    # same choice, so the walk is at this state again at the run's end.
                    CompiledRegex.live_skipped += nxt_start - i
                    i = nxt_start
                    while k < last and starts[k + 1] <= i:
                        k += 1
                    nxt_start = starts[k + 1] if k < last else len(text) + 1
                    mask = masks[k]
                    continue
                q = t
            elif kind == SAVE:
                slot = st[1]
                if slot & 1:
                    closed[slot >> 1] = (opened[slot >> 1], i)
                else:
                    opened[slot >> 1] = i
                q = st[2]
            elif kind == MATCH:
                break
            elif kind == ASSERT:
                q = st[2]
            else:  # LOOK: decided by the liveness pass
                q = st[3]
            if first is not None and i > s:
                first = None
        CompiledRegex.walk_steps += steps
        groups = {}
        for name, index in self.nfa.group_names.items():
            span = closed.get(index)
            groups[name] = None if span is None else text[span[0] : span[1]]
        return i, groups

    def _chains(self):
        """Per character state: the state after the run of single-successor
        character states it begins, and the run's length. A live state's run is
        read as it stands, so the walk takes it in one step."""
        chains = self.__dict__.get("_chain_table")
        if chains is not None:
            return chains
        states = self.nfa.states
        chains = {}
        for q, st in enumerate(states):
            if st[0] != CHAR:
                continue
            width = 1
            nxt = st[2]
            while states[nxt][0] == CHAR and width < 64:
                nxt = states[nxt][2]
                width += 1
            chains[q] = (nxt, width)
        self.__dict__["_chain_table"] = chains
        return chains

    # -- capture groups, by Pike's VM on the matched span -----------------------

    def groups_at(
        self, text: str, start: int, end: int, partial: bool, stop: int | None = None,
        first: bool = False,
    ):
        """Named groups of the match found at ``start`` (complete: ending at ``end``).

        ``text[:stop]`` is the text searched (``stop`` defaults to its length);
        ``first``: the match begins the output.
        """
        n = len(text) if stop is None else stop
        if not self.nfa.group_names:
            return {}
        if self.captures is not None and not partial and not self.form_whole:
            # (Over the text searched, not only the match: a lookahead at its end
            # reads past it.)
            form = self.captures_first if first and self.captures_first else self.captures
            m = form.match(text, start, n)
            if m is not None and m.end() == end:
                found = m.groupdict()
                groups = {}
                for name in self.nfa.group_names:
                    value = None
                    for alias in self.capture_names.get(name, ()):
                        if found[alias] is not None:
                            value = found[alias]
                    groups[name] = value
                return groups
        slots = (-1,) * (3 * (self.nfa.group_count + 1))
        prev = start_prev = self.prev_context(text, start)
        free = None if partial else self.capture_free
        if free is not None and self.settled_at:
            # Headers met before: the threads settle after the same characters, read
            # from the same context, with the same captures (as offsets from the start).
            known = self.settled_at
            for length in self.settled_lengths:
                if start + length < end:
                    found = known.get((prev, text[start : start + length]))
                    if found is not None:
                        self.settled += end - start
                        return {
                            name: None if found[index] is None
                            else text[start + found[index][0] : start + found[index][1]]
                            for name, index in self.nfa.group_names.items()
                        }
        threads: list = [(self.nfa.start, (), (slots, -1))]
        best = None
        i = start
        while True:
            c = EOF if i == n else self.class_of(text[i])
            out, match, hit = self.machine.closure(
                threads, prev, c, _save_slot(i), _end_at(i)
            )
            if c == EOF:
                if match is not None:
                    best = match
                chosen = hit if partial else best
                break
            if match is not None:
                best = match
                if not partial and best[1] == end and not self._pending_matches(out):
                    # Lower-priority threads were cut; higher-priority ones could
                    # only end later than ``end``, which the DFA ruled out.
                    chosen = best
                    break
            threads = self.machine.step(out, c)
            if not threads:
                chosen = best
                break
            i += 1
            if free is not None and i < end:
                # Every thread left holds the same captures and can set no more: the
                # match ending at ``end`` (which the DFA found, and which no earlier
                # match can be) has them, whatever the rest of the text. A lazy
                # `.*?<|message|>` after a name is not walked to its end.
                held = threads[0][2][0]
                if all(s in free and not ob and p[0] == held for s, ob, p in threads):
                    self.settled += end - i
                    chosen = (held, end)
                    self._keep_settled(text, start, i, start_prev, held)
                    break
            prev = PREV_WORD if self.alphabet.is_word[c] else PREV_OTHER
        self.walked += i - start
        captured = chosen[0] if chosen is not None else slots
        return {
            name: _group_text(text, captured, index)
            for name, index in self.nfa.group_names.items()
        }


    def _keep_settled(self, text: str, start: int, at: int, prev: int, slots: tuple) -> None:
        """Remember that the threads from ``start`` settled at ``at`` with ``slots``
        (see groups_at), for short prefixes and a few lengths of them."""
        length = at - start
        if length > _SETTLED_PREFIX:
            return
        lengths = self.settled_lengths
        if length not in lengths:
            if len(lengths) >= _SETTLED_LENGTHS:
                return
            lengths.append(length)
        known = self.settled_at
        if len(known) >= _SETTLED_KEPT:
            known.clear()  # the headers of the tools in use now fill it again
        groups = {}
        for index in self.nfa.group_names.values():
            lo, hi = slots[3 * index], slots[3 * index + 1]
            groups[index] = None if lo < 0 or hi < 0 or hi < lo else (lo - start, hi - start)
        known[(prev, text[start:at])] = groups

    def loop_exit(self, state: int, held: int):
        """``find(text, i, hi)``: where in ``text[i:hi]`` the first character is that
        would not leave the DFA in ``state`` (holding ``held`` registers) unchanged --
        same state, same registers, no match -- or ``hi``; None when every character
        would change something. A lazy `.*?<|message|>` stays in one state on
        everything but ``<`` and what may begin another attempt: the run between
        them is passed over at C speed.
        """
        row = self.dfa.rows[state]
        same = tuple(range(held))
        stays = set()
        for c in range(self.alphabet.size):
            nxt, sources, match = row[c]
            if nxt == state and match is None and (sources is None or tuple(sources) == same):
                stays.add(c)
        found = None
        if stays:
            starts, classes = self.alphabet.starts, self.alphabet.interval_class
            ranges = []
            for k, lo in enumerate(starts):
                if classes[k] not in stays:
                    hi = starts[k + 1] - 1 if k + 1 < len(starts) else 0x10FFFF
                    if ranges and ranges[-1][1] == lo - 1:
                        ranges[-1][1] = hi
                    else:
                        ranges.append([lo, hi])
            if sum(hi - lo + 1 for lo, hi in ranges) <= _FIND_EXITS:
                found = _find_any(tuple(chr(x) for lo, hi in ranges for x in range(lo, hi + 1)))
            else:
                found = _search_exit(_re.compile(
                    "[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges) + "]"
                ))
        self.loop_exits[(state, held)] = found
        return found

    @property
    def capture_free(self) -> frozenset:
        """The NFA states from which no capture can be set: no path from them goes
        through a SAVE, or into a lookaround (whose body may hold one)."""
        free = self._capture_free
        if free is None:
            states = self.nfa.states
            nexts: list = []
            for st in states:
                kind = st[0]
                if kind == SPLIT:
                    nexts.append(tuple(st[1]))
                elif kind in (CHAR, ASSERT):
                    nexts.append((st[2],))
                else:
                    nexts.append(())
            tainted = {k for k, st in enumerate(states) if st[0] in (SAVE, LOOK)}
            grown = True
            while grown:
                grown = False
                for k, targets in enumerate(nexts):
                    if k not in tainted and any(t in tainted for t in targets):
                        tainted.add(k)
                        grown = True
            free = self._capture_free = frozenset(range(len(states))) - tainted
        return free

    def _pending_matches(self, threads: list) -> bool:
        states = self.nfa.states
        return any(s >= 0 and states[s][0] == MATCH for s, _, _ in threads)


def regex_from_data(data: dict) -> CompiledRegex:
    """Rebuild a compiled pattern from the data of ``Regex.to_data()``."""
    n = data["nfa"]
    states = tuple(
        (s[0], tuple(s[1])) if s[0] == SPLIT else tuple(s) for s in n["states"]
    )
    program = Program(
        data["pattern"], states, n["start"], dict(n["group_names"]), n["group_count"],
        n["needs_input"], n["anchored"], n["uses_word_boundary"], n["uses_start"],
    )
    a = data["alphabet"]
    interval_class = tuple(a["interval_class"])
    words = set(a["word_classes"])
    size = max(interval_class) + 1
    classes = CharClasses(
        tuple(a["starts"]), interval_class,
        tuple(frozenset(x) for x in a["accepts"]),
        tuple(k in words for k in range(size)),
    )
    pre = data.get("prefilter")
    prefilter = None if pre is None else Prefilter(pre)
    late = data.get("late")
    return CompiledRegex(
        program, classes, DfaTables(data["dfa"]), prefilter, data.get("captures"),
        data.get("lazy_tail"), data.get("branches"),
        None if late is None else regex_from_data(late),
    )
###}
