"""Bundled grammars whose chat template has more than one layout round-trip in each.

``rtc check NAME`` checks a grammar's default layout (``meta.json``'s ``render_kwargs``);
these are the others, drawn the same way with the normalisation changed as ``rtc check
--meta`` would change it.
"""

from __future__ import annotations

import json

import pytest

from rtcompiler import grammars
from rtcompiler.roundtrip import check
from rtcompiler.roundtrip.render import ChatRenderer

# grammar, chat-template variables, reasoning drawn or not, and a piece of text only that
# layout writes for the probe message below (so a variable the template ignored shows).
VARIANTS = [
    ("deepseek_v32", {"thinking": False}, "drop", "<\uff5cAssistant\uff5c></think>\n\n<"),
    ("deepseek_v4", {"thinking": False}, "drop", "</think>\n\n<\uff5cDSML\uff5ctool_calls>"),
    ("deepseek_v4", {"thinking": True, "deepseek_v41": True}, "keep",
     "<think>hm</think>\n\n<\uff5cDSML\uff5c calls>"),
    ("deepseek_v4", {"thinking": False, "deepseek_v41": True}, "drop",
     "</think>\n\n<\uff5cDSML\uff5c calls>"),
    ("mistral_v3", {"spm": True}, "drop", '[/INST][TOOL_CALLS] [{"name": "f"'),
    ("kimi_k3", {"thinking": False}, "drop",
     '<|open|>message role="assistant"<|sep|><|open|>response<|sep|><|close|>response<|sep|>'),
]
PROBE = {"role": "assistant", "reasoning_content": "hm", "content": "",
         "tool_calls": [{"id": "abcdefghi", "type": "function",
                         "function": {"name": "f", "arguments": {"a": 1}}}]}


@pytest.mark.parametrize("name, render_kwargs, reasoning, marker", VARIANTS,
                         ids=[f"{n}-{json.dumps(k, sort_keys=True)}" for n, k, _, _ in VARIANTS])
def test_other_layouts_round_trip(name, render_kwargs, reasoning, marker, request):
    grammar = grammars.grammar(name)
    probe = {**PROBE, "content": ""}  # v3 has content or calls, not both
    prompt, output = ChatRenderer(grammar.chat_template, render_kwargs).assistant_turn(
        [{"role": "user", "content": "Hi"}], probe)
    assert marker in prompt + output
    normalise = {**grammar.meta["normalise"], "render_kwargs": render_kwargs,
                 "reasoning": reasoning}
    examples = max(1, request.config.getoption("--roundtrip-examples") // 3)
    report = check(grammar.template, grammar.chat_template, examples=examples,
                   normalise=normalise, reserved=grammar.meta.get("reserved"))
    assert report.ok, json.dumps(report.counterexample, ensure_ascii=False, indent=1, default=str)
    assert report.examples >= examples
