"""Compile-time stages that run once per pattern do work in proportion to it.

Counted as Python lines executed (sys.settrace) or as the size of what is built:
the alphabet asked every character set about every interval of the code space, and
the prefilter spelled out every beginning of a long literal as a flat alternation
(quadratic in its length, compiled by ``sre`` at every import of the module).
"""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import ResponseParser as ReferenceParser
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler import compile_template
from rtcompiler.automata import alphabet, compile_regex
from rtcompiler.automata.alphabet import Alphabet
from rtcompiler.automata.prefilter import MAX_LITERAL_LENGTH
from rtcompiler.dialect import CharSet


def _lines_run(function, *args) -> int:
    count = [0]
    code = alphabet.__file__

    def trace(frame, event, arg):
        if frame.f_code.co_filename != code:
            return None
        if event == "line":
            count[0] += 1
        return trace

    sys.settrace(trace)
    try:
        function(*args)
    finally:
        sys.settrace(None)
    return count[0]


def test_the_alphabet_of_many_one_character_sets_is_built_in_proportion():
    """A list of n CJK literals has n one-character sets cutting the code space in 2n
    intervals; each set was asked about each interval (n * 2n)."""
    def sets(n: int) -> list[CharSet]:
        return [CharSet.of(chr(0x4E00 + 2 * i)) for i in range(n)]

    work = [_lines_run(Alphabet.build, sets(n), None) for n in (250, 1000)]
    assert work[1] <= 5 * work[0], work
    built = Alphabet.build(sets(1000), None)
    assert built.size == 1001  # each character a class of its own, and the rest
    assert all(len(classes) == 1 for classes in built.accepts)


def test_a_long_literal_gives_prefilter_patterns_in_proportion():
    """A 1,999-character literal: the prefilter keeps its first 100 characters, so the
    patterns a module compiles from its beginnings are a tree of that depth; the flat
    list of all 1,998 beginnings was 2 million characters (a minute of sre compiling,
    at import)."""
    text = ("lorem ipsum dolor sit amet, " * 80)[:1999]
    pre = compile_regex(text).prefilter
    assert pre.literals == (text[:MAX_LITERAL_LENGTH],) and not pre.exact
    assert len(pre.hold) < 10 * MAX_LITERAL_LENGTH
    assert len(pre.danger) < 10 * MAX_LITERAL_LENGTH
    # The facts still hold: the text is found, and its beginning at the end pends.
    rx = compile_regex(text)
    assert rx.search("x" + text + "y").span() == (1, 2000)
    assert rx.search("x" + text[:1500], partial=True).span() == (1, 1501)


# Delimiters longer than the prefilter keeps: a literal close of 150 characters, and a
# pattern whose required literal is as long. Streamed in any chunks, the messages and
# events are the reference's.
LONG = "<|" + "end of a very long turn marker " * 5 + "|>"
LONG_SPEC = {
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<call (?P<name>\w+)>" + re.escape(LONG[:120]),
            "close": "</call>", "transform": {"name": "{name}", "body": "{content}"},
        },
        "content": {"close": LONG},
    },
}
LONG_PIECES = [LONG, LONG[:60], LONG[60:130], LONG[130:], LONG[:-1], "<call f>", "</call>",
               "x", " ", "<", "<|end of"]


def _events(parser, chunks):
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    return message, events + final


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.sampled_from(LONG_PIECES), max_size=10), cuts=st.data())
def test_long_delimiters_stream_as_the_reference_does(parts, cuts):
    text = "".join(parts)
    points = sorted(cuts.draw(st.lists(st.integers(0, len(text)), max_size=6), label="cuts"))
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    ours = compile_template(LONG_SPEC)
    reference = load_response_template(LONG_SPEC)
    try:
        want = ("ok", _events(ReferenceParser(reference, prefix=""), chunks))
    except Exception as e:  # the exception's type is the answer
        want = ("error", type(e))
    try:
        got = ("ok", _events(ours.response_parser(""), chunks))
    except Exception as e:
        got = ("error", type(e))
    assert got == want
