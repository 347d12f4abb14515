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


def test_tables_mark_steps_that_keep_the_registers():
    """A step whose sources copy the state's registers in order is marked (None), so the
    scanner keeps its list; a step that renumbers, drops or adds one is not."""
    tables = Regex.from_data(json.loads(json.dumps(compile_regex(r"\s*<tool_call>").to_data())))
    dfa = tables.dfa
    marked = [
        (sid, c) for sid, row in enumerate(dfa.rows) if row is not None
        for c, cell in enumerate(row) if cell[1] is None
    ]
    assert marked  # inside "<tool_call>" the one attempt keeps its start
    for sid, c in marked:
        nxt, sources, _ = dfa.step(sid, c)  # step() answers with the sources as built
        assert sources and sources == tuple(range(len(sources)))
    # A state with no register cannot keep one: a step from an initial state never is.
    for sid in {dfa.initial(p) for p in range(3)}:
        assert all(cell[1] is not None for cell in dfa.rows[sid])


# Patterns where several attempts stay alive at once, so that steps drop registers.
OVERLAPPING = [
    r"\[TOOL_CALLS\](?P<name>[^\[]+)(?:\[CALL_ID\][^\[]*)?\[ARGS\]",
    r"\s*<tool_call>\s*(?P<name>[^\s<]+)\s*",
    r"to=functions\.(?P<name>[\w.]+).*?<\|message\|>",
]
PIECES = ["[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "<tool_call>", "to=functions.", "<|message|>",
          "[", "]", "<", " ", "\n", "a", "x", ".", ":", '"']


@pytest.mark.parametrize("pattern", PATTERNS + OVERLAPPING)
@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_scanners_on_tables_hold_the_lazy_dfas_registers(pattern, text):
    """Where a step is marked as keeping the registers, the list kept is the list the
    step would have built: the attempts' starts (which rebase reads) stay exact."""
    lazy = compile_regex(pattern)
    tables = Regex.from_data(json.loads(json.dumps(lazy.to_data())))
    a, b = lazy.scanner(), tables.scanner()
    for ch in text:
        a.feed(ch)
        b.feed(ch)
        assert (b.state, b.registers, b.best) == (a.state, a.registers, a.best)
