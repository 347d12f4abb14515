"""The dialect's boundary: what ``parse_pattern`` rejects, where, and what it accepts.

Every rejected construct is one that ``regex`` itself accepts (so the rejection is
our restriction, not bad input), except the "invalid pattern" cases, which ``regex``
must reject too. The column is the 0-based offset of the construct's first
character; most constructs sit after a prefix so that the column means something.
For flags the column is that of the offending flag letter.
"""

from __future__ import annotations

import pytest
import regex

from rtcompiler.dialect import PatternError, ast, parse_pattern

# (pattern, construct, column)
UNSUPPORTED = [
    # lookbehind
    pytest.param(r"abc(?<=x)", "lookbehind", 3, id="lookbehind"),
    pytest.param(r"abc(?<!x)", "negative lookbehind", 3, id="negative-lookbehind"),
    # atomic groups and possessive quantifiers
    pytest.param(r"ab(?>c)", "atomic group", 2, id="atomic-group"),
    pytest.param(r"ab*+", "possessive quantifier", 2, id="possessive-star"),
    pytest.param(r"ab++", "possessive quantifier", 2, id="possessive-plus"),
    pytest.param(r"ab?+", "possessive quantifier", 2, id="possessive-question"),
    pytest.param(r"ab{2}+", "possessive quantifier", 2, id="possessive-brace"),
    pytest.param(r"ab{1,3}+", "possessive quantifier", 2, id="possessive-brace-range"),
    pytest.param(r"(?x)ab{2} +", "possessive quantifier", 6, id="possessive-verbose"),
    # backreferences
    pytest.param(r"x(a)\1", "backreference", 4, id="backreference-number"),
    pytest.param(r"x(?P<n>a)(?P=n)", "backreference (?P=name)", 9, id="backreference-P="),
    pytest.param(r"x(a)\g<1>", "backreference \\g", 4, id="backreference-g-number"),
    pytest.param(r"x(?P<n>a)\g<n>", "backreference \\g", 9, id="backreference-g-name"),
    # recursion
    pytest.param(r"xa(?R)?", "recursion (?R)", 2, id="recursion-R"),
    pytest.param(r"x(a)(?1)", "recursion (?N)", 4, id="recursion-number"),
    pytest.param(r"x(?0)", "recursion (?N)", 1, id="recursion-zero"),
    pytest.param(r"x(?P<n>a)(?&n)", "recursion (?&name)", 9, id="recursion-ampersand"),
    pytest.param(r"x(?P<n>a)(?P>n)", "recursion (?P>name)", 9, id="recursion-P>"),
    # conditionals and branch reset
    pytest.param(r"x(a)(?(1)a|b)", "conditional group", 4, id="conditional-group-number"),
    pytest.param(r"x(?(?=a)a|b)", "conditional group", 1, id="conditional-lookaround"),
    pytest.param(r"x(?(DEFINE)a)", "conditional group", 1, id="conditional-define"),
    pytest.param(r"x(?|a|b)", "branch reset group", 1, id="branch-reset"),
    # character classes and escapes that regex knows and we do not
    pytest.param(r"x[[:alpha:]]", "POSIX character class", 2, id="posix-class"),
    pytest.param(r"x[a[:digit:]]", "POSIX character class", 3, id="posix-class-inside"),
    pytest.param(r"x[[=a=]]", "POSIX character class", 2, id="posix-equivalence"),
    pytest.param(r"x\p{L}", "Unicode property \\p", 1, id="property-p-braced"),
    pytest.param(r"x\pL", "Unicode property \\p", 1, id="property-p-short"),
    pytest.param(r"x\P{L}", "Unicode property \\P", 1, id="property-P"),
    pytest.param(r"x[a\p{L}]", "Unicode property \\p", 3, id="property-p-in-class"),
    pytest.param(r"x\X", "grapheme cluster \\X", 1, id="grapheme-X"),
    pytest.param(r"x\N{LATIN SMALL LETTER A}", "named character \\N", 1, id="named-char-N"),
    pytest.param(
        r"x[\N{LATIN SMALL LETTER A}]", "named character \\N", 2, id="named-char-in-class"
    ),
    pytest.param(r"x\G", "search anchor \\G", 1, id="search-anchor-G"),
    pytest.param(r"x\K", "match reset \\K", 1, id="match-reset-K"),
    pytest.param(r"x\m", "word start \\m", 1, id="word-start-m"),
    pytest.param(r"x\M", "word end \\M", 1, id="word-end-M"),
    pytest.param(r"x\h", "escape \\h", 1, id="unknown-escape-h"),
    pytest.param(r"x[\h]", "escape \\h", 2, id="unknown-escape-h-in-class"),
    pytest.param(r"x\R", "escape \\R", 1, id="unknown-escape-R"),
    pytest.param(r"x\0", "octal escape", 1, id="octal-zero"),
    pytest.param(r"x\012", "octal escape", 1, id="octal-three-digits"),
    pytest.param(r"x[\0]", "octal escape", 2, id="octal-in-class"),
    # flags
    pytest.param(r"a(?i)b", "inline flags not at the start of the pattern", 1, id="mid-flags-i"),
    pytest.param(r"ab(?s)", "inline flags not at the start of the pattern", 2, id="mid-flags-s"),
    pytest.param(
        r"(?x) a(?i)b", "inline flags not at the start of the pattern", 6, id="mid-flags-verbose"
    ),
    pytest.param(r"(?m)a", "MULTILINE flag (?m)", 2, id="flag-m"),
    pytest.param(r"(?im)a", "MULTILINE flag (?m)", 3, id="flag-m-after-i"),
    pytest.param(r"(?i)(?m)a", "MULTILINE flag (?m)", 6, id="flag-m-second-group"),
    pytest.param(r"x(?m:a)", "MULTILINE flag (?m)", 3, id="flag-m-scoped"),
    pytest.param(r"x(?i-m:a)", "MULTILINE flag (?m)", 5, id="flag-m-scoped-off"),
    pytest.param(r"(?a)a", "ASCII flag (?a)", 2, id="flag-a"),
    pytest.param(r"(?w)a", "WORD flag (?w)", 2, id="flag-w"),
    pytest.param(r"(?f)a", "FULLCASE flag (?f)", 2, id="flag-f"),
    pytest.param(r"(?b)a", "BESTMATCH flag (?b)", 2, id="flag-b"),
    pytest.param(r"(?e)a", "ENHANCEMATCH flag (?e)", 2, id="flag-e"),
    pytest.param(r"(?r)a", "REVERSE flag (?r)", 2, id="flag-r"),
    pytest.param(r"(?L)a", "LOCALE flag (?L)", 2, id="flag-L"),
    pytest.param(r"(?u)a", "UNICODE flag (?u)", 2, id="flag-u"),
    pytest.param(r"(?p)a", "POSIX flag (?p)", 2, id="flag-p"),
    # lookahead restrictions
    pytest.param(
        r"x(?=(?P<n>a))", "named group inside a lookahead", 4, id="named-group-in-lookahead"
    ),
    pytest.param(
        r"x(?!a(?<n>b))", "named group inside a lookahead", 5, id="named-group-in-neg-lookahead"
    ),
]

# Constructs whose syntax overlaps supported syntax: a brace that regex reads as
# a fuzzy constraint (not a literal), version flags, octal escapes.
KNOWN_GAPS = [
    pytest.param(
        r"x(?:abc){e<=1}",
        "fuzzy matching",
        8,
        id="fuzzy-noncapturing",
    ),
    pytest.param(
        r"xa{e}",
        "fuzzy matching",
        2,
        id="fuzzy-any-errors",
    ),
    pytest.param(
        r"(?V1)a",
        "version flag (?V)",
        2,
        id="flag-V1",
    ),
    pytest.param(
        r"x[\1]",
        "octal escape",
        2,
        id="octal-digit-in-class",
    ),
    pytest.param(
        r"x(a)\100",
        "octal escape",
        4,
        id="octal-three-digits-nonzero",
    ),
]

INVALID = [
    pytest.param(r"x(", id="missing-close-paren"),
    pytest.param(r"x)", id="unbalanced-close-paren"),
    pytest.param(r"x[", id="unterminated-class"),
    pytest.param(r"a**", id="multiple-repeat"),
    pytest.param(r"a{2}{3}", id="multiple-brace-repeat"),
    pytest.param(r"a{2,1}", id="min-greater-than-max"),
    pytest.param(r"x\1", id="reference-to-missing-group"),
    pytest.param(r"x\q", id="bad-escape"),
    pytest.param(r"x\x{41}", id="braced-hex-escape"),
    pytest.param(r"x(?P<1>a)", id="bad-group-name"),
    pytest.param(r"x(?'n'a)", id="quote-named-group"),
    pytest.param(r"x[a--b]", id="bad-range"),
    pytest.param(r"x|{1}", id="quantifier-with-nothing-to-repeat"),
]


def _rejection(pattern: str) -> PatternError:
    with pytest.raises(PatternError) as info:
        parse_pattern(pattern)
    return info.value


@pytest.mark.parametrize(("pattern", "construct", "column"), UNSUPPORTED + KNOWN_GAPS)
def test_unsupported_construct_is_rejected(pattern: str, construct: str, column: int) -> None:
    regex.compile(pattern, regex.DOTALL)  # regex accepts it: the restriction is ours
    error = _rejection(pattern)
    assert isinstance(error, ValueError)
    assert (error.construct, error.column) == (construct, column)
    assert error.pattern == pattern
    assert str(column) in str(error)


@pytest.mark.parametrize("pattern", INVALID)
def test_invalid_pattern_is_rejected_with_regex_position(pattern: str) -> None:
    with pytest.raises(regex.error) as regex_info:
        regex.compile(pattern, regex.DOTALL)
    error = _rejection(pattern)
    assert error.construct == "invalid pattern"
    assert error.column == regex_info.value.pos


def test_fuzzy_braces_are_not_literal_text_to_regex() -> None:
    """Why a fuzzy constraint must be rejected rather than read as text: regex matches
    ``b`` with ``a{e<=1}`` (one substitution), which a literal reading never would."""
    compiled = regex.compile(r"a{e<=1}", regex.DOTALL)
    assert compiled.fullmatch("b") is not None
    assert compiled.fullmatch("a{e<=1}") is None


# -- what the dialect accepts ----------------------------------------------------


def _literal(node: ast.Node) -> str | None:
    """The text a tree matches if it is a plain sequence of single characters."""
    items = node.items if isinstance(node, ast.Concat) else (node,)
    out = []
    for item in items:
        if not isinstance(item, ast.Chars) or len(item.chars.ranges) != 1:
            return None
        lo, hi = item.chars.ranges[0]
        if lo != hi:
            return None
        out.append(chr(lo))
    return "".join(out)


SUPPORTED = [
    pytest.param(r"abc", id="literal"),
    pytest.param(r"a.c", id="dot"),
    pytest.param(r"[a-z_]", id="class"),
    pytest.param(r"[^a-z]", id="negated-class"),
    pytest.param(r"[]a]", id="class-leading-bracket"),
    pytest.param(r"\d\w\s\D\W\S", id="class-escapes"),
    pytest.param(r"[\d\s.-]", id="class-escapes-in-class"),
    pytest.param(r"\n\t\r\f\v\a", id="control-escapes"),
    pytest.param(r"\x41\u0041\U00000041", id="hex-escapes"),
    pytest.param(r"\.\*\+\?\(\)\[\]\{\}\|\\\^\$", id="escaped-metacharacters"),
    pytest.param(r"^a$", id="caret-dollar"),
    pytest.param(r"\Aa\Z", id="A-Z"),
    pytest.param(r"a\z", id="z"),
    pytest.param(r"\ba\B", id="word-boundaries"),
    pytest.param(r"(a)", id="group"),
    pytest.param(r"(?:a)", id="noncapturing-group"),
    pytest.param(r"(?P<n>a)", id="named-group-P"),
    pytest.param(r"(?<n>a)", id="named-group"),
    pytest.param(r"(?P<n>a)|(?P<n>b)", id="repeated-group-name"),
    pytest.param(r"a(?=b)", id="lookahead"),
    pytest.param(r"a(?!b)", id="negative-lookahead"),
    pytest.param(r"a(?=(b))", id="unnamed-group-in-lookahead"),
    pytest.param(r"a*b+c?", id="quantifiers"),
    pytest.param(r"a*?b+?c??", id="lazy-quantifiers"),
    pytest.param(r"a{2}b{2,}c{2,3}d{,3}", id="brace-quantifiers"),
    pytest.param(r"a{2}?b{2,3}?", id="lazy-brace-quantifiers"),
    pytest.param(r"a|b|", id="alternation-with-empty"),
    pytest.param(r"a(?#comment)b", id="comment-group"),
    pytest.param(r"(?i)a", id="flag-i"),
    pytest.param(r"(?s).", id="flag-s"),
    pytest.param(r"(?x) a b ", id="flag-x"),
    pytest.param(r"(?is)a", id="flags-combined"),
    pytest.param(r"(?i)(?s)a", id="flags-two-groups"),
    pytest.param(r"a(?i:b)c", id="scoped-i"),
    pytest.param(r"(?i)a(?-i:b)", id="scoped-minus-i"),
    pytest.param(r"(?i-s:.)", id="scoped-on-and-off"),
]


@pytest.mark.parametrize("pattern", SUPPORTED)
def test_supported_syntax_parses(pattern: str) -> None:
    regex.compile(pattern, regex.DOTALL)
    assert parse_pattern(pattern) is not None


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param("a{", id="open-brace-at-end"),
        pytest.param("a{1", id="unclosed-count"),
        pytest.param("a{x}", id="non-numeric"),
        pytest.param("x{}", id="empty-braces"),
        pytest.param("a{1, 2}", id="space-in-range-not-verbose"),
        pytest.param("a{ 1}", id="leading-space-not-verbose"),
        pytest.param("{a}", id="brace-at-start"),
    ],
)
def test_brace_that_regex_reads_as_literal_is_literal(pattern: str) -> None:
    assert regex.fullmatch(pattern, pattern, regex.DOTALL) is not None
    tree = parse_pattern(pattern).root
    assert _literal(tree) == pattern


@pytest.mark.parametrize(
    ("pattern", "lo", "hi"),
    [
        pytest.param("a{,3}", 0, 3, id="comma-n"),
        pytest.param("a{2,}", 2, None, id="m-comma"),
        pytest.param("a{,}", 0, None, id="comma-only"),
        pytest.param("a{03}", 3, 3, id="leading-zero"),
        pytest.param("(?x)a{1, 2}", 1, 2, id="verbose-spaces"),
    ],
)
def test_brace_quantifier_bounds(pattern: str, lo: int, hi: int | None) -> None:
    text = "a" * lo
    assert regex.fullmatch(pattern, text, regex.DOTALL) is not None
    tree = parse_pattern(pattern).root
    assert isinstance(tree, ast.Repeat)
    assert (tree.min, tree.max, tree.greedy) == (lo, hi, True)


def test_verbose_mode_drops_whitespace_and_comments() -> None:
    pattern = "(?x) a b  # a comment\n c\t# another\n"
    assert regex.fullmatch(pattern, "abc", regex.DOTALL) is not None
    assert _literal(parse_pattern(pattern).root) == "abc"


def test_verbose_mode_keeps_escaped_space() -> None:
    pattern = r"(?x)a\ b"
    assert regex.fullmatch(pattern, "a b", regex.DOTALL) is not None
    assert _literal(parse_pattern(pattern).root) == "a b"


def test_ignore_case_folds_kelvin_sign() -> None:
    kelvin = "\u212a"
    assert regex.fullmatch("(?i)k", kelvin, regex.DOTALL) is not None
    chars = parse_pattern("(?i)k").root
    assert isinstance(chars, ast.Chars)
    for ch in "kK" + kelvin:
        assert ord(ch) in chars.chars


def test_ignore_case_is_simple_folding_only() -> None:
    """Without FULLCASE, ß does not match "ss" (the dialect has no multi-char folds)."""
    assert regex.fullmatch("(?i)ß", "ss", regex.DOTALL) is None
    chars = parse_pattern("(?i)ß").root
    assert isinstance(chars, ast.Chars)
    assert ord("ẞ") in chars.chars


def test_dotall_is_on_by_default_and_can_be_scoped_off() -> None:
    assert regex.fullmatch(".", "\n", regex.DOTALL) is not None
    assert regex.fullmatch("(?-s:.)", "\n", regex.DOTALL) is None
    dot = parse_pattern(".").root
    assert isinstance(dot, ast.Chars) and ord("\n") in dot.chars
    dot_s = parse_pattern("(?s).").root
    assert isinstance(dot_s, ast.Chars) and ord("\n") in dot_s.chars
    scoped = parse_pattern("(?-s:.)").root
    assert isinstance(scoped, ast.Chars) and ord("\n") not in scoped.chars
    assert ord("x") in scoped.chars


def test_scoped_ignore_case_applies_only_inside_the_group() -> None:
    assert regex.fullmatch("(?i:a)b", "AB", regex.DOTALL) is None
    assert regex.fullmatch("(?i:a)b", "Ab", regex.DOTALL) is not None
    root = parse_pattern("(?i:a)b").root
    assert isinstance(root, ast.Concat)
    first, second = root.items
    assert ord("A") in first.chars and ord("B") not in second.chars


def test_scoped_ignore_case_off() -> None:
    assert regex.fullmatch("(?i)a(?-i:b)", "AB", regex.DOTALL) is None
    assert regex.fullmatch("(?i)a(?-i:b)", "Ab", regex.DOTALL) is not None
    root = parse_pattern("(?i)a(?-i:b)").root
    assert isinstance(root, ast.Concat)
    first, second = root.items
    assert ord("A") in first.chars and ord("B") not in second.chars
