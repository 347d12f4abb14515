"""The regex runtime: everything a generated parser needs to run compiled patterns.

This module is standard library only. The code generator copies its
``###{standalone`` sections into every generated parser, next to the compiled
tables; the compiler imports the same code, so what runs in a generated module
is exactly what the test suite exercises here.

Pieces, in the order a search uses them:

- :class:`CharClasses` maps a character to its class number;
- :class:`DfaTables` is a complete leftmost-first DFA as tables (built by
  ``rtcompiler.automata.Dfa``): one look-up per character;
- :class:`Machine` is the thread semantics of the NFA (Pike's VM with lookahead
  obligations), used to extract capture groups and by the DFA builder;
- :class:`Scanner` streams text through the DFA and answers, after any chunk,
  what ``regex``'s ``search(text, pos, partial=...)`` would;
- :class:`CompiledRegex` ties them together: ``search``, groups, and ``finditer``
  in linear time (a backward pass of live NFA states, then forward walks);
- :class:`TagChain` (section ``chain``) runs an xml-inline tag pattern shaped as a
  chain of literals, backreference pairs included (``rtcompiler/automata/chain.py``).

See ``docs/regex-dialect.md`` for the semantics, including ``regex``'s partial
matching rules.
"""

from __future__ import annotations

###{standalone engine
import re as _re
from bisect import bisect_right as _bisect_right

CHAR, SPLIT, ASSERT, LOOK, SAVE, MATCH = range(6)
START = "start"
END = "end"
DOLLAR = "dollar"
WORD_BOUNDARY = "word_boundary"
NOT_WORD_BOUNDARY = "not_word_boundary"
CUR = -2  # register source: the position being consumed (or the end, at EOF)

GHOST = -1  # state id of a ghost thread
EOF = -1  # class id for "no next character"
PREV_START, PREV_WORD, PREV_OTHER = 0, 1, 2

SAT, FAIL, PENDING = 0, 1, 2


_NO_OBLIGATIONS = ()


class Machine:
    """Closure and stepping over an NFA given as plain data."""

    def __init__(self, states, accepts, is_word) -> None:
        self.states = states
        self.accepts = accepts
        self.is_word = is_word

    # -- assertions ----------------------------------------------------------

    def holds(self, kind: str, prev: int, c: int) -> bool:
        if kind == START:
            return prev == PREV_START
        if kind == END:
            return c == EOF
        boundary = (prev == PREV_WORD) != (c != EOF and self.is_word[c])
        return boundary if kind == WORD_BOUNDARY else not boundary

    # -- lookahead bodies (sets, existence semantics) -------------------------

    def settle(self, obligations: tuple, prev: int, c: int):
        """Advance a thread's obligations (oldest first) to this position.

        Returns ``(obligations still open, or None if the thread dies; whether a
        lookahead body ran into the end of the text; the obligations a ghost
        must keep when the thread dies)``. A backtracking matcher decides each
        lookahead before going on, so when one fails, the older ones that are
        still open were already being explored: they live on as a ghost.
        """
        if not obligations:
            return obligations, False, None
        still_open = []
        hit = False
        for look, body in obligations:
            status, post, body_hit = self.run_body(body, prev, c)
            hit = hit or (body_hit and not self.states[look][4])
            if status == PENDING:
                still_open.append((look, post))
            elif (status == SAT) == self.states[look][1]:
                return None, hit, tuple(still_open)
        return tuple(still_open), hit, None

    def run_body(self, body, prev: int, c: int):
        """Close a lookahead body's sub-threads at this position.

        ``body`` is ordered by priority, like the main thread list: a backtracking
        matcher explores the body's paths in that order, and in a partial search
        the first path to run into the end makes the match partial even if a
        later path would satisfy the lookahead.

        Returns ``(SAT | FAIL | PENDING, the sub-threads waiting for the next
        character, in priority order, whether a path ran into the end before
        any path matched)``.
        """
        post: list = []
        posted: set = set()
        seen: set = set()
        hit = False
        for state0, obligations0 in body:
            settled, settled_hit, ghost = self.settle(obligations0, prev, c)
            hit = hit or settled_hit
            if settled is None:
                if ghost:
                    stack = [(GHOST, ghost)]
                else:
                    continue
            else:
                stack = [(state0, settled)]
            while stack:
                s, ob = stack.pop()
                if (s, ob) in seen:
                    continue
                seen.add((s, ob))
                if s == GHOST:
                    if ob and (s, ob) not in posted:
                        posted.add((s, ob))
                        post.append((s, ob))
                    continue
                st = self.states[s]
                kind = st[0]
                if kind == CHAR:
                    if c == EOF:
                        hit = True
                    else:
                        posted.add((s, ob))
                        post.append((s, ob))
                elif kind == SPLIT:
                    stack.extend((t, ob) for t in reversed(st[1]))
                elif kind == SAVE:
                    stack.append((st[2], ob))
                elif kind == ASSERT:
                    if self.holds(st[1], prev, c):
                        stack.append((st[2], ob))
                    elif ob:
                        stack.append((GHOST, ob))
                elif kind == LOOK:
                    status, look_post, look_hit = self.run_body(
                        ((st[2], _NO_OBLIGATIONS),), prev, c
                    )
                    hit = hit or (look_hit and not st[4])
                    if status == PENDING:
                        stack.append((st[3], ob + ((s, look_post),)))
                    elif (status == SAT) != st[1]:
                        stack.append((st[3], ob))
                    elif ob:
                        stack.append((GHOST, ob))
                else:  # MATCH
                    if not ob:
                        return SAT, (), hit
                    posted.add((s, ob))
                    post.append((s, ob))
        if c == EOF or not post:
            return FAIL, (), hit
        return PENDING, tuple(post), hit

    # -- the main thread list (ordered, with payloads) ------------------------

    def closure(
        self,
        threads,
        prev: int,
        c: int,
        save,
        mark_end,
        accept: bool = True,
    ):
        """Follow every epsilon path at this position, in priority order.

        Returns ``(threads waiting for the next character, in priority order;
        payload of the first confirmed match or None; payload of the first
        thread whose path ran into the end of the text or None)``. A confirmed
        match cuts every thread of lower priority, as in a backtracking matcher.
        """
        out = []
        seen: set[tuple] = set()
        hit = None
        for state0, obligations0, payload0 in threads:
            settled, settled_hit, ghost = self.settle(obligations0, prev, c)
            if settled_hit and hit is None:
                hit = payload0
            if settled is None:
                if not ghost:
                    continue
                stack = [(GHOST, ghost, payload0)]
            else:
                stack = [(state0, settled, payload0)]
            while stack:
                s, ob, payload = stack.pop()
                if (s, ob) in seen:
                    continue
                seen.add((s, ob))
                if s == GHOST:
                    if ob:
                        out.append((s, ob, payload))
                    continue
                st = self.states[s]
                kind = st[0]
                if kind == CHAR:
                    if c == EOF:
                        if hit is None:
                            hit = payload
                    else:
                        out.append((s, ob, payload))
                elif kind == SPLIT:
                    stack.extend((t, ob, payload) for t in reversed(st[1]))
                elif kind == SAVE:
                    stack.append((st[2], ob, save(payload, st[1])))
                elif kind == ASSERT:
                    if self.holds(st[1], prev, c):
                        stack.append((st[2], ob, payload))
                    elif ob:
                        stack.append((GHOST, ob, payload))
                elif kind == LOOK:
                    status, look_post, look_hit = self.run_body(
                        ((st[2], _NO_OBLIGATIONS),), prev, c
                    )
                    if look_hit and not st[4] and hit is None:
                        hit = payload
                    if status == PENDING:
                        stack.append((st[3], ob + ((s, look_post),), payload))
                    elif (status == SAT) != st[1]:
                        stack.append((st[3], ob, payload))
                    elif ob:
                        stack.append((GHOST, ob, payload))
                elif accept:  # MATCH
                    if not ob:
                        return out, mark_end(payload), hit
                    out.append((s, ob, mark_end(payload)))
        return out, None, hit

    def step(self, threads, c):
        """Consume one character of class ``c`` from closed threads."""
        out = []
        for s, ob, payload in threads:
            stepped = self.step_obligations(ob, c) if ob else ob
            if s >= 0 and self.states[s][0] == CHAR:
                st = self.states[s]
                if c in self.accepts[st[1]]:
                    out.append((st[2], stepped, payload))
                elif stepped:
                    out.append((GHOST, stepped, payload))
            else:  # a ghost, or a match waiting for its obligations
                out.append((s, stepped, payload))
        return out

    def step_obligations(self, obligations: tuple, c: int) -> tuple:
        return tuple((look, self.step_body(body, c)) for look, body in obligations)

    def step_body(self, body: tuple, c: int) -> tuple:
        out: dict = {}  # ordered, first occurrence wins (priority order)
        for s, ob in body:
            stepped = self.step_obligations(ob, c) if ob else ob
            if s >= 0 and self.states[s][0] == CHAR:
                if c in self.accepts[self.states[s][1]]:
                    out.setdefault((self.states[s][2], stepped), None)
                elif stepped:
                    out.setdefault((GHOST, stepped), None)
            else:
                out.setdefault((s, stepped), None)
        return tuple(out)


class CharClasses:
    """Code point -> class number: sorted interval starts, each mapped to a class."""

    __slots__ = ("starts", "interval_class", "accepts", "is_word")

    def __init__(self, starts, interval_class, accepts, is_word) -> None:
        self.starts = starts
        self.interval_class = interval_class
        self.accepts = accepts  # per character set of the NFA: frozenset of classes
        self.is_word = is_word  # per class: inside \\w (only filled when \\b/\\B are used)

    @property
    def size(self) -> int:
        return len(self.is_word)

    def class_of(self, code_point: int) -> int:
        return self.interval_class[_bisect_right(self.starts, code_point) - 1]


class Program:
    """The NFA of a pattern and the facts search needs about it, as plain data."""

    __slots__ = (
        "source", "states", "start", "group_names", "group_count",
        "needs_input", "anchored", "uses_word_boundary", "uses_start",
    )

    def __init__(self, source, states, start, group_names, group_count,
                 needs_input, anchored, uses_word_boundary, uses_start) -> None:
        self.source = source
        self.states = states
        self.start = start
        self.group_names = group_names
        self.group_count = group_count
        self.needs_input = needs_input
        self.anchored = anchored
        self.uses_word_boundary = uses_word_boundary
        self.uses_start = uses_start


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


class DfaTables:
    """A fully built DFA read back from :meth:`Dfa.to_data`: same interface, no NFA work.

    This is the form the code generator embeds: every answer is a table look-up.
    """

    def __init__(self, data: dict) -> None:
        self._data = data
        self._initial = data["initial"]
        self._dead = frozenset(data["dead"])
        cells = [
            (nxt, tuple(sources), None if match is None else tuple(match))
            for nxt, sources, match in data["cells"]
        ]
        self._cells = cells
        # rows[state][class] -> (next state, register sources, match); None for a dead state.
        # Sources that leave the registers as they are -- (0, ..., k-1) out of a state
        # with k registers, as while an attempt runs through a literal -- are None here,
        # so that Scanner.advance keeps its list instead of building an equal one.
        registers = dict.fromkeys(self._initial, 0)
        for nxt, sources, _ in cells:
            registers[nxt] = len(sources)
        kept: dict = {}

        def cell(sid: int, k: int):
            found = cells[k]
            count = registers.get(sid)
            if count and found[1] == tuple(range(count)):
                same = kept.get(k)
                if same is None:
                    same = kept[k] = (found[0], None, found[2])
                return same
            return found

        self.rows = [
            None if sid in self._dead else [cell(sid, k) for k in row]
            for sid, row in enumerate(data["rows"])
        ]
        # The states with no live attempt that still seek one: where a prefilter may skip.
        self.fresh = frozenset(self._initial)
        self._eof = [
            (None if m is None else tuple(m), h) for m, h in data["eof"]
        ]

    def to_data(self) -> dict:
        return self._data

    def initial(self, prev: int) -> int:
        return self._initial[prev]

    def is_dead(self, sid: int) -> bool:
        return sid in self._dead

    def step(self, sid: int, c: int):
        assert sid not in self._dead, "stepped a dead state"
        return self._cells[self._data["rows"][sid][c]]

    def at_eof(self, sid: int):
        return self._eof[sid]


class Match:
    """What ``regex`` reports for a match: span, partial flag, named groups.

    Groups are worked out on first request only: a streaming parser asks for
    spans after every chunk, and for groups once, when it commits a match.
    """

    __slots__ = ("start", "end", "partial", "_groups", "_resolve")

    def __init__(self, start: int, end: int, partial: bool, groups=None, resolve=None) -> None:
        self.start = start
        self.end = end
        self.partial = partial
        self._groups = groups
        self._resolve = resolve

    def span(self) -> tuple[int, int]:
        return self.start, self.end

    def groupdict(self) -> dict[str, str | None]:
        if self._groups is None:
            self._groups = self._resolve() if self._resolve is not None else {}
            self._resolve = None
        return dict(self._groups)

    def captured(self) -> dict[str, str]:
        """The groups that took part: what a region's ``{name}`` placeholders read."""
        if self._groups is None and self._resolve is None:
            return {}  # a literal's match, or a pattern without groups
        return {k: v for k, v in self.groupdict().items() if v is not None}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Match):
            return NotImplemented
        return (self.span(), self.partial, self.groupdict()) == (
            other.span(), other.partial, other.groupdict()
        )

    def __repr__(self) -> str:
        return f"Match(span={self.span()}, partial={self.partial}, groups={self.groupdict()})"


def _beginning_search(source):
    """The ``match`` of ``(?:source)\\Z``: whether a text from a start to the end begins a
    match, for ``source`` a pattern's beginnings (automata/capture.py)."""
    return _re.compile(f"(?:{source})\\Z", _re.DOTALL).match


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
        self.plain_groups = self.captures is not None and all(
            aliases == [name] for name, aliases in self.capture_names.items()
        ) and set(self.capture_names) == set(program.group_names)
        # The facts of rtcompiler/automata/linearity.py about the stdlib form (which
        # exists only where one attempt reads each character a bounded number of
        # times): no loop reads where another attempt can begin (``apart``), and an
        # attempt reads a bounded number of characters past the match it returns
        # (``tail``).
        self.apart = captures is not None and bool(captures.get("apart"))
        self.tail = captures is not None and bool(captures.get("tail"))
        # Whether the form holds a lookahead: a match may then end where the next
        # delimiter begins, at one landmark (see regions._walks).
        self.form_ahead = captures is not None and bool(captures.get("ahead"))
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
        if self.plain_groups:
            self.group_finditer = self.stdlib_finditer
        # For a pattern ``head S*? literal`` with no such form: the head's stdlib form,
        # its groups' aliases, the literal, and the characters outside S (see
        # automata/capture.py, lazy_tail_pattern; used by WholePass.complete).
        self.lazy_tail = None
        if lazy_tail is not None:
            head = lazy_tail["head"]
            self.lazy_tail = (
                _re.compile(head["source"], _re.DOTALL), head["names"],
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
        if self.captures is None or self.form_start:
            return False  # (a text that is not the output: ^ at its start is not known)
        if self.apart:
            return True
        pre = self.prefilter
        if pre is None or pre._lead_class is not None:
            return False
        occurrences = 0
        for literal in pre.literals:
            occurrences += text.count(literal)
        return occurrences * (pre.lead + 1) <= self.LONG_ATTEMPTS_LIMIT

    def stdlib_finditer(self, text: str):
        """``finditer`` by the stdlib form where that is linear (its own Match objects,
        whose ``groupdict`` gives our groups), else by our automata."""
        if self.stdlib_searchable(text):
            return self.captures.finditer(text)  # type: ignore[union-attr]
        return self.finditer(text)

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
        prev = self.prev_context(text, start)
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
                    self._keep_settled(text, start, i, prev, held)
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


class Scanner:
    """Incremental leftmost-first search over text that arrives in pieces.

    Positions are absolute. A scanner made by :meth:`CompiledRegex.scanner`
    keeps the text from ``origin`` on (one character before ``start``, as
    context for ``\\b``), which it needs only to extract groups; one made by
    :meth:`CompiledRegex.bare_scanner` keeps none and asks ``source`` for it.
    :meth:`rebase` moves the search start forward without rescanning whenever
    no live attempt began before the new start.
    """

    def __init__(self, regex, text: str = "", start: int | None = None, origin: int = 0) -> None:
        self.regex = regex
        self.dfa = regex.dfa
        self.origin = origin
        # The text from ``origin`` on, in pieces; None for a bare scanner (it keeps none).
        self._chunks: list[str] | None = [text]
        self.source = self._own_text
        self.start = origin + len(text) if start is None else start
        self.pos = self.start
        self.state = self.dfa.initial(regex.prev_context(text, self.start - origin))
        self.registers: list = []
        self.best: tuple[int, int] | None = None
        # Work counters of the linear-time tests: DFA transitions taken in
        # Python; characters passed over without stepping; characters the
        # C-speed prefilter searches went through.
        self.steps = 0
        self.skipped = 0
        self.searched = 0
        self.dead = False

    @property
    def text(self) -> str:
        chunks = self._chunks
        assert chunks is not None, "a bare scanner keeps no text"
        if len(chunks) > 1:
            chunks = self._chunks = ["".join(chunks)]
        return chunks[0]

    def _own_text(self):
        return self.text, self.origin

    def feed(self, chunk: str) -> None:
        if self._chunks is not None:
            self._chunks.append(chunk)
        self.advance(chunk, 0, len(chunk))

    def feed_range(self, begin: int, end: int) -> None:
        self.advance(self.text, begin - self.origin, end - self.origin)

    def rebase(self, start: int) -> bool:
        """Search from ``start`` (>= the current start) instead, if that needs no rescan.

        True when every live attempt and the best match so far begin at or after
        ``start``: the state is then exactly that of a search begun there (the
        same threads, in the same order). Otherwise False, and nothing changes.
        """
        if self.registers and min(self.registers) < start:
            return False
        if self.best is not None and self.best[0] < start:
            return False
        self.start = start
        if self._chunks is not None:
            keep = max(start - 1, self.origin)
            if keep > self.origin:
                self._chunks = [self.text[keep - self.origin :]]
                self.origin = keep
        return True

    def advance(self, text: str, lo: int, hi: int) -> None:
        """Step ``text[lo:hi]``, which begins at absolute position ``pos``.

        Where no attempt is alive (the DFA is in an initial state) and the
        pattern has a prefilter, the characters that cannot reach a match or
        the end of the text alive are passed over at C speed: the DFA then
        restarts from the initial state the character before calls for, which
        is exactly the state it would have reached (no thread, still seeking).
        """
        pos0 = self.pos
        self.pos = pos0 + hi - lo
        if self.dead or lo >= hi:
            return
        dfa = self.dfa
        rows, fresh = dfa.rows, dfa.fresh
        classes = self.regex.class_cache
        class_of = self.regex.class_of
        pre = self.regex.prefilter
        state, registers = self.state, self.registers
        if pre is not None and hi - lo <= _QUIET_SPAN and state in fresh:
            # A short piece is searched whole once; a long one with find (below),
            # which stops at the first literal instead of going through the rest.
            self.searched += hi - lo
            if pre.quiet(text, lo, hi):
                # No attempt begun in the piece survives it, and none matches.
                self.skipped += hi - lo
                c = classes.get(text[hi - 1])
                self.state = self.regex.initial_after(class_of(text[hi - 1]) if c is None else c)
                return
        best = self.best
        i = lo
        # Below watch_from, no prefilter search is due.
        watch_from = lo if pre is not None else hi
        jump_at = -1  # where the prefilter found a literal, once the DFA gets there
        steps = 0
        stayed = 0  # steps in a row that left the state as it was
        loops = self.regex.loop_exits
        while i < hi:
            if i >= watch_from and state in fresh:
                j = pre.find(text, i, hi)
                edge = hi if j < 0 else j
                self.searched += edge - i
                t0 = pre.backoff(text, i, edge, j >= 0)
                if t0 > i:
                    self.skipped += t0 - i
                    c = classes.get(text[t0 - 1])
                    if c is None:
                        c = class_of(text[t0 - 1])
                    state = self.regex.initial_after(c)
                    registers = []
                    i = t0
                watch_from = edge + 1
                if i >= hi:
                    break
                jump_at = j
            if i == jump_at:
                # A literal begins here: its run from this state is known.
                jump_at = -1
                for literal in pre.literals:
                    if text.startswith(literal, i, hi):
                        run = self.regex.jump(state, literal, len(registers))
                        if run is not None:
                            here = pos0 + i - lo
                            state, refs, found = run
                            if found is not None:
                                best = tuple(
                                    registers[-1 - r] if r < 0 else here + r for r in found
                                )
                            registers = [registers[-1 - r] if r < 0 else here + r for r in refs]
                            self.searched += len(literal)
                            i += len(literal)
                        break
                if i >= hi:
                    break
                continue
            ch = text[i]
            c = classes.get(ch)
            if c is None:
                c = class_of(ch)
            was = state
            state, sources, match = rows[state][c]
            steps += 1
            here = pos0 + i - lo
            if match is not None:
                best = (_value(match[0], registers, here), _value(match[1], registers, here))
            if sources:
                registers = [here if s == CUR else registers[s] for s in sources]
            elif sources is not None and registers:  # None: the registers stay as they are
                registers = []
            i += 1
            if rows[state] is None:
                self.dead = True
                break
            if state == was:
                stayed += 1
                if stayed >= _LOOP_RUN and i < hi:
                    # A state that has stayed put a while: pass over, at C speed, the
                    # characters that would keep it there changing nothing.
                    stayed = 0
                    key = (state, len(registers))
                    exit = loops.get(key, _UNKNOWN)
                    if exit is _UNKNOWN:
                        exit = self.regex.loop_exit(state, len(registers))
                    if exit is not None:
                        j = exit(text, i, hi)
                        self.searched += j - i
                        self.skipped += j - i
                        self.regex.looped += j - i
                        i = j
            else:
                stayed = 0
        self.steps += steps
        self.state, self.registers, self.best = state, registers, best

    def quiet(self) -> bool:
        """True when the search so far has no match and no attempt alive, and the
        pattern needs a literal to match: the answer is then None, or a partial
        match at the very end (the text can hold nothing back)."""
        return self.regex.prefilter is not None and self.state in self.dfa.fresh

    def alive_from(self):
        """Where the attempt alive at the end of the text so far began, when the
        search has found no match and is not in an initial state; else None.

        :meth:`result` then answers a partial match from there to the end (when
        that is not empty), with no Match made here.
        """
        if self.dead or self.best is not None or self.state in self.dfa.fresh:
            return None
        match, hit_source = self.dfa.at_eof(self.state)
        if match is not None or hit_source is None:
            return None
        return _value(hit_source, self.registers, self.pos)

    def result(self, partial: bool = False):
        """What ``search(text, start, partial=partial)`` returns for the text so far.

        Read the match's groups before feeding the scanner again.
        """
        n = self.pos
        best, hit = self.best, None
        if not self.dead:
            match, hit_source = self.dfa.at_eof(self.state)
            if match is not None:
                best = (_value(match[0], self.registers, n), _value(match[1], self.registers, n))
            if hit_source is not None:
                hit = _value(hit_source, self.registers, n)
        rx = self.regex
        if best is not None:
            start, end = best
            return Match(start, end, False, resolve=self._groups(start, end, False))
        if not partial:
            return None
        if hit is not None and hit < n:
            return Match(hit, n, True, resolve=self._groups(hit, n, True))
        if rx.nfa.needs_input and not rx.nfa.anchored:
            return Match(n, n, True, {name: None for name in rx.nfa.group_names})
        if hit is not None:
            return Match(n, n, True, resolve=self._groups(n, n, True))
        return None

    def _groups(self, start: int, end: int, partial: bool):
        if not self.regex.nfa.group_names:
            return None
        stop, source = self.pos, self.source

        def resolve():
            text, origin = source()
            return self.regex.groups_at(
                text, start - origin, end - origin, partial, stop - origin, start == 0
            )

        return resolve


_QUIET_SPAN = 512  # pieces up to this long are first checked whole (Prefilter.quiet)
# Steps in a row that leave the DFA in its state before Scanner.advance asks for the
# characters that would not (CompiledRegex.loop_exit): fewer, and runs of a few
# characters between two exits would pay a search each.
_LOOP_RUN = 4
_UNKNOWN = object()
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


class Prefilter:
    """Where an attempt at a match can begin, found at C speed.

    Built from facts the compiler proved about the pattern (see
    ``rtcompiler/automata/prefilter.py``): every match, and every attempt alive
    more than ``lead`` characters plus a literal after its start, contains one
    of ``literals``, preceded by at most ``lead`` characters or by characters
    of ``lead_class`` only.
    """

    __slots__ = (
        "literals", "lead", "reach", "_one", "_any", "_window", "_order", "_lead_class", "danger",
        "_danger", "lead_loop", "simple", "_heads", "hold", "lead_source", "lead_ranges",
        "exact", "ahead", "heads_reach",
    )

    def __init__(self, data: dict) -> None:
        self.literals = tuple(data["literals"])
        self.lead = data["lead"]
        self.reach = max(len(s) for s in self.literals) - 1 + self.lead
        self._one = self.literals[0] if len(self.literals) == 1 else None
        # Literals that all begin with one character: sre searches their
        # alternation by that prefix, faster than a str.find per literal.
        self._any = _re.compile(
            "|".join(_re.escape(s) for s in self.literals), _re.DOTALL
        ) if len({s[0] for s in self.literals}) == 1 and self._one is None else None
        self._window = 1024  # see find
        self._order = list(self.literals)
        ranges = data["lead_ranges"]
        self.lead_ranges = [tuple(r) for r in ranges]
        self._lead_class = _re.compile(char_class_source(ranges), _re.DOTALL) if ranges else None
        # What a piece of text must contain for a search of it to end with an
        # attempt alive or a match: a literal, a literal's beginning at its
        # end, or (after a lead of whole classes) a lead character at its end.
        # Bounded leads of other characters are not covered: None.
        # ``core`` leaves out the lead: when only a lead character at the end is
        # found and the lead is a plain loop (``lead_loop``), the attempts alive
        # are those begun in the trailing run of lead characters.
        self.lead_loop = bool(data.get("lead_is_loop")) and self._lead_class is not None
        # With a plain-loop lead or none at all, what pends in text holding no
        # whole literal is known without the DFA (see :meth:`pending`).
        self.simple = self.lead_loop or bool(data.get("bare"))
        self.exact = bool(data.get("exact"))  # the pattern matches its literals only
        self.ahead = bool(data.get("ahead"))  # a lookahead of its literals only
        heads_source = _beginnings(self.literals)
        # A literal's proper beginning at the end of a text begins at most this many
        # characters before the end: pending searches for one there only.
        self.heads_reach = max(len(s) for s in self.literals) - 1
        self._heads = _re.compile(
            "(?:" + heads_source + ")\\Z", _re.DOTALL
        ) if heads_source is not None else None
        if self.lead:
            self.danger = None
        else:
            parts = [_re.escape(s) for s in self.literals]
            if heads_source is not None:
                parts.append("(?:" + heads_source + ")\\Z")
            if ranges:
                parts.append(char_class_source(ranges) + "\\Z")
            self.danger = "|".join(parts)
        self._danger = None if self.danger is None else _re.compile(self.danger, _re.DOTALL)
        # For simple patterns: a pattern whose leftmost match, in text holding no
        # literal, begins where :meth:`pending` says (no match: nowhere). The
        # guard lets an attempt begin only where a run of lead characters does,
        # which is where the leftmost one begins: sre then reads a run once, not
        # once per character in it. Search the unsent text alone (the guard
        # would read the character before it).
        tails = []
        # The lead characters' class, as a pattern (None: no lead).
        self.lead_source = char_class_source(ranges) if self._lead_class is not None else None
        if self._lead_class is not None:
            lead = self.lead_source
            if heads_source is not None:
                tails.append(f"(?<!{lead}){lead}*(?:{heads_source})\\Z")
            tails.append(f"(?<!{lead}){lead}+\\Z")
        elif heads_source is not None:
            tails.append(f"(?:{heads_source})\\Z")
        self.hold = "|".join(tails) if self.simple and tails else None

    @property
    def quiet_search(self):
        """The compiled search behind :meth:`quiet` (its ``search`` method), or None."""
        return None if self._danger is None else self._danger.search

    def quiet(self, text: str, lo: int, hi: int) -> bool:
        """Whether a search of ``text[lo:hi]`` from ``lo`` ends with no attempt alive
        and no match found."""
        return self._danger is not None and self._danger.search(text, lo, hi) is None

    @property
    def lead_class(self):
        """The compiled class of lead characters, or None."""
        return self._lead_class

    def pending(self, text: str, lo: int) -> int:
        """Where a search of ``text`` from ``lo`` pends (``len(text)``: nowhere).

        Only for :attr:`simple` patterns, and text where no literal begins at or
        after ``lo``: an attempt is then alive at the end exactly when it began
        where the rest of the text is lead characters, then a literal's
        beginning; the search reports the leftmost.
        """
        n = len(text)
        at = n
        if self._heads is not None:
            m = self._heads.search(text, max(lo, n - self.heads_reach))
            if m is not None:
                at = m.start()
        if self._lead_class is None:
            return at
        start = self.lead_start(text, lo, at)
        if at < n:  # the run of lead characters ending at the end, without a head
            start = min(start, self.lead_start(text, lo, n))
        return start

    def lead_start(self, text: str, lo: int, at: int) -> int:
        """Where the run of lead characters ending at ``at`` begins (not before ``lo``)."""
        lead = self._lead_class
        if lead is not None:
            while at > lo and lead.match(text, at - 1) is not None:
                at -= 1
        return at

    def find(self, text: str, lo: int, hi: int) -> int:
        """Where the first literal in ``text[lo:hi]`` begins, or -1."""
        if self._one is not None:
            return text.find(self._one, lo, hi)
        if self._any is not None:
            m = self._any.search(text, lo, hi)
            return -1 if m is None else m.start()
        # Otherwise one str.find per literal, over a window that grows until some
        # literal begins in it: sre's search of an alternation without a common
        # first character tries a branch at every character that begins one
        # (every space, for " to=functions."), twenty times slower; and a plain
        # find per literal over the rest of the text would read far past a near
        # hit, again and again. The windows read a few times the distance to the
        # hit, per literal: linear over a parse.
        # The literal that hit last is tried first: its hit bounds the other
        # searches, so a literal that never occurs costs little next to one
        # that occurs on every line.
        order = self._order
        width = self._window
        while lo < hi:
            edge = lo + width
            found = -1
            for literal in order:
                j = text.find(literal, lo, min(hi, edge + len(literal) - 1))
                if j >= 0 and (found < 0 or j < found):
                    found = edge = j
                    first = literal
            if found >= 0:
                if first is not order[0]:
                    self._order = [first] + [s for s in order if s is not first]
                return found
            lo = edge
            width *= 4
        return -1

    def backoff(self, text: str, lo: int, edge: int, found: bool = False) -> int:
        """The earliest start (>= ``lo``) of an attempt alive at ``edge`` that can
        still match or reach the end of the text alive.

        No literal begins in ``text[lo:edge]``, so such an attempt holds at most
        part of one, after its lead. ``found``: a literal begins at ``edge``.
        """
        if found and self._one is not None and self.lead == 0:
            # ``edge`` is where the one literal begins. An attempt begun at
            # t < edge that matches, or is alive at the end of the text, holds the
            # literal right after its lead: found first if it began before edge,
            # so only lead characters can come between it and edge.
            t = edge
        else:
            t = edge - self.reach
        if t <= lo:
            return lo
        return self.lead_start(text, lo, t)


# Deeper nesting than this is written out flat (see _beginnings), which is quadratic in
# a literal's length: the compiler cuts a prefilter's literals to this length.
BEGINNINGS_DEPTH = 100


def _beginnings(literals) -> str | None:
    """A pattern for exactly the literals' non-empty proper beginnings (None: there are none).

    Written as a tree of shared prefixes, ``<(?:\\|(?:c(?:h)?)?)?`` for ``<|ch...``: sre
    tries an alternation of strings one string at a time at every position it
    searches from, so the flat list of a long literal's beginnings cost a search some
    microseconds; the tree is followed only as far as the text agrees with it.
    """
    tree: dict = {}
    for literal in literals:
        node = tree
        for ch in literal[:-1]:
            node = node.setdefault(ch, {})
    if not tree:
        return None
    if max(len(s) for s in literals) > BEGINNINGS_DEPTH:
        heads = sorted({s[:k] for s in literals for k in range(1, len(s))})
        return "|".join(_re.escape(h) for h in heads)

    def branch(node: dict) -> str:
        alternatives = [
            _re.escape(ch) + (f"(?:{branch(child)})?" if child else "")
            for ch, child in sorted(node.items())
        ]
        return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"

    return branch(tree)


def char_class_source(ranges) -> str:
    """A stdlib ``re`` character class for inclusive code point ranges (the compiler's
    capture and chain patterns use it too)."""
    parts = []
    for lo, hi in ranges:
        parts.append(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}")
    return "[" + "".join(parts) + "]"


def _value(source: int, registers: list[int], here: int) -> int:
    return here if source == CUR else registers[source]


def _save_slot(position: int):
    """Capture slots per group: (committed start, committed end, open start).

    A group's value changes only when it closes, as in a backtracking matcher: a
    new iteration that opens the group but runs out of text leaves the value of
    the last completed iteration in place.
    """

    def save(payload, slot):
        slots, end = payload
        group, closing = divmod(slot, 2)
        base = 3 * group
        if closing:
            committed = (slots[base + 2], position)
            return slots[:base] + committed + slots[base + 2 :], end
        return slots[: base + 2] + (position,) + slots[base + 3 :], end

    return save


def _end_at(position: int):
    def mark(payload):
        return payload if payload[1] != -1 else (payload[0], position)

    return mark


def _group_text(text: str, slots: tuple[int, ...], index: int) -> str | None:
    start, end = slots[3 * index], slots[3 * index + 1]
    if start < 0 or end < 0 or end < start:
        return None
    return text[start:end]
###}


###{standalone chain
def tag_from_data(data: dict):
    """An xml-inline tag pattern read back from ``TagPattern.to_data()``: its chain
    when it has one (see rtcompiler/automata/chain.py), else its compiled regex;
    either way, what ``group_finditer`` runs."""
    if data["chain"] is not None:
        return TagChain(data["chain"])
    return regex_from_data(data["regex"])


class TagChain:
    """The matches of a tag pattern shaped as a chain of literals, as
    ``regex.finditer(pattern, text, regex.DOTALL)`` gives them, in linear time.

    The plan comes from ``rtcompiler/automata/chain.py``, which explains the shape
    and why one forward pass is exact: an attempt begins where the leading literal
    occurs; fixed pieces (literals, maximal runs) are read where they stand; a span
    stops at the first occurrence of its anchor after which the fixed pieces that
    follow match. Positions only move forward, so each question (the end of a run
    from here, the first viable anchor from here) is answered from where the last
    answer stopped, and an anchor with no viable occurrence from some point ends
    the search: no later attempt can get past it.
    """

    def __init__(self, plan: dict) -> None:
        self.lead = plan["lead"]
        self.names = plan["names"]
        # Segments: the fixed steps after the lead, then those after each span's
        # anchor. A fixed step: ("lit", text, group) | ("run", matcher, min, max, group).
        segments: list = [[]]
        spans: list = []
        for step in plan["steps"]:
            kind = step[0]
            if kind == "span":
                _, group, trim, anchor = step
                if trim is not None:
                    trim = (_re.compile(char_class_source(trim[0]), _re.DOTALL).match, trim[1])
                if anchor[0] == "pair":
                    # C KEY D, KEY the text of a group: every occurrence of it, for every
                    # key, is a match of C([S]+)D (see chain.py).
                    _, before, index, after, ranges = anchor
                    pattern = _re.compile(
                        _re.escape(before) + "(" + char_class_source(ranges) + "+)"
                        + _re.escape(after),
                        _re.DOTALL,
                    )
                    anchor = ("pair", pattern, index, len(before) + len(after))
                spans.append((group, trim, tuple(anchor)))
                segments.append([])
            elif kind == "run":
                _, ranges, least, most, group = step
                matcher = _re.compile(char_class_source(ranges) + "*", _re.DOTALL).match
                segments[-1].append(("run", matcher, least, most, group))
            else:
                segments[-1].append(tuple(step))
        self.segments = segments
        self.spans = spans
        # The same matches from one stdlib search, each attempt reading a character a
        # bounded number of times (see chain.py): used while few attempts can read far.
        self.form = _re.compile(plan["form"], _re.DOTALL)
        # Work counters of the linear-time tests: steps taken in Python, characters
        # the stdlib searches and matches went through, texts given to the form.
        self.steps = 0
        self.searched = 0
        self.formed = 0
        self.group_finditer = self.finditer  # what parse_xml_inline is handed

    # An attempt of the form may read to the end of the text: at most this many
    # attempts (occurrences of the leading literal), or the text is walked instead.
    FORM_ATTEMPTS = 64
    # Characters per attempt beyond which the walk is faster anyway: a match costs it
    # some microseconds in Python, but str.find crosses a long tool argument at memchr
    # speed where sre's lazy loop stops at every character that can begin the anchor.
    FORM_TEXT = 512

    def finditer(self, text: str):
        """Every match, in order: the form's own Match objects, or ours."""
        attempts = text.count(self.lead)
        if attempts <= self.FORM_ATTEMPTS and len(text) <= self.FORM_TEXT * (attempts + 1):
            self.formed += 1
            return self.form.finditer(text)
        return self.walk(text)

    def walk(self, text: str) -> list:
        """Every match, in order, by one forward pass over the text."""
        out: list = []
        lead = self.lead
        width = len(lead)
        find = text.find
        n = len(text)
        spans = self.spans
        names = self.names
        runs: dict = {}  # run matcher -> (from, end of the maximal run from there)
        viable: dict = {}  # (span, anchor position) -> (end, groups) | False
        found: dict = {}  # span or (span, key) -> (from, first viable anchor or -1 | cursor)
        trims: dict = {}  # (span, anchor position) -> where the run before the anchor begins
        pairs: dict = {}  # span -> {key: positions of its pair}
        steps = searched = 0
        pos = 0
        while True:
            s = find(lead, pos)
            searched += (n if s < 0 else s + width) - pos
            if s < 0:
                break
            groups: dict = {}
            x = s + width
            # The fixed steps after the lead (see _fixed, written out).
            for step in self.segments[0]:
                steps += 1
                if step[0] == "lit":
                    if not text.startswith(step[1], x):
                        x = -1
                        break
                    end = x + len(step[1])
                else:
                    matcher = step[1]
                    known = runs.get(matcher)
                    if known is not None and known[0] <= x <= known[1]:
                        end = known[1]
                    else:
                        end = matcher(text, x).end()
                        searched += end - x + 1
                        runs[matcher] = (x, end)
                    if step[3] is not None and end - x > step[3]:
                        end = x + step[3]
                    if end - x < step[2]:
                        x = -1
                        break
                group = step[-1]
                if group is not None:
                    groups[group] = (x, end)
                x = end
            k = 0
            while x >= 0 and k < len(spans):
                group, trim, anchor = spans[k]
                lo = x
                steps += 1
                if anchor[0] == "lit":
                    known = found.get(k)
                    if known is not None and known[0] <= lo and (known[1] < 0 or lo <= known[1]):
                        at = known[1]
                    else:
                        # The first occurrence from lo after which the next fixed steps match.
                        literal = anchor[1]
                        c = lo
                        while True:
                            at = find(literal, c)
                            searched += (n if at < 0 else at + len(literal)) - c
                            steps += 1
                            if at < 0:
                                break
                            fits = viable.get((k, at))
                            if fits is None:
                                captured: dict = {}
                                end = self._fixed(k + 1, text, at + len(literal), captured, runs)
                                fits = viable[(k, at)] = (end, captured) if end >= 0 else False
                            if fits is not False:
                                break
                            c = at + 1
                        found[k] = (lo, at)
                    if at < 0:
                        x = -2  # and no later attempt gets past this span
                        break
                    x, captured = viable[(k, at)]
                else:
                    # A pair: the first occurrence of C KEY D from lo, KEY read before.
                    _, pattern, index, extra = anchor
                    table = pairs.get(k)
                    if table is None:
                        table = pairs[k] = {}
                        for m in pattern.finditer(text):
                            table.setdefault(m.group(1), []).append(m.start())
                        searched += n
                    start, stop = groups[index]
                    key = text[start:stop]
                    positions = table.get(key, ())
                    known = found.get((k, key))
                    cursor = known[1] if known is not None and known[0] <= lo else 0
                    while cursor < len(positions) and positions[cursor] < lo:
                        cursor += 1
                        steps += 1
                    found[(k, key)] = (lo, cursor)
                    if cursor == len(positions):
                        x = -1
                        break
                    at = positions[cursor]
                    x = at + extra + len(key)
                    captured = None
                stop = at
                if trim is not None:
                    start = trims.get((k, at))
                    if start is None:
                        matcher, most = trim
                        start = at
                        while start > 0 and (most is None or at - start < most) and matcher(
                            text, start - 1
                        ):
                            start -= 1
                        steps += at - start
                        trims[(k, at)] = start
                    stop = start if start > lo else lo
                if group is not None:
                    groups[group] = (lo, stop)
                if captured:
                    groups.update(captured)
                k += 1
            if x == -2:
                break
            if x < 0:
                pos = s + 1
                continue
            out.append(Match(s, x, False, {
                name: text[groups[index][0] : groups[index][1]] if index in groups else None
                for name, index in names.items()
            }))
            pos = x
        self.steps += steps
        self.searched += searched
        return out

    def _fixed(self, k: int, text: str, x: int, groups: dict, runs: dict) -> int:
        """Segment ``k``'s fixed steps from ``x``: where they end, or -1."""
        for step in self.segments[k]:
            self.steps += 1
            if step[0] == "lit":
                if not text.startswith(step[1], x):
                    return -1
                end = x + len(step[1])
            else:
                matcher = step[1]
                known = runs.get(matcher)
                if known is not None and known[0] <= x <= known[1]:
                    end = known[1]
                else:
                    end = matcher(text, x).end()
                    self.searched += end - x + 1
                    runs[matcher] = (x, end)
                if step[3] is not None and end - x > step[3]:
                    end = x + step[3]
                if end - x < step[2]:
                    return -1
            group = step[-1]
            if group is not None:
                groups[group] = (x, end)
            x = end
        return x
###}
