"""Whole-text parsing reads the text once for every delimiter's literals (``_landmarks``).

The shortcut is taken only when ``finditer`` over the literals' alternation meets every
occurrence of every literal (no literal begins inside another or itself, none begins
another) and sre searches the alternation fast (one first character). Its answers must
be those of a search per delimiter, and the reference's.
"""

from __future__ import annotations

import types

from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as reference_parse
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler.codegen import generate_module
from rtcompiler.template import load_template


def _spec(reasoning_open, reasoning_close, tool_open, tool_close, content_close):
    return {
        "version": 1,
        "start_anchor": "<|start|>assistant",
        "fields": {
            "reasoning_content": {
                "open": reasoning_open, "close": reasoning_close, "content": "text",
            },
            "tool_calls": {
                "open_pattern": tool_open, "close": tool_close, "repeats": True,
                "content": "text",
                "transform": {
                    "type": "function", "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {"close": content_close, "content": "text"},
        },
    }


SPEC = _spec("<think>", "</think>", r"\s*<call (?P<name>\w+)>", "</call>", ["<end>", "<eos>"])
NAME = r"(?P<name>\w*)"


def _module(spec, landmarks: bool):
    module = types.ModuleType("landmarks_test")
    source = generate_module(load_template(spec))
    exec(compile(source, "<landmarks_test>", "exec"), module.__dict__)
    if not landmarks:
        module.TABLE.landmarks = None
    return module


def _outcome(run):
    try:
        return "ok", run()
    except Exception as e:  # the same exception type is what parity asks
        return "error", type(e)


def test_which_literal_sets_get_landmarks():
    assert _module(SPEC, True).TABLE.landmarks is not None
    # A literal that begins another, or one that begins inside itself, or one whose
    # end begins another: finditer could step over an occurrence, so no landmarks.
    for spec in (
        _spec("<think>", "</think>", "<call>" + NAME, "</call>", ["<end>", "<end>x"]),
        _spec("<t<", "</think>", "<call>" + NAME, "</call>", "<end>"),
        _spec("<think>", "</think>", "<call>" + NAME, "</call>", ["<end<", "<eos>"]),
        _spec("<think>", "<th", "<call>" + NAME, "</call>", "<end>"),
        _spec("<think>", "</think>", r"\s*(?:<call>|xcall)" + NAME, "</call>", "<end>"),
    ):
        assert _module(spec, True).TABLE.landmarks is None, spec


WITH, WITHOUT = _module(SPEC, True), _module(SPEC, False)
REFERENCE = load_response_template(SPEC)

PIECES = [
    "<think>", "</think>", "<call f>", "<call g>", "</call>", "<end>", "<eos>", "<", "<e",
    "<th", "</", "call", " ", "\n", "x", "{", ">", "<call >", "</thi", "nk>", "<en", "d>",
]


def test_the_parse_uses_landmarks_and_succeeds():
    text = "<think>a<call f>x</think>b</call>c\n<call g>{}</call><eos>"
    message = WITH.parse_response(text, prefix="")
    assert message["content"] == "b</call>c"  # a close outside its region is text
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["g"]
    assert message == reference_parse(text, REFERENCE, prefix="")


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES), max_size=30), prefix=st.sampled_from(
    ["", "<|start|>assistant", "<|start|>assistant<think>", "<|start|>assistant<ca"]
))
def test_whole_text_answers_match_a_search_per_delimiter_and_the_reference(parts, prefix):
    text = "".join(parts)
    with_marks = _outcome(lambda: WITH.parse_response(text, prefix=prefix))
    without = _outcome(lambda: WITHOUT.parse_response(text, prefix=prefix))
    assert with_marks == without
    ref = _outcome(lambda: reference_parse(text, REFERENCE, prefix=prefix))
    if with_marks[0] == ref[0] == "error":
        assert issubclass(with_marks[1], ref[1]) or issubclass(ref[1], with_marks[1])
    else:
        assert with_marks == ref
