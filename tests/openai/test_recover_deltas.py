"""What an OpenAI client sees when a recovering tool call turns out malformed or truncated
(docs/extensions.md, "What an OpenAI client sees"), read with the client's own types."""

from __future__ import annotations

import json

import pytest

from rtcompiler.openai import DeltaStream, chunk

openai = pytest.importorskip("openai")
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402

PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
MALFORMED = ('Sure.<tool_call>\n{"name": "f", "arguments": {\n</tool_call>\n'
             '<tool_call>\n{"name": "g", "arguments": {"x": 1}}\n</tool_call><|im_end|>')
TRUNCATED = 'Cleaning up.<tool_call>\n{"name": "bash", "arguments": {"cmd": "rm -rf /tmp/build'


def stream_of(output: str, live_calls: bool = False) -> tuple[DeltaStream, list[dict]]:
    stream = DeltaStream("qwen3", PROMPT, live_calls=live_calls, call_id=lambda i: f"call_{i}")
    deltas = list(stream.initial_deltas)
    for ch in output:  # a character at a time: every delta a call could cause is seen
        deltas += stream.feed(ch)
    deltas += stream.finish()
    return stream, deltas


def client_view(stream: DeltaStream, deltas: list[dict]):
    state = ChatCompletionStreamState()
    meta = {"id": "chatcmpl-test", "created": 0, "model": "test"}
    for raw in [chunk(d, **meta) for d in deltas] + [
        chunk({}, finish_reason=stream.finish_reason, **meta)
    ]:
        state.handle_chunk(ChatCompletionChunk.model_validate(raw))
    return state.get_final_completion().choices[0]


def tool_deltas(deltas: list[dict]) -> list[dict]:
    return [c for d in deltas for c in d.get("tool_calls", [])]


def test_by_default_a_malformed_call_is_never_announced_and_its_text_is_content():
    stream, deltas = stream_of(MALFORMED)
    choice = client_view(stream, deltas)
    assert [(c.index, c.function.name) for c in choice.message.tool_calls] == [(0, "g")]
    assert all(c["index"] == 0 for c in tool_deltas(deltas))
    assert json.loads(choice.message.tool_calls[0].function.arguments) == {"x": 1}
    assert choice.message.content == stream.message["content"]
    assert '{"name": "f", "arguments": {' in choice.message.content
    assert "<tool_call>" not in choice.message.content
    assert choice.finish_reason == stream.finish_reason == "tool_calls"


def test_by_default_a_truncated_call_sends_no_tool_call_delta():
    stream, deltas = stream_of(TRUNCATED)
    assert tool_deltas(deltas) == []
    choice = client_view(stream, deltas)
    assert choice.message.tool_calls is None
    assert choice.finish_reason == stream.finish_reason == "stop"
    assert choice.message.content == stream.message["content"]
    assert stream.message["content"].startswith("Cleaning up.")
    assert stream.message["content"].endswith(TRUNCATED[len("Cleaning up.<tool_call>\n"):])
    assert "tool_calls" not in stream.message


def test_live_calls_stream_the_call_then_its_deltas_stop():
    stream, deltas = stream_of(TRUNCATED, live_calls=True)
    sent = tool_deltas(deltas)
    # The client saw the call begin: its header, then arguments up to where the output ended.
    assert sent[0]["function"]["name"] == "bash"
    arguments = "".join(c["function"].get("arguments", "") for c in sent)
    assert arguments.startswith('{"cmd": "rm -rf')
    choice = client_view(stream, deltas)
    # What the client accumulated is a call the final message does not have: the finish
    # reason counts only calls that closed, and the text came as content too.
    assert [c.function.name for c in choice.message.tool_calls] == ["bash"]
    assert "tool_calls" not in stream.message
    assert choice.finish_reason == stream.finish_reason == "stop"
    assert choice.message.content == stream.message["content"]


def test_a_strict_grammar_streams_calls_live_as_before():
    stream = DeltaStream("qwen3:strict", PROMPT, call_id=lambda i: f"call_{i}")
    deltas = []
    output = '<tool_call>\n{"name": "g", "arguments": {"x": 1'
    for ch in output:
        deltas += stream.feed(ch)
    assert tool_deltas(deltas)[0]["function"]["name"] == "g"


@pytest.mark.parametrize("output, reasoning", [
    ('<think>I will call <tool_call>\n{"name": "g", "arguments": {"x": 1}}\n</tool_call> '
     "then answer.</think>Done.<|im_end|>", "I will call\n\nthen answer."),
    ('<think><tool_call>\n{"name": "g", "arguments": {"x": 1}}\n</tool_call> then.</think>'
     "Done.<|im_end|>", "then."),
])
def test_a_call_inside_the_reasoning_streams_as_the_message_reads(output, reasoning):
    # qwen3 yields its reasoning to calls (docs/extensions.md, yield): the deltas a client
    # accumulates give the message's reasoning, separator included, and the call.
    stream, deltas = stream_of(output)
    assert "".join(d.get("reasoning_content", "") for d in deltas) == reasoning
    assert stream.message["reasoning_content"] == reasoning
    choice = client_view(stream, deltas)
    assert [c.function.name for c in choice.message.tool_calls] == ["g"]
    assert choice.message.content == "Done."
