"""Hypothesis strategies for the differential tests of ``rtcompiler.automata``.

Patterns are drawn as a small syntax tree and rendered to source, so that the
generator only ever writes the supported dialect (see ``rtcompiler.dialect``) and
can steer clear of what the engine deliberately refuses (a loop over a subpattern
that can match the empty string, named groups inside lookaheads).

Texts are assembled from the pattern's own literals: whole, cut short (partial
matching is all about a delimiter truncated at the end of the text), or slightly
wrong, between runs of whitespace, word characters and non-ASCII noise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

import hypothesis.strategies as st

MAX_DEPTH = 3
MAX_COUNT = 3  # bound of a counted repeat {m,n}

# -- literal material ------------------------------------------------------------

DELIMITERS = (
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<|im_start|>",
    "<|im_end|>",
    "[TOOL_CALLS]",
    "<|channel|>",
    "<|message|>",
    "to=functions.",
    "<function=",
    "</function>",
    "<|python_tag|>",
    "[/INST]",
)
SHORT_ASCII = ("a", "b", "ab", "abc", "x", "foo", "_", "1", "42", " ", "\n", "\t", "-", "=", "#")
UNICODE = (
    "é", "ß", "ẞ", "K", "\u212a", "k", "ſ", "s", "S", "Σ", "σ", "ς", "Ω", "ω", "αβγ",
    "İ", "ı", "µ", "日本", "語", "🙂", "\u00a0", "\u2003", "e\u0301", "ﬃ",
)
# Characters that matter to case folding, word boundaries or \s: the alphabet of
# drawn literals and of class members.
LETTERS = "abkszAKSZ_019éßſΣσςΩ\u212a日🙂 \t\n\u00a0\u2003\u0301<>|=./-"
WHITESPACE = (" ", "  ", "\n", "\t", "\u00a0", "\u2003", "\r\n", " \n ", "\n\n")
NOISE = (
    "é", "ß", "Ω", "ſ", "\u212a", "K", "k", "s", "S", "\u0301", "e\u0301", "🙂", "日本",
    "σ", "ς", "Σ", "İ", "ı", "ẞ", "µ", "_", "0", "9", "x", "foo", "bar_1",
)
SHORTHAND_SAMPLES = {
    "d": "05٣",  # includes ARABIC-INDIC DIGIT THREE
    "w": "aZ_é\u0301日",
    "s": " \t\n\u00a0\u2003",
    "D": "a-🙂",
    "W": " -<|🙂",
    "S": "a<ß",
}

META = set(".^$*+?{}[]()|\\")
CLASS_META = set("]\\[^-")
VERBOSE_META = set(" #")  # (?x) ignores unescaped spaces and starts comments at '#'
HARMLESS_ESCAPES = set("<>=/-!:,")  # escaping these is legal and means the character

# -- the syntax tree -------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    """One or more literal characters; ``escapes`` picks a spelling per character."""

    text: str
    escapes: tuple[int, ...]  # per character: 0 raw/minimal, 1 \xhh or \uhhhh, 2 \-escaped


@dataclass(frozen=True)
class Token:
    """A ready-made single token: ``.``, ``\\d`` and the like, or an anchor."""

    source: str
    width: int  # 1: consumes a character; 0: an anchor


@dataclass(frozen=True)
class ClassItem:
    kind: str  # "char", "range" or "shorthand"
    lo: str
    hi: str = ""


@dataclass(frozen=True)
class CharClass:
    items: tuple[ClassItem, ...]
    negated: bool


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    alternatives: tuple[Node, ...]


@dataclass(frozen=True)
class Group:
    kind: str  # "capture", "noncapture", "named", "ahead", "not_ahead", "icase"
    body: Node
    name_hint: int = 0  # named groups: index into NAMES (collisions reuse a name, as regex allows)


@dataclass(frozen=True)
class Repeat:
    item: Node
    lo: int
    hi: int | None
    lazy: bool
    spelling: str  # "symbol" (* + ?) or "brace"


Node = Union[Lit, Token, CharClass, Seq, Alt, Group, Repeat]  # noqa: UP007 (a runtime alias)

NAMES = ("name", "args", "body", "tool", "n1", "x")
GROUP_KINDS = ("capture", "noncapture", "named", "named", "ahead", "not_ahead", "icase")


def min_width(node: Node) -> int:
    """The fewest characters ``node`` consumes; 0 means a loop over it is refused."""
    if isinstance(node, Lit):
        return len(node.text)
    if isinstance(node, Token):
        return node.width
    if isinstance(node, CharClass):
        return 1
    if isinstance(node, Seq):
        return sum(min_width(item) for item in node.items)
    if isinstance(node, Alt):
        return min(min_width(alt) for alt in node.alternatives)
    if isinstance(node, Group):
        return 0 if node.kind in ("ahead", "not_ahead") else min_width(node.body)
    return node.lo * min_width(node.item)


# -- rendering -------------------------------------------------------------------


@dataclass
class _Renderer:
    verbose: bool
    in_lookahead: int = 0

    def render(self, node: Node) -> str:
        if isinstance(node, Lit):
            spelled = zip(node.text, node.escapes, strict=True)
            return "".join(self.char(c, how) for c, how in spelled)
        if isinstance(node, Token):
            return node.source
        if isinstance(node, CharClass):
            return self.char_class(node)
        if isinstance(node, Seq):
            parts = [self.render_in_seq(item) for item in node.items]
            # In verbose mode spaces between tokens are layout; they must change nothing.
            return (" " if self.verbose else "").join(parts)
        if isinstance(node, Alt):
            return (" | " if self.verbose else "|").join(self.render(a) for a in node.alternatives)
        if isinstance(node, Group):
            return self.group(node)
        return self.repeat(node)

    def render_in_seq(self, node: Node) -> str:
        if isinstance(node, Alt):
            return f"(?:{self.render(node)})"
        return self.render(node)

    def char(self, c: str, how: int) -> str:
        code = ord(c)
        if how == 1 and code < 0x100:
            return f"\\x{code:02x}"
        if how == 1 and code < 0x10000:
            return f"\\u{code:04x}"
        if c == "\n":
            return "\\n"
        if c == "\t":
            return "\\t"
        if c in META or (self.verbose and c in VERBOSE_META):
            return "\\" + c
        if how == 2 and c in HARMLESS_ESCAPES:
            return "\\" + c
        if c.isspace() and c != " ":  # \r, \u00a0, \u2003: spell them out, never raw
            return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        return c

    def class_char(self, c: str) -> str:
        if c in CLASS_META or (self.verbose and c in VERBOSE_META):
            return "\\" + c
        if c == "\n":
            return "\\n"
        if c == "\t":
            return "\\t"
        if c.isspace() and c != " ":
            return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
        return c

    def char_class(self, node: CharClass) -> str:
        parts = []
        for item in node.items:
            if item.kind == "shorthand":
                parts.append("\\" + item.lo)
            elif item.kind == "range":
                parts.append(f"{self.class_char(item.lo)}-{self.class_char(item.hi)}")
            else:
                parts.append(self.class_char(item.lo))
        return "[" + ("^" if node.negated else "") + "".join(parts) + "]"

    def group(self, node: Group) -> str:
        if node.kind in ("ahead", "not_ahead"):
            self.in_lookahead += 1
            body = self.render(node.body)
            self.in_lookahead -= 1
            return f"(?{'=' if node.kind == 'ahead' else '!'}{body})"
        body = self.render(node.body)
        if node.kind == "named" and not self.in_lookahead:
            return f"(?P<{NAMES[node.name_hint % len(NAMES)]}>{body})"
        if node.kind in ("capture", "named"):  # named inside a lookahead: plain capture
            return f"({body})"
        if node.kind == "icase":
            return f"(?i:{body})"
        return f"(?:{body})"

    def repeat(self, node: Repeat) -> str:
        item = node.item
        atomic = (
            (isinstance(item, Lit) and len(item.text) == 1)
            or (isinstance(item, Token) and item.width == 1)
            or isinstance(item, CharClass)
            or (isinstance(item, Group) and item.kind not in ("ahead", "not_ahead"))
        )
        body = self.render(item)
        if not atomic:
            body = f"(?:{body})"
        return body + quantifier(node.lo, node.hi, node.spelling) + ("?" if node.lazy else "")


def quantifier(lo: int, hi: int | None, spelling: str) -> str:
    if spelling == "symbol":
        symbol = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((lo, hi))
        if symbol:
            return symbol
    if hi is None:
        return f"{{{lo},}}"
    if lo == hi:
        return f"{{{lo}}}"
    if lo == 0 and spelling == "symbol":  # reuse the flag for the {,n} spelling
        return f"{{,{hi}}}"
    return f"{{{lo},{hi}}}"


def render(root: Node, flags: str = "") -> str:
    """Pattern source for ``root`` after the global inline ``flags`` (e.g. "(?i)(?x)")."""
    return flags + _Renderer(verbose="x" in flags).render(root)


# -- drawing trees ---------------------------------------------------------------


@st.composite
def lits(draw: st.DrawFn, pool: st.SearchStrategy[str] | None = None) -> Lit:
    text = draw(
        pool
        if pool is not None
        else st.one_of(
            st.sampled_from(DELIMITERS),
            st.sampled_from(SHORT_ASCII),
            st.sampled_from(UNICODE),
            st.text(alphabet=LETTERS, min_size=1, max_size=3),
        )
    )
    escapes = draw(
        st.lists(st.sampled_from((0, 0, 0, 1, 2)), min_size=len(text), max_size=len(text))
    )
    return Lit(text, tuple(escapes))


SHORTHANDS = "dwsDWS"
COMPLEMENT = {"d": "D", "w": "W", "s": "S", "D": "d", "W": "w", "S": "s"}


@st.composite
def char_classes(draw: st.DrawFn) -> CharClass:
    items = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("char", "char", "range", "shorthand")))
        if kind == "shorthand":
            items.append(ClassItem("shorthand", draw(st.sampled_from(SHORTHANDS))))
        elif kind == "range":
            ends = st.sampled_from(LETTERS + "cfmz09αωé")
            lo, hi = sorted((draw(ends), draw(ends)))
            items.append(ClassItem("range", lo, hi) if lo < hi else ClassItem("char", lo))
        else:
            items.append(ClassItem("char", draw(st.sampled_from(LETTERS + ".*[]^-\\"))))
    negated = draw(st.booleans())
    if negated:
        # regex bug: a negated class holding a shorthand and its complement
        # ([^\s\S]) matches every character, so never draw one.
        letters = {i.lo for i in items if i.kind == "shorthand"}
        items = [
            i for i in items
            if not (i.kind == "shorthand" and i.lo.islower() and COMPLEMENT[i.lo] in letters)
        ]
    return CharClass(tuple(items), negated)


ANCHORS = st.sampled_from(("^", "$", "\\A", "\\Z", "\\b", "\\B")).map(lambda s: Token(s, 0))
CHAR_TOKENS = st.sampled_from((".", "\\d", "\\w", "\\s", "\\D", "\\W", "\\S")).map(
    lambda s: Token(s, 1)
)


def leaves() -> st.SearchStrategy[Node]:
    return st.one_of(lits(), lits(), CHAR_TOKENS, char_classes(), ANCHORS)


def _space() -> Node:
    return Repeat(Token("\\s", 1), 0, None, False, "symbol")


def _lit(text: str) -> Lit:
    return Lit(text, (0,) * len(text))


@st.composite
def delimiter_shapes(draw: st.DrawFn) -> Node:
    """The shapes real response templates use for their delimiters."""
    open_, close = draw(st.sampled_from(DELIMITERS)), draw(st.sampled_from(DELIMITERS))
    shape = draw(st.integers(0, 7))
    if shape == 0:  # \s*<tool_call>
        return Seq((_space(), draw(lits(st.just(open_)))))
    if shape == 1:  # </function>\s*</tool_call>
        return Seq((_lit(open_), _space(), _lit(close)))
    if shape == 2:  # to=functions\.(?P<name>[\w.]+).*?<\|message\|>
        word = CharClass((ClassItem("shorthand", "w"), ClassItem("char", ".")), False)
        name = Group("named", Repeat(word, 1, None, False, "symbol"), draw(st.integers(0, 5)))
        lazy_any = Repeat(Token(".", 1), 0, None, True, "symbol")
        return Seq((_lit("to=functions."), name, lazy_any, _lit(close)))
    if shape == 3:  # alternation of delimiters
        chosen = draw(st.lists(st.sampled_from(DELIMITERS), min_size=2, max_size=3))
        return Alt(tuple(_lit(d) for d in chosen))
    if shape == 4:  # <think>(?P<body>.*?)</think>
        body = Repeat(Token(".", 1), 0, None, draw(st.booleans()), "symbol")
        return Seq((_lit(open_), Group("named", body, draw(st.integers(0, 5))), _lit(close)))
    if shape == 5:  # a delimiter at the very end
        return Seq((_lit(open_), _space(), Token(draw(st.sampled_from(("$", "\\Z"))), 0)))
    if shape == 6:  # a delimiter not followed by another
        return Seq((_lit(open_), Group(draw(st.sampled_from(("ahead", "not_ahead"))), _lit(close))))
    # a word with boundaries
    word = draw(st.sampled_from(("foo", "k", "é", "ß", "_1", "日本")))
    return Seq((Token("\\b", 0), _lit(word), Token(draw(st.sampled_from(("\\b", "\\B"))), 0)))


def _repeat_of(item_strategy: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    @st.composite
    def build(draw: st.DrawFn) -> Node:
        item = draw(item_strategy)
        lazy = draw(st.booleans())
        spelling = draw(st.sampled_from(("symbol", "symbol", "brace")))
        if min_width(item) == 0:
            # The engine refuses max > 1 on a nullable body; only ? and {0,1}-like here.
            lo, hi = draw(st.sampled_from(((0, 1), (0, 1), (1, 1), (0, 0))))
        else:
            lo = draw(st.integers(0, MAX_COUNT))
            hi = draw(st.one_of(st.none(), st.integers(max(lo, 1), MAX_COUNT)))
            if spelling == "symbol" and draw(st.booleans()):
                lo, hi = draw(st.sampled_from(((0, None), (1, None), (0, 1))))
        return Repeat(item, lo, hi, lazy, spelling)

    return build()


def _trees(depth: int) -> st.SearchStrategy[Node]:
    if depth == 0:
        return leaves()
    sub = _trees(depth - 1)
    return st.one_of(
        leaves(),
        st.lists(sub, min_size=2, max_size=4).map(lambda xs: Seq(tuple(xs))),
        st.lists(st.one_of(sub, st.just(Seq(()))), min_size=2, max_size=3).map(
            lambda xs: Alt(tuple(xs))
        ),
        st.builds(
            Group,
            st.sampled_from(GROUP_KINDS),
            sub,
            st.integers(0, len(NAMES) - 1),
        ),
        _repeat_of(sub),
        delimiter_shapes(),
    )


_TREES = _trees(MAX_DEPTH)
# (?i) sometimes, (?s) (a no-op under DOTALL) now and then, (?x) rarely.
_FLAGS = st.sampled_from(
    ("",) * 12 + ("(?i)",) * 4 + ("(?s)", "(?is)", "(?i)(?s)", "(?x)", "(?ix)", "(?x)(?i)")
)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """Pattern source from the supported dialect; never one the engine must refuse."""
    root = draw(_TREES)
    if draw(st.integers(0, 3)) == 0:  # anchor the end now and then: $ and \Z differ on "\n"
        root = Seq((root, Token(draw(st.sampled_from(("$", "\\Z"))), 0)))
    return render(root, draw(_FLAGS))


@st.composite
def delimiter_patterns(draw: st.DrawFn) -> str:
    """Only the shapes delimiters take: the cases that must be right first."""
    return render(draw(delimiter_shapes()), draw(st.sampled_from(("",) * 6 + ("(?i)",))))


@st.composite
def nullable_loops(draw: st.DrawFn) -> str:
    """A pattern with a loop (max > 1) whose body can match the empty string.

    ``regex`` accepts every one of them; the engine must refuse them all.
    """
    x = draw(_trees(1))
    body = draw(
        st.sampled_from(
            (
                Alt((x, Seq(()))),
                Alt((Seq(()), x)),
                Repeat(x, 0, 1, False, "symbol"),
                Repeat(x, 0, None, draw(st.booleans()), "symbol"),
                Repeat(x, 0, 2, False, "brace"),
                Token("\\b", 0),
                Token("$", 0),
                Seq(()),
                Group("ahead", x),
                Group("not_ahead", x),
            )
        )
    )
    kind = draw(st.sampled_from(("noncapture", "capture", "named")))
    lo = draw(st.integers(0, 2))
    hi = draw(st.sampled_from((None, max(lo, 2), 3)))
    spelling = draw(st.sampled_from(("symbol", "brace")))
    loop = Repeat(Group(kind, body), lo, hi, draw(st.booleans()), spelling)
    before, after = draw(leaves()), draw(leaves())
    return render(Seq((before, loop, after)), draw(st.sampled_from(("", "", "(?i)"))))


@st.composite
def named_groups_in_lookaheads(draw: st.DrawFn) -> str:
    """A pattern with a named group inside a lookahead: ``regex`` accepts it, we must not."""
    inside = _Renderer(verbose=False, in_lookahead=1)  # no other named group in there
    x, y, z = draw(_trees(1)), draw(leaves()), draw(leaves())
    name = draw(st.sampled_from(NAMES))
    look = f"(?{draw(st.sampled_from('=!'))}{inside.render(y)}(?P<{name}>{inside.render(x)}))"
    outside = _Renderer(verbose=False)
    before, after = outside.render_in_seq(z), outside.render_in_seq(draw(leaves()))
    return before + look + after


# -- texts -----------------------------------------------------------------------

_GLOBAL_FLAGS = re.compile(r"(?:\(\?[a-z]+\))+")
_GROUP_HEADER = re.compile(r"\(\?(?:P<\w+>|[:=!]|[a-z]*-?[a-z]*[:)])?")
_BRACE = re.compile(r"\{\d*,?\d*\}")
_HEX = {"x": 2, "u": 4, "U": 8}
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


def literal_fragments(source: str) -> list[str]:
    """The runs of literal text in pattern ``source``, plus characters its classes hold.

    An approximation is enough: these are raw material for texts, not a parse.
    """
    flags = _GLOBAL_FLAGS.match(source)
    verbose = flags is not None and "x" in flags.group()
    runs: list[str] = []
    singles: list[str] = []
    cur: list[str] = []

    def flush() -> None:
        if cur:
            runs.append("".join(cur))
            cur.clear()

    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            e = source[i + 1]
            if e in _HEX:
                width = _HEX[e]
                cur.append(chr(int(source[i + 2 : i + 2 + width], 16)))
                i += 2 + width
                continue
            i += 2
            if e in SHORTHAND_SAMPLES:
                flush()
                singles.extend(SHORTHAND_SAMPLES[e])
            elif e in "bBAZz":
                flush()
            else:
                cur.append(_SIMPLE.get(e, e))
        elif c == "[":
            flush()
            i = _read_class(source, i, singles)
        elif c == "(":
            flush()
            m = _GROUP_HEADER.match(source, i)
            i = m.end() if m else i + 1
        elif c == "{" and _BRACE.match(source, i):
            flush()
            i = _BRACE.match(source, i).end()  # type: ignore[union-attr]
        elif c in "|)^$.*+?" or (verbose and c in " \t\n"):
            flush()
            i += 1
        else:
            cur.append(c)
            i += 1
    flush()
    return runs + singles


def _read_class(source: str, i: int, out: list[str]) -> int:
    """Collect a class's member characters into ``out``; return the index after it."""
    i += 1
    if source[i : i + 1] == "^":
        i += 1
    members: list[str] = []
    first = True
    while i < len(source) and (source[i] != "]" or first):
        first = False
        if source[i] == "\\":
            e = source[i + 1]
            if e in _HEX:
                members.append(chr(int(source[i + 2 : i + 2 + _HEX[e]], 16)))
                i += 2 + _HEX[e]
                continue
            if e in SHORTHAND_SAMPLES:
                out.extend(SHORTHAND_SAMPLES[e])
            else:
                members.append(_SIMPLE.get(e, e))
            i += 2
        else:
            members.append(source[i])
            i += 1
    # a-z is read as three members; add a character strictly inside each range too
    for k in range(len(members) - 2):
        if members[k + 1] == "-" and members[k] < members[k + 2]:
            out.append(chr((ord(members[k]) + ord(members[k + 2])) // 2))
    out.extend(members)
    return i + 1


# Characters whose case partners are surprising: folding treats them as one letter.
_CASE_PARTNERS = {
    "k": "K\u212a", "K": "k\u212a", "\u212a": "kK", "s": "Sſ", "S": "sſ", "ſ": "sS",
    "ß": "ẞ", "ẞ": "ß", "σ": "Σς", "ς": "Σσ", "Σ": "σς", "µ": "μΜ", "i": "İI", "I": "iı",
}


def _case_variants(fragment: str) -> list[str]:
    swapped = "".join(
        _CASE_PARTNERS[c][0] if c in _CASE_PARTNERS else c for c in fragment
    )
    exotic = "".join(_CASE_PARTNERS[c][-1] if c in _CASE_PARTNERS else c for c in fragment)
    return [fragment.upper(), fragment.lower(), fragment.swapcase(), swapped, exotic]


@st.composite
def _near_miss(draw: st.DrawFn, fragment: str) -> str:
    """``fragment`` with one character dropped, doubled or replaced."""
    if not fragment:
        return fragment
    k = draw(st.integers(0, len(fragment) - 1))
    how = draw(st.integers(0, 2))
    if how == 0:
        return fragment[:k] + fragment[k + 1 :]
    if how == 1:
        return fragment[:k] + fragment[k] + fragment[k:]
    return fragment[:k] + draw(st.sampled_from(NOISE + ("<", "|", " "))) + fragment[k + 1 :]


def _pieces(fragments: list[str]) -> st.SearchStrategy[str]:
    noise = st.one_of(
        st.sampled_from(WHITESPACE),
        st.text(alphabet="abcxyzKS_019", min_size=1, max_size=4),
        st.sampled_from(NOISE),
    )
    if not fragments:
        return noise
    frag = st.sampled_from(fragments)
    return st.one_of(
        frag,
        frag.flatmap(lambda f: st.integers(1, len(f)).map(lambda k: f[:k])),  # prefix
        frag.flatmap(lambda f: st.integers(0, len(f)).map(lambda k: f[k:])),  # suffix
        frag.flatmap(lambda f: st.sampled_from(_case_variants(f))),
        frag.flatmap(_near_miss),
        noise,
    )


@st.composite
def _texts(draw: st.DrawFn, source: str, max_size: int) -> str:
    fragments = [f for f in literal_fragments(source) if f]
    pieces = _pieces(fragments)
    # Aim at a length drawn uniformly: a plain st.lists of pieces keeps most texts
    # under ten characters, or piles them up at the cap for long delimiters.
    target = draw(st.sampled_from(range(max_size + 1)))
    text = ""
    for _ in range(2 * target + 2):  # pieces may be empty; never loop for ever
        if len(text) >= target:
            break
        text += draw(pieces)
    # End on a cut delimiter often: that is where partial matches come from.
    tail = ""
    if fragments and draw(st.booleans()):
        f = draw(st.sampled_from(fragments))
        tail = f[: min(target, draw(st.integers(0, len(f))))]
    room = target - len(tail)
    if len(text) > room:  # cut at either end: both can leave a delimiter truncated
        cut = draw(st.integers(0, len(text) - room))
        text = text[cut : cut + room]
    return text + tail


def texts_for(pattern_source: str, max_size: int = 40) -> st.SearchStrategy[str]:
    """Strings to search with ``pattern_source``: its literals, their prefixes, noise."""
    return _texts(pattern_source, max_size)
