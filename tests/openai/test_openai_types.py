"""Our deltas, as the ``openai`` client's own types read them."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from rtcompiler.openai import chunk

from .helpers import grammar, openai_view, run

openai = pytest.importorskip("openai")
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402

GRAMMARS = ["qwen3", "qwen3_coder", "command_r7b", "gpt_oss", "gemma4", "mistral"]


def chunks_of(deltas, finish_reason):
    meta = {"id": "chatcmpl-test", "created": 0, "model": "test"}
    return [chunk(d, **meta) for d in deltas] + [chunk({}, finish_reason=finish_reason, **meta)]


@pytest.mark.parametrize("name", GRAMMARS)
def test_chunks_validate_and_accumulate_as_the_openai_client_does(name):
    g = grammar(name)

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(g.cases())
    def check(case):
        stream = g.stream(case["prompt"], case["tools"])
        deltas = run(stream, case["output"], case["chunks"])
        state = ChatCompletionStreamState()
        reasoning = ""
        for raw in chunks_of(deltas, stream.finish_reason):
            # A strict round trip through the client's model: nothing we send is
            # dropped or renamed on the way in.
            parsed = ChatCompletionChunk.model_validate(raw)
            assert json.loads(parsed.model_dump_json(exclude_unset=True)) == raw
            reasoning += (parsed.choices[0].delta.model_extra or {}).get("reasoning_content", "")
            state.handle_chunk(parsed)
        completion = state.get_final_completion()
        choice = completion.choices[0]
        message = choice.message
        view = openai_view(stream.message)
        assert (message.content or "") == view["content"]
        assert reasoning == view["reasoning_content"]
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
        assert calls == view["tool_calls"]
        assert choice.finish_reason == stream.finish_reason

    check()
