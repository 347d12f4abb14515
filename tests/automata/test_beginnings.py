"""The stdlib search of a pattern's beginnings says what ``regex`` says of a partial match.

A streamed tool-call header cut by the end of a long piece pends while the rest of the
text begins a match; the runtime asks the stdlib form of the pattern's beginnings
(``capture_pattern``'s ``prefix``, ``CompiledRegex.beginning``) instead of stepping the
header through the DFA in Python. That is only right if the form matches, to the end,
exactly the texts that ``regex.fullmatch(..., partial=True)`` accepts: every beginning of
a match, the whole match included, and nothing else. Checked differentially on random
patterns of the dialect and on the bundled Harmony header, at every cut of the text.
"""

from __future__ import annotations

import regex
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex
from rtcompiler.grammars import grammar

from ..sweeps import examples
from .strategies import patterns, texts_for

CHECK = settings(
    max_examples=examples(200, 600),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large,
    ],
)


def assert_beginnings(pattern: str, text: str) -> bool:
    """Whether the pattern has a form of its beginnings; if so, that it agrees with
    ``regex`` on every beginning of ``text``."""
    compiled = compile_regex(pattern)
    beginning = compiled.beginning()
    if beginning is None:
        return False
    reference = regex.compile(pattern, regex.DOTALL)
    for cut in range(len(text) + 1):
        piece = text[:cut]
        expected = reference.fullmatch(piece, partial=True) is not None
        # (the form is asked from a start inside a longer held text)
        assert (beginning("x" + piece, 1) is not None) == expected, (pattern, piece)
    return True


@CHECK
@given(st.data())
def test_beginnings_agree_with_regex_partial_matches(data: st.DataObject) -> None:
    pattern = data.draw(patterns(), label="pattern")
    text = data.draw(texts_for(pattern), label="text")
    event("has a form of its beginnings" if assert_beginnings(pattern, text) else "no form")


def test_the_harmony_header_pends_at_every_cut_and_not_after_a_wrong_character() -> None:
    pattern = grammar("gpt_oss:strict").spec["fields"]["tool_calls"]["open_pattern"]
    for header in (
        " to=functions.get_weather<|channel|>commentary json<|message|>",
        "<|channel|>commentary to=functions.search_web <|constrain|>json<|message|>",
    ):
        assert assert_beginnings(pattern, header)
        assert assert_beginnings(pattern, header[:20] + "<x" + header[20:])
