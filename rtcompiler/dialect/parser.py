"""Read a delimiter pattern into the typed tree of :mod:`rtcompiler.dialect.ast`.

The dialect is the ``regex`` module's, compiled the way transformers compiles
delimiters: DOTALL on, MULTILINE off, Unicode semantics, version 0 syntax. The
parser accepts a subset of it and rejects the rest with a :class:`PatternError`
that names the construct and its column; it never guesses.

A pattern is first handed to ``regex`` itself: what ``regex`` rejects is invalid,
whatever we think of it. Then this recursive-descent reader walks it again to build
the tree. Character sets are not interpreted here but derived from ``regex``
(:func:`rtcompiler.dialect.charsets.derive`) from their own source text.

>>> parse_pattern(r"\\s*(?P<name>\\w+)").group_names
{'name': 1}
"""

from __future__ import annotations

import re as _stdlib_re
from collections.abc import Callable

from . import ast
from .charsets import ANY, CharSet, derive
from .errors import PatternError

_VERBOSE_SPACE = " \t\n\r\f\v"
_SUPPORTED_FLAGS = "isx"
_FLAG_NAMES = {
    "a": "ASCII flag (?a)",
    "b": "BESTMATCH flag (?b)",
    "e": "ENHANCEMATCH flag (?e)",
    "f": "FULLCASE flag (?f)",
    "L": "LOCALE flag (?L)",
    "m": "MULTILINE flag (?m)",
    "p": "POSIX flag (?p)",
    "r": "REVERSE flag (?r)",
    "u": "UNICODE flag (?u)",
    "V": "version flag (?V)",
    "w": "WORD flag (?w)",
}
_BRACE_QUANTIFIER = _stdlib_re.compile(r"(\d+)|(\d*),(\d*)")
# regex reads a brace naming an error kind (e, i, d, s) as a fuzzy constraint.
_FUZZY_CONSTRAINT = _stdlib_re.compile(r"(?<![A-Za-z])[eids](?![A-Za-z])")
# What a brace quantifier's body may hold in verbose mode: digits, commas and spaces.
_VERBOSE_BRACE = _stdlib_re.compile(r"[\d, \t\n\r\f\v]*")
# Flags scoped to a group, after its "(?": "i:", "-i:", "is-x:".
_SCOPED_FLAGS = _stdlib_re.compile(r"([a-zA-Z]*)(?:-([a-zA-Z]+))?([:)])")
# Lookaheads nested deeper than this are refused: a thread's lookahead obligations nest
# as deeply, and building a DFA state costs time that grows with their size.
MAX_LOOKAHEAD_DEPTH = 16
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_ESCAPE_CONSTRUCTS = {
    "p": "Unicode property \\p",
    "P": "Unicode property \\P",
    "X": "grapheme cluster \\X",
    "N": "named character \\N",
    "G": "search anchor \\G",
    "K": "match reset \\K",
    "m": "word start \\m",
    "M": "word end \\M",
    "g": "backreference \\g",
    "L": "named list \\L",
    "h": "escape \\h",
    "0": "octal escape",
}


def parse_pattern(
    source: str,
    check: Callable[[ast.Pattern], None] | None = None,
    *,
    backreferences: bool = False,
) -> ast.Pattern:
    """Parse ``source`` into an :class:`ast.Pattern` or raise :class:`PatternError`.

    ``check``, if given, sees the tree before the ``regex`` module compiles the pattern
    to validate it, and may refuse it: ``regex`` expands counted repetitions, so
    ``x{1000000000}`` would take it gigabytes (see :func:`read_pattern`).
    ``backreferences``: read ``\\N``, ``(?P=name)`` and ``\\g<...>`` as
    :class:`ast.Backref` (xml-inline tag patterns) instead of refusing them.
    """
    if check is not None:
        tree = read_pattern(source, backreferences)
        if tree is not None:
            check(tree)
    _check_with_regex(source)
    return _Reader(source, backreferences).read()


def read_pattern(source: str, backreferences: bool = False) -> ast.Pattern | None:
    """The tree of ``source`` without asking ``regex`` first, or None if it cannot be read.

    For size checks that must come before ``regex`` compiles a pattern. The reader
    expects a pattern ``regex`` accepts: on anything else it may fail in any way (but
    always ends: every loop stops at the end of the text), and the pattern is then
    left to :func:`parse_pattern` to refuse with the right reason.
    """
    try:
        return _Reader(source, backreferences).read()
    except Exception:
        return None


def _check_with_regex(source: str) -> None:
    import regex

    try:
        regex.compile(source, regex.DOTALL)
    except regex.error as e:
        column = e.pos if isinstance(e.pos, int) else 0
        raise PatternError(
            "invalid pattern", column, source, detail=f"invalid pattern: {e.msg}"
        ) from None
    except (AttributeError, TypeError, IndexError, RecursionError) as e:
        # regex's own bugs (e.g. (?i)(?:[\D]|[\d]) raises AttributeError in its optimiser):
        # transformers would crash on the same pattern, so refuse it with a reason.
        raise PatternError(
            "pattern the regex module crashes on",
            0,
            source,
            detail=f"the regex module crashes compiling this pattern ({type(e).__name__}: {e}); "
            "transformers cannot use it either — rewrite it (e.g. drop redundant alternatives)",
        ) from None


class _Reader:
    def __init__(self, source: str, backreferences: bool = False) -> None:
        self.src = source
        self.backreferences = backreferences
        self.pos = 0
        self.ignore_case = False
        self.verbose = False
        self.dotall = True
        self.group_count = 0
        self.group_names: dict[str, int] = {}
        self.lookahead_depth = 0
        # Where the next '}' and the next fuzzy-constraint letter are, from where they
        # were last looked for (the reader only moves forward): see next_at.
        self.closing = [-1, -1]
        self.fuzzy = [-1, -1]

    # -- helpers -------------------------------------------------------------

    def fail(self, construct: str, column: int) -> PatternError:
        return PatternError(construct, column, self.src)

    def peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.src[i] if i < len(self.src) else ""

    def next_at(self, memo: list[int], text: str) -> int:
        """``src.find(text, pos)``, reusing the last answer while it still holds."""
        searched_from, found = memo
        if searched_from < 0 or searched_from > self.pos or 0 <= found < self.pos:
            found = self.src.find(text, self.pos)
            memo[:] = [self.pos, found]
        return found

    def next_fuzzy(self, start: int) -> int:
        """Where the first fuzzy-constraint letter at or after ``start`` is, or -1."""
        searched_from, found = self.fuzzy
        if searched_from < 0 or searched_from > start or 0 <= found < start:
            m = _FUZZY_CONSTRAINT.search(self.src, start)
            found = -1 if m is None else m.start()
            self.fuzzy = [start, found]
        return found

    def startswith(self, text: str) -> bool:
        return self.src.startswith(text, self.pos)

    def skip_insignificant(self) -> None:
        """In verbose mode, whitespace and ``#`` comments between tokens mean nothing."""
        if not self.verbose:
            return
        while self.pos < len(self.src):
            c = self.src[self.pos]
            if c in _VERBOSE_SPACE:
                self.pos += 1
            elif c == "#":
                end = self.src.find("\n", self.pos)
                self.pos = len(self.src) if end < 0 else end + 1
            else:
                return

    # -- grammar -------------------------------------------------------------

    def read(self) -> ast.Pattern:
        self.read_global_flags()
        root = self.read_alternation()
        if self.pos < len(self.src):  # only an unbalanced ')' gets here; regex rejects it first
            raise self.fail("unbalanced parenthesis", self.pos)
        return ast.Pattern(self.src, root, self.group_count, dict(self.group_names))

    def read_global_flags(self) -> None:
        while True:
            self.skip_insignificant()
            m = _stdlib_re.compile(r"\(\?([a-zA-Z][a-zA-Z0-9]*)\)").match(self.src, self.pos)
            if not m:
                return
            self.apply_flags(m.group(1), m.start(1), on=True)
            self.pos = m.end()

    def apply_flags(self, letters: str, column: int, on: bool) -> None:
        for offset, letter in enumerate(letters):
            if letter not in _SUPPORTED_FLAGS:
                construct = _FLAG_NAMES.get(letter, f"flag ({letter})")
                raise self.fail(construct, column + offset)
            if letter == "i":
                self.ignore_case = on
            elif letter == "x":
                self.verbose = on
            else:
                self.dotall = on

    def read_alternation(self) -> ast.Node:
        alternatives = [self.read_concat()]
        while self.peek() == "|":
            self.pos += 1
            alternatives.append(self.read_concat())
        if len(alternatives) == 1:
            return alternatives[0]
        return ast.Alternation(tuple(alternatives))

    def read_concat(self) -> ast.Node:
        items: list[ast.Node] = []
        while True:
            self.skip_insignificant()
            c = self.peek()
            if c == "" or c == "|" or c == ")":
                break
            atom = self.read_atom()
            if atom is None:
                continue
            items.append(self.read_quantifiers(atom))
        if not items:
            return ast.Empty()
        if len(items) == 1:
            return items[0]
        return ast.Concat(tuple(items))

    def read_quantifiers(self, atom: ast.Node) -> ast.Node:
        self.skip_insignificant()
        start = self.pos
        bounds = self.read_quantifier_bounds()
        if bounds is None:
            return atom
        lo, hi = bounds
        self.skip_insignificant()
        greedy = True
        if self.peek() == "?":
            greedy = False
            self.pos += 1
        elif self.peek() == "+":
            raise self.fail("possessive quantifier", start)
        return ast.Repeat(atom, lo, hi, greedy)

    def read_quantifier_bounds(self) -> tuple[int, int | None] | None:
        c = self.peek()
        if c in "*+?" and c:
            self.pos += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        if c != "{":
            return None
        close = self.next_at(self.closing, "}")
        if close < 0:
            return None
        # Each question below reads no further than it must (digits, or to the next
        # fuzzy-constraint letter, found once for all the braces before it): reading the
        # text up to the next '}' for every '{' was quadratic over "a{a{a{...}".
        if self.verbose:
            spaced = _VERBOSE_BRACE.match(self.src, self.pos + 1, close)
            body = "".join(ch for ch in spaced.group() if ch not in _VERBOSE_SPACE)
            m = _BRACE_QUANTIFIER.fullmatch(body) if spaced.end() == close else None
        else:
            m = _BRACE_QUANTIFIER.fullmatch(self.src, self.pos + 1, close)
        if not m:
            fuzzy = self.next_fuzzy(self.pos + 1)
            if 0 <= fuzzy < close:
                raise self.fail("fuzzy matching", self.pos)
            return None  # regex reads such a brace as a literal '{'
        self.pos = close + 1
        if m.group(1) is not None:
            n = int(m.group(1))
            return n, n
        lo = int(m.group(2)) if m.group(2) else 0
        hi = int(m.group(3)) if m.group(3) else None
        return lo, hi

    def read_atom(self) -> ast.Node | None:
        c = self.peek()
        start = self.pos
        if c == "(":
            return self.read_group()
        if c == "[":
            return self.read_class()
        self.pos += 1
        if c == ".":
            return ast.Chars(ANY if self.dotall else CharSet.of("\n").complement())
        if c == "^":
            return ast.Assertion(ast.START)
        if c == "$":
            return ast.Assertion(ast.DOLLAR)
        if c == "\\":
            return self.read_escape(start)
        return self.literal(c)

    def literal(self, ch: str) -> ast.Chars:
        if self.ignore_case:
            return ast.Chars(derive(f"\\U{ord(ch):08x}", ignore_case=True))
        return ast.Chars(CharSet(((ord(ch), ord(ch)),)))

    def read_escape(self, start: int) -> ast.Node:
        c = self.peek()
        self.pos += 1
        if c in "dwsDWS":
            return ast.Chars(derive("\\" + c, self.ignore_case))
        if c == "b":
            return ast.Assertion(ast.WORD_BOUNDARY)
        if c == "B":
            return ast.Assertion(ast.NOT_WORD_BOUNDARY)
        if c == "A":
            return ast.Assertion(ast.START)
        if c in "Zz":
            return ast.Assertion(ast.END)
        if c in _SIMPLE_ESCAPES:
            return self.literal(_SIMPLE_ESCAPES[c])
        if c in _HEX_ESCAPES:
            return self.literal(self.read_hex(c, start))
        if c.isdigit() and c != "0":
            if c in "1234567" and len(self.src) >= self.pos + 2 and all(
                d in "01234567" for d in self.src[self.pos : self.pos + 2]
            ):
                raise self.fail("octal escape", start)  # regex: three octal digits
            if not self.backreferences:
                raise self.fail("backreference", start)
            digits = c
            if self.peek().isdigit():  # regex reads at most two digits as a group number
                digits += self.peek()
                self.pos += 1
            return self.backref(int(digits), start)
        if c == "g" and self.backreferences and self.peek() == "<":
            close = self.src.index(">", self.pos)
            ref = self.src[self.pos + 1 : close]
            self.pos = close + 1
            return self.backref(int(ref) if ref.isdigit() else self.group_names.get(ref), start)
        if c in _ESCAPE_CONSTRUCTS:
            raise self.fail(_ESCAPE_CONSTRUCTS[c], start)
        if c.isalnum():
            raise self.fail(f"escape \\{c}", start)
        return self.literal(c)

    def backref(self, index: int | None, start: int) -> ast.Backref:
        # regex has already refused a reference to a group that does not exist or
        # is not closed yet; a lookahead keeps its groups to itself here.
        if index is None or index > self.group_count or self.lookahead_depth:
            raise self.fail("backreference", start)
        return ast.Backref(index, start)

    def read_hex(self, kind: str, start: int) -> str:
        if self.peek() == "{":
            raise self.fail(f"braced escape \\{kind}{{...}}", start)
        width = _HEX_ESCAPES[kind]
        digits = self.src[self.pos : self.pos + width]
        self.pos += width
        return chr(int(digits, 16))

    def read_class(self) -> ast.Chars:
        start = self.pos
        self.pos += 1
        if self.peek() == "^":
            self.pos += 1
        first = True
        while True:
            c = self.peek()
            if c == "":  # regex refuses it first; read_pattern must not loop on it
                raise self.fail("unterminated character set", start)
            if c == "]" and not first:
                self.pos += 1
                break
            first = False
            if c == "[" and self.peek(1) in ":=.":
                raise self.fail("POSIX character class", self.pos)
            if c == "\\":
                self.read_class_escape()
            else:
                self.pos += 1
        atom = self.src[start : self.pos]
        return ast.Chars(derive(atom, self.ignore_case, self.verbose))

    def read_class_escape(self) -> None:
        start = self.pos
        self.pos += 1
        c = self.peek()
        self.pos += 1
        if c in "dwsDWSb" or c in _SIMPLE_ESCAPES:
            return
        if c in _HEX_ESCAPES:
            self.read_hex(c, start)
            return
        if c.isdigit():
            raise self.fail("octal escape", start)  # no backreferences inside a class
        if c in _ESCAPE_CONSTRUCTS:
            raise self.fail(_ESCAPE_CONSTRUCTS[c], start)
        if c.isalnum():
            raise self.fail(f"escape \\{c}", start)

    def read_group(self) -> ast.Node | None:
        start = self.pos
        if not self.startswith("(?"):
            self.pos += 1
            self.group_count += 1
            index = self.group_count
            return ast.Group(self.read_group_body(start), index, None)
        # What follows "(?": every construct is told by its first few characters; the
        # flags are read from the source itself (a slice to the end, per group, made
        # the reading quadratic in the number of groups).
        rest = self.src[self.pos + 2 : self.pos + 4]
        if rest.startswith(":"):
            self.pos += 3
            return self.read_group_body(start)
        if rest.startswith(("P<", "<")) and not rest.startswith(("<=", "<!")):
            return self.read_named_group(start)
        if rest.startswith(("=", "!")):
            if self.lookahead_depth >= MAX_LOOKAHEAD_DEPTH:
                raise self.fail(f"lookaheads nested more than {MAX_LOOKAHEAD_DEPTH} deep", start)
            self.pos += 3
            self.lookahead_depth += 1
            body = self.read_group_body(start)
            self.lookahead_depth -= 1
            return ast.Lookahead(body, negative=rest[0] == "!")
        if rest.startswith("#"):
            end = self.src.index(")", self.pos)
            self.pos = end + 1
            return None
        if rest.startswith("P=") and self.backreferences:
            close = self.src.index(")", self.pos)
            name = self.src[self.pos + 4 : close]
            self.pos = close + 1
            return self.backref(self.group_names.get(name), start)
        construct = _group_construct(rest)
        if construct is not None:
            raise self.fail(construct, start)
        m = _SCOPED_FLAGS.match(self.src, self.pos + 2)
        if m is None:
            raise self.fail(f"group extension (?{rest[:1]}", start)
        if m.group(3) == ")":
            raise self.fail("inline flags not at the start of the pattern", start)
        saved = (self.ignore_case, self.verbose, self.dotall)
        self.apply_flags(m.group(1), start + 2, on=True)
        if m.group(2):
            self.apply_flags(m.group(2), start + 3 + len(m.group(1)), on=False)
        self.pos = m.end()
        body = self.read_group_body(start)
        self.ignore_case, self.verbose, self.dotall = saved
        return body

    def read_named_group(self, start: int) -> ast.Node:
        open_len = 4 if self.startswith("(?P<") else 3
        close = self.src.index(">", self.pos)
        name = self.src[self.pos + open_len : close]
        if self.lookahead_depth:
            raise self.fail("named group inside a lookahead", start)
        self.pos = close + 1
        index = self.group_names.get(name)
        if index is None:  # a repeated name is the same group, as in regex
            self.group_count += 1
            index = self.group_names[name] = self.group_count
        return ast.Group(self.read_group_body(start), index, name)

    def read_group_body(self, start: int) -> ast.Node:
        body = self.read_alternation()
        if self.peek() != ")":
            raise self.fail("unbalanced parenthesis", start)
        self.pos += 1
        return body


def _group_construct(rest: str) -> str | None:
    """Name the unsupported ``(?...`` construct that ``rest`` (after ``(?``) starts."""
    table = [
        ("<=", "lookbehind"),
        ("<!", "negative lookbehind"),
        (">", "atomic group"),
        ("P=", "backreference (?P=name)"),
        ("P>", "recursion (?P>name)"),
        ("&", "recursion (?&name)"),
        ("R", "recursion (?R)"),
        ("|", "branch reset group"),
        ("(", "conditional group"),
    ]
    for prefix, construct in table:
        if rest.startswith(prefix):
            return construct
    if rest[:1].isdigit() or rest[:1] in "+-" and rest[1:2].isdigit():
        return "recursion (?N)"
    return None
