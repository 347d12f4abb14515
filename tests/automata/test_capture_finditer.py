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

import regex
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex
from rtcompiler.dialect import PatternError

from .strategies import patterns, texts_for

CHECK = settings(
    max_examples=800,
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


def test_tag_patterns_get_the_stdlib_form() -> None:
    # The bundled xml-inline patterns must take the fast path, or the speed-up is lost.
    for pattern in (
        r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>",
        r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>",
    ):
        rx = compile_regex(pattern)
        assert rx.group_finditer == rx._short_text_finditer  # the stdlib form, for short texts


def test_long_texts_leave_backtracking_for_the_linear_engine():
    # Thousands of unclosed tags make a backtracking finditer rescan the rest of the
    # text from each one (quadratic); past BACKTRACKING_LIMIT characters the DFA runs.
    pattern = r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>"
    # A private, uncached copy: this test explores its lazy DFA and swaps its stdlib
    # form, which must not leak into other users of compile_regex's cache.
    compiled = compile_regex.__wrapped__(pattern)
    assert compiled.captures is not None  # this pattern has a stdlib form
    calls = []
    stdlib = compiled.captures

    class Counting:
        def __getattr__(self, name):
            return getattr(stdlib, name)

        def finditer(self, text):
            calls.append(len(text))
            return stdlib.finditer(text)

    # compile_regex is cached: the counting stand-in must not outlive this test.
    compiled.captures = Counting()
    try:
        short = "<parameter=a>x" * 20 + "<parameter=b>\ny\n</parameter>"
        long = "<parameter=a>x" * 2000 + "<parameter=b>\ny\n</parameter>"
        for text in (short, long):
            got = [(m.span(), m.groupdict()) for m in compiled.group_finditer(text)]
            want = [(m.span(), m.groupdict()) for m in regex.finditer(pattern, text, regex.DOTALL)]
            assert got == want
        assert calls == [len(short)]
        assert len(long) > compiled.BACKTRACKING_LIMIT >= len(short)
        # A long text with few tags (a file body in one parameter) keeps the stdlib form:
        # few attempts can run long, so backtracking stays linear.
        few = "<parameter=path>\na.py\n</parameter>\n<parameter=body>\n" + "x = 1\n" * 2000
        few += "</parameter>"
        got = [(m.span(), m.groupdict()) for m in compiled.group_finditer(few)]
        assert got == [(m.span(), m.groupdict()) for m in regex.finditer(pattern, few, regex.DOTALL)]
        assert calls == [len(short), len(few)]
    finally:
        compiled.captures = stdlib
