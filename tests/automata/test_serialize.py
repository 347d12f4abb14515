"""The automata as plain data: JSON round trip, and the tables answer alike."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.automata import Regex, compile_regex

PATTERNS = [
    r"\s*<tool_call>",
    r"</function>\s*</tool_call>",
    r"to=functions\.(?P<name>[\w.]+).*?<\|message\|>",
    r"(?i)<\|?im_end\|?>|\Z",
    r"a(?=bc)|\bx$|(?!q)y+?",
    r"\[TOOL_CALLS\](?P<name>[^\[]+)\[ARGS\]",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_json_round_trip_is_exact(pattern):
    data = compile_regex(pattern).to_data()
    text = json.dumps(data, sort_keys=True)
    again = Regex.from_data(json.loads(text))
    assert again.dfa.to_data() == data["dfa"]
    assert again.nfa.states == compile_regex(pattern).nfa.states
    # Deterministic: compiling afresh gives the same bytes.
    compile_regex.cache_clear()
    assert json.dumps(compile_regex(pattern).to_data(), sort_keys=True) == text


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet="<>|/[]_\\ \n.=abcxyqtolmsnTOLCARGSéΩ", max_size=30))
def test_tables_answer_like_the_lazy_dfa(pattern, text):
    lazy = compile_regex(pattern)
    tables = Regex.from_data(json.loads(json.dumps(lazy.to_data())))
    for pos in range(len(text) + 1):
        for partial in (False, True):
            assert tables.search(text, pos, partial) == lazy.search(text, pos, partial)


def test_from_data_refuses_other_formats():
    with pytest.raises(ValueError, match="format"):
        Regex.from_data({"format": "something-else"})
