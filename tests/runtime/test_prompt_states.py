"""A table remembers the state a prompt's tail leaves (``ResponseStream.remember``).

Streams that begin after the same tail (a chat template ends every prompt alike) start
from a copy of it instead of processing the tail again. That must change nothing: the
same initial events, events and messages as with nothing remembered, whatever the tail,
and no stream may share a list or dict with another.
"""

from __future__ import annotations

import types

from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.codegen import generate_module
from rtcompiler.template import load_template

from ..sweeps import examples

SPEC = {
    "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
    "tool_calls": {
        "open_pattern": "\\s*<tool_call>", "close_pattern": "</tool_call>\\s*",
        "repeats": True, "content": "json",
    },
    "content": {"close": "<|im_end|>", "content": "text"},
}
PIECES = [" ", "\n", "x", "<", "<thi", "<think>", "</think>", "<tool_call>", '{"a": 1}',
          "</tool_call>", "<|im_end|>", "<|im"]
ANCHOR = "<|im_start|>assistant"
YIELD_PIECES = [" ", "\n", "x", "<", "<thi", "<think>", "</think>", "<tool_call>",
                "<function=f>\n", "<func", "</tool_call>", "<|im_end|>", "<|im"]


# Qwen3-Coder's shape: the reasoning yields to calls whose open begins with whitespace, so
# a thinking prompt's "<think>\n" leaves its newline held (see remember).
YIELDING = {
    "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text",
                          "yield_to": {"fields": ["tool_calls"], "join": "\n\n"}},
    "tool_calls": {
        "open_pattern": "\\s*<function=[^>\\n]+>\\n",
        "close_pattern": "</tool_call>\\s*", "repeats": True,
    },
    "content": {"close": ["<|im_end|>", "<tool_call>"], "content": "text", "repeats": True,
                "join": "\n\n"},
}


def _module(remember: bool, fields: dict = SPEC) -> types.ModuleType:
    spec = {"version": 1, "start_anchor": ANCHOR, "fields": fields}
    if fields is YIELDING:
        spec["extensions"] = ["yield"]
    template = load_template(spec)
    module = types.ModuleType("prompt_states_test")
    exec(compile(generate_module(template), "<prompt_states_test>", "exec"), module.__dict__)
    if not remember:
        module._PROMPT_STATES = 0
    return module


def _run(module: types.ModuleType, prefix: str, text: str, cuts: list[int]):
    events: list = []
    try:
        parser = module.ResponseParser(prefix)
        events += parser.initial_events
        at = 0
        for cut in sorted(cuts) + [len(text)]:
            events += parser.feed(text[at:cut])
            at = cut
        message, final = parser.finalize()
    except ValueError as e:
        return ("error", str(e)), events
    return message, events + final


@settings(max_examples=examples(70, 200), deadline=None)
@given(
    tail=st.lists(st.sampled_from(PIECES), max_size=6).map("".join),
    text=st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    data=st.data(),
)
def test_a_remembered_tail_changes_nothing(tail, text, data):
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=6))
    prefix = "<|im_start|>user\nhi<|im_end|>\n" + ANCHOR + tail
    plain = _run(_module(remember=False), prefix, text, cuts)
    module = _module(remember=True)
    first = _run(module, prefix, text, cuts)  # may remember the tail's state
    second = _run(module, prefix, text, cuts)  # starts from it, if so
    third = _run(module, prefix, text, cuts)  # the second changed none of it
    assert first == plain
    assert second == plain
    assert third == plain


@settings(max_examples=examples(70, 200), deadline=None)
@given(
    tail=st.lists(st.sampled_from(YIELD_PIECES), max_size=6).map("".join),
    text=st.lists(st.sampled_from(YIELD_PIECES), max_size=12).map("".join),
    data=st.data(),
)
def test_a_remembered_tail_that_holds_text_changes_nothing(tail, text, data):
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=6))
    prefix = "<|im_start|>user\nhi<|im_end|>\n" + ANCHOR + tail
    plain = _run(_module(remember=False, fields=YIELDING), prefix, text, cuts)
    module = _module(remember=True, fields=YIELDING)
    assert [_run(module, prefix, text, cuts) for _ in range(3)] == [plain] * 3


def test_a_thinking_prompt_whose_newline_is_held_is_remembered():
    module = _module(remember=True, fields=YIELDING)
    prefix = ANCHOR + "<think>\n"
    first = module.ResponseParser(prefix)
    # The newline may begin a call's open: held (a run of lead characters, so with no
    # holder named; the quick path judges the next piece).
    assert first._stream.end - first._stream.pos == 1
    assert first._stream.held_by is None
    assert list(module.TABLE.prompt_states) == ["<think>\n"]
    text = "a\n<tool_call>\n<function=f>\n</tool_call>b</think>c"
    second = module.ResponseParser(prefix)
    want = _module(remember=False, fields=YIELDING).ResponseParser(prefix)
    assert [second.feed(ch) for ch in text] == [want.feed(ch) for ch in text]
    assert second.finalize() == want.finalize()


def test_the_second_stream_after_a_tail_does_not_process_it():
    module = _module(remember=True)
    prefix = ANCHOR + "<think>\n"
    first = module.ResponseParser(prefix)
    assert list(module.TABLE.prompt_states) == ["<think>\n"]
    first.feed("mutated: every list and dict of the first stream grows")
    processed = []
    process = module.ResponseStream.process
    module.ResponseStream.process = (
        lambda self, events, eos: processed.append(1) or process(self, events, eos)
    )
    try:
        second = module.ResponseParser(prefix)
    finally:
        module.ResponseStream.process = process
    assert processed == []
    assert second.initial_events == [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "\n", "dirty": False},
    ]
    assert second._stream.tail == ["\n"]
    assert second.finalize() == _module(remember=False).ResponseParser(prefix).finalize()


def test_a_tail_that_closes_a_region_is_not_remembered():
    module = _module(remember=True)
    module.ResponseParser(ANCHOR + "<think>a</think>")
    assert module.TABLE.prompt_states == {}


def test_streams_that_resume_a_tail_share_no_list_or_dict():
    module = _module(remember=True)
    prefix = ANCHOR + "<think>\n"
    streams = [module.ResponseParser(prefix) for _ in range(3)]
    _, copied, saved_events = module.TABLE.prompt_states["<think>\n"]
    names = module.ResponseStream._COPIED + ("initial_events",)
    for k, name in enumerate(names):
        owned = [getattr(p._stream, name) for p in streams]
        owned.append(saved_events if name == "initial_events" else copied[k])
        assert len({id(x) for x in owned}) == len(owned), name
    events = [e for p in streams for e in p.initial_events] + saved_events
    assert len({id(e) for e in events}) == len(events)
    # What a caller does with its events, or a stream with its buffer, reaches no other.
    streams[1].initial_events[0]["field"] = "changed"
    streams[1]._stream.pieces.append("junk")
    assert module.ResponseParser(prefix).initial_events == streams[2].initial_events
    assert module.ResponseParser(prefix)._stream.pieces == streams[2]._stream.pieces


def test_every_attribute_of_a_stream_is_kept_or_known_to_need_no_keeping():
    """A new attribute set while the tail is processed must be added to what is kept."""
    module = _module(remember=True)
    stream = module.ResponseParser(ANCHOR + "<think>\n")._stream
    kept = set(module.ResponseStream._KEPT) | set(module.ResponseStream._COPIED)
    # Each stream's own, or None / False whenever a tail's state is kept.
    own = {"table", "coerce", "output", "scanners", "initial_events"}
    unset = {"known", "node", "whole", "marks", "finalized", "failures", "missed",
             "formed", "strings", "resume_to", "resumed", "decoded"}
    assert set(module.ResponseStream.__slots__) == kept | own | unset
    assert all(not getattr(stream, name) for name in unset)


def test_resume_sets_each_kept_attribute_from_its_own_place():
    """``resume`` writes ``_KEPT`` out as one unpacking: its order must be ``_KEPT``'s."""
    module = _module(remember=True)
    stream = module.ResponseParser(ANCHOR + "<think>\n")._stream
    names = module.ResponseStream._KEPT
    marks = tuple(object() for _ in names)
    stream.resume((marks, ([], [], [], {}, {}), []))
    assert [getattr(stream, name) for name in names] == list(marks)
