"""``rtc parse --openai --live-calls``: a recovering grammar's tool calls streamed before they
close (docs/extensions.md, "What an OpenAI client sees")."""

from __future__ import annotations

import json

from .helpers import assert_one_error_line, rtc_here

PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
TRUNCATED = 'Cleaning up.<tool_call>\n{"name": "bash", "arguments": {"cmd": "rm -rf /tmp/build'


def chunks(*options: str) -> list[dict]:
    run = rtc_here("parse", "qwen3", "--openai", *options, "--prefix", PROMPT,
                   stdin=TRUNCATED.encode())
    assert run.code == 0, run.stderr
    return [json.loads(line) for line in run.stdout.decode().splitlines()]


def tool_deltas(lines: list[dict]) -> list[dict]:
    return [c for line in lines for c in line["choices"][0]["delta"].get("tool_calls", [])]


def content(lines: list[dict]) -> str:
    return "".join(line["choices"][0]["delta"].get("content") or "" for line in lines)


def test_by_default_a_truncated_call_sends_no_tool_call_delta():
    lines = chunks()
    assert tool_deltas(lines) == []
    assert content(lines).endswith('"rm -rf /tmp/build')
    assert lines[-1]["choices"][0]["finish_reason"] == "stop"


def test_live_calls_streams_the_call_before_it_closes():
    lines = chunks("--live-calls")
    sent = tool_deltas(lines)
    assert sent and sent[0]["function"]["name"] == "bash"
    assert "".join(c["function"].get("arguments", "") for c in sent).startswith('{"cmd": "rm')
    # The call never closed: it is not counted, and its text still arrives as content.
    assert lines[-1]["choices"][0]["finish_reason"] == "stop"
    assert content(lines).endswith('"rm -rf /tmp/build')


def test_live_calls_without_openai_is_refused():
    assert_one_error_line(rtc_here("parse", "qwen3", "--live-calls", stdin=b"hi"), 2,
                          "--live-calls needs --openai")
    assert_one_error_line(rtc_here("parse", "qwen3", "--live-calls", "--jsonl", "in.jsonl",
                                   "-o", "out.jsonl"), 2, "--live-calls needs --openai")
