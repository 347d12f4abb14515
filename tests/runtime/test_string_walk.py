"""The whole-text walk through a region whose close counts only outside strings.

A tool-call body of a ``close-outside-strings`` field is walked from landmark to
landmark like any other region: at each landmark of its close, the body's strings are
read up to there (``JsonStrings``, by counting quotes), and a landmark outside every
string is taken as usual. A landmark inside a string (a close written in an argument)
leaves the rest to the loop, which gives the string to the region and looks on after it,
or inside it when it never ends. The walk must answer as that loop and as a stream.
"""

from __future__ import annotations

import types

from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.codegen import generate_module
from rtcompiler.template import load_template

from ..sweeps import examples

SPEC = {
    "version": 1, "extensions": ["close-outside-strings", "recover"],
    "start_anchor": "<|start|>assistant",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<call>", "close_pattern": "</call>\\s*", "repeats": True,
            "content": "json", "recover": True, "close_outside_strings": True,
        },
        "content": {"close": "<end>", "content": "text"},
    },
}
PIECES = [
    "<call>", "</call>", "<think>", "</think>", "<end>", '{"a": "', '"}', '"', "\\", '\\"',
    "x", " ", "\n", "{", "}", "[1]", ': "', '", "b": ', "</ca", "ll>",
]


def _module(walks: bool) -> types.ModuleType:
    module = types.ModuleType("string_walk_test")
    exec(compile(generate_module(load_template(SPEC)), "<string_walk_test>", "exec"),
         module.__dict__)
    if not walks:
        module.TABLE.walks = {}
    return module


WALKED, LOOPED = _module(True), _module(False)


def _outcome(run):
    try:
        return "ok", run()
    except ValueError as e:
        return "error", str(e)


def _streamed(module, text):
    parser = module.ResponseParser("<|start|>assistant")
    for ch in text:
        parser.feed(ch)
    return parser.finalize()[0]


def test_string_regions_are_walked():
    assert "tool_calls" in WALKED.TABLE.walks and "tool_calls" in WALKED.TABLE.string_modes


def test_a_body_whose_close_is_outside_strings_is_walked_to_the_end():
    text = 'Hi<call>{"a": "b \\" c"}</call>then<call>[1]</call>'
    stream = WALKED.ResponseStream(WALKED.TABLE, "<|start|>assistant")
    message = stream.parse_whole(text)
    assert stream.whole == {}  # walked to the end: no watcher was asked
    assert message == {"content": "then", "tool_calls": [{"a": 'b " c'}, [1]]}
    assert message == LOOPED.parse_response(text, prefix="<|start|>assistant")


def test_a_close_inside_a_string_leaves_the_rest_to_the_loop():
    text = '<call>{"a": "close with </call> then"}</call>ok'
    stream = WALKED.ResponseStream(WALKED.TABLE, "<|start|>assistant")
    message = stream.parse_whole(text)
    assert stream.whole  # the loop asked the close's watcher
    assert message == {"content": "ok", "tool_calls": [{"a": "close with </call> then"}]}
    assert message == LOOPED.parse_response(text, prefix="<|start|>assistant")
    assert message == _streamed(WALKED, text)
    # A string that never ends: its first close counts after all, as in the loop.
    text = '<call>{"a": "b</call>tail'
    walked = _outcome(lambda: WALKED.parse_response(text, prefix="<|start|>assistant"))
    assert walked == _outcome(lambda: LOOPED.parse_response(text, prefix="<|start|>assistant"))
    assert walked == _outcome(lambda: _streamed(WALKED, text))
    assert walked[1]["content"].endswith("tail")


@settings(max_examples=examples(150, 400), deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES), max_size=30),
       prefix=st.sampled_from(["", "<|start|>assistant", "<|start|>assistant<call>",
                               '<|start|>assistant<call>{"a": "']))
def test_the_walk_answers_as_the_loop_and_a_stream(parts, prefix):
    text = "".join(parts)
    walked = _outcome(lambda: WALKED.parse_response(text, prefix=prefix))
    assert walked == _outcome(lambda: LOOPED.parse_response(text, prefix=prefix))

    def streamed():
        parser = WALKED.ResponseParser(prefix)
        for ch in text:
            parser.feed(ch)
        return parser.finalize()[0]

    assert walked == _outcome(streamed)
