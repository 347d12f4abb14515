"""A delimiter as the grammar writes it, and as the grammar keeps it out of text.

*Written*, a delimiter is one or more of its top-level alternatives, translated from its
syntax tree. What a grammar cannot say is decided here, never approximated in the other
direction (the exported language must stay inside what the parser reads):

- a lookahead ``(?=X)`` ending an alternative is kept only where the exporter can prove
  that what the grammar writes next begins with a match of X (then it is dropped as
  satisfied: llguidance has no lookarounds, and lark no empty terminals); elsewhere the
  alternative is not written;
- ``^`` holds only at the very start of the output (nothing written before, nothing left
  of the prompt after the start anchor); ``$``, ``\\b``, ``\\B`` and negative lookaheads
  are never written;
- a named group that holds the function name is replaced by the tool's name;
- in the llguidance form, text that is a special token of the target tokenizer becomes a
  token reference (``<|im_end|>``): a quoted ``"<|im_end|>"`` would never match the
  token a model writes.

*Avoided*, a delimiter keeps its whole tree (see :func:`.regex.for_avoiding`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..dialect import ast, parse_pattern
from ..dialect.charsets import ANY
from ..template.model import Delimiter
from . import regex as rx
from .grammar import Expr, Lit, Rx, Special, alt, seq


@dataclass(frozen=True)
class Written:
    """Where an alternative is being written: ``at_start`` (``^`` can hold), ``following``
    (a prefix language of what comes next, for lookahead proofs; ``None``: unknown),
    ``names`` (named group -> literal text to write there)."""

    at_start: bool = False
    following: ast.Node | None = None
    names: tuple[tuple[str, str], ...] = ()


class DelimiterTree:
    """A template delimiter, parsed once."""

    def __init__(self, delimiter: Delimiter) -> None:
        self.source = delimiter.regex_source
        self.root = parse_pattern(self.source).root
        self.alternatives = tuple(flat for alternative in rx.alternatives(self.root)
                                  for flat in _spread_assertions(alternative))

    def written(self, context: Written, only: list[int] | None = None) -> ast.Node | None:
        """The alternatives (all, or the indexes in ``only``) that can be written here,
        as one lookaround-free tree; ``None`` when none can."""
        options = []
        for i, alternative in enumerate(self.alternatives):
            if only is not None and i not in only:
                continue
            node = write_alternative(alternative, context)
            if node is not None:
                options.append(node)
        return rx.alternation(options)

    def reading(self, text: str) -> list[int]:
        """The alternatives whose match at the start of ``text`` takes all of it (and maybe
        more, e.g. trailing whitespace): the ones that read ``text`` as this delimiter."""
        import re

        out = []
        for i, alternative in enumerate(self.alternatives):
            try:
                compiled = re.compile(rx.RegexWriter("lark").write(alternative))
            except re.error:
                continue
            m = compiled.match(text)
            if m is not None and m.end() == len(text):
                out.append(i)
        return out


def _spread_assertions(node: ast.Node, depth: int = 0) -> list[ast.Node]:
    """``node`` as alternatives in which no choice holds an assertion: an anchor or a
    lookahead inside a group (Llama 3's ``(?:^\\s*|;\\s*)\\{``, DeepSeek V3.2's
    ``(?:>|(?=/>))``) is settled only at an alternative's start or end, so the choice is
    written out as alternatives of the delimiter; together they match what it matches."""
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    for at, item in enumerate(items):
        inner = item
        while isinstance(inner, ast.Group) and inner.name is None:
            inner = inner.item
        if depth < 4 and isinstance(inner, ast.Alternation) and rx.has_assertion(inner):
            out: list[ast.Node] = []
            for branch in inner.alternatives:
                out.extend(_spread_assertions(
                    rx.concat(items[:at] + [branch] + items[at + 1:]), depth + 1))
            return out
    return [node]


def write_alternative(node: ast.Node, context: Written) -> ast.Node | None:
    """``node`` (one alternative) with its assertions settled for ``context``, or ``None``."""
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    if items and isinstance(items[0], ast.Assertion) and items[0].kind == ast.START:
        if not context.at_start:
            return None
        items = items[1:]
    if items and isinstance(items[-1], ast.Lookahead) and not items[-1].negative:
        look = items[-1].item
        if rx.has_assertion(look) or context.following is None:
            return None
        if not rx.every_string_starts_with(context.following, look):
            return None
        items = items[:-1]
    body = _substitute(rx.concat(items), dict(context.names), context.following)
    if body is None or rx.has_assertion(body):
        return None
    return body


def _substitute(node: ast.Node, names: dict[str, str], following: ast.Node | None
                ) -> ast.Node | None:
    """``node`` with each group named in ``names`` replaced by its text.

    The parser's group is greedy: the text written after the name must not begin with a
    character the group could go on taking (``[^\\s<]+`` would read ``a`` then ``n…`` as
    ``an…``). So what follows the name in the delimiter is narrowed to begin with another
    character, or, where the delimiter may end right after the name, ``following`` (what
    the grammar writes next) must be proved to begin with one.
    """
    if not names or not _mentions(node, names):
        return node
    sequences = _distribute(node, names)
    if sequences is None:
        return None
    options = []
    for items in sequences:
        at = next(i for i, item in enumerate(items)
                  if isinstance(item, ast.Group) and item.name in names)
        group = items[at]
        assert isinstance(group, ast.Group) and group.name is not None
        value = names[group.name]
        if not _fullmatch(group.item, value):
            continue
        rest = _substitute(rx.concat(items[at + 1:]), names, following)
        if rest is None:
            continue
        stop = ANY.difference(rx.chars_in(group.item))
        rest = rx.restrict_first(rest, stop)
        if rest is not None and rx.nullable(rest) and not (
                following is not None
                and rx.every_string_starts_with(following, ast.Chars(stop))):
            rest = rx.non_empty(rest)
        if rest is None:
            continue
        options.append(rx.concat(list(items[:at]) + [rx.literal(value), rest]))
    return rx.alternation(options)


def _mentions(node: ast.Node, names: dict[str, str]) -> bool:
    if isinstance(node, ast.Group) and node.name in names:
        return True
    if isinstance(node, ast.Concat):
        return any(_mentions(i, names) for i in node.items)
    if isinstance(node, ast.Alternation):
        return any(_mentions(a, names) for a in node.alternatives)
    if isinstance(node, (ast.Group, ast.Repeat, ast.Lookahead)):
        return _mentions(node.item, names)
    return False


def _distribute(node: ast.Node, names: dict[str, str]) -> list[list[ast.Node]] | None:
    """``node`` as alternative flat sequences in which the named groups stand at the top."""
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    out: list[list[ast.Node]] = [[]]
    for item in items:
        if not _mentions(item, names) or (isinstance(item, ast.Group) and item.name in names):
            out = [seq + [item] for seq in out]
            continue
        if isinstance(item, ast.Group):
            inner = _distribute(item.item, names)
        elif isinstance(item, ast.Alternation):
            inner = []
            for alternative in item.alternatives:
                found = _distribute(alternative, names)
                if found is None:
                    return None
                inner.extend(found)
        elif isinstance(item, ast.Repeat) and item.min <= 1 and (item.max or 2) >= 1:
            once = _distribute(item.item, names)
            if once is None:
                return None
            inner = ([[]] if item.min == 0 else []) + once
        else:
            return None
        if inner is None:
            return None
        out = [seq + branch for seq in out for branch in inner]
    return out


def _fullmatch(node: ast.Node, text: str) -> bool:
    import re

    try:
        return re.fullmatch(rx.RegexWriter("lark").write(node), text) is not None
    except re.error:
        return False


# ------------------------------------------------------------ special tokens


def to_expr(node: ast.Node, special: Mapping[str, int | None]) -> Expr:
    """A written tree as a grammar expression, special tokens as references."""
    if not special:
        return Rx(node) if rx.literal_text(node) is None else Lit(rx.literal_text(node) or "")
    if not _mentions_special(node, special):
        text = rx.literal_text(node)
        return Lit(text) if text is not None else Rx(node)
    if isinstance(node, ast.Group):
        return to_expr(node.item, special)
    if isinstance(node, ast.Alternation):
        options = [to_expr(a, special) for a in node.alternatives]
        return alt(*options) or Lit("")
    if isinstance(node, ast.Repeat):
        from .grammar import Rep

        return Rep(to_expr(node.item, special), node.min, node.max)
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    out: list[Expr] = []
    run = ""
    for item in items:
        char = rx.literal_text(item) if isinstance(item, ast.Chars) else None
        if char:
            run += char
            continue
        out.extend(split_special(run, special))
        run = ""
        out.append(to_expr(item, special))
    out.extend(split_special(run, special))
    return seq(*out)


def split_special(text: str, special: Mapping[str, int | None]) -> list[Expr]:
    """``text`` as literal pieces and special-token references (longest token first)."""
    out: list[Expr] = []
    tokens = sorted((t for t in special if t), key=len, reverse=True)
    start = i = 0
    while i < len(text):
        token = next((t for t in tokens if text.startswith(t, i)), None)
        if token is None:
            i += 1
            continue
        if start < i:
            out.append(Lit(text[start:i]))
        out.append(Special(token, special[token]))
        i += len(token)
        start = i
    if start < len(text):
        out.append(Lit(text[start:]))
    return out


def _mentions_special(node: ast.Node, special: Mapping[str, int | None]) -> bool:
    text = _plain_text(node)
    return any(t in text for t in special if t)


def _plain_text(node: ast.Node) -> str:
    """The literal characters of ``node`` in order, with a break between alternatives."""
    if isinstance(node, ast.Chars):
        return rx.literal_text(node) or "\0"
    if isinstance(node, ast.Concat):
        return "".join(_plain_text(i) for i in node.items)
    if isinstance(node, ast.Alternation):
        return "\0".join(_plain_text(a) for a in node.alternatives)
    if isinstance(node, (ast.Group, ast.Repeat)):
        return "\0" + _plain_text(node.item) + "\0"
    return "\0"


def leading(expr: Expr, rules: Mapping[str, Expr] | None = None, depth: int = 0) -> ast.Node:
    """A prefix language of ``expr``: every string it writes begins with one of these
    (``Empty`` when nothing is known). Used to prove lookaheads. ``rules`` resolves rule
    references."""
    from .grammar import Alt, Ref, Rep, Seq

    items = list(expr.items) if isinstance(expr, Seq) else [expr]
    out: list[ast.Node] = []
    for i, item in enumerate(items):
        rest = items[i + 1:]
        if isinstance(item, Lit):
            out.append(rx.literal(item.text))
        elif isinstance(item, Special):
            out.append(rx.literal(item.text))
        elif isinstance(item, Rx):
            out.append(item.node)
        elif depth >= 6:
            break
        elif isinstance(item, Seq):
            out.append(leading(seq(*item.items, *rest), rules, depth + 1))
            break
        elif isinstance(item, Alt):
            options = [leading(seq(o, *rest), rules, depth + 1) for o in item.options]
            merged = rx.alternation(options)
            if merged is not None:
                out.append(merged)
            break
        elif isinstance(item, Rep) and item.min == 0 and item.max != 0:
            merged = rx.alternation([leading(seq(item.item, *rest), rules, depth + 1),
                                     leading(seq(*rest), rules, depth + 1)])
            if merged is not None:
                out.append(merged)
            break
        elif isinstance(item, Ref) and rules is not None and item.name in rules:
            out.append(leading(seq(rules[item.name], *rest), rules, depth + 1))
            break
        else:
            break
    return rx.concat(out)
