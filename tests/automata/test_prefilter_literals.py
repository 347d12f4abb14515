"""The prefilter's literals run on through groups of plain strings.

``<\\|channel\\|>(?:commentary|analysis) to=`` gets the literals
``<|channel|>analysis to=`` and ``<|channel|>commentary to=``, not ``<|channel|>``
alone, which also begins every other gpt-oss channel header. The facts the runtime
relies on must still hold for every text: every match begins with a literal after
its lead, and so does every attempt still alive past ``reach`` characters. The
tree of the literals' beginnings (``_beginnings``) must spell exactly their proper
beginnings.
"""

from __future__ import annotations

import re

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex
from rtcompiler.automata.prefilter import MAX_LITERALS
from rtcompiler.runtime.prefilter import Prefilter, _beginnings

ALPHABET = "ab<| "
WORDS = st.text(ALPHABET, min_size=1, max_size=3)


def test_a_group_of_plain_strings_extends_the_literal():
    facts = compile_regex(
        r"<\|channel\|>(?:commentary|analysis) to=functions\.(?P<name>\w+)"
    ).prefilter_facts
    assert facts["literals"] == [
        "<|channel|>analysis to=functions.", "<|channel|>commentary to=functions.",
    ]


def test_the_literals_stop_growing_where_they_would_become_too_many():
    # 3 x 3 = 9 strings after the second group: more than MAX_LITERALS (8).
    assert MAX_LITERALS == 8
    facts = compile_regex("x(?:a|b|c)y(?:d|e|f)z").prefilter_facts
    assert facts["literals"] == ["xay", "xby", "xcy"]
    # A group that is not plain strings ends the literal where it begins.
    assert compile_regex("x(?:a|b+)y").prefilter_facts["literals"] == ["x"]
    # An empty alternative is a plain string too.
    assert compile_regex("x(?:a|)y").prefilter_facts["literals"] == ["xay", "xy"]


def test_an_optional_part_brings_its_literal_and_the_one_after_it():
    # Kimi K2's call header: "<|tool_calls_section_begin|>" may come first, then
    # "<|tool_call_begin|>"; a match holds one of the two.
    facts = compile_regex(r"(?:<a>\s*)?<b>x").prefilter_facts
    assert facts["literals"] == ["<a>", "<b>x"] and facts["lead"] == 0
    # A lookahead's strings may hold an optional part too: its strings are all of them.
    facts = compile_regex(
        r"\s*(?:<\|tool_call_end\|>\s*|(?=<\|tool_calls?_section_end\|>))"
    ).prefilter_facts
    assert facts["literals"] == [
        "<|tool_call_end|>", "<|tool_call_section_end|>", "<|tool_calls_section_end|>",
    ]
    assert facts["lead_is_loop"]


def test_a_lookahead_of_a_literal_begins_its_attempts_at_the_literal():
    # Qwen3's call close: every attempt reads a literal from where it begins, the
    # lookahead's too, so what pends in text without one is a literal's beginning at
    # the end (the stream's quick path holds "</too" without asking the watchers).
    for pattern in (r"</tool_call>\s*|(?=<\|im_end\|>)", r"(?=<tool_call>)|</think>\n",
                    r"<\|end\|>|<\|call\|>|(?=<\|start\|>)"):
        assert compile_regex(pattern).prefilter_facts["bare"], pattern
    # Not a negative one (it matches where no literal is: no prefilter at all), nor
    # one whose own attempts may begin before a literal.
    for pattern in (r"</a>|(?!<b>)", r"</a>|(?=\s*<b>)", r"</a>|(?=<b>|c*)"):
        facts = compile_regex(pattern).prefilter_facts
        assert facts is None or not facts["bare"], pattern


def test_a_lookahead_of_patterns_takes_the_literals_they_begin_with():
    # A loop inside the lookahead used to leave the pattern without a prefilter, and so
    # without a stdlib form: every character stepped in Python (a Qwen3-Coder close
    # written so parsed 16x slower). Each branch of it begins with a literal.
    rx = compile_regex(r"</tool_call>\s*|(?=<\|im_end\|>|<tool_call>\s*<function=)")
    facts = rx.prefilter_facts
    assert facts["literals"] == ["</tool_call>", "<tool_call>", "<|im_end|>"]
    assert facts["lead"] == 0 and not facts["lead_ranges"] and facts["bare"]
    assert rx.captures is not None
    # Where the lookahead's branches begin with a run of lead characters, so does the
    # attempt: it begins in the run before the literal.
    facts = compile_regex(r"(?=\w+x)abc").prefilter_facts
    assert facts["literals"] == ["x"] and facts["lead_ranges"] and not facts["bare"]


def test_an_alternation_without_a_literal_of_its_own_takes_the_one_after_it():
    # Llama 3's call open: "^\s*" holds no literal, but "{" follows every alternative;
    # "^" consumes nothing, so it only narrows where a match begins.
    facts = compile_regex(r"(?:^\s*|<\|python_tag\|>\s*|;\s*)\{").prefilter_facts
    assert facts["literals"] == [";", "<|python_tag|>", "{"]
    assert facts["lead"] == 0 and facts["lead_ranges"]
    assert not facts["lead_is_loop"] and not facts["bare"]  # the automaton decides


def test_an_alternation_of_lead_loops_then_literals_has_a_loop_lead():
    # Llama 3's call close: each alternative is "\s*" then "}" at once, so what pends in
    # text without "}" is the trailing run of spaces, as for one such pattern.
    facts = compile_regex(r"\s*\}\s*(?:<e>|$)|\s*\}(?=[ \t]*\n)").prefilter_facts
    assert facts["lead_is_loop"]
    # Not when an alternative has no lead, or another one.
    for pattern in (r"\s*\}|;", r"\s*\}| *;"):
        assert not compile_regex(pattern).prefilter_facts["lead_is_loop"], pattern


@st.composite
def _patterns(draw):
    """``[lead] first (?:w|w...) middle (?:w|w...) [rest]``, and a text made of its
    pieces (so that it matches, nearly matches or pends) and a little noise."""
    parts = []
    pieces = [" ", "b", "<"]
    lead = draw(st.sampled_from(["", r"\s*", " ?", r"(?:<b\s*)?", r"(?:^\s*|;\s*)"]))
    parts.append(lead)
    first = draw(WORDS)
    pieces.append(first)
    parts.append(re.escape(first))
    for _ in range(draw(st.integers(1, 2))):
        options = draw(st.lists(st.text(ALPHABET, max_size=3), min_size=1, max_size=3))
        pieces.extend(options)
        parts.append("(?:" + "|".join(re.escape(o) for o in options) + ")")
        middle = draw(st.text(ALPHABET, max_size=2))
        pieces.append(middle)
        parts.append(re.escape(middle))
    parts.append(draw(st.sampled_from(["", "b+", "(?:a|b*)<", r"\w"])))
    text = "".join(draw(st.lists(st.sampled_from(pieces), max_size=10)))
    return "".join(parts), text


@settings(deadline=None)  # (the first example compiles; on a loaded machine that took 265 ms)
@given(case=_patterns())
def test_every_match_and_long_attempt_holds_a_literal_after_its_lead(case):
    pattern, text = case
    facts = compile_regex(pattern).prefilter_facts
    if facts is None:
        return
    literals = facts["literals"]
    lead_chars = re.compile(
        "[" + "".join(re.escape(chr(c)) for lo, hi in facts["lead_ranges"]
                      for c in range(lo, hi + 1)) + "]"
    ) if facts["lead_ranges"] else None
    reach = max(map(len, literals)) - 1 + facts["lead"]
    compiled = regex.compile(pattern)

    def holds_a_literal(start: int, stop: int) -> bool:
        # A literal begins after at most ``lead`` characters, or after lead characters only.
        for at in range(start, stop):
            if any(text.startswith(s, at) and at + len(s) <= stop for s in literals):
                return True
            if at - start >= facts["lead"] and (
                lead_chars is None or not lead_chars.fullmatch(text[at])
            ):
                return False
        return False

    def lead_then_beginning(start: int, stop: int) -> bool:
        # Behind a lead loop an attempt may live on in lead characters, then a
        # literal's beginning, without a whole literal yet.
        if lead_chars is None:
            return False
        at = start
        while True:
            # (The run may end anywhere: a literal can begin with a lead character, as
            # " <|" does after "\s*".)
            if any(s.startswith(text[at:stop]) for s in literals):
                return True
            if at == stop or not lead_chars.fullmatch(text[at]):
                return False
            at += 1

    for start in range(len(text) + 1):
        m = compiled.match(text, start)
        if m is not None and m.end() > start:
            assert holds_a_literal(start, m.end()), (pattern, text, start, m)
        for stop in range(start + reach + 1, len(text) + 1):
            # An attempt alive at ``stop``: the text from ``start`` begins a match.
            if compiled.fullmatch(text, start, stop, partial=True) is not None:
                assert holds_a_literal(start, stop) or lead_then_beginning(start, stop), (
                    pattern, text, start, stop)


@given(literals=st.lists(st.text("ab<|", min_size=1, max_size=6), min_size=1, max_size=4),
       text=st.text("ab<|", max_size=7))
def test_the_tree_of_beginnings_spells_exactly_the_proper_beginnings(literals, text):
    source = _beginnings(literals)
    expected = any(0 < len(text) < len(s) and s.startswith(text) for s in literals)
    if source is None:
        assert not expected
        return
    assert (re.fullmatch(source, text, re.DOTALL) is not None) == expected


def test_a_literal_too_long_for_a_tree_gets_the_flat_list():
    long = "<" + "x" * 150 + ">"
    source = _beginnings([long, "<y>"])
    assert "(?:" not in source  # flat, no nesting a hundred groups deep
    assert re.fullmatch(source, "<" + "x" * 149)
    assert re.fullmatch(source, "<y")
    assert not re.fullmatch(source, long)


def test_a_watchers_beginnings_pend_where_a_match_could_still_begin():
    pre = Prefilter({"literals": ["<|channel|>analysis to=", "<|channel|>commentary to="],
                     "lead": 0, "lead_ranges": [], "bare": True})
    assert pre.pending("x <|channel|>comm", 0) == 2
    assert pre.pending("x <|channel|>commentary:", 0) == len("x <|channel|>commentary:")
