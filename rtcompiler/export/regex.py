"""Delimiter syntax trees as grammar regexes: writing, rewriting and reasoning about them.

The exporter never pastes a template's regex text into a grammar. It reads the delimiter's
syntax tree (:mod:`rtcompiler.dialect.ast`, character sets already resolved to code points)
and writes it again in the regex syntax a grammar form understands: Python's ``re`` for
lark, Rust's ``regex`` for llguidance. Both read the same core (classes, alternation,
repeats, ``(?s:…)``); only assertions differ, and llguidance reads none of them, so what
to do with each assertion is decided before writing (:mod:`.delimiters`).

Besides writing, this module answers the questions the exporter asks of a tree: can it
match the empty string, which literal must every match contain, and does every string of
one language begin with a match of another (the proof that a lookahead holds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..dialect import ast
from ..dialect.charsets import ANY, MAX_CODE_POINT, CharSet

EMPTY = ast.Empty()
SURROGATES = CharSet(((0xD800, 0xDFFF),))


def literal(text: str) -> ast.Node:
    """The tree that matches exactly ``text``."""
    if len(text) == 1:
        return ast.Chars(CharSet.of(text))
    return concat([ast.Chars(CharSet.of(c)) for c in text])


def concat(items: Iterable[ast.Node]) -> ast.Node:
    flat: list[ast.Node] = []
    for item in items:
        if isinstance(item, ast.Concat):
            flat.extend(item.items)
        elif not isinstance(item, ast.Empty):
            flat.append(item)
    if not flat:
        return EMPTY
    return flat[0] if len(flat) == 1 else ast.Concat(tuple(flat))


def alternation(options: Iterable[ast.Node]) -> ast.Node | None:
    """Alternatives in order; ``None`` (matches nothing) when there are none."""
    flat: list[ast.Node] = []
    for option in options:
        for alt in option.alternatives if isinstance(option, ast.Alternation) else (option,):
            if alt not in flat:
                flat.append(alt)
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else ast.Alternation(tuple(flat))


def repeat(item: ast.Node, low: int, high: int | None) -> ast.Node:
    if high == 1 and low == 1:
        return item
    return ast.Repeat(item, low, high, greedy=True)


def alternatives(node: ast.Node) -> tuple[ast.Node, ...]:
    """The top-level alternatives of a tree (itself when it is no alternation)."""
    while isinstance(node, ast.Group):
        node = node.item
    return node.alternatives if isinstance(node, ast.Alternation) else (node,)


def literal_text(node: ast.Node) -> str | None:
    """The one string ``node`` matches, if it is a plain literal (no class, no choice)."""
    if isinstance(node, ast.Empty):
        return ""
    if isinstance(node, ast.Chars):
        ranges = node.chars.ranges
        return chr(ranges[0][0]) if len(ranges) == 1 and ranges[0][0] == ranges[0][1] else None
    if isinstance(node, ast.Group):
        return literal_text(node.item)
    if isinstance(node, ast.Concat):
        parts = [literal_text(item) for item in node.items]
        return None if any(p is None for p in parts) else "".join(parts)  # type: ignore[arg-type]
    return None


def nullable(node: ast.Node) -> bool:
    """Whether ``node`` can match the empty string (assertions taken as satisfied)."""
    if isinstance(node, (ast.Empty, ast.Assertion, ast.Lookahead)):
        return True
    if isinstance(node, ast.Chars):
        return False
    if isinstance(node, ast.Concat):
        return all(nullable(item) for item in node.items)
    if isinstance(node, ast.Alternation):
        return any(nullable(alt) for alt in node.alternatives)
    if isinstance(node, ast.Repeat):
        return node.min == 0 or nullable(node.item)
    if isinstance(node, ast.Group):
        return nullable(node.item)
    raise TypeError(node)


def non_empty(node: ast.Node) -> ast.Node | None:
    """A tree for the non-empty matches of ``node`` (``None`` if it has none).

    Lark refuses terminals that can match nothing; ``X?`` with ``X = non_empty(T)`` says
    the same as a nullable ``T``.
    """
    if isinstance(node, (ast.Empty, ast.Assertion, ast.Lookahead)):
        return None
    if isinstance(node, ast.Chars):
        return node
    if isinstance(node, ast.Group):
        return non_empty(node.item)
    if isinstance(node, ast.Alternation):
        return alternation(n for n in map(non_empty, node.alternatives) if n is not None)
    if isinstance(node, ast.Repeat):
        item = non_empty(node.item)
        if item is None or node.max == 0:
            return None
        rest_max = None if node.max is None else node.max - 1
        return concat([item, repeat(node.item, max(node.min - 1, 0), rest_max)])
    if isinstance(node, ast.Concat):
        first, rest = node.items[0], concat(node.items[1:])
        options = []
        head = non_empty(first)
        if head is not None:
            options.append(concat([head, rest]))
        if nullable(first):
            tail = non_empty(rest)
            if tail is not None:
                options.append(concat([first, tail]) if _has_assertion(first) else tail)
        return alternation(options)
    raise TypeError(node)


def restrict_first(node: ast.Node, allowed: CharSet) -> ast.Node | None:
    """The matches of ``node`` that are empty or begin with a character of ``allowed``."""
    if isinstance(node, (ast.Empty, ast.Assertion, ast.Lookahead)):
        return node
    if isinstance(node, ast.Chars):
        kept = node.chars.intersection(allowed)
        return ast.Chars(kept) if kept else None
    if isinstance(node, ast.Group):
        return restrict_first(node.item, allowed)
    if isinstance(node, ast.Alternation):
        return alternation(r for r in (restrict_first(a, allowed) for a in node.alternatives)
                           if r is not None)
    if isinstance(node, ast.Concat):
        if not node.items:
            return EMPTY
        first, rest = node.items[0], concat(node.items[1:])
        options = []
        head = non_empty(first)
        head = restrict_first(head, allowed) if head is not None else None
        if head is not None:
            options.append(concat([head, rest]))
        if nullable(first):
            tail = restrict_first(rest, allowed)
            if tail is not None:
                options.append(tail)
        return alternation(options)
    if isinstance(node, ast.Repeat):
        options = [EMPTY] if node.min == 0 else []
        head = non_empty(node.item)
        head = restrict_first(head, allowed) if head is not None else None
        if head is not None and node.max != 0:
            more = None if node.max is None else node.max - 1
            options.append(concat([head, repeat(node.item, max(node.min - 1, 0), more)]))
        return alternation(options)
    raise TypeError(node)


def chars_in(node: ast.Node) -> CharSet:
    """Every character ``node`` can consume."""
    if isinstance(node, ast.Chars):
        return node.chars
    out = CharSet(())
    children: tuple[ast.Node, ...] = ()
    if isinstance(node, ast.Concat):
        children = node.items
    elif isinstance(node, ast.Alternation):
        children = node.alternatives
    elif isinstance(node, (ast.Group, ast.Repeat)):
        children = (node.item,)
    for child in children:
        out = out.union(chars_in(child))
    return out


def _has_assertion(node: ast.Node) -> bool:
    if isinstance(node, (ast.Assertion, ast.Lookahead)):
        return True
    if isinstance(node, (ast.Concat,)):
        return any(_has_assertion(i) for i in node.items)
    if isinstance(node, ast.Alternation):
        return any(_has_assertion(i) for i in node.alternatives)
    if isinstance(node, (ast.Repeat, ast.Group)):
        return _has_assertion(node.item)
    return False


def has_assertion(node: ast.Node) -> bool:
    """Whether ``node`` holds an anchor, a word boundary or a lookahead anywhere."""
    return _has_assertion(node)


def bounded(node: ast.Node, limit: int, whitespace: CharSet | None = None) -> ast.Node:
    """``node`` with every unbounded repeat capped at ``limit`` (for generation grammars).

    With ``whitespace``, a repeat over whitespace only is capped at 2 and narrowed to
    ``whitespace``: a small model otherwise pads delimiters with newlines it never ends.
    Both make the language smaller, never larger.
    """
    if isinstance(node, ast.Concat):
        return ast.Concat(tuple(bounded(i, limit, whitespace) for i in node.items))
    if isinstance(node, ast.Alternation):
        return ast.Alternation(tuple(bounded(i, limit, whitespace) for i in node.alternatives))
    if isinstance(node, ast.Group):
        return ast.Group(bounded(node.item, limit, whitespace), node.index, node.name)
    if isinstance(node, ast.Lookahead):
        return node
    if isinstance(node, ast.Repeat):
        item = bounded(node.item, limit, whitespace)
        high = node.max
        if (whitespace is not None and isinstance(item, ast.Chars)
                and not item.chars.difference(WHITESPACE)):
            narrowed = item.chars.intersection(whitespace)
            if not narrowed:
                return EMPTY if node.min == 0 else node
            return ast.Repeat(ast.Chars(narrowed), node.min, max(node.min, min(high or 2, 2)),
                              node.greedy)
        if high is None:
            high = max(limit, node.min)
        return ast.Repeat(item, node.min, high, node.greedy)
    return node


# The characters the dialect's \s matches (regex's Unicode White_Space).
WHITESPACE = CharSet(((9, 13), (32, 32), (133, 133), (160, 160), (5760, 5760), (8192, 8202),
                      (8232, 8233), (8239, 8239), (8287, 8287), (12288, 12288)))


def required_literals(node: ast.Node,
                      usable: Callable[[str], bool] = lambda c: True) -> list[str] | None:
    """Literals such that every match of ``node`` contains one of them, or ``None``.

    A text that contains none of them holds no match. They are chosen long (the longest
    run of plain characters, per alternative), so that avoiding them forbids little, and
    made only of characters ``usable`` accepts. Lookaheads count: a match of ``a(?=b)``
    sits in a text that contains ``ab``.
    """
    if isinstance(node, ast.Group):
        return required_literals(node.item, usable)
    if isinstance(node, ast.Alternation):
        out: list[str] = []
        for alt in node.alternatives:
            found = required_literals(alt, usable)
            if found is None:
                return None
            out.extend(s for s in found if s not in out)
        return out
    if isinstance(node, ast.Lookahead):
        return None if node.negative else required_literals(node.item, usable)
    if isinstance(node, ast.Repeat):
        return required_literals(node.item, usable) if node.min >= 1 else None
    if isinstance(node, ast.Chars):
        text = literal_text(node)
        return [text] if text and usable(text) else None
    if isinstance(node, ast.Concat):
        options: list[list[str]] = []
        run = ""
        for item in node.items:
            char = literal_text(item) if isinstance(item, ast.Chars) else None
            if char and usable(char):
                run += char
                continue
            if run:
                options.append([run])
            run = ""
            if not char:
                found = required_literals(item, usable)
                if found:
                    options.append(found)
        if run:
            options.append([run])
        return max(options, key=lambda found: min(map(len, found)), default=None)
    return None


def for_avoiding(node: ast.Node) -> ast.Node:
    """A lookaround-free tree whose matches cover every place ``node`` can match.

    Used to *forbid* a delimiter inside text, so it may only grow: a positive lookahead
    consumes what it looked at, a negative one and every anchor or word boundary is
    dropped (taken as satisfied).
    """
    if isinstance(node, ast.Assertion):
        return EMPTY
    if isinstance(node, ast.Lookahead):
        return EMPTY if node.negative else for_avoiding(node.item)
    if isinstance(node, ast.Concat):
        return concat(for_avoiding(i) for i in node.items)
    if isinstance(node, ast.Alternation):
        return ast.Alternation(tuple(for_avoiding(i) for i in node.alternatives))
    if isinstance(node, ast.Group):
        return for_avoiding(node.item)
    if isinstance(node, ast.Repeat):
        return ast.Repeat(for_avoiding(node.item), node.min, node.max, node.greedy)
    return node


def stopped(node: ast.Node) -> ast.Node | None:
    """Each match of ``node`` (lookaround-free) where a greedy match stops, followed by the
    character that stops it; ``None`` when the tree does not end in a way this can tell.

    A tree ending in a character is followed by any character; one ending in an unbounded
    repeat of a class, by a character outside the class (``<tool_call>\\s*[^\\s<]+`` then
    a space or ``<``). A text that contains no such string holds no match of ``node`` that
    ends before the text does, except the matches a longer one at the same place extends:
    for text up to a delimiter whose match is the end of the text.
    """
    if isinstance(node, ast.Alternation):
        parts = [stopped(a) for a in node.alternatives]
        return None if not parts or any(p is None for p in parts) else alternation(parts)
    if isinstance(node, ast.Concat) and node.items:
        last = stopped(node.items[-1])
        return None if last is None else concat([*node.items[:-1], last])
    if isinstance(node, ast.Repeat) and node.max is None and isinstance(node.item, ast.Chars):
        return concat([node, ast.Chars(node.item.chars.complement())])
    if isinstance(node, ast.Chars):
        return concat([node, ast.Chars(ANY)])
    return None


# --------------------------------------------------------------------------- writing


class RegexWriter:
    """Writes a tree in one grammar form's regex syntax.

    ``flavour`` is ``"lark"`` (Python ``re``: lookaheads and anchors allowed) or
    ``"llguidance"`` (Rust ``regex``: no assertion at all, no surrogate code points).
    Any character is written ``(?s:.)``, so no flag is needed around the whole.
    """

    def __init__(self, flavour: str) -> None:
        if flavour not in ("lark", "llguidance"):
            raise ValueError(flavour)
        self.flavour = flavour

    def write(self, node: ast.Node) -> str:
        return self._write(node, top=True)

    def _write(self, node: ast.Node, top: bool = False) -> str:
        if isinstance(node, ast.Empty):
            return "" if top else "(?:)"
        if isinstance(node, ast.Chars):
            return self.chars(node.chars)
        if isinstance(node, ast.Group):
            return self._write(node.item, top)
        if isinstance(node, ast.Concat):
            return "".join(self._atom_in_concat(i) for i in node.items)
        if isinstance(node, ast.Alternation):
            body = "|".join(self._write(a, top=True) for a in node.alternatives)
            return body if top else f"(?:{body})"
        if isinstance(node, ast.Repeat):
            return self._atom(node.item) + _quantifier(node.min, node.max)
        if isinstance(node, ast.Lookahead):
            if self.flavour == "llguidance":
                raise ValueError("llguidance regexes have no lookahead")
            return f"(?{'!' if node.negative else '='}{self._write(node.item, top=True)})"
        if isinstance(node, ast.Assertion):
            if self.flavour == "llguidance":
                raise ValueError("llguidance regexes have no anchors")
            return {ast.START: "^", ast.END: r"\Z", ast.DOLLAR: "$",
                    ast.WORD_BOUNDARY: r"\b", ast.NOT_WORD_BOUNDARY: r"\B"}[node.kind]
        raise TypeError(node)

    def _atom_in_concat(self, node: ast.Node) -> str:
        if isinstance(node, ast.Alternation) or (
                isinstance(node, ast.Group) and isinstance(node.item, ast.Alternation)):
            return self._write(node)
        return self._write(node)

    def _atom(self, node: ast.Node) -> str:
        """``node`` as something a quantifier can follow."""
        while isinstance(node, ast.Group):
            node = node.item
        if isinstance(node, ast.Chars):
            return self.chars(node.chars)
        return f"(?:{self._write(node, top=True)})"

    def chars(self, chars: CharSet) -> str:
        if self.flavour == "llguidance":
            chars = chars.difference(SURROGATES)
        if not chars:
            return "[^\\x00-\\U0010FFFF]" if self.flavour == "lark" else "[^\\x00-\\x{10FFFF}]"
        everything = ANY.difference(SURROGATES) if self.flavour == "llguidance" else ANY
        if chars == everything or chars == ANY:
            return "(?s:.)"
        single = chars.ranges[0][0] if len(chars.ranges) == 1 and (
            chars.ranges[0][0] == chars.ranges[0][1]) else None
        if single is not None:
            return _escape_char(single)
        complement = everything.difference(chars)
        if len(complement.ranges) < len(chars.ranges):
            return "[^" + "".join(_class_range(lo, hi) for lo, hi in complement.ranges) + "]"
        return "[" + "".join(_class_range(lo, hi) for lo, hi in chars.ranges) + "]"


def _quantifier(low: int, high: int | None) -> str:
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    if high is None:
        return f"{{{low},}}"
    if low == high:
        return f"{{{low}}}"
    return f"{{{low},{high}}}"


_META = set("\\.^$|?*+()[]{}/#&~-\"")


def _escape_char(cp: int) -> str:
    c = chr(cp)
    if 0x20 < cp < 0x7F:
        return "\\" + c if c in _META else c
    if cp == 0x20:
        return " "
    return _code_escape(cp)


_CLASS_META = set("\\]^-[&~/")


def _class_char(cp: int) -> str:
    c = chr(cp)
    if 0x20 < cp < 0x7F:
        return "\\" + c if c in _CLASS_META else c
    if cp == 0x20:
        return " "
    return _code_escape(cp)


def _code_escape(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _class_range(lo: int, hi: int) -> str:
    if lo == hi:
        return _class_char(lo)
    if hi == lo + 1:
        return _class_char(lo) + _class_char(hi)
    return f"{_class_char(lo)}-{_class_char(hi)}"


def escape_literal(text: str) -> str:
    """``text`` as a regex that matches it (both flavours)."""
    return "".join(_escape_char(ord(c)) for c in text)


# ----------------------------------------------------------- languages and containment


class _Nfa:
    """A Thompson NFA over character sets, for containment questions only."""

    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[CharSet, int]]] = []

    def state(self) -> int:
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, node: ast.Node, start: int, end: int) -> None:
        if isinstance(node, ast.Empty):
            self.eps[start].append(end)
        elif isinstance(node, ast.Chars):
            self.edges[start].append((node.chars, end))
        elif isinstance(node, ast.Group):
            self.build(node.item, start, end)
        elif isinstance(node, ast.Concat):
            here = start
            for i, item in enumerate(node.items):
                nxt = end if i == len(node.items) - 1 else self.state()
                self.build(item, here, nxt)
                here = nxt
            if not node.items:
                self.eps[start].append(end)
        elif isinstance(node, ast.Alternation):
            for alt in node.alternatives:
                self.build(alt, start, end)
        elif isinstance(node, ast.Repeat):
            here = start
            for _ in range(node.min):
                nxt = self.state()
                self.build(node.item, here, nxt)
                here = nxt
            if node.max is None:
                loop = self.state()
                self.eps[here].append(loop)
                back = self.state()
                self.build(node.item, loop, back)
                self.eps[back].append(loop)
                self.eps[loop].append(end)
            else:
                for _ in range(node.max - node.min):
                    nxt = self.state()
                    self.build(node.item, here, nxt)
                    self.eps[here].append(end)
                    here = nxt
                self.eps[here].append(end)
        else:
            raise _Unsupported(node)

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        todo = list(seen)
        while todo:
            for nxt in self.eps[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return frozenset(seen)


class _Unsupported(Exception):
    pass


def every_string_starts_with(prefix_language: ast.Node, pattern: ast.Node) -> bool:
    """Whether every string of ``prefix_language`` begins with a match of ``pattern``.

    This proves a lookahead ``(?=pattern)`` holds wherever the text that follows is known
    to begin with a string of ``prefix_language``. Trees with assertions are not reasoned
    about (the answer is then ``False``, the safe one).
    """
    return _product(prefix_language, pattern, prefix=True)


def included(sub: ast.Node, sup: ast.Node) -> bool:
    """Whether every string ``sub`` matches, ``sup`` matches too (no assertions)."""
    return _product(sub, sup, prefix=False)


def absorbs(node: ast.Node, chars: CharSet) -> bool:
    r"""Whether a match of ``node`` followed by one of ``chars`` is again a match: then a
    greedy match takes any run of them that follows (``<x>\s*`` absorbs whitespace)."""
    return included(concat([node, ast.Chars(chars)]), node)


def _product(left: ast.Node, right: ast.Node, prefix: bool) -> bool:
    """Search the product of both languages' subset automata for a string of ``left`` that
    ``right`` rejects (as a whole, or, with ``prefix``, in every prefix)."""
    try:
        nfa = _Nfa()
        l_start, l_end = nfa.state(), nfa.state()
        nfa.build(left, l_start, l_end)
        r_start, r_end = nfa.state(), nfa.state()
        nfa.build(right, r_start, r_end)
    except _Unsupported:
        return False
    cuts = {0}
    for edges in nfa.edges:
        for cs, _ in edges:
            for lo, hi in cs.ranges:
                cuts.add(lo)
                if hi < MAX_CODE_POINT:
                    cuts.add(hi + 1)
    classes = sorted(cuts)

    def step(states: frozenset[int], cp: int) -> frozenset[int]:
        return nfa.closure(t for s in states for cs, t in nfa.edges[s] if cp in cs)

    start = (nfa.closure([l_start]), nfa.closure([r_start]))
    seen = {start}
    todo = [start]
    while todo:
        l_states, r_states = todo.pop()
        if prefix and r_end in r_states:
            continue  # the pattern has matched: every continuation is fine
        if l_end in l_states and r_end not in r_states:
            return False
        for cp in classes:
            l_next = step(l_states, cp)
            if not l_next:
                continue
            r_next = step(r_states, cp)
            if not r_next:
                return False
            pair = (l_next, r_next)
            if pair not in seen:
                seen.add(pair)
                todo.append(pair)
    return True


def avoid_pattern(literals: Sequence[str]) -> str:
    """A lookaround-free regex (JSON Schema ``pattern`` syntax, anchored) for the strings
    that hold none of ``literals``: ``%json`` has no and-not.

    Each literal is replaced by a factor of it (a string without the factor holds no
    literal), chosen so that every factor's first character occurs nowhere else in any
    factor. The strings avoiding such factors are recognised by an automaton whose only
    branching states are "just read the first character of factor k"; eliminating those
    few states gives the regex. Factors are kept as long as the rule allows, so as little
    text as possible is forbidden.
    """
    factors = _clean_factors([lit for lit in dict.fromkeys(literals) if lit])
    if not factors:
        return "^(?s:.*)$"
    heads = "".join(_class_char(ord(f[0])) for f in factors)
    # Edges of the small automaton: 0 is the start, k+1 is "just read factor k's head".
    n = len(factors) + 1
    edge: list[list[list[str]]] = [[[] for _ in range(n)] for _ in range(n)]
    edge[0][0].append(f"[^{heads}]")
    ends: list[list[str]] = [[] for _ in range(n)]
    ends[0].append("")
    for k, factor in enumerate(factors):
        edge[0][k + 1].append(escape_literal(factor[0]))
        ends[k + 1].append("")
        for j in range(1, len(factor)):
            read = escape_literal(factor[1:j])
            if j > 1:
                ends[k + 1].append(read)
            for m, other in enumerate(factors):
                edge[k + 1][m + 1].append(read + escape_literal(other[0]))
            edge[k + 1][0].append(read + f"[^{heads}{_class_char(ord(factor[j]))}]")
    labels = [[_alt(e) for e in row] for row in edge]
    finals = [_alt(e) for e in ends]
    # Eliminate states n-1 .. 1; what remains is the loop on 0 and the way out.
    for q in range(n - 1, 0, -1):
        loop = labels[q][q]
        star = f"(?:{loop})*" if loop is not None else ""
        for p in range(q):
            if labels[p][q] is None:
                continue
            through = labels[p][q] + star
            for r in range(q):
                if labels[q][r] is not None:
                    labels[p][r] = _alt([x for x in (labels[p][r], through + labels[q][r])
                                         if x is not None])
            if finals[q] is not None:
                finals[p] = _alt([x for x in (finals[p], through + f"(?:{finals[q]})")
                                  if x is not None])
    body = f"(?:{labels[0][0]})*" if labels[0][0] is not None else ""
    return f"^{body}(?:{finals[0]})$"


def _alt(options: Sequence[str]) -> str | None:
    options = list(dict.fromkeys(options))
    if not options:
        return None
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


def _clean_factors(literals: Sequence[str]) -> list[str]:
    """One factor per literal (shared when equal), every factor's first character found
    nowhere else in any factor; longest first, single characters as the last resort."""
    candidates = []
    for lit in literals:
        subs = {lit[i:j] for i in range(len(lit)) for j in range(i + 1, len(lit) + 1)
                if lit[i] not in lit[i + 1:j]}
        candidates.append(sorted(subs, key=lambda f: (-len(f), f)))

    def clean(chosen: list[str]) -> bool:
        unique = list(dict.fromkeys(chosen))
        for f in unique:
            for g in unique:
                if f[0] in (g[1:] if f == g else g):
                    return False
        return True

    best: list[str] | None = None
    best_score = -1
    budget = [20000]

    def search(i: int, chosen: list[str], score: int) -> None:
        nonlocal best, best_score
        budget[0] -= 1
        if budget[0] < 0:
            return
        if i == len(candidates):
            if score > best_score:
                best, best_score = list(chosen), score
            return
        for f in candidates[i]:
            if score + len(f) + sum(len(c[0]) for c in candidates[i + 1:]) <= best_score:
                break
            chosen.append(f)
            if clean(chosen):
                search(i + 1, chosen, score + len(f))
            chosen.pop()

    search(0, [], 0)
    if best is None:  # every literal's first character, forbidden outright
        return list(dict.fromkeys(lit[0] for lit in literals))
    return list(dict.fromkeys(best))
