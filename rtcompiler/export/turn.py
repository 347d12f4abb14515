"""The turn: in which order a model family writes its regions.

The region machine reads regions in any order and any number of times; a grammar that
constrains generation should describe what the family actually writes, e.g. Qwen3's
"maybe reasoning, maybe content, then tool calls, then the end of turn". A turn is a
small regular expression over the template's fields and literal texts::

    reasoning_content? content? tool_calls*
    reasoning_content? (content | tool_calls) '<|END_OF_TURN_TOKEN|>'

- a field name is one region of that field (for the implicit field: its text, which
  may be empty); ``?``, ``*``, ``+`` and ``{m,n}`` repeat; ``|`` and parentheses choose;
- a quoted literal (``'…'`` or ``"…"``, backslash escapes) is text written outside every
  region: read as a delimiter there if one matches it, dropped or kept as content
  otherwise, exactly as the parser does.

The end of turn is not part of the expression (see :mod:`.build`). Without a ``turn`` in
a grammar's ``meta.json``, :func:`default_turn` derives one from the template.

A turn is then compiled to its Glushkov automaton: one state per occurrence of a field
or literal, so that the grammar can be written as one rule per state ("after the
reasoning, what may follow").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..template import Template

CALLS = "tool_calls"


class TurnError(ValueError):
    """A turn that cannot be read or used; the message says where and why."""


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Literal:
    text: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Choice:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    item: Node
    min: int
    max: int | None


Node = Field | Literal | Seq | Choice | Repeat
EPSILON = Seq(())


def show(node: Node) -> str:
    """The turn written back in its own syntax."""
    if isinstance(node, Field):
        return node.name
    if isinstance(node, Literal):
        return "'" + node.text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"
    if isinstance(node, Seq):
        return " ".join(_show_atom(i, in_seq=True) for i in node.items) if node.items else "()"
    if isinstance(node, Choice):
        return " | ".join(show(o) for o in node.options)
    if isinstance(node, Repeat):
        q = {(0, 1): "?", (0, None): "*", (1, None): "+"}.get((node.min, node.max))
        if q is None:
            q = f"{{{node.min},{'' if node.max is None else node.max}}}"
        return _show_atom(node.item) + q
    raise TypeError(node)


def _show_atom(node: Node, in_seq: bool = False) -> str:
    text = show(node)
    if isinstance(node, Choice) or (isinstance(node, Seq) and not in_seq and len(node.items) > 1):
        return f"({text})"
    if isinstance(node, Seq) and in_seq and len(node.items) > 1:
        return f"({text})"
    return text


# ------------------------------------------------------------------------ reading


def parse_turn(text: str) -> Node:
    """Read a turn; a :class:`TurnError` names the column of a mistake."""
    reader = _Reader(text)
    node = reader.choice()
    reader.space()
    if reader.pos != len(text):
        raise reader.error("unexpected character")
    return node


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, what: str) -> TurnError:
        return TurnError(f"turn {self.text!r}, column {self.pos + 1}: {what}")

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def choice(self) -> Node:
        options = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Choice(tuple(options))

    def sequence(self) -> Node:
        items = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.postfix())
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def postfix(self) -> Node:
        node = self.atom()
        while True:
            c = self.peek()
            if c in "?*+" and c:
                self.pos += 1
                node = Repeat(node, *{"?": (0, 1), "*": (0, None), "+": (1, None)}[c])
            elif c == "{":
                end = self.text.find("}", self.pos)
                if end < 0:
                    raise self.error("'{' without '}'")
                body = self.text[self.pos + 1:end]
                low, _, high = body.partition(",")
                try:
                    lo = int(low)
                    hi = lo if "," not in body else (int(high) if high.strip() else None)
                except ValueError:
                    raise self.error(f"bad repeat {{{body}}}") from None
                if hi is not None and hi < lo:
                    raise self.error(f"bad repeat {{{body}}}")
                self.pos = end + 1
                node = Repeat(node, lo, hi)
            else:
                return node

    def atom(self) -> Node:
        c = self.peek()
        if c == "(":
            self.pos += 1
            node = self.choice() if self.peek() != ")" else EPSILON
            if self.peek() != ")":
                raise self.error("'(' without ')'")
            self.pos += 1
            return node
        if c in ("'", '"'):
            return Literal(self.quoted(c))
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum()
                                             or self.text[self.pos] in "_-."):
            self.pos += 1
        if start == self.pos:
            raise self.error("expected a field name, a quoted literal or '('")
        return Field(self.text[start:self.pos])

    def quoted(self, quote: str) -> str:
        self.pos += 1
        out = []
        escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == quote:
                self.pos += 1
                if not out:
                    raise self.error("empty literal")
                return "".join(out)
            if c == "\\":
                nxt = self.text[self.pos + 1:self.pos + 2]
                if nxt not in escapes:
                    raise self.error(f"unknown escape \\{nxt}")
                out.append(escapes[nxt])
                self.pos += 2
                continue
            out.append(c)
            self.pos += 1
        raise self.error("unterminated literal")


# ---------------------------------------------------------------------- deriving


def default_turn(template: Template) -> Node:
    """Explicit fields other than the calls (reasoning first), the implicit field's text,
    then the calls: what most families write."""
    items: list[Node] = []
    for f in template.fields:
        if f.open is not None and f.name != CALLS:
            items.append(Repeat(Field(f.name), 0, 1))
    if template.implicit is not None:
        items.append(Field(template.implicit))
    calls = next((f for f in template.fields if f.name == CALLS and f.open is not None), None)
    if calls is not None:
        items.append(Repeat(Field(CALLS), 0, None if calls.repeats else 1))
    return Seq(tuple(items)) if len(items) != 1 else items[0]


def check_fields(turn: Node, template: Template) -> None:
    names = {f.name for f in template.fields}
    for field in fields(turn):
        if field not in names:
            raise TurnError(f"turn {show(turn)!r}: no field {field!r} in the template")


def fields(node: Node) -> list[str]:
    if isinstance(node, Field):
        return [node.name]
    if isinstance(node, Literal):
        return []
    if isinstance(node, (Seq, Choice)):
        out: list[str] = []
        for child in node.items if isinstance(node, Seq) else node.options:
            out.extend(f for f in fields(child) if f not in out)
        return out
    return fields(node.item)


def with_calls(node: Node) -> Node | None:
    """The turns of ``node`` that write at least one call region (``None``: none do)."""
    if isinstance(node, Field):
        return node if node.name == CALLS else None
    if isinstance(node, Literal):
        return None
    if isinstance(node, Choice):
        return _choice(with_calls(o) for o in node.options)
    if isinstance(node, Seq):
        if not node.items:
            return None
        head, rest = node.items[0], _seq(node.items[1:])
        options = []
        head_with = with_calls(head)
        if head_with is not None:
            options.append(_seq((head_with, rest)))
        head_without = without_calls(head)
        rest_with = with_calls(rest)
        if head_without is not None and rest_with is not None:
            options.append(_seq((head_without, rest_with)))
        return _choice(options)
    if isinstance(node, Repeat):
        item_with = with_calls(node.item)
        if item_with is None:
            return None
        if node.item == Field(CALLS):
            return Repeat(node.item, max(node.min, 1), node.max)
        item_without = without_calls(node.item)
        if node.max is not None and node.max > 1:
            raise TurnError(f"turn: cannot require a call inside {show(node)!r}")
        before = Repeat(item_without, 0, None) if item_without is not None and node.max is None \
            else EPSILON
        after = Repeat(node.item, 0, None) if node.max is None else EPSILON
        return _seq((before, item_with, after))
    raise TypeError(node)


def without_calls(node: Node) -> Node | None:
    """The turns of ``node`` that write no call region (``None``: every turn does)."""
    if isinstance(node, Field):
        return None if node.name == CALLS else node
    if isinstance(node, Literal):
        return node
    if isinstance(node, Choice):
        return _choice(without_calls(o) for o in node.options)
    if isinstance(node, Seq):
        parts = [without_calls(i) for i in node.items]
        return None if any(p is None for p in parts) else _seq(parts)  # type: ignore[arg-type]
    if isinstance(node, Repeat):
        item = without_calls(node.item)
        if item is None:
            return EPSILON if node.min == 0 else None
        return Repeat(item, node.min, node.max)
    raise TypeError(node)


def cap_calls(node: Node, limit: int) -> Node:
    """At most ``limit`` call regions in each repeat of them."""
    if isinstance(node, (Field, Literal)):
        return node
    if isinstance(node, Seq):
        return Seq(tuple(cap_calls(i, limit) for i in node.items))
    if isinstance(node, Choice):
        return Choice(tuple(cap_calls(o, limit) for o in node.options))
    if node.item == Field(CALLS) or (isinstance(node.item, Seq) and node.item.items.count(
            Field(CALLS)) == 1 and all(isinstance(i, Literal) or i == Field(CALLS)
                                       for i in node.item.items)):
        # A call, or a call with the literals the family writes around it (Qwen3-Coder's
        # ('<tool_call>' tool_calls)*).
        high = limit if node.max is None else min(node.max, limit)
        return Repeat(node.item, min(node.min, high), high)
    return Repeat(cap_calls(node.item, limit), node.min, node.max)


def _seq(items) -> Node:
    flat: list[Node] = []
    for item in items:
        if isinstance(item, Seq):
            flat.extend(item.items)
        else:
            flat.append(item)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def _choice(options) -> Node | None:
    kept: list[Node] = []
    for o in options:
        if o is not None and o not in kept:
            kept.append(o)
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else Choice(tuple(kept))


# -------------------------------------------------------------------- automaton


@dataclass(frozen=True)
class Position:
    """One occurrence of a field or a literal in the turn."""

    index: int
    item: Field | Literal
    name: str  # unique, readable: the rule that says what may follow it


@dataclass
class TurnAutomaton:
    positions: list[Position]
    first: list[int]  # positions that may come first
    follow: dict[int, list[int]]  # what may follow each position
    last: set[int]  # positions that may end the turn
    empty: bool  # the turn may write nothing


def automaton(turn: Node) -> TurnAutomaton:
    """The Glushkov automaton of ``turn`` (bounded repeats unrolled)."""
    positions: list[Position] = []
    counts: dict[str, int] = {}

    def position(item: Field | Literal) -> int:
        base = item.name if isinstance(item, Field) else "literal"
        counts[base] = counts.get(base, 0) + 1
        name = f"after_{base}" + (f"_{counts[base]}" if counts[base] > 1 else "")
        positions.append(Position(len(positions), item, name))
        return len(positions) - 1

    follow: dict[int, list[int]] = {}

    def link(a: int, b: int) -> None:
        follow.setdefault(a, [])
        if b not in follow[a]:
            follow[a].append(b)

    def walk(node: Node) -> tuple[list[int], list[int], bool]:
        """(first, last, nullable) of ``node``, linking its follows."""
        if isinstance(node, (Field, Literal)):
            p = position(node)
            return [p], [p], False
        if isinstance(node, Choice):
            first: list[int] = []
            last: list[int] = []
            empty = False
            for option in node.options:
                f, la, e = walk(option)
                first += f
                last += la
                empty = empty or e
            return first, last, empty
        if isinstance(node, Seq):
            first, last, empty = [], [], True
            for item in node.items:
                f, la, e = walk(item)
                for a in last:
                    for b in f:
                        link(a, b)
                if empty:
                    first = first + f
                last = (last + la) if e else la
                empty = empty and e
            return first, last, empty
        if isinstance(node, Repeat):
            if (node.min, node.max) in ((0, 1), (0, None)):
                f, la, _ = walk(node.item)
                if node.max is None:  # a star: the copy follows itself
                    for a in la:
                        for b in f:
                            link(a, b)
                return f, la, True
            if node.max is None:
                return walk(Seq((node.item,) * node.min + (Repeat(node.item, 0, None),)))
            tail: Node = EPSILON
            for _ in range(node.max - node.min):
                tail = Repeat(_seq((node.item, tail)), 0, 1)
            return walk(Seq((node.item,) * node.min + (tail,)))
        raise TypeError(node)

    first, last, empty = walk(turn)
    return TurnAutomaton(positions, first, follow, set(last), empty)
