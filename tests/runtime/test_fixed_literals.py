"""Delimiters of literals none of which begins another skip the scanner (``fixed_search``).

Their answers must be exactly the scanner's, which the differential suites hold to
``regex``: here the same template runs twice in one process, once with the shortcut
and once with every delimiter on its scanner, over texts built from the literals'
pieces, cut into random chunks.
"""

from __future__ import annotations

import types

from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.codegen import generate_module
from rtcompiler.template import load_template

from ..sweeps import examples

PIECES = [
    "<", "|", "e", "n", "d", ">", "x", " ", "\n", "<|", "<|end|>", "<|ret", "urn|>", "ab",
    "<|call|>", "<|st", "art|>", "<|start|>", "xa", "b", "y", "xab",
]


def _module(template, fixed: bool):
    module = types.ModuleType("fixed_literals_test")
    exec(compile(generate_module(template), "<fixed_literals_test>", "exec"), module.__dict__)
    if not fixed:
        for region in module.TABLE.regions:
            for delimiter in (region.open, region.close):
                if delimiter is not None:
                    delimiter.fixed = None
    return module


def _run(module, text, cuts):
    parser = module.ResponseParser("")
    events, at = [], 0
    for cut in sorted(cuts) + [len(text)]:
        events += parser.feed(text[at:cut])
        at = cut
    message, final = parser.finalize()
    stream = parser._stream
    return message, events + final, stream


literal_sets = st.sampled_from([
    ["<|end|>"],
    ["<|end|>", "<|return|>"],
    ["<|return|>", "urn|>"],  # one is inside a beginning of the other
    ["ab", "<|end|>x"],
    ["x", "<|e"],
    ["ab", "xaby"],  # a whole shorter literal inside the beginning of a longer one
    ["b", "<|ab|>"],
])


@settings(max_examples=examples(100, 300), deadline=None)
@given(
    close=literal_sets,
    open_=st.sampled_from([["<|start|>"], ["ab"], ["x<|", "|e"]]),
    parts=st.lists(st.sampled_from(PIECES), max_size=40),
    data=st.data(),
)
def test_fixed_search_answers_as_the_scanner_does(close, open_, parts, data):
    spec = {
        "version": 1,
        "start_anchor": "<|start|>assistant",
        "fields": {
            "reasoning_content": {"open": open_, "close": close, "content": "text"},
            "content": {"close": ["<|call|>"], "content": "text"},
        },
    }
    template = load_template(spec)
    text = "".join(parts)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    with_shortcut = _module(template, fixed=True)
    assert any(
        d is not None and d.fixed is not None
        for r in with_shortcut.TABLE.regions for d in (r.open, r.close)
    )
    ours = _run(with_shortcut, text, cuts)
    scanner = _run(_module(template, fixed=False), text, cuts)
    assert ours[:2] == scanner[:2]
    # Held text stays what the scanner version holds: the same pending starts.
    assert ours[2].pos == scanner[2].pos


def test_a_whole_literal_not_yet_committed_does_not_hide_a_longer_one_begun_before_it():
    # "qxab": the tool call's attempt from "q" holds the text; "ab" is whole at 2 while
    # "xab" begins "xaby" at 1. Then "y." ends the attempt: "xaby" at 1 opens.
    spec = {
        "version": 1,
        "start_anchor": "<|start|>assistant",
        "fields": {
            "reasoning_content": {"open": ["ab", "xaby"], "close": "<|end|>", "content": "text"},
            "tool_calls": {"open_pattern": "q[a-z]*!", "close": "<|call|>", "content": "text"},
            "content": {"close": ["<|call|>"], "content": "text"},
        },
    }
    template = load_template(spec)
    for fixed in (True, False):
        message, _, _ = _run(_module(template, fixed), "qxaby.<|end|>", [4, 6])
        assert message["content"] == "q", (fixed, message)
        assert message["reasoning_content"] == ".", (fixed, message)
