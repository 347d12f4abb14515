"""The stdlib form of a pattern runs ``finditer`` as ``regex`` does.

Where :func:`rtcompiler.automata.capture.capture_pattern` gives a pattern a stdlib
``re`` form with exactly its group names, :attr:`CompiledRegex.group_finditer`
runs that form's ``finditer`` over a whole text (an xml-inline tag pattern over
a tool call's body) instead of stepping the DFA in Python. That is only right if
``re`` and ``regex`` agree on every match of the iteration: spans, groups, and
the empty-match rules between matches (the same since Python 3.7). This checks
it differentially, on random patterns of the dialect and on tag-pattern shapes.
Patterns without groups get a form too: a start anchor's spans come from it.
"""

from __future__ import annotations

import re

import pytest
import regex
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex, compile_tag_pattern
from rtcompiler.dialect import PatternError
from rtcompiler.dialect.charsets import CharSet
from rtcompiler.runtime.prefilter import ASTRAL_TURN, char_class_source

from ..sweeps import examples
from .strategies import (
    CHAR_TOKENS,
    Alt,
    Group,
    Repeat,
    Seq,
    _trees,
    char_classes,
    lits,
    patterns,
    render,
    texts_for,
)

CHECK = settings(
    max_examples=examples(300, 800),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


def _named(pattern: str) -> str:
    """``pattern`` with its first plain group named, so that it has a capture form."""
    i = pattern.find("(")
    while i != -1:
        if not pattern.startswith("(?", i) and (i == 0 or pattern[i - 1] != "\\"):
            return pattern[:i] + "(?P<key>" + pattern[i + 1 :]
        i = pattern.find("(", i + 1)
    return "(?P<key>" + pattern + ")"


def assert_same_iteration(pattern: str, text: str) -> None:
    try:
        expected = regex.compile(pattern, regex.DOTALL)
    except regex.error:
        assume(False)
        raise
    try:
        ours = compile_regex(pattern)
    except PatternError:
        assume(False)
        raise
    fast = ours.group_finditer != ours.finditer
    event(f"stdlib form: {fast}")
    want = [(m.span(), m.groupdict()) for m in expected.finditer(text)]
    got = [(m.span(), m.groupdict()) for m in ours.group_finditer(text)]
    assert got == want, (pattern, text, want, got)


TAG_SHAPES = st.sampled_from([
    r"<parameter=(?P<key>[^>]+)>\n?(?P<value>.*?)\n?</parameter>",
    r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>",
    r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>",
    r"<(?P<key>\w+)>(?P<value>.*?)</\w+>",
    r"<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>",
    r"(?P<key>[a-z_]*)=(?P<value>[^,]*),?",
    r"(?P<key>a*)(?P<value>b?)",
    r"<(?P<key>[^>]*)>(?:\n)?(?P<value>(?:x|y)?.*?)(?:\n)?</>",
])


@CHECK
@given(st.data())
def test_group_finditer_matches_regex_on_random_patterns(data: st.DataObject) -> None:
    pattern = data.draw(patterns(), label="pattern")
    if data.draw(st.booleans(), label="named"):
        pattern = _named(pattern)
    text = data.draw(texts_for(pattern), label="text")
    assert_same_iteration(pattern, text)


@CHECK
@given(st.data())
def test_group_finditer_matches_regex_on_tag_patterns(data: st.DataObject) -> None:
    pattern = data.draw(TAG_SHAPES, label="pattern")
    text = data.draw(texts_for(pattern, max_size=120), label="text")
    assert_same_iteration(pattern, text)


def test_bundled_tag_patterns_run_as_chains() -> None:
    # The bundled xml-inline patterns are chains of literals (automata/chain.py): exact
    # in one pass of str.find, whatever the text; GLM's has no linear stdlib form at all.
    for pattern, stdlib in (
        (r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>", True),
        (r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>", False),
    ):
        tag = compile_tag_pattern(pattern)
        assert tag.chain is not None and tag.regex is None
        assert (compile_regex(pattern).captures is not None) == stdlib


def test_long_texts_leave_backtracking_for_the_linear_engine():
    # Thousands of unclosed tags make a backtracking finditer read the rest of the
    # text from each one (quadratic); with more than LONG_ATTEMPTS_LIMIT of them, our
    # linear finditer runs instead.
    pattern = r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>"
    # A private, uncached copy: this test swaps its stdlib form, which must not leak
    # into other users of compile_regex's cache.
    compiled = compile_regex.__wrapped__(pattern)
    assert compiled.captures is not None  # this pattern has a stdlib form
    assert not compiled.apart  # `.*?` reads '<', where another attempt begins
    calls = []
    stdlib = compiled.captures

    class Counting:
        def __getattr__(self, name):
            return getattr(stdlib, name)

        def finditer(self, text):
            calls.append(len(text))
            return stdlib.finditer(text)

    compiled.captures = Counting()
    try:
        short = "<parameter=a>x" * 20 + "<parameter=b>\ny\n</parameter>"
        long = "<parameter=a>x" * 2000 + "<parameter=b>\ny\n</parameter>"
        for text in (short, long):
            got = [(m.span(), m.groupdict()) for m in compiled.group_finditer(text)]
            want = [(m.span(), m.groupdict()) for m in regex.finditer(pattern, text, regex.DOTALL)]
            assert got == want
        assert calls == [len(short)]
        # A long text with few tags (a file body in one parameter) keeps the stdlib form:
        # few attempts can run long, so backtracking stays linear.
        few = "<parameter=path>\na.py\n</parameter>\n<parameter=body>\n" + "x = 1\n" * 2000
        few += "</parameter>"
        got = [(m.span(), m.groupdict()) for m in compiled.group_finditer(few)]
        want = [(m.span(), m.groupdict()) for m in regex.finditer(pattern, few, regex.DOTALL)]
        assert got == want
        assert calls == [len(short), len(few)]
    finally:
        compiled.captures = stdlib


# -- lazy loops that step over what cannot begin the rest ----------------------------
#
# capture.py writes `[S]*?` followed by a rest that must begin with a character of F
# as atomic runs of S∖F between lazy turns on S∩F. These check that every search,
# match and iteration of such a form is regex's, and that the rewrite stays where the
# speed-up matters and away from where it would be wrong.

QWEN3_CODER_TAG = r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>"
REWRITTEN = "(?=("  # an atomic run: a lookahead's group read back


def _source(pattern: str) -> str | None:
    source = compile_regex(pattern).capture_source
    return None if source is None else source["source"]


def _groups(found, names: dict[str, list[str]]) -> dict | None:
    """Our group values from a stdlib match: of a name's aliases, the one that took part."""
    if found is None:
        return None
    values = found.groupdict()
    out = {}
    for name, aliases in names.items():
        out[name] = None
        for alias in aliases:
            if values[alias] is not None:
                out[name] = values[alias]
    return out


def assert_same_captures(pattern: str, text: str, cuts=None) -> None:
    """The stdlib form answers as regex: finditer, and match and search within bounds."""
    expected = regex.compile(pattern, regex.DOTALL)
    ours = compile_regex(pattern)
    form, names = ours.captures, ours.capture_names
    assert form is not None, pattern
    want = [(m.span(), m.groupdict()) for m in expected.finditer(text)]
    got = [(m.span(), _groups(m, names)) for m in form.finditer(text)]
    assert got == want, (pattern, text)
    n = len(text)
    for pos, endpos in cuts if cuts is not None else ((p, e) for p in range(n + 1) for e in (p, n)):
        for how in ("match", "search"):
            w = getattr(expected, how)(text, pos, endpos)
            g = getattr(form, how)(text, pos, endpos)
            want_one = None if w is None else (w.span(), w.groupdict())
            got_one = None if g is None else (g.span(), _groups(g, names))
            assert got_one == want_one, (pattern, text, how, pos, endpos)
    assert [(m.span(), m.groupdict()) for m in ours.group_finditer(text)] == want


_STOPS = ("\n", "<", "/", "a", "b", "x", "y", "k", "\u212a", " ", "é")
LOOP_ITEMS = st.one_of(
    char_classes(),
    CHAR_TOKENS,
    lits(st.sampled_from(_STOPS)),
)
TAILS = st.one_of(
    lits(),  # </parameter>
    st.builds(  # \n?</parameter>
        lambda opt, lit: Seq((Repeat(opt, 0, 1, False, "symbol"), lit)),
        lits(st.sampled_from(_STOPS)),
        lits(),
    ),
    st.lists(lits(), min_size=2, max_size=3).map(lambda xs: Alt(tuple(xs))),  # (?:x|yz)
    char_classes(),
    st.just(Seq(())),  # nothing follows: must stay a plain lazy loop
    lits().map(lambda lit: Repeat(lit, 0, 1, False, "symbol")),  # only an optional part
    _trees(2),  # anything: nullable, anchored, lookaheads, more loops
)


@st.composite
def lazy_loop_patterns(draw: st.DrawFn) -> str:
    """A lazy loop on a character set inside groups, with a rest inside and outside them."""
    item = draw(LOOP_ITEMS)
    least = draw(st.sampled_from((0, 0, 1, 1, 2)))
    spelling = "symbol" if least < 2 else "brace"
    node = Repeat(item, least, None, True, spelling)
    if draw(st.booleans()):
        node = Group("named", node, 2)  # `body`
    node = Seq((node, draw(TAILS)))
    wrap = draw(st.sampled_from(("none", "capture", "named", "optional", "alternative")))
    if wrap == "capture":
        node = Group("capture", node)
    elif wrap == "named":
        node = Group("named", node, 1)  # `args`
    elif wrap == "optional":
        node = Repeat(Group("noncapture", node), 0, 1, draw(st.booleans()), "symbol")
    elif wrap == "alternative":
        other = draw(lits())
        alts = (node, other) if draw(st.booleans()) else (other, node)
        node = Alt(alts)
    head = draw(st.one_of(st.just(Seq(())), lits(), char_classes()))
    root = Seq((head, node, draw(TAILS)))
    flags = draw(st.sampled_from(("",) * 6 + ("(?i)",)))
    return render(root, flags)


@CHECK
@given(st.data())
def test_lazy_loops_keep_regex_answers(data: st.DataObject) -> None:
    pattern = data.draw(lazy_loop_patterns(), label="pattern")
    try:
        ours = compile_regex(pattern)
    except PatternError:
        assume(False)
        raise
    assume(ours.captures is not None)
    event(f"rewritten: {REWRITTEN in ours.captures.pattern}")
    text = data.draw(texts_for(pattern, max_size=80), label="text")
    n = len(text)
    cut = st.integers(0, n)
    cuts = [tuple(sorted(data.draw(st.tuples(cut, cut), label="cut"))) for _ in range(3)]
    assert_same_captures(pattern, text, cuts + [(0, n)])


LAZY_CASES = [
    (QWEN3_CODER_TAG, [
        "<parameter=city>\nParis\n</parameter>",
        "<parameter=a>x</parameter><parameter=b>\ny\n</parameter>",
        "<parameter=code>\nif a < b:\n    return '</param'\n</parameter>\n",
        "<parameter=code>\nx\n\n</parameter>",
        "<parameter=code>\n\n\n</parameter>",
        "<parameter=code>\n</parameter>",
        "<parameter=code></parameter>",
        "<parameter=code>\n<\n</\n</p\n</parameter\n</parameter>",
        "<parameter=a>\nunclosed\n<parameter=b>\nclosed\n</parameter>",
        "<parameter=a>\nnever closed\n</parameter",
        "<parameter=a>x</parameter</parameter>",
        "<parameter=a>\n<parameter=b>v</parameter>\n</parameter>",
        "<parameter=é>\r\nZürich 🙂\r\n</parameter>\n",
        "<parameter=\u212a>\n</PARAMETER>\n</parameter>",
    ]),
    (r"a.*?b", ["ab", "a\nxb", "aaab", "a", "axxbxxb", "ba", "a\u212ab"]),
    (r"(?P<v>.*?)(?:x|yz)", ["x", "yz", "y", "abyqyz", "abyzx", "", "aaa", "yyyz"]),
    (r"(?P<v>.+?)(?:\n|</)", ["\n", "a\n", "</", "a</", "\n\n", "<</x\n"]),
    (r"(?P<v>[a-z]+?)\d", ["abc1", "1", "a", "ab9c2", "A1b2"]),
    (r"(?P<v>\w{2,}?)_?\.", ["ab.", "a.", "abc_.", "a_b_.", "__."]),
    (r"((?P<v>a.*?)b)c", ["abc", "abbc", "abxbc", "ab", "abcabc", "abbbbc"]),
    (r"(?:<(?P<v>.*?)>)?x", ["<a>x", "x", "<a>", "<a>y<b>x", "<<>>x"]),
    (r"(?:(?P<v>.*?)z|q)y", ["zy", "azqy", "qy", "azzy", "y"]),
    (r"(?i)k.*?K", ["kk", "KK", "k\u212a", "kxk", "\u212ax\u212a"]),
    (r"(?P<v>[^\n]*?)\n", ["a\nb\n", "\n", "abc"]),
]


@pytest.mark.parametrize(("pattern", "texts"), LAZY_CASES)
def test_lazy_loop_cases(pattern: str, texts: list[str]) -> None:
    assert REWRITTEN in _source(pattern), pattern
    for text in texts:
        assert_same_captures(pattern, text)


@pytest.mark.parametrize("pattern", [
    r"a.*?",  # at the end: the lazy loop's empty stop is the match
    r"a(?P<v>.*?)",
    r"a.*?b?",  # only optional parts follow
    r"a.*?(?:b|)",
    r"(?:a.*?|b)",  # the end of an alternative that ends the pattern
    r"(?:a(?P<v>.*?))?",
    r"a[bc]*?[a-d]",  # every character may begin the rest: nothing to step over
    r"(?P<v>[ab]*?)[ab]c",
    r"a.{0,5}?b",  # a bounded lazy loop stays as it is
    r"a(?:bc)*?d",  # a loop over a sequence, not a character set
])
def test_lazy_loops_left_alone(pattern: str) -> None:
    source = _source(pattern)
    assert source is not None
    assert REWRITTEN not in source, pattern
    for text in ("a", "ab", "abd", "axbcd", "a\nb", "ba", "abbcd", ""):
        assert_same_captures(pattern, text)


def test_qwen3_coder_tag_steps_over_characters_that_cannot_close_it() -> None:
    # Without the rewrite the value's lazy loop tries `\n?</parameter>` at every
    # character: three times slower on a 2 K-character argument.
    source = _source(QWEN3_CODER_TAG)
    stops = char_class_source(CharSet.of("\n<").ranges)
    run = char_class_source(CharSet.of("\n<").complement().ranges)
    assert f"(?P<value>(?:(?=({run}*))\\3(?:{stops}(?=({run}*))\\4)*?))" in source


def test_stdlib_forms_run_on_python_3_10() -> None:
    # Generated parsers promise Python >= 3.10, whose re has neither possessive
    # quantifiers nor atomic groups.
    for pattern, _ in LAZY_CASES:
        source = _source(pattern)
        assert not re.search(r"[*+?}]\+|\(\?>", source), pattern


@pytest.mark.parametrize("pattern", [
    r"<(?P<v>.*?)>(?P<w>[^<]*?)</",  # '>' read by both loops: quadratic on "<>>>>…"
    r"a.*?b*",  # a run of b split between the loops
    r"a.*?.*?",
    r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>",  # spaces split three ways: cubic
])
def test_patterns_backtracking_cannot_run_linearly_get_no_stdlib_form(pattern: str) -> None:
    ours = compile_regex(pattern)
    assert ours.captures is None
    for text in ("<a>b</", "<a><b></", "a" + "b" * 30, "<arg_key>" + " " * 40 + "</arg_key>"):
        want = [(m.span(), m.groupdict()) for m in regex.finditer(pattern, text, regex.DOTALL)]
        assert [(m.span(), m.groupdict()) for m in ours.group_finditer(text)] == want


def test_a_lookahead_of_strings_gets_a_stdlib_form_when_nothing_is_captured() -> None:
    # Qwen3's and Kimi K2's call closes: the lookahead reads a bounded string at one place.
    for pattern in (r"</tool_call>\s*|(?=<\|im_end\|>)",
                    r"\s*(?:<\|tool_call_end\|>\s*|(?=<\|tool_calls?_section_end\|>))"):
        ours = compile_regex(pattern)
        assert ours.capture_source is not None and ours.group_finditer != ours.finditer
        text = " a</tool_call>\n <|im_end|> <|tool_call_end|> \n<|tool_calls_section_end|>"
        want = [m.span() for m in regex.finditer(pattern, text, regex.DOTALL)]
        assert want and [m.span() for m in ours.group_finditer(text)] == want
    # With groups too (Mistral's call header ends with "(?=\{)").
    ours = compile_regex(r"\[TOOL_CALLS\](?P<name>[^\[{]+)(?:\[ARGS\]|(?=\{))")
    assert ours.capture_source is not None
    text = "[TOOL_CALLS]f{} [TOOL_CALLS]g[ARGS]{}"
    want = [(m.span(), m.groupdict()) for m in regex.finditer(ours.pattern, text, regex.DOTALL)]
    assert len(want) == 2
    assert [(m.span(), m.groupdict()) for m in ours.group_finditer(text)] == want
    # A lookahead with a loop gets a form right over a whole text only (a stream may end
    # inside the run); none when the run may cross where an attempt begins (each attempt
    # would read the rest of the text again), and none for a negative lookahead.
    form = compile_regex(r"x(?=y*z)").capture_source
    assert form is not None and form["whole"] and form["tail"]
    for pattern in (r"x(?=.*z)", r"x(?=[xy]*z)", r"x(?!y)"):
        assert compile_regex(pattern).capture_source is None, pattern
    # Attempts at literals read apart when no loop reads where a literal begins: then a
    # whole-text parse may let them fail any number of times (WholePass.complete).
    assert compile_regex(r"\s*\}(?=\s*;)").capture_source["runs"]
    # (A loop right before a lookahead's loop over the same characters: no form.)
    assert compile_regex(r"\s*\}\s*(?=\s*;)").capture_source is None
    assert "runs" not in compile_regex(r"\{[^}]*\}").capture_source


# Word characters past U+FFFF (mathematical italic x, Deseret), digits there (double-struck
# zero), and astral characters in no class (an emoji); with ASCII and BMP ones.
_ASTRAL_TEXT = st.text(
    alphabet=st.sampled_from(["a", "_", "1", ".", " ", "<", "é", "\u212a", "\U0001d465",
                              "\U00010400", "\U0001d7d8", "\U0001f642", "x", "b"]),
    max_size=24,
)
ASTRAL_RUNS = [
    r"to=f\.(?P<name>[\w.]+)<",  # a Harmony header's name
    r"(?P<name>\w+)",
    r"(?P<n>\d*)x",
    r"(?P<a>\w{2,})(?P<b>\w)b",  # the run gives characters back, last first
    r"(?P<a>\w*)(?P<b>\w*)",
    r"a(?P<v>\w*?)b",  # a lazy loop's run of characters that cannot stop it
    r"(?P<v>\w+)-(?P<w>\d+)",
]


@pytest.mark.parametrize("pattern", ASTRAL_RUNS)
def test_runs_of_classes_with_many_astral_ranges_keep_regex_answers(pattern: str) -> None:
    assert ASTRAL_TURN in _source(pattern), pattern

    @settings(max_examples=examples(150, 400), deadline=None)
    @given(text=_ASTRAL_TEXT)
    def agrees(text: str) -> None:
        assert_same_captures(pattern, text)

    agrees()


def test_a_bmp_character_that_ends_a_run_is_not_compared_with_astral_ranges() -> None:
    # sre goes through a class's ranges past U+FFFF one by one: the run's end, most often
    # an ASCII character, would meet every one of \w's (about 0.4 us a match). Outside
    # the turn an astral character takes, the form holds no such range.
    source = _source(r"to=f\.(?P<name>[\w.]+)<")
    turns = re.escape(ASTRAL_TURN) + r"\[[^\]]*\]\)"
    assert len(re.findall(turns, source)) == 2  # the first character, then the rest
    assert not re.search(r"\\U000[1-9a-f]|\\U0010", re.sub(turns, "", source))
    # The head of a lazy tail (a Harmony header with its ".*?<|message|>") too.
    head = compile_regex(r"to=f\.(?P<name>[\w.]+).*?<m>").lazy_tail[0]
    assert ASTRAL_TURN in head.pattern
    expected = regex.compile(r"to=f\.(?P<name>[\w.]+)")
    for name in ("get_weather", "x\U0001d465.y", "\U00010400", "a\U0001f642", "\U0001d7d8_1"):
        text = f"to=f.{name} <m>"
        want, got = expected.match(text), head.match(text)
        assert got.span() == want.span() and got["name"] == want["name"], name
    # A class with few such ranges stays one class.
    assert ASTRAL_TURN not in _source(r"(?P<v>[a-z\U0001d465]+)x")
