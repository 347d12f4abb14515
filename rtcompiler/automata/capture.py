"""Capture groups at C speed: a stdlib ``re`` form of a pattern, where it is provably the same.

Extracting groups with Pike's VM costs several microseconds a character in
Python; a tool call's arguments (``xml-inline``) or a Harmony header pay that on
every match. Both ``re`` and ``regex`` are backtracking matchers with the same
priorities (alternatives in order, greedy and lazy loops), so for a pattern
made only of character sets, concatenation, alternation, capturing groups,
optional parts and loops over plain character sequences, the first path that
succeeds -- and so
its groups -- is the same in both. The runtime uses it only for a complete
match whose span the DFA already found, with the search cut at its end
(``endpos``): paths that would read past it fail in both, so the first success
is the same path, and no search can wander. Anything else (assertions,
lookaheads, loops over alternatives or groups, one name on several groups)
gets no such form and keeps Pike's VM; so does a pattern on which backtracking
is not linear (:mod:`rtcompiler.automata.linearity`).

The form need not be written as the pattern is, only take the same first
successful path: a lazy loop over a character set is written so that sre
steps over the characters that cannot begin the rest of the pattern
(:meth:`_Emitter.lazy_loop`), which is most of a tool argument.
"""

from __future__ import annotations

import re

from ..dialect import ast
from ..dialect.charsets import CharSet
from ..runtime.prefilter import ASTRAL_TURN, char_class_source
from .linearity import backtracking_facts

# re reads \NNN of three octal digits as a character, not group NNN.
_MAX_BACKREFERENCE = 99

# A class with more ranges past U+FFFF than this has its runs written in two parts (see
# run_source). \w has about 350 of them, \d about 40.
_ASTRAL_RANGES = 8
_BMP = CharSet(((0, 0xFFFF),))


def run_source(chars: CharSet, least: int) -> str:
    """The stdlib source of ``[chars]{least,}``, greedy: the same runs, tried longest
    first.

    sre looks a character up in a bitmap for the class's BMP part, but goes through its
    ranges past U+FFFF one by one. A run ends at a character outside the class, most
    often an ASCII one, which is then compared with every such range: about 0.4 us for
    the ``\\w`` of a tool's name, more than the rest of its match. A class with many of
    them is written as its BMP part, and an astral character (one range) checked
    against the rest by a lookbehind of that one character: ``A*(?:BA*)*``. A and B
    exclude each other, so a run splits one way only, and gives characters back in the
    same order as the plain run does.
    """
    split = _astral_split(chars)
    if split is None:
        return char_class_source(chars.ranges) + ("*" if not least else f"{{{least},}}")
    a, b = split
    rest = f"{a}*(?:{b}{a}*)*"
    if not least:
        return rest
    one = f"(?:{a}|{b})"
    return (one if least == 1 else f"{one}{{{least}}}") + rest


def _astral_split(chars: CharSet) -> tuple[str, str] | None:
    """For run_source: the class's BMP part, and what reads one character of the rest;
    None when the plain class does (few ranges past U+FFFF, or nothing below)."""
    astral = chars.difference(_BMP)
    bmp = chars.intersection(_BMP)
    if len(astral.ranges) <= _ASTRAL_RANGES or not bmp:
        return None
    return char_class_source(bmp.ranges), f"{ASTRAL_TURN}{char_class_source(astral.ranges)})"


def capture_pattern(pattern: ast.Pattern, literals: list[str] | None = None) -> dict | None:
    r"""``{"source": stdlib re source, "names": {group name: [re group names]},
    "apart": bool, "tail": bool}``, or None; ``"start"`` when it holds ``^`` (below),
    ``"whole": True`` when it is right over a whole text only (see below).

    One name may stand on groups in different alternatives (Harmony's two
    ``name`` groups): at most one of them takes part in a match, so each gets
    its own ``re`` name and the one that matched gives the value.

    A form is given only where backtracking on it is linear in what an attempt
    reads (``linear`` in :mod:`rtcompiler.automata.linearity`): ``\s*(?P<k>.*?)\s*x``
    can read a run of spaces a cubic number of times in ``re``, so it has none.
    ``apart`` and ``tail`` say where it may also run over a whole text: a
    ``finditer`` (every start), or a match at one start that the caller moves past.

    ``^`` is written as a lookahead that fails, and ``"start"`` is the source with
    ``\A`` for it, for an attempt at the start of the output over text that begins
    there. ``$`` and ``\Z``, and lookaheads with loops, are right in ``re`` only over
    a whole text (a streamed one may go on past them), so such a form is ``whole``;
    ``"stream"`` is then (unless it holds ``^`` too) the source with ``$`` and ``\Z``
    that never hold, for a streamed text: a match it finds is complete whatever
    follows, and where it finds none the runtime's scanner decides. A lookahead's
    loop reads a run past the match; the ``tail`` of such a form holds only where no
    run can cross the beginning of one of the pattern's ``literals`` (the
    prefilter's, where an attempt begins): the runs two attempts read then overlap
    in their bounded parts only.
    """
    # Patterns without groups get a form too: it finds the same spans, which is
    # all a start anchor's finditer (truncate_at_last_anchor) needs.
    emitter = _Emitter()
    try:
        source, _ = emitter.emit(pattern.root, in_loop=False, after=())
    except _Unsupported:
        return None
    first = stream = None
    if emitter.start:
        # The same form for an attempt over a text that begins the output: ^ as itself.
        first, _ = _Emitter(start="\\A").emit(pattern.root, in_loop=False, after=())
    elif emitter.whole:
        # For a streamed text, whose end is not yet reached: $ and \Z never hold.
        stream, _ = _Emitter(end="(?!)").emit(pattern.root, in_loop=False, after=())
    try:
        re.compile(source, re.DOTALL)
    except re.error:
        return None
    facts = backtracking_facts(pattern.root, frozenset(emitter.atomic))
    if not facts["linear"]:
        return None
    firsts = CharSet.from_ranges([(ord(s[0]), ord(s[0])) for s in literals or () if s])
    if emitter.ahead_runs and (
        not literals or any(run.intersection(firsts).ranges for run in emitter.ahead_runs)
    ):
        return None
    form = {
        "source": source, "names": emitter.names, "apart": facts["apart"], "tail": facts["tail"],
    }
    if literals and not any(run.intersection(firsts).ranges for run in _loop_sets(pattern.root)):
        # No loop reads where a literal begins: an attempt at a literal, failed or not,
        # reads past a bounded number of the literals after it, so attempts at every
        # literal read each character a bounded number of times (see WholePass.complete).
        form["runs"] = True
    if first is not None:
        form["start"] = first
        root = pattern.root
        if (
            isinstance(root, ast.Concat) and root.items
            and root.items[0] == ast.Assertion(ast.START)
        ):
            # ^ first (DeepSeek's "^<think>"): at the start of the output, where every
            # attempt begins, the beginnings of what follows it say whether one pends.
            try:
                rest = _beginning(ast.Concat(root.items[1:]))
                re.compile(rest, re.DOTALL)
                form["first_prefix"] = rest
            except (_Unsupported, re.error, RecursionError):
                pass
    if stream is not None:
        form["stream"] = stream
    if emitter.whole:
        form["whole"] = True
    try:
        prefix = _beginning(pattern.root)
        re.compile(prefix, re.DOTALL)
    except (_Unsupported, re.error, RecursionError):  # (sre refuses deep nesting)
        try:
            loose = _beginning(pattern.root, loose=True)
            re.compile(loose, re.DOTALL)
        except (_Unsupported, re.error, RecursionError):
            return form
        form["loose"] = loose
        return form
    form["prefix"] = prefix
    return form


def _beginning(node: ast.Node, loose: bool = False, tail: bool = True) -> str:
    r"""A stdlib source matching exactly the beginnings of the texts ``node`` matches
    (the empty text and whole matches included), with no groups; followed by ``\Z``,
    it says whether a text still pends as a match of ``node`` (a streamed header
    cut by the end of a feed) without stepping the DFA. Only what a capture form
    may hold: raises _Unsupported otherwise.

    A positive lookahead or ``$`` at the ``tail`` of the pattern (nothing follows it
    there: Llama 3's call close ``\s*\}(?=[ \t]*\n\s*[^\s,}\]])``) is exact too: a text
    ends inside what the lookahead reads and it does not hold yet (an attempt that
    needs one more character there pends), or where ``$`` may hold later (at the end,
    or before a final newline). ``loose``:
    more texts, not fewer, where assertions and lookaheads stand elsewhere: each is
    read as nothing (its condition left out), or a lookahead as where the text ends,
    inside what it reads.
    A text a loose source does not match does not pend; one it matches may not (see
    ResponseStream.answer)."""
    if isinstance(node, ast.Assertion) and node.kind == ast.DOLLAR and (loose or tail):
        return "\n?"  # $ holds where the text ends, or before its final newline
    if isinstance(node, ast.Assertion) and (loose or tail and node.kind == ast.END):
        return ""
    if isinstance(node, ast.Lookahead) and not node.negative and (loose or tail):
        inside = _beginning(node.item, loose, False)
        # (Where the lookahead holds, the match is complete: then it does not pend.)
        return inside if loose else f"(?!{_whole(node.item)})(?:{inside})"
    if isinstance(node, ast.Empty):
        return ""
    if isinstance(node, ast.Chars):
        return _whole(node) + "?"
    if isinstance(node, ast.Concat):
        # a beginning of x y...: x then a beginning of y..., or a beginning of x
        if not node.items:
            return ""
        source = _beginning(node.items[-1], loose, tail)
        for item in reversed(node.items[:-1]):
            source = f"(?:{_whole(item, loose)}{source}|{_beginning(item, loose, False)})"
        return source
    if isinstance(node, ast.Alternation):
        return "(?:" + "|".join(
            _beginning(alt, loose, tail) for alt in node.alternatives
        ) + ")"
    if isinstance(node, ast.Group):
        return _beginning(node.item, loose, tail)
    if isinstance(node, ast.Repeat):
        if node.max == 0:
            return ""
        upper = "" if node.max is None else str(node.max)
        if isinstance(node.item, ast.Chars):
            return f"{_whole(node.item)}{{0,{upper}}}"  # any shorter run
        before = "" if node.max is None else str(node.max - 1)
        return (
            f"(?:{_whole(node.item, loose)}){{0,{before}}}{_beginning(node.item, loose, False)}"
        )
    raise _Unsupported


def _whole(node: ast.Node, loose: bool = False) -> str:
    """A stdlib source matching the texts ``node`` matches (the same language, with no
    groups and no regard to which path is first); ``loose``: more of them, assertions
    and positive lookaheads left out."""
    if loose and (
        isinstance(node, ast.Assertion)
        or isinstance(node, ast.Lookahead) and not node.negative
    ):
        return ""
    if isinstance(node, ast.Empty):
        return ""
    if isinstance(node, ast.Chars):
        ranges = node.chars.ranges
        if not ranges:
            raise _Unsupported
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            return re.escape(chr(ranges[0][0]))
        return char_class_source(ranges)
    if isinstance(node, ast.Concat):
        return "".join(_whole(item, loose) for item in node.items)
    if isinstance(node, ast.Alternation):
        return "(?:" + "|".join(_whole(alt, loose) for alt in node.alternatives) + ")"
    if isinstance(node, ast.Group):
        return "(?:" + _whole(node.item, loose) + ")"
    if isinstance(node, ast.Repeat):
        upper = "" if node.max is None else str(node.max)
        return f"(?:{_whole(node.item, loose)}){{{node.min},{upper}}}"
    raise _Unsupported


# Characters a lazy tail's loop may leave out (see lazy_tail_pattern): each is looked
# for in the stretch the loop crosses, one str.find apiece.
_LAZY_EXCLUDED = 4


def lazy_tail_pattern(pattern: ast.Pattern) -> dict | None:
    r"""``{"head": the head's stdlib form, "literal": str, "excluded": str}`` for a
    pattern ``H S*? L`` (a head, a lazy loop over a character set, a literal), or None.

    A backtracking attempt tries the head's matches in priority order; after each,
    the lazy loop tries every stop in turn, up to the first character outside ``S``.
    So when ``L`` occurs after the head's first match with only characters of ``S``
    before it, the attempt's first success is that head match and the first such
    ``L``: a ``re`` match of the head and a ``str.find`` of the literal, where a
    form of the whole pattern crosses the stretch in sre a character at a time
    (Harmony's ``to=functions\.(?P<name>[\w.]+).*?<\|message\|>``, whose form
    is also refused: the name run and the lazy loop can split a word every way).
    ``excluded`` lists the characters outside ``S`` (at most a few).
    """
    root = pattern.root
    if not isinstance(root, ast.Concat):
        return None
    items = root.items
    k = len(items)
    literal: list[str] = []
    while k and isinstance(items[k - 1], ast.Chars):
        ranges = items[k - 1].chars.ranges
        if len(ranges) != 1 or ranges[0][0] != ranges[0][1]:
            break
        literal.append(chr(ranges[0][0]))
        k -= 1
    if not literal or k < 2:
        return None
    loop = items[k - 1]
    if not (
        isinstance(loop, ast.Repeat) and not loop.greedy and loop.min == 0
        and loop.max is None and isinstance(loop.item, ast.Chars)
    ):
        return None
    excluded = CharSet.from_ranges([(0, 0x10FFFF)]).difference(loop.item.chars)
    if sum(hi - lo + 1 for lo, hi in excluded.ranges) > _LAZY_EXCLUDED:
        return None
    head = capture_pattern(ast.Pattern(
        source=pattern.source, root=ast.Concat(items[: k - 1]),
        group_count=pattern.group_count, group_names=pattern.group_names,
    ))
    if head is None or not head["tail"] or "start" in head or "whole" in head:
        return None
    return {
        "head": head, "literal": "".join(reversed(literal)),
        "excluded": "".join(chr(c) for lo, hi in excluded.ranges for c in range(lo, hi + 1)),
    }


class _Unsupported(Exception):
    pass


def _loop_free(node: ast.Node) -> bool:
    """Whether ``node`` reads a bounded number of characters, with no group or
    assertion: strings, classes, alternations and optional parts of them."""
    if isinstance(node, (ast.Empty, ast.Chars)):
        return True
    if isinstance(node, ast.Concat):
        return all(_loop_free(item) for item in node.items)
    if isinstance(node, ast.Alternation):
        return all(_loop_free(alt) for alt in node.alternatives)
    if isinstance(node, ast.Repeat):
        return node.max is not None and _loop_free(node.item)
    return False


def _loop_sets(node: ast.Node) -> list[CharSet]:
    """The character sets of the loops in ``node`` (a loop over anything else: all of them)."""
    if isinstance(node, ast.Concat):
        return [c for item in node.items for c in _loop_sets(item)]
    if isinstance(node, ast.Alternation):
        return [c for alt in node.alternatives for c in _loop_sets(alt)]
    if isinstance(node, (ast.Group, ast.Lookahead)):
        return _loop_sets(node.item)
    if isinstance(node, ast.Repeat):
        return _loop_sets(node.item) if node.max is not None else [_reads(node.item)]
    return []


def _reads(node: ast.Node) -> CharSet:
    """Every character ``node`` may read."""
    if isinstance(node, ast.Chars):
        return node.chars
    if isinstance(node, (ast.Concat, ast.Alternation)):
        parts = node.items if isinstance(node, ast.Concat) else node.alternatives
        out = CharSet(())
        for item in parts:
            out = out.union(_reads(item))
        return out
    if isinstance(node, (ast.Group, ast.Repeat, ast.Lookahead)):
        return _reads(node.item)
    return CharSet(())


class _Emitter:
    def __init__(self, start: str = "(?!)", end: str | None = None) -> None:
        self.start_source = start  # what ^ is written as
        self.end_source = end  # what $ and \Z are written as (None: themselves)
        self.names: dict[str, list[str]] = {}
        self.groups = 0  # re groups opened so far, in source order: backreferences need them
        self.atomic: set[int] = set()  # ids of the loops written as atomic runs (absorbed)
        self.ahead_runs: list[CharSet] = []  # the sets lookaheads' loops read
        self.start = False  # whether ^ (or \A) was written
        self.whole = False  # whether $ or \Z was written, or a lookahead with loops

    def emit(
        self, node: ast.Node, in_loop: bool, after: tuple[ast.Node, ...] | None
    ) -> tuple[str, frozenset]:
        """The ``re`` source of ``node`` and the group indexes it holds.

        ``after`` is what a match must go on with once ``node`` is done, up to
        the end of the pattern (None: not known, as in a loop's body).
        """
        if isinstance(node, ast.Empty):
            return "", frozenset()
        if isinstance(node, ast.Chars):
            ranges = node.chars.ranges
            return (char_class_source(ranges) if ranges else "(?!)"), frozenset()
        if isinstance(node, ast.Concat):
            parts: list[str] = []
            held: frozenset = frozenset()
            for i, item in enumerate(node.items):
                rest = None if after is None else node.items[i + 1 :] + after
                part, inner = self.emit(item, in_loop, rest)
                if held & inner:
                    raise _Unsupported  # one group twice in a sequence
                parts.append(part)
                held |= inner
            return "".join(parts), held
        if isinstance(node, ast.Alternation):
            if in_loop:
                raise _Unsupported
            parts, held = [], frozenset()
            for alt in node.alternatives:
                part, inner = self.emit(alt, in_loop, after)
                parts.append(part)
                held |= inner  # alternatives exclude each other
            return "(?:" + "|".join(parts) + ")", held
        if isinstance(node, ast.Group):
            if in_loop:
                raise _Unsupported
            self.groups += 1
            inner_source, inner = self.emit(node.item, in_loop, after)
            if node.index in inner:
                raise _Unsupported
            if node.name is None:
                return f"({inner_source})", inner | {node.index}
            taken = self.names.setdefault(node.name, [])
            alias = node.name if not taken else f"{node.name}__{len(taken) + 1}"
            if alias != node.name and alias in self.names:
                raise _Unsupported
            taken.append(alias)
            return f"(?P<{alias}>{inner_source})", inner | {node.index}
        if isinstance(node, ast.Repeat):
            if in_loop:
                raise _Unsupported
            if node.max is not None and node.max <= 1:
                # An optional part is tried at most once: groups and loops
                # inside it behave as in a sequence.
                inner_source, inner = self.emit(node.item, in_loop, after)
                lazy = "" if node.greedy else "?"
                return f"(?:{inner_source}){{{node.min},{node.max}}}{lazy}", inner
            if not node.greedy and node.max is None and isinstance(node.item, ast.Chars):
                skipping = self.lazy_loop(node.item.chars, node.min, after)
                if skipping is not None:
                    return skipping, frozenset()
            if (
                node.greedy and node.max is None and isinstance(node.item, ast.Chars)
                and _absorbed(node.item.chars, after) and self.groups < _MAX_BACKREFERENCE
            ):
                # A maximal run that no shorter one can beat (see _absorbed): taken
                # whole, so that a failing attempt does not try every split of the
                # run between this loop and the next.
                self.atomic.add(id(node))
                self.groups += 1
                run = run_source(node.item.chars, node.min)
                return f"(?=({run}))\\{self.groups}", frozenset()
            if (
                node.greedy and node.max is None and isinstance(node.item, ast.Chars)
                and _astral_split(node.item.chars) is not None
            ):
                return f"(?:{run_source(node.item.chars, node.min)})", frozenset()
            inner_source, _ = self.emit(node.item, in_loop=True, after=None)
            upper = "" if node.max is None else str(node.max)
            lazy = "" if node.greedy else "?"
            return f"(?:{inner_source}){{{node.min},{upper}}}{lazy}", frozenset()
        if isinstance(node, ast.Lookahead) and not node.negative:
            looping = not _loop_free(node.item)
            if looping and in_loop:
                raise _Unsupported  # read again at every turn of the loop
            # A positive lookahead of strings (Qwen3's "(?=<\|im_end\|>)") reads a
            # bounded number of characters at one place, past the match at most. One
            # with loops (Llama 3's "(?=[ \t]*\n\s*[^\s,}\]])") may read a run past
            # it: see capture_pattern for when that stays linear.
            inner_source, inner = self.emit(node.item, in_loop, None)
            if inner:
                raise _Unsupported
            if looping:
                self.ahead_runs.extend(_loop_sets(node.item))
                self.whole = True  # a streamed text may end inside the run
            return f"(?={inner_source})", frozenset()
        if isinstance(node, ast.Assertion) and node.kind == ast.START:
            # ^ and \A: the start of the output, where held text need not begin. Past
            # it, ^ never holds; an attempt there takes the form written with \A (see
            # CompiledRegex.form_at).
            self.start = True
            return self.start_source, frozenset()
        if isinstance(node, ast.Assertion) and node.kind in (ast.END, ast.DOLLAR):
            # The end of the output: right in re only over a text known to be whole
            # (see CompiledRegex.form_whole). re's $ also holds before a final newline.
            self.whole = True
            if self.end_source is not None:
                return self.end_source, frozenset()
            return ("\\Z" if node.kind == ast.END else "$"), frozenset()
        raise _Unsupported  # word boundaries, and negative lookaheads

    def lazy_loop(
        self, chars: CharSet, least: int, after: tuple[ast.Node, ...] | None
    ) -> str | None:
        """``[chars]{least,}?`` that steps over the characters no match can go on from.

        The lazy loop tries to stop before each character in turn, and sre runs
        the rest of the pattern at every one (about 14 ns a character: 30 us
        for a 2 K-character tool argument). When the rest cannot match empty
        and must begin with a character of ``stops``, a stop before any other
        character fails, so the loop may swallow runs of them at once: the
        stops left are tried in the same order, and the first that succeeds --
        hence the span and every group -- is the one ``regex`` finds. Each run
        is atomic (taken whole, never given back) so that a failing search
        does not walk back through it a character at a time. Generated parsers
        run on Python 3.10, whose ``re`` has neither ``*+`` nor ``(?>...)``, so
        a run is a lookahead's group read back by a backreference (``*+``
        would be about a quarter faster). None: keep the plain lazy loop.
        """
        if after is None:
            return None
        follow = _first(after)
        if follow is None or follow[1]:
            return None  # the rest may match empty, or holds what we cannot bound
        stops = follow[0]
        skip = chars.difference(stops)
        stop = chars.intersection(stops)
        if not skip:
            return None  # every character may be a stop: nothing to step over
        needed = 2 if stop else 1
        if self.groups + needed > _MAX_BACKREFERENCE:
            return None
        head = ""
        if least:
            head = char_class_source(chars.ranges) + (f"{{{least}}}" if least > 1 else "")
        run = run_source(skip, 0)
        self.groups += 1
        source = f"(?=({run}))\\{self.groups}"
        if stop:
            # With no stop character in the loop's set, only the end of the first run
            # can be a stop; otherwise each stop character starts one more lazy turn.
            self.groups += 1
            turn = f"{char_class_source(stop.ranges)}(?=({run}))\\{self.groups}"
            source += f"(?:{turn})*?"
        return f"(?:{head}{source})"


def _absorbed(chars: CharSet, after: tuple[ast.Node, ...] | None) -> bool:
    r"""Whether a greedy loop over ``chars`` may be atomic: what follows it is a greedy
    loop (at least zero times) over a superset, and then something that cannot begin
    with a character of ``chars``, or may be empty.

    Giving back ``k`` characters of the run only lets the next loop start ``k``
    earlier; that loop, greedy over a superset, reaches the same end and then tries
    the same positions and ``k`` more, each of them inside the run, where the rest
    cannot begin (or where the rest, able to be empty, already succeeded at the
    end). So the first success, if any, is the one with the whole run: Harmony's
    ``(?P<name>[^\s<]+)[^<]*<``, whose name is otherwise split every way on a
    failing header.
    """
    if not after:
        return False
    follow = after[0]
    while isinstance(follow, ast.Group):
        follow = follow.item
    if not (
        isinstance(follow, ast.Repeat) and follow.greedy and follow.min == 0
        and follow.max is None and isinstance(follow.item, ast.Chars)
        and not chars.difference(follow.item.chars)
    ):
        return False
    rest = _first(after[1:])
    if rest is None:
        return False
    begins, nullable = rest
    return nullable or not begins.intersection(chars)


def _first(nodes) -> tuple[CharSet, bool] | None:
    """The characters a match of ``nodes`` in sequence can begin with, and whether it can be empty.

    None when a node's effect on that is not known (assertions, lookaheads).
    A larger set than needed is safe (fewer stops skipped); an empty match
    missed is not, so nullability is exact or errs towards True.
    """
    first = CharSet(())
    for node in nodes:
        found = _first_of(node)
        if found is None:
            return None
        chars, nullable = found
        first = first.union(chars)
        if not nullable:
            return first, False
    return first, True


def _first_of(node: ast.Node) -> tuple[CharSet, bool] | None:
    if isinstance(node, ast.Empty):
        return CharSet(()), True
    if isinstance(node, ast.Chars):
        return node.chars, False
    if isinstance(node, ast.Concat):
        return _first(node.items)
    if isinstance(node, ast.Alternation):
        first, nullable = CharSet(()), False
        for alt in node.alternatives:
            found = _first_of(alt)
            if found is None:
                return None
            first, nullable = first.union(found[0]), nullable or found[1]
        return first, nullable
    if isinstance(node, ast.Group):
        return _first_of(node.item)
    if isinstance(node, ast.Repeat):
        if node.max == 0:
            return CharSet(()), True
        found = _first_of(node.item)
        if found is None:
            return None
        return found[0], found[1] or node.min == 0
    return None
