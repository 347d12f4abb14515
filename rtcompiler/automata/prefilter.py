"""Where a delimiter can begin: a literal every match must contain, and how far before it.

A streaming search spends almost all its time in stretches of text where no attempt
at a match is alive. If every path to a match goes through one of a few literal
strings, and what comes before that literal is short or made of a known set of
characters, then a C-speed ``str.find``/``re`` search for the literal tells where
the next attempt can begin, and the DFA needs to step only from a little before it.

The facts come from the syntax tree, so they hold for every text:

- ``literals``: every match, and every attempt that lives longer than the lead
  plus the literal, contains one of them;
- ``lead``: at most this many characters come before the literal in a match, or
- ``lead_ranges``: the characters before the literal are all in these ranges
  (the lead is ``\\s*``-like and unbounded);
- ``exact``: the pattern matches its literals and nothing else.

A positive lookahead of plain strings counts as its strings: a match begins
where one of them does, after the lead, though it may not consume it; so does a
lookahead of patterns that each begin with a literal, after a bounded lead.
Patterns this cannot describe (other lookaheads before the literal, no mandatory
literal, nested loops in front of it) get no prefilter and are stepped
character by character, as before.
"""

from __future__ import annotations

from ..dialect import ast
from ..dialect.charsets import CharSet
from ..runtime.prefilter import BEGINNINGS_DEPTH

# Literals are cut to this length (see prefilter_data): the depth to which a module
# writes their beginnings as a tree of shared prefixes.
MAX_LITERAL_LENGTH = BEGINNINGS_DEPTH


def prefilter_data(root: ast.Node) -> dict | None:
    """The prefilter of a pattern as JSON-able data, or None."""
    branches = _branches(root)
    if not branches:
        return None
    literals: dict[str, None] = {}  # ordered, each once
    lead = 0
    lead_set = CharSet(())
    for literal, bounded, chars in branches:
        literals[literal] = None
        if bounded is not None:
            lead = max(lead, bounded)
        else:
            lead_set = lead_set.union(chars)
    # A match holds the beginning of any literal it holds, so the facts stay true for
    # literals cut short; cut, the patterns a module compiles from their beginnings
    # stay a tree of at most that depth, where the flat list a long literal needed was
    # quadratic in its length (a 2,000-character one took sre a minute to compile).
    cut = {literal[:MAX_LITERAL_LENGTH]: None for literal in literals}
    return {
        "literals": sorted(cut),
        "lead": lead,
        "lead_ranges": [list(r) for r in lead_set.ranges],
        "lead_is_loop": _lead_is_loop(root, lead_set),
        "bare": lead == 0 and not lead_set and _is_bare(root),
        "exact": all(len(s) <= MAX_LITERAL_LENGTH for s in literals)
        and _is_exact(root, list(literals)),
        "ahead": all(len(s) <= MAX_LITERAL_LENGTH for s in literals)
        and _is_ahead(root, list(literals)),
    }


def _is_ahead(root: ast.Node, literals: list[str]) -> bool:
    """Whether the pattern is a lookahead of its literals and nothing else
    (``(?=<|start|>assistant)``): it matches, empty, exactly where one begins.
    A start anchor written so keeps its text for the parser; where its matches are
    is then told by ``str.rfind`` (see ``truncate_at_last_anchor``).
    """
    while isinstance(root, ast.Group):
        root = root.item
    ahead = _lookahead_literals(root)
    return ahead is not None and set(ahead) == set(literals)


def _is_exact(root: ast.Node, literals: list[str]) -> bool:
    """Whether the pattern matches its literals and nothing else (``a|bc``).

    Then where its matches are can be told by ``str.find``/``rfind`` of the
    literals, when they cannot overlap (see ``truncate_at_last_anchor``).
    """
    strings = _strings(root)
    return strings is not None and "" not in strings and set(strings) == set(literals)


def _is_bare(node: ast.Node) -> bool:
    """Whether every match begins with its literal: no lead, not even an assertion.

    Then, in text holding no whole literal, the attempts alive at the end are
    those begun where the rest of the text is a literal's beginning.
    """
    if isinstance(node, ast.Group):
        return _is_bare(node.item)
    if isinstance(node, ast.Alternation):
        return all(_is_bare(alt) for alt in node.alternatives)
    if isinstance(node, ast.Lookahead):
        # (Qwen3's call closed where <|im_end|> stands: the attempt reads the literal,
        # though its match holds none of it.)
        return not node.negative and _is_bare(node.item)
    if isinstance(node, ast.Concat):
        if not node.items:
            return False
        first = node.items[0]
        if isinstance(first, ast.Repeat) and first.min == 0 and first.max == 1:
            # An optional part first: bare when it is, and so is what follows it.
            return _is_bare(first.item) and _is_bare(ast.Concat(node.items[1:]))
        return _is_bare(first)
    return _single(node) is not None


def _lead_is_loop(root: ast.Node, lead_set: CharSet) -> bool:
    r"""Whether the pattern is ``C*`` then a literal at once (in every branch), or an
    alternation of such patterns with one ``C`` (Llama 3's call close
    ``\s*\}\s*(?:…)|\s*\}(?=…)``).

    Then, in text holding no literal nor a literal's beginning at its end, the
    attempts alive at the end are exactly those begun in the trailing run of
    ``C`` characters: the search's partial match starts where that run does.
    """
    while isinstance(root, ast.Group):
        root = root.item
    if isinstance(root, ast.Alternation):
        return all(_lead_is_loop(alt, lead_set) for alt in root.alternatives)
    if not lead_set or not isinstance(root, ast.Concat) or len(root.items) < 2:
        return False
    first = root.items[0]
    if not (
        isinstance(first, ast.Repeat) and isinstance(first.item, ast.Chars)
        and first.min == 0 and first.max is None and first.item.chars == lead_set
    ):
        return False
    rest = _branches(ast.Concat(root.items[1:]))
    return bool(rest) and all(bounded == 0 for _, bounded, _ in rest)


def _branches(node: ast.Node):
    """``[(literal, bounded lead or None, lead characters)]`` covering every match, or None."""
    if isinstance(node, ast.Group):
        return _branches(node.item)
    if isinstance(node, ast.Alternation):
        found = []
        for alt in node.alternatives:
            sub = _branches(alt)
            if not sub:
                return None
            found.extend(sub)
        return found
    return _in_sequence(_flat(node))


def _flat(node: ast.Node) -> tuple:
    r"""The items of ``node`` in sequence, a sequence inside one read as its items
    (``(?:;\s*)\{``, which the parser keeps as a sequence in a sequence)."""
    if not isinstance(node, ast.Concat):
        return (node,)
    return tuple(part for item in node.items for part in _flat(item))


def _in_sequence(items) -> list | None:
    bounded: int | None = 0  # the most characters the items so far can consume
    chars = CharSet(())  # every character they can consume, when each is a class loop
    class_only = True
    for k, item in enumerate(items):
        if isinstance(item, ast.Assertion):
            # ^, \A, \b, \B: they consume nothing, so a match still holds the literal
            # after the same lead (Llama 3's "^\s*\{" beside "<|python_tag|>\s*\{").
            # Where they hold is for the automaton to decide; the facts only say where
            # to look.
            continue
        ahead = _lookahead_literals(item)
        if (
            ahead is None and bounded is not None
            and isinstance(item, ast.Lookahead) and not item.negative
        ):
            # A positive lookahead of patterns that each begin with a literal
            # (``(?=<tool_call>\s*<function=)``): the attempt lives past it only where
            # one of those literals stands, a bounded number of characters on (it
            # consumes nothing, so the match may end before the literal). Not after
            # an unbounded lead: Llama 4's ``^\s*(?=\[\w)`` is read past the start by
            # its late form, without it (see Delimiter.later).
            sub = _after(bounded, None, _branches(item.item))
            if sub:
                return sub
        if ahead is not None:
            # A positive lookahead of plain strings: the attempt lives past it only
            # where one of them begins, right after the lead so far; the match may
            # end before the string does (``(?=<|im_end|>)`` consumes nothing).
            if bounded is not None:
                return [(literal, bounded, CharSet(())) for literal in ahead]
            if class_only:
                return [(literal, None, chars) for literal in ahead]
            return None
        single = _single(item)
        if single is not None:
            literals = _literals_from(single, items[k + 1 :])
            if bounded is not None:
                return [(literal, bounded, CharSet(())) for literal in literals]
            if class_only:
                return [(literal, None, chars) for literal in literals]
            return None
        if isinstance(item, (ast.Group, ast.Alternation)):
            # Each alternative brings its own literal, after what came before.
            sub = _after(bounded, chars if class_only else None, _branches(item))
            if sub:
                return sub
        # Or each choice the item offers, with what follows it: Llama 3's
        # "(?:^\s*|<|python_tag|>\s*|;\s*)\{" ("^\s*" holds no literal, but "\{" comes
        # after every alternative), Kimi K2's optional "(?:<|tool_calls_section_begin|>\s*)?"
        # before "<|tool_call_begin|>" (a match holds it and what follows, or what follows).
        choices = _choices(item)
        rest = tuple(items[k + 1 :])
        if choices and rest:
            sub = _after(bounded, chars if class_only else None, _each_then(choices, rest))
            if sub:
                return sub
        width = _max_width(item)
        if width is None or bounded is None:
            bounded = None
        else:
            bounded += width
        item_chars = _class_loop(item)
        if item_chars is None:
            class_only = False
        else:
            chars = chars.union(item_chars)
        if bounded is None and not class_only:
            return None
    return None


def _choices(node: ast.Node):
    """The alternatives of an alternation, or (it, nothing) for an optional part; else None."""
    while isinstance(node, ast.Group):
        node = node.item
    if isinstance(node, ast.Alternation):
        return node.alternatives
    if isinstance(node, ast.Repeat) and node.min == 0 and node.max == 1:
        return (node.item, ast.Empty())
    return None


def _each_then(choices, rest) -> list | None:
    """The branches of each choice followed by ``rest``, together, or None."""
    found = []
    for choice in choices:
        while isinstance(choice, ast.Group):
            choice = choice.item
        if isinstance(choice, ast.Concat):
            head = choice.items
        else:
            head = () if isinstance(choice, ast.Empty) else (choice,)
        more = _branches(ast.Concat((*head, *rest)))
        if not more:
            return None
        found.extend(more)
    return found


# A literal runs on through a group of plain strings (``(?:commentary|analysis)``) as
# long as the strings it can end with stay this few: longer literals leave fewer
# places to the DFA (``<|channel|>`` alone also begins every other gpt-oss channel
# header), but every literal is one more ``str.find`` per search.
MAX_LITERALS = 8


def _literals_from(first: str, rest) -> list[str]:
    """The strings a match spells from ``first`` through the plain items after it."""
    literals = [first]
    for item in rest:
        more = _single(item)
        if more is not None:
            literals = [s + more for s in literals]
            continue
        options = _strings(item)
        if options is None or len(literals) * len(options) > MAX_LITERALS:
            break
        literals = list(dict.fromkeys(s + o for s in literals for o in options))
    return literals


def _strings(node: ast.Node) -> list[str] | None:
    """Every string ``node`` can match, if it is a finite set of plain strings (at most
    MAX_LITERALS of them once a sequence multiplies its parts' choices)."""
    if isinstance(node, ast.Group):
        return _strings(node.item)
    if isinstance(node, ast.Alternation):
        out: list[str] = []
        for alt in node.alternatives:
            sub = _strings(alt)
            if sub is None:
                return None
            out.extend(sub)
        return out
    if isinstance(node, ast.Empty):
        return [""]
    if isinstance(node, ast.Repeat) and node.max == 1 and node.min <= 1:
        # An optional string (the "s" of "<|tool_calls?_section_end|>").
        sub = _strings(node.item)
        if sub is None:
            return None
        return ([""] if node.min == 0 else []) + sub
    if not isinstance(node, ast.Concat):
        single = _single(node)
        return None if single is None else [single]
    out = [""]
    for item in node.items:
        single = _single(item)
        if single is not None:
            out = [text + single for text in out]
            continue
        if not isinstance(item, (ast.Group, ast.Alternation, ast.Repeat, ast.Concat)):
            return None
        options = _strings(item)
        if options is None or len(out) * len(options) > MAX_LITERALS:
            return None
        out = [text + option for text in out for option in options]
    return out


def _lookahead_literals(node: ast.Node) -> list[str] | None:
    """The strings a positive lookahead of plain strings looks for (none empty), or None."""
    if not isinstance(node, ast.Lookahead) or node.negative:
        return None
    strings = _strings(node.item)
    if not strings or "" in strings:
        return None
    return list(dict.fromkeys(strings))


def _after(bounded, chars, branches) -> list | None:
    """``branches`` behind a lead of ``bounded`` characters, or of ``chars`` only."""
    if not branches:
        return None
    out = []
    for literal, sub_bounded, sub_chars in branches:
        if bounded is not None and sub_bounded is not None:
            out.append((literal, bounded + sub_bounded, CharSet(())))
        elif chars is not None and sub_bounded in (None, 0):
            out.append((literal, None, chars.union(sub_chars)))
        elif bounded == 0:
            out.append((literal, sub_bounded, sub_chars))
        else:
            return None
    return out


def _single(node: ast.Node) -> str | None:
    """The character ``node`` consumes, if it is exactly one code point."""
    if isinstance(node, ast.Chars) and len(node.chars.ranges) == 1:
        lo, hi = node.chars.ranges[0]
        if lo == hi:
            return chr(lo)
    return None


def _class_loop(node: ast.Node) -> CharSet | None:
    """The characters of ``node`` if it only ever consumes characters from one class."""
    if isinstance(node, ast.Assertion):
        return CharSet(())
    if isinstance(node, ast.Chars):
        return node.chars
    if isinstance(node, ast.Repeat) and isinstance(node.item, ast.Chars):
        return node.item.chars
    return None


def _max_width(node: ast.Node) -> int | None:
    """The most characters ``node`` can consume (None: unbounded, or a lookahead)."""
    if isinstance(node, (ast.Empty, ast.Assertion)):
        return 0
    if isinstance(node, ast.Chars):
        return 1
    if isinstance(node, ast.Group):
        return _max_width(node.item)
    if isinstance(node, ast.Concat):
        total = 0
        for item in node.items:
            width = _max_width(item)
            if width is None:
                return None
            total += width
        return total
    if isinstance(node, ast.Alternation):
        widths = [_max_width(alt) for alt in node.alternatives]
        known = [w for w in widths if w is not None]
        return None if len(known) < len(widths) else max(known)
    if isinstance(node, ast.Repeat):
        if node.max is None:
            return None
        width = _max_width(node.item)
        return None if width is None else width * node.max
    return None  # a lookahead may read past where the match ends
