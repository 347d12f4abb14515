"""What an OpenAI client sees of a call whose region ends at its JSON value, with prose
after it (docs/extensions.md, json-end), read with the client's own types."""

from __future__ import annotations

import json

import pytest

from rtcompiler.openai import DeltaStream

from .test_recover_deltas import client_view, tool_deltas

openai = pytest.importorskip("openai")

PROMPT = "<s>[INST]Find the TODOs.[/INST]"
OUTPUT = 'Checking.[TOOL_CALLS]grep[ARGS]{"pattern": "TODO"}\n\nLet me search for that.</s>'


def stream_of(live_calls: bool) -> tuple[DeltaStream, list[dict]]:
    stream = DeltaStream("mistral", PROMPT, live_calls=live_calls, call_id=lambda i: f"call_{i}")
    deltas = list(stream.initial_deltas)
    for ch in OUTPUT:  # a character at a time: every delta a call could cause is seen
        deltas += stream.feed(ch)
    deltas += stream.finish()
    return stream, deltas


@pytest.mark.parametrize("live_calls", [False, True])
def test_the_text_after_the_value_comes_as_content_after_the_call(live_calls):
    stream, deltas = stream_of(live_calls)
    choice = client_view(stream, deltas)
    assert [c.function.name for c in choice.message.tool_calls] == ["grep"]
    assert json.loads(choice.message.tool_calls[0].function.arguments) == {"pattern": "TODO"}
    # The arguments the client accumulated are the value's, never the prose after it.
    sent = "".join(c["function"].get("arguments", "") for c in tool_deltas(deltas))
    assert json.loads(sent) == {"pattern": "TODO"}
    assert choice.message.content == stream.message["content"] == (
        "Checking.\n\nLet me search for that.")
    # The prose after the call is sent after the call's last delta.
    last_call = max(i for i, d in enumerate(deltas) if "tool_calls" in d)
    after = "".join(d.get("content", "") for d in deltas[last_call + 1:])
    assert after == "\n\nLet me search for that."
    assert choice.finish_reason == stream.finish_reason == "tool_calls"
    assert not stream.divergences
