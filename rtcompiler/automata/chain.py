r"""Tag patterns as a chain of literals: exact, linear-time matching with ``str.find``.

Most xml-inline tag patterns are a literal, then fixed pieces (literals, runs of a
character set) and lazy spans of any characters, each span ending at a literal::

    <arg_key>  \s*  (?P<key>.*?)  \s*  </arg_key>  \s*  <arg_value>  (?P<value>.*?)  </arg_value>
    literal    run  span          run  anchor      run  literal      span            anchor

``re`` runs such a pattern in up to cubic time (the spaces around ``key`` can be
split between the three loops every way), and our automata in Python are slow on
a long tool argument. But its leftmost-first matches follow from the literals'
occurrences alone, when the pattern has this shape:

* every run is *possessive*: what follows it cannot begin with a character of its
  set (``\s*`` before ``<``), so a match always takes the whole run and giving
  characters back never helps; the same holds for the runs right before a span
  when the span's anchor cannot begin with their characters;
* a span's anchor cannot begin with a character of the run between the span and
  the anchor (``\s*`` before ``</arg_key>``).

Then positions move forward monotonically: the fixed pieces after a later anchor
occurrence end at a later place (a maximal run from a later start ends at the same
place or later). A span stops at the first occurrence of its anchor after which
the fixed pieces match (a *viable* one); if what follows fails from there, it
fails from every later one too, since the next span then starts later and finds
a subset of the same occurrences. So one forward pass decides each attempt, an
anchor that has no viable occurrence from some point has none for any later
attempt, and every query is answered from where the last one stopped: linear time.

A backreference is allowed as part of the last span's anchor, ending the pattern,
``</(?P=key)>``: a *pair*. The group it repeats is a run whose set holds neither
the first character of the pair's opening literal nor that of its closing one, and
the opening literal's first character appears nowhere else in the pair; so every
occurrence of ``C KEY D`` is one match of ``C([S]+)D``, found for all keys in one
pass, and the span looks up its key's occurrences there. That is the
tag-pair shape ``<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>`` of transformers' own
tests, matched in one scan although no automaton can recognise it.

:func:`chain_plan` checks the shape and returns the plan that
:class:`rtcompiler.runtime.tag_chain.TagChain` runs, or None.
"""

from __future__ import annotations

import re

from ..dialect import ast
from ..dialect.charsets import ANY, CharSet
from ..runtime.prefilter import char_class_source


class _NotChain(Exception):
    pass


def chain_plan(pattern: ast.Pattern) -> dict | None:
    """The chain plan of ``pattern`` (JSON-able), or None when it has not the shape.

    Steps, run from the end of the leading literal ``lead``:

    - ``["lit", text, group]``: ``text`` must follow;
    - ``["run", ranges, min, max, group]``: the maximal run of the set (at most
      ``max``), at least ``min`` long;
    - ``["span", group, trim, anchor]``: any characters, up to the first viable
      occurrence of ``anchor`` (``["lit", text]`` or ``["pair", before, index,
      after, ranges]``), with ``trim`` (``[ranges, max]`` or None) the run allowed
      between the span and the anchor.

    ``group`` is a group index or None; ``names`` maps each named group to its index.
    """
    try:
        items = _items(pattern.root)
        return _plan(items, pattern)
    except _NotChain:
        return None


def _items(root: ast.Node) -> list[tuple]:
    """The pattern as a flat list of ``(kind, payload, group index or None)``:
    ``("char", character)``, ``("text", literal)`` (a captured one),
    ``("run", (set, min, max))``, ``("span", None)``, ``("ref", index)``."""
    nodes = root.items if isinstance(root, ast.Concat) else (root,)
    out: list[tuple] = []
    for node in nodes:
        if isinstance(node, ast.Group):
            inner = _leaf(node.item)
            if inner is None:
                # A group around a literal: its characters, captured together.
                chars = node.item.items if isinstance(node.item, ast.Concat) else (node.item,)
                text = [_literal_char(c) for c in chars]
                if any(c is None for c in text) or not text:
                    raise _NotChain
                out.append(("text", "".join(text), node.index))
                continue
            out.append((inner[0], inner[1], node.index))
        elif isinstance(node, ast.Backref):
            out.append(("ref", node.index, None))
        else:
            leaf = _leaf(node)
            if leaf is None:
                raise _NotChain
            out.append((leaf[0], leaf[1], None))
    return out


def _literal_char(node: ast.Node) -> str | None:
    if isinstance(node, ast.Chars) and len(node.chars.ranges) == 1:
        lo, hi = node.chars.ranges[0]
        if lo == hi:
            return chr(lo)
    return None


def _leaf(node: ast.Node) -> tuple | None:
    char = _literal_char(node)
    if char is not None:
        return ("char", char)
    if isinstance(node, ast.Chars):
        return ("run", (node.chars, 1, 1))
    if isinstance(node, ast.Repeat) and isinstance(node.item, ast.Chars):
        if not node.greedy:
            if node.item.chars == ANY and node.min == 0 and node.max is None:
                return ("span", None)
            return None
        if node.max == 0:
            return None
        return ("run", (node.item.chars, node.min, node.max))
    return None


def _plan(items: list[tuple], pattern: ast.Pattern) -> dict:
    # Merge literal characters into strings; captured literals stay apart.
    merged: list[tuple] = []
    for kind, payload, group in items:
        if kind == "char" and merged and merged[-1][0] == "text" and merged[-1][2] is None:
            merged[-1] = ("text", merged[-1][1] + payload, None)
        elif kind == "char":
            merged.append(("text", payload, None))
        else:
            merged.append((kind, payload, group))
    if not merged or merged[0][0] != "text" or merged[0][2] is not None:
        raise _NotChain  # attempts begin where the leading literal occurs
    lead = merged[0][1]
    rest = merged[1:]
    runs: dict[int, CharSet] = {}  # group index -> set of the run it captures
    steps: list = []
    i = 0
    while i < len(rest):
        kind, payload, group = rest[i]
        if kind == "span":
            step, i = _span(rest, i, runs)
            steps.append(step)
            continue
        if kind == "text":
            steps.append(["lit", payload, group])
        elif kind == "ref":
            raise _NotChain  # a backreference only closes the last span (a pair)
        else:  # run
            chars, least, most = payload
            _possessive(chars, rest, i + 1)
            if group is not None:
                runs[group] = chars
            steps.append(["run", _ranges(chars), least, most, group])
        i += 1
    groups = [g for _, _, g in rest if g is not None]
    if len(set(groups)) != len(groups):
        raise _NotChain  # a name used twice
    plan = {"lead": lead, "steps": steps, "names": dict(pattern.group_names)}
    plan["form"] = _form(plan)
    return plan


def _form(plan: dict) -> str:
    """A stdlib ``re`` pattern with the plan's matches and groups, in which one attempt
    reads each character a bounded number of times (a search tries every start, so
    it is linear only while few attempts can read far; see TagChain.finditer).

    Runs are plain greedy loops: they never give characters back usefully, and each
    character given back fails at once. A span is a lazy loop whose turns are atomic
    (a lookahead's group read back: Python 3.10 has no ``*+``): a whole trim run or the
    anchor's first character, each followed by the run of characters that can begin
    neither (one such run comes first too). So it stops only where the anchor or its
    trim run can begin, and tries a trim run once, from its start (the only stop in it
    that can be the first viable one). A span, with its trim, anchor and the fixed
    steps after, is one atomic group unless it is the last: once it has stopped, a
    later failure does not make it go on, which would not help (see the module
    docstring). The pattern's
    named groups keep their names; every other group is unnamed, so ``groupdict``
    gives the plan's names only.
    """
    names = {index: name for name, index in plan["names"].items()}
    ids = [0]

    # Groups are numbered where they open in the final source, which is built inside
    # out: openers and backreferences carry a mark, resolved at the end.
    def atomic(inner: str) -> str:
        ids[0] += 1
        return f"(?=(\x00{ids[0]}\x00{inner}))\x01{ids[0]}\x01"

    def captured(index, inner: str) -> str:
        if index is None:
            return inner
        if index in names:
            return f"(?P<{names[index]}>{inner})"
        return f"(\x00g{index}\x00{inner})"

    def fixed(step) -> str:
        if step[0] == "lit":
            return captured(step[2], re.escape(step[1]))
        # A plain greedy run: it never gives back usefully (the plan's runs are
        # possessive), and giving back one character at a time, each failing at once,
        # costs no more than reading the run; an atomic run costs a second pass.
        _, ranges, least, most, index = step
        bound = f"{{{least},{'' if most is None else most}}}"
        return captured(index, char_class_source(ranges) + bound)

    source = re.escape(plan["lead"])
    steps = plan["steps"]
    last_span = max((k for k, step in enumerate(steps) if step[0] == "span"), default=-1)
    i = 0
    while i < len(steps):
        step = steps[i]
        if step[0] != "span":
            source += fixed(step)
            i += 1
            continue
        _, index, trim, anchor = step
        j = i + 1
        while j < len(steps) and steps[j][0] != "span":
            j += 1
        if anchor[0] == "pair":
            _, before, key, closing, _ = anchor
            first = CharSet.of(before[0])
            ref = f"(?P={names[key]})" if key in names else f"\x01g{key}\x01"
            ending = re.escape(before) + ref + re.escape(closing)
        else:
            first = CharSet.of(anchor[1][0])
            ending = re.escape(anchor[1])
        stops = first
        turns = []
        trim_source = ""
        if trim is not None:
            trim_set = CharSet(tuple(tuple(r) for r in trim[0]))
            stops = first.union(trim_set)
            bound = "*" if trim[1] is None else "?"
            trim_source = char_class_source(trim[0]) + bound  # plain, as a fixed run
        # A run of characters that can begin neither the anchor nor the trim run is
        # never a place to stop: it is taken whole between stops, first at the start.
        other = _ranges(stops.complement())
        if trim is not None and trim[1] is None and trim_set.difference(first):
            # A stop inside a trim run ends where one at its start does: one stop a run.
            turns.append(atomic(char_class_source(_ranges(trim_set.difference(first))) + "+"))
            stops = first
        span = _lazy_span(atomic, other, _ranges(stops), turns)
        span = captured(index, span)
        rest = "".join(fixed(s) for s in steps[i + 1 : j])
        whole = span + trim_source + ending + rest
        source += whole if i == last_span else atomic(whole)
        i = j
    source = _number(source)
    re.compile(source, re.DOTALL)  # a malformed form would be a bug here
    return source


def _lazy_span(atomic, other: list, stops: list, turns: list) -> str:
    """A lazy loop that stops only before a character of ``stops`` or one of ``turns``'
    runs: the run of ``other`` characters (none of which can begin what follows the
    span) is taken whole, first and after each turn."""

    def run() -> str:
        return atomic(char_class_source(other) + "*") if other else ""

    head = run()
    turns = [*turns, char_class_source(stops)]
    return head + "(?:(?:" + "|".join(turns) + ")" + run() + ")*?"


def _number(source: str) -> str:
    """Resolve the marks of :func:`_form`: an opener ``(\\x00ID\\x00`` becomes a plain
    group, numbered as ``re`` will number it; ``\\x01ID\\x01`` its backreference."""
    numbers: dict = {}
    count = 0
    out = []
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            out.append(source[i : i + 2])
            i += 2
            continue
        if ch == "(":
            if source.startswith("(\x00", i):
                end = source.index("\x00", i + 2)
                count += 1
                numbers[source[i + 2 : end]] = count
                out.append("(")
                i = end + 1
                continue
            if not source.startswith("(?", i) or source.startswith("(?P<", i):
                count += 1
        out.append(ch)
        i += 1
    text = "".join(out)
    for ident, number in numbers.items():
        text = text.replace(f"\x01{ident}\x01", f"\\{number}")
    return text


def _span(rest: list[tuple], i: int, runs: dict[int, CharSet]) -> tuple[list, int]:
    """The span at ``rest[i]``, its trim run and anchor: ``(step, index after the anchor)``."""
    group = rest[i][2]
    j = i + 1
    trim = None
    if j < len(rest) and rest[j][0] == "run" and rest[j][2] is None:
        chars, least, most = rest[j][1]
        if least != 0 or most not in (None, 1):
            raise _NotChain
        trim = (chars, most)
        j += 1
    if j >= len(rest) or rest[j][0] != "text" or rest[j][2] is not None:
        raise _NotChain
    text = rest[j][1]
    j += 1
    if j < len(rest) and rest[j][0] == "ref":
        # A pair: text, the repeated group, then a literal that cannot continue the key.
        index = rest[j][1]
        if index not in runs or j + 1 >= len(rest) or rest[j + 1][0] != "text":
            raise _NotChain
        if rest[j + 1][2] is not None:
            raise _NotChain
        key = runs[index]
        before, after = text, rest[j + 1][1]
        opening = ord(before[0])
        if (
            opening in key or before[0] in before[1:] or before[0] in after
            or ord(after[0]) in key
        ):
            raise _NotChain  # occurrences could hide one another: no single-pass index
        anchor = ["pair", before, index, after, _ranges(key)]
        first = opening
        j += 2
        if j != len(rest):
            raise _NotChain  # the pair ends the pattern
    else:
        anchor = ["lit", text]
        first = ord(text[0])
    if trim is not None and first in trim[0]:
        raise _NotChain  # the trim run could eat the anchor's beginning
    # The runs right before the span: the anchor cannot begin with their characters
    # (a shorter run leaves the span's first viable anchor where it was).
    k = i - 1
    while k >= 0 and rest[k][0] == "run":
        if first in rest[k][1][0]:
            raise _NotChain
        k -= 1
    step = ["span", group, None if trim is None else [_ranges(trim[0]), trim[1]], anchor]
    return step, j


def _possessive(chars: CharSet, rest: list[tuple], j: int) -> None:
    """A run over ``chars`` followed by ``rest[j:]`` must never give characters back:
    nothing that can come next begins with one of them. Runs right before a span
    are checked with the span (its anchor): however they share the characters
    before it, the span's first viable anchor stays where it is."""
    nullable = []  # runs that may be empty between this one and what must follow
    while j < len(rest):
        kind, payload, _ = rest[j]
        if kind == "span":
            return
        if kind == "ref":
            raise _NotChain  # a repeated key could begin with anything of the run
        for follow in nullable:
            if follow.intersection(chars):
                raise _NotChain
        if kind == "text":
            if ord(payload[0]) in chars:
                raise _NotChain
            return
        follow, least, _ = payload
        if least > 0:
            if follow.intersection(chars):
                raise _NotChain
            return
        nullable.append(follow)
        j += 1
    for follow in nullable:
        if follow.intersection(chars):
            raise _NotChain


def _ranges(chars: CharSet) -> list[list[int]]:
    return [list(r) for r in chars.ranges]
