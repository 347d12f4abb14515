"""Differential tests: ``compile_regex`` must answer exactly what ``regex`` answers.

For a drawn pattern and text, every start position is searched, plain and with
``partial=True``, by ``regex.compile(p, regex.DOTALL)`` and by our engine, and the
answers (span, partial flag, named groups) must be equal.

Run longer or reproduce with pytest's hypothesis options, e.g.
``--hypothesis-seed=1234`` or ``--hypothesis-show-statistics``.
"""

from __future__ import annotations

import re
from typing import Any

import regex
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex
from rtcompiler.dialect import PatternError

from .strategies import delimiter_patterns, nullable_loops, patterns, texts_for

# The issue asks for at least 2,000 examples per property in the default run.
DIFFERENTIAL = settings(
    max_examples=2000,
    deadline=None,
    derandomize=False,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)

Answer = Any  # None or (span, partial, groupdict)


def answer(m: Any) -> Answer:
    """What a match says, in a form both engines' matches reduce to."""
    if m is None:
        return None
    return (m.span(), bool(m.partial), m.groupdict())


def reference(pattern: str) -> Any:
    """``regex``'s compiled pattern, or skip the example if ``regex`` rejects it."""
    try:
        return regex.compile(pattern, regex.DOTALL)
    except regex.error:
        assume(False)  # the generator should (nearly) never get here
        raise


_GLOBAL_FLAGS = re.compile(r"(?:\(\?[a-z]+\))*")


def partial_reference_source(pattern: str) -> str:
    r"""The pattern whose ``regex`` answers are the oracle for ``partial=True``.

    regex bug (2026.5.9): with DOTALL, a pattern that opens on an "any character"
    node (``.``, ``[\s\S]``, also inside ``(?:...)``) answers nonsense to a partial
    search that reaches the end of the text: ``.`` on '' gives span (0, 1), not
    partial; ``.+$`` gives (0, 4294967296); ``.$^`` gives None instead of a partial
    match at (0, 0). An empty capturing group in front turns that code path off
    without changing what matches, the (named) groups, or anchoring (the pattern
    does not open on an anchor), so for those patterns ask ``()`` + pattern instead.
    """
    flags = _GLOBAL_FLAGS.match(pattern).group()  # type: ignore[union-attr]
    body = pattern[len(flags) :]
    head = body.lstrip(" ") if "x" in flags else body
    while head.startswith(("(?:", "(?i:")):
        head = head[head.index(":") + 1 :]
    if head.startswith((".", "[")):
        return flags + "()" + body
    return pattern


def assert_same_everywhere(pattern: str, text: str) -> None:
    plain = reference(pattern)
    partial_source = partial_reference_source(pattern)
    partial_ref = plain if partial_source == pattern else reference(partial_source)
    try:
        ours = compile_regex(pattern)
    except PatternError as e:
        raise AssertionError(
            f"compile_regex rejected a supported pattern\n  pattern: {pattern!r}\n  error: {e}"
        ) from None
    for pos in range(len(text) + 2):
        for partial in (False, True):
            want = answer((partial_ref if partial else plain).search(text, pos, partial=partial))
            if want is not None and want[0][1] > len(text):
                # The bug above in a shape partial_reference_source misses: no oracle.
                event("regex answered an out-of-range span")
                continue
            got = answer(ours.search(text, pos, partial=partial))
            oracle = partial_source if partial else pattern
            asked_as = f"  (asked as {oracle!r})" if oracle != pattern else ""
            assert got == want, (
                "compile_regex disagrees with regex\n"
                f"  pattern: {pattern!r}\n"
                f"  text:    {text!r}\n"
                f"  call:    .search(text, {pos}, partial={partial})\n"
                f"  regex:   {want}{asked_as}\n"
                f"  ours:    {got}"
            )


@DIFFERENTIAL
@given(st.data())
def test_same_answers_as_regex(data: st.DataObject) -> None:
    pattern = data.draw(patterns(), label="pattern")
    text = data.draw(texts_for(pattern), label="text")
    assert_same_everywhere(pattern, text)


@DIFFERENTIAL
@given(st.data())
def test_same_answers_on_delimiter_shapes(data: st.DataObject) -> None:
    pattern = data.draw(delimiter_patterns(), label="pattern")
    text = data.draw(texts_for(pattern, max_size=200), label="text")
    assert_same_everywhere(pattern, text)


@DIFFERENTIAL
@given(nullable_loops())
def test_nullable_loops_are_refused(pattern: str) -> None:
    # Only the documented restriction may make us refuse what regex accepts.
    reference(pattern)
    try:
        compile_regex(pattern)
    except PatternError as e:
        assert "empty" in str(e), f"pattern {pattern!r} refused for another reason: {e}"
    else:
        raise AssertionError(f"compile_regex accepted a loop over a nullable body: {pattern!r}")
