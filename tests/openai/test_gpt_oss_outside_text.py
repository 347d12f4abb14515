"""gpt_oss: text outside every channel message is content (its implicit field). A client
accumulating the deltas holds the message's content, pieces and blank lines included,
at any chunking; a cut call sends no tool-call delta and its text arrives as content."""

from __future__ import annotations

import pytest

from rtcompiler.api import compile_template
from rtcompiler.openai import DeltaStream, accumulate

PROMPT = "<|start|>user<|message|>Weather?<|end|><|start|>assistant"
PARSER = compile_template("gpt_oss")
CALL = ('<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json'
        '<|message|>{"location":"Boston"}<|call|>')
OUTPUTS = {
    "prose-first": "I'll start." + CALL + CALL.replace('"Boston"}<|call|>', '"New York'),
    "unknown-channel": ("<|channel|>––commentary<|message|>Looking it up.<|end|>"
                        "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"),
    "no-header": '{"answer": 42}<|return|>',
    "space-between": ("<|channel|>final<|message|>A<|end|>\n<|start|>assistant"
                      "<|channel|>final<|message|>B<|return|>"),
}


def _deltas(output: str, step: int) -> tuple[DeltaStream, list[dict]]:
    stream = DeltaStream(PARSER, PROMPT)
    deltas = list(stream.initial_deltas)
    for i in range(0, len(output), step):
        deltas += stream.feed(output[i : i + step])
    deltas += stream.finish()
    return stream, deltas


@pytest.mark.parametrize("step", [1, 3, 16, 10_000])
@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_the_client_holds_the_messages_content(name, step):
    output = OUTPUTS[name]
    stream, deltas = _deltas(output, step)
    message = PARSER.parse_response(output, prefix=PROMPT)
    client = accumulate(deltas)
    assert client.get("content") == message.get("content")
    assert message.get("content")  # each of them has some
    assert len(client.get("tool_calls", [])) == len(message.get("tool_calls", []))


def test_a_cut_call_after_prose_sends_its_text_as_content_and_no_call():
    stream, deltas = _deltas(OUTPUTS["prose-first"], 1)
    client = accumulate(deltas)
    assert client["content"] == "I'll start.\n\n{\"location\":\"New York"
    assert [c["function"]["name"] for c in client["tool_calls"]] == ["get_weather"]
    assert stream.finish_reason == "tool_calls"
